//! Choosing the overhead: every hypothesis fitted and cross-validated by leaving out whole
//! configurations.

use super::caution::{Caution, POOR_CV_ERROR_PERCENT};
use super::data::{Configuration, Run, ScalingData};
use super::engine::{Engine, Evaluation, Fold, Repeats};
use super::hypothesis::{HypothesisSpace, Term};
use super::model::{FittedTerm, ScalingModel, formula};
use crate::error::{ModelError, Result};
use crate::fit::fit_linear;
use serde::Serialize;
use std::collections::HashMap;

/// How [`select`] chooses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelectOptions {
    /// Runs shorter than this (s), the noise floor, are left out of the fit and listed in
    /// [`Selection::excluded`]. 0 keeps every run.
    pub min_time_s: f64,
    /// Hypotheses whose cross-validated error is within this fraction of the best one's tie;
    /// the simplest of them is chosen (fewest terms, then smallest exponents).
    pub tie_tolerance: f64,
    /// Hypotheses whose mean paired held-out error is within this many standard errors of
    /// the best one's tie (the one-standard-error rule; 0 turns it off).
    pub standard_errors: f64,
    /// How much more a fold whose held-out configurations are all larger (more nodes) than
    /// every fitted one weighs than one that interpolates.
    pub extrapolation_weight: f64,
    /// The complexity prior: a hypothesis is ranked by its cross-validated error times
    /// `1 + factor_penalty F`, `F` the number of factors of its terms (`n^2 log2(p)`: 2; the
    /// constant, the slowest share and a custom term: 1). Among a few hundred thousand
    /// hypotheses some fit the noise of a few dozen runs better than the true law does; the
    /// prior keeps them from winning on that alone.
    pub factor_penalty: f64,
    /// A hypothesis with a coefficient within this many standard errors of 0 (in the fit to
    /// every run) is refused: the runs do not show the term is needed.
    pub significance: f64,
    /// How many runners-up [`Selection`] keeps.
    pub runners_up: usize,
}

impl Default for SelectOptions {
    fn default() -> Self {
        Self {
            min_time_s: 0.0,
            tie_tolerance: 0.02,
            standard_errors: 1.0,
            factor_penalty: 0.3,
            significance: 2.0,
            extrapolation_weight: 2.0,
            runners_up: 5,
        }
    }
}

/// A run [`select`] left out, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExcludedRun {
    /// The run.
    pub run: Run,
    /// Why it was left out.
    pub reason: String,
}

/// The chosen model, its runners-up and how the choice was made.
#[derive(Debug, Clone, Serialize)]
pub struct Selection {
    /// The chosen model.
    pub model: ScalingModel,
    /// The next best hypotheses by cross-validated error, best first.
    pub runners_up: Vec<ScalingModel>,
    /// How many hypotheses were fitted.
    pub hypotheses: usize,
    /// How many of them the runs could not identify or fitted with a negative coefficient.
    pub rejected: usize,
    /// How many cross-validation folds scored each hypothesis.
    pub folds: usize,
    /// Runs left out of the fit (below the noise floor).
    pub excluded: Vec<ExcludedRun>,
    /// How many hypotheses the cross-validation cannot tell from the chosen one (the chosen
    /// one included).
    pub plausible_hypotheses: usize,
    /// The best-ranked hypotheses (columns of `terms`), for the bootstrap to reselect among.
    #[serde(skip)]
    pub(super) shortlist: Vec<Vec<usize>>,
    /// The space the hypotheses were drawn from, for the nested folds to select in again.
    #[serde(skip)]
    pub(super) space: HypothesisSpace,
    /// The nested folds and the leave-largest-out model (`prediction::nested_folds`), found
    /// once.
    #[serde(skip)]
    pub(super) nested: std::sync::OnceLock<super::predictive::Nested>,
    /// Every column the hypotheses are made of: the compute term, `1`, the slowest share, the
    /// overheads.
    #[serde(skip)]
    pub(super) terms: Vec<Term>,
    #[serde(skip)]
    pub(super) options: SelectOptions,
}

