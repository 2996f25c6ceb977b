use super::sqlite::beside;
use super::tests_support::sample;
use super::*;

#[test]
fn records_once_and_finds_again() {
    let store = Store::open_in_memory().unwrap();
    assert!(store.record(&sample(100, 0)).unwrap());
    assert!(
        !store.record(&sample(100, 0)).unwrap(),
        "a completed run is never written twice"
    );
    assert!(store.record(&sample(100, 1)).unwrap());
    let key = RunKey {
        study: "s",
        purpose: "sample",
        configuration: "C_2",
        n: 100,
        repetition: 1,
    };
    assert_eq!(store.find(key).unwrap(), Some(sample(100, 1)));
    assert_eq!(store.runs(Some("s")).unwrap().len(), 2);
    assert!(store.runs(Some("other")).unwrap().is_empty());
}

#[test]
fn failed_runs_are_kept_apart_from_measurements() {
    let store = Store::open_in_memory().unwrap();
    store.record(&sample(100, 0)).unwrap();
    assert!(store.record_failure(&sample(200, 0), "timed out").unwrap());
    let key = RunKey {
        study: "s",
        purpose: "sample",
        configuration: "C_2",
        n: 200,
        repetition: 0,
    };
    assert_eq!(store.find(key).unwrap(), None);
    assert_eq!(store.failure(key).unwrap().as_deref(), Some("timed out"));
    assert_eq!(store.failure(RunKey { n: 100, ..key }).unwrap(), None);
    assert_eq!(store.runs(None).unwrap(), vec![sample(100, 0)]);
    let failed = store.failed_runs(Some("s")).unwrap();
    assert_eq!((failed[0].0.n, failed[0].1.as_str()), (200, "timed out"));
}

/// A writer killed between two statements of a failure once left it stored as a
/// completed run (D3). A trigger that refuses any run reaching the table as `ok` shows the
/// failure is never there as `ok`, not even between two statements.
#[test]
fn a_failure_never_reaches_the_table_as_completed() {
    let store = Store::open_in_memory().unwrap();
    store
        .conn
        .execute_batch(
            "CREATE TEMP TRIGGER no_ok_run BEFORE INSERT ON runs WHEN NEW.status = 'ok' \
             BEGIN SELECT RAISE(ABORT, 'a run written as ok'); END;",
        )
        .unwrap();
    assert!(store.record_failure(&sample(200, 0), "exit 1").unwrap());
    let key = RunKey {
        study: "s",
        purpose: "sample",
        configuration: "C_2",
        n: 200,
        repetition: 0,
    };
    assert_eq!(store.failure(key).unwrap().as_deref(), Some("exit 1"));
    assert!(store.runs(None).unwrap().is_empty());
}

#[test]
fn a_retried_failure_is_replaced_and_kept_in_the_history() {
    let store = Store::open_in_memory().unwrap();
    let key = RunKey {
        study: "s",
        purpose: "sample",
        configuration: "C_2",
        n: 100,
        repetition: 0,
    };
    assert!(store.record_failure(&sample(100, 0), "node died").unwrap());
    assert!(store.record_failure(&sample(100, 0), "timed out").unwrap());
    assert_eq!(store.failure(key).unwrap().as_deref(), Some("timed out"));
    assert!(store.record(&sample(100, 0)).unwrap());
    assert_eq!(store.find(key).unwrap(), Some(sample(100, 0)));
    assert_eq!(store.failure(key).unwrap(), None);
    assert!(store.failed_runs(None).unwrap().is_empty());
    let history: Vec<String> = store
        .failure_history(Some("s"))
        .unwrap()
        .into_iter()
        .map(|(run, error)| {
            assert_eq!((run.n, run.speed_efficiency), (100, 0.0));
            error
        })
        .collect();
    assert_eq!(history, ["node died", "timed out"]);
    assert!(
        !store.record_failure(&sample(100, 0), "late").unwrap(),
        "a completed run is never replaced"
    );
    assert_eq!(store.failure_history(None).unwrap().len(), 2);
}

