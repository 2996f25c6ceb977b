//! `hetscale predict`'s text: approach 3's sizes and `psi` per configuration, a declared
//! program's times at one size, and the scaling model fitted to runs with its sizes or times
//! and their intervals; each ends with its answer, where the eye lands.

use hetscale_model::numbers::{ratio, seconds_and_human, seconds_compact as compact};
use hetscale_study::predict::answer::{
    Answer, Approach3Prediction, DeclaredTimes, Prediction, Source,
};
use hetscale_study::scaling::prediction::{
    ExcludedRun, ModelSummary, ScalingPrediction, UnreachedPoint,
};
use hetscale_study::scaling::time::TimePrediction;
use hetscale_study::study::summary::prediction_verdict;

/// `prediction` as the terminal shows it.
pub fn render(prediction: &Prediction) -> String {
    let source = &prediction.source;
    let platform = prediction.platform.as_str();
    match &prediction.answer {
        Answer::Approach3(predicted) => {
            approach3(source.name(), model_of(source), platform, predicted)
        }
        Answer::DeclaredTimes(times) => declared_times(source.name(), platform, times),
        Answer::Scaling(p) => scaling(&runs_of(source, &p.study), platform, p),
        Answer::ScalingTime(p) => time_at(&runs_of(source, &p.study), platform, p),
    }
}

/// The model approach 3 solved, as the first line names it.
fn model_of(source: &Source) -> &'static str {
    match source {
        Source::Program(_) => "the program's declared model",
        _ => "the kernel's HBSP^1 time model",
    }
}

/// Where the fitted runs came from, as the first line names them.
fn runs_of(source: &Source, study: &str) -> String {
    match source {
        Source::From(db) => format!("the runs of study \"{study}\" in {db}"),
        other => format!("the runs in {}", other.name()),
    }
}

/// Approach 3's text: a row per configuration with N, W, T and both `psi`, the unreached
/// configurations, the verdict.
fn approach3(name: &str, model: &str, platform: &str, predicted: &Approach3Prediction) -> String {
    let study = &predicted.study;
    let mut out = format!(
        "Predicted (approach 3, {model}): {name} on {platform}, target E_s = {}\n{:<28} {:>6} {:>14} {:>10} {:>12} {:>24} {:>14} {:>13}\n",
        study.target,
        "nodes",
        "p",
        "C (Mflop/s)",
        "N",
        "W (flop)",
        "T",
        "psi(prev,this)",
        "psi(1st,this)"
    );
    for p in &study.points {
        let c = &p.configuration;
        let previous = p
            .psi_from_previous
            .map_or("-".to_string(), |psi| format!("{psi:.4}"));
        out.push_str(&format!(
            "{:<28} {:>6} {:>14.2} {:>10.0} {:>12.4e} {:>24} {:>14} {:>13.4}\n",
            c.label,
            c.nodes,
            c.marked_speed / 1e6,
            p.n,
            p.work,
            seconds_and_human(p.time_s),
            previous,
            p.psi_from_first
        ));
    }
    out.push_str(
        "psi(a, b) = C_b W_a / (C_a W_b): psi(prev,this) between consecutive configurations (the papers' tables), psi(1st,this) from the first.\n",
    );
    out.push_str(&not_reached(&predicted.unreached));
    // The answer last, where the eye lands.
    if let Some(verdict) = prediction_verdict(study) {
        out.push_str(&format!("{verdict}\n"));
    }
    out
}

/// `predict --work ... --time-at N`'s text: a line per configuration.
fn declared_times(name: &str, platform: &str, times: &DeclaredTimes) -> String {
    let (n, points) = (times.n, &times.points);
    let mut out = format!(
        "Predicted (approach 3, the program's declared model): {name} on {platform}, T at N = {n}\n"
    );
    let header = ["nodes", "p", "C (Mflop/s)", "T [95%]", "E_s"].map(String::from);
    let cells: Vec<[String; 5]> = points
        .iter()
        .map(|point| {
            let interval = point.time_s_ci95.map_or(String::new(), |(lo, hi)| {
                format!(" [{} s, {} s]", compact(lo), compact(hi))
            });
            [
                point.nodes.clone(),
                point.p.to_string(),
                format!("{:.2}", point.marked_speed_flops / 1e6),
                format!("{}{interval}", seconds_and_human(point.time_s)),
                ratio(point.speed_efficiency),
            ]
        })
        .collect();
    out.push_str(&aligned(&header, &cells));
    if points.iter().any(|p| p.time_s_ci95.is_none()) {
        out.push_str("no interval: the platform holds no calibration of the program (hetscale calibrate --runs ... --work ...)\n");
    }
    out
}

