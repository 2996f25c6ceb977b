//! The SQLite store: every run is written as it completes, in its own transaction, so a study
//! killed at any point keeps every completed run and a rerun repeats none of them.
//!
//! Reading (`hetscale export`, `hetscale report`) never changes a database: it is opened read
//! only, an older schema is migrated in a copy in memory, and a file that is not a hetscale
//! database is refused before anything is written to it.

//!
//! This folder owns what a study leaves on disk: the store and its schema (here) and the
//! exports of a database (`hetscale export`, [`export`]).

pub mod export;
pub mod stored_spec;

use crate::error::{Result, StudyError};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// Schema version written into `meta`; bump on incompatible changes. Version 3 added the
/// runs' `status` (`ok` or `failed`) and `error`; version 4 the studies' resolved `platform`;
/// version 5 the `failure_history` of runs retried after they failed.
const SCHEMA_VERSION: i64 = 5;
/// How each older version becomes the next: `(version, statements)`; applied in order, so
/// any version listed here is migrated to [`SCHEMA_VERSION`].
const MIGRATIONS: [(i64, &str); 3] = [
    (2, MIGRATE_FROM_2),
    (3, MIGRATE_FROM_3),
    (4, MIGRATE_FROM_4),
];
/// `runs.status` of a run that failed (non-zero exit, timeout, unreadable time, ...).
const FAILED: &str = "failed";
/// `runs.status` of a completed run.
const OK: &str = "ok";
/// How long a writer waits for another process's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// What to do with a database hetscale cannot use.
const USE_ANOTHER: &str = "give the database a hetscale study wrote (its --db, or OUT/study.db)";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS studies (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    platform TEXT
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
CREATE TABLE IF NOT EXISTS failure_history (
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
    recorded_at TEXT,
    error TEXT
);
";

/// Version 2 to 3: the status columns, every existing run completed.
const MIGRATE_FROM_2: &str = "
ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT 'ok';
ALTER TABLE runs ADD COLUMN error TEXT;
UPDATE meta SET value = '3' WHERE key = 'schema_version';
";

/// Version 3 to 4: the platform each study resolved, unknown (NULL) for existing studies
/// until one is resumed.
const MIGRATE_FROM_3: &str = "
ALTER TABLE studies ADD COLUMN platform TEXT;
UPDATE meta SET value = '4' WHERE key = 'schema_version';
";

/// Version 4 to 5: the history of failed runs that were retried (none yet).
const MIGRATE_FROM_4: &str = "
CREATE TABLE IF NOT EXISTS failure_history (id INTEGER PRIMARY KEY, study TEXT NOT NULL, purpose TEXT NOT NULL,
    kernel TEXT NOT NULL, backend TEXT NOT NULL, platform TEXT NOT NULL,
    configuration TEXT NOT NULL, nodes INTEGER NOT NULL, marked_speed REAL NOT NULL,
    n INTEGER NOT NULL, repetition INTEGER NOT NULL, time_s REAL NOT NULL, work REAL NOT NULL,
    speed_efficiency REAL NOT NULL, verified INTEGER NOT NULL, host TEXT NOT NULL,
    version TEXT NOT NULL, recorded_at TEXT, error TEXT);
UPDATE meta SET value = '5' WHERE key = 'schema_version';
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
    /// Number of nodes (`p` in JSON, where `nodes` is a node set).
    #[serde(rename = "p", alias = "nodes")]
    pub nodes: u32,
    /// Marked speed `C` of the configuration, flop/s.
    #[serde(rename = "marked_speed_flops", alias = "marked_speed")]
    pub marked_speed: f64,
    /// Problem size.
    pub n: u64,
    /// Repetition index (0-based) at this size.
    pub repetition: u32,
    /// Execution time, seconds.
    pub time_s: f64,
    /// Work `W(N)`, flop.
    #[serde(rename = "work_flop", alias = "work")]
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
    /// Opens (creating if needed) the database at `path` for a study to write; an older
    /// schema is migrated, another application's database refused.
    pub fn open(path: &Path) -> Result<Self> {
        let shown = path.display().to_string();
        let conn = Connection::open(path).map_err(|e| open_error(path, &e))?;
        Self::init(conn, shown)
    }

    /// A database that lives in memory (tests, dry runs).
    pub fn open_in_memory() -> Result<Self> {
        let conn = Connection::open_in_memory().map_err(|e| store_error(":memory:", &e))?;
        Self::init(conn, ":memory:".into())
    }

    /// Opens the database at `path` to read it, changing nothing: no table, journal or file
    /// is created, so it works on a read-only filesystem. A missing, empty or foreign file
    /// is a one-line error; an older schema is migrated in a copy in memory.
    pub fn open_read_only(path: &Path) -> Result<Self> {
        let shown = path.display().to_string();
        let fail = |why: String| StudyError::Store {
            path: shown.clone(),
            why,
        };
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StudyError::NoDatabase { path: shown });
            }
            Err(e) => return Err(fail(format!("cannot be read: {e}"))),
            Ok(m) if m.is_dir() => return Err(fail(format!("is a directory: {USE_ANOTHER}"))),
            Ok(m) if m.len() == 0 => {
                return Err(fail(format!(
                    "is an empty file, not a hetscale database: {USE_ANOTHER}"
                )));
            }
            Ok(_) => {}
        }
        let conn = open_reader(path).map_err(|e| open_error(path, &e))?;
        let store = Self { conn, path: shown };
        match store.schema_version()? {
            Some(SCHEMA_VERSION) => Ok(store),
            Some(v) if migratable(v) => store.migrated_in_memory(v),
            Some(v) => Err(store.unknown_version(v)),
            None => Err(store.foreign()),
        }
    }

    fn init(conn: Connection, path: String) -> Result<Self> {
        let fail = |e: rusqlite::Error| store_error(&path, &e);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
        let store = Self { conn, path };
        // Checked before anything is written: another application's file, or a hetscale
        // database this version cannot migrate, stays as it was.
        let version = store.schema_version()?;
        if let Some(v) = version.filter(|v| *v != SCHEMA_VERSION && !migratable(*v)) {
            return Err(store.unknown_version(v));
        }
        let fail = |e: rusqlite::Error| store_error(&store.path, &e);
        // WAL keeps completed transactions durable across a SIGKILL of the writer.
        store
            .conn
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(fail)?;
        store
            .conn
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(fail)?;
        match version {
            None => store.create()?,
            Some(SCHEMA_VERSION) => {}
            Some(v) => store.migrate(v)?,
        }
        Ok(store)
    }

    /// The schema version in `meta`; none for a database without tables (a new one). Tables
    /// without hetscale's `meta` make another application's database.
    fn schema_version(&self) -> Result<Option<i64>> {
        let fail = |e: rusqlite::Error| store_error(&self.path, &e);
        let tables: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |r| r.get(0),
            )
            .map_err(fail)?;
        if tables == 0 {
            return Ok(None);
        }
        let has_meta: bool = self
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
                [],
                |r| r.get(0),
            )
            .map_err(fail)?;
        if !has_meta {
            return Err(self.foreign());
        }
        let found: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(fail)?;
        match found.map(|v| v.parse::<i64>()) {
            Some(Ok(v)) => Ok(Some(v)),
            _ => Err(self.foreign()),
        }
    }

    /// Creates the tables of a new database, in one transaction (a second study creating the
    /// same file at the same time finds them made).
    fn create(&self) -> Result<()> {
        self.in_transaction(&format!(
            "{SCHEMA} INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}');"
        ))
    }

    /// Migrates from `version` to [`SCHEMA_VERSION`] in one transaction: a failed migration
    /// leaves the database as it was.
    fn migrate(&self, version: i64) -> Result<()> {
        let steps: String = MIGRATIONS
            .iter()
            .filter(|(from, _)| *from >= version)
            .map(|(_, sql)| *sql)
            .collect();
        self.in_transaction(&steps)
    }

    fn in_transaction(&self, statements: &str) -> Result<()> {
        self.conn
            .execute_batch(&format!("BEGIN IMMEDIATE; {statements} COMMIT;"))
            .map_err(|e| {
                let _ = self.conn.execute_batch("ROLLBACK");
                store_error(&self.path, &e)
            })
    }

    /// A copy of this (read-only) database in memory, migrated from `version`.
    fn migrated_in_memory(self, version: i64) -> Result<Self> {
        let fail = |e: rusqlite::Error| store_error(&self.path, &e);
        let mut memory = Connection::open_in_memory().map_err(fail)?;
        rusqlite::backup::Backup::new(&self.conn, &mut memory)
            .and_then(|b| b.run_to_completion(256, Duration::ZERO, None))
            .map_err(fail)?;
        let copy = Self {
            conn: memory,
            path: self.path,
        };
        copy.migrate(version)?;
        Ok(copy)
    }

    fn foreign(&self) -> StudyError {
        StudyError::Store {
            path: self.path.clone(),
            why: format!(
                "is not a hetscale database (an SQLite file without hetscale's tables): {USE_ANOTHER}"
            ),
        }
    }

    fn unknown_version(&self, version: i64) -> StudyError {
        StudyError::Store {
            path: self.path.clone(),
            why: format!(
                "schema version {version}, this hetscale writes {SCHEMA_VERSION}: use a new --db file"
            ),
        }
    }

    /// The database's path as given (`:memory:` for an in-memory store).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Registers study `name` with its canonical `spec` text and the `platform` (TOML) it
    /// resolved, or checks that the study already stored under that name was run with the
    /// same spec on the same platform: resuming a study whose spec or platform changed would
    /// mix runs of two different studies. A study stored before platforms were (schema 3)
    /// gets this one.
    pub fn register_study(&self, name: &str, spec: &str, platform: &str) -> Result<()> {
        let fail = |e: rusqlite::Error| store_error(&self.path, &e);
        let refuse = |what: &str| StudyError::Store {
            path: self.path.clone(),
            why: format!(
                "holds a study \"{name}\" run with a different {what}: rerun with --replace to drop its runs and run it anew, or keep both: give the study another name (--name with --command, `name` in a spec) or use another --db"
            ),
        };
        let found: Option<(String, Option<String>)> = self
            .conn
            .query_row(
                "SELECT spec, platform FROM studies WHERE name = ?1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(fail)?;
        match found {
            Some((stored, _)) if stored != spec => Err(refuse("spec")),
            Some((_, Some(stored))) if stored != platform => Err(refuse("platform")),
            Some((_, Some(_))) => Ok(()),
            Some((_, None)) => self
                .conn
                .execute(
                    "UPDATE studies SET platform = ?2 WHERE name = ?1",
                    [name, platform],
                )
                .map(|_| ())
                .map_err(fail),
            None => self
                .conn
                .execute(
                    "INSERT INTO studies (name, spec, platform) VALUES (?1, ?2, ?3)",
                    [name, spec, platform],
                )
                .map(|_| ())
                .map_err(fail),
        }
    }

    /// The platform (TOML) study `name` resolved when it ran; none for a study stored before
    /// platforms were.
    pub fn study_platform(&self, name: &str) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT platform FROM studies WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()
            .map(Option::flatten)
            .map_err(|e| store_error(&self.path, &e))
    }

    /// Deletes study `name` and its runs if it is stored with another spec or platform than
    /// these; returns whether it did. For studies whose runs are derived and cheap to redo
    /// (a reproduction on its calibrated simulator): resuming them would be refused.
    pub fn replace_if_changed(&self, name: &str, spec: &str, platform: &str) -> Result<bool> {
        let stale = match (self.study_spec(name)?, self.study_platform(name)?) {
            (Some(stored_spec), stored_platform) => {
                stored_spec != spec || stored_platform.is_some_and(|p| p != platform)
            }
            (None, _) => false,
        };
        if stale {
            self.conn
                .execute_batch("BEGIN")
                .and_then(|()| {
                    self.conn
                        .execute("DELETE FROM runs WHERE study = ?1", [name])
                })
                .and_then(|_| {
                    self.conn
                        .execute("DELETE FROM failure_history WHERE study = ?1", [name])
                })
                .and_then(|_| {
                    self.conn
                        .execute("DELETE FROM studies WHERE name = ?1", [name])
                })
                .and_then(|_| self.conn.execute_batch("COMMIT"))
                .map_err(|e| {
                    let _ = self.conn.execute_batch("ROLLBACK");
                    store_error(&self.path, &e)
                })?;
        }
        Ok(stale)
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

    /// Writes `run` as completed unless a completed run with the same key exists; a failure
    /// stored under its key (the run was retried) moves to the failure history in the same
    /// transaction. Returns whether it was written.
    pub fn record(&self, run: &RunRecord) -> Result<bool> {
        self.write_run(run, None)
    }

    /// Writes `run` as failed, with the one-line `error` (its `time_s` is the time until the
    /// failure, its `speed_efficiency` 0), unless a completed run with the same key exists; an
    /// earlier failure under its key moves to the failure history. A failed run is never
    /// returned by [`Store::find`] or [`Store::runs`], so it never counts as a measurement;
    /// [`Store::failure`] and [`Store::failed_runs`] return it.
    pub fn record_failure(&self, run: &RunRecord, error: &str) -> Result<bool> {
        self.write_run(run, Some(error))
    }

    /// Writes `run`, completed or failed with `error`, in one transaction with the move of the
    /// failure it retries: whenever the writer is killed, the database holds either the old
    /// failure or the new row, and never a failure that reads as completed.
    fn write_run(&self, run: &RunRecord, error: Option<&str>) -> Result<bool> {
        let fail = |e: rusqlite::Error| store_error(&self.path, &e);
        let key = params![
            run.study,
            run.purpose,
            run.configuration,
            run.n as i64,
            run.repetition
        ];
        let (status, efficiency) = match error {
            Some(_) => (FAILED, 0.0),
            None => (OK, run.speed_efficiency),
        };
        let transaction = self.conn.unchecked_transaction().map_err(fail)?;
        transaction
            .execute(
                &format!(
                    "INSERT INTO failure_history ({RUN_COLUMNS}, recorded_at, error) \
                     SELECT {RUN_COLUMNS}, recorded_at, error FROM runs {KEY_MATCH} AND status = '{FAILED}'"
                ),
                key,
            )
            .map_err(fail)?;
        transaction
            .execute(
                &format!("DELETE FROM runs {KEY_MATCH} AND status = '{FAILED}'"),
                key,
            )
            .map_err(fail)?;
        let written = transaction
            .execute(
                &format!(
                    "INSERT OR IGNORE INTO runs ({RUN_COLUMNS}, status, error) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)"
                ),
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
                    efficiency,
                    run.verified,
                    run.host,
                    run.version,
                    status,
                    error
                ],
            )
            .map_err(fail)?;
        transaction.commit().map_err(fail)?;
        Ok(written == 1)
    }

    /// The failures of runs that were retried afterwards (of one study, if given), each with
    /// its error, oldest first: a resumed study retries a failed run, and this keeps why it
    /// failed before.
    pub fn failure_history(&self, study: Option<&str>) -> Result<Vec<(RunRecord, String)>> {
        self.failures_in("failure_history WHERE TRUE", study)
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

    /// Every failed run (of one study, if given) with its error, in insertion order; the
    /// failures retried since are in [`Store::failure_history`].
    pub fn failed_runs(&self, study: Option<&str>) -> Result<Vec<(RunRecord, String)>> {
        self.failures_in(&format!("runs WHERE status = '{FAILED}'"), study)
    }

    /// The failed runs `rows` selects (`TABLE WHERE CONDITION`), with their errors.
    fn failures_in(&self, rows: &str, study: Option<&str>) -> Result<Vec<(RunRecord, String)>> {
        let fail = |e: rusqlite::Error| store_error(&self.path, &e);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {RUN_COLUMNS}, error FROM {rows} AND (?1 IS NULL OR study = ?1) ORDER BY id"
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

    /// How many completed runs the database holds, of every study.
    pub fn completed_runs(&self) -> Result<usize> {
        self.conn
            .query_row(
                &format!("SELECT count(*) FROM runs WHERE status = '{OK}'"),
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|count| usize::try_from(count).unwrap_or_default())
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

/// The columns of a [`RunRecord`], in the order [`row_to_run`] reads them.
const RUN_COLUMNS: &str = "study, purpose, kernel, backend, platform, configuration, nodes, marked_speed, n, \
    repetition, time_s, work, speed_efficiency, verified, host, version";
/// Completed runs only; the query goes on with `AND ...`.
const SELECT_RUN: &str = "SELECT study, purpose, kernel, backend, platform, configuration, nodes, marked_speed, n, \
    repetition, time_s, work, speed_efficiency, verified, host, version FROM runs WHERE status = 'ok'";
/// The WHERE clause of one run by its key, parameters 1 to 5.
const KEY_MATCH: &str =
    "WHERE study = ?1 AND purpose = ?2 AND configuration = ?3 AND n = ?4 AND repetition = ?5";

fn row_to_run(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
    let run = RunRecord {
        study: r.get(0)?,
        purpose: r.get(1)?,
        kernel: r.get(2)?,
        backend: r.get(3)?,
        platform: r.get(4)?,
        configuration: r.get(5)?,
        nodes: stored_integer(r, 6, "nodes")?,
        marked_speed: r.get(7)?,
        n: stored_integer(r, 8, "n")?,
        repetition: stored_integer(r, 9, "repetition")?,
        time_s: r.get(10)?,
        work: r.get(11)?,
        speed_efficiency: r.get(12)?,
        verified: r.get(13)?,
        host: r.get(14)?,
        version: r.get(15)?,
    };
    check_stored(&run)?;
    Ok(run)
}

/// Integer column `index` as `T`, refusing what hetscale never writes (a negative size, a
/// count beyond `T`, 0 nodes) instead of wrapping it.
fn stored_integer<T: TryFrom<i64>>(
    r: &rusqlite::Row<'_>,
    index: usize,
    name: &str,
) -> rusqlite::Result<T> {
    let value: i64 = r.get(index)?;
    T::try_from(value).map_err(|_| tampered(format!("a run with {name} = {value}")))
}

/// Refuses stored quantities no run can have; they would turn into wrong results, not errors.
fn check_stored(run: &RunRecord) -> rusqlite::Result<()> {
    if run.nodes == 0 {
        return Err(tampered("a run with nodes = 0".into()));
    }
    let bad = [
        ("time_s", run.time_s, run.time_s >= 0.0),
        ("marked_speed", run.marked_speed, run.marked_speed > 0.0),
        ("work", run.work, run.work >= 0.0),
    ]
    .into_iter()
    .find(|(_, value, ok)| !(*ok && value.is_finite()));
    match bad {
        Some((name, value, _)) => Err(tampered(format!("a run with {name} = {value}"))),
        None => Ok(()),
    }
}

/// What a database holds that hetscale never writes.
#[derive(Debug)]
struct Tampered(String);

impl std::fmt::Display for Tampered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Tampered {}

fn tampered(what: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        0,
        rusqlite::types::Type::Null,
        Box::new(Tampered(what)),
    )
}

/// Whether [`MIGRATIONS`] migrate `version`.
fn migratable(version: i64) -> bool {
    MIGRATIONS.iter().any(|(from, _)| *from == version)
}

/// A read-only connection that writes nothing beside the database either. A database
/// nobody has open has no `-wal` file: it is read as immutable, which creates no `-wal` or
/// `-shm` (so a read-only filesystem works too). One with a `-wal` (or a rollback journal)
/// is being written or was not closed: it is read through SQLite's locks and journal, or,
/// where SQLite cannot create the `-shm` it needs for that (a read-only directory), from a
/// copy in memory.
fn open_reader(path: &Path) -> rusqlite::Result<Connection> {
    let wal = beside(path, "-wal");
    let mode = if wal.exists() || beside(path, "-journal").exists() {
        "mode=ro"
    } else {
        "immutable=1"
    };
    let uri = format!("{}?{mode}", file_uri(path));
    let conn = Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    // SQLite opens lazily: the first read is where a missing `-shm` shows.
    match conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())) {
        Err(e)
            if wal.exists() && e.sqlite_error_code() == Some(rusqlite::ErrorCode::CannotOpen) =>
        {
            read_with_wal_in_memory(path, &wal)
        }
        _ => Ok(conn),
    }
}

