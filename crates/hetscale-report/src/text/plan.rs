//! The text of `hetscale plan` (the next runs a planned study would make) and of a study that
//! planned its own runs (`hetscale study --predict-nodes ... --precision R`).

use hetscale_model::numbers::significant;
use hetscale_study::plan::picks::sharpness;
use hetscale_study::plan::{AdaptiveStudy, PlanAhead, PredictedSize};

use super::predict::aligned;

/// `hetscale plan`'s text: `N` now, the next runs with what each is expected to do, and
/// whether they are expected to reach the precision.
pub fn plan(plan: &PlanAhead) -> String {
    let precision = significant(plan.precision_percent, 2);
    let mut out = format!(
        "Plan for study \"{}\" (target E_s = {}): N within ±{precision}% on each configuration asked about\nNow, from its runs ({} s of machine time):\n",
        plan.study,
        significant(plan.target, 3),
        significant(plan.cost_s, 3)
    );
    out.push_str(&sizes(&plan.predicted));
    if plan.next.is_empty() {
        out.push_str(if plan.predicted.iter().all(|s| s.pinned) {
            "Every interval is within the precision: no run is needed.\n"
        } else {
            "No run on the study's configurations is expected to narrow these intervals.\n"
        });
        return out;
    }
    out.push_str(
        "Next runs, each chosen as if those before it measured what the model predicts:\n",
    );
    let header = [
        "step",
        "configuration",
        "p",
        "N",
        "runs",
        "kind",
        "cost",
        "total",
        "expected",
    ]
    .map(String::from);
    let mut total = 0.0;
    let cells: Vec<[String; 9]> = plan
        .next
        .iter()
        .enumerate()
        .map(|(i, pick)| {
            let before = if i == 0 {
                &plan.predicted
            } else {
                &plan.next[i - 1].sizes_after
            };
            let c = &pick.candidate;
            total += c.cost_s;
            [
                (i + 1).to_string(),
                c.configuration.clone(),
                c.p.to_string(),
                c.n.to_string(),
                c.runs.to_string(),
                c.kind.to_string(),
                format!("{} s", significant(c.cost_s, 2)),
                format!("{} s", significant(total, 2)),
                pick.why(before),
            ]
        })
        .collect();
    out.push_str(&aligned(&header, &cells));
    out.push_str(&if plan.precision_reached {
        format!(
            "These {} runs are expected to pin every N within ±{precision}% for {} s of machine time.\n",
            plan.next.len(),
            significant(total, 2)
        )
    } else {
        format!(
            "After these {} runs ({} s), N is not yet expected within ±{precision}% everywhere: plan more with --next.\n",
            plan.next.len(),
            significant(total, 2)
        )
    });
    out
}

/// A planned study's text: its steps, `N` on each configuration asked about, and why it
/// stopped, last.
pub fn adaptive(study: &AdaptiveStudy) -> String {
    let header = ["step", "configuration", "N", "runs", "cost", "spent", "why"].map(String::from);
    let cells: Vec<[String; 7]> = study
        .steps
        .iter()
        .map(|s| {
            [
                s.step.to_string(),
                s.configuration.clone(),
                s.n.to_string(),
                s.runs.to_string(),
                format!("{} s", significant(s.cost_s, 2)),
                format!("{} s", significant(s.spent_s, 3)),
                s.reason.clone(),
            ]
        })
        .collect();
    let mut out = format!(
        "Study \"{}\", planned: N holding E_s = {} within ±{}%\n",
        study.study,
        significant(study.target, 3),
        significant(study.precision_percent, 2)
    );
    out.push_str(&aligned(&header, &cells));
    out.push_str(&format!(
        "Model: {} ({} runs, {} s of machine time)\n",
        study.model,
        study.runs,
        significant(study.cost_s, 3)
    ));
    out.push_str(&sizes(&study.predicted));
    out.push_str(&study.stopped);
    out.push('\n');
    out
}

/// `N` on each configuration asked about, with its interval and sharpness.
fn sizes(sizes: &[PredictedSize]) -> String {
    let header = ["nodes", "p", "N", "95% interval", "sharpness"].map(String::from);
    let cells: Vec<[String; 5]> = sizes
        .iter()
        .map(|s| {
            let interval = match s.n_ci95 {
                Some((lo, Some(hi))) => format!("[{lo}, {hi}]"),
                Some((lo, None)) => format!("[{lo}, open]"),
                None => "none".into(),
            };
            let mark = if s.pinned { " (pinned)" } else { "" };
            [
                s.nodes.clone(),
                s.p.to_string(),
                s.n.map_or_else(|| "none".into(), |n| n.to_string()),
                interval,
                format!("{}{mark}", sharpness(s)),
            ]
        })
        .collect();
    aligned(&header, &cells)
}
