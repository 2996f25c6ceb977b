//! The SQLite store: every run is written as it completes, in its own transaction, so a study
//! killed at any point keeps every completed run and a rerun repeats none of them.

use crate::error::{Result, StudyError};
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// Schema version written into `meta`; bump on incompatible changes. Version 3 added the
/// runs' `status` (`ok` or `failed`) and `error`; a version 2 database is migrated on open.
const SCHEMA_VERSION: i64 = 3;
/// The version [`Store::open`] migrates from by adding the status columns.
const MIGRATABLE_VERSION: i64 = 2;
/// `runs.status` of a run that failed (non-zero exit, timeout, unreadable time, ...).
const FAILED: &str = "failed";
/// How long a writer waits for another process's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS studies (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    study TEXT NOT NULL,
    purpose TEXT NOT NULL,
    kernel TEXT NOT NULL,
    backend TEXT NOT NULL,
    platform TEXT NOT NULL,
    configuration TEXT NOT NULL,
    nodes INTEGER NOT NULL,
    marked_speed REAL NOT NULL,
    n INTEGER NOT NULL,
    repetition INTEGER NOT NULL,
    time_s REAL NOT NULL,
    work REAL NOT NULL,
    speed_efficiency REAL NOT NULL,
    verified INTEGER NOT NULL,
    host TEXT NOT NULL,
    version TEXT NOT NULL,
    recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    status TEXT NOT NULL DEFAULT 'ok',
    error TEXT,
    UNIQUE (study, purpose, configuration, n, repetition)
);
";

/// Version 2 to 3: the status columns, every existing run completed.
const MIGRATE_FROM_2: &str = "
ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT 'ok';
ALTER TABLE runs ADD COLUMN error TEXT;
UPDATE meta SET value = '3' WHERE key = 'schema_version';
";

/// One completed run, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Study name.
    pub study: String,
    /// Why the run was made: `sample` (a measurement the approaches share) or
    /// `verification` (a run with real compute whose result was checked).
    pub purpose: String,
    /// Kernel name.
    pub kernel: String,
    /// Backend name.
    pub backend: String,
    /// Platform name.
    pub platform: String,
    /// Configuration label (node set).
    pub configuration: String,
    /// Number of nodes.
    pub nodes: u32,
    /// Marked speed `C` of the configuration, flop/s.
    pub marked_speed: f64,
    /// Problem size.
    pub n: u64,
    /// Repetition index (0-based) at this size.
    pub repetition: u32,
    /// Execution time, seconds.
    pub time_s: f64,
    /// Work `W(N)`, flop.
    pub work: f64,
    /// Speed-efficiency `W / (T C)`.
    pub speed_efficiency: f64,
    /// Whether the result was checked against a reference (false for skeleton runs).
    pub verified: bool,
    /// Host that ran it.
    pub host: String,
    /// hetscale version that ran it.
    pub version: String,
}

/// Identifies a run for resuming.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunKey<'a> {
    /// Study name.
    pub study: &'a str,
    /// Purpose (`sample` or `verification`).
    pub purpose: &'a str,
    /// Configuration label.
    pub configuration: &'a str,
    /// Problem size.
    pub n: u64,
    /// Repetition index.
    pub repetition: u32,
}

/// A study database.
pub struct Store {
    conn: Connection,
    path: String,
}

