//! The machine model: what a real machine has beyond HBSP^1, charged by the `sim` backend.
//!
//! HBSP^1 (`network` of the platform: `g`, `r_j`, `L(p)`, `o`) is the *prediction* model. A
//! real machine also computes below its marked speed, and by how much depends on the code and
//! on how much work a node gets (Sun & Rover's average unit speed); it pays start-up costs;
//! its collectives have costs of their own (JPDC section 4.5 measured `T_broadcast` as such);
//! its links have a rate and a latency, and a shared switch slows senders down when many send
//! at once. A platform's optional `[machine]` table describes these; `sim` then charges them
//! instead of pure HBSP^1, so that a prediction checked against `sim` makes a real error.
//!
//! ```toml
//! [machine]
//! link_bytes_per_s = 12.5e6      # per port, full duplex: 100 Mbit/s Ethernet
//! latency_s = 0.08e-3            # per message
//! receive_s_per_byte = 0.0       # x r_j, per byte a node takes in (0: off)
//! backplane_bytes_per_s = 0.0    # shared switch capacity (0: no contention)
//! superstep_s = 0.0              # fixed cost of every superstep, on top of L(p)
//! jitter = 0.0                   # sd of a seeded, per-node log-normal speed factor
//! seed = 1
//! topology = "switched"          # or "hypercube", "torus": derives collectives' costs
//! barrier = "hbsp"               # or "none": supersteps end without a barrier cost
//!
//! [[machine.collective]]         # a measured collective: replaces its superstep's
//! name = "broadcast"             # communication and barrier
//! base_s = 0.12e-3
//! per_node_s = 0.23e-3
//!
//! [[machine.compute]]            # achieved rate r(w) = f C_j w / (w + w_1/2) for a block
//! kernel = "mm"                  # of w operations; "*" matches any kernel
//! kind = "*"                     # node kind, or "*"
//! rate_fraction = 0.21           # f = r_inf / marked speed
//! half_work = 0.0                # w_1/2, operations (Hockney's n_1/2)
//! run_overhead_s = 0.0           # fixed cost per run
//! process_overhead_s = 0.0       # fixed cost per run and process
//! collective_scale = 1.0         # factor on measured collectives and the barrier
//!
//! [[machine.p2p]]                # point-to-point cost, piecewise-linear in size
//! max_bytes = 131072             # (`hetscale probe --p2p`): a transfer of b bytes
//! latency_s = 2.0e-5             # costs latency_s + b s_per_byte on the first
//! s_per_byte = 1.0e-9            # segment whose max_bytes holds it, else the last
//! source = "probe: ping-pong h1-h2, mpi backend, 2026-11-27"
//! ```
//!
//! Superstep cost on `sim` with a machine model:
//! `max_j c_j + comm + barrier + superstep_s`, where `c_j = jitter_j sum_blocks (w + w_1/2) /
//! (f C_j)`; for a measured collective `comm = base + per_node p + per_log2_node log2 p +
//! S (per_byte + per_log2_node_byte ceil(log2 p))` with `S` the largest number of bytes a node
//! receives, and no barrier; otherwise `comm = max(max_j (r_j (h_j / link + receive b_j) +
//! latency m_j), sum_j bytes_j / backplane)` with `b_j` the bytes node `j` received, and
//! `barrier = L(p)` (0 with `barrier = "none"`, for message-passing codes whose nodes wait
//! only for their own messages). The `receive` term is what a receiver pays at its own speed
//! once the bytes have arrived (Williams & Parsons 2001, Figure 2: `pvm_recv`, then the move
//! into `recvbuf`); with it a transfer from a slow node to a fast one costs less than the
//! reverse, as Williams & Parsons measured at p = 2 (section 5.1). Measured and
//! topology-derived collectives' formulas stand for the whole collective and do not add it.
//! A kernel's `collective_scale` multiplies its measured collectives' `comm` and its
//! `barrier`: what its code pays for them against the benchmark that measured them (JPDC's GE
//! paid less than section 4.5's `T_broadcast` and `T_barrier`).
//!
//! With `[[machine.p2p]]` segments, the point-to-point part of `comm` is `max_j (max(out_j,
//! in_j) + r_j receive b_j)` instead, a side of a node being its transfers' largest start-up
//! and the sum of their bytes' costs, `out_j = max_k latency_jk + sum_k b_jk s_per_byte_jk`
//! (transfers in flight together overlap their start-ups and queue their bytes on the link, as
//! an MPI fan-out measures: [`p2p_parts`]): `P_jk = max(P_j, P_k)` is the slower of the two
//! nodes' segments (a node's own, `node = "name"`, else the network's), `P(b) = latency_i + b
//! s_per_byte_i` on the segment `i` holding `b`, and `b_jk` the bytes node `j` sends node `k`
//! in the superstep, one transfer per pair and superstep (hbsp's MPI backend packs a
//! superstep's messages to one node into one buffer); with `[[machine.duplex]]` a node that
//! sends and receives pays `penalty(min(o_j, i_j)) x` its smaller side's bytes' cost on top
//! of the larger side (a link that does not carry both directions at full rate at once:
//! [`crate::duplex`]); `latency_s` and `link_bytes_per_s` then apply only
//! to topology-derived collectives. The end of a run adds `run_overhead_s` and
//! `process_overhead_s` times its processes ([`crate::Machine::processes`]).
//! With `[[machine.compute_stall]]`, a superstep charged `L(p)` also pays the stall measured
//! after its longest compute, `max_j c_j` ([`crate::compute_stall`]).
//!
//! On a `hypercube` or `torus` a collective without a measured cost is charged as a library
//! on that machine runs it, in `s` neighbour steps of `latency + bytes / link` each: `s =
//! ceil(log2 p)` on a hypercube, the diameter `floor(rows/2) + floor(cols/2)` on a torus as
//! square as `p` allows (the MasPar MP-1's 32 x 32 for 1K processors, 32 x 64 for 2K). A
//! collective whose messages carry the same data (a one-phase broadcast, a reduce, an
//! allreduce) moves `S = h / m` bytes (the busiest node's bytes over its messages) at every
//! step: `s (latency + S / link)`; one whose messages carry different data (scatter, gather,
//! allgather, alltoall, the second phase of a broadcast) moves the busiest node's `h` bytes
//! once in all: `s latency + h / link`. The first phase of a two-phase broadcast looks like
//! a one-phase broadcast of a piece, so it is charged as one; the error is a factor of at
//! most 2 on that phase's bytes, none on its latencies.

