//! The SQLite store: every run is written as it completes, in its own transaction, so a study
//! killed at any point keeps every completed run and a rerun repeats none of them.
//!
//! Reading (`hetscale export`, `hetscale report`) never changes a database: it is opened read
//! only, an older schema is migrated in a copy in memory, and a file that is not a hetscale
//! database is refused before anything is written to it.
//!
//! This folder owns what a study leaves on disk: the store (here), its schema and migrations
//! (`schema`), opening database files (`sqlite`), a run as stored (`record`), the spec a study
//! was stored with ([`stored_spec`]) and the
//! exports of a database (`hetscale export`, [`export`]).

pub mod export;
mod plan_steps;
mod record;
mod schema;
mod sqlite;
pub mod stored_spec;
#[cfg(test)]
mod tests;

pub use plan_steps::PlanStepRecord;
use plan_steps::{STEP_COLUMNS, row_to_step};
#[cfg(test)]
pub(crate) use record::tests_support;
use record::{KEY_MATCH, RUN_COLUMNS, SELECT_RUN, row_to_completed_run, row_to_run};
pub use record::{RunKey, RunRecord};
use schema::{FAILED, MIGRATIONS, OK, SCHEMA, SCHEMA_VERSION, migratable};
use sqlite::{Access, BUSY_TIMEOUT, open_error, open_reader, store_error};

use crate::calibrate::runs::MAX_RUNS;
use crate::error::{Result, StudyError};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::time::Duration;

/// A study database.
pub struct Store {
    conn: Connection,
    path: String,
    access: Access,
}

impl Store {
    /// Opens (creating if needed) the database at `path` for a study to write; an older
    /// schema is migrated, another application's database refused.
    pub fn open(path: &Path) -> Result<Self> {
        let shown = path.display().to_string();
        let conn = Connection::open(path).map_err(|e| open_error(path, Access::Write, &e))?;
        Self::init(conn, shown)
    }

