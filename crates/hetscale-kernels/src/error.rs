//! The one error type of the kernels crate.

/// Why a kernel refused its input or failed to run. Every message is one line that says what
/// is wrong and, where it helps, what to do instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// The problem (sizes, shapes, parameters, speeds) cannot be run.
    #[error("{0}")]
    InvalidInput(String),
    /// The numerical problem has no answer (e.g. a singular matrix).
    #[error("{0}")]
    Numerical(String),
    /// The HBSP run failed.
    #[error(transparent)]
    Hbsp(#[from] hbsp::HbspError),
    /// A model function rejected its input.
    #[error(transparent)]
    Model(#[from] hetscale_model::ModelError),
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong and what to do.
        message: String,
    },
}

impl KernelError {
    /// Whether this refuses a run too large for this machine (see [`hbsp::HbspError::is_refusal`]).
    pub fn is_refusal(&self) -> bool {
        matches!(self, Self::Hbsp(err) if err.is_refusal())
    }
}

/// A machine's error is the HBSP library's namesake: one variant, one message, whichever
/// crate read the platform.
impl From<hetscale_machine::MachineError> for KernelError {
    fn from(err: hetscale_machine::MachineError) -> Self {
        Self::Hbsp(err.into())
    }
}

/// `Result` with [`KernelError`].
pub type Result<T, E = KernelError> = std::result::Result<T, E>;

/// An [`KernelError::InvalidInput`] with `message`.
pub(crate) fn invalid(message: impl Into<String>) -> KernelError {
    KernelError::InvalidInput(message.into())
}

/// Checks a problem size: at least `min`.
pub(crate) fn check_size(what: &str, n: usize, min: usize) -> Result<()> {
    if n >= min {
        Ok(())
    } else {
        Err(invalid(format!(
            "{what} = {n} is too small: use {what} >= {min}"
        )))
    }
}