/// The version 2 schema, as hetscale wrote it before runs had a status.
const SCHEMA_V2: &str = "
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO meta VALUES ('schema_version', '2');
    CREATE TABLE studies (name TEXT PRIMARY KEY, spec TEXT NOT NULL, created_at TEXT);
    CREATE TABLE runs (id INTEGER PRIMARY KEY, study TEXT NOT NULL, purpose TEXT NOT NULL,
        kernel TEXT NOT NULL, backend TEXT NOT NULL, platform TEXT NOT NULL,
        configuration TEXT NOT NULL, nodes INTEGER NOT NULL, marked_speed REAL NOT NULL,
        n INTEGER NOT NULL, repetition INTEGER NOT NULL, time_s REAL NOT NULL,
        work REAL NOT NULL, speed_efficiency REAL NOT NULL, verified INTEGER NOT NULL,
        host TEXT NOT NULL, version TEXT NOT NULL, recorded_at TEXT,
        UNIQUE (study, purpose, configuration, n, repetition));
    INSERT INTO runs (study, purpose, kernel, backend, platform, configuration, nodes,
        marked_speed, n, repetition, time_s, work, speed_efficiency, verified, host, version)
        VALUES ('s', 'sample', 'mm', 'sim', 'sunwulf', 'C_2', 2, 57330000.0, 7, 0, 0.5,
        686.0, 0.2, 1, 'h', '0.1.0');
";

#[test]
fn a_version_2_database_is_migrated_and_older_ones_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch(SCHEMA_V2)
        .unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.runs(None).unwrap(), vec![sample(7, 0)]);
    assert!(store.record_failure(&sample(8, 0), "boom").unwrap());
    drop(store);
    let reopened = Store::open(&path).unwrap();
    assert_eq!(reopened.failed_runs(None).unwrap().len(), 1);
    let old = dir.path().join("v1.db");
    Connection::open(&old)
        .unwrap()
        .execute_batch(&SCHEMA_V2.replace("'schema_version', '2'", "'schema_version', '1'"))
        .unwrap();
    let err = Store::open(&old).err().unwrap().to_string();
    assert!(
        err.contains("schema version 1") && err.contains("new --db"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn a_changed_spec_is_refused() {
    let store = Store::open_in_memory().unwrap();
    store.register_study("s", "{a}", "").unwrap();
    store.register_study("s", "{a}", "").unwrap();
    let err = store
        .register_study("s", "{b}", "")
        .unwrap_err()
        .to_string();
    assert!(err.contains("different spec"), "{err}");
    store.register_study("t", "{b}", "").unwrap();
    assert_eq!(store.studies().unwrap(), ["s", "t"]);
    assert_eq!(store.study_spec("t").unwrap().as_deref(), Some("{b}"));
}

#[test]
fn survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("study.db");
    Store::open(&path).unwrap().record(&sample(7, 0)).unwrap();
    assert_eq!(
        Store::open(&path).unwrap().runs(None).unwrap(),
        vec![sample(7, 0)]
    );
}

#[test]
fn corrupt_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junk.db");
    std::fs::write(&path, vec![0x42u8; 8192]).unwrap();
    let err = Store::open(&path)
        .err()
        .expect("junk is rejected")
        .to_string();
    assert!(err.contains("not a hetscale database"), "{err}");
    let err = Store::open(&dir.path().join("missing/dir/x.db"))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("cannot be opened"), "{err}");
}

#[test]
fn locked_database_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("locked.db");
    let store = Store::open(&path).unwrap();
    let holder = Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let mut other = Store::open_in_memory().unwrap();
    other.conn = Connection::open(&path).unwrap();
    other.conn.busy_timeout(Duration::from_millis(50)).unwrap();
    other.path = path.display().to_string();
    let err = other.record(&sample(1, 0)).unwrap_err().to_string();
    assert!(err.contains("locked"), "{err}");
    drop(store);
}

/// Another application's SQLite database.
fn foreign_database(path: &Path) {
    Connection::open(path)
        .unwrap()
        .execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);")
        .unwrap();
}

