//! Predictions with intervals that include the model-selection uncertainty, and the cautions
//! that say when the data cannot support them.

use super::caution::{Caution, MAX_EXTRAPOLATION};
use super::data::{Configuration, ScalingData};
use super::engine::{Engine, Repeats};
use super::model::{FittedTerm, ScalingModel};
use super::selection::{Prepared, Selection, choose, score};
use crate::error::{ModelError, Result, positive};
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

    /// Widened by `factor` around the estimate on a log scale (the values are positive).
    fn widened(self, factor: f64) -> Self {
        if factor <= 1.0 {
            return self;
        }
        Self {
            low: self.estimate * (self.low / self.estimate).powf(factor),
            high: self.estimate * (self.high / self.estimate).powf(factor),
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

/// Predictions at a target with 95% intervals from refitting and reselecting on resamples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bootstrap {
    /// The size `N` holding the target `E_s`.
    pub size: Interval,
    /// The time at that size, s.
    pub time_s: Interval,
    /// `psi(reference, target)` when a reference was given.
    pub psi: Option<Interval>,
    /// The resamples whose prediction succeeded.
    pub resamples: usize,
    /// The resamples whose chosen model did not reach the target in the bounds.
    pub unreachable: usize,
    /// The share of resamples that chose the selected model's hypothesis.
    pub same_hypothesis_share: f64,
    /// The factor the intervals were widened by on a log scale (1: not widened).
    pub widened_by: f64,
    /// What the hypotheses the cross-validation cannot tell from the chosen one predict.
    pub model_form: ModelForm,
    /// What the data cannot support, the model's cautions included.
    pub cautions: Vec<Caution>,
}

/// The sizes that the plausible hypotheses (those the cross-validation cannot tell from the
/// chosen one at 95%, the chosen one included) predict: the model-form uncertainty.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ModelForm {
    /// How many hypotheses are plausible.
    pub hypotheses: usize,
    /// The smallest size they predict.
    pub size_low: f64,
    /// The largest size they predict.
    pub size_high: f64,
    /// How many of them reach the target at no size searched, falling short of it (a larger
    /// size might).
    pub short_of_target: usize,
    /// How many of them pass the target already at the smallest size searched.
    pub past_target: usize,
}

/// Predicts the size holding `target.efficiency` on `target.configuration` (and the time
/// there and `psi` from the reference) with the selected model, and 95% percentile intervals
/// from `options.resamples` resamples of the runs, each refitted and reselected.
///
/// Each resample keeps every configuration and draws its runs with replacement (a stratified
/// case bootstrap); each configuration's times are also moved by another configuration's mean
/// relative residual, drawn with replacement (centred), so the intervals carry the
/// configuration-to-configuration misfit the cross-validation measured, not only the noise
/// within configurations. Reselection is among the best-ranked hypotheses of `selection`
/// (the selected one and the 40 next), with the same rule as [`super::select`]. The intervals
/// are widened on a log scale around the estimate by 2 when fewer than 3 configurations were
/// fitted, by `sqrt(ratio / 8)` when the target has `ratio > 8` times the largest fitted
/// node count, and likewise when the predicted size is more than 8 times the largest fitted
/// size; each widening is a [`Caution`].
///
/// Resampling runs under the chosen form cannot show how far the runs leave the form itself
/// open: a few configurations can fit laws that part widely beyond them. So the size
/// interval also takes in every plausible hypothesis' size ([`ModelForm`]; one that reaches
/// the target at no size searched opens that side to the bound), with
/// [`Caution::ModelForm`] when that widens it; and the sizes that hold the target within
/// its tolerance ([`PredictionTarget::tolerance`]), all of them where `E_s` is not monotone
/// in `n` (`holding_band`). The time's interval follows the size's:
/// it takes in the chosen model's times at its ends. `psi`'s is the resamples' percentiles,
/// since its two sizes move together.
///
/// `work(n)` is the work at size `n`, flop. Errors: the selected model does not reach the
/// target in the bounds ([`ModelError::Unreachable`]), or fewer than 10 resamples do.
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
    let predict = |model: &ScalingModel| -> Result<(f64, f64, Option<f64>)> {
        let n = model.size_for_efficiency(
            target.efficiency,
            target.configuration,
            work,
            target.n_bounds,
        )?;
        let time = model.predict_time(n, work(n), target.configuration)?;
        let psi = match target.reference {
            Some(reference) => {
                let n_ref = model.size_for_efficiency(
                    target.efficiency,
                    reference,
                    work,
                    target.n_bounds,
                )?;
                Some(
                    target.configuration.marked_speed() * work(n_ref)
                        / (reference.marked_speed() * work(n)),
                )
            }
            None => None,
        };
        Ok((n, time, psi))
    };
    let point = predict(&selection.model)?;

    let resampled = resampled_models(data, selection, options)?;
    let (mut sizes, mut times, mut psis) = (Vec::new(), Vec::new(), Vec::new());
    let mut unreachable = resampled.failed;
    for model in &resampled.models {
        match predict(model) {
            Ok((n, t, psi)) => {
                sizes.push(n);
                times.push(t);
                psis.extend(psi);
            }
            Err(_) => unreachable += 1,
        }
    }
    let (k, largest_n) = (resampled.configurations, resampled.largest_n);
    let same = resampled.same;
    if sizes.len() < 10 {
        return Err(ModelError::Inconsistent(format!(
            "only {} of {} resamples reached E_s = {} on \"{}\": too few for an interval",
            sizes.len(),
            options.resamples,
            target.efficiency,
            target.configuration.label
        )));
    }
    let mut cautions = selection.model.cautions.clone();
    let mut widen = configuration_widening(selection, k, target.configuration, &mut cautions);
    let size_ratio = point.0 / largest_n;
    if size_ratio > MAX_EXTRAPOLATION {
        widen *= (size_ratio / MAX_EXTRAPOLATION).sqrt();
        cautions.push(Caution::SizeExtrapolation {
            n: point.0,
            largest_fitted: largest_n,
        });
    }
    let resamples = sizes.len();
    let resampled = percentiles(point.0, &mut sizes).widened(widen);
    let model_form = model_form(selection, point.0, |model| {
        model.size_for_efficiency(
            target.efficiency,
            target.configuration,
            work,
            target.n_bounds,
        )
    })?;
    let size = with_model_form(resampled, &model_form, target.n_bounds);
    if size != resampled {
        cautions.push(Caution::ModelForm {
            hypotheses: model_form.hypotheses,
            low: model_form.size_low,
            high: model_form.size_high,
            unreached: model_form.short_of_target + model_form.past_target,
        });
    }
    let size = holding_band(&selection.model, target, work, size);
    let size = cut_at_bounds(size, target.n_bounds, &mut cautions);
    let time_at = |n: f64| {
        selection
            .model
            .predict_time(n, work(n), target.configuration)
    };
    let time_s = percentiles(point.1, &mut times).hull(time_at(size.low)?, time_at(size.high)?);
    // psi's sizes, the target's and the reference's, move together in each resample (a
    // model that overshoots one overshoots both): its interval is the resamples' alone.
    let psi = point.2.map(|psi| percentiles(psi, &mut psis));
    Ok(Bootstrap {
        size,
        time_s,
        psi,
        resamples,
        unreachable,
        same_hypothesis_share: same as f64 / options.resamples as f64,
        widened_by: widen,
        model_form,
        cautions,
    })
}

