//! Each candidate's expected gain and cost, and the greedy choice of the next runs.

use hetscale_model::scaling::Selection;
use serde::Serialize;

use super::candidates::{Candidate, Repetitions, candidates};
use super::look::{PredictedSize, Question, look};
use crate::error::Result;
use crate::scaling::fit::{StudyRuns, model_configuration};
use crate::spec::configuration::ResolvedConfiguration;
use hetscale_model::scaling::Run;

/// The resamples each candidate's look refits: a fifth of a prediction's, enough to rank
/// candidates (every look uses the same seed, so two candidates differ by their runs alone).
pub const PLAN_RESAMPLES: usize = 40;

/// Sizes a configuration asked about is explored at, at most, where no supposed run narrows
/// its interval ([`Planner::step`]).
pub const EXPLORED_SIZES: usize = 3;

/// The least share of the unpinned intervals' log width a run must be expected to take off
/// to be worth making: below it, the difference is within what the planning look's fewer
/// resamples move by themselves.
pub const MIN_GAIN: f64 = 0.02;

/// A run chosen, with what it is expected to do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pick {
    /// The run.
    #[serde(flatten)]
    pub candidate: Candidate,
    /// The summed `ln(hi/lo)` of the intervals not yet pinned, before it.
    pub width_before: f64,
    /// The same, expected after it.
    pub width_after: f64,
    /// `width_before - width_after`: the log width it is expected to take off.
    pub expected_gain: f64,
    /// [`Self::expected_gain`] per second of its cost, what the choice ranks by.
    #[serde(skip)]
    pub gain_per_s: f64,
    /// `N` on each configuration asked about, as expected after it.
    pub sizes_after: Vec<PredictedSize>,
}

impl Pick {
    /// What it is expected to do, in words: the widest interval not pinned, before and after.
    pub fn why(&self, before: &[PredictedSize]) -> String {
        if self.candidate.kind == "explore" {
            return format!(
                "no run supposed to measure what the model predicts narrows N on {}: measuring it there tests the model",
                self.candidate.nodes
            );
        }
        let widest = before
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.pinned)
            .max_by(|a, b| a.1.log_width.total_cmp(&b.1.log_width));
        match widest {
            Some((i, s)) => format!(
                "N on {} from {} to {}",
                s.nodes,
                sharpness(s),
                self.sizes_after
                    .get(i)
                    .map_or_else(|| "?".into(), sharpness)
            ),
            None => "every interval is pinned".into(),
        }
    }
}

/// An interval's sharpness in a few characters: `±12%`, `[512, open]`, or `no interval`.
pub fn sharpness(size: &PredictedSize) -> String {
    match (size.half_width_percent, size.n_ci95) {
        (Some(h), _) => format!("±{}%", hetscale_model::numbers::significant(h, 2)),
        (None, Some((lo, Some(hi)))) => format!("[{lo}, {hi}]"),
        (None, Some((lo, None))) => format!("[{lo}, open]"),
        (None, None) => "no interval".into(),
    }
}

/// What a study could run next, and what the runs so far say.
pub struct Planner<'a> {
    /// The runs so far (and, in [`Planner::next_runs`], the runs supposed).
    pub runs: StudyRuns,
    /// The configurations the study may run.
    pub available: &'a [ResolvedConfiguration],
    /// What it asks.
    pub question: &'a Question,
    /// How it runs each size.
    pub repetitions: Repetitions,
    /// Which configurations asked about are pinned by the answer the study gives (its full
    /// bootstrap), where known: the planning look's fewer resamples may draw an interval
    /// a little narrower or wider, and the answer is what the precision is judged on.
    pub pinned: Vec<bool>,
}

/// The state of a plan: `N` on each configuration asked about, and the run to make next
/// (none where no run is expected to narrow an interval not yet pinned).
#[derive(Debug, Clone)]
pub struct Step {
    /// `N` on each configuration asked about.
    pub sizes: Vec<PredictedSize>,
    /// The best run by expected gain per second.
    pub pick: Option<Pick>,
}

