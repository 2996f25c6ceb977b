//! Isospeed and isospeed-efficiency scalability, and scalability matrices.
//!
//! `psi(p, p') = p'W / (pW')` with `W'` chosen so the average unit speed is kept (Sun & Rover
//! eq. 1); `psi(C, C') = C'W / (CW')` with `W'` chosen so the speed-efficiency is kept (Chen, Sun
//! & Wu). Under either condition `psi = T / T'` (Sun & Rover eq. 2). Scalability chains:
//! `psi(a, c) = psi(a, b) psi(b, c)`, so a matrix is summarised by its super-diagonal
//! (Sun & Rover Table III).

use crate::error::{ModelError, Result, positive};
use serde::ser::{Serialize, SerializeStruct, Serializer};

/// Isospeed scalability `psi(p, p') = p'W / (pW')` (Sun & Rover eq. 1).
pub fn isospeed_psi(p: f64, work: f64, p_scaled: f64, work_scaled: f64) -> Result<f64> {
    isospeed_e_psi(p, work, p_scaled, work_scaled)
}

/// Isospeed-efficiency scalability `psi(C, C') = C'W / (CW')` (Chen, Sun & Wu section 3.3).
/// With `C = p C_1` it is the isospeed scalability, which is why [`isospeed_psi`] delegates here.
pub fn isospeed_e_psi(c: f64, work: f64, c_scaled: f64, work_scaled: f64) -> Result<f64> {
    let (c, w) = (positive("system size", c)?, positive("work", work)?);
    let (c2, w2) = (
        positive("scaled system size", c_scaled)?,
        positive("scaled work", work_scaled)?,
    );
    Ok(c2 * w / (c * w2))
}

/// Scalability from the execution times that keep the speed (or speed-efficiency) constant:
/// `psi = T / T'` (Sun & Rover eq. 2; Chen, Sun & Wu Theorem 1's proof).
pub fn psi_from_times(time: f64, time_scaled: f64) -> Result<f64> {
    Ok(positive("time", time)? / positive("scaled time", time_scaled)?)
}

/// An upper-triangular matrix of `psi(i, j)` for `i <= j` over increasing system sizes.
/// Serialized as `labels` and the full square `values`, `null` below the diagonal.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalabilityMatrix {
    labels: Vec<String>,
    values: Vec<Vec<f64>>,
}

impl Serialize for ScalabilityMatrix {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let n = self.len();
        let full: Vec<Vec<Option<f64>>> = (0..n)
            .map(|i| (0..n).map(|j| self.get(i, j)).collect())
            .collect();
        let mut matrix = serializer.serialize_struct("ScalabilityMatrix", 2)?;
        matrix.serialize_field("labels", &self.labels)?;
        matrix.serialize_field("values", &full)?;
        matrix.end()
    }
}

/// A triple `(a, b, c)` where the matrix breaks `psi(a, c) = psi(a, b) psi(b, c)`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChainViolation {
    /// Index of the starting system.
    pub a: usize,
    /// Index of the intermediate system.
    pub b: usize,
    /// Index of the final system.
    pub c: usize,
    /// The matrix entry `psi(a, c)`.
    pub direct: f64,
    /// The product `psi(a, b) psi(b, c)`.
    pub chained: f64,
}

impl ScalabilityMatrix {
    /// From the times that keep the speed (or speed-efficiency) constant: `psi(i, j) = T_i / T_j`.
    pub fn from_times(labels: Vec<String>, times: &[f64]) -> Result<Self> {
        check_labels(&labels, times.len())?;
        Self::build(labels, times.len(), |i, j| {
            psi_from_times(times[i], times[j])
        })
    }

    /// From `(C, W)` pairs that keep the speed-efficiency: `psi(i, j) = C_j W_i / (C_i W_j)`.
    pub fn from_systems(labels: Vec<String>, systems: &[(f64, f64)]) -> Result<Self> {
        check_labels(&labels, systems.len())?;
        Self::build(labels, systems.len(), |i, j| {
            isospeed_e_psi(systems[i].0, systems[i].1, systems[j].0, systems[j].1)
        })
    }

    /// From the super-diagonal `psi(0,1), psi(1,2), ...` by chaining.
    pub fn from_superdiagonal(labels: Vec<String>, chain: &[f64]) -> Result<Self> {
        check_labels(&labels, chain.len() + 1)?;
        chain
            .iter()
            .try_for_each(|&x| positive("psi", x).map(|_| ()))?;
        Self::build(labels, chain.len() + 1, |i, j| {
            Ok(chain[i..j].iter().product())
        })
    }