/// One line per configuration that holds the target at no size searched, with why.
fn not_reached(unreached: &[UnreachedPoint]) -> String {
    unreached
        .iter()
        .map(|u| format!("not reached on {} (p = {}): {}\n", u.nodes, u.p, u.reason))
        .collect()
}

/// The text of a scaling-model prediction of the size holding the target (`--from`,
/// `--runs`): the model and how it was chosen, the prediction per configuration with its
/// intervals, the cautions, and the verdict last.
fn scaling(source: &str, platform: &str, p: &ScalingPrediction) -> String {
    let question = format!("target E_s = {}", p.target);
    let mut out = scaling_heading(source, platform, &question, &p.model);
    for (i, r) in p.runners_up.iter().enumerate() {
        out.push_str(&format!(
            "  runner-up {}: {}  (cross-validated error {:.1}%)\n",
            i + 1,
            r.formula,
            r.cv_error_percent
        ));
    }
    let fitted: Vec<String> = p
        .fitted_on
        .iter()
        .map(|c| format!("{} (p = {}, N {}..{})", c.label, c.p, c.n_min, c.n_max))
        .collect();
    out.push_str(&format!("Fitted on: {}\n", fitted.join(", ")));
    if !p.excluded.is_empty() {
        out.push_str(&format!(
            "Left out of the fit, below the noise floor: {} (each run in --json)\n",
            excluded_by_configuration(&p.excluded)
        ));
    }
    out.push_str(&match p.base.n_reference {
        Some(n) => format!(
            "psi from the largest measured configuration, {} (p = {}, N = {n} by the model)\n",
            p.base.label, p.base.p
        ),
        None => format!(
            "no psi: the model holds E_s = {} at no size on the largest measured configuration, {} (p = {})\n",
            p.target, p.base.label, p.base.p
        ),
    });
    let cells: Vec<[String; 6]> = p
        .points
        .iter()
        .map(|point| {
            let psi = match (point.psi_from_base, point.psi_from_base_ci95) {
                (Some(psi), Some([lo, hi])) => {
                    format!("{} [{}, {}]", ratio(psi), ratio(lo), ratio(hi))
                }
                _ => "-".into(),
            };
            let measured = if point.measured { " (measured)" } else { "" };
            let (lo, hi) = point.time_s_ci95;
            let n_high = point.n_ci95.1.map_or("open".into(), |h| h.to_string());
            let t_high = hi.map_or("open".into(), |h| format!("{} s", compact(h)));
            // The words of an interval too wide to pin N are the verdict's.
            let sharp = if point.pinned() {
                format!(" {}", point.n_sharpness)
            } else {
                String::new()
            };
            [
                format!("{}{measured}", point.nodes),
                point.p.to_string(),
                format!("{:.2}", point.marked_speed_flops / 1e6),
                format!("{} [{}, {n_high}]{sharp}", point.n, point.n_ci95.0),
                format!(
                    "{} [{} s, {t_high}]",
                    seconds_and_human(point.time_s),
                    compact(lo)
                ),
                psi,
            ]
        })
        .collect();
    let header = [
        "nodes",
        "p",
        "C (Mflop/s)",
        "N [95%]",
        "T [95%]",
        "psi(base,this) [95%]",
    ]
    .map(String::from);
    out.push_str(&aligned(&header, &cells));
    let cautions = p.points.iter().map(|point| (&point.nodes, &point.cautions));
    out.push_str(&cautions_once(cautions));
    out.push_str(&not_reached(&p.unreached));
    // The answer last, where the eye lands.
    out.push_str(&format!("{}\n", p.verdict));
    out
}

/// The first two lines of a scaling-model prediction: where the runs came from, the question,
/// and the chosen model with its errors.
fn scaling_heading(source: &str, platform: &str, question: &str, model: &ModelSummary) -> String {
    format!(
        "Predicted from {source} (the scaling model fitted to them): on {platform}, {question}\nModel: {}  (cross-validated error {:.1}%, fit error {:.1}%)\n",
        model.formula, model.cv_error_percent, model.fit_error_percent
    )
}