impl Store {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let shown = path.display().to_string();
        let conn = Connection::open(path).map_err(|e| store_error(&shown, &e))?;
        Self::init(conn, shown)
    }

    /// A database that lives in memory (tests, dry runs).
    pub fn open_in_memory() -> Result<Self> {
        let conn = Connection::open_in_memory().map_err(|e| store_error(":memory:", &e))?;
        Self::init(conn, ":memory:".into())
    }

    fn init(conn: Connection, path: String) -> Result<Self> {
        let fail = |e: rusqlite::Error| store_error(&path, &e);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
        // WAL keeps completed transactions durable across a SIGKILL of the writer.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(fail)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(fail)?;
        conn.execute_batch(SCHEMA).map_err(fail)?;
        let store = Self { conn, path };
        store.check_schema_version()?;
        Ok(store)
    }

    fn check_schema_version(&self) -> Result<()> {
        let fail = |e: rusqlite::Error| store_error(&self.path, &e);
        let found: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(fail)?;
        match found {
            None => {
                self.conn
                    .execute(
                        "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
                        [SCHEMA_VERSION.to_string()],
                    )
                    .map_err(fail)?;
                Ok(())
            }
            Some(v) if v == SCHEMA_VERSION.to_string() => Ok(()),
            Some(v) if v == MIGRATABLE_VERSION.to_string() => {
                // One transaction: a failed migration leaves the version 2 database as it was.
                self.conn
                    .execute_batch(&format!("BEGIN IMMEDIATE; {MIGRATE_FROM_2} COMMIT;"))
                    .map_err(|e| {
                        let _ = self.conn.execute_batch("ROLLBACK");
                        fail(e)
                    })
            }
            Some(v) => Err(StudyError::Store {
                path: self.path.clone(),
                why: format!(
                    "schema version {v}, this hetscale writes {SCHEMA_VERSION}: use a new --db file"
                ),
            }),
        }
    }

    /// The database's path as given (`:memory:` for an in-memory store).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Registers study `name` with its canonical `spec` text, or checks that the study already
    /// stored under that name was run with the same spec: resuming a study whose spec changed
    /// would mix runs of two different studies.
    pub fn register_study(&self, name: &str, spec: &str) -> Result<()> {
        let fail = |e: rusqlite::Error| store_error(&self.path, &e);
        let found: Option<String> = self
            .conn
            .query_row("SELECT spec FROM studies WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .optional()
            .map_err(fail)?;
        match found {
            Some(stored) if stored == spec => Ok(()),
            Some(_) => Err(StudyError::Store {
                path: self.path.clone(),
                why: format!(
                    "holds a study \"{name}\" run with a different spec: give the study another name or use another --db"
                ),
            }),
            None => {
                self.conn
                    .execute(
                        "INSERT INTO studies (name, spec) VALUES (?1, ?2)",
                        [name, spec],
                    )
                    .map_err(fail)?;
                Ok(())
            }
        }
    }

    /// Names of the studies stored, in the order they were first run.
    pub fn studies(&self) -> Result<Vec<String>> {
        let fail = |e: rusqlite::Error| store_error(&self.path, &e);
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM studies ORDER BY rowid")
            .map_err(fail)?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(fail)?;
        rows.collect::<rusqlite::Result<Vec<String>>>()
            .map_err(fail)
    }

    /// The canonical spec text study `name` was registered with.
    pub fn study_spec(&self, name: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT spec FROM studies WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| store_error(&self.path, &e))
    }

    /// Writes `run` unless a run with the same key exists. Returns whether it was written.
    pub fn record(&self, run: &RunRecord) -> Result<bool> {
        let written = self
            .conn
            .execute(
                "INSERT OR IGNORE INTO runs (study, purpose, kernel, backend, platform, configuration, nodes, \
                 marked_speed, n, repetition, time_s, work, speed_efficiency, verified, host, version) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                params![
                    run.study,
                    run.purpose,
                    run.kernel,
                    run.backend,
                    run.platform,
                    run.configuration,
                    run.nodes,
                    run.marked_speed,
                    run.n as i64,
                    run.repetition,
                    run.time_s,
                    run.work,
                    run.speed_efficiency,
                    run.verified,
                    run.host,
                    run.version
                ],
            )
            .map_err(|e| store_error(&self.path, &e))?;
        Ok(written == 1)
    }

    /// Writes `run` as failed, with the one-line `error` (its `time_s` is the time until the
    /// failure, its `speed_efficiency` 0), unless a run with the same key exists. A failed run
    /// is never returned by [`Store::find`] or [`Store::runs`], so it never counts as a
    /// measurement; [`Store::failure`] and [`Store::failed_runs`] return it.
    pub fn record_failure(&self, run: &RunRecord, error: &str) -> Result<bool> {
        let written = self.record(run)?;
        if written {
            self.conn
                .execute(
                    &format!("UPDATE runs SET status = '{FAILED}', error = ?6, speed_efficiency = 0 {KEY_MATCH}"),
                    params![run.study, run.purpose, run.configuration, run.n as i64, run.repetition, error],
                )
                .map_err(|e| store_error(&self.path, &e))?;
        }
        Ok(written)
    }

    /// Why the run with this key failed, if it is stored as failed.
    pub fn failure(&self, key: RunKey<'_>) -> Result<Option<String>> {
        self.conn
            .query_row(
                &format!("SELECT error FROM runs {KEY_MATCH} AND status = '{FAILED}'"),
                params![
                    key.study,
                    key.purpose,
                    key.configuration,
                    key.n as i64,
                    key.repetition
                ],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()
            .map(|found| found.map(Option::unwrap_or_default))
            .map_err(|e| store_error(&self.path, &e))
    }

    /// Every failed run (of one study, if given) with its error, in insertion order.
    pub fn failed_runs(&self, study: Option<&str>) -> Result<Vec<(RunRecord, String)>> {
        let fail = |e: rusqlite::Error| store_error(&self.path, &e);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "{SELECT_ANY_RUN}, error FROM runs WHERE status = '{FAILED}' AND (?1 IS NULL OR study = ?1) ORDER BY id"
            ))
            .map_err(fail)?;
        let rows = stmt
            .query_map(params![study], |r| {
                Ok((
                    row_to_run(r)?,
                    r.get::<_, Option<String>>(16)?.unwrap_or_default(),
                ))
            })
            .map_err(fail)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(fail)
    }

    /// The completed run with this key, if any.
    pub fn find(&self, key: RunKey<'_>) -> Result<Option<RunRecord>> {
        self.conn
            .query_row(
                &format!("{SELECT_RUN} AND study = ?1 AND purpose = ?2 AND configuration = ?3 AND n = ?4 AND repetition = ?5"),
                params![key.study, key.purpose, key.configuration, key.n as i64, key.repetition],
                row_to_run,
            )
            .optional()
            .map_err(|e| store_error(&self.path, &e))
    }

    /// Every completed run (of one study, if given), in insertion order; failed runs are left
    /// out (see [`Store::failed_runs`]).
    pub fn runs(&self, study: Option<&str>) -> Result<Vec<RunRecord>> {
        let fail = |e: rusqlite::Error| store_error(&self.path, &e);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "{SELECT_RUN} AND (?1 IS NULL OR study = ?1) ORDER BY id"
            ))
            .map_err(fail)?;
        let rows = stmt.query_map(params![study], row_to_run).map_err(fail)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(fail)
    }
}