fn tables_of(path: &Path) -> Vec<String> {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn reading_refuses_foreign_and_empty_files_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("notes.db");
    foreign_database(&foreign);
    let before = std::fs::read(&foreign).unwrap();
    let err = Store::open_read_only(&foreign).err().unwrap().to_string();
    assert!(err.contains("not a hetscale database"), "{err}");
    assert_eq!(err.lines().count(), 1);
    assert_eq!(std::fs::read(&foreign).unwrap(), before);
    assert_eq!(tables_of(&foreign), ["notes"]);

    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let err = Store::open_read_only(&empty).err().unwrap().to_string();
    assert!(
        err.contains("empty file") && err.contains("not a hetscale database"),
        "{err}"
    );
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);

    let err = Store::open_read_only(&dir.path().join("none.db"))
        .err()
        .unwrap()
        .to_string();
    assert!(err.starts_with("no study database at "), "{err}");
    assert_eq!(files_in(dir.path()), ["empty.db", "notes.db"]);
}

#[test]
fn writing_refuses_another_applications_database() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("notes.db");
    foreign_database(&foreign);
    let err = Store::open(&foreign).err().unwrap().to_string();
    assert!(err.contains("not a hetscale database"), "{err}");
    assert_eq!(tables_of(&foreign), ["notes"], "no hetscale table added");
}

#[test]
fn reading_a_database_leaves_its_directory_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("study.db");
    let store = Store::open(&path).unwrap();
    store.register_study("s", "{a}", "name = \"p\"").unwrap();
    store.record(&sample(7, 0)).unwrap();
    drop(store);
    let files = files_in(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    let reader = Store::open_read_only(&path).unwrap();
    assert_eq!(reader.runs(None).unwrap(), vec![sample(7, 0)]);
    assert_eq!(reader.studies().unwrap(), ["s"]);
    drop(reader);
    assert_eq!(files_in(dir.path()), files, "no -wal or -shm left behind");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

/// Makes a directory immutable (even to root, which ignores its permissions) while it
/// lives; none if `chattr` cannot (not installed, or a filesystem without the attribute).
struct Immutable<'a>(&'a Path);

impl<'a> Immutable<'a> {
    fn make(dir: &'a Path) -> Option<Self> {
        let made = std::process::Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        made.then_some(Self(dir))
    }
}

impl Drop for Immutable<'_> {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(self.0)
            .status();
    }
}

#[test]
fn a_database_with_its_wal_on_a_read_only_directory_is_read_whole() {
    if !hetscale_testkit::require(hetscale_testkit::Need::ImmutableDirectory) {
        return;
    }
    let written = tempfile::tempdir().unwrap();
    let path = written.path().join("study.db");
    let store = Store::open(&path).unwrap();
    store.register_study("s", "{a}", "name = \"p\"").unwrap();
    store.record(&sample(7, 0)).unwrap();
    // The database and its WAL copied while the study ran (the last run only in the
    // WAL), without the -shm: what a killed study leaves on its way to read-only media.
    store
        .conn
        .pragma_update(None, "wal_autocheckpoint", 0)
        .unwrap();
    store.record(&sample(8, 0)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("study.db");
    std::fs::copy(&path, &copy).unwrap();
    std::fs::copy(beside(&path, "-wal"), beside(&copy, "-wal")).unwrap();
    drop(store);
    let _read_only = Immutable::make(dir.path()).expect("chattr +i, which worked on a probe");
    let reader = Store::open_read_only(&copy).unwrap();
    assert_eq!(reader.runs(None).unwrap(), vec![sample(7, 0), sample(8, 0)]);
    assert_eq!(reader.studies().unwrap(), ["s"]);
    drop(reader);
    assert_eq!(files_in(dir.path()), ["study.db", "study.db-wal"]);
}

#[test]
fn an_older_database_is_read_without_migrating_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch(SCHEMA_V2)
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let reader = Store::open_read_only(&path).unwrap();
    assert_eq!(reader.runs(None).unwrap(), vec![sample(7, 0)]);
    assert!(reader.failed_runs(None).unwrap().is_empty());
    drop(reader);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "still a version 2 file"
    );
}

