//! How `ge` chooses each step's pivot, and the size of a value moved.

use crate::error::{KernelError, Result, invalid};

pub(crate) const F64: f64 = 8.0;

/// How the pivot of each step is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pivoting {
    /// Largest `|a_ji|` in the column among the remaining rows (numerically stable).
    #[default]
    Partial,
    /// Row `i` at step `i`, as the JPDC paper's algorithm (needs e.g. a diagonally dominant
    /// matrix).
    None,
}

impl Pivoting {
    /// `partial` or `none`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Partial => "partial",
            Self::None => "none",
        }
    }
}

impl std::str::FromStr for Pivoting {
    type Err = KernelError;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "partial" => Ok(Self::Partial),
            "none" => Ok(Self::None),
            _ => Err(invalid(format!(
                "unknown pivoting \"{s}\": use partial or none"
            ))),
        }
    }
}