    /// From explicit rows: row `i` holds `psi(i, i), psi(i, i+1), ...` (as papers print them).
    pub fn from_rows(labels: Vec<String>, rows: Vec<Vec<f64>>) -> Result<Self> {
        check_labels(&labels, rows.len())?;
        for (i, row) in rows.iter().enumerate() {
            if row.len() != rows.len() - i {
                return Err(ModelError::Inconsistent(format!(
                    "row {i} of a {n}x{n} scalability matrix needs {} entries, got {}",
                    rows.len() - i,
                    row.len(),
                    n = rows.len()
                )));
            }
        }
        Ok(Self {
            labels,
            values: rows,
        })
    }

    fn build(
        labels: Vec<String>,
        n: usize,
        psi: impl Fn(usize, usize) -> Result<f64>,
    ) -> Result<Self> {
        let values = (0..n)
            .map(|i| (i..n).map(|j| psi(i, j)).collect())
            .collect::<Result<_>>()?;
        Ok(Self { labels, values })
    }

    /// Number of system sizes.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the matrix has no system sizes.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The system size labels.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// `psi(i, j)` for `i <= j`; `None` below the diagonal or out of range.
    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        (i <= j)
            .then(|| self.values.get(i)?.get(j - i).copied())
            .flatten()
    }

    /// The super-diagonal `psi(0,1), psi(1,2), ...` (Sun & Rover Table III).
    pub fn superdiagonal(&self) -> Vec<f64> {
        (1..self.len()).filter_map(|j| self.get(j - 1, j)).collect()
    }

    /// Every triple `a < b < c` where `|psi(a,c) - psi(a,b) psi(b,c)| > tolerance`.
    pub fn chaining_violations(&self, tolerance: f64) -> Vec<ChainViolation> {
        let n = self.len();
        let mut out = Vec::new();
        for a in 0..n {
            for c in a + 2..n {
                for b in a + 1..c {
                    let (direct, chained) = (self.at(a, c), self.at(a, b) * self.at(b, c));
                    if (direct - chained).abs() > tolerance {
                        out.push(ChainViolation {
                            a,
                            b,
                            c,
                            direct,
                            chained,
                        });
                    }
                }
            }
        }
        out
    }

    fn at(&self, i: usize, j: usize) -> f64 {
        self.values[i][j - i]
    }
}

fn check_labels(labels: &[String], n: usize) -> Result<()> {
    if n == 0 || labels.len() != n {
        return Err(ModelError::Inconsistent(format!(
            "a scalability matrix needs one label per system size ({n}), got {}",
            labels.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(n: usize) -> Vec<String> {
        (0..n).map(|i| i.to_string()).collect()
    }

    #[test]
    fn matrix_from_times_chains_exactly() {
        let m = ScalabilityMatrix::from_times(labels(4), &[1.0, 2.0, 3.0, 5.0]).unwrap();
        assert_eq!(m.get(0, 3), Some(0.2));
        assert_eq!(m.get(2, 1), None);
        assert!(m.chaining_violations(1e-12).is_empty());
        let again = ScalabilityMatrix::from_superdiagonal(labels(4), &m.superdiagonal()).unwrap();
        for i in 0..4 {
            for j in i..4 {
                assert!((again.get(i, j).unwrap() - m.get(i, j).unwrap()).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn violations_are_reported_where_they_are() {
        let rows = vec![vec![1.0, 0.5, 0.3], vec![1.0, 0.5], vec![1.0]];
        let m = ScalabilityMatrix::from_rows(labels(3), rows).unwrap();
        let v = m.chaining_violations(0.01);
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].a, v[0].b, v[0].c), (0, 1, 2));
        assert!((v[0].chained - 0.25).abs() < 1e-12);
    }

    #[test]
    fn malformed_matrices_are_errors() {
        assert!(ScalabilityMatrix::from_rows(labels(2), vec![vec![1.0], vec![1.0]]).is_err());
        assert!(ScalabilityMatrix::from_times(labels(3), &[1.0, 2.0]).is_err());
        assert!(ScalabilityMatrix::from_times(vec![], &[]).is_err());
        assert!(ScalabilityMatrix::from_times(labels(2), &[1.0, 0.0]).is_err());
    }
}
