//! The runs a study could make next, each with the time the fitted model expects of it.

use hetscale_model::scaling::Selection;
use serde::Serialize;

use super::look::{PredictedSize, Question};
use crate::scaling::fit::{StudyRuns, model_configuration};
use crate::spec::configuration::ResolvedConfiguration;

/// Sizes closer than this ratio on one configuration are one size: a candidate there is
/// another repetition of the size already run.
const SAME_SIZE: f64 = 1.1;

/// A run the study could make.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// The configuration's label.
    pub configuration: String,
    /// Its node set.
    pub nodes: String,
    /// Its node count.
    pub p: usize,
    /// The size.
    pub n: u64,
    /// How many runs it makes there.
    pub runs: u32,
    /// `new size`, `repetition` of a size run already, or `explore` (a configuration asked
    /// about, where no supposed run narrows its interval).
    pub kind: &'static str,
    /// The model's time for one run, s.
    pub time_s: f64,
    /// The machine time it costs: its runs, and a warm-up for a new size, s.
    pub cost_s: f64,
}

/// How a study runs each size: its repetitions, and the warm-up runs before a new size.
#[derive(Debug, Clone, Copy)]
pub struct Repetitions {
    /// Runs at a new size.
    pub runs: u32,
    /// Unrecorded runs before a new size.
    pub warmup: u32,
}

/// The candidates on each of `available`: at the size the model `selection` holds the target
/// there, at each size asked about (`sizes`), and at the largest size run there; a size
/// within [`SAME_SIZE`] of one run already is one more repetition of it.
pub fn candidates(
    runs: &StudyRuns,
    selection: &Selection,
    available: &[ResolvedConfiguration],
    question: &Question,
    sizes: &[PredictedSize],
    repetitions: Repetitions,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    for configuration in available {
        // Under its node set: the name the fit evaluated the program's own model on.
        let Ok(model_config) = model_configuration(configuration, &configuration.nodes) else {
            continue;
        };
        let p = configuration.configuration.nodes;
        let work = |n: f64| runs.program.work(n, p);
        let holding = selection
            .model
            .size_for_efficiency(question.target, &model_config, &work, question.bounds)
            .ok();
        let run_sizes = sizes_run(runs, &configuration.configuration.label);
        let wanted = holding
            .into_iter()
            .chain(sizes.iter().filter_map(|s| s.n.map(|n| n as f64)))
            .chain(run_sizes.iter().copied().reduce(f64::max));
        let mut chosen: Vec<u64> = Vec::new();
        for n in wanted {
            let n = n.clamp(question.bounds.0, question.bounds.1);
            let n = nearest(&run_sizes, n).unwrap_or(n).round() as u64;
            if chosen.contains(&n) {
                continue;
            }
            chosen.push(n);
            let repeated = run_sizes.contains(&(n as f64));
            if repeated && runs.simulated {
                // The simulator's times are exact: a repetition would measure nothing new.
                continue;
            }
            let Ok(time_s) = selection
                .model
                .predict_time(n as f64, work(n as f64), &model_config)
            else {
                continue;
            };
            let (count, warmup) = if repeated {
                (1, 0)
            } else {
                (repetitions.runs.max(1), repetitions.warmup)
            };
            out.push(Candidate {
                configuration: configuration.configuration.label.clone(),
                nodes: configuration.nodes.clone(),
                p,
                n,
                runs: count,
                kind: if repeated { "repetition" } else { "new size" },
                time_s,
                cost_s: time_s * f64::from(count + warmup),
            });
        }
    }
    out
}

/// The sizes run on the configuration labelled `label`, each once.
fn sizes_run(runs: &StudyRuns, label: &str) -> Vec<f64> {
    let mut sizes: Vec<f64> = runs
        .data
        .runs
        .iter()
        .filter(|r| r.configuration == label)
        .map(|r| r.n)
        .collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    sizes
}

/// The size in `run` within [`SAME_SIZE`] of `n`, the closest, if any.
fn nearest(run: &[f64], n: f64) -> Option<f64> {
    run.iter()
        .copied()
        .filter(|m| (m / n).max(n / m) < SAME_SIZE)
        .min_by(|a, b| (a / n).ln().abs().total_cmp(&(b / n).ln().abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_near_one_run_is_that_size() {
        let run = [100.0, 200.0, 400.0];
        assert_eq!(nearest(&run, 105.0), Some(100.0));
        assert_eq!(nearest(&run, 190.0), Some(200.0));
        assert_eq!(nearest(&run, 300.0), None);
        assert_eq!(nearest(&[], 300.0), None);
    }
}
