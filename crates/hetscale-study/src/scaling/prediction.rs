//! What a scaling-model prediction reports (`predict --from` / `--runs` with `--target`): the
//! model chosen and its runners-up, the configurations fitted and the runs left out, the base
//! `psi` is measured from, one point per requested configuration the model reaches, the
//! reason for each it does not, and the verdict line.

use hetscale_model::scaling::{Interval, Predictive, SHARP_FACTOR, ScalingModel, is_sharp};
use serde::Serialize;

use hetscale_model::numbers::{
    grouped, seconds_and_human, significant_fixed as trimmed_to, size, trimmed,
};

/// A fitted model as the output shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSummary {
    /// `T = ...`, the formula a person reads.
    pub formula: String,
    /// The overhead terms, e.g. `["n log2(p)"]`.
    pub hypothesis: Vec<String>,
    /// The cross-validated error on the configurations left out, %.
    pub cv_error_percent: f64,
    /// The fit's error on every run, %.
    pub fit_error_percent: f64,
}

impl ModelSummary {
    pub(crate) fn of(model: &ScalingModel) -> Self {
        Self {
            formula: model.to_string(),
            hypothesis: model.hypothesis(),
            cv_error_percent: model.cv_error_percent,
            fit_error_percent: model.fit_error_percent,
        }
    }
}

/// A configuration the model was fitted on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FittedConfiguration {
    /// Its label in the study.
    pub label: String,
    /// Its node set.
    pub nodes: String,
    /// Its node count.
    pub p: usize,
    /// Its marked speed `C`, flop/s.
    pub marked_speed_flops: f64,
    /// The smallest size run on it.
    pub n_min: u64,
    /// The largest size run on it.
    pub n_max: u64,
}

/// A run left out of the fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExcludedRun {
    /// The configuration it ran on.
    pub configuration: String,
    /// Its size.
    pub n: u64,
    /// Its time, s.
    pub time_s: f64,
    /// Why it was left out.
    pub reason: String,
}

/// The configuration `psi` is measured from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaseConfiguration {
    /// Its label in the study.
    pub label: String,
    /// Its node set.
    pub nodes: String,
    /// Its node count.
    pub p: usize,
    /// Its marked speed `C`, flop/s.
    pub marked_speed_flops: f64,
    /// The model's size holding the target on it; none where it holds the target at no size
    /// (runs from a file, not searched for the target): then there is no `psi`.
    pub n_reference: Option<u64>,
}

/// The prediction on one requested configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PredictedPoint {
    /// The node set as requested.
    pub nodes: String,
    /// The node count.
    pub p: usize,
    /// The marked speed `C`, flop/s.
    pub marked_speed_flops: f64,
    /// Whether the study measured this configuration.
    pub measured: bool,
    /// The size holding the target `E_s`.
    pub n: u64,
    /// Its 95% interval; no upper end (`null`) where the runs cannot exclude that no size
    /// holds the target (the cautions say why).
    pub n_ci95: (u64, Option<u64>),
    /// How sharp the interval is, in words: `±7%`, or the node count whose runs would pin
    /// it within a factor of 2.
    pub n_sharpness: String,
    /// Where `N` is not pinned within a factor of 2: the largest fitted node count from which
    /// it would be (`None` also where it is pinned, or no node count would pin it).
    pub n_sharp_from_nodes: Option<usize>,
    /// The work at `n`, flop.
    pub work_flop: f64,
    /// The time at `n`, s.
    pub time_s: f64,
    /// Its 95% interval, s; no upper end with the size's.
    pub time_s_ci95: (f64, Option<f64>),
    /// `psi(base, this)`.
    pub psi_from_base: Option<f64>,
    /// Its 95% interval (its lower end 0 where the size's upper end is open).
    pub psi_from_base_ci95: Option<[f64; 2]>,
    /// The predictive distribution the intervals are read from.
    pub predictive: Predictive,
    /// What the data cannot support, one line each.
    pub cautions: Vec<String>,
}

impl PredictedPoint {
    /// Whether its size's interval pins `N` within [`SHARP_FACTOR`] (then
    /// [`Self::n_sharpness`] is a `±` percentage).
    pub fn pinned(&self) -> bool {
        let n = self.n as f64;
        self.n_ci95
            .1
            .is_some_and(|high| high as f64 <= SHARP_FACTOR * n)
            && self.n_ci95.0 as f64 * SHARP_FACTOR >= n
    }
}

