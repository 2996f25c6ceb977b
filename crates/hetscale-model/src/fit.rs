//! Least-squares fits: the papers' polynomial trend lines, the overhead model
//! `T(N) = a W(N) / C + T_o(N)` with `T_o` a polynomial in `N`, and [`fit_linear`], the
//! weighted linear fit with standard errors and 95% intervals that calibrating a machine model
//! needs.

use crate::error::{ModelError, Result};
use faer::linalg::solvers::SolveLstsq;
use faer::{Mat, MatRef};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The adjusted `R^2` below which a fit is too poor to invert into a size (Extra-P's quality
/// measures; a fit with as many coefficients as samples is judged by `R^2`).
pub const MIN_ADJUSTED_R_SQUARED: f64 = 0.9;

/// How well a fit explains its samples, with Extra-P's measures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FitQuality {
    /// Coefficient of determination `R^2` (1 is a perfect fit).
    pub r_squared: f64,
    /// `R^2` adjusted for the number of coefficients `k`: `1 - (1 - R^2)(m - 1)/(m - k)`;
    /// `None` when there are no more samples `m` than coefficients.
    pub adjusted_r_squared: Option<f64>,
    /// Symmetric mean absolute percentage error, % (0 to 200).
    pub smape_percent: f64,
    /// Root-mean-square residual, in the unit of the fitted quantity.
    pub rmse: f64,
    /// Root-mean-square error of predicting each sample from a fit to the others
    /// (leave-one-out cross-validation), in the unit of the fitted quantity; `None` when
    /// leaving a sample out leaves fewer samples than coefficients.
    pub loo_cv_rmse: Option<f64>,
    /// Number of samples.
    pub samples: usize,
}

impl FitQuality {
    /// Why the fit is too poor to invert (adjusted `R^2`, else `R^2`, below
    /// [`MIN_ADJUSTED_R_SQUARED`]), or `None` when it is good enough.
    pub fn poor(&self) -> Option<String> {
        let (name, value) = match self.adjusted_r_squared {
            Some(adjusted) => ("adjusted R^2", adjusted),
            None => ("R^2", self.r_squared),
        };
        (value.is_nan() || value < MIN_ADJUSTED_R_SQUARED).then(|| {
            format!(
                "{name} = {value:.3} < {MIN_ADJUSTED_R_SQUARED} (SMAPE {:.1}%)",
                self.smape_percent
            )
        })
    }
}

/// Solves `min || X b - y ||` for `b`, where `columns` are the columns of `X`.
pub fn least_squares(columns: &[Vec<f64>], y: &[f64]) -> Result<(Vec<f64>, FitQuality)> {
    let coef = solve_least_squares(columns, y)?;
    let predicted = predict(columns, &coef);
    let mut q = quality(y, &predicted, coef.len());
    q.loo_cv_rmse = leave_one_out_rmse(columns, y);
    Ok((coef, q))
}

fn predict(columns: &[Vec<f64>], coef: &[f64]) -> Vec<f64> {
    (0..columns[0].len())
        .map(|i| coef.iter().zip(columns).map(|(c, col)| c * col[i]).sum())
        .collect()
}

/// Each sample predicted by a fit to the others; `None` when too few remain to fit.
fn leave_one_out_rmse(columns: &[Vec<f64>], y: &[f64]) -> Option<f64> {
    let (m, k) = (y.len(), columns.len());
    if m <= k {
        return None;
    }
    let mut sum = 0.0;
    for out in 0..m {
        let keep = |v: &[f64]| -> Vec<f64> {
            v.iter()
                .enumerate()
                .filter(|(i, _)| *i != out)
                .map(|(_, x)| *x)
                .collect()
        };
        let rest: Vec<Vec<f64>> = columns.iter().map(|c| keep(c)).collect();
        let coef = solve_least_squares(&rest, &keep(y)).ok()?;
        let guess: f64 = coef.iter().zip(columns).map(|(c, col)| c * col[out]).sum();
        sum += (y[out] - guess).powi(2);
    }
    Some((sum / m as f64).sqrt())
}

fn solve_least_squares(columns: &[Vec<f64>], y: &[f64]) -> Result<Vec<f64>> {
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
    Ok(coef)
}

