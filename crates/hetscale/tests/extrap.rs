//! `hetscale export --format extrap` read back by Extra-P's own text reader: one study per
//! file, every point with data, each region modelled. Without Extra-P that check is skipped,
//! saying so (a failure under `HETSCALE_STRICT_TESTS=1`).

mod common;

use common::{SMALL_GE, hetscale_in, one_line_error, stdout_of};
use hetscale_testkit::{Need, require};

#[test]
fn extra_p_models_each_study_of_a_database_holding_two_kernels() {
    if !require(Need::ExtraP) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mm = SMALL_GE
        .replace("name = \"small ge\"", "name = \"small mm\"")
        .replace("kernel = \"ge\"", "kernel = \"mm\"")
        .replace("target = 0.3", "target = 0.2")
        .replace("[kernel_options]\npivoting = \"none\"\n", "");
    std::fs::write(dir.path().join("ge.toml"), SMALL_GE).unwrap();
    std::fs::write(dir.path().join("mm.toml"), mm).unwrap();
    for spec in ["ge.toml", "mm.toml"] {
        stdout_of(hetscale_in(dir.path()).args(["study", spec, "--db", "s.db", "--out", "out"]));
    }

    let err =
        one_line_error(hetscale_in(dir.path()).args(["export", "s.db", "--format", "extrap"]));
    assert!(
        err.contains("\"small ge\", \"small mm\": export one with --study NAME"),
        "{err}"
    );

    for study in ["small ge", "small mm"] {
        let text = stdout_of(
            hetscale_in(dir.path())
                .args(["export", "s.db", "--format", "extrap", "--study", study]),
        );
        assert!(!text.contains("DATA \n"), "an empty point: {text}");
        assert!(text.contains("\nMETRIC time_s\n"), "{text}");
        let points = text.lines().find(|l| l.starts_with("POINTS")).unwrap();
        let data = text.lines().filter(|l| l.starts_with("DATA ")).count();
        assert_eq!(points.matches('(').count(), data, "{text}");
        let file = dir.path().join(format!("{study}.txt"));
        std::fs::write(&file, &text).unwrap();
        let models = common::extrap_models(&file);
        assert_eq!(models.len(), 1, "{models:?}");
        assert_eq!(models[0].0, study);
        assert!(models[0].1.contains('n'), "a model in n: {models:?}");
    }
}

#[test]
fn extrap_export_writes_hetscales_scaling_model_of_the_same_study_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ge.toml"), SMALL_GE).unwrap();
    stdout_of(hetscale_in(dir.path()).args(["study", "ge.toml", "--db", "s.db", "--out", "out"]));

    let said = stdout_of(
        hetscale_in(dir.path()).args(["export", "s.db", "--format", "extrap", "--out", "ge.txt"]),
    );
    assert!(said.contains("ge.txt.hetscale-model.json"), "{said}");
    let extrap = std::fs::read_to_string(dir.path().join("ge.txt")).unwrap();
    let region = extrap
        .lines()
        .find_map(|l| l.strip_prefix("REGION "))
        .unwrap();
    let text = std::fs::read_to_string(dir.path().join("ge.txt.hetscale-model.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["kind"], "export-scaling-model", "{doc}");
    assert_eq!(doc["study"], region, "{doc}");
    assert_eq!(doc["metric"], "time_s", "{doc}");

    // The same model `predict --from` selects on the same runs.
    let predicted = stdout_of(hetscale_in(dir.path()).args([
        "predict",
        "--from",
        "s.db",
        "--nodes",
        "server*2:1,sunblade:31",
        "--json",
    ]));
    let predicted: serde_json::Value = serde_json::from_str(&predicted).unwrap();
    let model = &doc["model"];
    assert_eq!(model["formula"], predicted["model"]["formula"], "{doc}");
    let terms = model["terms"].as_array().unwrap();
    assert_eq!(terms[0]["term"], "W/C", "{doc}");
    for term in terms {
        let c = term["coefficient"].as_f64().unwrap();
        assert!(c.is_finite() && c >= 0.0, "{term}");
        if let Some([low, high]) = term["ci95"].as_array().map(|a| [&a[0], &a[1]]) {
            let (low, high) = (low.as_f64().unwrap(), high.as_f64().unwrap());
            assert!(low <= c && c <= high, "{term}");
        }
    }
    assert!(model["cv_error_percent"].as_f64().unwrap() >= 0.0, "{doc}");
    let runners_up = doc["runners_up"].as_array().unwrap();
    assert!(!runners_up.is_empty() && runners_up.len() <= 3, "{doc}");
    let runner_up_formulas: Vec<_> = predicted["runners_up"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["formula"])
        .collect();
    for (ours, theirs) in runners_up.iter().zip(runner_up_formulas) {
        assert_eq!(&ours["formula"], theirs, "{doc}");
    }
    assert!(doc["why_no_model"].is_null(), "{doc}");
}
