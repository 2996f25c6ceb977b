//! The predictive distribution a prediction's 95% interval is read from.
//!
//! A prediction's error is carried by two log factors: `d_c` on the model's compute part
//! (its `W/C` term) and `d_o` on its overhead (every other term, [`ScalingModel::split_time`]),
//! `T = e^{d_c} T_compute + e^{d_o} T_overhead`. Far from the runs a model gets wrong how its
//! overhead grows (a wrong exponent in `p`, a law outside the normal form) and how fast the
//! nodes compute there (a working set that fits in cache, drift within the study); near
//! them the compute term is pinned by every run and the overhead by fewer. So each part has
//! its own Student-t error, of scale `sqrt((FIT_SPREAD_SCALE s)^2 + (rate L)^2)`:
//!
//! - `s`, the fit: the spread of the part's log over the bootstrap's resamples at the point,
//!   each refitted and reselected. It carries the noise, the parameters and the form: every
//!   resample chooses its own hypothesis, so the forms enter weighted by how often the runs
//!   choose them (bootstrap model-selection frequencies as weights: Buckland, Burnham &
//!   Augustin, Biometrics 1997), not as a hull of every form that ties.
//! - `rate L`, the extrapolation: `L` the doublings of the node count past the largest
//!   fitted one (0 within it). Each rate is learned from the runs' own
//!   nested folds: the configurations up to each node count fitted (the whole selection re-run),
//!   the larger ones predicted, and the `(d_c, d_o)` that fit their runs found
//!   ([`NestedFold`]). A study has few such folds (one from 2, 4 and 8 nodes), so each
//!   `rate^2` is the posterior of a variance with a scaled-inverse-chi-square prior of
//!   `PRIOR_FOLDS` folds at its prior rate (Gelman et al., Bayesian Data Analysis, 3rd ed.,
//!   3.3), and the t has `PRIOR_FOLDS + m` degrees of freedom for `m` cuts.
//!
//! The interval's ends put the two errors where, to first order, they move `ln T` most:
//! each in proportion to its share of the variance of `ln T` ([`Predictive::factors`]).
//! The four constants are fitted on the calibration benchmark, the development set
//! (`python3 validation/calibration.py --fit`, docs/validation.md); the benchmark's scored
//! figures come from programs drawn with another seed.

use super::data::{Configuration, Run};
use super::model::ScalingModel;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The prior's extrapolation error of the compute part per doubling of the node count, log
/// (one standard deviation). Fitted: `python3 validation/calibration.py --fit`.
pub const PRIOR_COMPUTE_RATE: f64 = 0.03698;

/// The prior's extrapolation error of the overhead per doubling, log. Fitted with
/// [`PRIOR_COMPUTE_RATE`].
pub const PRIOR_OVERHEAD_RATE: f64 = 0.1637;

/// How many nested folds the priors weigh as. Fitted with [`PRIOR_COMPUTE_RATE`].
pub const PRIOR_FOLDS: f64 = 1024.0;

/// The bootstrap's spread of each part's log, scaled. Fitted with [`PRIOR_COMPUTE_RATE`].
pub const FIT_SPREAD_SCALE: f64 = 2.98;

/// One nested fold: the selection re-run on the configurations up to `fitted_nodes`,
/// predicting a configuration of `predicted_nodes`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NestedFold {
    /// The largest node count fitted.
    pub fitted_nodes: usize,
    /// The node count predicted.
    pub predicted_nodes: usize,
    /// The compute part's log factor `d_c` that, with `overhead_error`, fits the predicted
    /// configuration's runs.
    pub compute_error: f64,
    /// The overhead's log factor `d_o`.
    pub overhead_error: f64,
}

impl NestedFold {
    fn doublings(&self) -> f64 {
        (self.predicted_nodes as f64 / self.fitted_nodes as f64).log2()
    }
}

