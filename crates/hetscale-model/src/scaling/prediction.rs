//! Predictions with intervals that include the model-selection uncertainty, and the cautions
//! that say when the data cannot support them.

use super::caution::{Caution, MAX_EXTRAPOLATION};
use super::data::{Configuration, Run, ScalingData};
use super::engine::{Engine, Repeats};
use super::model::{FittedTerm, ScalingModel};
use super::predictive::{
    AtPoint, FoldEvidence, LOG_RATIO_LIMIT, Nested, NestedFold, Predictive, part_errors,
};
use super::selection::{Prepared, Selection, choose, score, select};
use crate::error::{ModelError, Result, positive};
use crate::numbers::size;
use serde::Serialize;
use std::sync::Arc;

/// A point estimate and its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// The selected model's value.
    pub estimate: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

impl Interval {
    /// The interval of one value, `[x, x]`, for ends to widen.
    fn at(x: f64) -> Self {
        Self {
            estimate: x,
            low: x,
            high: x,
        }
    }

    /// Whether `x` lies in `[low, high]`.
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// Also taking in `a` and `b`.
    fn hull(self, a: f64, b: f64) -> Self {
        Self {
            low: self.low.min(a).min(b),
            high: self.high.max(a).max(b),
            ..self
        }
    }
}

/// What to predict: the size holding a speed-efficiency on a configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictionTarget<'a> {
    /// The configuration (run or not).
    pub configuration: &'a Configuration,
    /// The speed-efficiency `E_s` to hold.
    pub efficiency: f64,
    /// How closely, relative, a size must hold it (a study's `tolerance`; 0: exactly): every
    /// size whose `E_s` is within `efficiency * (1 +- tolerance)` holds the target, so the
    /// size interval takes in the chosen model's band of them.
    pub tolerance: f64,
    /// The sizes searched.
    pub n_bounds: (f64, f64),
    /// Where `psi(reference, configuration)` is measured from (e.g. the largest measured
    /// configuration); `None` for no `psi`.
    pub reference: Option<&'a Configuration>,
}

/// How [`bootstrap`] resamples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootstrapOptions {
    /// How many resamples.
    pub resamples: usize,
    /// The seed: the same seed gives the same intervals.
    pub seed: u64,
    /// Told of each resample refitted (a progress bar).
    #[serde(skip)]
    pub progress: Progress,
}

impl Default for BootstrapOptions {
    fn default() -> Self {
        Self {
            resamples: 200,
            seed: 0x5ca1_ab1e,
            progress: Progress::default(),
        }
    }
}

/// What a bootstrap tells as it goes: after each resample refitted, how many of how many are
/// done. None by default.
#[derive(Clone, Default)]
pub struct Progress(Option<Arc<ProgressFn>>);

type ProgressFn = dyn Fn(usize, usize) + Send + Sync;

impl Progress {
    /// A progress told `(done, total)` after each resample.
    pub fn new(tell: impl Fn(usize, usize) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(tell)))
    }

    fn tell(&self, done: usize, total: usize) {
        if let Some(tell) = &self.0 {
            tell(done, total);
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress"
        } else {
            "Progress(none)"
        })
    }
}