/// The quality of `predicted` against `y` for a fit of `coefficients` coefficients
/// (leave-one-out left to the caller, who can refit).
fn quality(y: &[f64], predicted: &[f64], coefficients: usize) -> FitQuality {
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
    let m = y.len();
    let adjusted_r_squared = (m > coefficients)
        .then(|| 1.0 - (1.0 - r_squared) * (m as f64 - 1.0) / (m - coefficients) as f64);
    let smape = y
        .iter()
        .zip(predicted)
        .map(|(a, b)| match a.abs() + b.abs() {
            0.0 => 0.0,
            sum => 2.0 * (a - b).abs() / sum,
        })
        .sum::<f64>()
        / n;
    FitQuality {
        r_squared,
        adjusted_r_squared,
        smape_percent: 100.0 * smape,
        rmse: (ss_res / n).sqrt(),
        loo_cv_rmse: None,
        samples: m,
    }
}

/// One coefficient of a [`LinearFit`], with its uncertainty.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parameter {
    /// The name the caller gave its column.
    pub name: String,
    /// The least-squares estimate.
    pub estimate: f64,
    /// Standard error of the estimate; `None` when the runs determine the fit exactly
    /// (as many runs as parameters), which leaves nothing to estimate the noise from.
    pub std_error: Option<f64>,
    /// 95% confidence interval (Student t at the fit's degrees of freedom); `None` exactly
    /// when `std_error` is.
    pub ci95: Option<(f64, f64)>,
}

/// A weighted linear least-squares fit `y ~ sum_j b_j x_j` (see [`fit_linear`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinearFit {
    /// One per column, in the columns' order.
    pub parameters: Vec<Parameter>,
    /// `y_i - fitted_i` per run, in `y`'s unit (not weighted).
    pub residuals: Vec<f64>,
    /// The model's value per run.
    pub fitted: Vec<f64>,
    /// Degrees of freedom: runs minus parameters.
    pub dof: usize,
    /// `R^2` and RMSE of the unweighted residuals, in `y`'s unit.
    pub quality: FitQuality,
}

/// Below this, a column's part outside the span of the columns before it, relative to its
/// norm, is rounding: the column repeats them and its coefficient is not identified.
const DEPENDENT: f64 = 1e-9;

/// A column counts among those another one repeats when its share of it is above this.
const PARTNER: f64 = 1e-6;

/// Fits `y_i ~ sum_j b_j columns[j][i]` by weighted least squares, minimising
/// `sum_i (w_i (y_i - fitted_i))^2`: a weight multiplies its run's residual, so `w_i = 1 / y_i`
/// fits relative errors. Standard errors are the square roots of the diagonal of
/// `s^2 (X^T W X)^{-1}` with `W = diag(w_i^2)` and `s^2 = SSR_w / (m - k)` (`m` runs, `k`
/// parameters); the 95% intervals use Student's t at `m - k` degrees of freedom. With
/// `m == k` the estimates are exact and `std_error` and `ci95` are `None`.
///
/// Runs are counted from 1 in messages. Refused, one line each, naming the parameter: fewer
/// runs than parameters, a column that is zero in every run, a column that is a linear
/// combination of earlier ones (the later one is named), non-finite values, and weights that
/// are not positive and finite.
pub fn fit_linear(
    names: &[&str],
    columns: &[Vec<f64>],
    y: &[f64],
    weights: Option<&[f64]>,
) -> Result<LinearFit> {
    check_linear_inputs(names, columns, y, weights)?;
    let (m, k) = (y.len(), columns.len());
    let weight = |i: usize| weights.map_or(1.0, |w| w[i]);
    let design = ScaledDesign::new(names, columns, y, &weight)?;
    let (x, y_scale) = (&design.x, design.y_scale);
    let qr = x.qr();
    check_identified(names, x.as_ref(), qr.thin_R())?;
    let solution = qr.solve_lstsq(&design.y);
    let unscale: Vec<f64> = design.column_scale.iter().map(|s| y_scale / s).collect();
    let estimates: Vec<f64> = (0..k).map(|j| solution[(j, 0)] * unscale[j]).collect();
    let fitted: Vec<f64> = (0..m)
        .map(|i| (0..k).map(|j| estimates[j] * columns[j][i]).sum())
        .collect();
    let residuals: Vec<f64> = y.iter().zip(&fitted).map(|(y, f)| y - f).collect();
    if estimates.iter().chain(&fitted).any(|v| !v.is_finite()) {
        return Err(ModelError::Inconsistent(
            "the linear fit overflowed: rescale the runs' values (e.g. to seconds and Mflop)"
                .into(),
        ));
    }
    let dof = m - k;
    let scaled_ssr: f64 = (0..m)
        .map(|i| (weight(i) * residuals[i] / y_scale).powi(2))
        .sum();
    let spreads = standard_errors(qr.thin_R(), scaled_ssr, dof)?;
    let parameters = names
        .iter()
        .zip(&estimates)
        .enumerate()
        .map(|(j, (name, &estimate))| {
            let uncertainty = spreads.as_ref().map(|(t, se)| (t, se[j] * unscale[j]));
            Parameter {
                name: (*name).to_owned(),
                estimate,
                std_error: uncertainty.map(|(_, se)| se),
                ci95: uncertainty.map(|(t, se)| (estimate - t * se, estimate + t * se)),
            }
        })
        .collect();
    Ok(LinearFit {
        parameters,
        quality: quality(y, &fitted, k),
        residuals,
        fitted,
        dof,
    })
}

