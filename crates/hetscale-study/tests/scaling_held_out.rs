//! Every study with three or more configurations checks the scaling model on the largest:
//! selected on the others' runs, it predicts the largest's N with a bootstrap interval.

use hetscale_study::runner::Silent;
use hetscale_study::spec::{Approach, StudySpec};
use hetscale_study::store::Store;
use hetscale_study::study::{load_results, run_study};

const SPEC: &str = r#"
name = "mm-four"
kernel = "mm"
platform = "sunwulf"
target = 0.2
n_max = 1024

[[configuration]]
label = "C_1"
nodes = "sunblade:1"

[[configuration]]
label = "C_2"
nodes = "sunblade:2"

[[configuration]]
label = "C_4"
nodes = "sunblade:4"

[[configuration]]
label = "C_8"
nodes = "sunblade:8"
"#;

#[test]
fn a_simulated_study_checks_the_scaling_model_on_its_largest_configuration() {
    let spec = StudySpec::from_toml_str(SPEC, "test").unwrap();
    let store = Store::open_in_memory().unwrap();
    let result = run_study(&spec, &store, &Silent).unwrap();
    let check = result
        .scaling_held_out
        .as_ref()
        .expect("four configurations and a measured size on the largest");
    assert_eq!(check.configuration, "C_8");
    assert_eq!(check.fitted_on, ["C_1", "C_2", "C_4"]);
    assert_eq!(check.reference, Approach::Measured);
    let (low, high) = check.n_predicted_ci95;
    let high = high.map_or(f64::INFINITY, |h| h as f64);
    assert!(
        low as f64 <= check.n_predicted.round() && check.n_predicted.round() <= high,
        "{check:?}"
    );
    let measured = result.measured.as_ref().unwrap().point("C_8").unwrap();
    assert_eq!(check.n_reference, measured.n);
    assert_eq!(check.time_reference_s, measured.time_s);
    assert!(
        (check.relative_error - (check.n_predicted - measured.n) / measured.n).abs() < 1e-12,
        "{check:?}"
    );
    // The simulator's times follow a law in the space: the largest is predicted closely.
    assert!(check.relative_error.abs() < 0.25, "{check:?}");
    assert!(check.model.formula.starts_with("T = "), "{check:?}");
    // The summary carries it, as one line naming the span fitted on and the interval.
    let line = result.summary.scaling_held_out_line().unwrap();
    assert!(line.contains("N on C_8"), "{line}");
    assert!(line.contains("from C_1..C_4"), "{line}");
    assert!(line.contains(&format!("[{low}, {high}]")), "{line}");
    // The check re-derives from the stored runs alone.
    let reloaded = load_results(&store).unwrap();
    assert_eq!(reloaded[0].scaling_held_out.as_ref(), Some(check));
}

#[test]
fn two_configurations_have_no_scaling_check() {
    let text = SPEC.replace(
        "[[configuration]]\nlabel = \"C_4\"\nnodes = \"sunblade:4\"\n\n[[configuration]]\nlabel = \"C_8\"\nnodes = \"sunblade:8\"\n",
        "",
    );
    let spec = StudySpec::from_toml_str(&text, "test").unwrap();
    assert_eq!(spec.configurations.len(), 2);
    let result = run_study(&spec, &Store::open_in_memory().unwrap(), &Silent).unwrap();
    assert!(result.scaling_held_out.is_none());
    assert!(result.summary.scaling_held_out_line().is_none());
}