/// The predictive distribution of a prediction's error at one point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Predictive {
    /// The model's compute part of the time at the point, s.
    pub compute_s: f64,
    /// Its overhead part, s (the whole time for a model with no overhead term).
    pub overhead_s: f64,
    /// The spread of the compute part's log over the resamples at the point (one standard
    /// deviation).
    pub compute_fit_spread: f64,
    /// The spread of the overhead's log over them.
    pub overhead_fit_spread: f64,
    /// Doublings of the node count past the largest fitted one (0 within it).
    pub doublings: f64,
    /// The compute part's extrapolation error per doubling after the nested folds.
    pub compute_rate: f64,
    /// The overhead's extrapolation error per doubling after the nested folds.
    pub overhead_rate: f64,
    /// The t distributions' degrees of freedom.
    pub degrees_of_freedom: f64,
    /// The 95% half-width of `ln T` at the point, to first order.
    pub half_width: f64,
    /// The nested folds the rates were learned from.
    pub folds: Vec<NestedFold>,
}

impl Predictive {
    /// The distribution at a point where the model splits the time into `(compute_s,
    /// overhead_s)`, the resamples' log factors on the two parts there being `resampled`, on
    /// `configuration`.
    pub(super) fn at(
        (compute_s, overhead_s): (f64, f64),
        resampled: (&mut [f64], &mut [f64]),
        configuration: &Configuration,
        largest_fitted_nodes: usize,
        folds: &[NestedFold],
    ) -> Self {
        let doublings = (configuration.nodes() as f64 / largest_fitted_nodes.max(1) as f64)
            .log2()
            .max(0.0);
        let (compute_rate, overhead_rate, degrees_of_freedom) = posterior_rates(folds);
        let mut predictive = Self {
            compute_s,
            overhead_s,
            compute_fit_spread: spread(resampled.0),
            overhead_fit_spread: spread(resampled.1),
            doublings,
            compute_rate,
            overhead_rate,
            degrees_of_freedom,
            half_width: 0.0,
            folds: folds.to_vec(),
        };
        let [compute, overhead] = predictive.deviations(doublings);
        predictive.half_width = predictive.quantile() * compute.hypot(overhead);
        predictive
    }

    fn quantile(&self) -> f64 {
        StudentsT::new(0.0, 1.0, self.degrees_of_freedom)
            .map(|t| t.inverse_cdf(0.975))
            .unwrap_or(1.96)
    }

    /// The standard deviations of `d_c` and `d_o` `doublings` past the fit.
    fn scales(&self, doublings: f64) -> [f64; 2] {
        let scale = |fit: f64, rate: f64| (FIT_SPREAD_SCALE * fit).hypot(rate * doublings);
        [
            scale(self.compute_fit_spread, self.compute_rate),
            scale(self.overhead_fit_spread, self.overhead_rate),
        ]
    }

    /// What each error moves `ln T` by, to first order (its scale times its part's share).
    fn deviations(&self, doublings: f64) -> [f64; 2] {
        let total = self.compute_s + self.overhead_s;
        let [compute, overhead] = self.scales(doublings);
        [
            compute * self.compute_s / total,
            overhead * self.overhead_s / total,
        ]
    }

    /// The factors `(compute, overhead)` on the model's two parts at the 95% interval's
    /// upper end (`sign` 1) or lower end (`sign` -1), `doublings` past the fit: each error at
    /// `sign` times the quantile times its share of the variance of `ln T` (the direction in
    /// which `ln T` moves most for a given probability, to first order).
    pub fn factors(&self, doublings: f64, sign: f64) -> (f64, f64) {
        let deviations = self.deviations(doublings);
        let spread = deviations[0].hypot(deviations[1]);
        if spread == 0.0 {
            return (1.0, 1.0);
        }
        let scales = self.scales(doublings);
        let q = sign * self.quantile();
        let factor = |i: usize| (q * scales[i] * deviations[i] / spread).exp();
        (factor(0), factor(1))
    }

    /// The time's 95% interval at the point.
    pub fn time_bounds(&self) -> (f64, f64) {
        let at = |sign: f64| {
            let (c, o) = self.factors(self.doublings, sign);
            c * self.compute_s + o * self.overhead_s
        };
        (at(-1.0), at(1.0))
    }
}

