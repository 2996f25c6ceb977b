//! The predictive distribution a prediction's 95% interval is read from.
//!
//! A prediction's error is carried by two log factors: `d_c` on the model's compute part
//! (its `W/C` term) and `d_o` on its overhead (every other term, [`ScalingModel::split_time`]),
//! `T = e^{d_c} T_compute + e^{d_o} T_overhead`. Far from the runs a model gets
//! wrong how its overhead grows (a wrong exponent in `p`, a law outside the normal form) and
//! how fast the nodes compute there (a working set that fits in cache, drift within the
//! study); near them the compute term is pinned by every run and the overhead by fewer. Each
//! factor is normal, of standard deviation
//!
//! - `d_c`: `sqrt((A s_c)^2 + (R_c L)^2 + (G D_c)^2)`;
//! - `d_o`: `sqrt((B s_o)^2 + (Z s_o L)^2 + (R_o L)^2 + (M f_o L)^2 + (G D_o)^2)`,
//!
//! where
//!
//! - `s_c`, `s_o`, the fit: the spread of each part's log over the bootstrap's resamples at
//!   the point, each refitted and reselected. It carries the noise, the parameters and the
//!   form: every resample chooses its own hypothesis, so the forms enter weighted by how
//!   often the runs choose them (bootstrap model-selection frequencies as weights: Buckland,
//!   Burnham & Augustin, Biometrics 1997), not as a hull of every form that ties.
//! - `L`, the doublings of the node count past the largest fitted one (0 within it).
//! - `f_o`, the nested folds' overhead error per doubling: the configurations up to each node
//!   count fitted (the whole selection re-run), the larger ones predicted, and the `d_o` that
//!   fits their runs found ([`NestedFold`]); the root mean square over the cuts.
//! - `D_c`, `D_o`, the leave-largest-out divergences: the log ratios of the model's parts at
//!   the point to the parts of the model the selection chooses without the configurations of
//!   the largest node count. Where the form is right both extrapolate alike; where it is
//!   wrong, the fit moves as the largest configurations come in, and the point moves with it
//!   (the extrapolation-aware residual of a "fit small, predict the next" fold, read at the
//!   point asked about rather than at the next configuration). Each part keeps its own: an
//!   overhead that the larger runs reshape moves `N` as an overhead does, its weight falling
//!   as `n` grows, not as a factor on every time.
//!
//! The distribution is centred on the bagged point, not on the selected model's: the model's
//! time at the point times `e^b`, `b` the median over the resamples of the log ratio of their
//! time there to the model's (bootstrap aggregating, Breiman, Machine Learning 1996). A
//! selection among many forms on few configurations is unstable: one run more or less changes
//! the form, and the median over the refitted forms moves less than any one of them
//! ([`Predictive::bagging`]).
//!
//! Where the two models split the time differently (one of them has no overhead term, so its
//! whole time is its overhead part), the parts have no common meaning, and each divergence is
//! the log ratio of the whole times.
//!
//! The interval's ends put the two errors where, to first order, they move `ln T` most: each
//! at the quantile times its variance's share of the variance of `ln T`
//! ([`Predictive::factors`]). The constants are fitted on the calibration benchmark, the
//! development set (`python3 validation/calibration.py --fit`, docs/validation.md), one set
//! per kind of study ([`Constants::for_study`]): with a nested fold ([`WITH_FOLDS`]), without
//! one on two node counts above one ([`TWO_NODE_COUNTS`]), and on one node count above one
//! ([`ONE_NODE_COUNT`], as one node and two: every overhead term in `p` is 0 on one node, so
//! the overhead's form in `p` rests on one node count). The benchmark's scored figures come
//! from programs drawn with another seed.

use super::data::{Configuration, Run};
use super::model::ScalingModel;
use serde::Serialize;
use statrs::statistics::{Data, OrderStatistics};

