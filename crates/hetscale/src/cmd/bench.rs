//! `hetscale bench`: the marked speed of this machine's cores, and the `local` platform with it.

use crate::output::{errln, out, outln};
use std::path::PathBuf;

use hbsp::Platform;
use hetscale_study::marked_speed::{BenchOptions, MarkedSpeedReport, measure};

/// Arguments of `hetscale bench`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale bench --quick
  hetscale bench --save-local --json")]
pub struct Args {
    /// Small sizes and 3 repetitions: seconds instead of a minute, less representative.
    #[arg(long)]
    pub quick: bool,
    /// Timed runs per kernel, 1 to 10,000.
    #[arg(long, alias = "repetitions", value_parser = clap::value_parser!(u16).range(1..=10_000))]
    pub runs: Option<u16>,
    /// Write the `local` platform (one node per core at the measured marked speed) to FILE;
    /// fill its network with `hetscale probe --write-platform FILE`.
    #[arg(long)]
    pub write_platform: Option<PathBuf>,
    /// Cache the measured marked speed as the `local` platform's, replacing what `local`
    /// measured and cached on its first use (run with --quick to match that measurement).
    #[arg(long)]
    pub save_local: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `hetscale bench`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let mut options = if args.quick {
        BenchOptions::quick()
    } else {
        BenchOptions::default()
    };
    if let Some(r) = args.runs {
        options.repetitions = r.into();
    }
    let report = measure(&options)?;
    if let Some(path) = &args.write_platform {
        local_platform(&report)?.write_file(path)?;
    }
    let cached = args
        .save_local
        .then(|| hetscale_study::local_speed::save_report(&report))
        .transpose()?;
    let warnings: Vec<String> = report.spread_warning().into_iter().collect();
    warnings.iter().for_each(|w| errln!("warning: {w}"));
    if args.json {
        let mut json = serde_json::to_value(&report)?;
        json["marked_speed_flops_ci95"] = {
            let (lo, hi) = report.interval();
            serde_json::json!([lo * 1e6, hi * 1e6])
        };
        json["warnings"] = serde_json::to_value(&warnings)?;
        let json = hetscale_study::json::document("bench", "bench", json);
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        out!("{}", render(&report));
        if let Some(path) = &args.write_platform {
            outln!("wrote the local platform to {}", path.display());
        }
        if let Some(file) = &cached {
            outln!(
                "cached as the local platform's marked speed in {}",
                file.display()
            );
        }
    }
    Ok(())
}

/// The `local` preset with every core at the measured marked speed.
fn local_platform(report: &MarkedSpeedReport) -> anyhow::Result<Platform> {
    let mut platform = Platform::load("local")?;
    for node in &mut platform.nodes {
        node.marked_speed = report.marked_speed;
    }
    platform.description = format!(
        "this host, one node per core at the marked speed measured by hetscale bench ({:.1} Mflop/s); network: run hetscale probe --write-platform",
        report.marked_speed
    );
    platform.validate()?;
    Ok(platform)
}

fn render(report: &MarkedSpeedReport) -> String {
    let mut out = format!(
        "{:<6} {:>12} {:>12} {:>10} {:>10}  {}\n",
        "kernel", "median", "95% CI low", "high", "MAD", "problem"
    );
    for k in &report.kernels {
        let s = &k.mflops;
        out.push_str(&format!(
            "{:<6} {:>12.1} {:>12.1} {:>10.1} {:>10.1}  {}\n",
            k.name, s.median, s.median_ci.0, s.median_ci.1, s.mad, k.problem
        ));
    }
    let (lo, hi) = report.interval();
    out.push_str(&format!(
        "(rates in Mflop/s over {} timed runs after {} warm-up)\nmarked_speed = {:.1} Mflop/s per core, 95% CI [{lo:.1}, {hi:.1}] (mean of the medians, as JPDC section 4.3 averages NPB kernels); {} cores\n",
        report.options.repetitions, report.options.warmup, report.marked_speed, report.cores
    ));
    out
}