/// The compute and overhead errors per doubling and the degrees of freedom, after `folds`:
/// each cut (a fitted node count) weighs as one observation of `(d / L)^2`, its predicted
/// configurations averaged, since they share one fit.
fn posterior_rates(folds: &[NestedFold]) -> (f64, f64, f64) {
    let mut cuts: Vec<usize> = folds.iter().map(|f| f.fitted_nodes).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let evidence = |error: fn(&NestedFold) -> f64| -> f64 {
        cuts.iter()
            .map(|&cut| {
                let of_cut: Vec<f64> = folds
                    .iter()
                    .filter(|f| f.fitted_nodes == cut)
                    .map(|f| (error(f) / f.doublings()).powi(2))
                    .collect();
                of_cut.iter().sum::<f64>() / of_cut.len() as f64
            })
            .sum()
    };
    let m = cuts.len() as f64;
    let rate =
        |prior: f64, seen: f64| ((PRIOR_FOLDS * prior * prior + seen) / (PRIOR_FOLDS + m)).sqrt();
    (
        rate(PRIOR_COMPUTE_RATE, evidence(|f| f.compute_error)),
        rate(PRIOR_OVERHEAD_RATE, evidence(|f| f.overhead_error)),
        PRIOR_FOLDS + m,
    )
}

/// One standard deviation of `values` (sorted in place) from their central 95%: the
/// resamples' spread, a few wild resamples (a form chosen once in 200) weighing as quantiles,
/// not as squares. 0 for fewer than 2 values.
fn spread(values: &mut [f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let position = q * (values.len() - 1) as f64;
        let (below, fraction) = (position.floor() as usize, position.fract());
        let above = (below + 1).min(values.len() - 1);
        values[below] + fraction * (values[above] - values[below])
    };
    (at(0.975) - at(0.025)) / (2.0 * 1.959_964)
}

/// The log factors `(d_c, d_o)` on `model`'s compute part and overhead that best fit `runs`
/// (least squares on log times, `ln T = ln(e^{d_c} T_compute + e^{d_o} T_overhead)`).
/// `None` when the model gives no time.
pub(super) fn part_errors(
    model: &ScalingModel,
    configuration: &Configuration,
    runs: &[&Run],
) -> Option<(f64, f64)> {
    let parts: Vec<(f64, f64, f64)> = runs
        .iter()
        .map(|r| {
            let (c, o) = model.split_time(r.n, r.work_flop, configuration).ok()?;
            Some((c, o, r.time_s.ln()))
        })
        .collect::<Option<_>>()?;
    if parts.is_empty() {
        return None;
    }
    Some(fitted_factors(&parts))
}

