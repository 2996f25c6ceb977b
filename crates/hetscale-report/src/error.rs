//! What can go wrong while building or writing a report.

use std::path::PathBuf;

/// Result of this crate's functions.
pub type Result<T, E = ReportError> = std::result::Result<T, E>;

/// An error, phrased as what is wrong and what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// A chart, table or report was given nothing to show.
    #[error("{what} has no data: {hint}")]
    NoData {
        /// What was empty.
        what: String,
        /// What to do.
        hint: &'static str,
    },
    /// A value cannot be drawn as given (not finite, or not positive on a log axis).
    #[error("{0}")]
    BadValue(String),
    /// An id or table name that cannot be an HTML id or a file name.
    #[error(
        "{what} \"{name}\" is not a valid name: use lower-case letters, digits, '-' and '_', starting with a letter (e.g. \"psi-matrix\")"
    )]
    BadName {
        /// Which kind of name.
        what: &'static str,
        /// The name given.
        name: String,
    },
    /// Two sections, figures or tables share a name.
    #[error("the report has two {what}s named \"{name}\": give each a unique name")]
    Duplicate {
        /// Which kind of name.
        what: &'static str,
        /// The name used twice.
        name: String,
    },
    /// A table row with the wrong number of cells.
    #[error(
        "row {row} of table \"{table}\" has {got} cells, but the table has {expected} columns: give one cell per column"
    )]
    RowWidth {
        /// The table.
        table: String,
        /// Row number, from 0.
        row: usize,
        /// Cells given.
        got: usize,
        /// Columns of the table.
        expected: usize,
    },
    /// Writing a file failed.
    #[error("cannot write {}: {error}; check that its directory exists and is writable", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why (part of the message, not a separate source, so it is printed once).
        error: std::io::Error,
    },
    /// A file or directory `hetscale_out` refuses to write (a symbolic link where a directory
    /// of the report goes, an input of the command); the error says why and what to do.
    #[error("cannot write {}: {error}", path.display())]
    Refused {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The plotting library failed (a bug in a chart function, not in the data).
    #[error("drawing {chart} failed: {reason}")]
    Plot {
        /// The chart's title.
        chart: String,
        /// plotters' message.
        reason: String,
    },
}

impl ReportError {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        let path = path.into();
        if hetscale_out::is_refusal(&error) {
            return Self::Refused { path, error };
        }
        Self::Io { path, error }
    }
}

/// Checks that `name` can serve as an HTML id and a file name.
pub(crate) fn check_name(what: &'static str, name: &str) -> Result<()> {
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok =
        chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if starts_well && rest_ok {
        Ok(())
    } else {
        Err(ReportError::BadName {
            what,
            name: name.to_owned(),
        })
    }
}
