//! `hetscale study`, `predict` and `bench` end to end: resuming after SIGKILL, unreachable
//! targets, invalid specs.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use common::{
    SMALL_GE, failure_of, hetscale, hetscale_in, hetscale_process, json_of, one_line_error,
    spec_dir, succeeded,
};

/// Every stored run, without its row id and timestamp (which differ between databases).
fn runs(db: &Path) -> BTreeSet<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT study, purpose, configuration, nodes, n, repetition, time_s, work, verified FROM runs")
        .unwrap();
    stmt.query_map([], |r| {
        Ok(format!(
            "{}|{}|{}|{}|{}|{}|{:e}|{:e}|{}",
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, i64>(4)?,
            r.get::<_, i64>(5)?,
            r.get::<_, f64>(6)?,
            r.get::<_, f64>(7)?,
            r.get::<_, bool>(8)?
        ))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

fn run_count(db: &Path) -> usize {
    rusqlite::Connection::open(db)
        .and_then(|c| c.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0)))
        .map_or(0, |n| n as usize)
}

fn study(dir: &Path, db: &str) -> std::process::Command {
    let mut cmd = hetscale_process();
    cmd.args(["study", "spec.toml", "--db", db, "--out", "out"])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    cmd
}

#[test]
fn a_study_killed_at_a_random_point_resumes_to_exactly_the_uninterrupted_runs() {
    let dir = spec_dir(SMALL_GE);
    assert!(study(dir.path(), "whole.db").status().unwrap().success());
    let whole = runs(&dir.path().join("whole.db"));
    assert!(whole.len() > 10, "the study makes enough runs to interrupt");

    // A pseudo-random kill point in the first half of the runs: the later runs are the
    // slowest, so the study is surely still running when the kill lands.
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as usize;
    let kill_after = 1 + nanos % (whole.len() / 2);
    let db = dir.path().join("killed.db");
    let mut child = study(dir.path(), "killed.db").spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while run_count(&db) < kill_after && Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    // kill() of a child that already exited succeeds too: the status says whether it landed.
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "the study ended ({status}) before the kill after {kill_after} runs"
    );
    let partial = runs(&db);
    assert!(
        partial.is_subset(&whole),
        "a killed study stores only completed runs"
    );

    assert!(study(dir.path(), "killed.db").status().unwrap().success());
    let resumed = runs(&db);
    assert!(
        partial.len() < resumed.len(),
        "the kill landed mid-study: {} runs before the resume, {} after",
        partial.len(),
        resumed.len()
    );
    assert_eq!(resumed, whole, "killed after {kill_after} runs");
}

#[test]
fn rerunning_a_finished_study_runs_nothing_and_reports_the_same() {
    let dir = spec_dir(SMALL_GE);
    let first = common::study_json(dir.path());
    let count = run_count(&dir.path().join("s.db"));
    assert_eq!(common::study_json(dir.path()), first);
    assert_eq!(run_count(&dir.path().join("s.db")), count);
    let study = &first[0];
    for approach in ["measured", "computed", "predicted"] {
        assert_eq!(
            study[approach]["points"].as_array().unwrap().len(),
            3,
            "{approach}"
        );
    }
    assert!(study["held_out"]["relative_error_percent"].is_number());
    assert_eq!(study["verification"]["verified"], true);
    assert!(dir.path().join("out/small ge.json").exists());
}

#[test]
fn an_unreachable_target_reports_the_highest_speed_efficiency_reached() {
    let spec = SMALL_GE
        .replace("target = 0.3", "target = 0.95")
        .replace("n_max = 2048", "n_max = 64");
    let dir = spec_dir(&spec);
    let out = hetscale_in(dir.path())
        .args(["study", "spec.toml", "--out", "out"])
        .assert()
        .code(i32::from(hetscale::UNSETTLED))
        .get_output()
        .clone();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("not settled") && text.contains("the highest E_s reached is"),
        "{text}"
    );
}

#[test]
fn an_invalid_spec_is_one_line_naming_the_line_and_field() {
    let spec = SMALL_GE.replace("target = 0.3", "target = -0.3");
    let dir = spec_dir(&spec);
    let err = one_line_error(hetscale_in(dir.path()).args(["study", "spec.toml", "--out", "out"]));
    assert!(
        err.contains("spec.toml line 7") && err.contains("target"),
        "{err}"
    );
}