/// The constants of the predictive distribution's standard deviations (the module's `A`,
/// `B`, `Z`, `R_c`, `R_o`, `M`, `G`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Constants {
    /// Which set: `with folds`, `two node counts` or `one node count`.
    pub set: &'static str,
    /// `A`: the bootstrap's spread of the compute part's log, scaled.
    pub compute_fit_scale: f64,
    /// `B`: the bootstrap's spread of the overhead's log, scaled.
    pub overhead_fit_scale: f64,
    /// `Z`: how much the overhead's spread grows per doubling.
    pub overhead_fit_growth: f64,
    /// `R_c`: the compute part's extrapolation error per doubling, log.
    pub compute_rate: f64,
    /// `R_o`: the overhead's extrapolation error per doubling, log.
    pub overhead_rate: f64,
    /// `M`: the nested folds' overhead error per doubling, scaled.
    pub fold_scale: f64,
    /// `G`: the leave-largest-out divergences, scaled.
    pub divergence_scale: f64,
}

impl Constants {
    /// The set for a study with `folds` nested folds whose configurations have
    /// `node_counts_above_one` distinct node counts above one.
    pub fn for_study(folds: usize, node_counts_above_one: usize) -> Self {
        match (folds, node_counts_above_one) {
            (1.., _) => WITH_FOLDS,
            (0, 2..) => TWO_NODE_COUNTS,
            (0, _) => ONE_NODE_COUNT,
        }
    }
}

/// The constants of a study with a nested fold (three node counts or more). Fitted: `python3
/// validation/calibration.py --fit`.
pub const WITH_FOLDS: Constants = Constants {
    set: "with folds",
    compute_fit_scale: 1.451,
    overhead_fit_scale: 1.253,
    overhead_fit_growth: 0.0,
    compute_rate: 0.04541,
    overhead_rate: 0.1615,
    fold_scale: 0.29,
    divergence_scale: 0.1963,
};

/// The constants of a study without a fold whose configurations have two node counts above
/// one (no fold, no divergence). Fitted with [`WITH_FOLDS`].
pub const TWO_NODE_COUNTS: Constants = Constants {
    set: "two node counts",
    compute_fit_scale: 0.9352,
    overhead_fit_scale: 0.8906,
    overhead_fit_growth: 0.0,
    compute_rate: 0.05006,
    overhead_rate: 0.1464,
    fold_scale: 0.0,
    divergence_scale: 0.0,
};

/// The constants of a study whose configurations have one node count above one (one node and
/// two, say). Fitted with [`WITH_FOLDS`].
pub const ONE_NODE_COUNT: Constants = Constants {
    set: "one node count",
    compute_fit_scale: 4.913,
    overhead_fit_scale: 0.0,
    overhead_fit_growth: 0.0,
    compute_rate: 0.04768,
    overhead_rate: 0.1615,
    fold_scale: 0.0,
    divergence_scale: 0.0,
};

/// The two-sided 95% quantile of the standard normal.
const Z_975: f64 = 1.959_964;

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
    /// The nested folds' overhead error per doubling (root mean square over the cuts; 0
    /// without a fold).
    pub fold_overhead_rate: f64,
    /// The leave-largest-out divergence of the compute part at the point, log (0 without a
    /// fold).
    pub compute_divergence: f64,
    /// The leave-largest-out divergence of the overhead at the point, log (0 without a fold).
    pub overhead_divergence: f64,
    /// The constants the distribution was read with.
    pub constants: Constants,
    /// The 95% half-width of `ln T` at the point, to first order.
    pub half_width: f64,
    /// The nested folds the fold rate was learned from.
    pub folds: Vec<NestedFold>,
    /// The bagged point's log factor `b` on the model's time at the point: the median over
    /// the resamples of `ln(T_resample / T_model)` there. The point is the model's time times
    /// `e^b`; the interval's ends move with it.
    pub bagging: f64,
}

/// A study's nested folds, and the model the selection chose without the configurations of
/// the largest node count (the last cut's; `None` without a fold).
#[derive(Debug, Clone, Default)]
pub(super) struct Nested {
    pub folds: Vec<NestedFold>,
    pub leave_largest_out: Option<ScalingModel>,
    /// The distinct node counts above one among the configurations with runs.
    pub node_counts_above_one: usize,
}