/// Whom a bootstrap tells of its progress changes none of its results.
impl PartialEq for Progress {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Predictions at a target with 95% intervals read from their predictive distribution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bootstrap {
    /// The size `N` holding the target `E_s`; its upper end is infinite where the runs cannot
    /// exclude that no size holds it ([`Caution::OpenUpperEnd`]).
    pub size: Interval,
    /// The time at that size, s (its upper end infinite with the size's).
    pub time_s: Interval,
    /// `psi(reference, target)` when a reference was given (its lower end 0 where the size's
    /// upper end is open).
    pub psi: Option<Interval>,
    /// The resamples that gave a time at the predicted size.
    pub resamples: usize,
    /// The share of resamples that chose the selected model's hypothesis.
    pub same_hypothesis_share: f64,
    /// Where the size is not pinned within [`SHARP_FACTOR`]: the largest fitted node count
    /// from which it would be (`None` also when no node count would).
    pub sharp_from_nodes: Option<usize>,
    /// The predictive distribution of the overhead at the predicted size.
    pub predictive: Predictive,
    /// What the data cannot support, the model's cautions included.
    pub cautions: Vec<Caution>,
}

/// Predicts the size holding `target.efficiency` on `target.configuration` (and the time
/// there and `psi` from the reference) with the bagged model (the selected model times the
/// resamples' median factor at its size, [`Predictive::center`]), and their 95% intervals from
/// the predictive distribution of the model's parts there ([`Predictive`]).
///
/// The bootstrap refits and reselects on `options.resamples` resamples of the runs (see
/// `resampled_models`); the spread of the overhead factor `d` their models give at the
/// predicted size is the fit's part of the distribution, the nested folds give its
/// extrapolation part. The size's interval is where the model with its overhead scaled by
/// `e^{-h}` and `e^{h}` holds the target (`h` the 95% half-width), widened to the sizes that
/// hold it within its tolerance ([`PredictionTarget::tolerance`]; all of them where `E_s` is
/// not monotone in `n`, `holding_band`). Where the larger overhead holds the target at no size
/// searched, the upper end is open: infinite, with [`Caution::OpenUpperEnd`] saying why; a
/// lower end below the smallest size searched is cut at it ([`Caution::IntervalAtBound`]).
/// The time's and `psi`'s intervals follow the size's.
///
/// `work(n)` is the work at size `n`, flop. Errors: the selected model does not reach the
/// target in the bounds ([`ModelError::Unreachable`]), or fewer than 10 resamples give a time.
pub fn bootstrap(
    data: &ScalingData,
    selection: &Selection,
    target: &PredictionTarget<'_>,
    work: &dyn Fn(f64) -> f64,
    options: &BootstrapOptions,
) -> Result<Bootstrap> {
    data.check()?;
    target.configuration.check()?;
    positive("target speed-efficiency", target.efficiency)?;
    let configuration = target.configuration;
    let model = &selection.model;
    let n_model =
        model.size_for_efficiency(target.efficiency, configuration, work, target.n_bounds)?;
    let resampled = resampled_models(data, selection, options)?;
    // A search for N starts at the smallest size: a form the runs leave open whose term has
    // no value on the target says so there, as the chosen model's search would.
    let n_min = target.n_bounds.0;
    undefined_in(&resampled, n_min, work(n_min), configuration)?;
    let predictive = predictive_at(
        data,
        selection,
        &resampled,
        configuration,
        n_model,
        work(n_model),
    )?;
    // The point is the bagged model's: the selected one times the resamples' median factor
    // at its size (where that holds the target at no size, the selected model's).
    let center = model.with_parts_scaled(predictive.center(), predictive.center());
    let n = center
        .size_for_efficiency(target.efficiency, configuration, work, target.n_bounds)
        .unwrap_or(n_model);
    let mut cautions = model.cautions.clone();
    extrapolation_cautions(selection, &resampled, configuration, n, &mut cautions);
    let [smaller, larger] = scaled_models(model, &predictive, predictive.doublings);
    let ends = size_ends(target, work, &[&smaller, &larger])?;
    let size = Interval::at(n).hull(ends[0], ends[1]);
    let sharp_from_nodes = (!is_sharp(size))
        .then(|| sharp_from_nodes(model, target, work, &predictive, n))
        .transpose()?
        .flatten();
    if size.high.is_infinite() {
        cautions.push(Caution::OpenUpperEnd {
            nodes: configuration.nodes(),
            efficiency: target.efficiency,
            factor: predictive.factors(predictive.doublings, 1.0).1,
            n_max: target.n_bounds.1,
        });
    }
    let size = holding_band(&center, target, work, size);
    let size = cut_below(size, target.n_bounds.0, &mut cautions);
    // An end below the sizes searched (0: the target is held at the smallest already) has
    // the time at the smallest size searched.
    let time_at = |m: &ScalingModel, n: f64| {
        let n = n.max(target.n_bounds.0);
        if n.is_finite() {
            m.predict_time(n, work(n), configuration)
        } else {
            Ok(f64::INFINITY)
        }
    };
    let time = time_at(&center, n)?;
    let mut time_s = Interval::at(time);
    for (m, end) in [(&smaller, ends[0]), (&larger, ends[1])] {
        let t = time_at(m, end)?;
        time_s = time_s.hull(t, t);
    }
    let (t_low, t_high) = (time_at(&center, size.low)?, time_at(&center, size.high)?);
    let time_s = time_s.hull(t_low, t_high);
    let psi = match target.reference {
        Some(reference) => Some(psi_interval(
            [model, &center],
            target,
            reference,
            work,
            (n, &predictive, model.largest_fitted_nodes),
        )?),
        None => None,
    };
    Ok(Bootstrap {
        size,
        time_s,
        psi,
        resamples: resampled.models.len(),
        same_hypothesis_share: resampled.same as f64 / options.resamples as f64,
        sharp_from_nodes,
        predictive,
        cautions,
    })
}

/// How far either end of a size interval may lie from its estimate, as a factor, for the
/// interval to pin `N`: a factor 2 in `N` is 8 times the work of an `n^3` program, past what
/// a user can plan a run around.
pub const SHARP_FACTOR: f64 = 2.0;

/// Whether both ends of `size` lie within [`SHARP_FACTOR`] of its estimate.
pub fn is_sharp(size: Interval) -> bool {
    size.high <= SHARP_FACTOR * size.estimate && size.low * SHARP_FACTOR >= size.estimate
}

/// The model with its parts scaled to the predictive distribution's lower and upper ends
/// `doublings` past the fit ([`Predictive::factors`]).
fn scaled_models(
    model: &ScalingModel,
    predictive: &Predictive,
    doublings: f64,
) -> [ScalingModel; 2] {
    [-1.0, 1.0].map(|sign| {
        let (compute, overhead) = predictive.factors(doublings, sign);
        model.with_parts_scaled(compute, overhead)
    })
}

/// The sizes `models` hold the target at, as the ends of an interval ([`end_size`]).
fn size_ends(
    target: &PredictionTarget<'_>,
    work: &dyn Fn(f64) -> f64,
    models: &[&ScalingModel; 2],
) -> Result<[f64; 2]> {
    let size_of = |m: &ScalingModel| {
        end_size(m.size_for_efficiency(
            target.efficiency,
            target.configuration,
            work,
            target.n_bounds,
        ))
    };
    Ok([size_of(models[0])?, size_of(models[1])?])
}

/// The largest fitted node count (the target's halved, again and again) from which the
/// predictive distribution would pin the size `n` (the point) within [`SHARP_FACTOR`]: fewer
/// doublings to extrapolate, the same fit and rate. `None` when even runs on the target's
/// node count would not.
fn sharp_from_nodes(
    model: &ScalingModel,
    target: &PredictionTarget<'_>,
    work: &dyn Fn(f64) -> f64,
    predictive: &Predictive,
    n: f64,
) -> Result<Option<usize>> {
    let nodes = target.configuration.nodes();
    let mut doublings = predictive.doublings.ceil() - 1.0;
    while doublings >= 0.0 {
        let [smaller, larger] = scaled_models(model, predictive, doublings);
        let [low, high] = size_ends(target, work, &[&smaller, &larger])?;
        let size = Interval::at(n).hull(low.max(target.n_bounds.0), high);
        if is_sharp(size) {
            return Ok(Some(
                ((nodes as f64) / 2f64.powf(doublings)).round() as usize
            ));
        }
        doublings -= 1.0;
    }
    Ok(None)
}

/// The size a scaled model holds the target at, as an end of the interval: infinite where
/// it falls short of the target at every size searched, the smallest size where it passes
/// it there already.
fn end_size(found: Result<f64>) -> Result<f64> {
    match found {
        Ok(n) => Ok(n),
        Err(ModelError::Unreachable { best, target, .. }) if best < target => Ok(f64::INFINITY),
        Err(ModelError::Unreachable { .. }) => Ok(0.0),
        Err(e) => Err(e),
    }
}

/// Where the selected model holds `target.efficiency` at no size searched, falling short of
/// it: the smallest size from which the predictive distribution's lower end (both parts at
/// the interval's lower end, read where the model comes closest to the target) holds it. The
/// runs cannot exclude that the target is held from there on, nor that it is never held:
/// the answer is `[that size, open]`. `None` when even the lower end falls short, or the model
/// does not fall short (then [`bootstrap`] or [`held_up_to`] answers). Errors: as
/// [`bootstrap`]'s.
pub fn reachable_from(
    data: &ScalingData,
    selection: &Selection,
    target: &PredictionTarget<'_>,
    work: &dyn Fn(f64) -> f64,
    options: &BootstrapOptions,
) -> Result<Option<f64>> {
    let end = end_where_unreached(data, selection, target, work, options, Side::FallsShort)?;
    Ok(end.filter(|from| from.is_finite()))
}

/// Where the selected model holds `target.efficiency` at every size searched, exceeding it
/// even at its lowest: the size up to which the predictive distribution's upper end (both
/// parts at the interval's upper end, read where the model's `E_s` is lowest) needs `N` to
/// grow before it holds the target. The runs cannot exclude that every size holds it, nor
/// that `N` must grow that far: the answer is `[the smallest size searched, that size]`, the
/// upper end infinite (open) where even that end holds it at no size. `None` when the model
/// does not exceed the target everywhere. Errors: as [`bootstrap`]'s.
pub fn held_up_to(
    data: &ScalingData,
    selection: &Selection,
    target: &PredictionTarget<'_>,
    work: &dyn Fn(f64) -> f64,
    options: &BootstrapOptions,
) -> Result<Option<f64>> {
    let end = end_where_unreached(data, selection, target, work, options, Side::Exceeds)?;
    Ok(end.map(|up_to| up_to.max(target.n_bounds.0)))
}

/// On which side of the target a model that holds it at no single size lies.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    /// Its `E_s` is below the target at every size: the lower end of the time may hold it.
    FallsShort,
    /// Its `E_s` is above the target at every size: the upper end of the time may need a
    /// larger size.
    Exceeds,
}

