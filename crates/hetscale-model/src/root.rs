//! Bracketed root finding: solving the isospeed(-e) condition for a problem size.
//!
//! Brent's method (the `roots` crate) on a bracket found by scanning a geometric grid, so a
//! condition that no size in the range meets is reported with the best value reached instead of
//! a wrong answer or a panic.

use crate::error::{ModelError, Result, positive};
use roots::{Convergency, find_root_brent};
use std::cell::RefCell;

/// How many grid points the bracket scan evaluates between `lo` and `hi`.
const SCAN_POINTS: usize = 64;

/// Brent's stopping rule: an exact zero, or a bracket narrower than `x`. The width is relative
/// to the bracket's magnitude: an absolute 1e-10 is below the spacing of doubles near
/// N = 1e6, and a size model that rounds N then never converges. (`roots`'s
/// `SimpleConvergency` uses one epsilon for both x and y, which stops early on small y.)
struct Tolerances {
    x: f64,
}

impl Convergency<f64> for Tolerances {
    fn is_root_found(&mut self, y: f64) -> bool {
        y == 0.0
    }

    fn is_converged(&mut self, x1: f64, x2: f64) -> bool {
        (x1 - x2).abs() < self.x
    }

    fn is_iteration_limit_reached(&mut self, iter: usize) -> bool {
        iter >= 500
    }
}

/// Finds `x` in `[lo, hi]` with `f(x) = 0`, given that `f(lo)` and `f(hi)` differ in sign.
pub fn find_root(f: impl Fn(f64) -> Result<f64>, lo: f64, hi: f64) -> Result<f64> {
    let failure = RefCell::new(None);
    let g = |x: f64| {
        f(x).unwrap_or_else(|e| {
            failure.borrow_mut().get_or_insert(e);
            f64::NAN
        })
    };
    let mut convergency = Tolerances {
        x: 1e-12 * lo.abs().max(hi.abs()).max(1.0),
    };
    let found = find_root_brent(lo, hi, g, &mut convergency);
    if let Some(err) = failure.into_inner() {
        return Err(err);
    }
    found.map_err(|e| ModelError::Inconsistent(format!("root finding in [{lo}, {hi}] failed: {e}")))
}

/// Finds the smallest `x` in `[lo, hi]` (scanned geometrically) where `f(x)` reaches `target`,
/// then refines it with Brent's method. `what` names the quantity in the error when no `x` in the
/// range reaches the target; the error carries the closest value seen and where.
pub fn solve_for_target(
    f: impl Fn(f64) -> Result<f64>,
    target: f64,
    lo: f64,
    hi: f64,
    what: &'static str,
) -> Result<f64> {
    let (lo, hi) = (positive("lower bound", lo)?, positive("upper bound", hi)?);
    if !target.is_finite() || hi <= lo {
        return Err(ModelError::Inconsistent(format!(
            "cannot search {what} {} in [{lo}, {hi}]",
            crate::numbers::echoed(target)
        )));
    }
    let grid = geometric_grid(lo, hi, SCAN_POINTS);
    let mut prev = (grid[0], f(grid[0])? - target);
    let mut best = prev;
    if prev.1 == 0.0 {
        return Ok(prev.0);
    }
    for &x in &grid[1..] {
        let cur = (x, f(x)? - target);
        if cur.1.abs() < best.1.abs() {
            best = cur;
        }
        if cur.1 == 0.0 {
            return Ok(x);
        }
        if prev.1.signum() != cur.1.signum() {
            return find_root(|x| Ok(f(x)? - target), prev.0, cur.0);
        }
        prev = cur;
    }
    Err(ModelError::Unreachable {
        what,
        target,
        lo,
        hi,
        best: best.1 + target,
        best_at: best.0,
    })
}

fn geometric_grid(lo: f64, hi: f64, points: usize) -> Vec<f64> {
    let ratio = (hi / lo).powf(1.0 / (points - 1) as f64);
    let mut grid: Vec<f64> = (0..points).map(|i| lo * ratio.powi(i as i32)).collect();
    grid[points - 1] = hi;
    grid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_cube_root() {
        let x = solve_for_target(|x| Ok(x * x * x), 27.0, 0.5, 100.0, "value").unwrap();
        assert!((x - 3.0).abs() < 1e-8);
    }

    #[test]
    fn unreachable_target_reports_best() {
        // E(N) = N / (N + 100) never reaches 1.
        let err = solve_for_target(|n| Ok(n / (n + 100.0)), 1.0, 1.0, 1e6, "speed-efficiency")
            .unwrap_err();
        match err {
            ModelError::Unreachable { best, best_at, .. } => {
                assert!(best > 0.99 && best < 1.0);
                assert_eq!(best_at, 1e6);
            }
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn errors_inside_the_function_propagate() {
        let err = solve_for_target(
            |x| {
                if x > 10.0 {
                    Err(ModelError::Inconsistent("boom".into()))
                } else {
                    Ok(x)
                }
            },
            50.0,
            1.0,
            100.0,
            "v",
        );
        assert!(err.unwrap_err().to_string().contains("boom"));
    }
}
