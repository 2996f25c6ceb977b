//! `hetscale report DB` and the report `hetscale study` writes: the same page either way,
//! every study view in it, and one-line errors for a database without studies.

use std::path::Path;

use assert_cmd::Command;

fn hetscale() -> Command {
    Command::cargo_bin("hetscale").expect("binary built")
}

/// A small GE study on simulated Sunwulf (three configurations: a held-out check too).
const SPEC: &str = include_str!("specs/small-ge.toml");

/// Runs `hetscale` in `dir`; returns stdout, failing with stderr if it fails.
fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = hetscale().args(args).current_dir(dir).output().unwrap();
    assert!(
        out.status.success(),
        "hetscale {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `hetscale` in `dir` expecting failure; returns stderr.
fn run_err(dir: &Path, args: &[&str]) -> String {
    let out = hetscale().args(args).current_dir(dir).output().unwrap();
    assert!(!out.status.success(), "hetscale {args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn study_writes_the_report_and_report_rebuilds_it_from_the_database() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spec.toml"), SPEC).unwrap();
    let printed = run_ok(dir.path(), &["study", "spec.toml", "--out", "out"]);
    assert!(
        printed.contains("Report: out/index.html"),
        "the study prints where its report is: {printed}"
    );
    let page = std::fs::read_to_string(dir.path().join("out/index.html")).unwrap();
    for view in ["setup", "es-vs-n", "psi", "contours", "approaches"] {
        assert!(
            page.contains(&format!("id=\"small-ge-{view}\"")),
            "view {view} is missing"
        );
    }
    assert!(dir.path().join("out/tables/small-ge-psi.csv").exists());

    let printed = run_ok(dir.path(), &["report", "out/study.db", "--out", "again"]);
    assert_eq!(printed.trim(), "Report: again/index.html");
    let again = std::fs::read_to_string(dir.path().join("again/index.html")).unwrap();
    assert_eq!(again, page, "the database alone gives the same report");

    // Without --out, the report goes beside the database, where the study put it.
    let printed = run_ok(dir.path(), &["report", "out/study.db"]);
    assert_eq!(printed.trim(), "Report: out/index.html");
}

#[test]
fn a_study_that_settles_nothing_still_writes_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SPEC
        .replace("target = 0.3", "target = 0.95")
        .replace("n_max = 2048", "n_max = 64");
    std::fs::write(dir.path().join("spec.toml"), spec).unwrap();
    let printed = run_ok(dir.path(), &["study", "spec.toml", "--out", "out"]);
    assert!(printed.contains("Report: out/index.html"), "{printed}");
    let page = std::fs::read_to_string(dir.path().join("out/index.html")).unwrap();
    assert!(page.contains("did not settle"), "failures are stated");
}

#[test]
fn a_database_without_studies_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.db"), b"").unwrap();
    let err = run_err(dir.path(), &["report", "empty.db"]);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("holds no study") && err.contains("hetscale study"),
        "{err}"
    );
    assert!(!dir.path().join("index.html").exists());

    let err = run_err(dir.path(), &["report", "missing.db"]);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("no study database at missing.db"), "{err}");
    assert!(
        !dir.path().join("missing.db").exists(),
        "nothing is created"
    );
}
