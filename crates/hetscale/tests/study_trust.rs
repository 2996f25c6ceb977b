//! Study results the runs do not support are said, not reported as found: a size the noise
//! of the runs settled, a calibration with nodes faster than their marked speed.

mod common;

use std::path::Path;

use common::{hetscale_in, stdout_of};
use serde_json::Value;

/// Two nodes of 100 Mflop/s.
const PLATFORM: &str = r#"
name = "two"
[network]
g_s_per_byte = 1e-9
L = { base_s = 0.0 }
[[node]]
name = "alpha"
marked_speed = 100.0
[[node]]
name = "beta"
marked_speed = 100.0
"#;

/// A study of `python3 script.py {n} {p}` (the script prints its time) on [`PLATFORM`],
/// `E_s = 0.5` within 2%, with `approaches`.
fn spec(approaches: &str) -> String {
    format!(
        r#"
name = "noisy"
platform = "two.toml"
target = 0.5
tolerance = 0.02
n_min = 64
n_max = 8192
repetitions = 3
warmup = 0
approaches = {approaches}
[command]
template = "python3 script.py {{n}} {{p}}"
work = "2*n^2"
overhead = "0.1*p"
time_regex = 'time: (\S+)'
timeout_s = 10

[[configuration]]
label = "p=1"
nodes = "1"

[[configuration]]
label = "p=2"
nodes = "2"
"#
    )
}

/// `script` studied as [`spec`] says in a scratch directory: the directory and the JSON result.
fn study(script: &str, approaches: &str) -> (tempfile::TempDir, Value) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.toml"), PLATFORM).unwrap();
    std::fs::write(dir.path().join("script.py"), script).unwrap();
    std::fs::write(dir.path().join("spec.toml"), spec(approaches)).unwrap();
    let result = common::study_json(dir.path())[0].clone();
    (dir, result)
}

/// The time of `W / (p 1e8) + 0.1 p` seconds (E_s = 0.5 at N = 2236 p), each run off by a
/// fixed +/-0.2% in turn (a run counter in the working directory). On two processes a loaded
/// host besides: odd sizes run 0.8 times as long, even ones 1.25 times, so E_s zigzags by
/// +/-25% between neighbouring sizes while each size's runs agree within 0.4%.
const LOADED: &str = "import os, sys
n, p = int(sys.argv[1]), int(sys.argv[2])
count = int(open('count').read()) if os.path.exists('count') else 0
open('count', 'w').write(str(count + 1))
jitter = [1.0, 1.002, 0.998][count % 3]
load = (0.8 if n % 2 else 1.25) if p == 2 else 1.0
print(f'time: {(2 * n * n / (p * 1e8) + 0.1 * p) * jitter * load}')
";

fn runs_at(db: &Path, configuration: &str, n: u64) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(
            "SELECT COUNT(*) FROM runs WHERE configuration = ?1 AND n = ?2",
            rusqlite::params![configuration, n as i64],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn a_size_whose_e_s_interval_misses_the_target_is_not_settled_but_noise() {
    let (dir, result) = study(LOADED, r#"["measured"]"#);
    let measured = &result["measured"];
    let points: Vec<&str> = measured["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["configuration"].as_str().unwrap())
        .collect();
    assert_eq!(points, ["p=1"], "{measured}");
    let failure = &measured["failures"][0];
    assert_eq!(failure["configuration"], "p=2");
    let message = failure["message"].as_str().unwrap();
    assert!(
        message.starts_with("noise: E_s = ") && message.contains("after 9 runs misses the target"),
        "{message}"
    );
    // The size the search stopped at was run again: three times the spec's repetitions.
    let n: u64 = message
        .split(" at N = ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no N in {message}"));
    assert_eq!(runs_at(&dir.path().join("s.db"), "p=2", n), 9);
    // No psi involves the unsettled configuration.
    let psi_labels = &measured["psi"]["labels"];
    assert!(
        psi_labels.is_null() || !psi_labels.to_string().contains("p=2"),
        "{measured}"
    );
    // The text and the report say so too.
    let text = stdout_of(hetscale_in(dir.path()).args(["study", "spec.toml", "--db", "s.db"]));
    assert!(
        text.contains("p=2      not settled: noise: E_s = "),
        "{text}"
    );
    let page = std::fs::read_to_string(dir.path().join("out/index.html")).unwrap();
    assert!(
        page.contains("did not settle p=2: noise: E_s = "),
        "the report states it"
    );
}

/// [`LOADED`]'s times without the load, at half the compute time: the nodes compute at twice
/// their marked speed.
const FAST: &str = "import sys
n, p = int(sys.argv[1]), int(sys.argv[2])
print(f'time: {2 * n * n / (p * 1e8) / 2 + 0.1 * p}')
";

#[test]
fn a_calibration_with_nodes_faster_than_their_marked_speed_is_warned_of() {
    let (dir, result) = study(FAST, r#"["measured", "predicted"]"#);
    let a = result["calibration"]["model"]["compute_factor"]
        .as_f64()
        .unwrap();
    assert!((a - 0.5).abs() < 0.01, "a = {a}");
    let warnings = result["warnings"].to_string();
    assert!(
        warnings.contains("approach 3's calibration on p=1: compute factor a = 0.5")
            && warnings.contains("computing at 2.00x their marked speed"),
        "{warnings}"
    );
    let text = stdout_of(hetscale_in(dir.path()).args(["study", "spec.toml", "--db", "s.db"]));
    assert!(
        text.contains("computing at 2.00x their marked speed"),
        "{text}"
    );
}
