//! Approach 2, computed (Chen, Sun & Wu section 4.4): sample `E_s(N)` around the target on
//! each configuration, fit the overhead model `T(N) = a W(N) / C + T_o(N)` (and the papers'
//! polynomial trend line of `E_s` against `N`), and invert the fit for the target.

use crate::study::warnings::with_range_advice;
use hetscale_model::fit::{FitQuality, OverheadModel, Polynomial, polyfit};
use hetscale_model::root::solve_for_target;
use serde::Serialize;

use crate::approaches::measured::{Bracket, Bracketing, bracket};
use crate::approaches::uncertainty::{FittedCurve, fitted_size_interval};
use crate::error::{Result, StudyError};
use crate::runner::{Measurement, Runner};

/// A fit's quality of times, as JSON gives it: its root-mean-square errors are in seconds.
#[derive(Serialize)]
struct QualityOfTimes {
    r_squared: f64,
    adjusted_r_squared: Option<f64>,
    smape_percent: f64,
    rmse_s: f64,
    loo_cv_rmse_s: Option<f64>,
    samples: usize,
}

fn quality_of_times<S: serde::Serializer>(
    quality: &FitQuality,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    QualityOfTimes {
        r_squared: quality.r_squared,
        adjusted_r_squared: quality.adjusted_r_squared,
        smape_percent: quality.smape_percent,
        rmse_s: quality.rmse,
        loo_cv_rmse_s: quality.loo_cv_rmse,
        samples: quality.samples,
    }
    .serialize(serializer)
}

/// The fits of one configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComputedFit {
    /// Configuration label.
    pub configuration: String,
    /// The sizes fitted, with their median time and `E_s`.
    pub samples: Vec<Measurement>,
    /// `T(N) = a W(N) / C + T_o(N)`.
    pub model: OverheadModel,
    /// How well it fits the times (in JSON its errors name their unit: `rmse_s`).
    #[serde(serialize_with = "quality_of_times")]
    pub model_quality: FitQuality,
    /// Why the model fits too poorly to be inverted into a size, if it does.
    pub poor_fit: Option<String>,
    /// The size where the model's `E_s` meets the target; `None` for a poor fit.
    #[serde(rename = "n_root")]
    pub n: Option<f64>,
    /// 95% interval of `n` from a residual bootstrap of the fit (see
    /// [`crate::approaches::uncertainty::fitted_size_interval`]); `None` without `n` or residuals to resample.
    pub n_ci95: Option<(f64, f64)>,
    /// The papers' polynomial trend line of `E_s` against `N`.
    pub trend: Polynomial,
    /// How well it fits the speed-efficiencies.
    pub trend_quality: FitQuality,
    /// The size where the trend line meets the target, if it does within the samples and the
    /// line fits well enough to be inverted.
    pub n_trend: Option<f64>,
}

/// Samples configuration `index` around the target (bracketing from `start` unless earlier
/// measurements bracket it already), fits and inverts.
pub fn compute(runner: &Runner<'_>, index: usize, start: u64) -> Result<ComputedFit> {
    let spec = runner.spec();
    let (lo, hi) = sampling_window(runner, index, start)?;
    for n in geometric_sizes(lo, hi, spec.samples as usize) {
        runner.measure(index, n)?;
    }
    let samples: Vec<Measurement> = runner
        .measurements_of(index)
        .into_iter()
        .filter(|m| (lo..=hi).contains(&m.n))
        .collect();
    fit(runner, index, samples)
}

/// The window sampled: from half the largest size below the target to 1.5 times the smallest
/// size above it, so the fit sees the curve on both sides of the crossing.
fn sampling_window(runner: &Runner<'_>, index: usize, start: u64) -> Result<(u64, u64)> {
    let spec = runner.spec();
    let b = match known_bracket(runner, index) {
        Some(b) => b,
        None => match bracket(runner, index, start)? {
            Bracketing::Between(b) => b,
            Bracketing::Hit(m) => Bracket {
                below: m.clone(),
                above: m,
            },
        },
    };
    let lo = (b.below.n / 2).max(spec.n_min);
    let hi = (b.above.n + b.above.n / 2).min(spec.n_max);
    Ok((lo, hi.max(lo + 1)))
}

/// The tightest bracket of the target among the sizes measured so far, if any.
fn known_bracket(runner: &Runner<'_>, index: usize) -> Option<Bracket> {
    let target = runner.spec().target;
    let measured = runner.measurements_of(index);
    let below = measured
        .iter()
        .filter(|m| m.speed_efficiency <= target)
        .max_by_key(|m| m.n)?;
    let above = measured
        .iter()
        .filter(|m| m.speed_efficiency >= target && m.n > below.n)
        .min_by_key(|m| m.n)?;
    Some(Bracket {
        below: below.clone(),
        above: above.clone(),
    })
}

/// `count` sizes spread geometrically over `[lo, hi]`, ends included, without repeats.
fn geometric_sizes(lo: u64, hi: u64, count: usize) -> Vec<u64> {
    let count = count.max(2);
    let ratio = (hi as f64 / lo as f64).powf(1.0 / (count - 1) as f64);
    let mut sizes: Vec<u64> = (0..count)
        .map(|k| (lo as f64 * ratio.powi(k as i32)).round() as u64)
        .collect();
    sizes.dedup();
    sizes
}

