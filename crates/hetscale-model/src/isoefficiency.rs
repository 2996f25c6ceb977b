//! Isoefficiency (Kumar et al.), for comparison with isospeed on homogeneous runs.
//!
//! Parallel efficiency is `E = W / (W + T_o(W, p))` with `W` and `T_o` in time units; keeping
//! `E` fixed needs `W = K T_o(W, p)` with `K = E / (1 - E)`: the isoefficiency function.

use crate::error::{ModelError, Result};

/// The isoefficiency constant `K = E / (1 - E)`.
pub fn isoefficiency_constant(efficiency: f64) -> Result<f64> {
    if !(efficiency > 0.0 && efficiency < 1.0) {
        return Err(ModelError::Inconsistent(format!(
            "efficiency must be in (0, 1), got {efficiency}"
        )));
    }
    Ok(efficiency / (1.0 - efficiency))
}

/// Solves `W = K T_o(W)` for the work `W` (in sequential-time units) that keeps `efficiency`,
/// searching `[lo, hi]`. `overhead` gives the total overhead `T_o = p T_p - W` at work `W`.
pub fn isoefficiency_work(
    efficiency: f64,
    overhead: impl Fn(f64) -> Result<f64>,
    lo: f64,
    hi: f64,
) -> Result<f64> {
    isoefficiency_constant(efficiency)?;
    crate::root::solve_for_target(
        |w| Ok(w / (w + overhead(w)?)),
        efficiency,
        lo,
        hi,
        "parallel efficiency",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_overhead_gives_closed_form() {
        // T_o = 2 + 0.1 W  ->  E = W / (1.1 W + 2); for E = 0.5: W = 2 / (2 - 1.1) ... solve exactly.
        let w = isoefficiency_work(0.5, |w| Ok(2.0 + 0.1 * w), 1e-3, 1e6).unwrap();
        assert!((w / (w + 2.0 + 0.1 * w) - 0.5).abs() < 1e-9);
        assert!((w - 2.0 / 0.9).abs() < 1e-7);
        assert!(isoefficiency_work(0.95, |w| Ok(2.0 + 0.1 * w), 1e-3, 1e6).is_err());
        assert!(isoefficiency_constant(1.0).is_err());
    }
}
