//! 95% intervals on sizes derived from runs (where the target `E_s` may lie given the noise
//! of the runs), and on the psi between two configurations those sizes give.

use hetscale_model::fit::OverheadModel;
use hetscale_model::root::solve_for_target;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::runner::Measurement;

/// Resamples of the computed fit's residual bootstrap: enough for stable 2.5% and 97.5%
/// percentiles, few enough to stay well under a second per configuration.
const RESAMPLES: usize = 400;
/// A fixed seed: the same runs give the same interval, on every machine and every re-derivation.
const BOOTSTRAP_SEED: u64 = 17;

/// The 95% interval of the size where `E_s(N)` meets `target`, from the interval of `E_s`
/// measured at `at` and the local slope of `E_s(N)` between the sizes measured nearest on each
/// side of it (`measured`: the configuration's sizes), widened to whole sizes and to hold
/// `at` itself (the search stopped there: the target is met within its tolerance); `None`
/// without a usable slope, or from a single run, whose noise is unknown.
pub fn size_interval(
    at: &Measurement,
    measured: &[Measurement],
    target: f64,
) -> Option<(f64, f64)> {
    if at.time.samples < 2 {
        return None;
    }
    let below = measured.iter().filter(|m| m.n < at.n).max_by_key(|m| m.n);
    let above = measured.iter().filter(|m| m.n > at.n).min_by_key(|m| m.n);
    let (a, b) = match (below, above) {
        (Some(a), Some(b)) => (a, b),
        (Some(a), None) => (a, at),
        (None, Some(b)) => (at, b),
        (None, None) => return None,
    };
    let slope = (b.speed_efficiency - a.speed_efficiency) / (b.n as f64 - a.n as f64);
    if !slope.is_finite() || slope == 0.0 {
        return None;
    }
    let (e_lo, e_hi) = at.speed_efficiency_ci;
    let size = |e: f64| (at.n as f64 + (target - e) / slope).max(1.0);
    let (x, y, n) = (size(e_lo), size(e_hi), at.n as f64);
    Some((x.min(y).min(n).floor(), x.max(y).max(n).ceil()))
}

/// What the computed approach fitted on one configuration, to be bootstrapped.
pub struct FittedCurve<'a> {
    /// The `(N, median T)` samples fitted.
    pub samples: &'a [(f64, f64)],
    /// The fit to them.
    pub model: &'a OverheadModel,
    /// The overhead polynomial's degree the fit used.
    pub degree: usize,
    /// `W(N)`, flop.
    pub work: &'a dyn Fn(f64) -> f64,
    /// The size where the fit meets the target.
    pub n: f64,
}