#[test]
fn the_platform_is_stored_with_the_study_and_a_changed_one_refused() {
    let store = Store::open_in_memory().unwrap();
    store.register_study("s", "{a}", "name = \"p\"").unwrap();
    assert_eq!(
        store.study_platform("s").unwrap().as_deref(),
        Some("name = \"p\"")
    );
    store.register_study("s", "{a}", "name = \"p\"").unwrap();
    let err = store
        .register_study("s", "{a}", "name = \"q\"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("different platform"), "{err}");
}

#[test]
fn a_changed_study_is_replaced_on_request_and_an_unchanged_one_kept() {
    let store = Store::open_in_memory().unwrap();
    store.register_study("s", "{a}", "name = \"p\"").unwrap();
    assert!(store.record(&sample(100, 0)).unwrap());
    assert!(
        !store
            .replace_if_changed("s", "{a}", "name = \"p\"")
            .unwrap()
    );
    assert_eq!(store.runs(Some("s")).unwrap().len(), 1);
    assert!(
        store
            .replace_if_changed("s", "{a}", "name = \"q\"")
            .unwrap()
    );
    assert!(store.runs(Some("s")).unwrap().is_empty());
    store.register_study("s", "{a}", "name = \"q\"").unwrap();
    assert!(!store.replace_if_changed("absent", "{a}", "").unwrap());
}

#[test]
fn a_version_3_study_gets_its_platform_when_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.db");
    let store = Store::open(&path).unwrap();
    store.register_study("s", "{a}", "name = \"p\"").unwrap();
    // What version 3 wrote: studies without their platform.
    store
        .conn
        .execute_batch(
            "ALTER TABLE studies DROP COLUMN platform; DROP TABLE failure_history; \
             UPDATE meta SET value = '3' WHERE key = 'schema_version';",
        )
        .unwrap();
    drop(store);
    let reader = Store::open_read_only(&path).unwrap();
    assert_eq!(reader.study_platform("s").unwrap(), None);
    drop(reader);
    let store = Store::open(&path).unwrap();
    store.register_study("s", "{a}", "name = \"p\"").unwrap();
    assert_eq!(
        store.study_platform("s").unwrap().as_deref(),
        Some("name = \"p\"")
    );
}

#[test]
fn a_tampered_run_is_a_one_line_error() {
    for (column, value, expected) in [
        ("n", "-5", "n = -5"),
        ("repetition", "-1", "repetition = -1"),
        ("nodes", "0", "nodes = 0"),
        ("time_s", "-1.0", "time_s = -1"),
        // Beyond what a runs CSV takes as a measured time.
        ("time_s", "1e300", "time_s = 1e300"),
        ("time_s", "1e-12", "time_s = 1e-12"),
        ("speed_efficiency", "-0.5", "speed_efficiency = -0.5"),
        ("marked_speed", "0.0", "marked_speed = 0"),
        ("n", "'many'", "n is"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let store = Store::open(&path).unwrap();
        store.record(&sample(7, 0)).unwrap();
        store
            .conn
            .execute(&format!("UPDATE runs SET {column} = {value}"), [])
            .unwrap();
        drop(store);
        let err = Store::open_read_only(&path)
            .unwrap()
            .runs(None)
            .unwrap_err()
            .to_string();
        // The database, the run and the field.
        assert!(
            err.contains(expected)
                && err.contains("s.db")
                && err.contains("run of study \"s\" on \"C_2\"")
                && err.contains("altered"),
            "{column}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn a_name_too_long_for_the_filesystem_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{}.db", "x".repeat(300)));
    let err = Store::open(&path).err().unwrap().to_string();
    assert!(err.contains("File name too long"), "{err}");
    let err = Store::open_read_only(&path).err().unwrap().to_string();
    assert!(err.contains("File name too long"), "{err}");
}

#[test]
fn a_damaged_database_says_so_in_the_terms_of_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = Store::open(&path).unwrap();
    for n in 1..200 {
        store.record(&sample(n, 0)).unwrap();
    }
    drop(store);
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(8192).unwrap();
    drop(file);
    let read = Store::open_read_only(&path)
        .and_then(|s| s.runs(None))
        .unwrap_err()
        .to_string();
    assert!(
        read.starts_with(&format!(
            "study database {}: is damaged (SQLite: ",
            path.display()
        )) && read.contains("restore it from a copy")
            && !read.contains("another --db"),
        "{read}"
    );
    let written = Store::open(&path)
        .and_then(|s| s.runs(None))
        .unwrap_err()
        .to_string();
    assert!(
        written.contains("is damaged") && written.contains("another --db"),
        "{written}"
    );
}