/// How many best-ranked hypotheses the bootstrap reselects among.
const SHORTLIST: usize = 40;

/// Column indices of the fixed terms.
pub(super) const COMPUTE: usize = 0;
const CONSTANT: usize = 1;
const SLOWEST: usize = 2;

/// The runs prepared for fitting: their points (a size on a configuration, with a work: the
/// runs there share every column), each column's value at each point, groups and folds.
pub(super) struct Prepared {
    /// `columns[c][i]`: column `c` at point `i`.
    pub columns: Vec<Vec<f64>>,
    /// Each point's size.
    pub n: Vec<f64>,
    /// Each point's configuration (index into `configurations`).
    pub configuration: Vec<usize>,
    /// The runs at each point.
    pub repeats: Vec<Repeats>,
    /// Each run's point.
    pub point_of_run: Vec<usize>,
    /// Each run's time.
    pub times: Vec<f64>,
    /// The configurations fitted, ordered by node count then marked speed.
    pub configurations: Vec<Configuration>,
}

impl Prepared {
    pub fn new(data: &ScalingData, runs: &[Run], terms: &[Term]) -> Result<Self> {
        let mut configurations: Vec<Configuration> = data
            .configurations
            .iter()
            .filter(|c| runs.iter().any(|r| r.configuration == c.label))
            .cloned()
            .collect();
        configurations.sort_by(|a, b| {
            (a.nodes(), a.marked_speed())
                .partial_cmp(&(b.nodes(), b.marked_speed()))
                .expect("speeds are finite")
        });
        let index: HashMap<&str, usize> = configurations
            .iter()
            .enumerate()
            .map(|(i, c)| (c.label.as_str(), i))
            .collect();
        // Points in the order of their first run, so runs without repeats keep their order.
        let mut first_run: Vec<usize> = Vec::new();
        let mut points: HashMap<(usize, u64, u64), usize> = HashMap::new();
        let point_of_run: Vec<usize> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let c = index[r.configuration.as_str()];
                let key = (c, r.n.to_bits(), r.work_flop.to_bits());
                *points.entry(key).or_insert_with(|| {
                    first_run.push(i);
                    first_run.len() - 1
                })
            })
            .collect();
        let configuration: Vec<usize> = first_run
            .iter()
            .map(|&i| index[runs[i].configuration.as_str()])
            .collect();
        let mut columns = Vec::with_capacity(terms.len());
        for term in terms {
            let column: Vec<f64> = first_run
                .iter()
                .zip(&configuration)
                .map(|(&i, &c)| term.value(runs[i].n, runs[i].work_flop, &configurations[c]))
                .collect();
            if let Some(i) = column.iter().position(|v| !v.is_finite()) {
                let run = &runs[first_run[i]];
                return Err(ModelError::Inconsistent(format!(
                    "the term \"{term}\" is {} for the run of n = {} on \"{}\": every term must be finite",
                    column[i], run.n, run.configuration
                )));
            }
            columns.push(column);
        }
        let times: Vec<f64> = runs.iter().map(|r| r.time_s).collect();
        Ok(Self {
            columns,
            n: first_run.iter().map(|&i| runs[i].n).collect(),
            configuration,
            repeats: Repeats::of(
                first_run.len(),
                point_of_run.iter().copied().zip(times.iter().copied()),
            ),
            point_of_run,
            times,
            configurations,
        })
    }

    /// Each run's configuration (index into `configurations`).
    pub fn run_configuration(&self, run: usize) -> usize {
        self.configuration[self.point_of_run[run]]
    }

    /// Groups and folds of the points, each with the runs `repeats` gives (those without runs
    /// are in no fold). With 3 or more configurations, a group is the points of one
    /// configuration at its smaller sizes, or at its largest sizes (the largest third of its
    /// distinct sizes, at least one, when at least 2 smaller ones remain). The folds leave
    /// out each configuration in turn (while 2 remain), every configuration above each node
    /// count together (the fit of the smaller ones extrapolating to them), and the largest
    /// sizes of every configuration together (extrapolating in `n`); folds that extrapolate
    /// (to more nodes than every fitted configuration, or to larger sizes) weigh
    /// `extrapolation_weight`. With 2 configurations each point is a group, left out in turn
    /// with all its runs: a run's repetitions at its size would otherwise stay in the fit that
    /// predicts it.
    pub fn folds(
        &self,
        repeats: &[Repeats],
        extrapolation_weight: f64,
    ) -> (Vec<usize>, usize, Vec<Fold>) {
        let k = self.configurations.len();
        let points = self.n.len();
        if k < 3 {
            let folds = (0..points)
                .filter(|&i| repeats[i].count > 0.0)
                .map(|i| Fold {
                    test: vec![i],
                    weight: 1.0,
                })
                .collect();
            return ((0..points).collect(), points, folds);
        }
        let large = self.large_sizes(repeats);
        let group: Vec<usize> = (0..points)
            .map(|i| 2 * self.configuration[i] + usize::from(large[i]))
            .collect();
        let nodes: Vec<usize> = self.configurations.iter().map(|c| c.nodes()).collect();
        let weight = |test: &[usize]| {
            let largest_fitted = (0..k)
                .filter(|c| !test.contains(c))
                .map(|c| nodes[c])
                .max()
                .unwrap_or(0);
            if test.iter().all(|&c| nodes[c] > largest_fitted) {
                extrapolation_weight
            } else {
                1.0
            }
        };
        let fold = |test: Vec<usize>| Fold {
            weight: weight(&test),
            test: test.iter().flat_map(|&c| [2 * c, 2 * c + 1]).collect(),
        };
        let mut folds: Vec<Fold> = (0..k).map(|c| fold(vec![c])).collect();
        let mut distinct = nodes.clone();
        distinct.dedup();
        for &cut in &distinct {
            let test: Vec<usize> = (0..k).filter(|&c| nodes[c] > cut).collect();
            if k - test.len() >= 2 && test.len() > 1 {
                folds.push(fold(test));
            }
        }
        if (0..points).any(|i| large[i] && repeats[i].count > 0.0) {
            folds.push(Fold {
                test: (0..k).map(|c| 2 * c + 1).collect(),
                weight: extrapolation_weight,
            });
        }
        (group, 2 * k, folds)
    }

    /// Whether each point is at one of its configuration's largest sizes (see
    /// [`Self::folds`]), of the points with runs.
    fn large_sizes(&self, repeats: &[Repeats]) -> Vec<bool> {
        let mut sizes: Vec<Vec<f64>> = vec![Vec::new(); self.configurations.len()];
        for (i, &c) in self.configuration.iter().enumerate() {
            if repeats[i].count > 0.0 {
                sizes[c].push(self.n[i]);
            }
        }
        let cut: Vec<Option<f64>> = sizes
            .iter_mut()
            .map(|sizes| {
                sizes.sort_by(|a, b| a.partial_cmp(b).expect("finite sizes"));
                sizes.dedup();
                let large = (sizes.len() / 3).max(1);
                (sizes.len() >= large + 2).then(|| sizes[sizes.len() - large])
            })
            .collect();
        (0..self.n.len())
            .map(|i| cut[self.configuration[i]].is_some_and(|cut| self.n[i] >= cut))
            .collect()
    }
}