/// The size at which the predictive distribution's end on the target's side (the lower end
/// of the time where the model falls short, the upper end where it exceeds) holds the target,
/// read where the model comes closest to it; `None` when the model is not on `side`.
fn end_where_unreached(
    data: &ScalingData,
    selection: &Selection,
    target: &PredictionTarget<'_>,
    work: &dyn Fn(f64) -> f64,
    options: &BootstrapOptions,
    side: Side,
) -> Result<Option<f64>> {
    data.check()?;
    target.configuration.check()?;
    let configuration = target.configuration;
    let model = &selection.model;
    let closest =
        match model.size_for_efficiency(target.efficiency, configuration, work, target.n_bounds) {
            Err(ModelError::Unreachable { best, best_at, .. })
                if (best < target.efficiency) == (side == Side::FallsShort) =>
            {
                best_at
            }
            Err(ModelError::Unreachable { .. }) | Ok(_) => return Ok(None),
            Err(e) => return Err(e),
        };
    let resampled = resampled_models(data, selection, options)?;
    let n_min = target.n_bounds.0;
    undefined_in(&resampled, n_min, work(n_min), configuration)?;
    let predictive = predictive_at(
        data,
        selection,
        &resampled,
        configuration,
        closest,
        work(closest),
    )?;
    let sign = if side == Side::FallsShort { -1.0 } else { 1.0 };
    let (compute, overhead) = predictive.factors(predictive.doublings, sign);
    let scaled = model.with_parts_scaled(compute, overhead);
    let end = end_size(scaled.size_for_efficiency(
        target.efficiency,
        configuration,
        work,
        target.n_bounds,
    ))?;
    Ok(Some(end.max(n_min)))
}

