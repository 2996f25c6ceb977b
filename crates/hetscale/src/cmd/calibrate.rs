//! `hetscale calibrate`: fit a platform's machine model to measured runs.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use hbsp::Platform;
use hetscale_kernels::KernelRegistry;
use hetscale_study::calibrate::runs::read_runs;
use hetscale_study::calibrate::{
    FitChoice, FreeParameter, PlatformCalibration, calibrate, calibrate_declared, choose_fit,
    stored_runs,
};
use hetscale_study::store::Store;

use super::declared::DeclaredArgs;
use super::run::KernelArgs;
use crate::output::{errln, out, outln};

/// Arguments of `hetscale calibrate`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale calibrate --db hetscale-out/study.db --fit auto
  hetscale calibrate --runs runs.csv --platform sunwulf --write-platform calibrated.toml
  hetscale calibrate --runs jacobi.csv --work '400*(n-2)^2' --partition equal --platform cluster.toml --write-platform calibrated.toml")]
pub struct Args {
    /// CSV of measured runs: configuration,nodes,kernel,n,time_s.
    #[arg(
        long,
        value_name = "FILE.csv",
        required_unless_present = "db",
        conflicts_with = "db"
    )]
    pub runs: Option<PathBuf>,
    /// A study database: its runs, on the platform and with the kernel options stored with them.
    #[arg(long, value_name = "FILE.db")]
    pub db: Option<PathBuf>,
    /// The platform to calibrate (preset or TOML file): its nodes and machine facts (with
    /// --runs). Default: sunwulf, the JPDC paper's machine (a command that runs programs here
    /// defaults to local; one that models a paper, to the paper's machine).
    #[arg(long, conflicts_with = "db")]
    pub platform: Option<String>,
    /// Parameters to fit, comma-separated: rate_fraction, run_overhead_s, process_overhead_s,
    /// half_work, collective_scale; or `auto`: every choice the runs identify, ranked by
    /// leave-one-out error, the best one fitted.
    #[arg(
        long,
        default_value = "rate_fraction,run_overhead_s",
        value_delimiter = ','
    )]
    pub fit: Vec<String>,
    /// Write the calibrated platform here (for `study` and `predict`).
    #[arg(long, value_name = "FILE.toml")]
    pub write_platform: Option<PathBuf>,
    /// Print the fit as JSON.
    #[arg(long)]
    pub json: bool,
    /// Options of the configurable kernels.
    #[command(flatten)]
    pub kernel_options: KernelArgs,
    /// With --runs: a program hetscale does not run, known by its declared model (--work
    /// ...), whose runs fit its compute rate and start-up (the runs' kernel column is its
    /// name, as `predict --work ... --program NAME` takes it).
    #[command(flatten)]
    pub declared: DeclaredArgs,
}

/// Runs `hetscale calibrate`.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    if let Some(csv) = &args.runs {
        hetscale_out::protect_input("--runs", csv);
    }
    if let Some(db) = &args.db {
        hetscale_out::protect_input("the study database", db);
    }
    if let Some(path) = &args.write_platform {
        // Before the fit, not after it.
        hetscale_out::check_not_input(path)
            .with_context(|| format!("cannot write --write-platform {}", path.display()))?;
    }
    let (platform, runs, options) = match (&args.db, &args.runs) {
        (Some(db), _) => {
            let stored = stored_runs(&Store::open_read_only(db)?, registry)?;
            (stored.platform, stored.runs, stored.options)
        }
        (None, Some(csv)) => (
            Platform::load(args.platform.as_deref().unwrap_or("sunwulf"))?,
            read_runs(csv)?,
            args.kernel_options.options(),
        ),
        (None, None) => anyhow::bail!("give the runs: --runs FILE.csv or --db FILE.db"),
    };
    let declared = args.declared.program(None)?;
    if declared.is_some() && args.db.is_some() {
        anyhow::bail!(
            "--work declares a program whose runs are in --runs FILE.csv: a study database names its own program"
        );
    }
    let (fit, compared) = if args.fit.iter().any(|f| f.trim() == "auto") {
        if args.fit.len() > 1 {
            anyhow::bail!("--fit auto chooses the parameters itself: give it alone");
        }
        if declared.is_some() {
            anyhow::bail!(
                "--fit auto compares a kernel's simulated parameters: with --work give them, e.g. --fit rate_fraction,run_overhead_s"
            );
        }
        let (fit, compared) = choose_fit(&platform, registry, &options, &runs)?;
        (fit, Some(compared))
    } else {
        let free = args
            .fit
            .iter()
            .map(|name| FreeParameter::parse(name))
            .collect::<Result<Vec<_>, _>>()?;
        let fit = match &declared {
            Some(program) => calibrate_declared(&platform, program, &runs, &free)?,
            None => calibrate(&platform, registry, &options, &runs, &free)?,
        };
        (fit, None)
    };
    if let Some(path) = &args.write_platform {
        fit.platform
            .write_file(path)
            .with_context(|| format!("cannot write --write-platform {}", path.display()))?;
    }
    let warnings: Vec<String> = fit.kernels.iter().flat_map(|k| k.warnings()).collect();
    warnings.iter().for_each(|w| errln!("warning: {w}"));
    if args.json {
        let mut json = serde_json::to_value(&fit)?;
        if let Some(compared) = &compared {
            json["compared"] = serde_json::to_value(compared)?;
        }
        json["warnings"] = serde_json::to_value(&warnings)?;
        let json = hetscale_study::json::document("calibrate", "calibration", json);
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        if let Some(compared) = &compared {
            out!("{}", render_comparison(compared));
        }
        out!("{}", render_text(&fit));
        if let Some(path) = &args.write_platform {
            outln!("Calibrated platform written to {}", path.display());
        }
    }
    Ok(())
}

/// `--fit auto`'s rankings, kernel by kernel, best first.
fn render_comparison(compared: &[FitChoice]) -> String {
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

fn render_text(fit: &PlatformCalibration) -> String {
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