use serde::{Deserialize, Serialize};

use crate::compute_stall::ComputeStallPoint;
use crate::duplex::DuplexPoint;

/// The machine model of a platform (`[machine]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineModel {
    /// Bytes per second one port moves in each direction.
    pub link_bytes_per_s: f64,
    /// Seconds per message (software and wire start-up).
    #[serde(default)]
    pub latency_s: f64,
    /// Seconds per byte a node pays, times its own `r_j`, to take in the bytes it receives,
    /// after they arrive: a message-passing library's receive path (Williams & Parsons 2001,
    /// Figure 2: `pvm_recv` and the move into `recvbuf`, on the receiver's CPU). 0: off, a
    /// transfer costs the same whichever end sends.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub receive_s_per_byte: f64,
    /// Bytes per second the switch moves in total; 0 means it never limits (no contention).
    #[serde(default)]
    pub backplane_bytes_per_s: f64,
    /// Fixed seconds added to every superstep that ends in a barrier.
    #[serde(default)]
    pub superstep_s: f64,
    /// Standard deviation of `ln` of each node's speed factor (0: no jitter).
    #[serde(default)]
    pub jitter: f64,
    /// Seed of the jitter.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// How the nodes are wired.
    #[serde(default)]
    pub topology: Topology,
    /// What ends a superstep.
    #[serde(default)]
    pub barrier: Barrier,
    /// Collectives with measured costs.
    #[serde(default, rename = "collective", skip_serializing_if = "Vec::is_empty")]
    pub collectives: Vec<CollectiveCost>,
    /// Achieved compute rates, per kernel and node kind.
    #[serde(default, rename = "compute", skip_serializing_if = "Vec::is_empty")]
    pub compute: Vec<ComputeRate>,
    /// Point-to-point cost piecewise-linear in message size (`[[machine.p2p]]`, measured by
    /// `hetscale probe --p2p`, as SMPI calibrates its network from ping-pong): when present,
    /// every transfer from one node to another in a superstep is charged by its segment
    /// instead of `latency_s` and `link_bytes_per_s`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub p2p: Vec<P2pSegment>,
    /// How a node's two directions share its link, by size (`[[machine.duplex]]`, measured
    /// by `hetscale probe --p2p`; see [`crate::duplex`]): none, full duplex.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub duplex: Vec<DuplexPoint>,
    /// What a superstep costs beyond its compute after its nodes computed, by compute length
    /// (`[[machine.compute_stall]]`, measured by `hetscale probe --p2p`; see
    /// [`crate::compute_stall`]): none, nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compute_stall: Vec<ComputeStallPoint>,
    /// Where the fields of this table come from (a paper's table, a probe, a fit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// One segment of the piecewise-linear point-to-point cost: a transfer of `b` bytes, `b` at
