//! `hetscale probe`: the HBSP^1 parameters measured, with their 95% intervals; the
//! collectives' costs and the ping-pong's, when measured.

use std::fmt::Write as _;

use hbsp::{Backend, Machine};
use hetscale_machine::machine_model::P2pSegment;
use hetscale_probe::collective_probe::CollectiveFit;
use hetscale_probe::p2p_probe::{P2pMerge, P2pReport};
use hetscale_probe::probe::ProbeReport;

/// The supersteps' `g`, `L` and `o`, and each node's `r_j`, with their intervals.
pub fn supersteps(report: &ProbeReport, machine: &Machine, backend: &Backend) -> String {
    let mut out = String::new();
    let _ = write_supersteps(&mut out, report, machine, backend);
    out
}

/// The collectives' costs, `base + per_node p + per_byte x`, with their intervals.
pub fn collectives(fits: &[CollectiveFit]) -> String {
    let mut out = String::new();
    let _ = write_collectives(&mut out, fits);
    out
}

/// The ping-pong: one way per size and pair, the exchange and its duplex penalty, the stalls,
/// the fitted segments and how they met the platform's (`merged`).
pub fn p2p(p2p: &P2pReport, merged: &[(Option<String>, P2pMerge)]) -> String {
    let mut out = String::new();
    let _ = write_p2p(&mut out, p2p, merged);
    out
}

/// The supersteps' `g` raised to the ping-pong's sustained cost per byte.
pub fn raised_g(old: f64) -> String {
    format!(
        "g: raised to the ping-pong's sustained cost per byte (the supersteps measured {old:.4e} s/byte); each r_j restated against it, max(1, r_j g_old / g)\n"
    )
}

fn write_supersteps(
    out: &mut String,
    report: &ProbeReport,
    machine: &Machine,
    backend: &Backend,
) -> std::fmt::Result {
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

fn write_collectives(out: &mut String, fits: &[CollectiveFit]) -> std::fmt::Result {
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

/// The stall a compute phase adds to the supersteps of every node, per compute length.
fn write_compute_stall(out: &mut String, p2p: &P2pReport) -> std::fmt::Result {
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

fn write_segments(out: &mut String, label: &str, segments: &[P2pSegment]) -> std::fmt::Result {
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

fn write_p2p(
    out: &mut String,
    p2p: &P2pReport,
    merged: &[(Option<String>, P2pMerge)],
) -> std::fmt::Result {
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
    write_compute_stall(out, p2p)?;
    write_segments(out, "network", &p2p.segments)?;
    for (name, segments) in p2p.nodes[1..].iter().zip(&p2p.pair_segments) {
        write_segments(out, name, segments)?;
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
