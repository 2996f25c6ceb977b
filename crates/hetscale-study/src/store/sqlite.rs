//! Opening a database file: read-only connections that write nothing beside it, WAL files
//! read in memory, and one-line errors with the operating system's reason.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::error::StudyError;

/// How long a writer waits for another process's lock before giving up.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How a command uses a database, which decides what its errors tell the user to do: a
/// study writes the one its `--db` names (another path is the way out); `predict --from`,
/// `export`, `report` and `calibrate --db` read one a study wrote, and have no `--db` to
/// change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// Opened to read, changing nothing.
    Read,
    /// Opened (or created) for a study to write.
    Write,
}

impl Access {
    /// What to do with a database hetscale cannot use.
    pub(super) fn use_another(self) -> &'static str {
        match self {
            Self::Read => "give the database a hetscale study wrote (its --db, or OUT/study.db)",
            Self::Write => "use another --db path",
        }
    }

    /// What to do with a damaged database.
    fn restore(self) -> &'static str {
        match self {
            Self::Read => {
                "restore it from a copy, or rerun the study with a new --db and give that database"
            }
            Self::Write => "restore it from a copy, or use another --db path to run the study anew",
        }
    }
}

/// A read-only connection that writes nothing beside the database either. A database
/// nobody has open has no `-wal` file: it is read as immutable, which creates no `-wal` or
/// `-shm` (so a read-only filesystem works too). One with a `-wal` (or a rollback journal)
/// is being written or was not closed: it is read through SQLite's locks and journal, or,
/// where SQLite cannot create the `-shm` it needs for that (a read-only directory), from a
/// copy in memory.
pub(super) fn open_reader(path: &Path) -> rusqlite::Result<Connection> {
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
pub(super) fn beside(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// Database `path` with the completed transactions of its `wal` applied, in memory: both are
/// copied into a private temporary directory, where SQLite may write the `-shm` the WAL needs
/// (read as immutable, the runs only in the WAL would be missing), then into memory; the
/// directory is removed.
pub(super) fn read_with_wal_in_memory(path: &Path, wal: &Path) -> rusqlite::Result<Connection> {
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
pub(super) fn file_uri(path: &Path) -> String {
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
pub(super) fn open_error(path: &Path, access: Access, e: &rusqlite::Error) -> StudyError {
    let shown = path.display().to_string();
    if e.sqlite_error_code() != Some(rusqlite::ErrorCode::CannotOpen) {
        return store_error(&shown, access, e);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let why = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => format!("is a directory: {}", access.use_another()),
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

/// One line that says what went wrong with the database and what to do, in the terms of
/// the command that used it (`access`).
pub(super) fn store_error(path: &str, access: Access, e: &rusqlite::Error) -> StudyError {
    use rusqlite::ErrorCode::{
        CannotOpen, DatabaseBusy, DatabaseCorrupt, DatabaseLocked, NotADatabase, ReadOnly,
    };
    let altered = "which hetscale never writes: the database was altered or damaged; rerun the study with a new --db";
    let why = match e {
        rusqlite::Error::FromSqlConversionFailure(_, _, what) => format!("holds {what}, {altered}"),
        rusqlite::Error::InvalidColumnType(_, name, kind) => {
            format!("holds a run whose {name} is {kind}, {altered}")
        }
        rusqlite::Error::IntegralValueOutOfRange(_, value) => {
            format!("holds the out-of-range value {value}, {altered}")
        }
        _ => match (e.sqlite_error_code(), access) {
            (Some(DatabaseBusy | DatabaseLocked), Access::Write) => {
                "is locked by another process (another study still running?): wait for it or use another --db".to_string()
            }
            (Some(DatabaseBusy | DatabaseLocked), Access::Read) => {
                "is locked by another process (a study still running?): wait for it to finish".to_string()
            }
            (Some(NotADatabase), _) => format!(
                "is not a hetscale database (damaged, or another kind of file): {}",
                access.use_another()
            ),
            (Some(DatabaseCorrupt), _) => format!(
                "is damaged (SQLite: {}): {}",
                sqlite_reason(e),
                access.restore()
            ),
            (Some(CannotOpen), Access::Write) => {
                "cannot be opened: check that its directory exists and is writable".to_string()
            }
            (Some(CannotOpen), Access::Read) => {
                "cannot be opened: check that it is readable".to_string()
            }
            (Some(ReadOnly), _) => "is read-only: use a writable --db path".to_string(),
            _ => format!(
                "cannot be used (SQLite: {}): {}",
                sqlite_reason(e),
                access.use_another()
            ),
        },
    };
    StudyError::Store {
        path: path.to_string(),
        why,
    }
}

/// SQLite's own words for `e`, on one line.
fn sqlite_reason(e: &rusqlite::Error) -> String {
    e.to_string().replace(['\r', '\n'], " ")
}
