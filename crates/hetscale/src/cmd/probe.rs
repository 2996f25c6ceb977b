//! `hetscale probe`: measure g, r_j, L and o of a backend.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use hbsp::collective_probe::{
    COLLECTIVES, CollectiveFit, CollectiveProbeOptions, probe_collectives_with_intervals,
};
use hbsp::p2p_probe::{P2pMerge, P2pProbeOptions, P2pReport, probe_p2p};
use hbsp::probe::{ProbeOptions, ProbeReport, probe_seconds, probe_supersteps};
use hbsp::{Backend, NodeSet, Platform};
use hetscale_model::numbers::human_seconds;
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
        (None, NodeSet::First(p)) => hbsp::presets::local((*p).max(hbsp::presets::cores())),
        (None, _) => hbsp::presets::local(hbsp::presets::cores()),
    };
    let machine = platform.select(&nodes)?;
    let options = if args.quick {
        ProbeOptions::quick()
    } else {
        ProbeOptions::default()
    };
    // Before the collectives too: a probe too large is refused at once.
    hbsp::probe::check_probe_fits(&backend, machine.p(), &options)?;
    let job = super::mpi::Job::start(&backend)?;
    let rank = job.as_ref().map_or(0, |job| job.rank());
    let bar = progress_bar(&backend, machine.p(), &options, rank);
    let report = hbsp::probe::probe_with_progress(&backend, &machine, &options, &|done| {
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
    // The platform file first: a closed pipe (`| head`) must not cost the user the file.
    let (mut merged, mut raised) = (Vec::new(), None);
    if let Some(path) = &args.write_platform {
        let mut target = if path.exists() {
            Platform::from_file(path)?
        } else {
            platform.clone()
        };
        report.apply_to(&mut target, &machine)?;
        with_collectives(&mut target, &collectives)?;
        let names: Vec<&str> = machine.nodes().iter().map(|n| n.name.as_str()).collect();
        let mut source = format!(
            "probe: supersteps (g, r_j, o, L({})) on {}, {backend} backend, {}",
            machine.p(),
            names.join(","),
            utc_date()
        );
        if let Some(p2p) = &p2p {
            merged = p2p.apply_to(&mut target, &|node| p2p_source(p2p, &backend, node))?;
            source.push_str(&format!(
                "; message_stall_s and message_stall_all_s at p = {} from the ping-pong's supersteps and those in which every node took part",
                p2p.p
            ));
        }
        if let Some(old) = hbsp::p2p_probe::raise_g_to_sustained(&mut target) {
            raised = Some(old);
            source.push_str(&format!(
                "; g = the ping-pong's sustained s_per_byte ([[machine.p2p]]'s last segment), above the supersteps' {old:.4e} s/byte, and r_j = max(1, r_j g_old / g)"
            ));
        }
        target.network.source = Some(source);
        target.validate()?;
        target.write_file(path)?;
    }
    // Written, not printed: a closed pipe comes back as an error, which `main_with` ends quietly.
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut json = serde_json::to_value(&report)?;
        if args.collectives {
            json["collectives"] = serde_json::to_value(&collectives)?;
        }
        if let Some(p2p) = &p2p {
            json["p2p"] = serde_json::to_value(p2p)?;
        }
        json["backend"] = backend.to_string().into();
        json["platform"] = platform.name.clone().into();
        json["nodes"] = args.nodes.clone().into();
        let json = hetscale_study::json::document("probe", "probe", json);
        writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
    } else {
        print_report(&mut out, &report, &machine, &backend)?;
        print_collectives(&mut out, &collectives)?;
        if let Some(p2p) = &p2p {
            print_p2p(&mut out, p2p, &merged)?;
        }
        if let Some(old) = raised {
            writeln!(
                out,
                "g: raised to the ping-pong's sustained cost per byte (the supersteps measured {old:.4e} s/byte); each r_j restated against it, max(1, r_j g_old / g)"
            )?;
        }
        if let Some(path) = &args.write_platform {
            writeln!(out, "wrote {}", path.display())?;
        }
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

/// The collectives' costs, fitted over the first 2, 4, 8, ... nodes of `machine` and all of it
/// (on mpi, the first 2, 4, 8, ... ranks of the job and all of them).
fn measure_collectives(
    backend: &Backend,
    platform: &Platform,
    machine: &hbsp::Machine,
    quick: bool,
) -> anyhow::Result<Vec<CollectiveFit>> {
    let names: Vec<&str> = machine.nodes().iter().map(|n| n.name.as_str()).collect();
    let mut counts: Vec<usize> = std::iter::successors(Some(2), |k| Some(k * 2))
        .take_while(|&k| k < names.len())
        .collect();
    counts.push(names.len());
    if counts.len() < 2 {
        anyhow::bail!(
            "--collectives needs at least 3 nodes (two node counts to fit the term in p): \
             pass --nodes 4 or more"
        );
    }
    let machines = counts
        .iter()
        .map(|&k| platform.select(&names[..k].join(",").parse()?))
        .collect::<Result<Vec<_>, _>>()?;
    let options = if quick {
        CollectiveProbeOptions::quick(&COLLECTIVES)
    } else {
        CollectiveProbeOptions::all()
    };
    Ok(probe_collectives_with_intervals(
        backend, &machines, &options,
    )?)
}

/// Replaces the platform's measured collectives of the same names by `measured`.
fn with_collectives(platform: &mut Platform, measured: &[CollectiveFit]) -> anyhow::Result<()> {
    let network = &mut platform.network.collectives;
    network.retain(|c| measured.iter().all(|m| m.cost.name != c.name));
    network.extend(measured.iter().map(|m| m.cost.clone()));
    Ok(platform.validate()?)
}

fn print_collectives(out: &mut impl Write, fits: &[CollectiveFit]) -> std::io::Result<()> {
    if !fits.is_empty() {
        writeln!(
            out,
            "collectives: base + per_node x p + per_byte x (bytes one node receives) [95% intervals]"
        )?;
    }
    // No interval: a term the fit dropped (0), or a fit with no degrees of freedom left.
    let ci = |value: f64, v: Option<[f64; 2]>| match v {
        Some([lo, hi]) => format!(" [{lo:.4e}, {hi:.4e}]"),
        None if value == 0.0 => " (dropped)".to_owned(),
        None => " [exact fit]".to_owned(),
    };
    for f in fits {
        let c = &f.cost;
        writeln!(
            out,
            "{:<10} = {:.4e} s{} + {:.4e} s/node{} + {:.4e} s/byte{} ({} medians)",
            c.name,
            c.base_s,
            ci(c.base_s, f.base_s_ci95),
            c.per_node_s,
            ci(c.per_node_s, f.per_node_s_ci95),
            c.per_byte_s,
            ci(c.per_byte_s, f.per_byte_s_ci95),
            f.samples
        )?;
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

/// The stall a compute phase adds to the supersteps of every node, per compute length.
fn print_compute_stall(out: &mut impl Write, p2p: &P2pReport) -> std::io::Result<()> {
    if p2p.compute_stall_s.is_empty() {
        return Ok(());
    }
    let stalls: Vec<String> = p2p
        .compute_stall_s
        .iter()
        .zip(&p2p.compute_stall)
        .zip(&p2p.compute_stall_samples)
        .map(|((d, (stall, [lo, hi])), samples)| {
            format!("after {d:.1e} s {stall:.4e} s [{lo:.4e}, {hi:.4e}] ({samples} supersteps)")
        })
        .collect();
    writeln!(
        out,
        "stall after compute: the same supersteps after every node computed d took, beyond d and beyond those without compute, on average: {}; written as [[machine.compute_stall]] at p = {}",
        stalls.join(", "),
        p2p.p
    )
}

/// Where a ping-pong's segments come from: the network's, `probe: ping-pong h1-h2,h1-h3
/// (the fastest pair at each size), 8 B to 16777216 B, mpi backend, 2026-11-27` (UTC date), or
/// node `j`'s, `probe: ping-pong h1-h3, ...`.
fn p2p_source(p2p: &P2pReport, backend: &Backend, node: Option<&str>) -> String {
    let first = &p2p.nodes[0];
    let pairs = match node {
        Some(n) => format!("{first}-{n}"),
        None => {
            let pairs: Vec<String> = p2p.nodes[1..]
                .iter()
                .map(|n| format!("{first}-{n}"))
                .collect();
            format!("{} (the fastest pair at each size)", pairs.join(","))
        }
    };
    format!(
        "probe: ping-pong {pairs}, {} B to {} B, {backend} backend, {}",
        p2p.sizes.first().copied().unwrap_or(0),
        p2p.sizes.last().copied().unwrap_or(0),
        utc_date()
    )
}

/// Today's date in UTC, `YYYY-MM-DD` (the days-to-civil conversion of H. Hinnant).
fn utc_date() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn print_segments(
    out: &mut impl Write,
    label: &str,
    segments: &[hbsp::machine_model::P2pSegment],
) -> std::io::Result<()> {
    let ci =
        |v: Option<[f64; 2]>| v.map_or(String::new(), |[lo, hi]| format!(" [{lo:.4e}, {hi:.4e}]"));
    let mut from = 0;
    for s in segments {
        writeln!(
            out,
            "p2p {label:<8} {from:>9} .. {:>9} B: {:.4e} s{} + {:.4e} s/byte{}",
            s.max_bytes,
            s.latency_s,
            ci(s.latency_s_ci95),
            s.s_per_byte,
            ci(s.s_per_byte_ci95)
        )?;
        from = s.max_bytes + 1;
    }
    Ok(())
}

fn print_p2p(
    out: &mut impl Write,
    p2p: &P2pReport,
    merged: &[(Option<String>, P2pMerge)],
) -> std::io::Result<()> {
    writeln!(
        out,
        "point-to-point, one way (ping-pong {} with each other node, the fastest of each size's samples; empty superstep {:.4e} s subtracted):",
        p2p.nodes[0], p2p.empty_superstep_s
    )?;
    let names: Vec<String> = p2p.nodes[1..]
        .iter()
        .map(|n| format!("{}-{n}", p2p.nodes[0]))
        .collect();
    // The exchange's columns: nodes 0 and 1 sending each size both ways at once.
    let swap = format!("{}<->{} mean", p2p.nodes[0], p2p.nodes[1]);
    writeln!(
        out,
        "  {:>9}    {}  {swap:>10}  duplex penalty",
        "bytes",
        names.join("  ")
    )?;
    for (k, size) in p2p.sizes.iter().enumerate() {
        let times: Vec<String> = p2p
            .pairs
            .iter()
            .map(|pair| format!("{:.4e} s", pair[k]))
            .collect();
        let penalty = p2p.duplex_penalty[k].map_or("-".to_owned(), |d| format!("{d:.2}"));
        writeln!(
            out,
            "  {size:>9} B  {}  {:.4e} s  {penalty}",
            times.join("  "),
            p2p.exchange_s[k]
        )?;
    }
    writeln!(
        out,
        "duplex penalty: the exchange's mean time beyond one way's, over one way's bytes' cost (0: both directions at full rate, 1: one at a time; -: a start-up dominated size, not measured); written as [[machine.duplex]] at p = {}",
        p2p.p
    )?;
    writeln!(
        out,
        "stall: a superstep that moves a message took {:.4e} s longer on average than its size's fastest, beyond an empty superstep's excess (over {} message supersteps of start-up sizes); written as message_stall_s beside L({})",
        p2p.stall_s, p2p.stall_samples, p2p.p
    )?;
    writeln!(
        out,
        "stall, every node taking part: a superstep in which every node sends or receives {} B took {:.4e} s longer on average than an empty one (over {} supersteps), {:.4e} s [{:.4e}, {:.4e}] beyond what the slowest node's segments charge; written as message_stall_all_s beside L({})",
        p2p.sizes[0],
        p2p.all_nodes_excess_s,
        p2p.all_nodes_samples,
        p2p.all_nodes_stall_s,
        p2p.all_nodes_stall_s_ci95[0],
        p2p.all_nodes_stall_s_ci95[1],
        p2p.p
    )?;
    print_compute_stall(out, p2p)?;
    print_segments(out, "network", &p2p.segments)?;
    for (name, segments) in p2p.nodes[1..].iter().zip(&p2p.pair_segments) {
        print_segments(out, name, segments)?;
    }
    writeln!(
        out,
        "p2p fit (network: the fastest pair at each size): rms relative error {:.1}%",
        100.0 * p2p.rms_relative_error
    )?;
    for (key, merge) in merged {
        let whose = key
            .as_deref()
            .map_or("the network's".to_owned(), |n| format!("node {n}'s"));
        match merge {
            P2pMerge::Added => {
                writeln!(out, "p2p: {whose} segments written (the platform had none)")
            }
            P2pMerge::ReplacedShorter => writeln!(
                out,
                "p2p: {whose} segments replaced the platform's, measured to a smaller size"
            ),
            P2pMerge::ReplacedFaster => writeln!(
                out,
                "p2p: {whose} segments replaced the platform's, measured as far but faster there (the slower measurement stands)"
            ),
            P2pMerge::Kept(why) => {
                writeln!(out, "p2p: kept the platform's {whose} segments: {why}")
            }
        }?;
    }
    Ok(())
}
