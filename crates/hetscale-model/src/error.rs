//! The one error type of the model crate.

use thiserror::Error;

/// Why a model function refused its input or found no answer.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ModelError {
    /// A quantity that must be strictly positive and finite was not.
    #[error("{name} must be a positive finite number, got {value}")]
    NotPositive {
        /// The parameter's name as the caller knows it.
        name: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A quantity that must be non-negative and finite was not.
    #[error("{name} must be a non-negative finite number, got {value}")]
    Negative {
        /// The parameter's name.
        name: &'static str,
        /// The offending value.
        value: f64,
    },
    /// Inputs that are individually fine but do not fit together.
    #[error("{0}")]
    Inconsistent(String),
    /// A caller's own term has no value at a size on a configuration, for the caller's
    /// reason (its declared overhead turns negative there, say): a prediction there would be
    /// nonsense, whichever model carries the term.
    #[error("configuration {configuration}: {why}")]
    TermUndefined {
        /// The configuration's label.
        configuration: String,
        /// The caller's reason.
        why: String,
    },
    /// No problem size in the searched range reaches the target.
    #[error(
        "no problem size in [{lo}, {hi}] reaches the target {what} {}; the closest reached is {best:.4} at {best_at:.1}: lower the target or widen the range",
        crate::numbers::echoed(*target)
    )]
    Unreachable {
        /// What was targeted (e.g. "speed-efficiency").
        what: &'static str,
        /// The target value.
        target: f64,
        /// Lower end of the searched range.
        lo: f64,
        /// Upper end of the searched range.
        hi: f64,
        /// The value closest to the target seen while searching.
        best: f64,
        /// Where that value was reached.
        best_at: f64,
    },
    /// A fit had too few points or a singular design.
    #[error("cannot fit {what}: {why}")]
    Fit {
        /// What was being fitted.
        what: &'static str,
        /// Why it failed.
        why: String,
    },
}

/// Result alias for the model crate.
pub type Result<T> = std::result::Result<T, ModelError>;

/// Checks that `value` is strictly positive and finite.
pub fn positive(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ModelError::NotPositive { name, value })
    }
}

/// Checks that `value` is non-negative and finite.
pub fn non_negative(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(ModelError::Negative { name, value })
    }
}

/// Checks every element of `values` is strictly positive and finite, and that there is at least one.
pub fn all_positive(name: &'static str, values: &[f64]) -> Result<()> {
    if values.is_empty() {
        return Err(ModelError::Inconsistent(format!(
            "{name} must not be empty"
        )));
    }
    values
        .iter()
        .try_for_each(|&v| positive(name, v).map(|_| ()))
}