/// most `max_bytes` and above the previous segment's, costs `latency_s + b s_per_byte`. The
/// last segment also charges transfers beyond its `max_bytes` (which records the largest size
/// the probe measured: a later probe replaces these segments only if it reaches as far).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2pSegment {
    /// The node whose transfers these segments cost (a transfer between two nodes costs the
    /// slower of their segments); none: every node without segments of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The number of nodes of the machine the ping-pong ran on (`probe --p2p --nodes p`);
    /// none: every size. A transfer's start-up grows with the nodes taking part: more
    /// processes share the cores and wait on each other's quota (`hetscale probe --p2p` on 2
    /// nodes against 4; the testbed's in docs/hbsp.md, "The ping-pong probe"), so a run on `p`
    /// nodes is charged the segments measured on the most nodes at most `p` (else the fewest
    /// measured), as `L(p)` is charged by its size. Either every segment names its `p` or none
    /// does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<usize>,
    /// Largest transfer, bytes, this segment covers (the last: the largest size measured).
    pub max_bytes: u64,
    /// Start-up of one transfer in this size range, s.
    pub latency_s: f64,
    /// Seconds per byte in this size range (1 / bandwidth).
    pub s_per_byte: f64,
    /// 95% confidence interval of `latency_s`, when fitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_s_ci95: Option<[f64; 2]>,
    /// 95% confidence interval of `s_per_byte`, when fitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s_per_byte_ci95: Option<[f64; 2]>,
    /// Where the segment comes from, e.g. `"probe: ping-pong h1-h2, mpi, 2026-11-27"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl P2pSegment {
    /// A segment with no intervals and no source.
    pub fn new(max_bytes: u64, latency_s: f64, s_per_byte: f64) -> Self {
        Self {
            node: None,
            p: None,
            max_bytes,
            latency_s,
            s_per_byte,
            latency_s_ci95: None,
            s_per_byte_ci95: None,
            source: None,
        }
    }

    /// Seconds one transfer of `bytes` costs on this segment.
    pub fn time(&self, bytes: f64) -> f64 {
        self.latency_s + bytes * self.s_per_byte
    }
}

/// Seconds one transfer of `bytes` costs on the piecewise-linear `segments` (sorted by
/// `max_bytes`): the first segment whose `max_bytes` holds it, else the last. 0 bytes cost
/// nothing (no transfer).
pub fn p2p_time(segments: &[P2pSegment], bytes: u64) -> f64 {
    if bytes == 0 {
        return 0.0;
    }
    segments
        .iter()
        .find(|s| bytes <= s.max_bytes)
        .or(segments.last())
        .map_or(0.0, |s| s.time(bytes as f64))
}

/// One transfer of `bytes` on `segments`, as its segment's start-up and its bytes' cost
/// (`latency_s`, `bytes * s_per_byte`): their sum is [`p2p_time`]. A node's transfers in
/// one superstep overlap their start-ups and queue their bytes on its link (`sim` charges
/// the largest start-up once and every transfer's bytes).
pub fn p2p_parts(segments: &[P2pSegment], bytes: u64) -> (f64, f64) {
    if bytes == 0 {
        return (0.0, 0.0);
    }
    segments
        .iter()
        .find(|s| bytes <= s.max_bytes)
        .or(segments.last())
        .map_or((0.0, 0.0), |s| (s.latency_s, bytes as f64 * s.s_per_byte))
}

/// The segments that cost `node`'s transfers in a run on `p` nodes: those measured on the
/// machine size [`p2p_level`] picks, the node's own, else those of no node.
pub fn p2p_segments(all: &[P2pSegment], node: Option<&str>, p: usize) -> Vec<P2pSegment> {
    let level = p2p_level(all, p);
    let at_level = all.iter().filter(|s| s.p == level);
    let own: Vec<P2pSegment> = at_level
        .clone()
        .filter(|s| node.is_some() && s.node.as_deref() == node)
        .cloned()
        .collect();
    if !own.is_empty() {
        return own;
    }
    at_level.filter(|s| s.node.is_none()).cloned().collect()
}

/// The machine size whose segments cost a run on `p` nodes: the most nodes measured at or
/// below `p`, else the fewest measured; `None` when no segment names its size.
pub fn p2p_level(all: &[P2pSegment], p: usize) -> Option<usize> {
    let sizes = all.iter().filter_map(|s| s.p);
    sizes
        .clone()
        .filter(|&q| q <= p)
        .max()
        .or_else(|| sizes.min())
}