/// The text of a scaling-model prediction of the time at one size (`--time-at`): the model,
/// the time per configuration with its interval and the speed-efficiency there, the
/// cautions.
fn time_at(source: &str, platform: &str, p: &TimePrediction) -> String {
    let question = format!("T at N = {}", p.n);
    let mut out = scaling_heading(source, platform, &question, &p.model);
    let header = ["nodes", "p", "C (Mflop/s)", "T [95%]", "E_s"].map(String::from);
    let cells: Vec<[String; 5]> = p
        .points
        .iter()
        .map(|point| {
            let [lo, hi] = point.time_s_ci95;
            [
                point.nodes.clone(),
                point.p.to_string(),
                format!("{:.2}", point.marked_speed_flops / 1e6),
                format!(
                    "{} [{} s, {} s]",
                    seconds_and_human(point.time_s),
                    compact(lo),
                    compact(hi)
                ),
                ratio(point.speed_efficiency),
            ]
        })
        .collect();
    out.push_str(&aligned(&header, &cells));
    let cautions = p.points.iter().map(|point| (&point.nodes, &point.cautions));
    out.push_str(&cautions_once(cautions));
    out
}

/// Rows under a header, the first column left-aligned and the others right-aligned.
pub(super) fn aligned<const K: usize>(header: &[String; K], cells: &[[String; K]]) -> String {
    let widths: Vec<usize> = (0..K)
        .map(|i| {
            cells
                .iter()
                .chain(std::iter::once(header))
                .map(|row| row[i].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in std::iter::once(header).chain(cells) {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| match i {
                0 => format!("{cell:<w$}", w = widths[i]),
                _ => format!("{cell:>w$}", w = widths[i]),
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// Each caution once, naming the configurations it is about unless it is about all.
fn cautions_once<'a>(
    points: impl ExactSizeIterator<Item = (&'a String, &'a Vec<String>)>,
) -> String {
    let count = points.len();
    let mut cautions: Vec<(&String, Vec<&str>)> = Vec::new();
    for (nodes, on_point) in points {
        for c in on_point {
            match cautions.iter_mut().find(|(seen, _)| *seen == c) {
                Some((_, on)) => on.push(nodes),
                None => cautions.push((c, vec![nodes])),
            }
        }
    }
    let mut out = String::new();
    for (c, on) in cautions {
        if on.len() == count {
            out.push_str(&format!("caution: {c}\n"));
        } else {
            out.push_str(&format!("caution on {}: {c}\n", on.join(", ")));
        }
    }
    out
}

/// The runs left out of the fit, one phrase per configuration (`C_1: 12 runs, N 8..160,
/// 3.8e-3..9.9e-3 s`): a study can leave out dozens, which one per run would bury.
fn excluded_by_configuration(excluded: &[ExcludedRun]) -> String {
    let mut labels: Vec<&str> = Vec::new();
    for e in excluded {
        if !labels.contains(&e.configuration.as_str()) {
            labels.push(&e.configuration);
        }
    }
    let phrases: Vec<String> = labels
        .iter()
        .map(|&label| {
            let runs: Vec<_> = excluded
                .iter()
                .filter(|e| e.configuration == label)
                .collect();
            let n = runs
                .iter()
                .map(|e| e.n)
                .fold((u64::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
            let t = runs
                .iter()
                .map(|e| e.time_s)
                .fold((f64::INFINITY, 0.0f64), |(lo, hi), t| {
                    (lo.min(t), hi.max(t))
                });
            let count = runs.len();
            let noun = if count == 1 { "run" } else { "runs" };
            let sizes = if n.0 == n.1 {
                format!("at N = {}", n.0)
            } else {
                format!("N {}..{}", n.0, n.1)
            };
            let times = if t.0 == t.1 {
                format!("{:.2e} s", t.0)
            } else {
                format!("{:.2e}..{:.2e} s", t.0, t.1)
            };
            format!("{label}: {count} {noun} {sizes}, {times}")
        })
        .collect();
    phrases.join("; ")
}

#[cfg(test)]
mod excluded_tests {
    use super::excluded_by_configuration;
    use hetscale_study::scaling::prediction::ExcludedRun;

    fn run(configuration: &str, n: u64, time_s: f64) -> ExcludedRun {
        ExcludedRun {
            configuration: configuration.into(),
            n,
            time_s,
            reason: "below the noise floor".into(),
        }
    }

    #[test]
    fn left_out_runs_read_as_one_phrase_per_configuration() {
        let runs = [
            run("C_1", 8, 4e-3),
            run("C_2", 64, 9e-3),
            run("C_1", 160, 9.5e-3),
            run("C_1", 32, 3e-3),
        ];
        assert_eq!(
            excluded_by_configuration(&runs),
            "C_1: 3 runs N 8..160, 3.00e-3..9.50e-3 s; C_2: 1 run at N = 64, 9.00e-3 s"
        );
    }
}
