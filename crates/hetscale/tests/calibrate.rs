//! `hetscale calibrate` and `hetscale reproduce` as a user runs them.

mod common;

use common::{
    SMALL_GE, failure_of, hetscale, hetscale_in, json_of, one_line_error, spec_dir, succeeded,
};

const RUNS: &str = "configuration,nodes,kernel,n,time_s\n\
    C'_2,\"server:1,sunfire:1\",mm,96,0.25\n\
    C'_2,\"server:1,sunfire:1\",mm,128,0.45\n\
    C'_4,\"server:1,sunblade:1,sunfire:2\",mm,160,0.5\n";

/// A scratch directory holding [`RUNS`] as `runs.csv`.
fn with_runs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("runs.csv"), RUNS).unwrap();
    dir
}

/// `hetscale calibrate --runs runs.csv --write-platform fit.toml --json` in `dir`.
fn calibrate_runs_csv(dir: &std::path::Path) -> serde_json::Value {
    json_of(hetscale_in(dir).args([
        "calibrate",
        "--runs",
        "runs.csv",
        "--write-platform",
        "fit.toml",
        "--json",
    ]))
}

#[test]
fn calibrate_fits_writes_a_platform_and_predict_takes_it() {
    let dir = with_runs();
    let fit = calibrate_runs_csv(dir.path());
    let mm = &fit["kernels"][0];
    assert_eq!(mm["kernel"], "mm");
    let f = mm["rate_fraction"]["estimate"].as_f64().unwrap();
    assert!(f > 0.0 && f < 1.0, "{f}");
    assert_eq!(mm["residuals"].as_array().unwrap().len(), 3);
    // Without the 128 run the other two leave no time for computing: no leave-one-out error.
    assert!(mm["cross_validation"].is_null(), "{mm}");
    let (lo, hi) = (
        mm["rate_fraction"]["estimate_ci95"][0].as_f64().unwrap(),
        // An interval of 1/f that reaches 0 has no upper bound on f: JSON writes it null.
        mm["rate_fraction"]["estimate_ci95"][1]
            .as_f64()
            .unwrap_or(f64::INFINITY),
    );
    assert!(lo < f && f < hi, "[{lo}, {hi}] around {f}");
    succeeded(hetscale_in(dir.path()).args([
        "predict",
        "mm",
        "--platform",
        "fit.toml",
        "--nodes",
        "server:1,sunfire:1",
        "--target",
        "0.1",
    ]));
}

#[test]
fn fit_auto_prints_its_ranking_and_fits_the_best() {
    let dir = with_runs();
    let fit = json_of(hetscale_in(dir.path()).args([
        "calibrate",
        "--runs",
        "runs.csv",
        "--fit",
        "auto",
        "--json",
    ]));
    let compared = fit["compared"].as_array().unwrap();
    assert!(!compared.is_empty(), "{fit}");
    let rms: Vec<f64> = compared
        .iter()
        .map(|c| c["cross_validation"]["rms_percent"].as_f64().unwrap())
        .collect();
    assert!(rms.windows(2).all(|w| w[0] <= w[1] + 1e-6), "{rms:?}");
    // The kernel's fit is the first choice's: its leave-one-out error is the ranking's best.
    let best = fit["kernels"][0]["cross_validation"]["rms_percent"]
        .as_f64()
        .unwrap();
    assert_eq!(best, rms[0]);
    let err = one_line_error(hetscale_in(dir.path()).args([
        "calibrate",
        "--runs",
        "runs.csv",
        "--fit",
        "auto,rate_fraction",
    ]));
    assert!(err.contains("give it alone"), "{err}");
}

#[test]
fn a_bad_runs_file_is_one_line_naming_file_line_and_field_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = RUNS.replace("0.45", "abc");
    std::fs::write(dir.path().join("runs.csv"), bad).unwrap();
    let calibrate = [
        "calibrate",
        "--runs",
        "runs.csv",
        "--write-platform",
        "fit.toml",
    ];
    let err = one_line_error(hetscale_in(dir.path()).args(calibrate));
    assert!(err.contains("runs.csv line 3, field time_s"), "{err}");
    assert!(!dir.path().join("fit.toml").exists());
    // One run cannot fix two parameters.
    let one: String = RUNS.lines().take(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.path().join("runs.csv"), one).unwrap();
    let err = failure_of(hetscale_in(dir.path()).args(calibrate));
    assert!(err.contains("at least 2 runs"), "{err}");
    assert!(!dir.path().join("fit.toml").exists());
}

