//! The one error type of the crate.

/// Everything that can go wrong in `hbsp`: bad platform files and node-sets, misuse of the API
/// and the end of a run because a node aborted, panicked or failed.
///
/// Every message is one line that says what is wrong and, where it helps, what to do instead.
/// The type is `Clone` because the error that ends a run is handed to every node.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HbspError {
    /// A platform file or preset is invalid.
    #[error("{0}")]
    InvalidPlatform(String),
    /// A node-set specification is invalid for the platform.
    #[error("{0}")]
    InvalidNodeSet(String),
    /// A backend name or option is invalid.
    #[error("{0}")]
    InvalidBackend(String),
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// A node called `abort`.
    #[error("node {pid} ({name}) aborted the run: {reason}")]
    Aborted {
        /// The aborting node.
        pid: usize,
        /// Its name on the platform.
        name: String,
        /// The reason it gave.
        reason: String,
    },
    /// A node's program panicked.
    #[error("node {pid} ({name}) panicked: {message}")]
    Panicked {
        /// The panicking node.
        pid: usize,
        /// Its name on the platform.
        name: String,
        /// The panic message.
        message: String,
    },
    /// A node's program returned an error.
    #[error("node {pid} ({name}) failed: {reason}")]
    NodeFailed {
        /// The failing node.
        pid: usize,
        /// Its name on the platform.
        name: String,
        /// The error it returned.
        reason: String,
    },
    /// A node sent a message to a pid that does not exist.
    #[error("node {pid} sent a message to pid {to}, but the run has {p} nodes (pids 0..={max})", max = p - 1)]
    BadDestination {
        /// The sender.
        pid: usize,
        /// The requested destination.
        to: usize,
        /// Number of nodes.
        p: usize,
    },
    /// Nodes made different calls at the same superstep boundary.
    #[error(
        "superstep {superstep}: nodes disagree: {detail}; every node must make the same sync and collective calls in the same order"
    )]
    Mismatch {
        /// The superstep that was ending.
        superstep: u64,
        /// Who called what.
        detail: String,
    },
    /// A call had arguments that cannot work (wrong lengths, a payload of the wrong size).
    #[error("node {pid}: {message}")]
    InvalidArgument {
        /// The calling node.
        pid: usize,
        /// What is wrong and what to do.
        message: String,
    },
    /// The cost model rejected its inputs.
    #[error("cost model: {0}")]
    Model(String),
    /// The run would not fit this machine (its memory, its limit on memory mappings); refused
    /// before it starts. The message gives the estimate, the limit and what to change.
    #[error("{0}")]
    DoesNotFit(String),
}

impl HbspError {
    /// Whether this is a refusal of a run too large for this machine ([`HbspError::DoesNotFit`]).
    pub fn is_refusal(&self) -> bool {
        matches!(self, Self::DoesNotFit(_))
    }
}

impl From<hetscale_model::ModelError> for HbspError {
    fn from(err: hetscale_model::ModelError) -> Self {
        Self::Model(err.to_string())
    }
}

impl From<hetscale_machine::MachineError> for HbspError {
    fn from(err: hetscale_machine::MachineError) -> Self {
        use hetscale_machine::MachineError as M;
        match err {
            M::InvalidPlatform(message) => Self::InvalidPlatform(message),
            M::InvalidNodeSet(message) => Self::InvalidNodeSet(message),
            M::File { path, message } => Self::File { path, message },
            M::Model(message) => Self::Model(message),
            M::DoesNotFit(message) => Self::DoesNotFit(message),
            // MachineError is non-exhaustive to its users, not to this match's crate graph:
            // a new variant is a platform problem until it gets a namesake here.
            other => Self::InvalidPlatform(other.to_string()),
        }
    }
}

/// `Result` with [`HbspError`].
pub type Result<T, E = HbspError> = std::result::Result<T, E>;