/// One scored hypothesis.
#[derive(Debug, Clone)]
pub(super) struct Scored {
    pub columns: Vec<usize>,
    /// The number of factors of its terms.
    pub factors: usize,
    pub evaluation: Evaluation,
    pub complexity: (usize, f64),
}

/// Fits and cross-validates each hypothesis (`None` for those refused), the columns of the
/// engine those of `prepared`.
pub(super) fn score(
    engine: &Engine,
    hypotheses: &[Vec<usize>],
    terms: &[Term],
) -> Vec<Option<Scored>> {
    hypotheses
        .iter()
        .map(|h| {
            engine.evaluate(h).map(|evaluation| Scored {
                columns: h.clone(),
                factors: h.iter().map(|&c| terms[c].factors()).sum(),
                evaluation,
                complexity: (
                    h.len(),
                    h.iter().map(|&c| terms[c].complexity()).sum::<f64>(),
                ),
            })
        })
        .collect()
}

/// The position (in `scored`) of the hypothesis chosen: the simplest (fewest columns, then
/// fewest factors, then smallest exponents, then smallest error) of those that tie with the
/// best by cross-validated error with the complexity prior ([`SelectOptions::factor_penalty`]).
/// A hypothesis ties when its penalised error is within `options.tie_tolerance` of the best
/// one's, or when the mean of the paired differences of its held-out squared
/// relative errors from the best one's is within `options.standard_errors` standard errors of
/// that mean (the one-standard-error rule, paired: both are scored on the same held-out runs).
pub(super) fn choose(engine: &Engine, scored: &[Scored], options: &SelectOptions) -> Option<usize> {
    let penalised =
        |s: &Scored| s.evaluation.cv_error * (1.0 + options.factor_penalty * s.factors as f64);
    let best = (0..scored.len()).min_by(|&i, &j| {
        penalised(&scored[i])
            .partial_cmp(&penalised(&scored[j]))
            .expect("finite errors")
    })?;
    let best_error = penalised(&scored[best]);
    let reference = engine.held_out_errors(&scored[best].columns);
    let mut order: Vec<usize> = (0..scored.len())
        .filter(|&i| penalised(&scored[i]) <= best_error * (1.0 + CONSIDERED) + EQUAL)
        .collect();
    let key = |s: &Scored| {
        (
            s.complexity.0,
            s.factors,
            s.complexity.1,
            s.evaluation.cv_error,
        )
    };
    order.sort_by(|&i, &j| {
        key(&scored[i])
            .partial_cmp(&key(&scored[j]))
            .expect("finite")
    });
    let ties = |i: usize| {
        if penalised(&scored[i]) <= best_error * (1.0 + options.tie_tolerance) + EQUAL {
            return true;
        }
        let (Some(reference), Some(items)) = (
            reference.as_ref(),
            engine.held_out_errors(&scored[i].columns),
        ) else {
            return false;
        };
        if options.standard_errors <= 0.0 {
            return false;
        }
        paired_difference(reference, &items)
            .is_some_and(|(mean, spread)| mean <= options.standard_errors * spread)
    };
    order.into_iter().find(|&i| ties(i)).or(Some(best))
}