#[test]
fn reproduce_rejects_an_unknown_experiment_in_one_line() {
    let err = one_line_error(hetscale().args(["reproduce", "--only", "jpdc-nope"]));
    assert!(err.contains("jpdc-ge, jpdc-mm, jpdc-conv2d"), "{err}");
}

#[test]
fn reproduce_refuses_a_calibration_choice_it_cannot_apply_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let kalinov = one_line_error(hetscale().args([
        "reproduce",
        "--only",
        "kalinov-summa",
        "--fit",
        "rate_fraction",
        "--out",
        out,
    ]));
    assert!(kalinov.contains("calibrates nothing"), "{kalinov}");
    assert!(kalinov.contains("jpdc-ge"), "{kalinov}");
    for (flag, value, says) in [
        ("--rate-fraction", "-0.5", "not a positive number"),
        ("--rate-fraction", "NaN", "not a positive number"),
        ("--fit", "rate,bogus", "unknown parameter \"bogus\""),
        ("--fit", "auto,rate", "give it alone"),
    ] {
        let err = one_line_error(hetscale().args([
            "reproduce",
            "--only",
            "jpdc-ge",
            flag,
            value,
            "--out",
            out,
        ]));
        assert!(err.contains(says), "{flag} {value}: {err}");
    }
    // Nothing ran: no study database was filled.
    assert!(!dir.path().join("jpdc-ge.platform.toml").exists());
}

