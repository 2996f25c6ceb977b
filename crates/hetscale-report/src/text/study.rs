//! `hetscale study`: a study's tables and, printed last, its summary.

use std::fmt::Write as _;

use hetscale_model::numbers::{significant_fixed, trimmed};
use hetscale_model::scalability::ScalabilityMatrix;
use hetscale_study::study::summary::Summary;
use hetscale_study::study::{ApproachResult, PsiIntervals, StudyResult};

/// The study's tables: per approach its points and psi matrix, the approaches side by side,
/// the computed fits, the calibration and the held-out checks, the warnings.
pub fn tables(result: &StudyResult) -> String {
    let spec = &result.spec;
    let mut out = format!(
        "\nStudy {}: {} on {} ({}), target E_s = {}\n",
        spec.name, spec.kernel, spec.backend, spec.platform, spec.target
    );
    for approach in [&result.measured, &result.computed, &result.predicted]
        .into_iter()
        .flatten()
    {
        approach_table(&mut out, approach);
    }
    comparison_table(&mut out, result);
    fits_table(&mut out, result);
    validation_lines(&mut out, result);
    for warning in &result.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    out
}

fn approach_table(out: &mut String, r: &ApproachResult) {
    let _ = writeln!(out, "\nApproach {}:", r.approach.name());
    // The interval's header words only where some row has one to show.
    let n_header = match r.points.iter().any(|p| p.n_ci95.is_some()) {
        true => "N [95% interval]",
        false => "N",
    };
    let _ = writeln!(
        out,
        "{:<8} {:>4} {:>12} {:>22} {:>12} {:>10} {:>7}",
        "config", "p", "C (Mflop/s)", n_header, "W (flop)", "T (s)", "E_s"
    );
    for p in &r.points {
        let n = match p.n_ci95 {
            Some((lo, hi)) => format!("{:.0} [{lo:.0}, {hi:.0}]", p.n),
            None => format!("{:.1}", p.n),
        };
        let _ = writeln!(
            out,
            "{:<8} {:>4} {:>12.2} {:>22} {:>12.4e} {:>10.5} {:>7.4}",
            p.configuration,
            p.p,
            p.marked_speed / 1e6,
            n,
            p.work,
            p.time_s,
            p.speed_efficiency
        );
    }
    for f in &r.failures {
        let _ = writeln!(out, "{:<8} not settled: {}", f.configuration, f.message);
    }
    if let Some(psi) = &r.psi {
        psi_matrix(out, psi, r.psi_ci95.as_ref());
    }
}

fn psi_matrix(out: &mut String, psi: &ScalabilityMatrix, intervals: Option<&PsiIntervals>) {
    let labels = psi.labels();
    let (title, width) = match intervals {
        Some(_) => (" [95% interval]", 22),
        None => ("", 8),
    };
    let _ = writeln!(out, "psi(C_i, C_j) = C_j W_i / (C_i W_j){title}:");
    let header: String = labels.iter().map(|l| format!("{l:>width$}")).collect();
    let _ = writeln!(out, "{:<8}{header}", "");
    for (i, label) in labels.iter().enumerate() {
        let cells: String = (0..labels.len())
            .map(|j| {
                let cell = match (psi.get(i, j), intervals.and_then(|c| c.get(i, j))) {
                    (None, _) => String::new(),
                    (Some(v), None) => format!("{v:.3}"),
                    (Some(v), Some((lo, hi))) => format!("{v:.3} [{lo:.3}, {hi:.3}]"),
                };
                format!("{cell:>width$}")
            })
            .collect();
        let _ = writeln!(out, "{label:<8}{cells}");
    }
}

fn comparison_table(out: &mut String, result: &StudyResult) {
    let _ = writeln!(
        out,
        "\nThe approaches side by side (N, and difference from measured):"
    );
    let _ = writeln!(
        out,
        "{:<8} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "config", "measured", "computed", "predicted", "comp-meas", "pred-meas"
    );
    let size = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    let percent = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:+.1}%", 100.0 * v));
    for c in &result.comparison {
        let _ = writeln!(
            out,
            "{:<8} {:>10} {:>10} {:>10} {:>10} {:>10}",
            c.configuration,
            size(c.measured),
            size(c.computed),
            size(c.predicted),
            percent(c.computed_vs_measured),
            percent(c.predicted_vs_measured)
        );
    }
}