/// The weighted mean of the paired differences `items - reference` of per-fold held-out
/// errors, and its standard error; `None` without folds.
fn paired_difference(reference: &[(f64, f64)], items: &[(f64, f64)]) -> Option<(f64, f64)> {
    let total: f64 = reference.iter().map(|r| r.0).sum();
    if reference.is_empty() || total <= 0.0 {
        return None;
    }
    let d: Vec<(f64, f64)> = reference
        .iter()
        .zip(items)
        .map(|(r, e)| (r.0, e.1 - r.1))
        .collect();
    let mean = d.iter().map(|(w, x)| w * x).sum::<f64>() / total;
    let spread = d
        .iter()
        .map(|(w, x)| (w * (x - mean)).powi(2))
        .sum::<f64>()
        .sqrt()
        / total;
    Some((mean, spread))
}

/// The positions in `scored` of every hypothesis but `chosen`, best cross-validated error first.
fn others_by_cv_error(scored: &[Scored], chosen: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scored.len()).filter(|&i| i != chosen).collect();
    order.sort_by(|&i, &j| {
        scored[i]
            .evaluation
            .cv_error
            .partial_cmp(&scored[j].evaluation.cv_error)
            .expect("finite errors")
    });
    order
}

/// Standard errors of the paired held-out differences within which a hypothesis is as good
/// as the chosen one for [`plausible`]: 1.96, a two-sided test at 95%.
const PLAUSIBLE_STANDARD_ERRORS: f64 = 1.96;