#[test]
fn reproduce_help_lists_every_experiment() {
    let out = hetscale().args(["reproduce", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for id in hetscale_papers::reproduce::EXPERIMENTS {
        assert!(help.contains(id), "{id} missing from: {help}");
    }
}

#[test]
fn calibrating_on_a_study_database_recovers_the_simulated_machine() {
    let dir = spec_dir(SMALL_GE);
    succeeded(hetscale_in(dir.path()).args(["study", "spec.toml", "--out", "out"]));
    let fit =
        json_of(hetscale_in(dir.path()).args(["calibrate", "--db", "out/study.db", "--json"]));
    let ge = &fit["kernels"][0];
    // The preset computes at its marked speed with no start-up: the fit finds exactly that.
    let f = ge["rate_fraction"]["estimate"].as_f64().unwrap();
    let s = ge["run_overhead_s"]["estimate"].as_f64().unwrap();
    assert!((f - 1.0).abs() < 1e-6 && s.abs() < 1e-6, "f = {f}, s = {s}");
    let runs = ge["residuals"].as_array().unwrap().len();
    assert!(runs > 10);
    // The simulator's own runs: every left-out run is predicted exactly.
    let cv = &ge["cross_validation"];
    assert_eq!(
        cv["rel_errors_percent"].as_array().unwrap().len(),
        runs,
        "{cv}"
    );
    assert!(cv["max_abs_percent"].as_f64().unwrap() < 1e-4, "{cv}");
}

#[test]
fn a_fit_faster_than_the_marked_speed_or_unbounded_is_warned_of_in_text_and_json() {
    // [`RUNS`] ten times faster: the nodes would compute at twice their marked speed.
    let dir = tempfile::tempdir().unwrap();
    let fast = RUNS
        .replace(",0.25\n", ",0.025\n")
        .replace(",0.45\n", ",0.045\n")
        .replace(",0.5\n", ",0.05\n");
    std::fs::write(dir.path().join("runs.csv"), fast).unwrap();
    let args = ["calibrate", "--runs", "runs.csv"];
    let fit = json_of(hetscale_in(dir.path()).args(args).arg("--json"));
    let warnings: Vec<&str> = fit["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("kernel mm: rate_fraction = 2.0")
            && warnings[0].contains("x their marked speed"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[1].starts_with("kernel mm: rate_fraction's 95% interval [")
            && warnings[1].contains(", inf] is unbounded"),
        "{}",
        warnings[1]
    );
    let text = succeeded(hetscale_in(dir.path()).args(args));
    let err = String::from_utf8(text.stderr).unwrap();
    assert_eq!(
        err.lines().collect::<Vec<_>>(),
        warnings
            .iter()
            .map(|w| format!("warning: {w}"))
            .collect::<Vec<_>>()
    );
}

#[test]
fn fit_auto_prints_the_choices_tied_with_the_best_and_the_rule_that_chose() {
    // GE's base runs of the JPDC reproduction: choices tie at the best leave-one-out error.
    let ge = hetscale_papers::reproduce::Experiment::named("jpdc-ge").unwrap();
    let platform = hbsp::Platform::load("sunwulf").unwrap();
    let registry = hetscale_kernels::KernelRegistry::builtin();
    let mut csv = String::from("configuration,nodes,kernel,n,time_s\n");
    for r in ge.calibration_runs(&platform, &registry).unwrap() {
        let (c, nodes, k) = (&r.configuration, &r.nodes, &r.kernel);
        csv += &format!("{c},\"{nodes}\",{k},{},{}\n", r.n, r.time_s);
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("runs.csv"), csv).unwrap();
    let args = [
        "calibrate",
        "--runs",
        "runs.csv",
        "--fit",
        "auto",
        "--pivoting",
    ];
    let args = [&args[..], &[ge.options.pivoting.as_str()]].concat();
    let text = common::stdout_of(hetscale_in(dir.path()).args(&args));
    assert!(text.lines().nth(2).unwrap().ends_with("  (tied)"), "{text}");
    assert!(text.contains("chosen by a rule, not by the runs"), "{text}");
    let fit = json_of(hetscale_in(dir.path()).args(&args).arg("--json"));
    let best = &fit["compared"][0];
    assert_eq!(best["tied"], true, "{best}");
    assert!(
        best["tie_break"]
            .as_str()
            .unwrap()
            .contains(" choices tie at leave-one-out rms ")
    );
    assert!(fit["compared"][1]["tie_break"].is_null());
}

#[test]
fn a_calibration_on_two_configurations_gives_sim_runs_a_prediction_interval() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("runs.csv"),
        "configuration,nodes,kernel,n,time_s\n\
         C_1,server:1,mm,96,0.138\nC_1,server:1,mm,128,0.312\nC_1,server:1,mm,160,0.600\n\
         C_2,\"server:1,sunfire:1\",mm,96,0.080\nC_2,\"server:1,sunfire:1\",mm,128,0.145\n\
         C_2,\"server:1,sunfire:1\",mm,160,0.250\n",
    )
    .unwrap();
    let fit = calibrate_runs_csv(dir.path());
    // C_2 predicted from a fit on C_1 (C_1 has no smaller configuration): one error per run
    // of C_2.
    let errors: Vec<f64> = fit["kernels"][0]["held_out"]["rel_errors_percent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_f64().unwrap() / 100.0)
        .collect();
    assert_eq!(errors.len(), 3, "{fit}");
    assert!(errors.iter().any(|e| e.abs() > 0.01), "{errors:?}");
    let platform = std::fs::read_to_string(dir.path().join("fit.toml")).unwrap();
    assert!(platform.contains("held_out_errors"), "{platform}");
    // A configuration never run: the interval around sim's T, from those errors (the rms of
    // their logs, Student's t on 3 degrees of freedom, sqrt(1 + 1/3)).
    let run = json_of(hetscale_in(dir.path()).args([
        "run",
        "mm",
        "--backend",
        "sim",
        "--platform",
        "fit.toml",
        "--nodes",
        "server:1,sunfire:1,sunblade:1",
        "--n",
        "200",
        "--json",
    ]));
    let t = run["time_s"].as_f64().unwrap();
    let s = (errors.iter().map(|e| e.ln_1p().powi(2)).sum::<f64>() / 3.0).sqrt();
    let half = 3.182_446_305 * s * (4.0_f64 / 3.0).sqrt();
    let [lo, hi] = [0, 1].map(|i| run["time_interval_s"][i].as_f64().unwrap());
    assert!(
        (lo / (t * (-half).exp()) - 1.0).abs() < 1e-6,
        "{lo} {t} {half}"
    );
    assert!(
        (hi / (t * half.exp()) - 1.0).abs() < 1e-6,
        "{hi} {t} {half}"
    );
    // On a platform without a calibration's errors, no interval.
    let plain = json_of(hetscale_in(dir.path()).args([
        "run",
        "mm",
        "--backend",
        "sim",
        "--nodes",
        "2",
        "--n",
        "64",
        "--json",
    ]));
    assert!(plain["time_interval_s"].is_null(), "{plain}");
}
