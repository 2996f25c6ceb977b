//! [`Array`]: an n-dimensional array of `float64` or `complex128`, the uniform currency of
//! kernel inputs and results (what `.npy` files hold).

use num_complex::Complex64;

use crate::error::{Result, invalid};
use crate::matrix::{ComplexMatrix, Matrix};

/// The elements of an [`Array`], row-major (C order).
#[derive(Debug, Clone, PartialEq)]
pub enum ArrayData {
    /// `float64` elements.
    Real(Vec<f64>),
    /// `complex128` elements.
    Complex(Vec<Complex64>),
}

/// A named n-dimensional array.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// What the array is, e.g. `A`, used in error messages.
    pub name: String,
    /// Extent of each dimension.
    pub shape: Vec<usize>,
    /// The elements, row-major.
    pub data: ArrayData,
}

impl Array {
    /// A real vector.
    pub fn vector(name: &str, data: Vec<f64>) -> Self {
        Self {
            name: name.into(),
            shape: vec![data.len()],
            data: ArrayData::Real(data),
        }
    }

    /// A real matrix.
    pub fn matrix(name: &str, m: Matrix) -> Self {
        Self {
            name: name.into(),
            shape: vec![m.rows(), m.cols()],
            data: ArrayData::Real(m.into_vec()),
        }
    }

    /// A complex matrix.
    pub fn complex_matrix(name: &str, m: ComplexMatrix) -> Self {
        Self {
            name: name.into(),
            shape: vec![m.rows(), m.cols()],
            data: ArrayData::Complex(m.into_vec()),
        }
    }

    /// `float64` or `complex128`, as numpy names the dtype.
    pub fn dtype(&self) -> &'static str {
        match self.data {
            ArrayData::Real(_) => "float64",
            ArrayData::Complex(_) => "complex128",
        }
    }

    fn describe(&self) -> String {
        let dims: Vec<String> = self.shape.iter().map(ToString::to_string).collect();
        format!("{} of shape ({})", self.dtype(), dims.join(", "))
    }

    fn wrong(&self, wanted: &str) -> crate::KernelError {
        invalid(format!(
            "{} must be {wanted}, got {}",
            self.name,
            self.describe()
        ))
    }

    /// Refuses NaN and infinite elements: the kernels compute with finite numbers only, and a
    /// non-finite input would only show as a failed check after the whole run.
    fn check_finite(&self) -> Result<()> {
        let first_bad = match &self.data {
            ArrayData::Real(v) => v.iter().position(|x| !x.is_finite()),
            ArrayData::Complex(v) => v.iter().position(|z| !z.is_finite()),
        };
        match first_bad {
            None => Ok(()),
            Some(flat) => Err(invalid(format!(
                "{} holds a NaN or infinite value at index {}: give finite numbers",
                self.name,
                self.index_of(flat)
            ))),
        }
    }

    /// The row-major `flat` position as numpy writes an index, e.g. `(2, 3)`.
    fn index_of(&self, mut flat: usize) -> String {
        let mut index = vec![0; self.shape.len()];
        for (i, &extent) in self.shape.iter().enumerate().rev() {
            index[i] = flat % extent.max(1);
            flat /= extent.max(1);
        }
        let parts: Vec<String> = index.iter().map(ToString::to_string).collect();
        format!("({})", parts.join(", "))
    }

    /// The array as a non-empty square `float64` matrix of finite numbers.
    pub fn to_square_matrix(&self) -> Result<Matrix> {
        match (&self.data, self.shape.as_slice()) {
            (ArrayData::Real(data), &[r, c]) if r == c && r > 0 => {
                self.check_finite()?;
                Matrix::new(r, c, data.clone())
            }
            _ => Err(self.wrong("a float64 array of shape (N, N) with N >= 1")),
        }
    }

    /// The array as a non-empty square `complex128` matrix of finite numbers.
    pub fn to_square_complex_matrix(&self) -> Result<ComplexMatrix> {
        match (&self.data, self.shape.as_slice()) {
            (ArrayData::Complex(data), &[r, c]) if r == c && r > 0 => {
                self.check_finite()?;
                Matrix::new(r, c, data.clone())
            }
            _ => Err(self.wrong("a complex128 array of shape (N, N) with N >= 1")),
        }
    }

    /// The array as a `float64` vector of finite numbers, of length at least `min_len`.
    pub fn to_vector(&self, min_len: usize) -> Result<Vec<f64>> {
        match (&self.data, self.shape.as_slice()) {
            (ArrayData::Real(data), &[n]) if n >= min_len => {
                self.check_finite()?;
                Ok(data.clone())
            }
            _ => Err(self.wrong(&format!(
                "a float64 array of shape (N,) with N >= {min_len}"
            ))),
        }
    }
}

/// Checks that a kernel got the number of arrays it takes; `names` lists them.
pub(crate) fn expect_arrays<'a>(
    kernel: &str,
    arrays: &'a [Array],
    names: &[&str],
) -> Result<&'a [Array]> {
    if arrays.len() == names.len() {
        Ok(arrays)
    } else {
        Err(invalid(format!(
            "{kernel} takes {} input arrays ({}), got {}",
            names.len(),
            names.join(", "),
            arrays.len()
        )))
    }
}

/// The two square operands `A` and `B` of a matrix product kernel (`mm`, `summa`).
pub(crate) fn square_operands(kernel: &str, arrays: &[Array]) -> Result<(Matrix, Matrix)> {
    let [a, b] = expect_arrays(kernel, arrays, &["A", "B"])? else {
        unreachable!("expect_arrays checked the count")
    };
    Ok((a.to_square_matrix()?, b.to_square_matrix()?))
}