impl Planner<'_> {
    /// `N` now, and the candidate with the largest expected gain per second.
    pub fn step(&self) -> Result<Step> {
        let (selection, sizes) = look(&self.runs, self.question)?;
        let pinned = |i: usize| self.pinned.get(i).copied().unwrap_or(sizes[i].pinned);
        let unpinned: Vec<usize> = (0..sizes.len()).filter(|&i| !pinned(i)).collect();
        if unpinned.is_empty() {
            return Ok(Step { sizes, pick: None });
        }
        let width_before: f64 = unpinned.iter().map(|&i| sizes[i].log_width).sum();
        let candidates = candidates(
            &self.runs,
            &selection,
            self.available,
            self.question,
            &sizes,
            self.repetitions,
        );
        let pick = self
            .expected_all(&candidates, &unpinned, width_before)
            .into_iter()
            .filter(|p| p.width_before - p.width_after >= MIN_GAIN * p.width_before)
            .max_by(|a, b| a.gain_per_s.total_cmp(&b.gain_per_s))
            .or_else(|| self.explore(&selection, &sizes, &unpinned, width_before));
        Ok(Step { sizes, pick })
    }

    /// Where no supposed run narrows an interval (a run supposed to measure what the model
    /// predicts cannot question the model): a run on a configuration asked about that the
    /// study may run and has run at fewer than [`EXPLORED_SIZES`] sizes, measuring the model
    /// where it is asked. Its size is the largest run anywhere, doubled past the sizes run on
    /// it: the cheapest test of the model's form in `p` where it is asked, whatever the model
    /// says of `N` there. Its expected width is the width now.
    fn explore(
        &self,
        selection: &Selection,
        sizes: &[PredictedSize],
        unpinned: &[usize],
        width_before: f64,
    ) -> Option<Pick> {
        let largest_run = self.runs.data.runs.iter().map(|r| r.n).fold(0.0, f64::max);
        unpinned.iter().find_map(|&i| {
            let asked = &self.question.configurations[i];
            let configuration = self.available.iter().find(|a| a.nodes == asked.nodes)?;
            let label = &configuration.configuration.label;
            let run: Vec<f64> = self
                .runs
                .data
                .runs
                .iter()
                .filter(|r| &r.configuration == label)
                .map(|r| r.n)
                .collect();
            let mut distinct = run.clone();
            distinct.sort_by(f64::total_cmp);
            distinct.dedup();
            if distinct.len() >= EXPLORED_SIZES {
                return None;
            }
            let mut n = largest_run.max(self.question.bounds.0);
            while run.contains(&n.round()) && n * 2.0 <= self.question.bounds.1 {
                n *= 2.0;
            }
            let model_config = model_configuration(configuration, &configuration.nodes).ok()?;
            let p = configuration.configuration.nodes;
            let time_s = selection
                .model
                .predict_time(
                    n.round(),
                    self.runs.program.work(n.round(), p),
                    &model_config,
                )
                .ok()?;
            let count = self.repetitions.runs.max(1);
            let candidate = Candidate {
                configuration: label.clone(),
                nodes: configuration.nodes.clone(),
                p,
                n: n.round() as u64,
                runs: count,
                kind: "explore",
                time_s,
                cost_s: time_s * f64::from(count + self.repetitions.warmup),
            };
            Some(Pick {
                candidate,
                width_before,
                width_after: width_before,
                expected_gain: 0.0,
                gain_per_s: 0.0,
                sizes_after: sizes.to_vec(),
            })
        })
    }

    /// Where the study's own configurations cannot narrow the intervals: the run on a
    /// configuration asked about that the study may not run, at the size the model holds the
    /// target there, that would narrow them most. None where every configuration asked about
    /// may be run, or no such run would narrow them.
    pub fn beyond(&self) -> Result<Option<Pick>> {
        let beyond: Vec<ResolvedConfiguration> = self
            .question
            .configurations
            .iter()
            .filter(|c| !self.available.iter().any(|a| a.nodes == c.nodes))
            .cloned()
            .collect();
        if beyond.is_empty() {
            return Ok(None);
        }
        let (selection, sizes) = look(&self.runs, self.question)?;
        let pinned = |i: usize| self.pinned.get(i).copied().unwrap_or(sizes[i].pinned);
        let unpinned: Vec<usize> = (0..sizes.len()).filter(|&i| !pinned(i)).collect();
        let width_before: f64 = unpinned.iter().map(|&i| sizes[i].log_width).sum();
        let candidates = candidates(
            &self.runs,
            &selection,
            &beyond,
            self.question,
            &sizes,
            self.repetitions,
        );
        Ok(self
            .expected_all(&candidates, &unpinned, width_before)
            .into_iter()
            .filter(|p| p.width_after < p.width_before)
            .min_by(|a, b| a.width_after.total_cmp(&b.width_after)))
    }

    /// The next `k` runs, each chosen as if those before it had measured what the model
    /// predicts; fewer where no run is expected to narrow an interval, or all are pinned.
    pub fn next_runs(mut self, k: usize) -> Result<(Vec<PredictedSize>, Vec<Pick>)> {
        let mut picks = Vec::new();
        let mut first = None;
        for _ in 0..k {
            let step = self.step()?;
            first.get_or_insert(step.sizes);
            let Some(pick) = step.pick else { break };
            self.suppose(&pick.candidate)?;
            // Past the runs made, only the planning look can tell.
            self.pinned.clear();
            picks.push(pick);
        }
        Ok((first.unwrap_or_default(), picks))
    }

    /// Each of `candidates` with what it is expected to do ([`Self::expected`]), in their
    /// order, looked at on every core: each look refits and reselects on its own copy of the
    /// runs.
    fn expected_all(
        &self,
        candidates: &[Candidate],
        unpinned: &[usize],
        width_before: f64,
    ) -> Vec<Pick> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = candidates.len().div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            let parts: Vec<_> = candidates
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .filter_map(|c| self.expected(c.clone(), unpinned, width_before))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|part| {
                    part.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        })
    }

    /// `candidate`'s runs added as the model predicts them.
    fn suppose(&mut self, candidate: &Candidate) -> Result<()> {
        let Some(configuration) = self
            .available
            .iter()
            .chain(&self.question.configurations)
            .find(|c| c.configuration.label == candidate.configuration)
        else {
            return Ok(());
        };
        suppose_runs(
            &mut self.runs,
            configuration,
            candidate.n,
            candidate.time_s,
            candidate.runs,
        )
    }

    /// `candidate` with the intervals it is expected to leave: the summed log width of those
    /// at `unpinned`, from `width_before`. None where the runs with it fit no model.
    fn expected(
        &self,
        candidate: Candidate,
        unpinned: &[usize],
        width_before: f64,
    ) -> Option<Pick> {
        let mut supposed = Planner {
            runs: self.runs.clone(),
            pinned: Vec::new(),
            ..*self
        };
        supposed.suppose(&candidate).ok()?;
        let (_, sizes_after) = look(&supposed.runs, self.question).ok()?;
        let width_after: f64 = unpinned.iter().map(|&i| sizes_after[i].log_width).sum();
        let gain_per_s = (width_before - width_after) / candidate.cost_s.max(f64::MIN_POSITIVE);
        Some(Pick {
            candidate,
            width_before,
            width_after,
            expected_gain: width_before - width_after,
            gain_per_s,
            sizes_after,
        })
    }
}

/// `count` runs of size `n` taking `time_s` each on `configuration` added to `runs` (with the
/// configuration, if it has no runs yet): what a run not yet made is supposed to measure.
fn suppose_runs(
    runs: &mut StudyRuns,
    configuration: &ResolvedConfiguration,
    n: u64,
    time_s: f64,
    count: u32,
) -> Result<()> {
    let label = configuration.configuration.label.clone();
    if runs.data.configuration(&label).is_none() {
        runs.data
            .configurations
            .push(model_configuration(configuration, &label)?);
        runs.configurations.push(configuration.clone());
    }
    let work = runs
        .program
        .work(n as f64, configuration.configuration.nodes);
    for _ in 0..count {
        runs.data
            .runs
            .push(Run::new(&label, n as f64, work, time_s));
    }
    Ok(())
}
