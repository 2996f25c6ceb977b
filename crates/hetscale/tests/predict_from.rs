//! `hetscale predict --from DB`: the scaling model fitted to a study's stored runs predicts
//! configurations never run, with intervals and a verdict; on the configurations the study
//! did run, it gives back the sizes the study measured.

mod common;

use common::{SMALL_GE, hetscale_in, json_of, one_line_error, spec_dir, stdout_of, study_json};
use serde_json::Value;

/// The small GE study's node sets, by label (tests/specs/small-ge.toml).
const C_4: &str = "server*2:1,sunblade:3";
const C_8: &str = "server*2:1,sunblade:7";
/// A configuration the study never ran: 4x the largest one's nodes.
const C_32: &str = "server*2:1,sunblade:31";

/// The measured approach's N on configuration `label`, from `study --json`'s summary.
fn measured_n(study: &Value, label: &str) -> f64 {
    let measured = study["summary"]["approaches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["approach"] == "measured")
        .unwrap();
    measured["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["configuration"] == label)
        .and_then(|r| r["n"].as_f64())
        .unwrap_or_else(|| panic!("no measured N on {label}: {study}"))
}

#[test]
fn a_studys_runs_predict_larger_configurations_and_give_back_the_measured_sizes() {
    let dir = spec_dir(SMALL_GE);
    let d = dir.path();
    let study = study_json(d)[0].take();

    let text = stdout_of(
        hetscale_in(d).args(["predict", "--from", "s.db", "--nodes", C_8, "--nodes", C_32]),
    );
    assert!(text.contains("study \"small ge\""), "{text}");
    let model = text.lines().find(|l| l.starts_with("Model: T = "));
    assert!(
        model.is_some_and(|l| l.contains("W/C") && l.contains("cross-validated error")),
        "the selected formula with its error: {text}"
    );
    assert!(text.contains("runner-up 1: T = "), "{text}");
    assert!(text.contains("Fitted on: C_2"), "{text}");
    let verdict = text.lines().last().unwrap();
    assert!(
        verdict.starts_with("to hold E_s = 0.3 on 32 nodes N must grow to ")
            && verdict.contains("x the 8-node size; T = "),
        "{verdict}"
    );

    let json = json_of(hetscale_in(d).args([
        "predict", "--from", "s.db", "--nodes", C_4, "--nodes", C_8, "--nodes", C_32, "--json",
    ]));
    assert_eq!(json["kind"], "predict");
    assert_eq!(json["study"], "small ge");
    assert_eq!(json["target"], 0.3, "the study's target by default");
    assert_eq!(json["verdict"].as_str(), Some(verdict), "{json}");
    let points = json["points"].as_array().unwrap();
    for point in points {
        let n = point["n"].as_f64().unwrap();
        let [lo, hi] = [0, 1].map(|i| point["n_ci95"][i].as_f64().unwrap());
        assert!(lo <= n && n <= hi, "N outside its interval: {point}");
        let t = point["time_s"].as_f64().unwrap();
        let [lo, hi] = [0, 1].map(|i| point["time_s_ci95"][i].as_f64().unwrap());
        assert!(lo <= t && t <= hi, "T outside its interval: {point}");
    }
    // The verdict's numbers are the table's, digit for digit.
    let last = points.last().unwrap();
    let written = format!(
        "N must grow to {} [{}, {}]",
        last["n"], last["n_ci95"][0], last["n_ci95"][1]
    );
    assert!(verdict.contains(&written), "{verdict} vs {written}");
    // The pipeline's real check: on the configurations the study ran (one inside the fitted
    // range, the largest at its edge) the model gives back the N the measured approach found.
    for (point, label) in [(&points[0], "C_4"), (&points[1], "C_8")] {
        assert_eq!(point["measured"], true, "{point}");
        let (predicted, measured) = (point["n"].as_f64().unwrap(), measured_n(&study, label));
        assert!(
            (predicted / measured - 1.0).abs() < 0.25,
            "{label}: predicted N = {predicted}, measured {measured}"
        );
    }
    // More nodes need a larger N to hold E_s, and psi from the largest measured one is below 1.
    let n_32 = points[2]["n"].as_f64().unwrap();
    assert!(n_32 > points[1]["n"].as_f64().unwrap(), "{json}");
    assert_eq!(points[2]["measured"], false);
    assert!(points[2]["psi_from_base"].as_f64().unwrap() < 1.0, "{json}");
    assert_eq!(json["base"]["label"], "C_8", "{json}");
}

#[test]
fn far_beyond_the_fitted_nodes_the_verdict_says_how_sharp_it_is_and_cautions() {
    let dir = spec_dir(SMALL_GE);
    let d = dir.path();
    study_json(d);
    let text = stdout_of(hetscale_in(d).args([
        "predict",
        "--from",
        "s.db",
        "--nodes",
        "sunblade:1024",
        "--replicate",
        "16",
        "--target",
        "0.25",
    ]));
    assert!(
        text.contains("caution: p = 1024 is 128x the largest fitted node count (8), beyond 8x"),
        "{text}"
    );
    let verdict = text.lines().last().unwrap();
    // Seven doublings past the fit: either pinned (a percentage) or the node count whose
    // runs would pin it.
    assert!(
        verdict.starts_with("to hold E_s = 0.25 on 1,024 nodes N must grow to ")
            && (verdict.contains("%,")
                || verdict.contains("these runs cannot pin N on 1,024 nodes within a factor of 2"))
            && verdict.contains("(see the cautions)"),
        "{verdict}"
    );
}

#[test]
fn a_prediction_on_another_platform_than_the_studys_says_so() {
    let dir = spec_dir(SMALL_GE);
    let d = dir.path();
    study_json(d);
    let asked = ["predict", "--from", "s.db", "--nodes"];
    let own = stdout_of(hetscale_in(d).args(asked).arg("sunblade:16"));
    assert!(!own.contains("predicted on platform"), "{own}");
    let other = stdout_of(
        hetscale_in(d)
            .args(asked)
            .args(["fast:16", "--platform", "kalinov"]),
    );
    assert!(
        other.contains(
            "caution: predicted on platform \"kalinov\", the runs having been measured on \"sunwulf\": its nodes average "
        ),
        "{other}"
    );
}

#[test]
fn bad_inputs_are_refused_in_one_line() {
    let dir = spec_dir(SMALL_GE);
    let d = dir.path();
    study_json(d);
    let err = one_line_error(hetscale_in(d).args([
        "predict", "--from", "s.db", "--study", "nosuch", "--nodes", C_32,
    ]));
    assert!(
        err.contains("has no study \"nosuch\": it holds \"small ge\""),
        "{err}"
    );
    let err =
        one_line_error(hetscale_in(d).args(["predict", "ge", "--from", "s.db", "--nodes", C_32]));
    assert!(err.contains("give one of a KERNEL"), "{err}");

    // A study whose every run failed stores no measured run to fit.
    let failing = [
        "study",
        "--command",
        "false",
        "--work",
        "n",
        "--platform",
        "local",
        "--nodes",
        "1",
        "--nodes",
        "2",
        "--target",
        "0.3",
        "--n-max",
        "100",
        "--db",
        "empty.db",
        "--out",
        "empty",
        "--quiet",
    ];
    hetscale_in(d).args(failing).assert().failure();
    let err =
        one_line_error(hetscale_in(d).args(["predict", "--from", "empty.db", "--nodes", "4"]));
    assert!(
        err.contains("holds no measured runs of study \"command\""),
        "{err}"
    );
    let err = one_line_error(hetscale_in(d).args(["predict", "--from", "none.db", "--nodes", "4"]));
    assert!(err.contains("no study database at none.db"), "{err}");
}
