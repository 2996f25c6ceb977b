//! `hetscale reproduce`: the papers' experiments, calibrated on their base configuration and
//! checked on the others.

use std::path::PathBuf;

use anyhow::Context as _;
use hetscale_kernels::KernelRegistry;
use hetscale_papers::kalinov::summa::reproduce_kalinov;
use hetscale_papers::plan::{Plan, PlanOptions, plan};
use hetscale_papers::reproduce::{EXPERIMENTS, reproduce};
use hetscale_papers::wp::collectives::reproduce_wp;
use hetscale_report::text;
use hetscale_report::views::reproduction::reproduction_report;
use hetscale_study::store::Store;

use super::progress::Progress;
use crate::output::{errln, out, outln};

/// Arguments of `hetscale reproduce`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale reproduce
  hetscale reproduce --only jpdc-ge --out ge-reproduction --json")]
pub struct Args {
    #[arg(long, value_name = "ID", help = only_help())]
    pub only: Option<String>,
    /// Print one JSON array of values (one object per published value and approach).
    #[arg(long)]
    pub json: bool,
    /// The machine facts to start from (preset or platform file). Default: each experiment's
    /// own paper's machine (a command that runs programs here defaults to local; one that
    /// models a paper, to the paper's machine).
    #[arg(long)]
    pub platform: Option<String>,
    /// Directory for the calibrated platforms and the study database.
    #[arg(long, default_value = "hetscale-reproduce")]
    pub out: PathBuf,
    /// Parameters the base configuration fits instead of the experiment's own choice,
    /// comma-separated: rate_fraction, run_overhead_s, process_overhead_s, half_work,
    /// collective_scale (with --only; the others keep the platform's values); or `auto`: the
    /// choice with the smallest leave-one-out error over the base's runs.
    #[arg(long, value_delimiter = ',', requires = "only")]
    pub fit: Option<Vec<String>>,
    /// The kernel's achieved rate over the marked speed, as a machine fact set before the fit
    /// (e.g. JPDC section 4.5's t_c for GE); fitted only if --fit names rate_fraction or auto
    /// chooses it (with --only).
    #[arg(long, requires = "only", allow_negative_numbers = true)]
    pub rate_fraction: Option<f64>,
    /// Hold the paper's target E_s itself on the calibrated machine, instead of the machine's
    /// own E_s at the base configuration's published size (the contour through the base point)
    #[arg(long)]
    pub published_target: bool,
}

/// `--only`'s help, listing the ids from [`EXPERIMENTS`] so that it cannot fall behind.
fn only_help() -> String {
    format!("Only this experiment ({})", EXPERIMENTS.join(", "))
}

/// Runs `hetscale reproduce`.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    hetscale_study::runner::interrupt::catch().context("cannot catch SIGINT and SIGTERM")?;
    let options = PlanOptions {
        only: args.only.clone(),
        platform: args.platform.clone(),
        fit: args.fit.clone(),
        rate_fraction: args.rate_fraction,
        published_target: args.published_target,
    };
    let Plan {
        experiments,
        kalinov,
        wp,
        maspar,
    } = plan(&options, registry)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create --out {}", args.out.display()))?;
    let db = args.out.join("reproduce.db");
    hetscale_out::check_not_link(&db).with_context(|| format!("cannot use {}", db.display()))?;
    let store = Store::open(&db)?;
    let mut done = Vec::new();
    for experiment in &experiments {
        let progress = Progress::new(&experiment.id, false);
        let result = reproduce(experiment, registry, &store, &progress, &args.out);
        progress.finish();
        done.push(result?);
    }
    let kalinov = kalinov
        .map(|experiment| reproduce_kalinov(&experiment, registry))
        .transpose()?;
    let wp = wp.map(|experiment| reproduce_wp(&experiment)).transpose()?;
    let index = reproduction_report(&done, kalinov.as_ref(), wp.as_ref(), maspar.as_ref())?
        .write(&args.out)
        .with_context(|| format!("cannot write the report into {}", args.out.display()))?
        .index;
    if args.json {
        let values: Vec<_> = done
            .iter()
            .flat_map(|r| r.values.iter().cloned())
            .chain(kalinov.iter().flat_map(|k| k.values()))
            .chain(wp.iter().flat_map(|w| w.values()))
            .collect();
        let json =
            hetscale_study::json::document("reproduce", "values", serde_json::to_value(&values)?);
        outln!("{}", serde_json::to_string_pretty(&json)?);
        maspar
            .iter()
            .for_each(|m| errln!("{}: {}", m.id, m.explanation()));
        errln!("Report: {}", index.display());
        return Ok(());
    }
    done.iter()
        .for_each(|r| out!("{}", text::reproduce::reproduction(r)));
    kalinov
        .iter()
        .for_each(|k| out!("{}", text::reproduce::kalinov(k)));
    wp.iter().for_each(|w| out!("{}", text::reproduce::wp(w)));
    maspar
        .iter()
        .for_each(|m| out!("{}", text::reproduce::maspar(m)));
    if !done.is_empty() {
        outln!("Calibrated platforms and runs in {}", args.out.display());
    }
    outln!("Report: {}", index.display());
    for r in &done {
        out!("{}", text::study::summary(&r.study.summary));
    }
    Ok(())
}
