//! Dense row-major matrices of `f64` or complex numbers, the kernels' inputs and outputs.

use num_complex::Complex64;

use crate::error::{Result, invalid};

/// A dense `rows x cols` matrix stored row by row.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix<T = f64> {
    rows: usize,
    cols: usize,
    data: Vec<T>,
}

/// A matrix of `complex128` numbers (the 2D convolution's images).
pub type ComplexMatrix = Matrix<Complex64>;

impl<T: Copy + Default> Matrix<T> {
    /// A matrix from row-major `data`, which must hold `rows * cols` elements.
    pub fn new(rows: usize, cols: usize, data: Vec<T>) -> Result<Self> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(invalid(format!(
                "a {rows} x {cols} matrix needs {} elements, got {}",
                rows.saturating_mul(cols),
                data.len()
            )));
        }
        Ok(Self { rows, cols, data })
    }

    /// A matrix of zeros (`T::default()`).
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            data: vec![T::default(); rows * cols],
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// The elements, row by row.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The elements, row by row, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// Consumes the matrix, returning its row-major elements.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[T] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// Element `(i, j)`.
    pub fn get(&self, i: usize, j: usize) -> T {
        self.data[i * self.cols + j]
    }

    /// The sub-matrix of rows `r0..r1` and columns `c0..c1`, copied.
    pub fn block(&self, r0: usize, r1: usize, c0: usize, c1: usize) -> Vec<T> {
        let mut out = Vec::with_capacity((r1 - r0) * (c1 - c0));
        for i in r0..r1 {
            out.extend_from_slice(&self.data[i * self.cols + c0..i * self.cols + c1]);
        }
        out
    }

    /// Checks the matrix is square and non-empty; `what` names it in the error.
    pub(crate) fn check_square(&self, what: &str) -> Result<usize> {
        if self.rows == self.cols && self.rows > 0 {
            Ok(self.rows)
        } else {
            Err(invalid(format!(
                "{what} must be a non-empty square matrix, got {} x {}",
                self.rows, self.cols
            )))
        }
    }
}

/// Writes the `rows x cols` block `src` into `dst` (row length `dst_cols`) at `(r0, c0)`.
pub(crate) fn put_block<T: Copy>(
    dst: &mut [T],
    dst_cols: usize,
    (r0, c0): (usize, usize),
    src: &[T],
    cols: usize,
) {
    if cols == 0 {
        return;
    }
    for (i, row) in src.chunks_exact(cols).enumerate() {
        let at = (r0 + i) * dst_cols + c0;
        dst[at..at + cols].copy_from_slice(row);
    }
}