/// How many hypotheses, best cross-validated error first, [`plausible`] tests.
const PLAUSIBLE_CANDIDATES: usize = 400;

/// The hypotheses the cross-validation cannot tell from the chosen one at 95% (a model
/// confidence set, in the spirit of Hansen, Lunde and Nason 2011): those whose held-out
/// errors, paired fold by fold with the chosen hypothesis, are not larger by more than
/// [`PLAUSIBLE_STANDARD_ERRORS`] standard errors of their mean difference, and whose
/// cross-validated error is within half again the chosen one's (as for a tie in [`choose`]:
/// a few folds' standard error alone would let in laws twice as wrong); the chosen one
/// first. Their predictions spread as far as the runs leave the overhead's form open, which
/// resampling the runs under one form does not show; the bootstrap's intervals take them in.
fn plausible(engine: &Engine, scored: &[Scored], chosen: usize) -> Vec<(Vec<usize>, Vec<f64>)> {
    let entry = |s: &Scored| (s.columns.clone(), s.evaluation.coefficients.clone());
    let mut set = vec![entry(&scored[chosen])];
    let Some(reference) = engine.held_out_errors(&scored[chosen].columns) else {
        return set;
    };
    let order = others_by_cv_error(scored, chosen);
    let ceiling = (1.0 + CONSIDERED) * scored[chosen].evaluation.cv_error + EQUAL;
    for &i in order.iter().take(PLAUSIBLE_CANDIDATES) {
        if scored[i].evaluation.cv_error > ceiling {
            break;
        }
        let Some(items) = engine.held_out_errors(&scored[i].columns) else {
            continue;
        };
        if paired_difference(&reference, &items)
            .is_some_and(|(mean, spread)| mean <= PLAUSIBLE_STANDARD_ERRORS * spread + EQUAL)
        {
            set.push(entry(&scored[i]));
        }
    }
    set
}

/// Relative errors closer than this are equal (rounding in exact data).
const EQUAL: f64 = 1e-7;

/// Hypotheses whose cross-validated error is more than this fraction above the best one's
/// are not considered ties, whatever the standard error.
const CONSIDERED: f64 = 0.5;

/// Every hypothesis of `space` over the columns `[compute, 1, slowest share, overheads...]`:
/// the compute term with up to `max_terms` overheads, each with and without `1` and the
/// slowest share.
fn hypotheses(
    engine: &Engine,
    overheads: usize,
    max_terms: usize,
    slowest: bool,
) -> Vec<Vec<usize>> {
    let usable: Vec<usize> = (3..3 + overheads).filter(|&c| engine.usable(c)).collect();
    let mut sets: Vec<Vec<usize>> = vec![vec![]];
    sets.extend(usable.iter().map(|&c| vec![c]));
    if max_terms >= 2 {
        for (i, &a) in usable.iter().enumerate() {
            sets.extend(usable[i + 1..].iter().map(|&b| vec![a, b]));
        }
    }
    let slowest = slowest && engine.usable(SLOWEST);
    let mut out = Vec::with_capacity(sets.len() * 4);
    for set in sets {
        for constant in [false, true] {
            for share in [false, true] {
                if share && !slowest {
                    continue;
                }
                let mut h = vec![COMPUTE];
                h.extend(&set);
                if share {
                    h.push(SLOWEST);
                }
                if constant {
                    h.push(CONSTANT);
                }
                out.push(h);
            }
        }
    }
    out
}

