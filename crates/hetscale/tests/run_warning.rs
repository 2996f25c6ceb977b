//! `hetscale run` warns when a run's speed-efficiency exceeds 1: no code runs faster than the
//! marked speed of its machine, so the marked speeds are wrong for this code.

mod common;

use common::{failure_of, hetscale, succeeded};
use serde_json::Value;

/// Two nodes marked at 0.001 Mflop/s: any real run of a few thousand flops beats that by
/// orders of magnitude.
const UNDERMARKED: &str = r#"
name = "undermarked"
speed_unit = "Mflop/s"
[network]
g_s_per_byte = 1e-9
L = { base_s = 1e-6 }
[[node]]
name = "a"
marked_speed = 0.001
[[node]]
name = "b"
marked_speed = 0.001
"#;

/// `hetscale run ge --n 30` on the undermarked platform with `backend`, plus `extra` flags.
fn run_ge(backend: &str, extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let platform = dir.path().join("undermarked.toml");
    std::fs::write(&platform, UNDERMARKED).unwrap();
    succeeded(
        hetscale()
            .args(["run", "ge", "--n", "30", "--backend", backend, "--platform"])
            .arg(&platform)
            .args(extra),
    )
}

/// `run mm` on one node of the `local` platform, on `sim`: a run that gets `local`'s speed.
const LOCAL_RUN: [&str; 8] = ["run", "mm", "--n", "16", "--backend", "sim", "--nodes", "1"];

fn warning_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_run_faster_than_the_marked_speed_warns_once_on_stderr() {
    let out = run_ge("threads", &[]);
    let warnings = warning_lines(&out.stderr);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let e_s: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("E_s"))
        .and_then(|v| v.trim().parse().ok())
        .expect("an E_s line");
    assert!(e_s > 1.0, "{stdout}");
    assert_eq!(
        warnings[0],
        format!(
            "warning: E_s = {e_s:.4} > 1: this run went faster than the marked speed allows, so the marked speeds are wrong for this code; re-measure them with hetscale bench, or give the platform's real speeds"
        )
    );
    assert!(!stdout.contains("warning"), "{stdout}");
}

