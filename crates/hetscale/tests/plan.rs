//! A study that plans its own runs (`study --predict-nodes ... --precision R`) and `hetscale
//! plan`: a command whose time follows a known law, on a platform of fast and slow nodes.

mod common;

use std::path::Path;

use common::{
    PLANNED_STUDY, PLANNED_TARGET, hetscale_in, json_of, one_line_error, planned_law, succeeded,
    write_planned_study,
};
use serde_json::Value;

/// The size holding the target on `p` nodes by the law, by bisection.
fn true_size(p: f64) -> f64 {
    let efficiency = |n: f64| 2.0 * n.powi(3) / (planned_law(n, p) * 1.5e9 * p);
    let (mut lo, mut hi) = (8.0_f64, 1e6_f64);
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if efficiency(mid) < PLANNED_TARGET {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// `hetscale study law.toml --predict-nodes 16 --precision 0.1` in `dir`, with `extra`: its
/// planned study's JSON.
fn planned(dir: &Path, extra: &[&str]) -> Value {
    let mut json = json_of(hetscale_in(dir).args(PLANNED_STUDY).args(extra));
    assert_eq!(json["kind"], "study");
    json["planned"][0].take()
}

#[test]
fn a_planned_study_runs_where_n_is_asked_and_pins_it_there() {
    let dir = tempfile::tempdir().unwrap();
    write_planned_study(dir.path());
    let study = planned(dir.path(), &[]);
    assert_eq!(study["precision_reached"], true, "{study:#}");
    let point = &study["predicted"][0];
    assert_eq!(point["nodes"], "16");
    assert_eq!(point["p"], 16);
    let truth = true_size(16.0);
    let n = point["n"].as_f64().unwrap();
    let (lo, hi) = (
        point["n_ci95"][0].as_f64().unwrap(),
        point["n_ci95"][1].as_f64().unwrap(),
    );
    assert!(
        lo <= truth && truth <= hi,
        "N {n} [{lo}, {hi}] against {truth}"
    );
    assert!(
        hi / n - 1.0 <= 0.1 && 1.0 - lo / n <= 0.1,
        "[{lo}, {hi}] around {n}"
    );
    // The first design brackets the target on the first two configurations; the plan then
    // goes where N is asked, which no fixed design on 2 and 4 nodes would reach.
    let steps = study["steps"].as_array().unwrap();
    let chosen: Vec<&Value> = steps
        .iter()
        .filter(|s| s["kind"] != "first design")
        .collect();
    assert!(steps.iter().any(|s| s["kind"] == "first design"));
    assert!(
        chosen.iter().any(|s| s["configuration"] == "C_16"),
        "{steps:#?}"
    );
    for step in chosen.iter().filter(|s| s["kind"] != "explore") {
        assert!(
            step["width_expected"].as_f64().unwrap() < step["width_before"].as_f64().unwrap(),
            "{step}"
        );
    }
    // Its machine time is the sum of its runs' times, each step's counted once.
    let cost = study["cost_s"].as_f64().unwrap();
    let summed: f64 = steps.iter().map(|s| s["cost_s"].as_f64().unwrap()).sum();
    assert!(
        (cost - summed).abs() <= 1e-9 * cost,
        "{cost} against {summed}"
    );
    assert_eq!(steps.last().unwrap()["spent_s"].as_f64().unwrap(), cost);
    // Its page shows the steps and the figure.
    let page = std::fs::read_to_string(dir.path().join("out/law-plan/index.html")).unwrap();
    assert!(page.contains("<svg") && page.contains("C_16"));

    // Run again, it resumes from its database: every run reused, none added, and every step
    // the first run made reported once, numbered as it was.
    let again = planned(dir.path(), &[]);
    assert_eq!(again["cost_s"], study["cost_s"]);
    assert_eq!(again["runs"], study["runs"]);
    assert_eq!(again["predicted"], study["predicted"]);
    assert_eq!(again["steps"], study["steps"]);
    let widths = study["width_by_cost"].as_array().unwrap();
    assert_eq!(
        widths.len(),
        chosen.len() + 1,
        "one before each planned step, one at the end"
    );
}

#[test]
fn a_budget_stops_the_plan_and_says_what_the_next_run_would_do() {
    let dir = tempfile::tempdir().unwrap();
    write_planned_study(dir.path());
    // The first design costs about 2 s; a run on 16 nodes at N alone costs about 18 s.
    let study = planned(dir.path(), &["--budget-s", "5"]);
    assert_eq!(study["precision_reached"], false);
    let stopped = study["stopped"].as_str().unwrap();
    assert!(stopped.starts_with("Stopped at the budget"), "{stopped}");
    assert!(study["cost_s"].as_f64().unwrap() <= 5.0, "{study:#}");
}

#[test]
fn beyond_the_configurations_it_may_run_it_names_the_run_that_would_pin_n() {
    let dir = tempfile::tempdir().unwrap();
    write_planned_study(dir.path());
    // 32 nodes (two copies of the platform) are asked about; the spec's largest has 16.
    let study = planned(dir.path(), &["--predict-nodes", "32", "--replicate", "2"]);
    // One doubling past the largest configuration run leaves N on 32 nodes wider than ±10%,
    // however exact the runs: the study says which run would pin it.
    assert_eq!(study["precision_reached"], false);
    let stopped = study["stopped"].as_str().unwrap();
    assert!(
        stopped.starts_with("No run on the configurations"),
        "{stopped}"
    );
    assert!(
        stopped.contains("run(s) on 32 (32 nodes, not among the study's configurations)"),
        "{stopped}"
    );
    assert!(
        study["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["configuration"] == "C_16")
    );
}

/// `hetscale plan` of the study [`write_planned_study`] stores, for N on 16 nodes within ±10%.
const PLAN: [&str; 7] = [
    "plan",
    "--from",
    "out/study.db",
    "--nodes",
    "16",
    "--precision",
    "0.1",
];

#[test]
fn plan_prints_the_next_runs_with_their_gain_and_cost() {
    let dir = tempfile::tempdir().unwrap();
    write_planned_study(dir.path());
    planned(dir.path(), &["--budget-s", "5"]);
    let plan = json_of(
        hetscale_in(dir.path())
            .args(PLAN)
            .args(["--next", "3", "--json"]),
    );
    assert_eq!(plan["kind"], "plan");
    assert_eq!(plan["study"], "law");
    let next = plan["next"].as_array().unwrap();
    assert!(!next.is_empty() && next.len() <= 3, "{plan:#}");
    for pick in next {
        assert!(pick["cost_s"].as_f64().unwrap() > 0.0);
        if pick["kind"] != "explore" {
            let (before, after) = (pick["width_before"].as_f64(), pick["width_after"].as_f64());
            assert!(after.unwrap() < before.unwrap(), "{pick}");
        }
    }
    // Nothing was run: the database holds the runs the study made, no more.
    let text = String::from_utf8(succeeded(hetscale_in(dir.path()).args(PLAN)).stdout).unwrap();
    assert!(text.contains("Next runs"), "{text}");
    let again = json_of(
        hetscale_in(dir.path())
            .args(PLAN)
            .args(["--next", "3", "--json"]),
    );
    assert_eq!(again["cost_s"], plan["cost_s"]);
}

#[test]
fn bad_plans_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    write_planned_study(dir.path());
    let study = |extra: &[&str]| {
        let mut args = vec![
            "study",
            "law.toml",
            "--out",
            "out",
            "--quiet",
            "--predict-nodes",
            "16",
        ];
        args.extend_from_slice(extra);
        one_line_error(hetscale_in(dir.path()).args(&args))
    };
    let err = study(&["--precision", "0"]);
    assert!(
        err.contains("--precision 0 is not a relative half-width"),
        "{err}"
    );
    let err = study(&["--precision", "NaN"]);
    assert!(err.contains("--precision NaN"), "{err}");
    let err = study(&["--precision", "0.1", "--budget-s", "-3"]);
    assert!(err.contains("--budget-s -3"), "{err}");
    let err = study(&["--precision", "0.1", "--predict-nodes", "17"]);
    assert!(err.contains("17"), "{err}");
    let err = one_line_error(hetscale_in(dir.path()).args([
        "plan",
        "--from",
        "missing.db",
        "--nodes",
        "16",
        "--precision",
        "0.1",
    ]));
    assert!(err.contains("missing.db"), "{err}");
    // A refused study leaves no database behind.
    assert!(!dir.path().join("out/study.db").exists());
}
