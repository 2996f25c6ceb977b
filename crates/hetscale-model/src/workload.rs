//! Work (operation count of the conventional sequential algorithm) of the papers' kernels.

use crate::error::{Result, positive};

/// Gaussian elimination with back substitution on an `n x n` system (JPDC 4.1.1):
/// `W(N) = 2/3 N^3 - 1/2 N^2 - 19/6 N + 3` (the paper writes the linear term as `3 1/6 N`).
pub fn ge(n: f64) -> Result<f64> {
    let n = positive("N", n)?;
    Ok(2.0 / 3.0 * n.powi(3) - 0.5 * n * n - 19.0 / 6.0 * n + 3.0)
}

/// Dense square matrix multiplication (JPDC 4.1.2): `W(N) = 2 N^3`.
pub fn mm(n: f64) -> Result<f64> {
    Ok(2.0 * positive("N", n)?.powi(3))
}

/// FFT-based 2D convolution of two `N x N` complex images (JPDC 4.1.3):
/// `W(N) = 66 N^2 lg N + 21 N^2 + 84 N lg N`.
pub fn conv2d(n: f64) -> Result<f64> {
    let n = positive("N", n)?;
    let lg = n.log2();
    Ok(66.0 * n * n * lg + 21.0 * n * n + 84.0 * n * lg)
}

/// SUMMA `C = A B` with `A` of `m x k` and `B` of `k x n`: `W = 2 m n k`.
pub fn summa(m: f64, n: f64, k: f64) -> Result<f64> {
    Ok(2.0 * positive("m", m)? * positive("n", n)? * positive("k", k)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ge_matches_jpdc_table3_workloads() {
        // JPDC Table 3: W(100..500).
        for (n, w) in [
            (100.0, 661_353.0),
            (200.0, 5_312_703.0),
            (300.0, 17_954_053.0),
            (400.0, 42_585_403.0),
            (500.0, 83_206_753.0),
        ] {
            assert!((ge(n).unwrap() - w).abs() < 1e-6, "N = {n}");
        }
    }

    #[test]
    fn mm_and_conv_match_tables_8_and_10() {
        assert_eq!(mm(165.0).unwrap(), 8_984_250.0); // JPDC Table 8, case 1
        assert_eq!(conv2d(145.0).unwrap().round(), 10_492_177.0); // JPDC Table 10, case 1
        assert_eq!(conv2d(270.0).unwrap().round(), 40_574_873.0); // JPDC Table 10, case 2
    }

    #[test]
    fn sizes_must_be_positive() {
        assert!(ge(0.0).is_err());
        assert!(mm(-1.0).is_err());
        assert!(conv2d(f64::INFINITY).is_err());
        assert!(summa(1.0, 0.0, 1.0).is_err());
    }
}
