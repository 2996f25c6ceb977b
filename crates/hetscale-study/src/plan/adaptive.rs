//! `hetscale study SPEC --predict-nodes SET ... --precision R [--budget-s S]`: a study that
//! makes the runs its plan picks, one step at a time, until `N` on every configuration asked
//! about is pinned within `±R` or the budget is spent.
//!
//! It starts from a small first design: on the spec's first two configurations, sizes doubled
//! from `n_min` until a size holds the target (at least three sizes, two of them above the
//! noise floor the fit keeps runs above), `E_s` falls, or `n_max`; the spec's repetitions
//! each. Then each step fits the scaling model to every run so far, reads
//! `N` on each configuration asked about with its 95% interval, and makes the run of the
//! largest expected shrink per second ([`super::picks`]). Every run is stored as it
//! completes and every step as it ends (`plan_steps`), so a study stopped at any point resumes
//! from its database: its steps are made again from the stored runs, which they read instead
//! of running.

use serde::Serialize;

use super::candidates::Repetitions;
use super::look::{PredictedSize, Question, look};
use super::picks::{PLAN_RESAMPLES, Pick, Planner, sharpness};
use crate::error::{Result, StudyError};
use crate::runner::{Observer, Runner, SAMPLE};
use crate::scaling::fit::StudyRuns;
use crate::spec::StudySpec;
use crate::store::{PlanStepRecord, Store};
use crate::study::warnings::NOISE_FLOOR_S;
use hetscale_kernels::KernelRegistry;
use hetscale_model::numbers::significant;

/// The kind of a first design's step.
const FIRST_DESIGN: &str = "first design";
/// Sizes the first design runs on each of its configurations, at least.
const FIRST_SIZES: usize = 3;
/// Of them, sizes whose runs the fit keeps (above the noise floor), at least.
const KEPT_SIZES: usize = 2;
/// Steps after the first design at most: a plan that has not pinned `N` by then is stopped
/// and says so, rather than running on.
pub const MAX_STEPS: usize = 200;

/// What an adaptive study is asked.
#[derive(Debug, Clone)]
pub struct AdaptiveOptions {
    /// The node sets whose `N` is to be pinned (`--predict-nodes`).
    pub nodes: Vec<String>,
    /// Copies of every node of the platform they are resolved on (`--replicate`).
    pub replicate: usize,
    /// The half-width asked of each interval, relative (`--precision`).
    pub precision: f64,
    /// The machine time it may spend, s (`--budget-s`); none: no limit.
    pub budget_s: Option<f64>,
}

/// Where an adaptive study's intervals stood after some machine time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WidthAt {
    /// The machine time spent, s.
    pub spent_s: f64,
    /// The summed `ln(hi/lo)` of the intervals asked about then.
    pub width: f64,
    /// Each configuration asked about's `hi/lo` then, in the order asked (an open upper end
    /// at the search bound).
    pub hi_over_lo: Vec<f64>,
}

/// What an adaptive study found and spent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdaptiveStudy {
    /// The study's name.
    pub study: String,
    /// The target `E_s`.
    pub target: f64,
    /// The precision asked, %.
    pub precision_percent: f64,
    /// The budget, s; none: no limit.
    pub budget_s: Option<f64>,
    /// The machine time its runs took, s: the sum of their times.
    pub cost_s: f64,
    /// How many runs it holds.
    pub runs: usize,
    /// Whether every interval asked about is within the precision.
    pub precision_reached: bool,
    /// Why it stopped, and what would go further.
    pub stopped: String,
    /// The model the last fit selected.
    pub model: String,
    /// `N` on each configuration asked about.
    pub predicted: Vec<PredictedSize>,
    /// Every step, the first design's included: the run chosen, why, its expected and its
    /// real cost.
    pub steps: Vec<PlanStepRecord>,
    /// The unpinned intervals' width after each step, against the machine time spent.
    pub width_by_cost: Vec<WidthAt>,
}