/// Checks `[[machine.p2p]]`: segments of no node present when any are, each node's sizes
/// increasing, costs finite, per byte non-negative, and every segment's cost non-negative
/// from its first size (a segment after the first may start with a negative `latency_s`:
/// a shaped link's burst, see `hetscale_probe::p2p_probe`).
fn validate_p2p(all: &[P2pSegment]) -> Result<(), String> {
    if all.iter().any(|s| s.p.is_some()) && all.iter().any(|s| s.p.is_none()) {
        return Err(
            "machine.p2p mixes segments measured on a number of nodes (p = ...) with segments of none: give every one its p, or none".into(),
        );
    }
    if all.iter().any(|s| s.p == Some(0)) {
        return Err("machine.p2p: a segment's p is the nodes it was measured on, >= 1".into());
    }
    let mut levels: Vec<Option<usize>> = all.iter().map(|s| s.p).collect();
    levels.sort_unstable();
    levels.dedup();
    for level in levels {
        let at_level: Vec<&P2pSegment> = all.iter().filter(|s| s.p == level).collect();
        let on = level.map_or(String::new(), |p| format!(" measured on {p} nodes"));
        if at_level.iter().all(|s| s.node.is_some()) {
            return Err(format!(
                "machine.p2p has segments{on} only for named nodes: add the network's, with no node"
            ));
        }
        let mut keys: Vec<Option<&str>> = at_level.iter().map(|s| s.node.as_deref()).collect();
        keys.sort_unstable();
        keys.dedup();
        for key in keys {
            let segments: Vec<&P2pSegment> = at_level
                .iter()
                .copied()
                .filter(|s| s.node.as_deref() == key)
                .collect();
            validate_p2p_group(&segments, key)?;
        }
    }
    Ok(())
}

fn validate_p2p_group(segments: &[&P2pSegment], node: Option<&str>) -> Result<(), String> {
    let of = node.map_or(String::new(), |n| format!(" of node {n:?}"));
    for (i, s) in segments.iter().enumerate() {
        let at = format!(
            "machine.p2p segment {}{of} (max_bytes = {})",
            i + 1,
            s.max_bytes
        );
        non_negative(&at, &[("s_per_byte", s.s_per_byte)])?;
        let start = if i == 0 {
            0.0
        } else {
            segments[i - 1].max_bytes as f64
        };
        // A relative slack for the rounding of a line fitted through (start, 0).
        if !s.latency_s.is_finite() {
            return Err(format!(
                "{at}: latency_s = {} is not a number of seconds: give a finite one",
                s.latency_s
            ));
        }
        let slack = 1e-9 * (s.latency_s.abs() + start * s.s_per_byte);
        if s.time(start) < -slack {
            return Err(format!(
                "{at}: latency_s = {} gives a negative cost at the segment's first size ({start} \
                 bytes): raise it to at least {}",
                s.latency_s,
                (-start * s.s_per_byte).max(0.0)
            ));
        }
        if s.max_bytes == 0 {
            return Err(format!("{at}: max_bytes must be > 0"));
        }
        if i > 0 && segments[i - 1].max_bytes >= s.max_bytes {
            return Err(format!(
                "{at}: segments must be listed by increasing max_bytes (the one before ends at {})",
                segments[i - 1].max_bytes
            ));
        }
    }
    Ok(())
}

fn default_seed() -> u64 {
    1
}

/// How the nodes are wired; on a hypercube or a torus it derives the cost of collectives that
/// have no measured cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Topology {
    /// One switch, every pair one hop (Sunwulf, the UCF cluster): a collective costs what its
    /// messages cost.
    #[default]
    Switched,
    /// A hypercube (the nCUBE 2): collectives take `ceil(log2 p)` neighbour steps.
    Hypercube,
    /// A 2-D toroidal mesh as square as `p` allows (the MasPar MP-1): collectives take its
    /// diameter in neighbour steps.
    Torus,
}

impl Topology {
    /// Neighbour steps a collective takes on `p` nodes; `None` on a switch.
    pub fn collective_steps(self, p: usize) -> Option<f64> {
        match self {
            Self::Switched => None,
            Self::Hypercube => Some((p.max(1) as f64).log2().ceil()),
            Self::Torus => {
                let (rows, cols) = torus_shape(p);
                Some((rows / 2 + cols / 2) as f64)
            }
        }
    }
}

/// `rows x cols = p` with `rows <= cols` as close as can be: 32 x 32 for 1024, 32 x 64 for
/// 2048 (the MasPar shapes of Sun & Rover, section IV-D).
pub fn torus_shape(p: usize) -> (usize, usize) {
    let p = p.max(1);
    let rows = (1..=p.isqrt()).rev().find(|r| p % r == 0).unwrap_or(1);
    (rows, p / rows)
}

/// What a superstep ends with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Barrier {
    /// The platform's HBSP^1 barrier `L(p)`.
    #[default]
    Hbsp,
    /// Nothing: a message-passing code's nodes wait only for their own messages.
    None,
}

/// Whether every message of this superstep of collective `name` carries the same data.
fn carries_same_data(name: &str, phase: u8) -> bool {
    match name {
        "broadcast" => phase == 0,
        "reduce" | "allreduce" => true,
        _ => false,
    }
}

