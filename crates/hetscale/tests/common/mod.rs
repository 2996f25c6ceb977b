//! Helpers shared by the CLI's test files.
// Each test file compiles this module on its own and uses only some of it.
#![allow(dead_code)]

use std::path::Path;

use serde_json::Value;

/// The arguments of a study of `spec.toml` in the current directory, stored in `s.db`, its
/// report under `out`, its results printed as JSON.
pub const STUDY_ARGS: [&str; 7] = [
    "study",
    "spec.toml",
    "--db",
    "s.db",
    "--out",
    "out",
    "--json",
];

/// `hetscale study spec.toml --db s.db --out out --json` in `dir` ([`STUDY_ARGS`]), with the
/// `local` platform's placeholder speed (no test depends on this host's cached one): its
/// results, one object per study. A failure shows the study's standard error.
pub fn study_json(dir: &Path) -> Value {
    let out = assert_cmd::Command::cargo_bin("hetscale")
        .expect("binary built")
        .env("HETSCALE_CACHE_DIR", "")
        .args(STUDY_ARGS)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document on standard output")
}

/// Set to `1` to skip loading exports with Extra-P where the `extrap` package is missing.
pub const SKIP_EXTRAP: &str = "HETSCALE_SKIP_EXTRAP";

/// Loads `file` with Extra-P's own text reader (`python3 -m extrap --text`) and returns the model
/// of each region, as `(region, model)`. A missing Extra-P fails (CI installs it) unless
/// [`SKIP_EXTRAP`] is `1`: then `None` and a printed note.
pub fn extrap_models(file: &Path) -> Option<Vec<(String, String)>> {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import extrap"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var(SKIP_EXTRAP).is_ok_and(|v| v == "1"),
            "python3 with Extra-P is needed to check the Extra-P export: `python3 -m pip install \
             extrap`, or set {SKIP_EXTRAP}=1 to skip it"
        );
        eprintln!("note: {SKIP_EXTRAP}=1 and no Extra-P: skipping the Extra-P check");
        return None;
    }
    let out = std::process::Command::new("python3")
        .args(["-m", "extrap", "--disable-progress", "--text"])
        .arg(file)
        .args(["--print", "{callpath}\t{model}"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "Extra-P could not load {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let models = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(region, model)| (region.to_string(), model.trim().to_string()))
        .collect();
    Some(models)
}