/// The weighted rows of a linear fit, each column and `y` scaled to unit max: `N^3` beside 1
/// stays well conditioned, and squares of huge values do not overflow.
struct ScaledDesign {
    x: Mat<f64>,
    y: Mat<f64>,
    column_scale: Vec<f64>,
    y_scale: f64,
}

impl ScaledDesign {
    fn new(
        names: &[&str],
        columns: &[Vec<f64>],
        y: &[f64],
        weight: &dyn Fn(usize) -> f64,
    ) -> Result<Self> {
        let weighted: Vec<Vec<f64>> = columns
            .iter()
            .map(|c| c.iter().enumerate().map(|(i, x)| weight(i) * x).collect())
            .collect();
        let column_scale: Vec<f64> = weighted.iter().map(|c| max_abs(c)).collect();
        if let Some(j) = column_scale.iter().position(|&s| s == 0.0) {
            return Err(not_identified(
                names[j],
                "it multiplies 0 in every run; add runs in which it matters or fix it",
            ));
        }
        let weighted_y: Vec<f64> = y.iter().enumerate().map(|(i, v)| weight(i) * v).collect();
        let y_scale = Some(max_abs(&weighted_y))
            .filter(|&s| s > 0.0)
            .unwrap_or(1.0);
        Ok(Self {
            x: Mat::from_fn(y.len(), columns.len(), |i, j| {
                weighted[j][i] / column_scale[j]
            }),
            y: Mat::from_fn(y.len(), 1, |i, _| weighted_y[i] / y_scale),
            column_scale,
            y_scale,
        })
    }
}

fn max_abs(values: &[f64]) -> f64 {
    values.iter().fold(0.0, |a: f64, v| a.max(v.abs()))
}

fn not_identified(name: &str, why: &str) -> ModelError {
    ModelError::Inconsistent(format!(
        "parameter \"{name}\" is not identified by these runs: {why}"
    ))
}

/// Shapes, counts and finiteness, each refusal naming what to fix.
fn check_linear_inputs(
    names: &[&str],
    columns: &[Vec<f64>],
    y: &[f64],
    weights: Option<&[f64]>,
) -> Result<()> {
    let refuse = |message: String| Err(ModelError::Inconsistent(message));
    let (m, k) = (y.len(), columns.len());
    if k == 0 {
        return refuse("nothing to fit: give at least one parameter".into());
    }
    if names.len() != k {
        return refuse(format!(
            "{} parameter names for {k} columns: name every column",
            names.len()
        ));
    }
    if m < k {
        return refuse(format!(
            "calibrating {k} parameters needs at least {k} runs, got {m}: add runs at other sizes or fix a parameter"
        ));
    }
    for (name, column) in names.iter().zip(columns) {
        if column.len() != m {
            return refuse(format!(
                "parameter \"{name}\" has {} values for {m} runs: give one value per run",
                column.len()
            ));
        }
        if let Some(i) = column.iter().position(|v| !v.is_finite()) {
            return refuse(format!(
                "parameter \"{name}\" multiplies {} in run {}: every value must be finite",
                column[i],
                i + 1
            ));
        }
    }
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return refuse(format!(
            "the measured value of run {} is {}: every value must be finite",
            i + 1,
            y[i]
        ));
    }
    match weights {
        Some(w) if w.len() != m => refuse(format!(
            "{} weights for {m} runs: give one weight per run",
            w.len()
        )),
        Some(w) => match w.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
            Some(i) => refuse(format!(
                "the weight of run {} is {}: weights must be positive and finite",
                i + 1,
                w[i]
            )),
            None => Ok(()),
        },
        None => Ok(()),
    }
}

