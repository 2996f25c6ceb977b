//! `hetscale run --trace FILE.json --report DIR`: the Perfetto trace and the run's report.

mod common;

use common::{hetscale, succeeded};
use serde_json::Value;

#[test]
fn run_writes_its_perfetto_trace_and_report() {
    let dir = std::env::temp_dir().join(format!("hetscale-run-views-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (trace, report) = (dir.join("trace.json"), dir.join("report"));
    succeeded(
        hetscale()
            .args(["run", "ge", "--backend", "sim", "--platform", "sunwulf"])
            .args(["--nodes", "4", "--n", "32", "--trace"])
            .arg(&trace)
            .arg("--report")
            .arg(&report),
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let tracks = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .count();
    assert!(tracks >= 4, "a track per node");
    assert!(events.iter().any(|e| e["ph"] == "s"), "message flows");
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    for id in ["run-summary", "spacetime", "average-speed", "task-summary"] {
        assert!(
            html.contains(&format!("<section id=\"{id}\">")),
            "{id} missing"
        );
    }
    assert!(report.join("tables/task-summary.csv").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_trace_directory_fails_before_the_run() {
    let out = hetscale()
        .args([
            "run",
            "mm",
            "--n",
            "16",
            "--nodes",
            "2",
            "--trace",
            "/nonexistent-dir/t.json",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert!(out.stdout.is_empty(), "nothing ran");
}