/// A requested configuration on which the model holds the target at no size searched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnreachedPoint {
    /// The node set as requested.
    pub nodes: String,
    /// The node count.
    pub p: usize,
    /// The marked speed `C`, flop/s.
    pub marked_speed_flops: f64,
    /// Why, and which bound of the range to move.
    pub reason: String,
    /// Where the model's predictive distribution still holds the target at its lower end:
    /// the size from which the runs cannot exclude that it is held (the interval is
    /// `[n_from, open]`); `None` when even that end falls short.
    pub n_from: Option<u64>,
    /// The interval the runs leave without a point: `[n_from, open]` where the model falls
    /// short of the target, `[the smallest size searched, up to]` where it exceeds it at every
    /// size (the upper end `None` when open); `None` when the distribution holds it nowhere.
    pub n_ci95: Option<(u64, Option<u64>)>,
}

impl UnreachedPoint {
    /// The configuration `nodes` (`p` nodes, `marked_speed_flops`) as unreached, from `err`
    /// when it is the one-line error of a search that found no size holding the target (a
    /// [`crate::StudyError::Configuration`], as `with_range_advice` makes it); any other error
    /// as it is.
    pub fn from_error(
        nodes: &str,
        p: usize,
        marked_speed_flops: f64,
        err: crate::StudyError,
    ) -> Result<Self, crate::StudyError> {
        match err {
            crate::StudyError::Configuration { message, .. } => Ok(Self {
                nodes: nodes.to_owned(),
                p,
                marked_speed_flops,
                reason: message,
                n_from: None,
                n_ci95: None,
            }),
            other => Err(other),
        }
    }

    /// With the size from which the predictive distribution's lower end holds the target
    /// ([`hetscale_model::scaling::reachable_from`]), said in the reason too.
    pub fn held_from(self, from: Option<f64>) -> Self {
        let Some(from) = from else { return self };
        Self {
            reason: format!(
                "{}; but the runs cannot exclude a smaller overhead, with which it is held from N = {}: N is in [{}, open]",
                self.reason,
                size(from),
                size(from)
            ),
            n_from: Some(from.round() as u64),
            n_ci95: Some((from.round() as u64, None)),
            ..self
        }
    }

    /// Where the model exceeds the target at every size searched: with the size up to which
    /// the predictive distribution's upper end needs `N` to grow
    /// ([`hetscale_model::scaling::held_up_to`]; infinite: open), said in the reason too.
    pub fn held_up_to(self, up_to: Option<f64>, n_min: f64) -> Self {
        let Some(up_to) = up_to else { return self };
        let interval = (
            n_min.round() as u64,
            up_to.is_finite().then(|| up_to.round() as u64),
        );
        Self {
            reason: format!(
                "{}; but the runs cannot exclude a larger overhead, with which N must grow to {}: N is in {}",
                self.reason,
                interval
                    .1
                    .map_or("a size past the range searched".to_owned(), |n| size(
                        n as f64
                    )),
                size_interval(interval)
            ),
            n_ci95: Some(interval),
            ..self
        }
    }
}

/// `predict --from`'s result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingPrediction {
    /// The study fitted.
    pub study: String,
    /// The speed-efficiency held.
    pub target: f64,
    /// The selected model.
    pub model: ModelSummary,
    /// The next best, best first (at most [`super::fit::RUNNERS_UP`]).
    pub runners_up: Vec<ModelSummary>,
    /// The configurations fitted on.
    pub fitted_on: Vec<FittedConfiguration>,
    /// The runs left out of the fit (below the noise floor).
    pub excluded: Vec<ExcludedRun>,
    /// The configuration `psi` is measured from: the largest measured one.
    pub base: BaseConfiguration,
    /// One per requested configuration the model reaches, in the order requested.
    pub points: Vec<PredictedPoint>,
    /// The requested configurations it does not reach, in the order requested.
    pub unreached: Vec<UnreachedPoint>,
    /// The answer, one line.
    pub verdict: String,
}

