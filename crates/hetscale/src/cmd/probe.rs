//! `hetscale probe`: measure g, r_j, L and o of a backend.

use std::io::Write;
use std::path::PathBuf;

use hbsp::probe::{ProbeOptions, ProbeReport};
use hbsp::{Backend, NodeSet, Platform};

/// Measure the HBSP^1 parameters g, r_j, L(p) and o with 95% confidence intervals.
#[derive(Debug, clap::Args)]
#[command(about = "Measure the HBSP^1 parameters g, r_j, L(p) and o with 95% confidence intervals")]
pub struct Args {
    /// Backend to probe: threads, sim, or mpi (under `mpirun -np P`, one rank per node).
    #[arg(long, default_value = "threads")]
    backend: String,
    /// Nodes to probe: a count (first P nodes) or a node-set such as gromit,chromus.
    #[arg(long, default_value = "2")]
    nodes: String,
    /// Platform the nodes come from (default: this host, one node per requested thread).
    #[arg(long)]
    platform: Option<String>,
    /// Fewer sizes and repetitions: a rough answer in well under a second.
    #[arg(long)]
    quick: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Write the measured g, o, L(p) and r_j into this platform file (created from the probed
    /// platform if it does not exist).
    #[arg(long, value_name = "FILE")]
    write_platform: Option<PathBuf>,
}

/// Runs `hetscale probe`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let backend: Backend = args.backend.parse()?;
    let nodes: NodeSet = args.nodes.parse()?;
    let platform = match (&args.platform, &nodes) {
        (Some(name), _) => Platform::load(name)?,
        (None, NodeSet::First(p)) => hbsp::presets::local((*p).max(hbsp::presets::cores())),
        (None, _) => hbsp::presets::local(hbsp::presets::cores()),
    };
    let machine = platform.select(&nodes)?;
    let options = if args.quick {
        ProbeOptions::quick()
    } else {
        ProbeOptions::default()
    };
    let job = super::mpi::Job::start(&backend)?;
    let report = hbsp::probe::probe(&backend, &machine, &options)?;
    if job.is_some_and(|job| job.rank() != 0) {
        // Every rank holds the same report; rank 0 speaks for the job.
        return Ok(());
    }
    // The platform file first: a closed pipe (`| head`) must not cost the user the file.
    if let Some(path) = &args.write_platform {
        let mut target = if path.exists() {
            Platform::from_file(path)?
        } else {
            platform.clone()
        };
        report.apply_to(&mut target, &machine)?;
        target.write_file(path)?;
    }
    // Written, not printed: a closed pipe comes back as an error, which `main_with` ends quietly.
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        print_report(&mut out, &report, &machine, &backend)?;
        if let Some(path) = &args.write_platform {
            writeln!(out, "wrote {}", path.display())?;
        }
    }
    Ok(())
}

fn print_report(
    out: &mut impl Write,
    report: &ProbeReport,
    machine: &hbsp::Machine,
    backend: &Backend,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{backend} backend, {} nodes of {}, {} rounds (mean [95% confidence interval])",
        report.p,
        machine.platform(),
        report.rounds
    )?;
    let rows = [
        ("g", "s/byte", report.g_s_per_byte, report.g_s_per_byte_ci),
        ("L", "s", report.L_s, report.L_s_ci),
        ("o", "s", report.o_s, report.o_s_ci),
    ];
    for (name, unit, v, ci) in rows {
        writeln!(
            out,
            "{name:<2} = {v:.4e} {unit:<7} [{:.4e}, {:.4e}]",
            ci[0], ci[1]
        )?;
    }
    for ((node, r), ci) in machine.nodes().iter().zip(&report.r).zip(&report.r_ci) {
        writeln!(
            out,
            "r  = {r:.3} [{:.3}, {:.3}] {}",
            ci[0], ci[1], node.name
        )?;
    }
    if let Some(why) = &report.loaded {
        writeln!(out, "not this backend's figures: {why}")?;
    }
    Ok(())
}