/// The 95% interval of the size where `curve`'s `E_s` meets `target` within `range`, by a
/// residual bootstrap: the samples' relative residuals from the fit (timing noise grows with
/// the time) are resampled onto the fitted times, refitted and inverted `RESAMPLES` times,
/// and the 2.5% and 97.5% percentiles of the sizes kept, widened to whole sizes and to hold
/// `curve.n`. A resample whose fit does not reach the target inside `range` counts as the
/// end of `range` it points past. `None` with no residual degree of freedom (the residuals
/// then say nothing of the noise) or when too many resamples cannot be fitted.
pub fn fitted_size_interval(
    curve: &FittedCurve<'_>,
    target: f64,
    range: (f64, f64),
) -> Option<(f64, f64)> {
    let coefficients = curve.degree + 2;
    let m = curve.samples.len();
    if m <= coefficients {
        return None;
    }
    let fitted: Vec<f64> = curve
        .samples
        .iter()
        .map(|&(n, _)| curve.model.time(n, (curve.work)(n)))
        .collect();
    let residuals = relative_residuals(curve.samples, &fitted, coefficients);
    if residuals.iter().all(|r| r.abs() < 1e-12) {
        // Exact times (the simulator): the only uncertainty is N being an integer.
        return Some((curve.n.floor(), curve.n.ceil()));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(BOOTSTRAP_SEED);
    let mut sizes: Vec<f64> = (0..RESAMPLES)
        .filter_map(|_| {
            let resample: Vec<(f64, f64)> = curve
                .samples
                .iter()
                .zip(&fitted)
                .map(|(&(n, _), &t)| (n, t * (1.0 + residuals[rng.random_range(0..m)])))
                .collect();
            refitted_size(curve, &resample, target, range)
        })
        .collect();
    if sizes.len() < RESAMPLES / 2 {
        return None;
    }
    sizes.sort_by(f64::total_cmp);
    let at = |q: f64| sizes[((q * (sizes.len() - 1) as f64).round()) as usize];
    Some((
        at(0.025).min(curve.n).floor(),
        at(0.975).max(curve.n).ceil(),
    ))
}

/// Residuals relative to the fit, centred and scaled up by `sqrt(m / (m - k))` for the
/// degrees of freedom the fit took (Davison & Hinkley's residual bootstrap).
fn relative_residuals(samples: &[(f64, f64)], fitted: &[f64], coefficients: usize) -> Vec<f64> {
    let m = samples.len() as f64;
    let raw: Vec<f64> = samples
        .iter()
        .zip(fitted)
        .map(|(&(_, t), &f)| (t - f) / f)
        .collect();
    let mean = raw.iter().sum::<f64>() / m;
    let inflate = (m / (m - coefficients as f64)).sqrt();
    raw.iter().map(|r| (r - mean) * inflate).collect()
}

/// The size where a refit of `curve` to `resample` meets `target`, or the end of `range` it
/// points past; `None` for a resample that cannot be fitted.
fn refitted_size(
    curve: &FittedCurve<'_>,
    resample: &[(f64, f64)],
    target: f64,
    (lo, hi): (f64, f64),
) -> Option<f64> {
    if resample.iter().any(|&(_, t)| t.is_nan() || t <= 0.0) {
        return None;
    }
    let speed = curve.model.marked_speed;
    let (model, _) =
        OverheadModel::fit(resample, |n| Ok((curve.work)(n)), speed, curve.degree).ok()?;
    let efficiency = |n: f64| {
        let w = (curve.work)(n);
        w / (model.time(n, w) * speed)
    };
    match solve_for_target(|n| Ok(efficiency(n)), target, lo, hi, "bootstrapped fit") {
        Ok(n) => Some(n),
        Err(_) if efficiency(hi) < target => Some(hi),
        Err(_) if efficiency(lo) > target => Some(lo),
        Err(_) => None,
    }
}

/// The 95% interval of `psi(C_i, C_j) = C_j W_i / (C_i W_j)` from the intervals of the two
/// works (`(value, interval)` each, the interval `None` when the work is known exactly): the
/// extremes of the ratio over both intervals, a conservative interval since it takes the two
/// errors as independent and adverse. `None` when neither work has an interval.
pub fn psi_interval(
    (c_i, w_i): (f64, (f64, Option<(f64, f64)>)),
    (c_j, w_j): (f64, (f64, Option<(f64, f64)>)),
) -> Option<(f64, f64)> {
    if w_i.1.is_none() && w_j.1.is_none() {
        return None;
    }
    let (i_lo, i_hi) = w_i.1.unwrap_or((w_i.0, w_i.0));
    let (j_lo, j_hi) = w_j.1.unwrap_or((w_j.0, w_j.0));
    let psi = |wi: f64, wj: f64| c_j * wi / (c_i * wj);
    Some((psi(i_lo, j_hi), psi(i_hi, j_lo)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    fn measured(n: u64, e_s: f64, ci: (f64, f64)) -> Measurement {
        Measurement {
            configuration: "C_2".into(),
            n,
            work: 1.0,
            time: summarize(&[1.0, 1.1, 0.9]).unwrap(),
            speed_efficiency: e_s,
            speed_efficiency_ci: ci,
        }
    }

    #[test]
    fn the_e_s_interval_maps_through_the_local_slope_onto_n() {
        // E_s rises 0.001 per unit of N around N = 300; at N = 300 it is 0.49 [0.45, 0.52].
        let sizes = [
            measured(200, 0.39, (0.39, 0.39)),
            measured(300, 0.49, (0.45, 0.52)),
            measured(400, 0.59, (0.59, 0.59)),
            measured(800, 0.8, (0.8, 0.8)),
        ];
        let (lo, hi) = size_interval(&sizes[1], &sizes, 0.5).unwrap();
        assert!(
            (lo - 280.0).abs() < 1e-9 && (hi - 350.0).abs() < 1e-9,
            "[{lo}, {hi}]"
        );
        // The largest size: the slope from its lower neighbour (0.21 / 400).
        let (lo, hi) = size_interval(&sizes[3], &sizes, 0.8).unwrap();
        assert!(
            (lo - 800.0).abs() < 1e-9 && (hi - 800.0).abs() < 1e-9,
            "[{lo}, {hi}]"
        );
        assert_eq!(size_interval(&sizes[1], &sizes[1..2], 0.5), None);
        // Runs that agree exactly (the simulator): from N to the crossing the slope puts at 310.
        let exact = Measurement {
            speed_efficiency_ci: (0.49, 0.49),
            ..sizes[1].clone()
        };
        assert_eq!(size_interval(&exact, &sizes, 0.5), Some((300.0, 310.0)));
        let flat = [
            measured(100, 0.5, (0.4, 0.6)),
            measured(200, 0.5, (0.5, 0.5)),
        ];
        assert_eq!(size_interval(&flat[0], &flat, 0.5), None);
        let once = Measurement {
            time: summarize(&[1.0]).unwrap(),
            ..sizes[1].clone()
        };
        assert_eq!(
            size_interval(&once, &sizes, 0.5),
            None,
            "one run: noise unknown"
        );
    }

    fn cubic_curve(samples: &[(f64, f64)], n: f64) -> Option<(f64, f64)> {
        let work = |n: f64| 2.0 * n * n * n;
        let (model, _) = OverheadModel::fit(samples, |n| Ok(work(n)), 1e9, 1).unwrap();
        let curve = FittedCurve {
            samples,
            model: &model,
            degree: 1,
            work: &work,
            n,
        };
        fitted_size_interval(&curve, 0.5, (100.0, 1000.0))
    }

    /// T = W / C + 0.024 + 1e-4 N on C = 1 Gflop/s: E_s = 0.5 where W / C = T_o, at N = 300.
    fn exact_time(n: f64) -> f64 {
        2.0 * n * n * n / 1e9 + 0.024 + 1e-4 * n
    }

    #[test]
    fn the_computed_size_interval_is_a_bootstrap_over_the_fit_residuals() {
        let sizes = [150.0, 200.0, 250.0, 300.0, 350.0, 400.0, 500.0];
        let exact: Vec<(f64, f64)> = sizes.iter().map(|&n| (n, exact_time(n))).collect();
        assert_eq!(
            cubic_curve(&exact, 300.3),
            Some((300.0, 301.0)),
            "no noise: N's rounding"
        );
        // +/- 10% noise in a fixed pattern: the interval holds N and is tens of sizes wide.
        let noise = [0.1, -0.1, 0.05, -0.08, 0.1, -0.05, -0.02];
        let noisy: Vec<(f64, f64)> = exact
            .iter()
            .zip(noise)
            .map(|(&(n, t), e)| (n, t * (1.0 + e)))
            .collect();
        let (lo, hi) = cubic_curve(&noisy, 300.0).unwrap();
        assert!(
            lo < 300.0 && hi > 300.0 && hi - lo > 10.0 && hi - lo < 200.0,
            "[{lo}, {hi}]"
        );
        assert_eq!(
            cubic_curve(&noisy, 300.0),
            Some((lo, hi)),
            "a fixed seed: reproducible"
        );
        // Three coefficients (a and T_o of degree 1) on three samples: no residual to resample.
        assert_eq!(cubic_curve(&noisy[..3], 300.0), None);
    }

    #[test]
    fn the_psi_interval_takes_the_extremes_of_both_works() {
        // psi = C_j W_i / (C_i W_j) = 2 * 100 / 400 = 0.5.
        let i = (1.0, (100.0, Some((90.0, 110.0))));
        let j = (2.0, (400.0, Some((320.0, 500.0))));
        assert_eq!(psi_interval(i, j), Some((0.36, 0.6875)));
        let exact_j = (2.0, (400.0, None));
        assert_eq!(psi_interval(i, exact_j), Some((0.45, 0.55)));
        assert_eq!(psi_interval((1.0, (100.0, None)), exact_j), None);
    }
}