/// The measured cost of one collective, in seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveCost {
    /// Name of the collective (`broadcast`, `scatter`, `gather`, `allgather`, `reduce`,
    /// `allreduce`, `alltoall`); its supersteps are charged by this formula.
    pub name: String,
    /// Constant term, s.
    #[serde(default)]
    pub base_s: f64,
    /// Term linear in `p`, s per node.
    #[serde(default)]
    pub per_node_s: f64,
    /// Term in `log2 p`, s.
    #[serde(default)]
    pub per_log2_node_s: f64,
    /// Seconds per byte of the payload `S`.
    #[serde(default)]
    pub per_byte_s: f64,
    /// Seconds per byte and tree level (`S ceil(log2 p)`: a binomial tree).
    #[serde(default)]
    pub per_log2_node_byte_s: f64,
}

/// The achieved compute rate of one kernel on one node kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComputeRate {
    /// Kernel name, or `*` for every kernel.
    #[serde(default = "any")]
    pub kernel: String,
    /// Node kind, or `*` for every kind.
    #[serde(default = "any")]
    pub kind: String,
    /// `f = r_inf / C_j`: the asymptotic rate as a fraction of the marked speed.
    #[serde(default = "unit")]
    pub rate_fraction: f64,
    /// `w_1/2`: the block of work, in operations, that runs at half the asymptotic rate.
    #[serde(default)]
    pub half_work: f64,
    /// Seconds every run of this kernel pays once (start-up and wind-down).
    #[serde(default)]
    pub run_overhead_s: f64,
    /// Seconds a run of this kernel pays once per process, one after another (a root that
    /// starts, or first reaches, each process in turn: MPICH's ch_p4 connects on first use).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub process_overhead_s: f64,
    /// Factor on the measured collectives' costs and the barrier `L(p)` this kernel pays.
    #[serde(default = "unit", skip_serializing_if = "is_unit")]
    pub collective_scale: f64,
    /// The fit's relative errors `(model - measured) / measured` on configurations it was not
    /// given (`hetscale calibrate` predicts each configuration from a fit on those of fewer
    /// processes): what a prediction of a larger configuration never run can expect. `sim`
    /// runs of this kernel give a 95% prediction interval from them
    /// (`hetscale_model::fit::interval_from_errors`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out_errors: Vec<f64>,
    /// Where the entry comes from, e.g. `"fit: hetscale calibrate, mm runs on C_1 (N = 384,
    /// 768), C_2 (...)"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Whether `kernel` names a program hetscale does not run, known by its declared model
    /// (`hetscale calibrate --runs ... --work ...` fits its rate): no kernel registry knows
    /// that name, so it is not checked against one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub declared: bool,
    /// The declared model a `declared` rate was fitted with, as `work = 2*n^3; communication
    /// = 100*neighbours(8*n); partition = speed`: the rate is the compute left once that model
    /// is taken out, so a prediction that names the program with another model is refused
    /// rather than given this rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_model: Option<String>,
}

fn any() -> String {
    "*".to_owned()
}

fn unit() -> f64 {
    1.0
}

