//! Seeded, reproducible inputs: the same seed gives the same numbers on every machine.
//!
//! Each input is drawn from its own ChaCha8 stream (`seed`, `stream`), so `A` and `B` of one
//! problem are independent and adding an input never changes the others.

use num_complex::Complex64;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::array::Array;
use crate::error::Result;
use crate::matrix::{ComplexMatrix, Matrix};

/// Which input of a problem a stream feeds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stream {
    A = 1,
    B = 2,
    Rhs = 3,
    Series = 4,
    Check = 5,
}

fn rng(seed: u64, stream: Stream) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream as u64);
    rng
}

/// `n` numbers uniform in `[-1, 1)`.
pub(crate) fn uniform(n: usize, seed: u64, stream: Stream) -> Vec<f64> {
    let mut rng = rng(seed, stream);
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

/// A `rows x cols` matrix with entries uniform in `[-1, 1)`.
pub(crate) fn matrix(rows: usize, cols: usize, seed: u64, stream: Stream) -> Matrix {
    Matrix::new(rows, cols, uniform(rows * cols, seed, stream)).expect("sizes agree")
}

/// Seeded `n x n` operands `A` and `B` of a matrix product kernel (`mm`, `summa`).
pub(crate) fn product_operands(n: usize, seed: u64) -> Result<Vec<Array>> {
    crate::error::check_size("N", n, 1)?;
    Ok(vec![
        Array::matrix("A", matrix(n, n, seed, Stream::A)),
        Array::matrix("B", matrix(n, n, seed, Stream::B)),
    ])
}

/// An `n x n` complex matrix with real and imaginary parts uniform in `[-1, 1)`.
pub(crate) fn complex_matrix(n: usize, seed: u64, stream: Stream) -> ComplexMatrix {
    let parts = uniform(2 * n * n, seed, stream);
    let data = parts
        .chunks_exact(2)
        .map(|c| Complex64::new(c[0], c[1]))
        .collect();
    Matrix::new(n, n, data).expect("sizes agree")
}

/// `n` samples of the stationary AR(2) process `x[t] = 0.75 x[t-1] - 0.5 x[t-2] + e[t]`,
/// `e` uniform in `[-1, 1)`, after a burn-in of 100 samples.
pub(crate) fn ar2_series(n: usize, seed: u64) -> Vec<f64> {
    const BURN_IN: usize = 100;
    let noise = uniform(n + BURN_IN, seed, Stream::Series);
    let mut x = vec![0.0; n + BURN_IN];
    for t in 0..x.len() {
        let past1 = if t >= 1 { x[t - 1] } else { 0.0 };
        let past2 = if t >= 2 { x[t - 2] } else { 0.0 };
        x[t] = 0.75 * past1 - 0.5 * past2 + noise[t];
    }
    x.split_off(BURN_IN)
}
