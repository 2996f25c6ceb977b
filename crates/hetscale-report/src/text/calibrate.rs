//! `hetscale calibrate`: the fitted machine model, kernel by kernel, and with `--fit auto` the
//! choices of parameters it was chosen from.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use hetscale_study::calibrate::{FitChoice, PlatformCalibration};

/// `--fit auto`'s rankings, kernel by kernel, best first.
pub fn comparison(compared: &[FitChoice]) -> String {
    let mut s = String::new();
    for kernel in compared.iter().map(|c| &c.kernel).collect::<BTreeSet<_>>() {
        let choices: Vec<&FitChoice> = compared.iter().filter(|c| &c.kernel == kernel).collect();
        let _ = writeln!(
            s,
            "kernel {kernel}: {} choices of parameters its runs identify, by leave-one-out error (best first):",
            choices.len()
        );
        let _ = writeln!(s, "  {:>8} {:>8}  fit", "rms", "largest");
        for c in &choices {
            let _ = writeln!(
                s,
                "  {:>7.4}% {:>7.1}%  {}{}",
                100.0 * c.cross_validation.rms,
                100.0 * c.cross_validation.max_abs,
                c.fit.join(","),
                if c.tied { "  (tied)" } else { "" }
            );
        }
        if let Some(rule) = choices.iter().find_map(|c| c.tie_break.as_deref()) {
            let _ = writeln!(s, "  {rule}");
        }
    }
    s
}

/// Each kernel's fitted parameters, their leave-one-out and held-out errors, and every run's
/// residual.
pub fn fit(fit: &PlatformCalibration) -> String {
    let mut s = String::new();
    for k in &fit.kernels {
        let _ = writeln!(s, "kernel {} ({})", k.kernel, k.runs_label());
        for (name, e) in k.parameters() {
            let _ = writeln!(s, "  {name:<18} {:>10.4}  {}", e.estimate, e.how());
        }
        match &k.cross_validation {
            Some(cv) => {
                let _ = writeln!(s, "  {}", cv.describe());
            }
            None => {
                let _ = writeln!(
                    s,
                    "  leave-one-out error: none (the runs cannot spare one: the others do not fit without it)"
                );
            }
        }
        let held_out = k.held_out.as_ref().map_or_else(
            || "none (no configuration has smaller ones that fit alone)".to_string(),
            |h| {
                format!(
                    "rms {:.1}%, largest {:.1}% ({} runs; written as held_out_errors, the 95% prediction interval of sim runs)",
                    100.0 * h.rms,
                    100.0 * h.max_abs,
                    h.rel_errors.len()
                )
            },
        );
        let _ = writeln!(s, "  each configuration from smaller ones: {held_out}");
        let _ = writeln!(
            s,
            "  {:<10} {:>8} {:>12} {:>12} {:>8}",
            "config", "n", "measured_s", "model_s", "error"
        );
        for r in &k.residuals {
            let _ = writeln!(
                s,
                "  {:<10} {:>8} {:>12.4} {:>12.4} {:>+7.1}%",
                r.configuration,
                r.n,
                r.measured_s,
                r.model_s,
                100.0 * r.rel_err
            );
        }
    }
    s
}