/// Fits `T = a W/C + T_o(n, p) [+ b]` to the runs with every hypothesis of `space` and
/// chooses by cross-validation leaving out whole configurations.
///
/// - **Fit.** Least squares on relative residuals (weights `1/T`). A hypothesis is refused when
///   the runs do not identify it, when a coefficient of its fit to every run is negative (a
///   negative overhead does not extrapolate), or within [`SelectOptions::significance`] (2)
///   standard errors of 0 (the runs do not show the term is needed).
/// - **Score.** The root-mean-square relative error of held-out runs' times over folds that
///   leave out each configuration in turn (while 2 remain), every configuration above each
///   node count together, and the largest sizes of every configuration together (see
///   `Prepared::folds`). Folds that extrapolate (all held-out configurations larger than
///   every fitted one, or the largest sizes) weigh [`SelectOptions::extrapolation_weight`]
///   (2): a scaling model is used to predict larger configurations at larger sizes, so it is
///   chosen by how it predicts them. Within a fold the fit is non-negative least squares.
/// - **Choice.** The score times `1 + 0.3 F`, `F` the number of factors of the hypothesis'
///   terms ([`SelectOptions::factor_penalty`]), ranks the hypotheses: among some 64 000, a few
///   fit the noise of a few dozen runs better than the true law, and the prior keeps them from
///   winning on that alone. The simplest (fewest columns, then factors, then exponents) of
///   those that tie with the best is chosen: within [`SelectOptions::tie_tolerance`] (2%) of
///   it, or within [`SelectOptions::standard_errors`] (1) standard errors of it in the paired
///   per-fold differences of their held-out errors (the one-standard-error rule). The next
///   best by score are the runners-up.
/// - **Few configurations.** With only 2, each point (a size on a configuration, with all its
///   runs) is left out instead, hypotheses have one
///   overhead term at most (2 configurations cannot tell more apart), the program's own model
///   (the space's custom terms), where the runs identify it, is chosen over the normal form
///   and the slowest share (whose form in `p` 2 configurations cannot check), and the model
///   carries [`Caution::FewConfigurations`].
///
/// Errors: no runs, a bad run or configuration, runs on fewer than 2 configurations (after
/// leaving out those below the noise floor), or no hypothesis the runs identify.
pub fn select(
    data: &ScalingData,
    space: &HypothesisSpace,
    options: &SelectOptions,
) -> Result<Selection> {
    data.check()?;
    let (runs, excluded) = split_noise_floor(&data.runs, options.min_time_s);
    let mut terms = vec![space.compute_term(), Term::Constant, Term::SlowestShare];
    let overheads = space.overhead_terms();
    let overhead_count = overheads.len();
    terms.extend(overheads);
    let prepared = Prepared::new(data, &runs, &terms)?;
    let k = prepared.configurations.len();
    if k < 2 {
        return Err(ModelError::Inconsistent(format!(
            "a scaling model needs runs on at least 2 configurations, got {k}{}: run more configurations",
            prepared
                .configurations
                .first()
                .map(|c| format!(" (\"{}\")", c.label))
                .unwrap_or_default()
        )));
    }
    let (group, groups, folds) = prepared.folds(&prepared.repeats, options.extrapolation_weight);
    let engine = Engine::new(
        &prepared.columns,
        &prepared.repeats,
        &group,
        groups,
        &folds,
        options.significance,
    );
    let max_terms = if k < 3 {
        1
    } else {
        space.max_overhead_terms.clamp(1, 2)
    };
    let all = hypotheses(&engine, overhead_count, max_terms, space.slowest_share());
    let scored: Vec<Scored> = score(&engine, &all, &terms).into_iter().flatten().collect();
    let rejected = all.len() - scored.len();
    let own_columns = 3 + overhead_count - space.custom.len()..3 + overhead_count;
    let family = if k < 3 {
        own_model_family(&scored, &own_columns)
    } else {
        (0..scored.len()).collect()
    };
    let family_scored: Vec<Scored> = family.iter().map(|&i| scored[i].clone()).collect();
    let chosen = choose(&engine, &family_scored, options)
        .map(|i| family[i])
        .ok_or_else(|| {
            ModelError::Inconsistent(format!(
                "no hypothesis is identified by these {} runs with non-negative coefficients: add runs at other sizes",
                runs.len()
            ))
        })?;
    let order = others_by_cv_error(&scored, chosen);
    let build = |s: &Scored| model(&prepared, &terms, s);
    // The interval takes in every form the runs leave open, the bootstrap reselects within
    // the family the choice was made in.
    let plausible = plausible(&engine, &scored, chosen);
    let shortlist = std::iter::once(chosen)
        .chain(
            order
                .iter()
                .copied()
                .filter(|i| family.contains(i))
                .take(SHORTLIST),
        )
        .map(|i| scored[i].columns.clone())
        .collect();
    Ok(Selection {
        model: build(&scored[chosen]),
        runners_up: order
            .iter()
            .take(options.runners_up)
            .map(|&i| build(&scored[i]))
            .collect(),
        hypotheses: all.len(),
        rejected,
        folds: folds.len(),
        excluded,
        plausible_hypotheses: plausible.len(),
        shortlist,
        space: space.clone(),
        nested: std::sync::OnceLock::new(),
        terms,
        options: options.clone(),
    })
}

