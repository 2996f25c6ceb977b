//! Checks of parallel results against sequential references.

use crate::input::{Stream, uniform};
use crate::kernel::Verification;
use crate::matrix::Matrix;

/// `y = M x` for a row-major square `m` and, with `abs`, `|M| |x|`.
fn mat_vec(m: &Matrix, x: &[f64], abs: bool) -> Vec<f64> {
    (0..m.rows())
        .map(|i| {
            m.row(i)
                .iter()
                .zip(x)
                .map(|(a, b)| if abs { (a * b).abs() } else { a * b })
                .sum()
        })
        .collect()
}

/// Randomised check of `C = A B` (Freivalds' test in floating point): for two random vectors
/// `x`, compares `C x` with `A (B x)` entrywise against the rounding-error scale
/// `|A| (|B| |x|)`. A wrong entry of `C` shows with probability 1; the tolerance `4 n eps`
/// covers the rounding of the product and of both matrix-vector products.
pub(crate) fn product_check(a: &Matrix, b: &Matrix, c: &Matrix, seed: u64) -> Verification {
    let n = a.rows();
    let mut worst: f64 = 0.0;
    for trial in 0..2 {
        let x = uniform(n, seed.wrapping_add(trial), Stream::Check);
        let cx = mat_vec(c, &x, false);
        let abx = mat_vec(a, &mat_vec(b, &x, false), false);
        let scale = mat_vec(a, &mat_vec(b, &x, true), true);
        for i in 0..n {
            let err = (cx[i] - abx[i]).abs();
            worst = worst.max(if scale[i] > 0.0 { err / scale[i] } else { err });
        }
    }
    Verification::new(
        "max_i |C x - A (B x)|_i / (|A| |B| |x|)_i over 2 random x (Freivalds)",
        worst,
        4.0 * n as f64 * f64::EPSILON,
    )
}

/// `max |x - reference| / max |reference|` (0 when both are zero).
pub(crate) fn relative_max_error<T>(x: &[T], reference: &[T], norm: impl Fn(&T, &T) -> f64) -> f64
where
    T: Copy + Default,
{
    let zero = T::default();
    let scale = reference.iter().map(|r| norm(r, &zero)).fold(0.0, f64::max);
    let err = x
        .iter()
        .zip(reference)
        .map(|(a, b)| norm(a, b))
        .fold(0.0, f64::max);
    if scale > 0.0 { err / scale } else { err }
}
