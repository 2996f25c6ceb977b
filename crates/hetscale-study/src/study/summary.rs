//! The answer first: what a study found, in one table and one verdict line per approach.
//!
//! Per approach, the size `N` each configuration needs to hold the target `E_s` and
//! `psi(C_base, C_j)` from the first (base) configuration, then a verdict computed from them:
//! how much `N` grows from the base to the largest configuration, or why the approach settled
//! no answer. The held-out check closes it: how far the model fitted on the smaller
//! configurations lands from the largest one's size.

use serde::Serialize;

use hetscale_model::numbers::{grouped, seconds_and_human, significant_fixed, size, trimmed};

// `hetscale predict` and `approaches/scaling_prediction.rs` (changed elsewhere) still import
// these from here: the merge points them at `hetscale_model::numbers` and drops this line.

use crate::approaches::predicted::PredictedStudy;
use crate::spec::Approach;

/// A study scales poorly when its work must grow faster than this power of the marked speed
/// to hold `E_s`: `W_j / W_base > (C_j / C_base)^k`. Dense `O(n^3)` kernels on the papers'
/// clusters need `k` near 3 (JPDC's GE: `psi(C_2, C_32) = 0.013` over a 10.8x faster
/// configuration, `k = 2.8`); beyond 4 the problem outgrows what the added speed buys.
pub const POOR_WORK_EXPONENT: f64 = 4.0;

/// What a study found, approach by approach.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// The study's name.
    pub study: String,
    /// The speed-efficiency held (the one every number uses).
    pub target: f64,
    /// One entry per approach the study ran, in the papers' order.
    pub approaches: Vec<ApproachSummary>,
    /// The held-out check, when the study had one.
    pub held_out: Option<HeldOutSummary>,
    /// The held-out check with the scaling model, when the study had one.
    pub scaling_held_out: Option<ScalingHeldOutSummary>,
}

/// One approach's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApproachSummary {
    /// Which approach.
    pub approach: Approach,
    /// One row per configuration of the study, settled or not.
    pub rows: Vec<SummaryRow>,
    /// The verdict.
    pub verdict: Verdict,
    /// The verdict as one line.
    pub verdict_line: String,
}

/// One configuration in an approach's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    /// Configuration label.
    pub configuration: String,
    /// Number of nodes.
    pub p: usize,
    /// The size holding the target (`None`: not settled).
    #[serde(serialize_with = "crate::json::as_integer_opt")]
    pub n: Option<f64>,
    /// `psi(C_base, C_j)` (`None`: this or the base configuration is not settled).
    pub psi_from_base: Option<f64>,
}

/// What an approach's numbers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The target is held from the base to the largest configuration.
    Scales,
    /// It is held, but the work must grow faster than [`POOR_WORK_EXPONENT`] allows.
    ScalesPoorly,
    /// The target cannot be reached on the base or the largest configuration.
    Unreachable,
    /// No answer: a run failed, or there is a single configuration.
    NotSettled,
}

/// The held-out check in one line's numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldOutSummary {
    /// The configuration held out (the largest).
    pub configuration: String,
    /// The approach whose size it is checked against.
    pub reference: Approach,
    /// `(predicted - reference) / reference` of its `N` (in JSON a percentage).
    #[serde(
        rename = "relative_error_percent",
        serialize_with = "crate::json::fraction_as_percent"
    )]
    pub relative_error: f64,
}

/// The held-out check with the scaling model, in brief.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingHeldOutSummary {
    /// The configuration held out (the largest).
    pub configuration: String,
    /// The configurations the model was selected on.
    pub fitted_on: Vec<String>,
    /// The approach whose size it is checked against.
    pub reference: Approach,
    /// The predicted `N`.
    #[serde(serialize_with = "crate::json::as_integer")]
    pub n_predicted: f64,
    /// Its 95% interval; no upper end where it is open.
    pub n_predicted_ci95: (u64, Option<u64>),
    /// `(predicted - reference) / reference` of its `N` (in JSON a percentage).
    #[serde(
        rename = "relative_error_percent",
        serialize_with = "crate::json::fraction_as_percent"
    )]
    pub relative_error: f64,
}

impl Summary {
    /// The held-out check as one line, if there was one.
    pub fn held_out_line(&self) -> Option<String> {
        self.held_out.as_ref().map(|h| {
            format!(
                "held-out: N on {} predicted from the smaller configurations is {:+.1}% from the {} N",
                h.configuration,
                100.0 * h.relative_error,
                h.reference.name()
            )
        })
    }

    /// The scaling model's held-out check as one line, if there was one:
    /// `held-out (scaling model): N on C_32 predicted 2980 [2850, 3120] from C_2..C_16, +0.4%
    /// from the measured N`.
    pub fn scaling_held_out_line(&self) -> Option<String> {
        self.scaling_held_out.as_ref().map(|h| {
            format!(
                "held-out (scaling model): N on {} predicted {:.0} {} from {}, {:+.1}% from the {} N",
                h.configuration,
                h.n_predicted,
                crate::scaling::prediction::size_interval(h.n_predicted_ci95),
                configuration_span(&h.fitted_on),
                100.0 * h.relative_error,
                h.reference.name()
            )
        })
    }
}

/// The configurations fitted on, read at a glance: `C_2..C_16` for three or more (they are
/// the study's configurations in order, all but the largest), else each named.
pub fn configuration_span(labels: &[String]) -> String {
    match labels {
        [first, .., last] if labels.len() > 2 => format!("{first}..{last}"),
        _ => labels.join(", "),
    }
}

/// Whether a configuration's failure says its target is out of reach (rather than a run
/// failing): the wording of [`crate::study::warnings::unreachable_target`] and of the measured
/// search's level-off.
pub(crate) fn is_unreachable(why: &str) -> bool {
    ["unreachable", "reaches E_s", "already exceeds the target"]
        .iter()
        .any(|phrase| why.contains(phrase))
}

/// A prediction's verdict, from its first to its last configuration: "to hold E_s = 0.3 on
/// 1,024 nodes N must grow to 210417, 48x the 8-node size; T = 654112 s (7.6 days)".
pub fn prediction_verdict(study: &PredictedStudy) -> Option<String> {
    let (first, last) = (study.points.first()?, study.points.last()?);
    let (Some(_), true) = (study.points.get(1), last.n > 0.0) else {
        return None;
    };
    Some(format!(
        "to hold E_s = {} on {} nodes N must grow to {}, {}x the {}-node size; T = {}",
        trimmed(study.target),
        grouped(last.configuration.nodes),
        size(last.n),
        significant_fixed(last.n / first.n, 2),
        grouped(first.configuration.nodes),
        seconds_and_human(last.time_s)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_out_of_reach_are_told_from_failed_runs() {
        assert!(is_unreachable(
            "no N in [8, 512] reaches E_s = 0.3: the highest E_s reached is 0.2 at N = 512; raise n_max or lower the target"
        ));
        assert!(!is_unreachable("the program exited with status 1"));
    }
}