/// `[low, high]` of a size interval, `open` for an upper end the runs leave open.
pub fn size_interval((low, high): (u64, Option<u64>)) -> String {
    let high = high.map_or("open".to_owned(), |h| size(h as f64));
    format!("[{}, {high}]", size(low as f64))
}

/// How sharp a size's interval is, in words a user can act on: `±7%` when both ends lie
/// within [`SHARP_FACTOR`] of `n`; otherwise that these runs cannot pin `N` on `p` nodes within
/// that factor, and which fitted node count would ([`Bootstrap::sharp_from_nodes`]).
pub fn sharpness(n: f64, interval: &Interval, p: usize, sharp_from_nodes: Option<usize>) -> String {
    if is_sharp(*interval) {
        let off = (interval.high / n - 1.0).max(1.0 - interval.low / n);
        return format!("±{:.0}%", (100.0 * off).ceil());
    }
    let cannot = format!(
        "these runs cannot pin N on {} nodes within a factor of {}",
        grouped(p),
        trimmed(SHARP_FACTOR)
    );
    match sharp_from_nodes {
        Some(nodes) => format!("{cannot}: runs on {} nodes would", grouped(nodes)),
        None => format!(
            "{cannot}, nor would runs on {} nodes: runs on more configurations and sizes narrow the fit's own spread",
            grouped(p)
        ),
    }
}

/// The answer on the last requested configuration the model reaches (naming those it does
/// not): `to hold E_s = 0.3 on 1,024 nodes N must
/// grow to 210417 [171009, 262311], 48x the 8-node size; T = ... s (7.6 days)`, and what the
/// model cannot support.
pub fn verdict(prediction: &ScalingPrediction) -> String {
    let Some(last) = prediction.points.last() else {
        // No configuration has a point: the answer is an interval without one.
        return prediction
            .unreached
            .iter()
            .rfind(|u| u.n_ci95.is_some())
            .map_or(String::new(), |u| {
                // An interval without a point is sharp only when its ends lie within the
                // factor of each other (every size holds the target, even at the upper end).
                let sharp = u.n_ci95.is_some_and(|(low, high)| {
                    high.is_some_and(|high| high as f64 <= SHARP_FACTOR * low as f64)
                });
                let cannot = if sharp {
                    String::new()
                } else {
                    format!(
                        "; these runs cannot pin N on {} nodes within a factor of {}",
                        grouped(u.p),
                        trimmed(SHARP_FACTOR)
                    )
                };
                format!(
                    "to hold E_s = {} on {} nodes: {}{cannot}",
                    trimmed(prediction.target),
                    grouped(u.p),
                    u.reason
                )
            });
    };
    let growth = prediction
        .base
        .n_reference
        .map_or(String::new(), |reference| {
            format!(
                ", {}x the {}-node size",
                trimmed_to(last.n as f64 / reference.max(1) as f64, 2),
                grouped(prediction.base.p)
            )
        });
    // A percentage sits beside the interval; the words of one too wide to pin N end the line.
    let (beside, after) = if last.pinned() {
        (format!(", {}", last.n_sharpness), String::new())
    } else {
        (String::new(), format!("; {}", last.n_sharpness))
    };
    let mut line = format!(
        "to hold E_s = {} on {} nodes N must grow to {} {}{beside}{growth}; T = {}{after}",
        trimmed(prediction.target),
        grouped(last.p),
        size(last.n as f64),
        size_interval(last.n_ci95),
        seconds_and_human(last.time_s)
    );
    let cv = prediction.model.cv_error_percent;
    if cv > hetscale_model::scaling::POOR_CV_ERROR_PERCENT {
        line.push_str(&format!(
            "; but the model's cross-validated error is {cv:.0}%, above {}%: a rough guide only",
            hetscale_model::scaling::POOR_CV_ERROR_PERCENT
        ));
    } else if !last.cautions.is_empty() {
        line.push_str(" (see the cautions)");
    }
    if !prediction.unreached.is_empty() {
        let names: Vec<&str> = prediction
            .unreached
            .iter()
            .map(|u| u.nodes.as_str())
            .collect();
        line.push_str(&format!(
            "; no size in the range holds it on {} (see the reason given for it)",
            names.join(", ")
        ));
    }
    line
}