#[test]
fn json_carries_the_warning_and_keeps_stdout_one_document() {
    let out = run_ge("threads", &["--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let e_s = report["speed_efficiency"].as_f64().unwrap();
    assert!(e_s > 1.0, "{report}");
    let warnings = report["warnings"].as_array().expect("a warnings array");
    assert_eq!(warnings.len(), 1, "{report}");
    let warning = warnings[0].as_str().unwrap();
    assert!(
        warning.starts_with(&format!("E_s = {e_s:.4} > 1: ")),
        "{warning}"
    );
    assert_eq!(
        warning_lines(&out.stderr),
        vec![format!("warning: {warning}")]
    );
}

#[test]
fn a_run_within_the_marked_speed_has_no_warning() {
    // On sim the declared work is charged at the marked speed, so E_s <= 1.
    let out = run_ge("sim", &["--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["speed_efficiency"].as_f64().unwrap() <= 1.0);
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
    assert!(warning_lines(&out.stderr).is_empty());
}

#[test]
fn on_the_local_preset_the_placeholder_speed_is_said_in_text_and_json() {
    let run = |json: &[&str]| hetscale().args(LOCAL_RUN).args(json).output().unwrap();
    let placeholder = "platform local: the marked speed of 1000 Mflop/s per core is a placeholder, not a measurement, so E_s and psi are relative to it; measure this host once with `hetscale bench --quick --save-local` (the cache must be on: HETSCALE_CACHE_DIR unset or a directory), or with `hetscale bench --write-platform local.toml` and pass --platform local.toml";
    let text = run(&[]);
    assert_eq!(
        warning_lines(&text.stderr),
        vec![format!("warning: {placeholder}")]
    );
    let report: Value = serde_json::from_slice(&run(&["--json"]).stdout).unwrap();
    assert_eq!(report["warnings"], serde_json::json!([placeholder]));
    // A platform with real speeds gets no such warning.
    assert!(warning_lines(&run_ge("sim", &[]).stderr).is_empty());
}

#[test]
fn runs_and_warmup_give_hyperfine_statistics_of_t() {
    let out = run_ge("threads", &["--runs", "5", "--warmup", "2", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let time = &report["time_stats_s"];
    assert_eq!(time["samples"], 5, "{report}");
    let stat = |key: &str| time[key].as_f64().unwrap();
    assert!(
        stat("min") <= stat("median") && stat("median") <= stat("max"),
        "{time}"
    );
    assert!(stat("stddev") >= 0.0 && stat("min") > 0.0, "{time}");
    assert_eq!(report["time_s"].as_f64().unwrap(), stat("median"));
    assert!(time["outliers"].is_array(), "{time}");
    // On sim every run takes the same virtual time: no spread, no outlier.
    let text = run_ge("sim", &["--runs", "3"]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    let line = stdout.lines().find(|l| l.starts_with('T')).unwrap();
    assert!(
        line.contains(" s +/- 0.000000 s (mean +/- sd of 3 runs), range "),
        "{stdout}"
    );
    let bad = failure_of(hetscale().args(["run", "ge", "--n", "30", "--runs", "0"]));
    assert!(bad.contains("--runs"), "{bad}");
}

/// `hetscale` with the speed cache of the `local` platform in `cache`.
fn hetscale_cached_in(cache: &std::path::Path) -> assert_cmd::Command {
    let mut command = hetscale();
    command.env("HETSCALE_CACHE_DIR", cache);
    command
}

/// `run mm` on one `local` node with the speed cache in `cache`: its JSON and its stderr.
fn run_local(cache: &std::path::Path) -> (Value, String) {
    let out = succeeded(hetscale_cached_in(cache).args(LOCAL_RUN).arg("--json"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

#[test]
fn local_measures_this_host_once_caches_it_and_says_where() {
    let cache = tempfile::tempdir().unwrap();
    let file = cache.path().join("local-marked-speed.json");
    let note = |speed: f64, by: &str| {
        format!(
            "note: platform local: marked speed {speed:.1} Mflop/s per core, measured on this host by {by} and cached in {}; refresh it with `hetscale bench --quick --save-local`, or delete the file",
            file.display()
        )
    };
    // A cached speed is the platform's: no placeholder warning, a note saying where it is.
    std::fs::write(
        &file,
        r#"{"marked_speed_mflops": 2500.0, "cores": 1, "measured_by": "hetscale 0 bench --quick"}"#,
    )
    .unwrap();
    let (report, stderr) = run_local(cache.path());
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
    assert_eq!(stderr.trim(), note(2500.0, "hetscale 0 bench --quick"));
    assert_eq!(report["marked_speed_flops"], 2.5e9, "{report}");
    // No cache: the first use measures with the quick suite and caches what it found, unless
    // the host was too loaded to trust it (then it is used once and not cached).
    std::fs::remove_file(&file).unwrap();
    let (_, stderr) = run_local(cache.path());
    if stderr.contains("it was not cached") {
        assert!(
            !file.exists() && stderr.contains("the machine was loaded"),
            "{stderr}"
        );
    } else {
        let cached: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let speed = cached["marked_speed_mflops"].as_f64().unwrap();
        assert!(speed > 0.0, "{cached}");
        let by = format!("hetscale {} bench --quick", env!("CARGO_PKG_VERSION"));
        assert_eq!(cached["measured_by"], by.as_str());
        assert_eq!(stderr.trim(), note(speed, &by));
    }
    // bench --save-local replaces it, saying where.
    std::fs::write(&file, "{ damaged").unwrap();
    let stderr = failure_of(hetscale_cached_in(cache.path()).args(LOCAL_RUN));
    assert!(
        stderr.contains("is unreadable") && stderr.contains("delete it and the next use"),
        "{stderr}"
    );
    let out = hetscale_cached_in(cache.path())
        .args(["bench", "--quick", "--save-local"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "cached as the local platform's marked speed in {}",
            file.display()
        )),
        "{stdout}"
    );
    let (report, _) = run_local(cache.path());
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
}
