//! Reading and writing [`Array`]s as `.npy` files (`float64` and `complex128`, any byte
//! order; Fortran-ordered files are read too).

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;

use npyz::{DType, NpyFile, Order, TypeChar, WriterBuilder};
use num_complex::Complex64;

use crate::array::{Array, ArrayData};
use crate::error::{KernelError, Result};

/// A parser's message on one line: the npy header parser quotes the header over several.
fn one_line(err: &impl std::fmt::Display) -> String {
    err.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn file_error(path: &Path, message: impl Into<String>) -> KernelError {
    KernelError::File {
        path: path.display().to_string(),
        message: message.into(),
    }
}

/// Reads a `.npy` file of `float64` or `complex128` elements; the array is named after the file.
pub fn read_npy(path: impl AsRef<Path>) -> Result<Array> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| file_error(path, e.to_string()))?;
    let npy = NpyFile::new(BufReader::new(file))
        .map_err(|e| file_error(path, format!("not a valid .npy file ({})", one_line(&e))))?;
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let order = npy.order();
    let unsupported = || {
        file_error(
            path,
            format!(
                "dtype {} is not supported: save the array as float64 or complex128",
                npy.dtype().descr()
            ),
        )
    };
    let kind = match npy.dtype() {
        DType::Plain(ts) => (ts.type_char(), ts.size_field()),
        _ => return Err(unsupported()),
    };
    let read_error = |e: std::io::Error| file_error(path, format!("cannot read the data ({e})"));
    let data = match kind {
        (TypeChar::Float, 8) => ArrayData::Real(c_order(
            npy.into_vec::<f64>().map_err(read_error)?,
            &shape,
            order,
        )),
        (TypeChar::Complex, 16) => ArrayData::Complex(c_order(
            npy.into_vec::<Complex64>().map_err(read_error)?,
            &shape,
            order,
        )),
        _ => return Err(unsupported()),
    };
    Ok(Array {
        name: path.display().to_string(),
        shape,
        data,
    })
}

/// Fortran-ordered data rearranged to row-major order.
fn c_order<T: Copy>(data: Vec<T>, shape: &[usize], order: Order) -> Vec<T> {
    if order == Order::C || shape.len() < 2 {
        return data;
    }
    let mut index = vec![0usize; shape.len()];
    let mut out = Vec::with_capacity(data.len());
    for _ in 0..data.len() {
        let mut at = 0;
        for d in (0..shape.len()).rev() {
            at = at * shape[d] + index[d];
        }
        out.push(data[at]);
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

/// Writes `array` as a C-ordered little-endian `.npy` file.
pub fn write_npy(path: impl AsRef<Path>, array: &Array) -> Result<()> {
    let path = path.as_ref();
    let io = |e: std::io::Error| file_error(path, e.to_string());
    let file = BufWriter::new(File::create(path).map_err(io)?);
    let shape: Vec<u64> = array.shape.iter().map(|&d| d as u64).collect();
    match &array.data {
        ArrayData::Real(data) => write_elements(file, &shape, data).map_err(io),
        ArrayData::Complex(data) => write_elements(file, &shape, data).map_err(io),
    }
}

fn write_elements<T, W>(file: W, shape: &[u64], data: &[T]) -> std::io::Result<()>
where
    T: npyz::AutoSerialize + Copy,
    W: std::io::Write,
{
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(file)
        .begin_nd()?;
    writer.extend(data.iter().copied())?;
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_and_complex_round_trip() {
        let dir = std::env::temp_dir().join(format!("hetscale-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let real = Array {
            name: "x".into(),
            shape: vec![2, 3],
            data: ArrayData::Real(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.5]),
        };
        let complex = Array {
            name: "z".into(),
            shape: vec![1, 2],
            data: ArrayData::Complex(vec![Complex64::new(1.0, -2.0), Complex64::new(0.5, 3.0)]),
        };
        for array in [real, complex] {
            let path = dir.join(format!("{}.npy", array.name));
            write_npy(&path, &array).unwrap();
            let back = read_npy(&path).unwrap();
            assert_eq!((back.shape, back.data), (array.shape, array.data));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fortran_order_is_transposed_to_row_major() {
        assert_eq!(
            c_order(vec![1, 4, 2, 5, 3, 6], &[2, 3], Order::Fortran),
            vec![1, 2, 3, 4, 5, 6]
        );
    }

    #[test]
    fn missing_and_invalid_files_are_one_line_errors() {
        let err = read_npy("/nonexistent/a.npy").unwrap_err().to_string();
        assert!(err.starts_with("/nonexistent/a.npy: ") && !err.contains('\n'));
        let path = std::env::temp_dir().join(format!("hetscale-bad-{}.npy", std::process::id()));
        std::fs::write(&path, b"not numpy").unwrap();
        let err = read_npy(&path).unwrap_err().to_string();
        assert!(err.contains("not a valid .npy file"), "{err}");
        std::fs::remove_file(&path).unwrap();
    }
}
