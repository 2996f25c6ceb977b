//! `hetscale probe`: measure g, r_j, L and o of a backend.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use hbsp::{Backend, NodeSet, Platform};
use hetscale_model::numbers::human_seconds;
use hetscale_probe::p2p_probe::{P2pProbeOptions, probe_p2p};
use hetscale_probe::probe::{ProbeOptions, probe_seconds, probe_supersteps};
use hetscale_probe::probe_platform::{
    ProbeDocument, Probed, Written, measure_collectives, write_platform,
};
use hetscale_report::text;
use indicatif::{ProgressBar, ProgressStyle};

/// Measure the HBSP^1 parameters g, r_j, L(p) and o with 95% confidence intervals.
#[derive(Debug, clap::Args)]
#[command(
    about = "Measure the HBSP^1 parameters g, r_j, L(p) and o with 95% confidence intervals",
    after_help = "\
Examples:
  hetscale probe --quick
  hetscale probe --backend sim --platform ucf-cluster --nodes 4 --json"
)]
pub struct Args {
    /// Backend to probe: threads, sim, or mpi (under `mpirun -np P`, one rank per node).
    #[arg(long, default_value = "threads")]
    backend: String,
    /// Nodes to probe: a count (first P nodes) or a node-set such as gromit,chromus.
    #[arg(long, default_value = "2")]
    nodes: String,
    /// Platform the nodes come from. Default: this host, one node per requested thread (a
    /// command that runs programs here defaults to local; one that models a paper, to the
    /// paper's machine).
    #[arg(long)]
    platform: Option<String>,
    /// Fewer sizes and repetitions: a rough answer in well under a second.
    #[arg(long)]
    quick: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also measure each collective's cost as such (broadcast, scatterv, gatherv, allgather,
    /// alltoallv: `base + per_node p + per_byte x`, JPDC section 4.5's form) on the first 2, 4,
    /// 8, ... and all of the nodes, with 95% intervals; on mpi, within the one job (the first 2,
    /// 4, ... ranks measure while the others wait).
    #[arg(long)]
    collectives: bool,
    /// Also play ping-pong between the first node and each other node over message sizes
    /// from 8 B to 16 MiB (with `--quick`, to 1 MiB) and fit the point-to-point cost,
    /// piecewise-linear in message size (1 to 4 segments), that `sim` charges; written as
    /// `[[machine.p2p]]` with `--write-platform`.
    #[arg(long)]
    p2p: bool,
    /// Write the measured g, o, L(p) and r_j (and with `--collectives`, the collectives'
    /// costs) into this platform file (created from the probed platform if it does not exist).
    #[arg(long, value_name = "FILE")]
    write_platform: Option<PathBuf>,
}

/// Runs `hetscale probe`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let backend: Backend = args.backend.parse()?;
    let nodes: NodeSet = args.nodes.parse()?;
    let platform = match (&args.platform, &nodes) {
        (Some(name), _) => Platform::load(name)?,
        (None, NodeSet::First(p)) => {
            hetscale_machine::presets::local((*p).max(hetscale_machine::presets::cores()))
        }
        (None, _) => hetscale_machine::presets::local(hetscale_machine::presets::cores()),
    };
    let machine = platform.select(&nodes)?;
    let options = if args.quick {
        ProbeOptions::quick()
    } else {
        ProbeOptions::default()
    };
    // Before the collectives too: a probe too large is refused at once.
    hetscale_probe::probe::check_probe_fits(&backend, machine.p(), &options)?;
    let job = super::mpi::Job::start(&backend)?;
    let rank = job.as_ref().map_or(0, |job| job.rank());
    let bar = progress_bar(&backend, machine.p(), &options, rank);
    let report =
        hetscale_probe::probe::probe_with_progress(&backend, &machine, &options, &|done| {
            bar.set_position(done);
        });
    bar.finish_and_clear();
    let report = report?;
    // After the supersteps' probe, which refuses an MPI job of the wrong size at once.
    let collectives = if args.collectives {
        measure_collectives(&backend, &platform, &machine, args.quick)?
    } else {
        Vec::new()
    };
    let p2p = if args.p2p {
        let options = if args.quick {
            P2pProbeOptions::quick()
        } else {
            P2pProbeOptions::default()
        };
        Some(probe_p2p(&backend, &machine, &options)?)
    } else {
        None
    };
    if rank != 0 {
        // Every rank holds the same report; rank 0 speaks for the job.
        return Ok(());
    }
    let probed = Probed {
        report: &report,
        collectives: &collectives,
        p2p: p2p.as_ref(),
    };
    // The platform file first: a closed pipe (`| head`) must not cost the user the file.
    let written = match &args.write_platform {
        Some(path) => write_platform(path, &probed, &platform, &machine, &backend)?,
        None => Written::default(),
    };
    // Written, not printed: a closed pipe comes back as an error, which `main_with` ends quietly.
    let mut out = std::io::stdout().lock();
    if args.json {
        let document = ProbeDocument::new(
            &probed,
            args.collectives,
            &backend,
            &platform.name,
            &args.nodes,
        );
        let json =
            hetscale_study::json::document("probe", "probe", serde_json::to_value(&document)?);
        writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
        return Ok(());
    }
    write!(
        out,
        "{}",
        text::probe::supersteps(&report, &machine, &backend)
    )?;
    write!(out, "{}", text::probe::collectives(&collectives))?;
    if let Some(p2p) = &p2p {
        write!(out, "{}", text::probe::p2p(p2p, &written.merged))?;
    }
    if let Some(old) = written.raised_g {
        write!(out, "{}", text::probe::raised_g(old))?;
    }
    if let Some(path) = &args.write_platform {
        writeln!(out, "wrote {}", path.display())?;
    }
    Ok(())
}

/// A bar of the probe's supersteps on standard error, with the estimate of its time; hidden
/// when standard error is not a terminal, and on MPI ranks other than 0.
fn progress_bar(backend: &Backend, p: usize, options: &ProbeOptions, rank: usize) -> ProgressBar {
    if rank != 0 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(probe_supersteps(p, options));
    bar.set_style(
        ProgressStyle::with_template("{msg} {wide_bar} {pos}/{len} supersteps [{elapsed}<{eta}]")
            .expect("a valid template"),
    );
    bar.set_message(format!(
        "probing {p} nodes (estimate {})",
        human_seconds(probe_seconds(backend, p, options))
    ));
    bar
}
