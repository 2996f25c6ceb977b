//! Least-squares fits: the papers' polynomial trend lines and the overhead model
//! `T(N) = a W(N) / C + T_o(N)` with `T_o` a polynomial in `N`.

use crate::error::{ModelError, Result};
use faer::Mat;
use faer::linalg::solvers::SolveLstsq;
use serde::Serialize;

/// How well a fit explains its samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FitQuality {
    /// Coefficient of determination `R^2` (1 is a perfect fit).
    pub r_squared: f64,
    /// Root-mean-square residual, in the unit of the fitted quantity.
    pub rmse: f64,
    /// Number of samples.
    pub samples: usize,
}

/// Solves `min || X b - y ||` for `b`, where `columns` are the columns of `X`.
pub fn least_squares(columns: &[Vec<f64>], y: &[f64]) -> Result<(Vec<f64>, FitQuality)> {
    let (m, k) = (y.len(), columns.len());
    if k == 0 || m < k || columns.iter().any(|c| c.len() != m) {
        return Err(ModelError::Fit {
            what: "least squares",
            why: format!("need at least {k} samples for {k} unknowns and equal lengths, got {m}"),
        });
    }
    if columns.iter().flatten().chain(y).any(|v| !v.is_finite()) {
        return Err(ModelError::Fit {
            what: "least squares",
            why: "samples must be finite".into(),
        });
    }
    // Scaling each column to unit max keeps N^3 next to 1 well conditioned.
    let scale: Vec<f64> = columns
        .iter()
        .map(|c| c.iter().fold(0.0, |a: f64, v| a.max(v.abs())))
        .collect();
    if scale.contains(&0.0) {
        return Err(ModelError::Fit {
            what: "least squares",
            why: "a regressor is identically zero".into(),
        });
    }
    let x = Mat::from_fn(m, k, |i, j| columns[j][i] / scale[j]);
    let rhs = Mat::from_fn(m, 1, |i, _| y[i]);
    let sol = x.qr().solve_lstsq(&rhs);
    let coef: Vec<f64> = (0..k).map(|j| sol[(j, 0)] / scale[j]).collect();
    if coef.iter().any(|c| !c.is_finite()) {
        return Err(ModelError::Fit {
            what: "least squares",
            why: "the design is singular (repeated samples?)".into(),
        });
    }
    let predicted: Vec<f64> = (0..m)
        .map(|i| (0..k).map(|j| coef[j] * columns[j][i]).sum())
        .collect();
    Ok((coef, quality(y, &predicted)))
}

fn quality(y: &[f64], predicted: &[f64]) -> FitQuality {
    let n = y.len() as f64;
    let mean = y.iter().sum::<f64>() / n;
    let ss_res: f64 = y.iter().zip(predicted).map(|(a, b)| (a - b).powi(2)).sum();
    let ss_tot: f64 = y.iter().map(|a| (a - mean).powi(2)).sum();
    let r_squared = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else if ss_res == 0.0 {
        1.0
    } else {
        0.0
    };
    FitQuality {
        r_squared,
        rmse: (ss_res / n).sqrt(),
        samples: y.len(),
    }
}

/// A polynomial `c_0 + c_1 x + ... + c_d x^d`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Polynomial {
    /// Coefficients from the constant term up.
    pub coefficients: Vec<f64>,
}

impl Polynomial {
    /// Evaluates the polynomial at `x` (Horner).
    pub fn eval(&self, x: f64) -> f64 {
        self.coefficients
            .iter()
            .rev()
            .fold(0.0, |acc, c| acc * x + c)
    }
}

/// Fits a polynomial trend line of `degree` to `(x, y)` samples, as the JPDC paper fits
/// speed-efficiency against matrix size.
pub fn polyfit(x: &[f64], y: &[f64], degree: usize) -> Result<(Polynomial, FitQuality)> {
    if x.len() != y.len() {
        return Err(ModelError::Fit {
            what: "polynomial",
            why: "x and y differ in length".into(),
        });
    }
    let columns: Vec<Vec<f64>> = (0..=degree)
        .map(|d| x.iter().map(|v| v.powi(d as i32)).collect())
        .collect();
    let (coefficients, q) = least_squares(&columns, y)?;
    Ok((Polynomial { coefficients }, q))
}

/// `T(N) = a W(N) / C + T_o(N)`: compute time at an effective fraction `1/a` of the marked speed
/// plus an overhead polynomial in `N`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverheadModel {
    /// Compute-time factor `a` (1 means the node runs at its marked speed).
    pub a: f64,
    /// The overhead `T_o(N)`.
    pub overhead: Polynomial,
    /// The marked speed `C` the model was fitted with.
    pub marked_speed: f64,
}

impl OverheadModel {
    /// Fits the model to `(N, T)` samples with `T_o` of `degree`, given the work formula and `C`.
    pub fn fit(
        samples: &[(f64, f64)],
        work: impl Fn(f64) -> Result<f64>,
        marked_speed: f64,
        degree: usize,
    ) -> Result<(Self, FitQuality)> {
        crate::error::positive("marked_speed", marked_speed)?;
        let compute: Vec<f64> = samples
            .iter()
            .map(|&(n, _)| Ok(work(n)? / marked_speed))
            .collect::<Result<_>>()?;
        let mut columns = vec![compute];
        columns
            .extend((0..=degree).map(|d| samples.iter().map(|&(n, _)| n.powi(d as i32)).collect()));
        let times: Vec<f64> = samples.iter().map(|&(_, t)| t).collect();
        let (coef, q) = least_squares(&columns, &times)?;
        let overhead = Polynomial {
            coefficients: coef[1..].to_vec(),
        };
        Ok((
            Self {
                a: coef[0],
                overhead,
                marked_speed,
            },
            q,
        ))
    }

    /// Predicted time at size `n` with work `w = W(n)`.
    pub fn time(&self, n: f64, w: f64) -> f64 {
        self.a * w / self.marked_speed + self.overhead.eval(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polyfit_recovers_exact_cubic() {
        let x: Vec<f64> = (1..=8).map(|i| i as f64 * 100.0).collect();
        let y: Vec<f64> = x
            .iter()
            .map(|x| 3.0 - 0.5 * x + 2e-3 * x * x + 1e-6 * x * x * x)
            .collect();
        let (p, q) = polyfit(&x, &y, 3).unwrap();
        assert!((q.r_squared - 1.0).abs() < 1e-12);
        for (a, b) in p.coefficients.iter().zip([3.0, -0.5, 2e-3, 1e-6]) {
            assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{a} vs {b}");
        }
    }

    #[test]
    fn overhead_model_recovers_parameters() {
        let c = 100e6;
        let w = |n: f64| Ok(2.0 * n * n * n);
        let samples: Vec<(f64, f64)> = (1..=6)
            .map(|i| i as f64 * 200.0)
            .map(|n| (n, 1.25 * w(n).unwrap() / c + 0.01 + 2e-5 * n))
            .collect();
        let (m, q) = OverheadModel::fit(&samples, w, c, 1).unwrap();
        assert!((m.a - 1.25).abs() < 1e-9 && q.r_squared > 0.999_999);
        assert!((m.overhead.eval(0.0) - 0.01).abs() < 1e-9);
    }

    #[test]
    fn too_few_or_bad_samples_are_errors() {
        assert!(polyfit(&[1.0, 2.0], &[1.0, 2.0], 2).is_err());
        assert!(polyfit(&[1.0, 2.0, f64::NAN], &[1.0, 2.0, 3.0], 1).is_err());
        assert!(polyfit(&[1.0, 2.0], &[1.0], 1).is_err());
    }
}