    /// A database that lives in memory (tests, dry runs).
    pub fn open_in_memory() -> Result<Self> {
        let conn =
            Connection::open_in_memory().map_err(|e| store_error(":memory:", Access::Write, &e))?;
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
            Ok(m) if m.is_dir() => {
                return Err(fail(format!(
                    "is a directory: {}",
                    Access::Read.use_another()
                )));
            }
            Ok(m) if m.len() == 0 => {
                return Err(fail(format!(
                    "is an empty file, not a hetscale database: {}",
                    Access::Read.use_another()
                )));
            }
            Ok(_) => {}
        }
        let conn = open_reader(path).map_err(|e| open_error(path, Access::Read, &e))?;
        let store = Self {
            conn,
            path: shown,
            access: Access::Read,
        };
        match store.schema_version()? {
            Some(SCHEMA_VERSION) => Ok(store),
            Some(v) if migratable(v) => store.migrated_in_memory(v),
            Some(v) => Err(store.unknown_version(v)),
            None => Err(store.foreign()),
        }
    }

    fn init(conn: Connection, path: String) -> Result<Self> {
        let fail = |e: rusqlite::Error| store_error(&path, Access::Write, &e);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
        let store = Self {
            conn,
            path,
            access: Access::Write,
        };
        // Checked before anything is written: another application's file, or a hetscale
        // database this version cannot migrate, stays as it was.
        let version = store.schema_version()?;
        if let Some(v) = version.filter(|v| *v != SCHEMA_VERSION && !migratable(*v)) {
            return Err(store.unknown_version(v));
        }
        let fail = |e: rusqlite::Error| store_error(&store.path, store.access, &e);
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
        let fail = |e: rusqlite::Error| store_error(&self.path, self.access, &e);
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
                store_error(&self.path, self.access, &e)
            })
    }

    /// A copy of this (read-only) database in memory, migrated from `version`.
    fn migrated_in_memory(self, version: i64) -> Result<Self> {
        let fail = |e: rusqlite::Error| store_error(&self.path, self.access, &e);
        let mut memory = Connection::open_in_memory().map_err(fail)?;
        rusqlite::backup::Backup::new(&self.conn, &mut memory)
            .and_then(|b| b.run_to_completion(256, Duration::ZERO, None))
            .map_err(fail)?;
        let copy = Self {
            conn: memory,
            path: self.path,
            access: self.access,
        };
        copy.migrate(version)?;
        Ok(copy)
    }

    fn foreign(&self) -> StudyError {
        StudyError::Store {
            path: self.path.clone(),
            why: format!(
                "is not a hetscale database (an SQLite file without hetscale's tables): {}",
                self.access.use_another()
            ),
        }
    }

    fn unknown_version(&self, version: i64) -> StudyError {
        StudyError::Store {
            path: self.path.clone(),
            why: match self.access {
                Access::Write => format!(
                    "schema version {version}, this hetscale writes {SCHEMA_VERSION}: use a new --db file"
                ),
                Access::Read => format!(
                    "schema version {version}, this hetscale reads up to {SCHEMA_VERSION}: read it with the hetscale that wrote it"
                ),
            },
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
        let fail = |e: rusqlite::Error| store_error(&self.path, self.access, &e);
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
            .map_err(|e| store_error(&self.path, self.access, &e))
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
                        .execute("DELETE FROM plan_steps WHERE study = ?1", [name])
                })
                .and_then(|_| {
                    self.conn
                        .execute("DELETE FROM studies WHERE name = ?1", [name])
                })
                .and_then(|_| self.conn.execute_batch("COMMIT"))
                .map_err(|e| {
                    let _ = self.conn.execute_batch("ROLLBACK");
                    store_error(&self.path, self.access, &e)
                })?;
        }
        Ok(stale)
    }

    /// Names of the studies stored, in the order they were first run.
    pub fn studies(&self) -> Result<Vec<String>> {
        let fail = |e: rusqlite::Error| store_error(&self.path, self.access, &e);
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
            .map_err(|e| store_error(&self.path, self.access, &e))
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
        let fail = |e: rusqlite::Error| store_error(&self.path, self.access, &e);
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
            .map_err(|e| store_error(&self.path, self.access, &e))
    }

    /// Every failed run (of one study, if given) with its error, in insertion order; the
    /// failures retried since are in [`Store::failure_history`].
    pub fn failed_runs(&self, study: Option<&str>) -> Result<Vec<(RunRecord, String)>> {
        self.failures_in(&format!("runs WHERE status = '{FAILED}'"), study)
    }

    /// The failed runs `rows` selects (`TABLE WHERE CONDITION`), with their errors.
    fn failures_in(&self, rows: &str, study: Option<&str>) -> Result<Vec<(RunRecord, String)>> {
        let fail = |e: rusqlite::Error| store_error(&self.path, self.access, &e);
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
                row_to_completed_run,
            )
            .optional()
            .map_err(|e| store_error(&self.path, self.access, &e))
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
            .map_err(|e| store_error(&self.path, self.access, &e))
    }

    /// Every completed run (of one study, if given), in insertion order; failed runs are left
    /// out (see [`Store::failed_runs`]).
    pub fn runs(&self, study: Option<&str>) -> Result<Vec<RunRecord>> {
        let fail = |e: rusqlite::Error| store_error(&self.path, self.access, &e);
        // Counted before they are read: a database is a file a user gives, held to the cap
        // on the runs a runs file holds.
        let count: i64 = self
            .conn
            .query_row(
                &format!(
                    "SELECT count(*) FROM runs WHERE status = '{OK}' AND (?1 IS NULL OR study = ?1)"
                ),
                params![study],
                |r| r.get(0),
            )
            .map_err(fail)?;
        if usize::try_from(count).is_ok_and(|count| count > MAX_RUNS) {
            return Err(StudyError::Store {
                path: self.path.clone(),
                why: format!(
                    "holds {count} completed runs, more than the {MAX_RUNS} hetscale reads (the cap on a runs file): {}",
                    self.access.use_another()
                ),
            });
        }
        let mut stmt = self
            .conn
            .prepare(&format!(
                "{SELECT_RUN} AND (?1 IS NULL OR study = ?1) ORDER BY id"
            ))
            .map_err(fail)?;
        let rows = stmt
            .query_map(params![study], row_to_completed_run)
            .map_err(fail)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(fail)
    }
}

impl Store {
    /// Writes `step` unless a step of that number is stored for its study (a resumed study
    /// makes its steps again from its stored runs). Returns whether it was written.
    pub fn record_plan_step(&self, step: &PlanStepRecord) -> Result<bool> {
        self.conn
            .execute(
                &format!(
                    "INSERT OR IGNORE INTO plan_steps ({STEP_COLUMNS}) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
                ),
                params![
                    step.study,
                    step.step,
                    step.configuration,
                    i64::try_from(step.n).unwrap_or(i64::MAX),
                    step.runs,
                    step.kind,
                    step.expected_cost_s,
                    step.width_before,
                    step.width_expected,
                    step.cost_s,
                    step.spent_s,
                    step.reason,
                    serde_json::to_string(&step.hi_over_lo).unwrap_or_else(|_| "[]".into())
                ],
            )
            .map(|written| written == 1)
            .map_err(|e| store_error(&self.path, self.access, &e))
    }

    /// The stored steps of `study`, in order.
    pub fn plan_steps(&self, study: &str) -> Result<Vec<PlanStepRecord>> {
        let fail = |e: rusqlite::Error| store_error(&self.path, self.access, &e);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {STEP_COLUMNS} FROM plan_steps WHERE study = ?1 ORDER BY step"
            ))
            .map_err(fail)?;
        let rows = stmt.query_map([study], row_to_step).map_err(fail)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(fail)
    }
}