/// The time at one size, with its 95% interval ([`bootstrap_time`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeAt {
    /// The time, s.
    pub time_s: Interval,
    /// The resamples whose model gave a time.
    pub resamples: usize,
    /// What the data cannot support, the model's cautions included.
    pub cautions: Vec<Caution>,
}

/// Predicts the time at size `n` (work `work_flop`) on `configuration` with the selected
/// model, and its 95% interval as [`bootstrap`] makes the size's: the resamples' percentiles
/// (each refitted and reselected), widened on a log scale by 2 when fewer than 3
/// configurations were fitted, by `sqrt(ratio / 8)` past 8 times the largest fitted node
/// count or size, and likewise below an eighth of the smallest fitted size (each a
/// [`Caution`]), then taking in every plausible hypothesis' time at `n` (the model-form
/// uncertainty). Errors: the model gives no positive time, or fewer than 10 resamples do.
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
    let time = |model: &ScalingModel| model.predict_time(n, work_flop, configuration);
    let estimate = time(&selection.model)?;
    let resampled = resampled_models(data, selection, options)?;
    let mut times: Vec<f64> = resampled
        .models
        .iter()
        .filter_map(|m| time(m).ok())
        .collect();
    if times.len() < 10 {
        return Err(ModelError::Inconsistent(format!(
            "only {} of {} resamples gave a time at n = {n} on \"{}\": too few for an interval",
            times.len(),
            options.resamples,
            configuration.label
        )));
    }
    let mut cautions = selection.model.cautions.clone();
    let mut widen = configuration_widening(
        selection,
        resampled.configurations,
        configuration,
        &mut cautions,
    );
    let size_ratio = n / resampled.largest_n;
    if size_ratio > MAX_EXTRAPOLATION {
        widen *= (size_ratio / MAX_EXTRAPOLATION).sqrt();
        cautions.push(Caution::SizeExtrapolation {
            n,
            largest_fitted: resampled.largest_n,
        });
    }
    // Below the sizes fitted the overhead's form is as unseen as above them.
    let below_ratio = resampled.smallest_n / n;
    if below_ratio > MAX_EXTRAPOLATION {
        widen *= (below_ratio / MAX_EXTRAPOLATION).sqrt();
        cautions.push(Caution::SizeBelowFitted {
            n,
            smallest_fitted: resampled.smallest_n,
        });
    }
    let mut time_s = percentiles(estimate, &mut times).widened(widen);
    for model in plausible_models(selection) {
        match time(&model) {
            Ok(t) => time_s = time_s.hull(t, t),
            Err(e @ ModelError::TermUndefined { .. }) => return Err(e),
            Err(_) => {}
        }
    }
    Ok(TimeAt {
        time_s,
        resamples: times.len(),
        cautions,
    })
}