/// Runs `spec` as a study that plans its own runs, asked `options`; `tell` hears of each step
/// as it ends.
pub fn run_adaptive(
    spec: &StudySpec,
    registry: &KernelRegistry,
    store: &Store,
    observer: &dyn Observer,
    options: &AdaptiveOptions,
    tell: &dyn Fn(&PlanStepRecord),
) -> Result<AdaptiveStudy> {
    check(spec, options)?;
    // The node sets asked about are resolved before the study is registered: one the platform
    // lacks is refused with nothing stored.
    let platform = crate::speed::local_speed::load_platform(&spec.platform)?.platform;
    let asked = crate::predict::question::Question {
        nodes: options.nodes.clone(),
        replicate: options.replicate,
        ..Default::default()
    };
    let (_, configurations) = asked.configurations(platform)?;
    let runner = Runner::new_with(spec, registry, store, observer)?;
    let question = Question {
        configurations,
        target: spec.target,
        bounds: (spec.n_min as f64, spec.n_max as f64),
        precision: options.precision,
        available: runner.configurations().to_vec(),
    };
    let mut study = Study {
        spec,
        registry,
        store,
        runner: &runner,
        options,
        tell,
        // A resumed study's steps so far: its first design is read again from the store, and
        // each new step is numbered after them.
        steps: store.plan_steps(&spec.name)?,
    };
    study.first_design()?;
    study.planned(&question)
}

/// What a planned step was expected to do: its cost, the unpinned intervals' summed log width
/// before and after, and each interval's `hi/lo` before it.
#[derive(Default)]
struct Expected {
    cost_s: f64,
    width_before: f64,
    width_after: f64,
    hi_over_lo: Vec<f64>,
}

/// The intervals' width before each planned step of `steps` and at the end (`sizes`, after
/// `cost_s` of runs).
fn width_by_cost(steps: &[PlanStepRecord], sizes: &[PredictedSize], cost_s: f64) -> Vec<WidthAt> {
    let at = |spent_s: f64, hi_over_lo: Vec<f64>| WidthAt {
        spent_s,
        width: hi_over_lo.iter().map(|r| r.ln()).sum(),
        hi_over_lo,
    };
    let end =
        (!sizes.is_empty()).then(|| at(cost_s, sizes.iter().map(|s| s.log_width.exp()).collect()));
    steps
        .iter()
        .filter(|s| !s.hi_over_lo.is_empty())
        .map(|s| at(s.spent_s - s.cost_s, s.hi_over_lo.clone()))
        .chain(end)
        .collect()
}

/// What a run beyond the study's configurations would do, as a sentence to add to why it
/// stopped; empty without one.
fn beyond_advice(beyond: Option<&Pick>, sizes: &[PredictedSize]) -> String {
    let Some(pick) = beyond else {
        return String::new();
    };
    let c = &pick.candidate;
    format!(
        "; {} run(s) on {} ({} nodes, not among the study's configurations) at N = {} would take {}",
        c.runs,
        c.nodes,
        c.p,
        c.n,
        pick.why(sizes)
    )
}

/// What the first design's next size is expected to cost, from the costs of the sizes run
/// on its configuration so far (`costs`, the last last): the last times the ratio of the
/// last two, and at least twice the last (twice the size, at least twice the work).
fn next_cost(costs: &[f64]) -> f64 {
    match costs {
        [] => 0.0,
        [last] => 2.0 * last,
        [.., before, last] => last * (last / before).max(2.0),
    }
}

/// The options' own checks: a precision and a budget that mean something, and a spec with
/// two configurations to extrapolate from.
fn check(spec: &StudySpec, options: &AdaptiveOptions) -> Result<()> {
    let refused = |m: String| StudyError::Question(m);
    if !(options.precision > 0.0 && options.precision < 1.0) {
        return Err(refused(format!(
            "--precision {} is not a relative half-width: use a value in (0, 1), e.g. 0.1 for ±10%",
            hetscale_model::numbers::echoed(options.precision)
        )));
    }
    if let Some(budget) = options.budget_s {
        if !(budget.is_finite() && budget > 0.0) {
            return Err(refused(format!(
                "--budget-s {} is not a machine time: give the seconds of runs the study may spend, e.g. 600",
                hetscale_model::numbers::echoed(budget)
            )));
        }
    }
    if options.nodes.is_empty() {
        return Err(refused(
            "--precision asks for N pinned on configurations: name them with --predict-nodes SET"
                .into(),
        ));
    }
    if spec.configurations.len() < 2 {
        return Err(refused(format!(
            "study \"{}\" has one configuration: a planned study extrapolates in p from two or more, so give the spec another [[configuration]]",
            spec.name
        )));
    }
    Ok(())
}

