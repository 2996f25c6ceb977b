//! Resuming a command study: a failed run is retried and its failure kept; a study that
//! settles nothing ends with its own exit code, its results written.

mod common;

use std::path::Path;

use common::{hetscale_in, stdout_of};

/// One node of 100 Mflop/s.
const PLATFORM: &str = r#"
name = "one"
[network]
g_s_per_byte = 1e-9
L = { base_s = 0.0 }
[[node]]
name = "alpha"
marked_speed = 100.0
"#;

/// A command that fails the first time it runs in its directory (a node that died) and
/// prints a time of 1 s from then on.
const FLAKY: &str = r#"
if [ -e ran ]; then echo "time: 1"; else touch ran; echo "node died" >&2; exit 1; fi
"#;

/// `hetscale study --command 'sh flaky.sh {n}'` on one node for `target`: with T = 1 s,
/// E_s = n / (n + 16), 0.5 at N = 16.
fn flaky_study(target: &str) -> Vec<String> {
    [
        "study",
        "--command",
        "sh flaky.sh {n}",
        "--work",
        "1e8*n/(n+16)",
        "--time-regex",
        "time: (\\S+)",
        "--platform",
        "one.toml",
        "--nodes",
        "1",
        "--target",
        target,
        "--n-max",
        "64",
        "--repetitions",
        "1",
        "--warmup",
        "0",
        "--out",
        "out",
        "--quiet",
    ]
    .map(String::from)
    .to_vec()
}

fn flaky_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("flaky.sh"), FLAKY).unwrap();
    std::fs::write(dir.path().join("one.toml"), PLATFORM).unwrap();
    dir
}

/// The stored runs' status and error, and the failure history's errors.
fn stored(db: &Path) -> (Vec<(String, Option<String>)>, Vec<String>) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut runs = conn
        .prepare("SELECT status, error FROM runs ORDER BY id")
        .unwrap();
    let runs = runs
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut history = conn
        .prepare("SELECT error FROM failure_history ORDER BY id")
        .unwrap();
    let history = history
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (runs, history)
}

#[test]
fn a_resume_retries_a_failed_run_and_keeps_its_failure() {
    let dir = flaky_dir();
    let first = hetscale_in(dir.path())
        .args(flaky_study("0.5"))
        .assert()
        .failure()
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&first.stderr);
    assert!(
        err.contains("every run failed") && err.contains("node died"),
        "{err}"
    );
    let db = dir.path().join("out/study.db");
    let (runs, history) = stored(&db);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].0, "failed");
    assert!(history.is_empty());

    let out = stdout_of(hetscale_in(dir.path()).args(flaky_study("0.5")));
    assert!(
        out.contains("Resumed study \"command\": retried 1 failed run\n"),
        "{out}"
    );
    let (runs, history) = stored(&db);
    assert!(
        runs.iter()
            .all(|(status, error)| status == "ok" && error.is_none()),
        "the retried run is stored completed: {runs:?}"
    );
    assert_eq!(history.len(), 1, "{history:?}");
    assert!(history[0].contains("node died"), "{history:?}");

    let again = stdout_of(hetscale_in(dir.path()).args(flaky_study("0.5")));
    assert!(
        again.contains(&format!(
            "Resumed study \"command\": reused {} stored runs\n",
            runs.len()
        )),
        "a completed resume retries nothing: {again}"
    );
}

#[test]
fn a_study_that_settles_nothing_exits_3_and_still_writes_what_it_found() {
    let dir = flaky_dir();
    std::fs::write(dir.path().join("ran"), "").unwrap();
    // E_s >= 0.33 at every size: a target of 1e-6 is never crossed.
    let out = hetscale_in(dir.path())
        .args(flaky_study("0.000001"))
        .assert()
        .code(i32::from(hetscale::UNSETTLED))
        .get_output()
        .clone();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("not settled"), "{stdout}");
    assert_eq!(
        stderr.trim(),
        "hetscale: study \"command\" settled no configuration: each \"not settled\" line above \
         (and the report) says what to change, n_min, n_max or the target, or which runs failed"
    );
    for file in ["study.db", "command.json", "command.txt", "index.html"] {
        assert!(dir.path().join("out").join(file).is_file(), "{file}");
    }
    // One configuration settled is a success.
    hetscale_in(dir.path())
        .args(flaky_study("0.5"))
        .args(["--name", "settled"])
        .assert()
        .success();
}

#[test]
fn the_study_help_says_how_a_resume_treats_failures_and_what_the_exit_codes_mean() {
    let help = stdout_of(hetscale_in(Path::new(".")).args(["study", "--help"]));
    assert!(
        help.contains("run that failed") && help.contains("failure_history"),
        "{help}"
    );
    assert!(help.contains("3 the study settled no"), "{help}");
}

#[test]
fn the_default_study_says_what_its_resume_reused() {
    let dir = tempfile::tempdir().unwrap();
    let first = stdout_of(hetscale_in(dir.path()).args(["study", "--out", "out", "--quiet"]));
    assert!(!first.contains("Resumed"), "{first}");
    let again = stdout_of(hetscale_in(dir.path()).args(["study", "--out", "out", "--quiet"]));
    let resumed: Vec<&str> = again
        .lines()
        .filter(|l| l.starts_with("Resumed study"))
        .collect();
    assert_eq!(resumed.len(), 3, "one line per experiment: {again}");
    for (line, id) in resumed.iter().zip(["jpdc-ge", "jpdc-mm", "jpdc-conv2d"]) {
        assert!(
            line.starts_with(&format!("Resumed study \"{id}\": reused "))
                && line.ends_with(" stored runs"),
            "{line}"
        );
    }
}