/// Refuses the first column (in order) whose part outside the span of the columns before it
/// is rounding, naming the earlier columns it repeats. `r` is the `R` of `x = QR`; `|r_jj|`
/// is the norm of column `j`'s part orthogonal to columns `0..j`.
fn check_identified(names: &[&str], x: MatRef<'_, f64>, r: MatRef<'_, f64>) -> Result<()> {
    let norms: Vec<f64> = (0..x.ncols()).map(|j| x.col(j).norm_l2()).collect();
    let Some(j) = (0..x.ncols()).find(|&j| r[(j, j)].abs() <= DEPENDENT * norms[j]) else {
        return Ok(());
    };
    // Column j = sum_i c_i column i over i < j, with R[..j, ..j] c = R[..j, j].
    let mut c = r.get(..j, j..j + 1).to_owned();
    r.get(..j, ..j).solve_upper_triangular_in_place(c.as_mut());
    let mut partners: Vec<String> = (0..j)
        .filter(|&i| c[(i, 0)].abs() * norms[i] > PARTNER * norms[j])
        .map(|i| format!("\"{}\"", names[i]))
        .collect();
    if partners.is_empty() {
        partners = names[..j].iter().map(|n| format!("\"{n}\"")).collect();
    }
    Err(not_identified(
        names[j],
        &format!(
            "its column is a linear combination of those of {}; add runs that vary them independently or fix one of them",
            partners.join(", ")
        ),
    ))
}

