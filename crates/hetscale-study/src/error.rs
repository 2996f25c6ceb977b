//! The study crate's error type.

use thiserror::Error;

/// Why a study, its store or its statistics failed.
#[derive(Debug, Error)]
pub enum StudyError {
    /// A model computation refused its input.
    #[error(transparent)]
    Model(#[from] hetscale_model::ModelError),
    /// The SQLite store could not be used.
    #[error("study database {path}: {why}")]
    Store {
        /// The database file.
        path: String,
        /// What went wrong and what to do.
        why: String,
    },
    /// Statistics were asked of samples that cannot give them.
    #[error("statistics: {0}")]
    Stats(String),
    /// Writing an export failed.
    #[error("export: {0}")]
    Export(String),
}

/// Result alias for the study crate.
pub type Result<T> = std::result::Result<T, StudyError>;