/// `psi(reference, target)` and its interval: at each end the model with both parts scaled
/// the same way (at the target's doublings for the target's size, at the reference's for the
/// reference's), since a model that overshoots one size overshoots both; the reference itself
/// as the target gives psi = 1 at both ends. An open target size gives psi's lower end 0.
fn psi_interval(
    [model, center]: [&ScalingModel; 2],
    target: &PredictionTarget<'_>,
    reference: &Configuration,
    work: &dyn Fn(f64) -> f64,
    (n, predictive, largest_fitted_nodes): (f64, &Predictive, usize),
) -> Result<Interval> {
    let size_on = |m: &ScalingModel, c: &Configuration| {
        end_size(m.size_for_efficiency(target.efficiency, c, work, target.n_bounds))
    };
    let psi = |n_ref: f64, n: f64| {
        let ratio = target.configuration.marked_speed() * work(n_ref) / reference.marked_speed();
        if n.is_finite() { ratio / work(n) } else { 0.0 }
    };
    // The bagged model's size on the reference, else (it holds the target at no size there)
    // the selected model's.
    let n_ref = center
        .size_for_efficiency(target.efficiency, reference, work, target.n_bounds)
        .or_else(|_| {
            model.size_for_efficiency(target.efficiency, reference, work, target.n_bounds)
        })?;
    let estimate = psi(n_ref, n);
    let mut interval = Interval::at(estimate);
    let ref_doublings = (reference.nodes() as f64 / largest_fitted_nodes.max(1) as f64)
        .log2()
        .max(0.0);
    for sign in [-1.0, 1.0] {
        let scaled = |doublings: f64| {
            let (compute, overhead) = predictive.factors(doublings, sign);
            model.with_parts_scaled(compute, overhead)
        };
        let n_ref = size_on(&scaled(ref_doublings), reference)?;
        let n = size_on(&scaled(predictive.doublings), target.configuration)?;
        // A reference the scaled model cannot hold the target on gives no end.
        if n_ref.is_finite() && n_ref > 0.0 {
            let end = psi(n_ref.max(target.n_bounds.0), n.max(target.n_bounds.0));
            interval = interval.hull(end, end);
        }
    }
    Ok(interval)
}

