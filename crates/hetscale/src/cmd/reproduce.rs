//! `hetscale reproduce`: the papers' experiments, calibrated on their base configuration and
//! checked on the others.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use hetscale_kernels::KernelRegistry;
use hetscale_report::views::reproduction::reproduction_section;
use hetscale_report::views::study::study_report;
use hetscale_study::calibrate::Estimate;
use hetscale_study::reproduce::{EXPERIMENTS, Experiment, Reproduction, reproduce};
use hetscale_study::store::Store;

use crate::output::{out, outln};

/// Arguments of `hetscale reproduce`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this experiment (jpdc-ge, jpdc-mm, jpdc-conv2d, tpds-burg, tpds-burg-maspar).
    #[arg(long, value_name = "ID")]
    pub only: Option<String>,
    /// Print one JSON array of values (one object per published value and approach).
    #[arg(long)]
    pub json: bool,
    /// The machine facts to start from (preset or platform file; default: the paper's machine).
    #[arg(long)]
    pub platform: Option<String>,
    /// Directory for the calibrated platforms and the study database.
    #[arg(long, default_value = "hetscale-reproduce")]
    pub out: PathBuf,
}

/// Runs `hetscale reproduce`.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    hetscale_study::interrupt::catch().context("cannot catch SIGINT and SIGTERM")?;
    let ids: Vec<&str> = match &args.only {
        Some(id) => vec![id.as_str()],
        None => EXPERIMENTS.to_vec(),
    };
    let experiments = ids
        .iter()
        .map(|id| {
            let mut experiment = Experiment::named(id)?;
            if let Some(platform) = &args.platform {
                experiment.platform = platform.clone();
            }
            Ok(experiment)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create --out {}", args.out.display()))?;
    let store = Store::open(&args.out.join("reproduce.db"))?;
    let mut done = Vec::new();
    for experiment in &experiments {
        let progress = super::study::Progress::new(&experiment.id, false);
        let result = reproduce(experiment, registry, &store, &progress, &args.out);
        progress.finish();
        done.push(result?);
    }
    let index = write_report(&done, &args.out)?;
    if args.json {
        let values: Vec<_> = done.iter().flat_map(|r| r.values.iter()).collect();
        outln!("{}", serde_json::to_string_pretty(&values)?);
        eprintln!("Report: {}", index.display());
    } else {
        done.iter().for_each(|r| out!("{}", render_text(r)));
        outln!("Calibrated platforms and runs in {}", args.out.display());
        outln!("Report: {}", index.display());
    }
    Ok(())
}

/// The studies' report with the published values beside, written into `dir`.
pub(crate) fn write_report(done: &[Reproduction], dir: &Path) -> anyhow::Result<PathBuf> {
    let results: Vec<_> = done.iter().map(|r| r.study.clone()).collect();
    let mut report = study_report(&results)?;
    report.push(reproduction_section(done)?);
    Ok(report
        .write(dir)
        .with_context(|| format!("cannot write the report into {}", dir.display()))?
        .index)
}

pub(crate) fn render_text(r: &Reproduction) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "== {}: target E_s = {}", r.id, r.target);
    if let Some(why) = &r.assumption {
        let _ = writeln!(s, "   assumed: {why}");
    }
    for k in &r.calibration.kernels {
        let describe = |name: &str, e: &Estimate| {
            let how = match (e.fitted, e.ci95) {
                (false, _) => "kept".to_string(),
                (true, None) => "exact fit (as many runs as parameters)".to_string(),
                (true, Some((a, b))) => format!("95% CI [{a:.4}, {b:.4}]"),
            };
            format!("{name} = {:.4} ({how})", e.estimate)
        };
        let _ = writeln!(
            s,
            "   calibrated on the base configuration ({} runs): {}, {}, {}",
            k.residuals.len(),
            describe("rate_fraction", &k.rate_fraction),
            describe("run_overhead_s", &k.run_overhead_s),
            describe("half_work", &k.half_work),
        );
    }
    let _ = writeln!(
        s,
        "   {:<6} {:<18} {:<10} {:<12} {:>12} {:>12} {:>8}",
        "table", "item", "approach", "role", "published", "hetscale", "error"
    );
    for v in &r.values {
        let tool = v.tool.map_or("-".to_string(), |t| format!("{t:.4}"));
        let err = v
            .rel_err
            .map_or("-".to_string(), |e| format!("{:+.1}%", 100.0 * e));
        let _ = writeln!(
            s,
            "   {:<6} {:<18} {:<10} {:<12} {:>12.4} {:>12} {:>8}",
            v.table, v.item, v.approach, v.role, v.published, tool, err
        );
    }
    for (quantity, approach) in [
        ("N", "measured"),
        ("N", "computed"),
        ("N", "predicted"),
        ("psi", "measured"),
        ("psi", "predicted"),
        ("T", "measured"),
    ] {
        if let Some(m) = r.median_error(quantity, approach) {
            let _ = writeln!(
                s,
                "   median |error| of {quantity} ({approach}, validation rows): {:.1}%",
                100.0 * m
            );
        }
    }
    s
}
