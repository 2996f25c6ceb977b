//! What the scaling model fitted to a study's runs says of `N` on each configuration asked
//! about, and how far each answer is from the precision asked.

use hetscale_model::scaling::Selection;
use serde::Serialize;

use crate::error::Result;
use crate::scaling::fit::StudyRuns;
use crate::spec::configuration::ResolvedConfiguration;

/// The question a plan answers: `N` holding `target` (within the runs' tolerance), searched in
/// `bounds`, on each of `configurations`, pinned within `±precision` (a fraction).
#[derive(Debug, Clone)]
pub struct Question {
    /// The configurations asked about.
    pub configurations: Vec<ResolvedConfiguration>,
    /// The target speed-efficiency `E_s`.
    pub target: f64,
    /// The sizes searched.
    pub bounds: (f64, f64),
    /// The half-width asked of each interval, relative to its estimate.
    pub precision: f64,
    /// The configurations the study may run: the program's own overhead model is evaluated on
    /// them too, so that a run there can be costed and supposed.
    pub available: Vec<ResolvedConfiguration>,
}

/// `N` on one configuration asked about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PredictedSize {
    /// The node set as asked.
    pub nodes: String,
    /// Its node count.
    pub p: usize,
    /// The size holding the target; none where the model holds it at no size searched.
    pub n: Option<u64>,
    /// The 95% interval; its upper end `null` where open. None where the runs leave no
    /// interval.
    pub n_ci95: Option<(u64, Option<u64>)>,
    /// The interval's larger distance from `n`, relative, %; none without a point or an upper
    /// end.
    pub half_width_percent: Option<f64>,
    /// Whether `half_width_percent` is within the precision asked.
    pub pinned: bool,
    /// `ln(hi/lo)`, an open end at the search bound, the whole range without an interval: what
    /// a plan narrows.
    #[serde(skip)]
    pub log_width: f64,
}

/// The model `runs` select, and `N` on each configuration `question` asks about.
pub fn look(runs: &StudyRuns, question: &Question) -> Result<(Selection, Vec<PredictedSize>)> {
    let known: Vec<ResolvedConfiguration> = question
        .configurations
        .iter()
        .chain(&question.available)
        .cloned()
        .collect();
    let selection = runs.fit(&known, true)?;
    let sizes = question
        .configurations
        .iter()
        .map(|c| predicted_size(runs, &selection, c, question))
        .collect::<Result<Vec<_>>>()?;
    Ok((selection, sizes))
}

/// `N` on `configuration` by `selection` and its predictive distribution.
fn predicted_size(
    runs: &StudyRuns,
    selection: &Selection,
    configuration: &ResolvedConfiguration,
    question: &Question,
) -> Result<PredictedSize> {
    let answer = runs.predict_one(
        selection,
        configuration,
        None,
        question.target,
        question.bounds,
    )?;
    let (n, interval) = match answer {
        Ok(point) => (Some(point.n), Some(point.n_ci95)),
        Err(unreached) => (None, unreached.n_ci95),
    };
    let (lo_bound, hi_bound) = question.bounds;
    let log_width = match interval {
        Some((lo, hi)) => (hi.map_or(hi_bound, |h| h as f64) / (lo as f64).max(lo_bound)).ln(),
        None => (hi_bound / lo_bound).ln(),
    }
    .max(0.0);
    let half_width = match (n, interval) {
        (Some(n), Some((lo, Some(hi)))) if n > 0 => {
            let n = n as f64;
            Some(((hi as f64 / n - 1.0).max(1.0 - lo as f64 / n)).max(0.0))
        }
        _ => None,
    };
    Ok(PredictedSize {
        nodes: configuration.nodes.clone(),
        p: configuration.configuration.nodes,
        n,
        n_ci95: interval,
        half_width_percent: half_width.map(|h| 100.0 * h),
        pinned: half_width.is_some_and(|h| h <= question.precision),
        log_width,
    })
}
