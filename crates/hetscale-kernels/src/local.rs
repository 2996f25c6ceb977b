//! Single-threaded local computation inside one node: dense products with faer
//! (`Par::Seq`) and the marked-speed benchmark built on them.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

/// `c (m x n) += a (m x k) * b (k x n)` on row-major slices, or `c = a * b` when
/// `accumulate` is false; one thread.
pub fn gemm(
    (m, n, k): (usize, usize, usize),
    a: &[f64],
    b: &[f64],
    c: &mut [f64],
    accumulate: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    debug_assert_eq!((a.len(), b.len(), c.len()), (m * k, k * n, m * n));
    if k == 0 {
        if !accumulate {
            c.fill(0.0);
        }
        return;
    }
    let beta = if accumulate {
        Accum::Add
    } else {
        Accum::Replace
    };
    matmul(
        MatMut::from_row_major_slice_mut(c, m, n),
        beta,
        MatRef::from_row_major_slice(a, m, k),
        MatRef::from_row_major_slice(b, k, n),
        1.0,
        Par::Seq,
    );
}

/// Sustained speed of [`gemm`] on `n x n` matrices, in flop/s (`2 n^3` per product): the best
/// of `repetitions` timed products after one warm-up. This is the marked speed a node of this
/// host earns on the matrix kernels.
pub fn measure_dgemm_speed(n: usize, repetitions: usize) -> f64 {
    let a = crate::input::uniform(n * n, 1, crate::input::Stream::A);
    let b = crate::input::uniform(n * n, 1, crate::input::Stream::B);
    let mut c = vec![0.0; n * n];
    gemm((n, n, n), &a, &b, &mut c, false);
    let best = (0..repetitions.max(1))
        .map(|_| {
            let start = std::time::Instant::now();
            gemm((n, n, n), &a, &b, &mut c, false);
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    2.0 * (n as f64).powi(3) / best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_matches_triple_loop_including_empty_shapes() {
        for (m, n, k) in [
            (3, 4, 5),
            (1, 1, 1),
            (0, 3, 2),
            (2, 0, 3),
            (2, 3, 0),
            (17, 9, 33),
        ] {
            let a: Vec<f64> = (0..m * k).map(|x| (x % 7) as f64 - 3.0).collect();
            let b: Vec<f64> = (0..k * n).map(|x| (x % 5) as f64 * 0.5).collect();
            let mut c = vec![1.0; m * n];
            gemm((m, n, k), &a, &b, &mut c, true);
            for i in 0..m {
                for j in 0..n {
                    let dot: f64 = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
                    assert!((c[i * n + j] - 1.0 - dot).abs() < 1e-12);
                }
            }
        }
    }
}