/// The predictive distribution at size `n` (work `work_flop`) on `configuration`: the
/// resamples' overhead factors there and the nested folds' extrapolation.
fn predictive_at(
    data: &ScalingData,
    selection: &Selection,
    resampled: &Resampled,
    configuration: &Configuration,
    n: f64,
    work_flop: f64,
) -> Result<Predictive> {
    let split = selection.model.split_time(n, work_flop, configuration)?;
    // Each resample's parts against the model's (its whole time against the model's when
    // the model has no overhead term: split_time puts it all in the overhead then).
    let parts = |m: &ScalingModel| -> Option<(f64, f64)> {
        let time = m.predict_time(n, work_flop, configuration).ok()?;
        let compute = if split.0 > 0.0 {
            m.compute_time(n, work_flop, configuration)
        } else {
            0.0
        };
        Some((compute, time - compute))
    };
    let log_ratio = |x: f64, of: f64| {
        if of > 0.0 {
            (x / of).ln().max(-LOG_RATIO_LIMIT)
        } else {
            0.0
        }
    };
    undefined_in(resampled, n, work_flop, configuration)?;
    let whole = split.0 + split.1;
    let ratios: Vec<[f64; 3]> = resampled
        .models
        .iter()
        .filter_map(parts)
        .map(|(c, o)| {
            [
                log_ratio(c, split.0),
                log_ratio(o, split.1),
                log_ratio(c + o, whole),
            ]
        })
        .collect();
    let column = |i: usize| -> Vec<f64> { ratios.iter().map(|r| r[i]).collect() };
    let (mut compute, mut overhead, mut total) = (column(0), column(1), column(2));
    if compute.len() < 10 {
        return Err(ModelError::Inconsistent(format!(
            "only {} of {} resamples gave a time at n = {} on \"{}\": too few for an interval",
            compute.len(),
            resampled.models.len() + resampled.failed,
            size(n),
            configuration.label
        )));
    }
    let nested = selection
        .nested
        .get_or_init(|| nested_folds(data, selection));
    let leave_largest_out_s = nested
        .leave_largest_out
        .as_ref()
        .and_then(|m| m.split_time(n, work_flop, configuration).ok());
    let evidence = FoldEvidence {
        folds: &nested.folds,
        node_counts_above_one: nested.node_counts_above_one,
        leave_largest_out_s,
    };
    Ok(Predictive::at(
        split,
        AtPoint {
            compute: &mut compute,
            overhead: &mut overhead,
            total: &mut total,
        },
        configuration,
        selection.model.largest_fitted_nodes,
        evidence,
    ))
}

/// The first resample's error at size `n` on `configuration` from a term with no value
/// there (a declared overhead gone negative): a form the runs leave open that cannot be
/// evaluated leaves the distribution undefined, and its caller's reason is the answer.
fn undefined_in(
    resampled: &Resampled,
    n: f64,
    work_flop: f64,
    configuration: &Configuration,
) -> Result<()> {
    for model in &resampled.models {
        if let Err(e @ ModelError::TermUndefined { .. }) =
            model.predict_time(n, work_flop, configuration)
        {
            return Err(e);
        }
    }
    Ok(())
}

/// The cautions of a prediction at size `n` on `configuration`: past [`MAX_EXTRAPOLATION`]
/// times the largest fitted node count or size, or below its inverse of the smallest size.
fn extrapolation_cautions(
    selection: &Selection,
    resampled: &Resampled,
    configuration: &Configuration,
    n: f64,
    cautions: &mut Vec<Caution>,
) {
    let largest = selection.model.largest_fitted_nodes;
    if configuration.nodes() as f64 > MAX_EXTRAPOLATION * largest as f64 {
        cautions.push(Caution::Extrapolation {
            nodes: configuration.nodes(),
            largest_fitted: largest,
        });
    }
    if n > MAX_EXTRAPOLATION * resampled.largest_n {
        cautions.push(Caution::SizeExtrapolation {
            n,
            largest_fitted: resampled.largest_n,
        });
    }
    if n * MAX_EXTRAPOLATION < resampled.smallest_n {
        cautions.push(Caution::SizeBelowFitted {
            n,
            smallest_fitted: resampled.smallest_n,
        });
    }
}