fn is_unit(x: &f64) -> bool {
    *x == 1.0
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl Default for ComputeRate {
    fn default() -> Self {
        Self {
            kernel: any(),
            kind: any(),
            rate_fraction: 1.0,
            half_work: 0.0,
            run_overhead_s: 0.0,
            process_overhead_s: 0.0,
            collective_scale: 1.0,
            held_out_errors: Vec::new(),
            source: None,
            declared: false,
            declared_model: None,
        }
    }
}

impl CollectiveCost {
    /// Cost of one superstep of this collective on `p` nodes moving a payload of `bytes`.
    pub fn at(&self, p: usize, bytes: f64) -> f64 {
        let levels = (p.max(1) as f64).log2();
        self.base_s
            + self.per_node_s * p as f64
            + self.per_log2_node_s * levels
            + bytes * (self.per_byte_s + self.per_log2_node_byte_s * levels.ceil())
    }

    /// Checks the terms; `table` names where it is written (`machine.collective`).
    pub(crate) fn validate(&self, table: &str) -> Result<(), String> {
        let at = format!("{table} {:?}", self.name);
        if self.name.trim().is_empty() {
            return Err(format!(
                "{table}: name is empty: write name = \"broadcast\""
            ));
        }
        if !crate::collective_names::NAMES.contains(&self.name.as_str()) {
            return Err(format!(
                "{at} names no collective: use one of {}",
                crate::collective_names::NAMES.join(", ")
            ));
        }
        non_negative(
            &at,
            &[
                ("base_s", self.base_s),
                ("per_node_s", self.per_node_s),
                ("per_log2_node_s", self.per_log2_node_s),
                ("per_byte_s", self.per_byte_s),
                ("per_log2_node_byte_s", self.per_log2_node_byte_s),
            ],
        )
    }
}

/// Checks every entry of a `[[network.collective]]` or `[[machine.collective]]` list (named
/// `table`): a collective measured twice would leave one measurement silently unused.
pub(crate) fn validate_collectives(
    table: &str,
    collectives: &[CollectiveCost],
) -> Result<(), String> {
    for (i, c) in collectives.iter().enumerate() {
        c.validate(table)?;
        if collectives[..i].iter().any(|d| d.name == c.name) {
            return Err(format!("{table} {:?} is listed twice: keep one", c.name));
        }
    }
    Ok(())
}

impl ComputeRate {
    /// Seconds a node of marked speed `ops_per_s` needs for a block of `ops` operations.
    pub fn block_time(&self, ops: f64, ops_per_s: f64) -> f64 {
        if ops == 0.0 {
            return 0.0;
        }
        (ops + self.half_work) / (self.rate_fraction * ops_per_s)
    }

    fn matches(&self, kernel: Option<&str>, kind: Option<&str>) -> bool {
        let fits = |pattern: &str, value: Option<&str>| pattern == "*" || Some(pattern) == value;
        fits(&self.kernel, kernel) && fits(&self.kind, kind)
    }

    fn validate(&self) -> Result<(), String> {
        let at = format!(
            "machine.compute (kernel \"{}\", kind \"{}\")",
            self.kernel, self.kind
        );
        if !(self.rate_fraction.is_finite() && self.rate_fraction > 0.0) {
            return Err(format!(
                "{at}: rate_fraction must be > 0 (1 = the marked speed), got {}",
                self.rate_fraction
            ));
        }
        non_negative(
            &at,
            &[
                ("half_work", self.half_work),
                ("run_overhead_s", self.run_overhead_s),
                ("process_overhead_s", self.process_overhead_s),
                ("collective_scale", self.collective_scale),
            ],
        )?;
        match self
            .held_out_errors
            .iter()
            .find(|e| !(e.is_finite() && **e > -1.0))
        {
            Some(e) => Err(format!(
                "{at}: held_out_errors are (model - measured) / measured, finite and > -1, got {e}"
            )),
            None => Ok(()),
        }
    }
}

impl MachineModel {
    /// A model with this link and nothing else: no latency, contention, start-up or jitter,
    /// every node at its marked speed.
    pub fn with_link(link_bytes_per_s: f64) -> Self {
        Self {
            link_bytes_per_s,
            latency_s: 0.0,
            receive_s_per_byte: 0.0,
            backplane_bytes_per_s: 0.0,
            superstep_s: 0.0,
            jitter: 0.0,
            seed: default_seed(),
            topology: Topology::Switched,
            barrier: Barrier::Hbsp,
            collectives: Vec::new(),
            compute: Vec::new(),
            p2p: Vec::new(),
            duplex: Vec::new(),
            compute_stall: Vec::new(),
            source: None,
        }
    }

    /// The rate of `kernel` on nodes of `kind`: the most specific entry (kernel and kind
    /// named beat a `*`; the kernel counts more than the kind), else the marked speed.
    pub fn rate(&self, kernel: Option<&str>, kind: Option<&str>) -> ComputeRate {
        self.compute
            .iter()
            .filter(|c| c.matches(kernel, kind))
            .max_by_key(|c| 2 * usize::from(c.kernel != "*") + usize::from(c.kind != "*"))
            .cloned()
            .unwrap_or_default()
    }

    /// The cost of superstep `phase` of collective `name` derived from the topology (see the
    /// module docs), for a busiest node moving `h_bytes` in `messages` messages; `None` on a
    /// switch.
    pub fn derived_collective(
        &self,
        name: &str,
        phase: u8,
        p: usize,
        h_bytes: f64,
        messages: u64,
    ) -> Option<f64> {
        let steps = self.topology.collective_steps(p)?;
        Some(if carries_same_data(name, phase) {
            let piece = h_bytes / messages.max(1) as f64;
            steps * (self.latency_s + piece / self.link_bytes_per_s)
        } else {
            steps * self.latency_s + h_bytes / self.link_bytes_per_s
        })
    }

    /// Seconds a node of slowness `r` spends on a superstep's messages: its port moving the
    /// larger of what it sent and received (`h_bytes`), taking in the `bytes_in` it received
    /// at its own speed, and a latency per message.
    pub fn port_time(&self, r: f64, h_bytes: u64, bytes_in: u64, messages: u64) -> f64 {
        r * (h_bytes as f64 / self.link_bytes_per_s + self.receive_s_per_byte * bytes_in as f64)
            + self.latency_s * messages as f64
    }

    /// The measured cost of the collective `name`, if the model has one.
    pub fn collective(&self, name: &str) -> Option<&CollectiveCost> {
        self.collectives.iter().find(|c| c.name == name)
    }

    /// Node `pid`'s seeded speed factor: 1 without jitter, else log-normal with median 1.
    pub fn jitter_factor(&self, pid: usize) -> f64 {
        if self.jitter == 0.0 {
            return 1.0;
        }
        (self.jitter * standard_normal(self.seed, pid as u64)).exp()
    }

    /// Checks every field; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.link_bytes_per_s.is_finite() && self.link_bytes_per_s > 0.0) {
            return Err(format!(
                "machine.link_bytes_per_s must be > 0 (100 Mbit/s Ethernet is 12.5e6), got {}",
                self.link_bytes_per_s
            ));
        }
        non_negative(
            "machine",
            &[
                ("latency_s", self.latency_s),
                ("receive_s_per_byte", self.receive_s_per_byte),
                ("backplane_bytes_per_s", self.backplane_bytes_per_s),
                ("superstep_s", self.superstep_s),
                ("jitter", self.jitter),
            ],
        )?;
        if self.jitter > 1.0 {
            return Err(format!(
                "machine.jitter = {} would vary speeds by more than e: give the sd of ln(speed), e.g. 0.05",
                self.jitter
            ));
        }
        validate_collectives("machine.collective", &self.collectives)?;
        validate_p2p(&self.p2p)?;
        crate::duplex::validate_duplex(&self.duplex)?;
        crate::compute_stall::validate_compute_stall(&self.compute_stall)?;
        for (i, c) in self.compute.iter().enumerate() {
            c.validate()?;
            if self.compute[..i]
                .iter()
                .any(|d| d.kernel == c.kernel && d.kind == c.kind)
            {
                return Err(format!(
                    "machine.compute for kernel \"{}\" and kind \"{}\" is listed twice: keep one",
                    c.kernel, c.kind
                ));
            }
        }
        Ok(())
    }

    /// An error unless every `[[machine.compute]]` kind is `*` or one of `kinds`, the
    /// platform's node kinds: an entry for no kind would be silently unused.
    pub fn check_kinds(&self, kinds: &[&str]) -> Result<(), String> {
        let Some(entry) = self
            .compute
            .iter()
            .find(|c| c.kind != "*" && !kinds.contains(&c.kind.as_str()))
        else {
            return Ok(());
        };
        let valid = if kinds.is_empty() {
            "\"*\" (the platform's nodes have no kind)".to_owned()
        } else {
            format!("one of {} or \"*\"", kinds.join(", "))
        };
        Err(format!(
            "machine.compute kind {:?} is no node's kind: use {valid}",
            entry.kind
        ))
    }

    /// An error unless every `[[machine.compute]]` kernel is `*`, one of `kernels` (the
    /// kernels a registry knows) or a declared program's: an entry for no kernel would be
    /// silently unused.
    pub fn check_kernels(&self, kernels: &[String]) -> Result<(), String> {
        let Some(entry) = self
            .compute
            .iter()
            .find(|c| c.kernel != "*" && !c.declared && !kernels.contains(&c.kernel))
        else {
            return Ok(());
        };
        Err(format!(
            "machine.compute kernel {:?} is no kernel: use one of {} or \"*\"",
            entry.kernel,
            kernels.join(", ")
        ))
    }
}