/// A planned study under way.
struct Study<'a> {
    spec: &'a StudySpec,
    registry: &'a KernelRegistry,
    store: &'a Store,
    runner: &'a Runner<'a>,
    options: &'a AdaptiveOptions,
    tell: &'a dyn Fn(&PlanStepRecord),
    steps: Vec<PlanStepRecord>,
}

/// Why a plan stopped.
enum Stop {
    /// Every interval asked about is within the precision.
    Reached,
    /// The next run (this one) would take the study past its budget.
    Budget(Box<Pick>),
    /// The budget is spent (in the first design, or to the second).
    BudgetSpent,
    /// No run on the spec's configurations is expected to narrow an interval.
    NoGain,
    /// [`MAX_STEPS`] planned steps were made.
    Steps,
}

impl Study<'_> {
    /// The first design: on the spec's first two configurations, sizes doubled from `n_min`
    /// until one holds the target (at least [`FIRST_SIZES`] of them, [`KEPT_SIZES`] above the
    /// noise floor), `E_s` falls (past its peak, where no larger size will hold it) or `n_max`
    /// is reached.
    fn first_design(&mut self) -> Result<()> {
        let simulated = self.spec.backend == "sim";
        for index in 0..2 {
            let mut n = self.spec.n_min;
            let mut previous = f64::NEG_INFINITY;
            let mut costs = Vec::new();
            let mut kept = 0;
            for sizes in 1.. {
                if self.over_budget_after(next_cost(&costs))? {
                    return Ok(());
                }
                let before = self.spent_s()?;
                let m = self.runner.measure(index, n)?;
                let label = &self.runner.configurations()[index].configuration.label;
                let reason = format!(
                    "first design on {label}: E_s = {} at N = {n} (target {})",
                    significant(m.speed_efficiency, 3),
                    significant(self.spec.target, 3)
                );
                let runs = m.time.samples as u32;
                self.record(label, n, runs, FIRST_DESIGN, None, before, reason)?;
                costs.push(self.size_cost(label, n)?);
                // Runs below the noise floor are left out of the fit (the simulator's are
                // exact): the first design goes on until it has sizes the fit keeps.
                if simulated || m.time.median >= NOISE_FLOOR_S {
                    kept += 1;
                }
                let held = m.speed_efficiency >= self.spec.target;
                let falling = m.speed_efficiency < previous;
                let enough = sizes >= FIRST_SIZES && kept >= KEPT_SIZES;
                if (held && enough) || (falling && kept >= KEPT_SIZES) || n >= self.spec.n_max {
                    break;
                }
                previous = m.speed_efficiency;
                n = n.saturating_mul(2).min(self.spec.n_max);
            }
        }
        Ok(())
    }

    /// The planned steps after the first design, until one of the stops.
    fn planned(&mut self, question: &Question) -> Result<AdaptiveStudy> {
        let first_steps = self.steps.len();
        loop {
            if let Some(interrupted) = self.runner.interruption()? {
                return Err(interrupted);
            }
            let runs = StudyRuns::load(self.store, &self.spec.name, self.registry)?;
            let looked = look(&runs, question);
            if looked.is_err() && self.over_budget()? {
                // The budget ran out in the first design, before the runs could fit a model.
                return self.finish(
                    question,
                    &runs,
                    String::new(),
                    Vec::new(),
                    Stop::BudgetSpent,
                );
            }
            let (selection, sizes) = looked?;
            let model = selection.model.to_string();
            let spent_s = self.spent_s()?;
            let stop = if sizes.iter().all(|s| s.pinned) {
                Some(Stop::Reached)
            } else if self.over_budget()? {
                Some(Stop::BudgetSpent)
            } else if self.steps.len() - first_steps >= MAX_STEPS {
                Some(Stop::Steps)
            } else {
                None
            };
            let pick = match stop {
                Some(stop) => {
                    return self.finish(question, &runs, model, sizes, stop);
                }
                None => self.next(question, &runs, &sizes)?,
            };
            let Some(pick) = pick else {
                return self.finish(question, &runs, model, sizes, Stop::NoGain);
            };
            if let Some(budget) = self.options.budget_s {
                if spent_s + pick.candidate.cost_s > budget {
                    let stop = Stop::Budget(Box::new(pick));
                    return self.finish(question, &runs, model, sizes, stop);
                }
            }
            self.make(&runs, &pick, &sizes)?;
        }
    }

    /// The run the plan picks next from `runs`, if any narrows an interval.
    fn next(
        &self,
        question: &Question,
        runs: &StudyRuns,
        answer: &[PredictedSize],
    ) -> Result<Option<Pick>> {
        Ok(self.planner(question, runs, answer).step()?.pick)
    }

    /// The planner of `runs` (at the planning look's resamples), `answer` telling which
    /// intervals are pinned.
    fn planner<'q>(
        &'q self,
        question: &'q Question,
        runs: &StudyRuns,
        answer: &[PredictedSize],
    ) -> Planner<'q> {
        let mut planning = runs.clone();
        planning.resamples = PLAN_RESAMPLES;
        Planner {
            runs: planning,
            available: self.runner.configurations(),
            question,
            repetitions: Repetitions {
                runs: self.spec.repetitions,
                warmup: self.spec.warmup,
            },
            pinned: answer.iter().map(|s| s.pinned).collect(),
        }
    }

    /// Makes `pick`'s runs and records the step.
    fn make(&mut self, runs: &StudyRuns, pick: &Pick, sizes: &[PredictedSize]) -> Result<()> {
        let c = &pick.candidate;
        let index = self
            .runner
            .configurations()
            .iter()
            .position(|r| r.configuration.label == c.configuration)
            .ok_or_else(|| StudyError::Question(format!("no configuration {}", c.configuration)))?;
        let have = runs
            .data
            .runs
            .iter()
            .filter(|r| r.configuration == c.configuration && r.n == c.n as f64)
            .count() as u32;
        let before = self.spent_s()?;
        let m = self.runner.remeasure(index, c.n, have + c.runs)?;
        let reason = format!("{}: {}", c.kind, pick.why(sizes));
        let expected = Expected {
            cost_s: pick.candidate.cost_s,
            width_before: pick.width_before,
            width_after: pick.width_after,
            hi_over_lo: sizes.iter().map(|s| s.log_width.exp()).collect(),
        };
        let runs = m.time.samples as u32;
        let label = &c.configuration;
        self.record(label, c.n, runs, c.kind, Some(expected), before, reason)
    }

    /// Stores a step that ran `runs` runs of `label` at `n` (after `before` seconds spent),
    /// and tells of it.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        label: &str,
        n: u64,
        runs: u32,
        kind: &str,
        expected: Option<Expected>,
        before: f64,
        reason: String,
    ) -> Result<()> {
        let again = |s: &PlanStepRecord| s.kind == kind && s.configuration == label && s.n == n;
        if kind == FIRST_DESIGN && self.steps.iter().any(again) {
            // A resumed study's first design, read again from the store: stored already.
            return Ok(());
        }
        let spent_s = self.spent_s()?;
        let expected = expected.unwrap_or_default();
        let step = PlanStepRecord {
            study: self.spec.name.clone(),
            step: self.steps.iter().map(|s| s.step).max().unwrap_or(0) + 1,
            configuration: label.to_string(),
            n,
            runs,
            kind: kind.to_string(),
            expected_cost_s: expected.cost_s,
            width_before: expected.width_before,
            width_expected: expected.width_after,
            cost_s: spent_s - before,
            spent_s,
            reason,
            hi_over_lo: expected.hi_over_lo,
        };
        self.store.record_plan_step(&step)?;
        (self.tell)(&step);
        self.steps.push(step);
        Ok(())
    }

    /// The machine time the runs of `label` at size `n` took, s.
    fn size_cost(&self, label: &str, n: u64) -> Result<f64> {
        Ok(self
            .store
            .runs(Some(&self.spec.name))?
            .iter()
            .filter(|r| r.purpose == SAMPLE && r.configuration == label && r.n == n)
            .map(|r| r.time_s)
            .sum())
    }

    /// The machine time the study's runs took so far, s.
    fn spent_s(&self) -> Result<f64> {
        Ok(self
            .store
            .runs(Some(&self.spec.name))?
            .iter()
            .filter(|r| r.purpose == SAMPLE)
            .map(|r| r.time_s)
            .sum())
    }

    /// Whether a step expected to cost `cost_s` would take the study past its budget.
    fn over_budget_after(&self, cost_s: f64) -> Result<bool> {
        Ok(match self.options.budget_s {
            Some(budget) => self.spent_s()? + cost_s > budget,
            None => false,
        })
    }

    fn over_budget(&self) -> Result<bool> {
        Ok(match self.options.budget_s {
            Some(budget) => self.spent_s()? >= budget,
            None => false,
        })
    }

    /// The study's answer at a stop.
    fn finish(
        &mut self,
        question: &Question,
        runs: &StudyRuns,
        model: String,
        sizes: Vec<PredictedSize>,
        stop: Stop,
    ) -> Result<AdaptiveStudy> {
        let cost_s = self.spent_s()?;
        let beyond = match stop {
            Stop::Reached => None,
            _ if sizes.is_empty() => None,
            _ => self.planner(question, runs, &sizes).beyond()?,
        };
        let stopped = self.stopped(&stop, &sizes, cost_s) + &beyond_advice(beyond.as_ref(), &sizes);
        let width_by_cost = width_by_cost(&self.steps, &sizes, cost_s);
        Ok(AdaptiveStudy {
            study: self.spec.name.clone(),
            target: self.spec.target,
            precision_percent: 100.0 * self.options.precision,
            budget_s: self.options.budget_s,
            cost_s,
            runs: runs.data.runs.len(),
            precision_reached: matches!(stop, Stop::Reached),
            stopped,
            model,
            predicted: sizes,
            steps: std::mem::take(&mut self.steps),
            width_by_cost,
        })
    }

    /// Why the plan stopped, in words, with what would take it further.
    fn stopped(&self, stop: &Stop, sizes: &[PredictedSize], cost_s: f64) -> String {
        let precision = significant(100.0 * self.options.precision, 2);
        let loose: Vec<String> = sizes
            .iter()
            .filter(|s| !s.pinned)
            .map(|s| format!("N on {} is {}", s.nodes, sharpness(s)))
            .collect();
        let loose = loose.join(", ");
        let spent = significant(cost_s, 3);
        match stop {
            Stop::Reached => format!(
                "Precision reached: every N asked about is within ±{precision}%, after {spent} s of runs"
            ),
            Stop::Budget(pick) => {
                let c = &pick.candidate;
                format!(
                    "Stopped at the budget ({spent} s of {} s spent) before ±{precision}%: {loose}; the next run, {} run(s) of {} ({} nodes) at N = {} ({}), would cost {} s more",
                    significant(self.options.budget_s.unwrap_or(0.0), 3),
                    c.runs,
                    c.configuration,
                    c.p,
                    c.n,
                    pick.why(sizes),
                    significant(c.cost_s, 2)
                )
            }
            Stop::BudgetSpent if sizes.is_empty() => format!(
                "Stopped at the budget ({spent} s spent) in the first design, before its runs could fit a model: a larger --budget-s lets the study go on"
            ),
            Stop::BudgetSpent => format!(
                "Stopped at the budget ({spent} s spent) before ±{precision}%: {loose}; a larger --budget-s lets the plan go on"
            ),
            Stop::NoGain => format!(
                "No run on the configurations this study may run is expected to narrow the intervals further ({spent} s of runs): {loose}"
            ),
            Stop::Steps => format!(
                "Stopped after {MAX_STEPS} planned steps ({spent} s of runs) before ±{precision}%: {loose}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::next_cost;

    #[test]
    fn the_first_designs_next_size_costs_at_least_twice_the_last() {
        assert_eq!(next_cost(&[]), 0.0);
        assert_eq!(next_cost(&[1.0]), 2.0);
        // n^3 work: each doubling costs eight times the last.
        assert_eq!(next_cost(&[1.0, 8.0]), 64.0);
        // Below the noise of a start-up, still twice.
        assert_eq!(next_cost(&[1.0, 1.1]), 2.2);
    }
}
