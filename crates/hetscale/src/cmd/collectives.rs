//! `hetscale collectives`: Williams & Parsons' scatter and broadcast experiments.

use crate::output::{out, outln};
use anyhow::Context as _;
use hbsp::{Backend, Platform, WorkCharge};
use hetscale_papers::wp::experiments::{CollectivesDocument, improvements, run_experiments};
use hetscale_report::text;

/// Arguments of `hetscale collectives`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale collectives
  hetscale collectives --nodes 2,4 --sizes 100,500 --json")]
pub struct Args {
    /// Backend: sim (virtual time on the platform's model) or threads (measured here).
    #[arg(long, default_value = "sim")]
    pub backend: String,
    /// Platform preset or TOML file; nodes join in the platform's order (Table 4's for
    /// ucf-cluster). Default: ucf-cluster, the paper's machine (a command that runs programs
    /// here defaults to local; one that models a paper, to the paper's machine).
    #[arg(long, default_value = "ucf-cluster")]
    pub platform: String,
    /// Numbers of nodes, the first N of the platform each.
    #[arg(long, alias = "p", value_delimiter = ',', default_value = "2,4,6,8,10")]
    pub nodes: Vec<usize>,
    /// Input sizes in KB of 4-byte integers.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "100,200,300,400,500,600,700,800,900,1000"
    )]
    pub sizes: Vec<usize>,
    /// Runs per point, 1 to 10,000 (median reported); 1 suffices on sim, which is
    /// deterministic.
    #[arg(
        long,
        alias = "repetitions",
        default_value_t = 1,
        value_parser = clap::value_parser!(u16).range(1..=10_000)
    )]
    pub runs: u16,
    /// Print the rows as JSON: one per (collective, variant, p, n) with actual_s and predicted_s.
    #[arg(long)]
    pub json: bool,
}

/// Runs `hetscale collectives`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let mut backend: Backend = args.backend.parse()?;
    anyhow::ensure!(
        !matches!(backend, Backend::Mpi(_)),
        "the collective experiments run machines of several sizes, an MPI job has one: use --backend threads or sim (or hetscale probe on mpi)"
    );
    if let Backend::Sim(options) = &mut backend {
        // The collectives do no declared work (w = 0 in the paper's experiments).
        options.work = WorkCharge::Declared;
    }
    anyhow::ensure!(
        args.sizes.iter().all(|&s| s > 0),
        "--sizes must be positive KB counts"
    );
    let platform = Platform::load(&args.platform)?;
    let machines = args
        .nodes
        .iter()
        .map(|p| {
            platform
                .select(&p.to_string().parse()?)
                .with_context(|| format!("--nodes {p}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let rows = run_experiments(&backend, &machines, &args.sizes, args.runs.into())?;
    if args.json {
        let document = CollectivesDocument::new(&backend, &platform.name, &rows);
        let json =
            hetscale_study::json::document("collectives", "rows", serde_json::to_value(&document)?);
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        out!(
            "{}",
            text::collectives::factors(&improvements(&rows), &backend, &platform.name)
        );
    }
    Ok(())
}
