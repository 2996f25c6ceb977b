//! [`Summary::of`]: a study's summary computed from its results (the verdict per approach, the
//! held-out checks), above both the result types and the summary's own.

use crate::study::result::{ApproachResult, StudyResult};
use crate::study::summary::{
    ApproachSummary, HeldOutSummary, POOR_WORK_EXPONENT, ScalingHeldOutSummary, Summary,
    SummaryRow, Verdict, is_unreachable,
};
use hetscale_model::numbers::{significant_fixed, trimmed};

impl Summary {
    /// The summary of `result`'s own numbers.
    pub fn of(result: &StudyResult) -> Self {
        let target = result.spec.target;
        let approaches = [&result.measured, &result.computed, &result.predicted]
            .into_iter()
            .flatten()
            .map(|approach| ApproachSummary::of(result, approach, target))
            .collect();
        Self {
            study: result.spec.name.clone(),
            target,
            approaches,
            held_out: result.held_out.as_ref().map(|h| HeldOutSummary {
                configuration: h.configuration.clone(),
                reference: h.reference,
                relative_error: h.relative_error,
            }),
            scaling_held_out: result
                .scaling_held_out
                .as_ref()
                .map(|h| ScalingHeldOutSummary {
                    configuration: h.configuration.clone(),
                    fitted_on: h.fitted_on.clone(),
                    reference: h.reference,
                    n_predicted: h.n_predicted,
                    n_predicted_ci95: h.n_predicted_ci95,
                    relative_error: h.relative_error,
                }),
        }
    }
}

impl ApproachSummary {
    fn of(result: &StudyResult, approach: &ApproachResult, target: f64) -> Self {
        let base = result.configurations.first().map(|c| c.label.as_str());
        let rows: Vec<SummaryRow> = result
            .configurations
            .iter()
            .map(|c| SummaryRow {
                configuration: c.label.clone(),
                p: c.p,
                n: approach.point(&c.label).map(|p| p.n),
                psi_from_base: base.and_then(|base| psi_between(approach, base, &c.label)),
            })
            .collect();
        let (verdict, verdict_line) = verdict(approach, &rows, target);
        Self {
            approach: approach.approach,
            rows,
            verdict,
            verdict_line,
        }
    }
}

/// `psi(C_from, C_to)` from the approach's own matrix, if both are settled.
fn psi_between(approach: &ApproachResult, from: &str, to: &str) -> Option<f64> {
    let psi = approach.psi.as_ref()?;
    let index = |label: &str| psi.labels().iter().position(|l| l == label);
    psi.get(index(from)?, index(to)?)
}

/// The verdict from the base (first) to the largest (last) configuration.
fn verdict(approach: &ApproachResult, rows: &[SummaryRow], target: f64) -> (Verdict, String) {
    let held = format!("E_s = {}", trimmed(target));
    let (Some(base), Some(last)) = (rows.first(), rows.last()) else {
        return (Verdict::NotSettled, "not settled: no configuration".into());
    };
    if rows.len() < 2 {
        return (
            Verdict::NotSettled,
            format!(
                "not settled: one configuration ({}), nothing to scale to",
                base.configuration
            ),
        );
    }
    for row in [base, last] {
        if row.n.is_some() {
            continue;
        }
        let why = approach
            .failures
            .iter()
            .find(|f| f.configuration == row.configuration)
            .map_or("no size settled", |f| f.message.as_str());
        return if is_unreachable(why) {
            (
                Verdict::Unreachable,
                format!(
                    "unreachable: no size holds {held} on {}: {why}",
                    row.configuration
                ),
            )
        } else {
            (
                Verdict::NotSettled,
                format!("not settled on {}: {why}", row.configuration),
            )
        };
    }
    let (Some(n_base), Some(n_last), Some(psi)) = (base.n, last.n, last.psi_from_base) else {
        return (Verdict::NotSettled, "not settled: no psi".into());
    };
    let growth = format!(
        "N grows {}x from {} to {} to hold {held}; psi({}, {}) = {}",
        significant_fixed(n_last / n_base, 2),
        base.configuration,
        last.configuration,
        base.configuration,
        last.configuration,
        significant_fixed(psi, 2)
    );
    match work_exponent(approach, &base.configuration, &last.configuration) {
        Some(k) if k > POOR_WORK_EXPONENT => (
            Verdict::ScalesPoorly,
            format!("scales poorly: {growth}, the work growing as C^{k:.1}"),
        ),
        _ => (Verdict::Scales, format!("scales: {growth}")),
    }
}

/// `k` in `W_last / W_base = (C_last / C_base)^k`: how fast the work must grow with the speed.
fn work_exponent(approach: &ApproachResult, base: &str, last: &str) -> Option<f64> {
    let (b, l) = (approach.point(base)?, approach.point(last)?);
    let speed = l.marked_speed / b.marked_speed;
    (speed > 1.0).then(|| (l.work / b.work).ln() / speed.ln())
}