/// The size in `[lo, hi]` where `fit`'s model gives speed-efficiency `level` on configuration
/// `index`, if it reaches it there.
pub fn size_at_level(
    runner: &Runner<'_>,
    index: usize,
    fit: &ComputedFit,
    level: f64,
    (lo, hi): (f64, f64),
) -> Option<f64> {
    let config = &runner.configurations()[index].configuration;
    let efficiency = |n: f64| {
        let w = runner.work(index, n);
        Ok(w / (fit.model.time(n, w) * config.marked_speed))
    };
    solve_for_target(efficiency, level, lo, hi, "fitted speed-efficiency").ok()
}

fn fit(runner: &Runner<'_>, index: usize, samples: Vec<Measurement>) -> Result<ComputedFit> {
    let spec = runner.spec();
    let config = &runner.configurations()[index].configuration;
    let range = crate::study::warnings::range_of(spec.surface);
    let too_few = |what: &str| StudyError::Configuration {
        configuration: config.label.clone(),
        message: format!(
            "{} sizes sampled are too few to fit {what}: raise samples or widen [{}, {}]",
            samples.len(),
            range.n_min,
            range.n_max
        ),
    };
    // The model has a, and degree + 1 overhead coefficients; keep one sample to spare.
    let degree = (spec.overhead_degree as usize).min(samples.len().saturating_sub(3));
    if samples.len() < 3 {
        return Err(too_few("the overhead model"));
    }
    let work = |n: f64| Ok(runner.work(index, n));
    let degree = separable_degree(degree, &samples, |n| runner.work(index, n));
    let points: Vec<(f64, f64)> = samples
        .iter()
        .map(|m| (m.n as f64, m.time.median))
        .collect();
    let (model, model_quality) = OverheadModel::fit(&points, work, config.marked_speed, degree)?;
    let (lo, hi) = (points[0].0, points[points.len() - 1].0);
    let model_efficiency = |n: f64| {
        let w = work(n)?;
        Ok(w / (model.time(n, w) * config.marked_speed))
    };
    let poor_fit = model_quality
        .poor()
        .map(|why| format!("the fit of T(N) is too poor to invert into an N: {why}"));
    let n = match poor_fit {
        Some(_) => None,
        None => Some(
            solve_for_target(
                model_efficiency,
                spec.target,
                lo,
                hi,
                "fitted speed-efficiency",
            )
            .map_err(|e| {
                with_range_advice(
                    e,
                    &config.label,
                    crate::study::warnings::range_of(spec.surface),
                )
            })?,
        ),
    };
    let n_ci95 = n.and_then(|n| {
        let work = |n: f64| runner.work(index, n);
        let curve = FittedCurve {
            samples: &points,
            model: &model,
            degree,
            work: &work,
            n,
        };
        fitted_size_interval(&curve, spec.target, (lo, hi))
    });
    let sizes: Vec<f64> = points.iter().map(|p| p.0).collect();
    let efficiencies: Vec<f64> = samples.iter().map(|m| m.speed_efficiency).collect();
    let trend_degree = if samples.len() >= 5 {
        3
    } else {
        samples.len() - 2
    };
    let (trend, trend_quality) = polyfit(&sizes, &efficiencies, trend_degree)?;
    let n_trend = trend_quality
        .poor()
        .is_none()
        .then(|| solve_for_target(|n| Ok(trend.eval(n)), spec.target, lo, hi, "trend line").ok())
        .flatten();
    Ok(ComputedFit {
        configuration: config.label.clone(),
        samples,
        model,
        model_quality,
        poor_fit,
        n,
        n_ci95,
        trend,
        trend_quality,
        n_trend,
    })
}

/// The overhead polynomial's degree, lowered below `k` when the work is itself a polynomial of
/// degree `k <= degree` in `N` (a command's `W = 2 n^2`, a dot product's `2 N - 1`): `a W / C`
/// would then be a combination of `T_o`'s columns, and the fit could not tell them apart.
fn separable_degree(degree: usize, samples: &[Measurement], work: impl Fn(f64) -> f64) -> usize {
    let sizes: Vec<f64> = samples.iter().map(|m| m.n as f64).collect();
    let works: Vec<f64> = sizes.iter().map(|&n| work(n)).collect();
    let is_polynomial_of = |k: usize| {
        // More samples than coefficients, or any k-degree fit would be exact.
        sizes.len() > k + 1
            && polyfit(&sizes, &works, k).is_ok_and(|(fit, _)| {
                sizes
                    .iter()
                    .zip(&works)
                    .all(|(&n, &w)| (fit.eval(n) - w).abs() <= 1e-6 * w.abs().max(1.0))
            })
    };
    (1..=degree)
        .find(|&k| is_polynomial_of(k))
        .map_or(degree, |k| k - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometric_sizes_cover_the_window_without_repeats() {
        assert_eq!(geometric_sizes(100, 800, 4), vec![100, 200, 400, 800]);
        assert_eq!(geometric_sizes(10, 11, 5), vec![10, 11]);
        assert_eq!(geometric_sizes(7, 9, 1), vec![7, 9]);
    }
}