#[test]
fn a_file_that_is_no_database_is_refused_in_the_terms_of_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    std::fs::write(&path, vec![b'x'; 5000]).unwrap();
    // predict --from, export, report and calibrate --db read a database: they have no --db.
    let read = Store::open_read_only(&path).err().unwrap().to_string();
    assert!(
        read.contains("is not a hetscale database") && !read.contains("--db path"),
        "{read}"
    );
    let written = Store::open(&path).err().unwrap().to_string();
    assert!(written.contains("use another --db path"), "{written}");
}

#[test]
fn a_database_of_more_runs_than_a_runs_file_holds_is_refused_before_they_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = Store::open(&path).unwrap();
    store.record(&sample(7, 0)).unwrap();
    // Copies of the run at repetitions 1 to MAX_RUNS: one more than the cap.
    store
        .conn
        .execute(
            &format!(
                "INSERT INTO runs ({RUN_COLUMNS}) \
                 WITH RECURSIVE k(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM k WHERE x < {}) \
                 SELECT study, purpose, kernel, backend, platform, configuration, nodes, \
                 marked_speed, n, x, time_s, work, speed_efficiency, verified, host, version \
                 FROM runs, k",
                crate::calibrate::runs::MAX_RUNS
            ),
            [],
        )
        .unwrap();
    drop(store);
    let err = Store::open_read_only(&path)
        .unwrap()
        .runs(None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("holds 1000001 completed runs, more than the 1000000"),
        "{err}"
    );
}

/// A planned study's step `step` on `configuration` at `n`.
fn plan_step(step: u32, configuration: &str, n: u64) -> PlanStepRecord {
    PlanStepRecord {
        study: "s".into(),
        step,
        configuration: configuration.into(),
        n,
        runs: 3,
        kind: "new size".into(),
        expected_cost_s: 1.5,
        width_before: 2.0,
        width_expected: 1.0,
        cost_s: 1.25,
        spent_s: 10.0,
        reason: "new size: N on 64 from ±80% to ±40%".into(),
        hi_over_lo: vec![4.0, 1.5],
    }
}

#[test]
fn a_plans_steps_are_stored_once_in_order_and_dropped_with_their_study() {
    let store = Store::open_in_memory().unwrap();
    store.register_study("s", "{a}", "name = \"p\"").unwrap();
    assert!(store.record_plan_step(&plan_step(2, "C_8", 800)).unwrap());
    assert!(store.record_plan_step(&plan_step(1, "C_4", 400)).unwrap());
    assert!(
        !store.record_plan_step(&plan_step(1, "C_16", 1600)).unwrap(),
        "a step's number is written once"
    );
    let steps = store.plan_steps("s").unwrap();
    assert_eq!(
        steps,
        vec![plan_step(1, "C_4", 400), plan_step(2, "C_8", 800)]
    );
    assert!(store.plan_steps("other").unwrap().is_empty());
    assert!(
        store
            .replace_if_changed("s", "{a}", "name = \"q\"")
            .unwrap()
    );
    assert!(store.plan_steps("s").unwrap().is_empty());
}

#[test]
fn an_older_database_gains_the_plan_steps_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch(SCHEMA_V2)
        .unwrap();
    // Migrated through every version to this one, the table a planned study writes is there.
    let store = Store::open(&path).unwrap();
    assert!(store.record_plan_step(&plan_step(1, "C_4", 400)).unwrap());
    assert_eq!(store.plan_steps("s").unwrap().len(), 1);
}
