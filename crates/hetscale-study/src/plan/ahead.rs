//! `hetscale plan --from DB --nodes SET --precision R`: the next runs a planned study would
//! make from a study's stored runs, each with its expected gain and cost, without running
//! anything.

use std::path::Path;

use serde::Serialize;

use super::candidates::Repetitions;
use super::look::{PredictedSize, Question, look};
use super::picks::{PLAN_RESAMPLES, Pick, Planner};
use crate::error::{Result, StudyError};
use crate::scaling::fit::{StudyRuns, pick_study};
use crate::spec::configuration::resolve;
use crate::store::Store;
use crate::store::stored_spec::stored_spec;
use hetscale_kernels::KernelRegistry;

/// What `hetscale plan` is asked.
#[derive(Debug, Clone)]
pub struct PlanRequest {
    /// The study database.
    pub db: String,
    /// The study in it (default: its only one).
    pub study: Option<String>,
    /// The node sets whose `N` is to be pinned.
    pub nodes: Vec<String>,
    /// Copies of every node of the study's platform they are resolved on.
    pub replicate: usize,
    /// The half-width asked of each interval, relative.
    pub precision: f64,
    /// How many runs to plan.
    pub next: usize,
}

/// The plan: `N` now, and the next runs with what each is expected to do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanAhead {
    /// The study planned.
    pub study: String,
    /// Its target `E_s`.
    pub target: f64,
    /// The precision asked, %.
    pub precision_percent: f64,
    /// The machine time its runs took so far, s.
    pub cost_s: f64,
    /// `N` on each configuration asked about, from the runs stored.
    pub predicted: Vec<PredictedSize>,
    /// The next runs, in order, each chosen as if those before it had measured what the model
    /// predicts.
    pub next: Vec<Pick>,
    /// Whether the intervals are expected within the precision after them.
    pub precision_reached: bool,
}

/// Plans the next runs of the study `request` names in its database.
pub fn plan_from_study(request: &PlanRequest, registry: &KernelRegistry) -> Result<PlanAhead> {
    check(request)?;
    let store = Store::open_read_only(Path::new(&request.db))?;
    let name = pick_study(&store, request.study.as_deref())?;
    let spec = stored_spec(&store, &name, registry)?;
    let runs = StudyRuns::load(&store, &name, registry)?;
    let available = spec
        .configurations
        .iter()
        .map(|c| resolve(&runs.platform, &c.label, &c.nodes))
        .collect::<Result<Vec<_>>>()?;
    let asked = crate::predict::question::Question {
        nodes: request.nodes.clone(),
        replicate: request.replicate,
        ..Default::default()
    };
    let (_, configurations) = asked.configurations(runs.platform.clone())?;
    let question = Question {
        configurations,
        target: spec.target,
        bounds: (spec.n_min as f64, spec.n_max as f64),
        precision: request.precision,
        available: available.clone(),
    };
    let (_, predicted) = look(&runs, &question)?;
    let cost_s = runs.data.runs.iter().map(|r| r.time_s).sum();
    let mut planning = runs;
    planning.resamples = PLAN_RESAMPLES;
    let planner = Planner {
        runs: planning,
        available: &available,
        question: &question,
        repetitions: Repetitions {
            runs: spec.repetitions,
            warmup: spec.warmup,
        },
        pinned: predicted.iter().map(|s| s.pinned).collect(),
    };
    let (_, next) = planner.next_runs(request.next)?;
    let last = next.last().map_or(&predicted, |p| &p.sizes_after);
    let precision_reached = last.iter().all(|s| s.pinned);
    Ok(PlanAhead {
        study: name,
        target: spec.target,
        precision_percent: 100.0 * request.precision,
        cost_s,
        predicted,
        next,
        precision_reached,
    })
}

fn check(request: &PlanRequest) -> Result<()> {
    if !(request.precision > 0.0 && request.precision < 1.0) {
        return Err(StudyError::Question(format!(
            "--precision {} is not a relative half-width: use a value in (0, 1), e.g. 0.1 for ±10%",
            hetscale_model::numbers::echoed(request.precision)
        )));
    }
    if !(1..=100).contains(&request.next) {
        return Err(StudyError::Question(format!(
            "--next {} is not a number of runs to plan: use 1 to 100",
            request.next
        )));
    }
    Ok(())
}