const SELECT_ANY_RUN: &str = "SELECT study, purpose, kernel, backend, platform, configuration, nodes, marked_speed, n, \
    repetition, time_s, work, speed_efficiency, verified, host, version";
/// Completed runs only; the query goes on with `AND ...`.
const SELECT_RUN: &str = "SELECT study, purpose, kernel, backend, platform, configuration, nodes, marked_speed, n, \
    repetition, time_s, work, speed_efficiency, verified, host, version FROM runs WHERE status = 'ok'";
/// The WHERE clause of one run by its key, parameters 1 to 5.
const KEY_MATCH: &str =
    "WHERE study = ?1 AND purpose = ?2 AND configuration = ?3 AND n = ?4 AND repetition = ?5";

fn row_to_run(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
    Ok(RunRecord {
        study: r.get(0)?,
        purpose: r.get(1)?,
        kernel: r.get(2)?,
        backend: r.get(3)?,
        platform: r.get(4)?,
        configuration: r.get(5)?,
        nodes: r.get(6)?,
        marked_speed: r.get(7)?,
        n: r.get::<_, i64>(8)? as u64,
        repetition: r.get(9)?,
        time_s: r.get(10)?,
        work: r.get(11)?,
        speed_efficiency: r.get(12)?,
        verified: r.get(13)?,
        host: r.get(14)?,
        version: r.get(15)?,
    })
}

/// One line that says what went wrong with the database and what to do.
fn store_error(path: &str, e: &rusqlite::Error) -> StudyError {
    use rusqlite::ErrorCode::{CannotOpen, DatabaseBusy, DatabaseLocked, NotADatabase, ReadOnly};
    let why = match e.sqlite_error_code() {
        Some(DatabaseBusy | DatabaseLocked) => {
            "is locked by another process (another study still running?): wait for it or use another --db".to_string()
        }
        Some(NotADatabase) => "is not a hetscale database (corrupt or another kind of file): use another --db path".to_string(),
        Some(CannotOpen) => "cannot be opened: check that its directory exists and is writable".to_string(),
        Some(ReadOnly) => "is read-only: use a writable --db path".to_string(),
        _ => e.to_string(),
    };
    StudyError::Store {
        path: path.to_string(),
        why,
    }
}

/// A sample record for tests of this crate.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::RunRecord;

    /// A run of `mm` on `C_2` at size `n`.
    pub(crate) fn sample(n: u64, repetition: u32) -> RunRecord {
        RunRecord {
            study: "s".into(),
            purpose: "sample".into(),
            kernel: "mm".into(),
            backend: "sim".into(),
            platform: "sunwulf".into(),
            configuration: "C_2".into(),
            nodes: 2,
            marked_speed: 57.33e6,
            n,
            repetition,
            time_s: 0.5,
            work: 2.0 * (n as f64).powi(3),
            speed_efficiency: 0.2,
            verified: true,
            host: "h".into(),
            version: "0.1.0".into(),
        }
    }
}

#[cfg(test)]
mod tests {
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
        store.register_study("s", "{a}").unwrap();
        store.register_study("s", "{a}").unwrap();
        let err = store.register_study("s", "{b}").unwrap_err().to_string();
        assert!(err.contains("different spec"), "{err}");
        store.register_study("t", "{b}").unwrap();
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
}