#[test]
fn a_changed_spec_under_the_same_name_is_refused_unless_replace_is_given() {
    let dir = spec_dir(&SMALL_GE.replace("n_max = 2048", "n_max = 256"));
    let first = study(dir.path(), "s.db").status().unwrap();
    // Up to N = 256 no configuration settles: the study still stores its spec and runs.
    assert_eq!(first.code(), Some(i32::from(hetscale::UNSETTLED)));
    std::fs::write(
        dir.path().join("spec.toml"),
        SMALL_GE.replace("n_max = 2048", "n_max = 512"),
    )
    .unwrap();
    let err = failure_of(hetscale_in(dir.path()).args([
        "study",
        "spec.toml",
        "--db",
        "s.db",
        "--out",
        "out",
    ]));
    assert!(
        err.contains("different spec") && err.contains("--replace") && err.contains("keep both"),
        "{err}"
    );
    // --replace drops the stored study's runs and runs the changed spec in their place.
    let replaced = study(dir.path(), "s.db").arg("--replace").status().unwrap();
    assert_ne!(replaced.code(), Some(1), "--replace failed");
    let spec: String = rusqlite::Connection::open(dir.path().join("s.db"))
        .and_then(|c| c.query_row("SELECT spec FROM studies", [], |r| r.get(0)))
        .unwrap();
    assert!(spec.contains("512"), "{spec}");
}

#[test]
fn predict_reaches_thousands_of_nodes_instantly() {
    let study = json_of(hetscale().args([
        "predict",
        "mm",
        "--platform",
        "sunwulf",
        "--nodes",
        "sunblade:64",
        "--nodes",
        "sunblade:4096",
        "--replicate",
        "64",
        // Sunwulf's 100 Mbit/s links cap MM near 0.08 at 4096 SunBlades (one-phase
        // broadcast of B): ask for what that machine can give.
        "--target",
        "0.05",
        "--json",
    ]));
    let points = study["points"].as_array().unwrap();
    assert_eq!(points[1]["configuration"]["p"], 4096);
    for p in points {
        let e = p["speed_efficiency"].as_f64().unwrap();
        assert!((e - 0.05).abs() < 5e-4, "{e}");
    }
    assert!(points[1]["n"].as_f64() > points[0]["n"].as_f64());
    let err = hetscale()
        .args([
            "predict",
            "mm",
            "--nodes",
            "sunblade:100",
            "--target",
            "0.2",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&err.stderr).contains("--replicate"));
}

#[test]
fn bench_writes_a_local_platform_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let platform = dir.path().join("local.toml");
    let report = json_of(
        hetscale()
            .args(["bench", "--quick", "--json", "--write-platform"])
            .arg(&platform),
    );
    let speed = report["marked_speed_flops"].as_f64().unwrap();
    assert!(speed > 0.0);
    let text = std::fs::read_to_string(&platform).unwrap();
    assert!(text.contains("marked_speed"));
    succeeded(
        hetscale()
            .args(["run", "mm", "--n", "32", "--nodes", "1", "--platform"])
            .arg(&platform),
    );
}

#[test]
fn a_threads_study_repeats_every_size_and_stores_each_run() {
    let spec = r#"
name = "threads"
kernel = "mm"
backend = "threads"
platform = "local"
target = 0.02
tolerance = 0.4
n_min = 16
n_max = 512
repetitions = 3
approaches = ["measured"]
[[configuration]]
label = "one"
nodes = "1"
[[configuration]]
label = "two"
nodes = "2"
"#;
    let dir = spec_dir(spec);
    // Real runs on this host: whether they settle the target depends on its load.
    let status = study(dir.path(), "t.db").status().unwrap();
    assert!(
        status.success() || status.code() == Some(i32::from(hetscale::UNSETTLED)),
        "{status}"
    );
    let conn = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
    let mut per_size = conn
        .prepare("SELECT COUNT(*) FROM runs WHERE purpose = 'sample' GROUP BY configuration, n")
        .unwrap();
    let counts: Vec<i64> = per_size
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(counts.len() >= 2, "{counts:?}");
    // Three repetitions per size; a size whose E_s interval missed the target is measured
    // again up to 3 x 3 runs (a loaded host); a stored warm-up run would make 4 or 10.
    assert!(
        counts.iter().all(|&c| c == 3 || c == 9) && counts.contains(&3),
        "three repetitions per size (nine at a size measured again), warm-up runs not stored: {counts:?}"
    );
}