fn fits_table(out: &mut String, result: &StudyResult) {
    if result.fits.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nComputed fits: T(N) = a W/C + T_o(N) and the polynomial trend line of E_s(N):"
    );
    let _ = writeln!(
        out,
        "{:<8} {:>7} {:>8} {:>9} {:>9} {:>8} {:>10} {:>10} {:>10} {:>9}",
        "config",
        "samples",
        "a",
        "R^2 T",
        "adj R^2",
        "SMAPE %",
        "LOO RMSE s",
        "N (model)",
        "N (trend)",
        "R^2 E_s"
    );
    let optional =
        |v: Option<f64>, digits: usize| v.map_or("-".into(), |v| format!("{v:.digits$}"));
    for f in &result.fits {
        let _ = writeln!(
            out,
            "{:<8} {:>7} {:>8.4} {:>9.6} {:>9} {:>8.2} {:>10} {:>10} {:>10} {:>9.6}",
            f.configuration,
            f.samples.len(),
            f.model.a,
            f.model_quality.r_squared,
            optional(f.model_quality.adjusted_r_squared, 6),
            f.model_quality.smape_percent,
            f.model_quality
                .loo_cv_rmse
                .map_or("-".into(), |v| format!("{v:.3e}")),
            optional(f.n, 1),
            optional(f.n_trend, 1),
            f.trend_quality.r_squared
        );
    }
    for f in &result.fits {
        if let Some(why) = &f.poor_fit {
            let _ = writeln!(out, "warning: {}: {why}", f.configuration);
        }
    }
}

fn validation_lines(out: &mut String, result: &StudyResult) {
    if let Some(c) = &result.calibration {
        let _ = writeln!(
            out,
            "\nApproach 3 calibrated on {} at N = {}: measured T = {:.5} s, model compute {:.5} s + overhead {:.5} s, compute factor a = {:.4}",
            c.configuration,
            c.n,
            c.measured_time_s,
            c.model_compute_s,
            c.model_overhead_s,
            c.model.compute_factor
        );
    }
    match &result.held_out {
        Some(h) => {
            let _ = writeln!(
                out,
                "Held-out validation: fitted on {} (a = {:.4}, k = {:.4}), predicted N = {:.1} on {} vs {} N = {:.1}: error {:+.1}% (time at that N: {:.4} s predicted vs {:.4} s, {:+.1}%)",
                h.fitted_on.join(", "),
                h.model.compute_factor,
                h.model.overhead_factor,
                h.n_predicted,
                h.configuration,
                h.reference.name(),
                h.n_reference,
                100.0 * h.relative_error,
                h.time_predicted_s,
                h.time_reference_s,
                100.0 * h.time_relative_error
            );
        }
        None => {
            let _ = writeln!(
                out,
                "Held-out validation: needs three configurations and a measured or computed size on the largest"
            );
        }
    }
    if let Some(h) = &result.scaling_held_out {
        let _ = writeln!(
            out,
            "Held-out validation (scaling model {}, cv error {:.1}%): fitted on {}, predicted N = {:.0} {} on {} vs {} N = {:.0}: error {:+.1}% (time at that N: {:.4} s predicted vs {:.4} s, {:+.1}%)",
            h.model.formula,
            h.model.cv_error_percent,
            h.fitted_on.join(", "),
            h.n_predicted,
            hetscale_study::scaling::prediction::size_interval(h.n_predicted_ci95),
            h.configuration,
            h.reference.name(),
            h.n_reference,
            100.0 * h.relative_error,
            h.time_predicted_s,
            h.time_reference_s,
            100.0 * h.time_relative_error
        );
        for caution in &h.cautions {
            let _ = writeln!(out, "  caution: {caution}");
        }
    }
    if let Some(v) = &result.verification {
        let _ = writeln!(
            out,
            "Verified run: {} at N = {} with real compute: {}",
            v.configuration,
            v.n,
            if v.verified { "passed" } else { "FAILED" }
        );
    }
}

/// The answer first, printed last: one table of N and psi(base, C_j) per approach, a verdict
/// line per approach and the held-out error.
pub fn summary(summary: &Summary) -> String {
    let mut out = format!(
        "\nSummary of {} (E_s = {} held):\n",
        summary.study,
        trimmed(summary.target)
    );
    let mut header = format!("{:<8} {:>4}", "config", "p");
    for a in &summary.approaches {
        let name = a.approach.name();
        header.push_str(&format!(" {:>12} {:>8}", format!("N {name}"), "psi"));
    }
    let _ = writeln!(out, "{header}");
    let base = summary.approaches.first().map(|a| a.rows.as_slice());
    for (i, row) in base.unwrap_or_default().iter().enumerate() {
        let mut line = format!("{:<8} {:>4}", row.configuration, row.p);
        for a in &summary.approaches {
            let r = &a.rows[i];
            let n = r.n.map_or("-".into(), |n| format!("{n:.0}"));
            let psi = r
                .psi_from_base
                .map_or("-".into(), |psi| significant_fixed(psi, 3));
            line.push_str(&format!(" {n:>12} {psi:>8}"));
        }
        let _ = writeln!(out, "{line}");
    }
    if let Some(base) = base.and_then(<[_]>::first) {
        let _ = writeln!(
            out,
            "psi = psi({}, C_j) = C_j W_base / (C_base W_j)",
            base.configuration
        );
    }
    for a in &summary.approaches {
        let _ = writeln!(out, "{}: {}", a.approach.name(), a.verdict_line);
    }
    for line in [summary.held_out_line(), summary.scaling_held_out_line()]
        .into_iter()
        .flatten()
    {
        let _ = writeln!(out, "{line}");
    }
    out
}
