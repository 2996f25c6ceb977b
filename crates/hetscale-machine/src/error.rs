//! The one error type of the crate.

/// What can be wrong with a machine: a platform file or preset, a node-set, a file, or a run
/// that would not fit this host. Every message is one line that says what is wrong and, where
/// it helps, what to do instead. `hbsp::MachineError` takes each variant as its namesake.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MachineError {
    /// A platform file or preset is invalid.
    #[error("{0}")]
    InvalidPlatform(String),
    /// A node-set specification is invalid for the platform.
    #[error("{0}")]
    InvalidNodeSet(String),
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The cost model rejected its inputs.
    #[error("cost model: {0}")]
    Model(String),
    /// The run would not fit this machine (its memory); refused before it starts. The message
    /// gives the estimate, the limit and what to change.
    #[error("{0}")]
    DoesNotFit(String),
}

impl MachineError {
    /// Whether this is a refusal of a run too large for this machine ([`MachineError::DoesNotFit`]).
    pub fn is_refusal(&self) -> bool {
        matches!(self, Self::DoesNotFit(_))
    }
}

impl From<hetscale_model::ModelError> for MachineError {
    fn from(err: hetscale_model::ModelError) -> Self {
        Self::Model(err.to_string())
    }
}

/// `Result` with [`MachineError`].
pub type Result<T, E = MachineError> = std::result::Result<T, E>;