#[test]
fn off_a_terminal_each_size_measured_is_a_log_line_and_quiet_silences_it() {
    let spec = SMALL_GE.replace("samples = 3", "samples = 3\napproaches = [\"measured\"]");
    let dir = spec_dir(&spec);
    let logged = succeeded(hetscale_in(dir.path()).args([
        "study",
        "spec.toml",
        "--db",
        "a.db",
        "--out",
        "out",
    ]));
    let stderr = String::from_utf8(logged.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    // The measured search on C_2 starts at n_min = 16 and doubles.
    assert!(
        lines[0].starts_with("small ge measured C_2 (1/3): N = 16, E_s = ")
            && lines[0].contains(" s (median of 1 run); 1 size in ")
            && lines[0].ends_with("ETA after the first configuration"),
        "{stderr}"
    );
    let settled = lines
        .iter()
        .position(|l| l.starts_with("small ge measured C_2 (1/3): N = ") && !l.contains("ETA"))
        .unwrap_or_else(|| panic!("no line ends C_2: {stderr}"));
    assert!(lines[settled].contains(" after "), "{stderr}");
    assert!(
        lines[settled + 1].starts_with("small ge measured C_4 (2/3): N = ")
            && lines[settled + 1].contains(" s, ETA "),
        "{stderr}"
    );
    let quiet = succeeded(hetscale_in(dir.path()).args([
        "study",
        "spec.toml",
        "--db",
        "b.db",
        "--out",
        "out",
        "--quiet",
    ]));
    assert_eq!(String::from_utf8(quiet.stderr).unwrap(), "");
}

#[test]
fn help_shows_the_command_placeholders_as_written() {
    for command in ["study", "run"] {
        let help = hetscale().args([command, "--help"]).output().unwrap();
        let help = String::from_utf8(help.stdout).unwrap();
        assert!(
            help.contains(
                "placeholders {n}, {p}, {nodes} and {hostfile}, e.g. \"./solver --size {n} --procs {p}\""
            ),
            "hetscale {command} --help:\n{help}"
        );
    }
}

#[test]
fn the_report_shows_every_study_in_the_database_and_the_text_ends_with_the_summary() {
    let dir = spec_dir(SMALL_GE);
    common::study_json(dir.path());
    let other = SMALL_GE.replace("name = \"small ge\"", "name = \"other ge\"");
    std::fs::write(dir.path().join("other.toml"), other).unwrap();
    let text = common::stdout_of(hetscale_in(dir.path()).args([
        "study",
        "other.toml",
        "--db",
        "s.db",
        "--out",
        "out",
    ]));
    let index = std::fs::read_to_string(dir.path().join("out/index.html")).unwrap();
    for study in ["small ge", "other ge"] {
        assert!(index.contains(&format!("Study {study}")), "{study} missing");
    }
    // The summary is the last thing printed: its table, a verdict per approach, held-out.
    let summary = text.rsplit_once("\nSummary of other ge").unwrap().1;
    let lines: Vec<&str> = summary.lines().collect();
    assert!(
        lines[1].starts_with("config") && lines[2].starts_with("C_2"),
        "{summary}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("measured: scales")),
        "{summary}"
    );
    // Both held-out checks close it: the kernel's time model's, then the scaling model's.
    let [.., kernel_model, scaling_model] = lines.as_slice() else {
        panic!("{summary}")
    };
    assert!(kernel_model.starts_with("held-out: N on C_8"), "{summary}");
    assert!(
        scaling_model.starts_with("held-out (scaling model): N on C_8"),
        "{summary}"
    );
    assert!(scaling_model.contains("from C_2, C_4"), "{summary}");
}
