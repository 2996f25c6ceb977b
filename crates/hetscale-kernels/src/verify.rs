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
    let mut worst = 0.0;
    for trial in 0..2 {
        let x = uniform(n, seed.wrapping_add(trial), Stream::Check);
        let cx = mat_vec(c, &x, false);
        let abx = mat_vec(a, &mat_vec(b, &x, false), false);
        let scale = mat_vec(a, &mat_vec(b, &x, true), true);
        let errors = (0..n).map(|i| {
            let err = (cx[i] - abx[i]).abs();
            if scale[i] > 0.0 { err / scale[i] } else { err }
        });
        worst = max_or_nan(std::iter::once(worst).chain(errors));
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
    let scale = max_or_nan(reference.iter().map(|r| norm(r, &zero)));
    let err = max_or_nan(x.iter().zip(reference).map(|(a, b)| norm(a, b)));
    // A NaN scale (a reference holding NaN) must fail the check too.
    if scale > 0.0 || scale.is_nan() {
        err / scale
    } else {
        err
    }
}

/// The largest of `values` (0 if there are none), or NaN if any is NaN: `f64::max` drops
/// NaN, which would let a result holding NaN pass its check with error 0.
pub(crate) fn max_or_nan(values: impl IntoIterator<Item = f64>) -> f64 {
    values.into_iter().fold(0.0, |m: f64, v| {
        if m.is_nan() || v.is_nan() {
            f64::NAN
        } else {
            m.max(v)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::matrix;

    /// `A`, `B` and their exact product on small integers (exact in floating point).
    fn product() -> (Matrix, Matrix, Matrix) {
        let n = 5;
        let a = Matrix::new(n, n, (0..n * n).map(|k| (k % 7) as f64 - 3.0).collect()).unwrap();
        let b = Matrix::new(n, n, (0..n * n).map(|k| (k % 4) as f64 - 1.0).collect()).unwrap();
        let c: Vec<f64> = (0..n * n)
            .map(|k| (0..n).map(|m| a.get(k / n, m) * b.get(m, k % n)).sum())
            .collect();
        (a, b, Matrix::new(n, n, c).unwrap())
    }

    /// `c` with element `at` replaced by `value`.
    fn corrupted(c: &Matrix, at: usize, value: f64) -> Matrix {
        let mut c = c.clone();
        c.as_mut_slice()[at] = value;
        c
    }

    #[test]
    fn max_or_nan_keeps_nan_that_f64_max_drops() {
        assert_eq!(max_or_nan([1.0, 3.0, 2.0]), 3.0);
        assert_eq!(max_or_nan(std::iter::empty()), 0.0);
        assert!(max_or_nan([1.0, f64::NAN, 2.0]).is_nan());
        assert!(max_or_nan([f64::NAN, 1.0]).is_nan());
        assert_eq!(max_or_nan([1.0, f64::INFINITY]), f64::INFINITY);
    }

    #[test]
    fn the_product_check_fails_a_result_with_nan_inf_or_one_wrong_element() {
        let (a, b, c) = product();
        assert!(product_check(&a, &b, &c, 1).passed);
        for (value, what) in [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (c.get(2, 3) + 1.0, "one wrong element"),
        ] {
            let check = product_check(&a, &b, &corrupted(&c, 13, value), 1);
            assert!(!check.passed, "{what}: {check:?}");
            assert!(
                check.error.is_nan() || check.error > check.tolerance,
                "{what}: {check:?}"
            );
        }
        // NaN or Inf in an operand poisons the check as well.
        let check = product_check(&corrupted(&a, 0, f64::NAN), &b, &c, 1);
        assert!(!check.passed && check.error.is_nan(), "{check:?}");
    }

    #[test]
    fn the_relative_error_fails_a_result_with_nan_inf_or_one_wrong_element() {
        let reference = matrix(4, 4, 3, Stream::A).into_vec();
        let error = |x: &[f64]| relative_max_error(x, &reference, |a, b| (a - b).abs());
        assert_eq!(error(&reference), 0.0);
        for (value, what) in [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Inf"),
            (reference[5] + 0.5, "one wrong element"),
        ] {
            let mut x = reference.clone();
            x[5] = value;
            let e = error(&x);
            assert!(e.is_nan() || e > 1e-9, "{what}: {e}");
        }
        let mut poisoned = reference.clone();
        poisoned[0] = f64::NAN;
        assert!(relative_max_error(&reference, &poisoned, |a, b| (a - b).abs()).is_nan());
    }
}