/// The log-scale widening of an interval on `configuration` for what the fit could not see:
/// 2 when fewer than 3 of them were fitted, `sqrt(ratio / 8)` when it has `ratio > 8` times
/// the largest fitted node count (a [`Caution`]).
fn configuration_widening(
    selection: &Selection,
    fitted_configurations: usize,
    configuration: &Configuration,
    cautions: &mut Vec<Caution>,
) -> f64 {
    let mut widen = 1.0;
    if fitted_configurations < 3 {
        widen *= 2.0;
    }
    let largest = selection.model.largest_fitted_nodes;
    let ratio = configuration.nodes() as f64 / largest as f64;
    if ratio > MAX_EXTRAPOLATION {
        widen *= (ratio / MAX_EXTRAPOLATION).sqrt();
        cautions.push(Caution::Extrapolation {
            nodes: configuration.nodes(),
            largest_fitted: largest,
        });
    }
    widen
}

/// The 95% percentile interval of `values` around `estimate` (which it always contains).
fn percentiles(estimate: f64, values: &mut [f64]) -> Interval {
    values.sort_by(|a, b| a.partial_cmp(b).expect("finite predictions"));
    Interval {
        estimate,
        low: percentile(values, 0.025).min(estimate),
        high: percentile(values, 0.975).max(estimate),
    }
}

/// The models [`bootstrap`]'s resamples reselect, and what the resampling saw.
struct Resampled {
    /// One per resample whose reselection chose a model.
    models: Vec<ScalingModel>,
    /// The resamples on which no hypothesis of the shortlist could be fitted.
    failed: usize,
    /// The resamples that chose the selected model's hypothesis.
    same: usize,
    /// How many configurations were fitted.
    configurations: usize,
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
        configurations: k,
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

/// The sizes every plausible hypothesis of `selection` predicts with `size_of`; an error
/// when one of them carries a term that has no value there ([`ModelError::TermUndefined`]).
fn model_form(
    selection: &Selection,
    estimate: f64,
    size_of: impl Fn(&ScalingModel) -> Result<f64>,
) -> Result<ModelForm> {
    let mut form = ModelForm {
        hypotheses: selection.plausible.len().max(1),
        size_low: estimate,
        size_high: estimate,
        short_of_target: 0,
        past_target: 0,
    };
    for model in plausible_models(selection) {
        match size_of(&model) {
            Ok(n) => {
                form.size_low = form.size_low.min(n);
                form.size_high = form.size_high.max(n);
            }
            Err(ModelError::Unreachable { best, target, .. }) if best < target => {
                form.short_of_target += 1
            }
            Err(e @ ModelError::TermUndefined { .. }) => return Err(e),
            Err(_) => form.past_target += 1,
        }
    }
    Ok(form)
}

/// The plausible hypotheses of `selection` but the chosen one, each fitted to every run.
fn plausible_models(selection: &Selection) -> impl Iterator<Item = ScalingModel> + '_ {
    selection
        .plausible
        .iter()
        .skip(1)
        .map(|(columns, coefficients)| ScalingModel {
            terms: columns
                .iter()
                .zip(coefficients)
                .map(|(&c, &coefficient)| FittedTerm {
                    term: selection.terms[c].clone(),
                    coefficient,
                    ci95: None,
                })
                .collect(),
            ..selection.model.clone()
        })
}

/// `interval` widened to take in the plausible hypotheses' sizes, and opened to the largest
/// (smallest) size searched when some of them fall short of the target there (pass it there).
fn with_model_form(interval: Interval, form: &ModelForm, (n_min, n_max): (f64, f64)) -> Interval {
    let mut out = interval.hull(form.size_low, form.size_high);
    if form.short_of_target > 0 {
        out.high = out.high.max(n_max);
    }
    if form.past_target > 0 {
        out.low = out.low.min(n_min);
    }
    out
}

/// `size` cut to the sizes searched: a widened interval can reach past them, where the
/// model was never asked for an N; each cut is a [`Caution`].
fn cut_at_bounds(
    size: Interval,
    (n_min, n_max): (f64, f64),
    cautions: &mut Vec<Caution>,
) -> Interval {
    if size.high > n_max {
        cautions.push(Caution::IntervalAtBound {
            n: n_max,
            upper: true,
        });
    }
    if size.low < n_min {
        cautions.push(Caution::IntervalAtBound {
            n: n_min,
            upper: false,
        });
    }
    Interval {
        low: size.low.max(n_min),
        high: size.high.min(n_max),
        ..size
    }
}

/// The `q` quantile of sorted `values`, interpolated linearly.
fn percentile(values: &[f64], q: f64) -> f64 {
    let position = q * (values.len() - 1) as f64;
    let (below, fraction) = (position.floor() as usize, position.fract());
    let above = (below + 1).min(values.len() - 1);
    values[below] + fraction * (values[above] - values[below])
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