/// The time at one size, with its 95% interval ([`bootstrap_time`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeAt {
    /// The time, s.
    pub time_s: Interval,
    /// The resamples whose model gave a time.
    pub resamples: usize,
    /// The predictive distribution of the overhead there.
    pub predictive: Predictive,
    /// What the data cannot support, the model's cautions included.
    pub cautions: Vec<Caution>,
}

/// Predicts the time at size `n` (work `work_flop`) on `configuration` with the bagged model
/// (the selected model times the resamples' median factor there), and its 95% interval: the
/// model's compute part and overhead at the predictive distribution's ends ([`Predictive`], as
/// [`bootstrap`] reads it). Errors: the model gives no positive time, or fewer than 10
/// resamples do.
pub fn bootstrap_time(
    data: &ScalingData,
    selection: &Selection,
    configuration: &Configuration,
    n: f64,
    work_flop: f64,
    options: &BootstrapOptions,
) -> Result<TimeAt> {
    data.check()?;
    configuration.check()?;
    let resampled = resampled_models(data, selection, options)?;
    let predictive = predictive_at(data, selection, &resampled, configuration, n, work_flop)?;
    let estimate = selection.model.predict_time(n, work_flop, configuration)? * predictive.center();
    let mut cautions = selection.model.cautions.clone();
    extrapolation_cautions(selection, &resampled, configuration, n, &mut cautions);
    let (low, high) = predictive.time_bounds();
    Ok(TimeAt {
        time_s: Interval {
            estimate,
            low: low.min(estimate),
            high: high.max(estimate),
        },
        resamples: resampled.models.len(),
        predictive,
        cautions,
    })
}

/// The nested folds of `data` under `selection`'s procedure: for each node count with at
/// least 2 configurations up to it and one above, the selection re-run on those up to it
/// (same hypothesis space and options), each larger configuration predicted; and the last
/// cut's model, the leave-largest-out one.
fn nested_folds(data: &ScalingData, selection: &Selection) -> Nested {
    let floor = selection.options.min_time_s;
    let runs: Vec<&Run> = data.runs.iter().filter(|r| r.time_s >= floor).collect();
    let measured: Vec<&Configuration> = data
        .configurations
        .iter()
        .filter(|c| runs.iter().any(|r| r.configuration == c.label))
        .collect();
    let mut cuts: Vec<usize> = measured.iter().map(|c| c.nodes()).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut nested = Nested {
        node_counts_above_one: cuts.iter().filter(|&&c| c > 1).count(),
        ..Nested::default()
    };
    for &cut in &cuts {
        let (fitted, predicted): (Vec<&Configuration>, Vec<&Configuration>) =
            measured.iter().partition(|c| c.nodes() <= cut);
        if fitted.len() < 2 || predicted.is_empty() {
            continue;
        }
        let subset = ScalingData {
            configurations: fitted.iter().map(|c| (*c).clone()).collect(),
            runs: runs
                .iter()
                .filter(|r| fitted.iter().any(|c| c.label == r.configuration))
                .map(|r| (*r).clone())
                .collect(),
        };
        let Ok(sub) = select(&subset, &selection.space, &selection.options) else {
            continue;
        };
        for configuration in predicted {
            let of: Vec<&Run> = runs
                .iter()
                .filter(|r| r.configuration == configuration.label)
                .copied()
                .collect();
            if let Some((compute_error, overhead_error)) =
                part_errors(&sub.model, configuration, &of)
            {
                nested.folds.push(NestedFold {
                    fitted_nodes: cut,
                    predicted_nodes: configuration.nodes(),
                    compute_error,
                    overhead_error,
                });
            }
        }
        nested.leave_largest_out = Some(sub.model);
    }
    nested
}

/// The models [`bootstrap`]'s resamples reselect, and what the resampling saw.
struct Resampled {
    /// One per resample whose reselection chose a model.
    models: Vec<ScalingModel>,
    /// The resamples on which no hypothesis of the shortlist could be fitted.
    failed: usize,
    /// The resamples that chose the selected model's hypothesis.
    same: usize,
    /// The largest size fitted.
    largest_n: f64,
    /// The smallest size fitted.
    smallest_n: f64,
}