/// The indices of the hypotheses of `scored` the choice is made among with runs on 2
/// configurations: those of the program's own model (its custom terms `own`, the constant and
/// the compute term only) when the runs identify one with a custom term, since 2
/// configurations cannot check an overhead's form in `p` (a normal-form term's form in `p`,
/// or the slowest share's weight, would be chosen from the one configuration that has it),
/// while the program's own model has its form in `p` from the program and the machine;
/// otherwise every hypothesis.
fn own_model_family(scored: &[Scored], own: &std::ops::Range<usize>) -> Vec<usize> {
    let is_normal_form = |c: &usize| (*c >= 3 || *c == SLOWEST) && !own.contains(c);
    let has_own = |s: &Scored| s.columns.iter().any(|c| own.contains(c));
    let all = 0..scored.len();
    if !scored.iter().any(has_own) {
        return all.collect();
    }
    all.filter(|&i| !scored[i].columns.iter().any(is_normal_form))
        .collect()
}

fn split_noise_floor(runs: &[Run], floor: f64) -> (Vec<Run>, Vec<ExcludedRun>) {
    let (kept, below): (Vec<Run>, Vec<Run>) = runs.iter().cloned().partition(|r| r.time_s >= floor);
    let excluded = below
        .into_iter()
        .map(|run| ExcludedRun {
            reason: format!(
                "{} s is below the noise floor {floor} s",
                crate::numbers::three_digits(run.time_s)
            ),
            run,
        })
        .collect();
    (kept, excluded)
}

