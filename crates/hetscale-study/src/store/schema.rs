//! The store's schema, its version and the migrations from older versions.

/// Schema version written into `meta`; bump on incompatible changes. Version 3 added the
/// runs' `status` (`ok` or `failed`) and `error`; version 4 the studies' resolved `platform`;
/// version 5 the `failure_history` of runs retried after they failed; version 6 the
/// `plan_steps` of studies that plan their own runs.
pub(super) const SCHEMA_VERSION: i64 = 6;
/// How each older version becomes the next: `(version, statements)`; applied in order, so
/// any version listed here is migrated to [`SCHEMA_VERSION`].
pub(super) const MIGRATIONS: [(i64, &str); 4] = [
    (2, MIGRATE_FROM_2),
    (3, MIGRATE_FROM_3),
    (4, MIGRATE_FROM_4),
    (5, MIGRATE_FROM_5),
];
/// `runs.status` of a run that failed (non-zero exit, timeout, unreadable time, ...).
pub(super) const FAILED: &str = "failed";
/// `runs.status` of a completed run.
pub(super) const OK: &str = "ok";

pub(super) const SCHEMA: &str = "
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
CREATE TABLE IF NOT EXISTS plan_steps (
    study TEXT NOT NULL,
    step INTEGER NOT NULL,
    configuration TEXT NOT NULL,
    n INTEGER NOT NULL,
    runs INTEGER NOT NULL,
    kind TEXT NOT NULL,
    expected_cost_s REAL NOT NULL,
    width_before REAL NOT NULL,
    width_expected REAL NOT NULL,
    cost_s REAL NOT NULL,
    spent_s REAL NOT NULL,
    reason TEXT NOT NULL,
    hi_over_lo TEXT NOT NULL DEFAULT '[]',
    recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (study, step)
);
";

/// Version 2 to 3: the status columns, every existing run completed.
pub(super) const MIGRATE_FROM_2: &str = "
ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT 'ok';
ALTER TABLE runs ADD COLUMN error TEXT;
UPDATE meta SET value = '3' WHERE key = 'schema_version';
";

/// Version 3 to 4: the platform each study resolved, unknown (NULL) for existing studies
/// until one is resumed.
pub(super) const MIGRATE_FROM_3: &str = "
ALTER TABLE studies ADD COLUMN platform TEXT;
UPDATE meta SET value = '4' WHERE key = 'schema_version';
";

/// Version 4 to 5: the history of failed runs that were retried (none yet).
pub(super) const MIGRATE_FROM_4: &str = "
CREATE TABLE IF NOT EXISTS failure_history (id INTEGER PRIMARY KEY, study TEXT NOT NULL, purpose TEXT NOT NULL,
    kernel TEXT NOT NULL, backend TEXT NOT NULL, platform TEXT NOT NULL,
    configuration TEXT NOT NULL, nodes INTEGER NOT NULL, marked_speed REAL NOT NULL,
    n INTEGER NOT NULL, repetition INTEGER NOT NULL, time_s REAL NOT NULL, work REAL NOT NULL,
    speed_efficiency REAL NOT NULL, verified INTEGER NOT NULL, host TEXT NOT NULL,
    version TEXT NOT NULL, recorded_at TEXT, error TEXT);
UPDATE meta SET value = '5' WHERE key = 'schema_version';
";

/// Version 5 to 6: the steps of studies that plan their own runs (none yet).
pub(super) const MIGRATE_FROM_5: &str = "
CREATE TABLE IF NOT EXISTS plan_steps (
    study TEXT NOT NULL,
    step INTEGER NOT NULL,
    configuration TEXT NOT NULL,
    n INTEGER NOT NULL,
    runs INTEGER NOT NULL,
    kind TEXT NOT NULL,
    expected_cost_s REAL NOT NULL,
    width_before REAL NOT NULL,
    width_expected REAL NOT NULL,
    cost_s REAL NOT NULL,
    spent_s REAL NOT NULL,
    reason TEXT NOT NULL,
    hi_over_lo TEXT NOT NULL DEFAULT '[]',
    recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (study, step)
);
UPDATE meta SET value = '6' WHERE key = 'schema_version';
";

/// Whether [`MIGRATIONS`] migrate `version`.
pub(super) fn migratable(version: i64) -> bool {
    MIGRATIONS.iter().any(|(from, _)| *from == version)
}