/// `options.resamples` resamples of the runs (see [`bootstrap`]), each refitted and reselected
/// among `selection`'s shortlist.
fn resampled_models(
    data: &ScalingData,
    selection: &Selection,
    options: &BootstrapOptions,
) -> Result<Resampled> {
    let runs: Vec<_> = data
        .runs
        .iter()
        .filter(|r| r.time_s >= selection.options.min_time_s)
        .cloned()
        .collect();
    // Only the columns the shortlist uses, renumbered.
    let mut used: Vec<usize> = selection.shortlist.iter().flatten().copied().collect();
    used.sort_unstable();
    used.dedup();
    let terms: Vec<_> = used.iter().map(|&c| selection.terms[c].clone()).collect();
    let shortlist: Vec<Vec<usize>> = selection
        .shortlist
        .iter()
        .map(|h| {
            h.iter()
                .map(|c| used.binary_search(c).expect("used"))
                .collect()
        })
        .collect();
    let prepared = Prepared::new(data, &runs, &terms)?;
    let k = prepared.configurations.len();
    let selected_columns = &shortlist[0];
    let fitted: Vec<f64> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            selection.model.predict_time(
                r.n,
                r.work_flop,
                &prepared.configurations[prepared.run_configuration(i)],
            )
        })
        .collect::<Result<_>>()?;
    let mut shift = vec![0.0; k];
    let mut count = vec![0.0; k];
    for (i, fitted) in fitted.iter().enumerate() {
        let c = prepared.run_configuration(i);
        shift[c] += (prepared.times[i] / fitted).ln();
        count[c] += 1.0;
    }
    shift.iter_mut().zip(&count).for_each(|(s, n)| *s /= n);
    let mean_shift = shift.iter().sum::<f64>() / k as f64;
    let centred: Vec<f64> = shift.iter().map(|s| s - mean_shift).collect();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); k];
    for i in 0..runs.len() {
        members[prepared.run_configuration(i)].push(i);
    }

    let mut rng = SplitMix64(options.seed);
    let (mut models, mut failed, mut same) = (Vec::new(), 0, 0);
    for resample in 0..options.resamples {
        options.progress.tell(resample, options.resamples);
        let mut draws = Vec::with_capacity(runs.len());
        for (c, member) in members.iter().enumerate() {
            let moved = (centred[rng.below(k)] - centred[c]).exp();
            for _ in 0..member.len() {
                let run = member[rng.below(member.len())];
                draws.push((prepared.point_of_run[run], prepared.times[run] * moved));
            }
        }
        // The resample's runs at each point: the columns are the points' own.
        let repeats = Repeats::of(prepared.n.len(), draws.iter().copied());
        let (group, groups, folds) =
            prepared.folds(&repeats, selection.options.extrapolation_weight);
        let engine = Engine::new(
            &prepared.columns,
            &repeats,
            &group,
            groups,
            &folds,
            selection.options.significance,
        );
        let scored: Vec<_> = score(&engine, &shortlist, &terms)
            .into_iter()
            .flatten()
            .collect();
        let Some(chosen) = choose(&engine, &scored, &selection.options) else {
            failed += 1;
            continue;
        };
        let chosen = &scored[chosen];
        if chosen.columns == *selected_columns {
            same += 1;
        }
        let model = ScalingModel {
            terms: chosen
                .columns
                .iter()
                .zip(&chosen.evaluation.coefficients)
                .map(|(&c, &coefficient)| FittedTerm {
                    term: terms[c].clone(),
                    coefficient,
                    ci95: None,
                })
                .collect(),
            ..selection.model.clone()
        };
        models.push(model);
    }
    options.progress.tell(options.resamples, options.resamples);
    Ok(Resampled {
        largest_n: runs.iter().map(|r| r.n).fold(0.0, f64::max),
        smallest_n: runs.iter().map(|r| r.n).fold(f64::INFINITY, f64::min),
        models,
        failed,
        same,
    })
}