/// The `(d_c, d_o)` in `[-LIMIT, LIMIT]^2` minimizing `sum (ln(e^{d_c} c + e^{d_o} o) -
/// ln t)^2 + RIDGE (d_c^2 + d_o^2)` over `parts` `(c, o, ln t)`: a grid, then coordinate
/// refinement around its best. Runs whose parts keep one share cannot tell the two factors
/// apart; the ridge, too small to move a fit they identify, picks the smallest pair then.
fn fitted_factors(parts: &[(f64, f64, f64)]) -> (f64, f64) {
    const LIMIT: f64 = 6.0;
    const RIDGE: f64 = 1e-4;
    let loss = |dc: f64, d_o: f64| -> f64 {
        let (ec, eo) = (dc.exp(), d_o.exp());
        parts
            .iter()
            .map(|&(c, o, ln_t)| ((ec * c + eo * o).max(f64::MIN_POSITIVE).ln() - ln_t).powi(2))
            .sum::<f64>()
            + RIDGE * (dc * dc + d_o * d_o)
    };
    let mut step = 0.25;
    let grid =
        |step: f64| (0..=(2.0 * LIMIT / step) as usize).map(move |i| -LIMIT + i as f64 * step);
    let mut best = (0.0, 0.0);
    for dc in grid(step) {
        for d_o in grid(step) {
            if loss(dc, d_o) < loss(best.0, best.1) {
                best = (dc, d_o);
            }
        }
    }
    while step > 1e-4 {
        step /= 2.0;
        let around = [-1.0, 0.0, 1.0];
        let mut next = best;
        for a in around {
            for b in around {
                let candidate = (
                    (best.0 + a * step).clamp(-LIMIT, LIMIT),
                    (best.1 + b * step).clamp(-LIMIT, LIMIT),
                );
                if loss(candidate.0, candidate.1) < loss(next.0, next.1) {
                    next = candidate;
                }
            }
        }
        best = next;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_factors_that_fit_runs_of_two_shares_are_found() {
        // T = 1.2 c + 0.5 o at two sizes whose shares differ.
        let (dc, d_o) = (1.2f64.ln(), 0.5f64.ln());
        let parts: Vec<(f64, f64, f64)> = [(1.0, 3.0), (4.0, 1.0), (2.0, 2.0)]
            .iter()
            .map(|&(c, o)| (c, o, (dc.exp() * c + d_o.exp() * o).ln()))
            .collect();
        let (fc, fo) = fitted_factors(&parts);
        assert!(
            (fc - dc).abs() < 1e-3 && (fo - d_o).abs() < 1e-3,
            "{fc} {fo}"
        );
    }

    #[test]
    fn without_folds_the_rates_are_the_priors_and_folds_move_them() {
        assert_eq!(
            posterior_rates(&[]),
            (PRIOR_COMPUTE_RATE, PRIOR_OVERHEAD_RATE, PRIOR_FOLDS)
        );
        let fold = |predicted_nodes, overhead_error| NestedFold {
            fitted_nodes: 4,
            predicted_nodes,
            compute_error: 0.0,
            overhead_error,
        };
        // An overhead error of 2 per doubling, seen twice at one cut: one observation of 4.
        let (compute, overhead, dof) = posterior_rates(&[fold(8, 2.0), fold(16, 4.0)]);
        let expected =
            ((PRIOR_FOLDS * PRIOR_OVERHEAD_RATE.powi(2) + 4.0) / (PRIOR_FOLDS + 1.0)).sqrt();
        assert!((overhead - expected).abs() < 1e-12 && dof == PRIOR_FOLDS + 1.0);
        let unmoved = (PRIOR_FOLDS * PRIOR_COMPUTE_RATE.powi(2) / (PRIOR_FOLDS + 1.0)).sqrt();
        assert!((compute - unmoved).abs() < 1e-12);
    }

    #[test]
    fn the_ends_put_each_error_on_its_part_and_hold_the_point_between_them() {
        let predictive = Predictive {
            compute_s: 3.0,
            overhead_s: 1.0,
            compute_fit_spread: 0.0,
            overhead_fit_spread: 0.0,
            doublings: 2.0,
            compute_rate: 0.0,
            overhead_rate: 0.5,
            degrees_of_freedom: 1e6,
            half_width: 0.0,
            folds: Vec::new(),
        };
        // Only the overhead is uncertain: it moves by e^(+-1.96 * 0.5 * 2), the compute not.
        let (c, o) = predictive.factors(2.0, 1.0);
        let normal = 1.959_964f64;
        assert!(
            (c - 1.0).abs() < 1e-12 && (o.ln() - normal).abs() < 1e-3,
            "{c} {o}"
        );
        let (low, high) = predictive.time_bounds();
        assert!((high - 3.0 - o).abs() < 1e-9, "{high}");
        assert!((low - 3.0 - (-normal).exp()).abs() < 1e-3, "{low}");
    }

    #[test]
    fn the_spread_of_a_normal_sample_is_its_standard_deviation() {
        let normal = statrs::distribution::Normal::new(0.0, 0.2).unwrap();
        let mut values: Vec<f64> = (0..1000)
            .map(|i| normal.inverse_cdf((i as f64 + 0.5) / 1000.0))
            .collect();
        let s = spread(&mut values);
        assert!((s - 0.2).abs() < 0.005, "{s}");
        assert_eq!(spread(&mut [1.0]), 0.0);
    }
}