/// What the nested folds give a prediction: the folds, and the parts `(compute, overhead)`
/// of the time the leave-largest-out fit predicts at the point (`None` without one).
pub(super) struct FoldEvidence<'a> {
    pub folds: &'a [NestedFold],
    /// The distinct node counts above one the study ran.
    pub node_counts_above_one: usize,
    pub leave_largest_out_s: Option<(f64, f64)>,
}

impl Predictive {
    /// The distribution at a point where the model splits the time into `(compute_s,
    /// overhead_s)`, the resamples' log factors on the two parts there being `resampled`, on
    /// `configuration`.
    pub(super) fn at(
        (compute_s, overhead_s): (f64, f64),
        resampled: AtPoint<'_>,
        configuration: &Configuration,
        largest_fitted_nodes: usize,
        evidence: FoldEvidence<'_>,
    ) -> Self {
        let doublings = (configuration.nodes() as f64 / largest_fitted_nodes.max(1) as f64)
            .log2()
            .max(0.0);
        let (compute_divergence, overhead_divergence) = match evidence.leave_largest_out_s {
            Some(other) if doublings > 0.0 => divergences((compute_s, overhead_s), other),
            _ => (0.0, 0.0),
        };
        let constants = Constants::for_study(evidence.folds.len(), evidence.node_counts_above_one);
        let mut predictive = Self {
            compute_s,
            overhead_s,
            compute_fit_spread: spread(resampled.compute),
            overhead_fit_spread: spread(resampled.overhead),
            doublings,
            fold_overhead_rate: fold_overhead_rate(evidence.folds),
            compute_divergence,
            overhead_divergence,
            constants,
            half_width: 0.0,
            folds: evidence.folds.to_vec(),
            bagging: median(resampled.total),
        };
        predictive.half_width = Z_975 * predictive.spread(doublings);
        predictive
    }