/// `size` taking in the sizes where `model`'s `E_s` is within the target's tolerance of it
/// (an end the sizes searched do not reach adds nothing).
///
/// Where the model is monotone in `n` those sizes are the one stretch between the roots of
/// `E_s = efficiency (1 -+ tolerance)`. A program's own model need not be: it follows how `n`
/// splits into blocks and panels, so `E_s` jumps between neighbouring sizes and the sizes
/// holding the target are several stretches, any of which a search over measured sizes may
/// return. The measured approach brackets by doubling `N`, so the sizes within a factor 2 of
/// the model's crossings are checked (evenly thinned to [`HOLDING_SCAN_SIZES`]), when `E_s`
/// jumps across the band between neighbouring sizes and `N p` is within [`SCAN_COST_LIMIT`].
fn holding_band(
    model: &ScalingModel,
    target: &PredictionTarget<'_>,
    work: &dyn Fn(f64) -> f64,
    size: Interval,
) -> Interval {
    if target.tolerance <= 0.0 {
        return size;
    }
    let band = (
        target.efficiency * (1.0 - target.tolerance),
        target.efficiency * (1.0 + target.tolerance),
    );
    let at = |efficiency: f64| {
        model
            .size_for_efficiency(efficiency, target.configuration, work, target.n_bounds)
            .unwrap_or(size.estimate)
    };
    // The window is the chosen model's own crossings, not `size`, which a bootstrap or an
    // open model form may have widened to the bounds: the measured search brackets around
    // one crossing, and a program's own model can take tens of ms per size at large N.
    let crossings = [at(band.0), at(band.1), size.estimate];
    let low = crossings.iter().copied().fold(f64::INFINITY, f64::min);
    let high = crossings.iter().copied().fold(0.0, f64::max);
    let held = size.hull(low, high);
    // A program's own model costs about `N p` per size (SUMMA's most of a second at N =
    // 24,000 on 1,016 nodes), and the scan evaluates it at up to HOLDING_SCAN_SIZES sizes:
    // beyond SCAN_COST_LIMIT the band's crossings are all it takes.
    if high * target.configuration.nodes() as f64 > SCAN_COST_LIMIT
        || !jumps_across_the_band(model, target, work, size.estimate, band)
    {
        return held;
    }
    let first = (low / 2.0).max(target.n_bounds.0).ceil();
    let last = (high * 2.0).min(target.n_bounds.1).floor();
    if last < first {
        return held;
    }
    let step = ((last - first) / HOLDING_SCAN_SIZES as f64).ceil().max(1.0);
    let holds = |n: f64| {
        model
            .efficiency(n, target.configuration, work)
            .is_ok_and(|e| band.0 <= e && e <= band.1)
    };
    (0..=((last - first) / step) as usize)
        .map(|k| first + k as f64 * step)
        .filter(|&n| holds(n))
        .fold(held, |held, n| held.hull(n, n))
}

/// Whether the model's `E_s` moves by more than the band's width between neighbouring sizes
/// among [`JUMP_PROBE_SIZES`] from `estimate`: only then can the sizes holding the target be
/// stretches apart (smaller jumps only fray the band's edges by a few sizes), and only then
/// is the scan worth its cost (SUMMA's own model takes most of a second per size on 1,000
/// nodes).
fn jumps_across_the_band(
    model: &ScalingModel,
    target: &PredictionTarget<'_>,
    work: &dyn Fn(f64) -> f64,
    estimate: f64,
    band: (f64, f64),
) -> bool {
    let start = estimate.round().max(target.n_bounds.0.ceil());
    let efficiencies: Vec<f64> = (0..JUMP_PROBE_SIZES)
        .map(|i| start + i as f64)
        .filter(|&n| n <= target.n_bounds.1)
        .filter_map(|n| model.efficiency(n, target.configuration, work).ok())
        .collect();
    efficiencies
        .windows(2)
        .any(|w| (w[1] - w[0]).abs() > band.1 - band.0)
}

/// Largest `N p` at which [`holding_band`] scans for sizes holding the target (a few ms per
/// size for GE's own model).
const SCAN_COST_LIMIT: f64 = 2e6;

/// Neighbouring sizes [`jumps_across_the_band`] looks at.
const JUMP_PROBE_SIZES: usize = 16;

/// At most this many sizes are checked for holding the target ([`holding_band`]).
const HOLDING_SCAN_SIZES: usize = 1024;

/// `size` with its lower end cut at the smallest size searched, `n_min`, which a scaled
/// model can pass the target at already ([`Caution::IntervalAtBound`]).
fn cut_below(size: Interval, n_min: f64, cautions: &mut Vec<Caution>) -> Interval {
    if size.low >= n_min {
        return size;
    }
    cautions.push(Caution::IntervalAtBound { n: n_min });
    Interval { low: n_min, ..size }
}

/// SplitMix64: a small, fast, seeded generator (the model crate takes no `rand` dependency).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64 * n as f64) as usize % n
    }
}