fn non_negative(at: &str, fields: &[(&str, f64)]) -> Result<(), String> {
    match fields.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
        Some((key, v)) => Err(format!("{at}: {key} must be >= 0, got {v}")),
        None => Ok(()),
    }
}

/// A standard normal deviate that depends only on `(seed, index)` (SplitMix64, Box-Muller),
/// so a node's jitter is the same in every run and on every host.
fn standard_normal(seed: u64, index: u64) -> f64 {
    let mut state = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let u1 = next().max(f64::MIN_POSITIVE);
    let u2 = next();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> MachineModel {
        MachineModel::with_link(12.5e6)
    }

    #[test]
    fn the_most_specific_rate_wins() {
        let mut m = model();
        let entry = |kernel: &str, kind: &str, f: f64| ComputeRate {
            kernel: kernel.into(),
            kind: kind.into(),
            rate_fraction: f,
            ..ComputeRate::default()
        };
        m.compute = vec![
            entry("*", "*", 0.9),
            entry("mm", "*", 0.5),
            entry("*", "sunblade", 0.7),
            entry("mm", "sunblade", 0.3),
        ];
        assert_eq!(m.rate(Some("mm"), Some("sunblade")).rate_fraction, 0.3);
        assert_eq!(m.rate(Some("mm"), Some("server")).rate_fraction, 0.5);
        assert_eq!(m.rate(Some("ge"), Some("sunblade")).rate_fraction, 0.7);
        assert_eq!(m.rate(None, None).rate_fraction, 0.9);
        assert_eq!(model().rate(Some("ge"), None).rate_fraction, 1.0);
    }

    #[test]
    fn hockney_blocks_run_at_half_rate_at_the_half_work() {
        let rate = ComputeRate {
            rate_fraction: 0.5,
            half_work: 1e6,
            ..ComputeRate::default()
        };
        // 1e6 ops at f C = 0.5e6 op/s would take 2 s; at half that rate, 4 s.
        assert_eq!(rate.block_time(1e6, 1e6), 4.0);
        assert_eq!(rate.block_time(0.0, 1e6), 0.0);
    }

    #[test]
    fn a_measured_collective_has_its_tree_and_linear_terms() {
        let c = CollectiveCost {
            name: "broadcast".into(),
            base_s: 0.12e-3,
            per_node_s: 0.23e-3,
            per_log2_node_s: 0.0,
            per_byte_s: 0.0,
            per_log2_node_byte_s: 1e-7,
        };
        // JPDC 4.5 at p = 32, plus 1000 B over ceil(log2 32) = 5 levels.
        let expected = 0.12e-3 + 32.0 * 0.23e-3 + 1000.0 * 5.0 * 1e-7;
        assert!((c.at(32, 1000.0) - expected).abs() < 1e-15);
        // ceil(log2 3) = 2 levels.
        assert!((c.at(3, 10.0) - (0.12e-3 + 3.0 * 0.23e-3 + 2e-6)).abs() < 1e-15);
    }

    #[test]
    fn torus_shapes_are_the_maspar_ones() {
        assert_eq!(torus_shape(1024), (32, 32));
        assert_eq!(torus_shape(2048), (32, 64));
        assert_eq!(torus_shape(8192), (64, 128));
        assert_eq!(torus_shape(12), (3, 4));
        assert_eq!(torus_shape(7), (1, 7));
        assert_eq!(Topology::Torus.collective_steps(2048), Some(48.0));
        assert_eq!(Topology::Hypercube.collective_steps(100), Some(7.0));
        assert_eq!(Topology::Hypercube.collective_steps(1), Some(0.0));
        assert_eq!(Topology::Switched.collective_steps(64), None);
    }

    #[test]
    fn topology_collectives_move_same_data_per_step_and_different_data_once() {
        let mut m = MachineModel::with_link(2e6);
        m.latency_s = 130e-6;
        assert_eq!(
            m.derived_collective("broadcast", 0, 64, 63.0 * 8.0, 63),
            None
        );
        m.topology = Topology::Hypercube;
        // A one-phase broadcast of 8 B: 6 steps of alpha + 8 beta (Sun & Rover's eq. 10).
        let tree = m
            .derived_collective("broadcast", 0, 64, 63.0 * 8.0, 63)
            .unwrap();
        assert!((tree - 6.0 * (130e-6 + 8.0 * 0.5e-6)).abs() < 1e-15);
        // An allgather of 16 B a node: 6 latencies and the 63 x 16 B each node receives.
        let all = m
            .derived_collective("allgather", 0, 64, 63.0 * 16.0, 63)
            .unwrap();
        assert!((all - (6.0 * 130e-6 + 63.0 * 16.0 * 0.5e-6)).abs() < 1e-15);
    }

    #[test]
    fn jitter_is_seeded_and_has_median_one() {
        let mut m = model();
        assert_eq!(m.jitter_factor(3), 1.0);
        m.jitter = 0.1;
        assert_eq!(m.jitter_factor(3), m.jitter_factor(3));
        let mut logs: Vec<f64> = (0..4001).map(|j| m.jitter_factor(j).ln()).collect();
        logs.sort_by(f64::total_cmp);
        assert!(logs[2000].abs() < 0.01, "median of ln = {}", logs[2000]);
        let sd = (logs.iter().map(|x| x * x).sum::<f64>() / logs.len() as f64).sqrt();
        assert!((sd - 0.1).abs() < 0.01, "sd = {sd}");
        m.seed = 2;
        assert_ne!(m.jitter_factor(3), model().jitter_factor(3));
    }

    #[test]
    fn bad_fields_are_named() {
        let mut m = model();
        m.link_bytes_per_s = 0.0;
        assert!(m.validate().unwrap_err().contains("link_bytes_per_s"));
        let mut m = model();
        m.latency_s = f64::NAN;
        assert!(m.validate().unwrap_err().contains("latency_s"));
        let mut m = model();
        m.compute = vec![ComputeRate {
            rate_fraction: -1.0,
            ..ComputeRate::default()
        }];
        assert!(m.validate().unwrap_err().contains("rate_fraction"));
        let mut m = model();
        m.compute = vec![ComputeRate::default(), ComputeRate::default()];
        assert!(m.validate().unwrap_err().contains("listed twice"));
    }
}