    /// The standard deviations of `d_c` and `d_o` `doublings` past the fit (the divergences
    /// read at the point, in proportion for fewer doublings).
    fn scales(&self, doublings: f64) -> [f64; 2] {
        let k = &self.constants;
        let diverged = |divergence: f64| {
            if self.doublings > 0.0 {
                k.divergence_scale * divergence * doublings / self.doublings
            } else {
                0.0
            }
        };
        let compute = (k.compute_fit_scale * self.compute_fit_spread)
            .hypot(k.compute_rate * doublings)
            .hypot(diverged(self.compute_divergence));
        let overhead = (k.overhead_fit_scale * self.overhead_fit_spread)
            .hypot(k.overhead_fit_growth * self.overhead_fit_spread * doublings)
            .hypot(k.overhead_rate * doublings)
            .hypot(k.fold_scale * self.fold_overhead_rate * doublings)
            .hypot(diverged(self.overhead_divergence));
        [compute, overhead]
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

    /// One standard deviation of `ln T` `doublings` past the fit, to first order.
    fn spread(&self, doublings: f64) -> f64 {
        let [compute, overhead] = self.deviations(doublings);
        compute.hypot(overhead)
    }

    /// The factors `(compute, overhead)` on the model's two parts at the 95% interval's
    /// upper end (`sign` 1) or lower end (`sign` -1), `doublings` past the fit: each error at
    /// `sign` times the quantile times its share of the variance of `ln T` (the direction in
    /// which `ln T` moves most for a given probability, to first order).
    ///
    /// Both include the bagged point's factor [`Self::center`].
    pub fn factors(&self, doublings: f64, sign: f64) -> (f64, f64) {
        let spread = self.spread(doublings);
        if spread == 0.0 {
            return (self.center(), self.center());
        }
        let scales = self.scales(doublings);
        let deviations = self.deviations(doublings);
        let q = sign * Z_975 / spread;
        let factor = |i: usize| (q * scales[i] * deviations[i] + self.bagging).exp();
        (factor(0), factor(1))
    }

    /// The bagged point's factor on the model's time, `e^b` ([`Self::bagging`]).
    pub fn center(&self) -> f64 {
        self.bagging.exp()
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

/// The leave-largest-out divergences `(D_c, D_o)` of a model whose parts at the point are
/// `model` from one whose parts are `other`: each part's log ratio where both models have an
/// overhead term; the log ratio of their whole times on both parts where one has none (its
/// parts are `(0, whole time)`), since its compute part then has no counterpart.
fn divergences(model: (f64, f64), other: (f64, f64)) -> (f64, f64) {
    if model.0 > 0.0 && other.0 > 0.0 {
        return (log_ratio(model.0, other.0), log_ratio(model.1, other.1));
    }
    let whole = log_ratio(model.0 + model.1, other.0 + other.1);
    (whole, whole)
}

/// The resamples' log ratios to the model at one point: of the compute part, of the
/// overhead, and of the whole time (each sorted in place as it is read).
pub(super) struct AtPoint<'a> {
    pub compute: &'a mut [f64],
    pub overhead: &'a mut [f64],
    pub total: &'a mut [f64],
}

/// The median of `values`; 0 for none.
fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    Data::new(values.to_vec()).median()
}

/// `ln(x / of)`, within [-`LOG_RATIO_LIMIT`, `LOG_RATIO_LIMIT`]: a part one model has and the
/// other has not (an overhead form without a term there) diverges by the limit, not
/// infinitely; two models without the part do not diverge.
fn log_ratio(x: f64, of: f64) -> f64 {
    match (x > 0.0, of > 0.0) {
        (true, true) => (x / of).ln().clamp(-LOG_RATIO_LIMIT, LOG_RATIO_LIMIT),
        (false, false) => 0.0,
        (true, false) => LOG_RATIO_LIMIT,
        (false, true) => -LOG_RATIO_LIMIT,
    }
}

/// How far below the model a resample whose part is 0 (a form without overhead) counts, log,
/// and how far a part diverges that one model has and the other has not: past every quantile
/// the spread reads, not infinite.
pub(super) const LOG_RATIO_LIMIT: f64 = 10.0;

/// The nested folds' overhead error per doubling: each cut (a fitted node count) one
/// observation of `(d_o / L)^2`, its predicted configurations averaged, since they share one
/// fit; the root of their mean. 0 without a fold.
fn fold_overhead_rate(folds: &[NestedFold]) -> f64 {
    let mut cuts: Vec<usize> = folds.iter().map(|f| f.fitted_nodes).collect();
    cuts.sort_unstable();
    cuts.dedup();
    if cuts.is_empty() {
        return 0.0;
    }
    let of_cut = |cut: usize| -> f64 {
        let squares: Vec<f64> = folds
            .iter()
            .filter(|f| f.fitted_nodes == cut)
            .map(|f| (f.overhead_error / f.doublings()).powi(2))
            .collect();
        squares.iter().sum::<f64>() / squares.len() as f64
    };
    (cuts.iter().map(|&c| of_cut(c)).sum::<f64>() / cuts.len() as f64).sqrt()
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
    use statrs::distribution::ContinuousCDF;

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
    fn the_fold_rate_is_the_root_mean_square_over_cuts_of_each_cuts_mean() {
        assert_eq!(fold_overhead_rate(&[]), 0.0);
        let fold = |fitted_nodes, predicted_nodes, overhead_error| NestedFold {
            fitted_nodes,
            predicted_nodes,
            compute_error: 0.0,
            overhead_error,
        };
        // Cut 4: errors of 2 and 4 at 1 and 2 doublings, 2 per doubling each (mean square 4);
        // cut 8: 1 at 1 doubling (1). The root of their mean: sqrt(2.5).
        let rate = fold_overhead_rate(&[fold(4, 8, 2.0), fold(4, 16, 4.0), fold(8, 16, 1.0)]);
        assert!((rate - 2.5f64.sqrt()).abs() < 1e-12, "{rate}");
    }

    fn only(constants: Constants, divergence: f64) -> Predictive {
        Predictive {
            compute_s: 3.0,
            overhead_s: 1.0,
            compute_fit_spread: 0.0,
            overhead_fit_spread: 0.0,
            doublings: 2.0,
            fold_overhead_rate: 0.0,
            compute_divergence: 0.0,
            overhead_divergence: divergence,
            constants,
            half_width: 0.0,
            folds: Vec::new(),
            bagging: 0.0,
        }
    }

    const NONE: Constants = Constants {
        set: "none",
        compute_fit_scale: 0.0,
        overhead_fit_scale: 0.0,
        overhead_fit_growth: 0.0,
        compute_rate: 0.0,
        overhead_rate: 0.0,
        fold_scale: 0.0,
        divergence_scale: 0.0,
    };

    #[test]
    fn the_ends_put_each_error_on_its_part_and_hold_the_point_between_them() {
        let predictive = only(
            Constants {
                overhead_rate: 0.5,
                ..NONE
            },
            0.0,
        );
        // Only the overhead is uncertain: it moves by e^(+-1.96 * 0.5 * 2), the compute not.
        let (c, o) = predictive.factors(2.0, 1.0);
        assert!(
            (c - 1.0).abs() < 1e-12 && (o.ln() - Z_975).abs() < 1e-9,
            "{c} {o}"
        );
        let (low, high) = predictive.time_bounds();
        assert!((high - 3.0 - o).abs() < 1e-9, "{high}");
        assert!((low - 3.0 - (-Z_975).exp()).abs() < 1e-9, "{low}");
    }

    #[test]
    fn a_part_diverges_on_itself_in_proportion_to_the_doublings() {
        let predictive = only(
            Constants {
                divergence_scale: 0.5,
                ..NONE
            },
            -0.2,
        );
        // The overhead diverged by 0.2 at 2 doublings: e^(+-1.96 * 0.5 * 0.2) on it alone, half
        // that log at 1 doubling.
        let (c, o) = predictive.factors(2.0, 1.0);
        assert!((c - 1.0).abs() < 1e-12 && (o.ln() - Z_975 * 0.1).abs() < 1e-9);
        let (_, o) = predictive.factors(1.0, -1.0);
        assert!((o.ln() + Z_975 * 0.05).abs() < 1e-9, "{o}");
        assert_eq!(log_ratio(0.0, 0.0), 0.0);
        assert_eq!(log_ratio(1.0, 0.0), LOG_RATIO_LIMIT);
    }

    #[test]
    fn the_bagged_point_moves_the_point_and_both_ends_alike() {
        let mut predictive = only(
            Constants {
                overhead_rate: 0.5,
                ..NONE
            },
            0.0,
        );
        let unbagged = predictive.time_bounds();
        predictive.bagging = 1.1f64.ln();
        assert!((predictive.center() - 1.1).abs() < 1e-12);
        let (low, high) = predictive.time_bounds();
        assert!((low - 1.1 * unbagged.0).abs() < 1e-9, "{low}");
        assert!((high - 1.1 * unbagged.1).abs() < 1e-9, "{high}");
        // With no spread at all the ends are the bagged point.
        let mut exact = only(NONE, 0.0);
        exact.bagging = 0.2;
        assert_eq!(exact.factors(2.0, 1.0), (0.2f64.exp(), 0.2f64.exp()));
        assert_eq!(median(&[3.0, -1.0, 2.0, 0.5]), 1.25);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn models_that_split_the_time_alike_diverge_part_by_part_else_as_wholes() {
        // Both have an overhead term: each part against its counterpart.
        let (c, o) = divergences((2.0, 1.0), (1.0, 2.0));
        assert!((c - 2f64.ln()).abs() < 1e-12 && (o + 2f64.ln()).abs() < 1e-12);
        // One has none (its parts are (0, whole)): the whole times, on both parts, not the
        // limit a part that one model lacks would give.
        let whole = (3.0f64 / 1.5).ln();
        assert_eq!(divergences((0.0, 3.0), (1.0, 0.5)), (whole, whole));
        assert_eq!(divergences((1.0, 2.0), (0.0, 1.5)), (whole, whole));
    }

    #[test]
    fn the_constants_follow_the_folds_and_the_node_counts_above_one() {
        assert_eq!(Constants::for_study(2, 3), WITH_FOLDS);
        // 1, 2 and 4 nodes have a fold (1 and 2 predict 4), though two counts are above one.
        assert_eq!(Constants::for_study(1, 2), WITH_FOLDS);
        assert_eq!(Constants::for_study(0, 2), TWO_NODE_COUNTS);
        assert_eq!(Constants::for_study(0, 1), ONE_NODE_COUNT);
        assert_eq!(Constants::for_study(0, 0), ONE_NODE_COUNT);
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