/// The file beside database `path` with `suffix` (`-wal`, `-shm`, `-journal`) added.
fn beside(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// Database `path` with the completed transactions of its `wal` applied, in memory: both are
/// copied into a private temporary directory, where SQLite may write the `-shm` the WAL needs
/// (read as immutable, the runs only in the WAL would be missing), then into memory; the
/// directory is removed.
fn read_with_wal_in_memory(path: &Path, wal: &Path) -> rusqlite::Result<Connection> {
    let unreadable = |e: std::io::Error| {
        rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
            Some(e.to_string()),
        )
    };
    let dir = tempfile::tempdir().map_err(unreadable)?;
    let copy = dir.path().join("study.db");
    std::fs::copy(path, &copy).map_err(unreadable)?;
    std::fs::copy(wal, beside(&copy, "-wal")).map_err(unreadable)?;
    let on_disk = Connection::open(&copy)?;
    let mut memory = Connection::open_in_memory()?;
    rusqlite::backup::Backup::new(&on_disk, &mut memory)?.run_to_completion(
        256,
        Duration::ZERO,
        None,
    )?;
    Ok(memory)
}

/// `path` as an SQLite `file:` URI with an empty authority, every byte outside the
/// unreserved set percent-encoded (so `?`, `#` and `%` in names stay part of the path).
fn file_uri(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file://");
    for &byte in absolute.as_os_str().as_encoded_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The error of a database SQLite could not open, with the operating system's reason
/// (a missing directory, a name too long, no permission) where it has one.
fn open_error(path: &Path, e: &rusqlite::Error) -> StudyError {
    let shown = path.display().to_string();
    if e.sqlite_error_code() != Some(rusqlite::ErrorCode::CannotOpen) {
        return store_error(&shown, e);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let why = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => format!("is a directory: {USE_ANOTHER}"),
        Ok(_) => match std::fs::OpenOptions::new().read(true).open(path) {
            Err(io) => format!("cannot be opened: {io}"),
            Ok(_) => "cannot be opened: check that it and its directory are writable".into(),
        },
        Err(io) if io.kind() == std::io::ErrorKind::NotFound => match std::fs::metadata(dir) {
            Err(io) if io.kind() == std::io::ErrorKind::NotFound => format!(
                "cannot be opened: directory {} does not exist; create it or use another --db",
                dir.display()
            ),
            Err(io) => format!("cannot be opened: {}: {io}", dir.display()),
            Ok(_) => format!(
                "cannot be opened: check that directory {} is writable",
                dir.display()
            ),
        },
        Err(io) => format!("cannot be opened: {io}"),
    };
    StudyError::Store { path: shown, why }
}

/// One line that says what went wrong with the database and what to do.
fn store_error(path: &str, e: &rusqlite::Error) -> StudyError {
    use rusqlite::ErrorCode::{CannotOpen, DatabaseBusy, DatabaseLocked, NotADatabase, ReadOnly};
    let altered = "which hetscale never writes: the database was altered or damaged; rerun the study with a new --db";
    let why = match e {
        rusqlite::Error::FromSqlConversionFailure(_, _, what) => format!("holds {what}, {altered}"),
        rusqlite::Error::InvalidColumnType(_, name, kind) => {
            format!("holds a run whose {name} is {kind}, {altered}")
        }
        rusqlite::Error::IntegralValueOutOfRange(_, value) => {
            format!("holds the out-of-range value {value}, {altered}")
        }
        _ => match e.sqlite_error_code() {
            Some(DatabaseBusy | DatabaseLocked) => {
                "is locked by another process (another study still running?): wait for it or use another --db".to_string()
            }
            Some(NotADatabase) => "is not a hetscale database (corrupt or another kind of file): use another --db path".to_string(),
            Some(CannotOpen) => "cannot be opened: check that its directory exists and is writable".to_string(),
            Some(ReadOnly) => "is read-only: use a writable --db path".to_string(),
            _ => e.to_string(),
        },
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
        let Some(_read_only) = Immutable::make(dir.path()) else {
            eprintln!("skipped: chattr +i cannot make a read-only directory here");
            return;
        };
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
            assert!(
                err.contains(expected) && err.contains("altered"),
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
}