/// The Student t quantile for 95% and the standard error of each scaled coefficient,
/// `s sqrt(diag((R^T R)^{-1}))`; `None` without degrees of freedom.
fn standard_errors(
    r: MatRef<'_, f64>,
    scaled_ssr: f64,
    dof: usize,
) -> Result<Option<(f64, Vec<f64>)>> {
    if dof == 0 {
        return Ok(None);
    }
    let t = StudentsT::new(0.0, 1.0, dof as f64)
        .map_err(|e| ModelError::Fit {
            what: "confidence intervals",
            why: e.to_string(),
        })?
        .inverse_cdf(0.975);
    let s = (scaled_ssr / dof as f64).sqrt();
    let k = r.ncols();
    let mut r_inverse = Mat::<f64>::identity(k, k);
    r.solve_upper_triangular_in_place(r_inverse.as_mut());
    let se = (0..k).map(|j| s * r_inverse.row(j).norm_l2()).collect();
    Ok(Some((t, se)))
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
    /// The overhead `T_o(N)`, s.
    #[serde(rename = "overhead_s")]
    pub overhead: Polynomial,
    /// The marked speed `C` the model was fitted with, flop/s (the unit of `W / T`).
    #[serde(rename = "marked_speed_flops")]
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

/// The 95% prediction interval of what a run will measure when a model predicts `predicted`
/// seconds for it, from the model's relative errors `e_i = (model - measured) / measured` on
/// runs it was not fitted on: with `r_i = ln(1 + e_i)` (the log of model over measured, times
/// being positive) and their root mean square `s` over `n` errors, `predicted exp(-/+ t s
/// sqrt(1 + 1/n))`, `t` Student's 97.5% quantile on `n` degrees of freedom. The errors are
/// taken as centred on the prediction, a bias among them widening the interval rather than
/// moving it: the bias of a fit on fewer configurations (leaving one out) is not the bias of
/// the fit on all of them. `None` with fewer than 3 errors, or one that is not finite and
/// above -1.
pub fn interval_from_errors(predicted: f64, rel_errors: &[f64]) -> Option<(f64, f64)> {
    let n = rel_errors.len();
    if n < 3 || !predicted.is_finite() || rel_errors.iter().any(|e| !(e.is_finite() && *e > -1.0)) {
        return None;
    }
    let s = (rel_errors.iter().map(|e| e.ln_1p().powi(2)).sum::<f64>() / n as f64).sqrt();
    let t = StudentsT::new(0.0, 1.0, n as f64).ok()?.inverse_cdf(0.975);
    let half = t * s * (1.0 + 1.0 / n as f64).sqrt();
    Some((predicted * (-half).exp(), predicted * half.exp()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_from_held_out_errors_is_their_spread_on_the_log_scale() {
        // Log-ratios -0.1, 0, +0.1: rms s = sqrt(0.02 / 3), t(3) = 3.182, sqrt(4/3).
        let errors: Vec<f64> = [-0.1_f64, 0.0, 0.1].iter().map(|r| r.exp() - 1.0).collect();
        let (lo, hi) = interval_from_errors(2.0, &errors).unwrap();
        let half = 3.182_446_305_284_263 * (0.02_f64 / 3.0).sqrt() * (4.0_f64 / 3.0).sqrt();
        assert!((lo - 2.0 * (-half).exp()).abs() < 1e-9, "{lo}");
        assert!((hi - 2.0 * half.exp()).abs() < 1e-9, "{hi}");
        // A bias widens the interval around the prediction; it does not move it.
        let (lo, hi) = interval_from_errors(10.0, &[0.25, 0.25, 0.25]).unwrap();
        assert!(lo < 8.0 && hi > 12.5 && ((lo * hi).sqrt() - 10.0).abs() < 1e-9);
        // Exact held-out predictions: the interval is the prediction.
        assert_eq!(interval_from_errors(3.0, &[0.0; 4]), Some((3.0, 3.0)));
        // Too few errors, or one that is not a relative error, give none.
        assert_eq!(interval_from_errors(1.0, &[0.1, 0.2]), None);
        assert_eq!(interval_from_errors(1.0, &[0.1, -1.0, 0.2]), None);
        assert_eq!(interval_from_errors(1.0, &[0.1, f64::NAN, 0.2]), None);
    }

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
    fn quality_has_adjusted_r_squared_smape_and_leave_one_out_error() {
        // The line through (0, 0), (1, 2), (2, 2), (3, 4) is 0.2 + 1.2 x: residuals -0.2, 0.6, -0.6, 0.2.
        let (x, y) = ([0.0, 1.0, 2.0, 3.0], [0.0, 2.0, 2.0, 4.0]);
        let (_, q) = polyfit(&x, &y, 1).unwrap();
        assert!((q.r_squared - 0.9).abs() < 1e-12, "{q:?}");
        assert!(
            (q.adjusted_r_squared.unwrap() - 0.85).abs() < 1e-12,
            "{q:?}"
        );
        let smape =
            100.0 / 4.0 * (2.0 * 0.2 / 0.2 + 2.0 * 0.6 / 3.4 + 2.0 * 0.6 / 4.6 + 2.0 * 0.2 / 7.8);
        assert!((q.smape_percent - smape).abs() < 1e-9, "{q:?}");
        // Leaving each out, the line through the other three predicts it off by 2/3, 6/7, 6/7, 2/3.
        let loo = ((2.0 * 4.0 / 9.0 + 2.0 * 36.0 / 49.0) / 4.0_f64).sqrt();
        assert!(
            (q.loo_cv_rmse.unwrap() - loo).abs() < 1e-9,
            "{q:?} vs {loo}"
        );
        assert_eq!(
            q.poor().as_deref(),
            Some("adjusted R^2 = 0.850 < 0.9 (SMAPE 66.6%)")
        );
        let (_, exact) = polyfit(&x[..2], &y[..2], 1).unwrap();
        assert_eq!((exact.adjusted_r_squared, exact.loo_cv_rmse), (None, None));
        assert_eq!(exact.poor(), None);
    }

    #[test]
    fn too_few_or_bad_samples_are_errors() {
        assert!(polyfit(&[1.0, 2.0], &[1.0, 2.0], 2).is_err());
        assert!(polyfit(&[1.0, 2.0, f64::NAN], &[1.0, 2.0, 3.0], 1).is_err());
        assert!(polyfit(&[1.0, 2.0], &[1.0], 1).is_err());
    }
}