/// The model of a scored hypothesis, its coefficients' 95% intervals from the weighted fit.
pub(super) fn model(prepared: &Prepared, terms: &[Term], scored: &Scored) -> ScalingModel {
    let names: Vec<String> = scored
        .columns
        .iter()
        .map(|&c| term_name(&terms[c]))
        .collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    // The coefficients' intervals from the runs one by one.
    let columns: Vec<Vec<f64>> = scored
        .columns
        .iter()
        .map(|&c| {
            let column = &prepared.columns[c];
            prepared.point_of_run.iter().map(|&i| column[i]).collect()
        })
        .collect();
    let weights: Vec<f64> = prepared.times.iter().map(|t| 1.0 / t).collect();
    let intervals = fit_linear(&name_refs, &columns, &prepared.times, Some(&weights)).ok();
    let mut fitted: Vec<FittedTerm> = scored
        .columns
        .iter()
        .enumerate()
        .map(|(q, &c)| FittedTerm {
            term: terms[c].clone(),
            coefficient: scored.evaluation.coefficients[q],
            ci95: intervals.as_ref().and_then(|f| f.parameters[q].ci95),
        })
        .collect();
    // As a person writes it: W/C, then the overheads from the fastest-growing, the constant last.
    fitted.sort_by(|a, b| {
        let rank = |t: &Term| match t {
            Term::Compute | Term::EqualShareCompute => (0, 0.0),
            Term::Power(_) | Term::Custom(_) => (1, -t.complexity()),
            Term::SlowestShare => (2, 0.0),
            Term::Constant => (3, 0.0),
        };
        rank(&a.term).partial_cmp(&rank(&b.term)).expect("finite")
    });
    let configurations = prepared.configurations.len();
    let cv_error_percent = 100.0 * scored.evaluation.cv_error;
    let mut cautions = Vec::new();
    if configurations < 3 {
        cautions.push(Caution::FewConfigurations { configurations });
    }
    if cv_error_percent > POOR_CV_ERROR_PERCENT {
        cautions.push(Caution::PoorFit { cv_error_percent });
    }
    ScalingModel {
        formula: formula(&fitted),
        terms: fitted,
        cv_error_percent,
        fit_error_percent: 100.0 * scored.evaluation.fit_error,
        configurations,
        largest_fitted_nodes: prepared
            .configurations
            .iter()
            .map(|c| c.nodes())
            .max()
            .unwrap_or(0),
        runs: prepared.times.len(),
        cautions,
    }
}

fn term_name(term: &Term) -> String {
    match term {
        Term::Constant => "1".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs on `nodes.len()` configurations of 1 Gflop/s nodes, `repeats` at each of `sizes`.
    fn data(nodes: &[usize], sizes: &[f64], repeats: usize) -> ScalingData {
        let mut data = ScalingData::default();
        for &p in nodes {
            let label = format!("p{p}");
            data.configurations
                .push(Configuration::new(&label, vec![1e9; p]).unwrap());
            for &n in sizes {
                for r in 0..repeats {
                    let time = n * (1.0 + 0.01 * r as f64);
                    data.runs.push(Run::new(&label, n, 1e9 * n, time));
                }
            }
        }
        data
    }

    #[test]
    fn the_runs_at_one_size_on_one_configuration_are_one_point() {
        let sizes = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0];
        let data = data(&[1, 2, 4], &sizes, 3);
        let prepared = Prepared::new(&data, &data.runs, &[Term::Compute]).unwrap();
        assert_eq!(prepared.n.len(), 3 * sizes.len());
        assert!(prepared.repeats.iter().all(|r| r.count == 3.0));
        assert_eq!(prepared.point_of_run.len(), data.runs.len());
        // The largest third of each configuration's sizes, 50 and 60, is a group of its own.
        let (group, groups, _) = prepared.folds(&prepared.repeats, 2.0);
        assert_eq!(groups, 6);
        for (i, &g) in group.iter().enumerate() {
            assert_eq!(g % 2 == 1, prepared.n[i] >= 50.0, "point {i}");
        }
    }

    #[test]
    fn on_two_configurations_a_size_is_held_out_with_all_its_runs() {
        let data = data(&[1, 2], &[10.0, 20.0, 30.0], 3);
        let prepared = Prepared::new(&data, &data.runs, &[Term::Compute]).unwrap();
        let (group, groups, folds) = prepared.folds(&prepared.repeats, 2.0);
        assert_eq!((group.len(), groups, folds.len()), (6, 6, 6));
        // A resample that drew no run of a point holds nothing out for it.
        let mut repeats = prepared.repeats.clone();
        repeats[0] = Repeats::default();
        assert_eq!(prepared.folds(&repeats, 2.0).2.len(), 5);
    }
}
