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
    /// A command that reads a study database was given a path where there is none.
    #[error(
        "no study database at {path}: give the database a hetscale study wrote (its --db, or OUT/study.db)"
    )]
    NoDatabase {
        /// The path given.
        path: String,
    },
    /// Statistics were asked of samples that cannot give them.
    #[error("statistics: {0}")]
    Stats(String),
    /// A study spec is invalid.
    #[error("{source_name}{}: {message}", at_line(*line))]
    Spec {
        /// The spec file (or `default`).
        source_name: String,
        /// The TOML line, when known.
        line: Option<usize>,
        /// What is wrong and what to do.
        message: String,
    },
    /// A kernel refused its input or its run failed.
    #[error(transparent)]
    Kernel(#[from] hetscale_kernels::KernelError),
    /// The HBSP library refused the platform or node set.
    #[error(transparent)]
    Hbsp(#[from] hbsp::HbspError),
    /// A configuration of a study cannot be run as specified.
    #[error("configuration {configuration}: {message}")]
    Configuration {
        /// Its label.
        configuration: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// SIGINT, SIGTERM or SIGHUP asked the study to stop: the running program's process group
    /// was ended and the run it cut short not stored.
    #[error("interrupted: rerun to resume ({stored} runs stored)")]
    Interrupted {
        /// The completed runs the database holds, of every study in it.
        stored: usize,
    },
    /// A platform could not be calibrated on the runs given.
    #[error("calibrate: {0}")]
    Calibration(String),
    /// An experiment `hetscale reproduce` does not have, or cannot run as a study.
    #[error("reproduce: {0}")]
    Reproduce(String),
    /// Options given on the command line that cannot be used as given; the message names them
    /// and what to give instead.
    #[error("{0}")]
    Options(String),
    /// Writing an export failed.
    #[error("export: {0}")]
    Export(String),
    /// A command's options ask nothing it can answer, or ask it wrongly (they conflict, or a
    /// value is out of its range): what to give instead.
    #[error("{0}")]
    Question(String),
    /// The cache of this host's marked speed (see [`crate::speed::local_speed`]) cannot be used.
    #[error("{0}")]
    SpeedCache(String),
    /// A CSV of measured runs or of a paper's published values is invalid.
    #[error("{source_name}{}{}: {message}", at_line(*line), in_field(field.as_deref()))]
    Csv {
        /// The file (or the embedded data's name).
        source_name: String,
        /// The line of the offending row or header, when there is one.
        line: Option<usize>,
        /// The column of the offending value, when there is one.
        field: Option<String>,
        /// What is wrong and what to do.
        message: String,
    },
    /// No published data are embedded for this paper.
    #[error("no published data for paper \"{id}\": known papers are {}; give one of them", known.join(", "))]
    UnknownPaper {
        /// The paper id asked for.
        id: String,
        /// The ids with data.
        known: Vec<String>,
    },
}

/// A machine's error is the HBSP library's namesake: one variant, one message, whichever
/// crate read the platform.
impl From<hetscale_machine::MachineError> for StudyError {
    fn from(err: hetscale_machine::MachineError) -> Self {
        Self::Hbsp(err.into())
    }
}

/// Result alias for the study crate.
pub type Result<T> = std::result::Result<T, StudyError>;

impl StudyError {
    /// Whether this refuses a run too large for this machine (see [`hbsp::HbspError::is_refusal`]).
    pub fn is_refusal(&self) -> bool {
        match self {
            Self::Kernel(err) => err.is_refusal(),
            Self::Hbsp(err) => err.is_refusal(),
            _ => false,
        }
    }
}

fn at_line(line: Option<usize>) -> String {
    line.map(|l| format!(" line {l}")).unwrap_or_default()
}

fn in_field(field: Option<&str>) -> String {
    field.map(|f| format!(", field {f}")).unwrap_or_default()
}
