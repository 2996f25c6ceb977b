//! Measuring the point-to-point cost piecewise-linear in message size, as SMPI calibrates its
//! network from ping-pong (`hetscale probe --p2p`).
//!
//! Node 0 and each other node `j` in turn play ping-pong: for every size `s` (log-spaced, by
//! default 8 B to 16 MiB, beyond any shaper's burst bucket) a superstep in which node 0 sends
//! `s` bytes to `j`, then one in which `j` sends them back, each timed as node 0 sees it
//! together with the empty superstep that follows it, `samples` times (rounds over every size
//! in a shuffled order), and as many pairs of empty supersteps. A transfer's one-way time is
//! its unstalled time, the fastest of its samples, less the empty supersteps' (the barriers,
//! which `sim` charges apart as `L(p)`), and the segments are fitted to those; what the
//! samples take beyond it is the stall (below).
//!
//! The trailing superstep is what makes the time the transfer's delivery. A sender's part of
//! the exchange ends when its bytes are in its kernel's socket buffer, which holds hundreds of
//! KiB to MiB; the receiver's ends when they have arrived, and the next barrier waits for it.
//! Timed to its own barrier alone, a transfer node 0 sent looks done once its bytes are
//! buffered, well before the link has moved them, while a program's supersteps last until
//! every node has its data: they take the link's time, as a raw-MPI fan-out shows
//! (`mpirun -np P mpi_check fanout BYTES`, `testbed/mpi_check.c`). The testbed's figures of
//! both are in docs/hbsp.md, "The ping-pong probe".
//!
//! Each pair's times give node `j`'s segments; the fastest pair's at each size give the
//! network's (and node 0's): a transfer costs the slower of its two ends' segments, so a
//! slow node (a host under a CPU quota answers late) pays its own cost and does not lend it
//! to the others.
//!
//! Those times are fitted by 1 to [`P2pProbeOptions::max_segments`] segments `latency_k + s
//! s_per_byte_k`, each over a contiguous range of at least [`MIN_POINTS`] sizes, by weighted
//! least squares on the relative error (times span orders of magnitude); every split of the
//! sizes into segments is tried, and the number of segments is the one with the least BIC,
//! `n ln(RSS / n) + (3k - 1) ln n` (two terms and a breakpoint per segment, less one), so a
//! segment is added only when the data need it. A segment ends at its largest measured size;
//! the last one also charges sizes beyond it. Intervals are 95% Student-t intervals of each
//! segment's two terms from its residuals.
//!
//! A program's time is a sum of supersteps, so `sim` must charge each superstep's expected
//! cost, and on a host under a CPU quota that is not its typical one: most supersteps are
//! quick and some wait out the rest of a quota period, and on hosts of a small share of a core
//! most of them do, so that a median of a few samples is a stall at some sizes and not at
//! their neighbours, and segments fitted to it are noise (the testbed's superstep times under
//! quotas are in docs/hbsp.md, "The ping-pong probe"). So the cost is split in two, each
//! measured where it is well determined: the **unstalled** transfer per size, the fastest of
//! its samples (the empty supersteps': the mean of the fastest of each run of as many), and
//! the **stall**, the mean excess of every message superstep over its size's unstalled time,
//! pooled over every pair's start-up dominated sizes (where a segment's start-up is at least
//! its bytes' cost; at larger sizes a transfer spans periods and holds its stalls already),
//! less the empty supersteps' own mean excess (`L(p)`, a mean over batches, holds theirs).
//! Their sum is the mean superstep at those sizes whatever share of the samples stalled. The
//! stall is written beside `L(p)` at the probed `p` as `message_stall_s`, which `sim` and the
//! predicted approach charge every superstep that moves a message: a superstep's barrier waits
//! for every host, so the stall grows with the hosts and is kept per `p`, not per pair or in
//! the segments. Per size, a mean over a few samples would be too noisy to fit; pooled over a
//! hundred and more, the stall is not. On `sim` it is 0.
//!
//! A ping-pong superstep waits for two hosts; one in which every host sends or receives waits
//! for all of them, and stalls whenever any of them does, so its mean stall is larger. So the
//! probe also times supersteps in which every node takes part at the smallest size, eight
//! times as many rounds as each pair's further samples (a mean of all the nodes' rare, long
//! stalls needs hundreds): a root sends to every other node, then every other node sends to
//! the root, alternating, the root taking every node in turn (a slow host sends its share of
//! them: which node is the root is the program's, not the machine's). Their stall is their
//! mean less the empty supersteps' mean and less what the segments charge them (the slowest
//! node's segments at that size: node 0's transfers run together, and the superstep ends with
//! the last); the same form as the pairs' stall (their mean less the empty mean, less the
//! one-way time). It is written beside `L(p)` as `message_stall_all_s`, and a superstep in
//! which `a` of `p` nodes take part is charged between the two stalls, linearly in `a`
//! ([`hetscale_model::hbsp::MessageStall::at`]).
//!
//! Beside each of its one-way samples, the pair of node 0 and node 1 also swaps the size, both
//! sending at once: how much longer that takes than one way on average (a long stream's swap
//! is slowed most times or not at all, so not the fastest), over one way's bytes' cost, is
//! how the link shares its two directions, written as `[[machine.duplex]]` at `p`
//! ([`hetscale_machine::duplex`]; the exchange module).
//!
//! Beside each round of the supersteps in which every node takes part, the same supersteps
//! are timed after every node computed `d` first, for each of a few lengths `d`: what they
//! take beyond `d` and beyond those without compute is the stall a compute phase adds,
//! written as `[[machine.compute_stall]]` at `p` ([`hetscale_machine::compute_stall`]; the
//! after_compute module).
//!
//! On `sim` with `[[machine.p2p]]` segments whose breakpoints are among the probed sizes, the
//! probe recovers them exactly, and the `[[machine.duplex]]` penalties and the compute stall
//! too.

use serde::Serialize;

use crate::probe::step;
use hbsp::Ctx;
use hbsp::backend::Backend;
use hbsp::{HbspError, Result};
use hetscale_machine::machine_model::{MachineModel, P2pSegment, p2p_time};
use hetscale_machine::platform::{Machine, Platform};

mod after_compute;
mod exchange;
mod segments;
pub use segments::{MIN_POINTS, fit_segments};

/// Rounds of supersteps in which every node takes part per [`P2pProbeOptions::stall_samples`].
const ALL_NODES_ROUNDS_PER_STALL_SAMPLE: usize = 8;

/// What the ping-pong measures.
#[derive(Debug, Clone, PartialEq)]
pub struct P2pProbeOptions {
    /// Message sizes, bytes (at least [`MIN_POINTS`] distinct sizes above 0).
    pub sizes: Vec<usize>,
    /// Supersteps timed per size and direction (the fastest is the unstalled transfer).
    pub samples: usize,
    /// Most segments fitted (1 to 4).
    pub max_segments: usize,
    /// Further supersteps per pair and direction at the smallest size, for the stall (see the
    /// module docs): its spread is a few stalls of milliseconds among many quick supersteps,
    /// so its mean needs hundreds of samples.
    pub stall_samples: usize,
    /// Compute lengths `d`, s, after which the supersteps of every node are timed again for
    /// the stall a compute phase adds ([`hetscale_machine::compute_stall`]); empty: not measured.
    pub compute_stall_s: Vec<f64>,
    /// Seconds each node times its compute loop first, on a real backend: many of a CPU
    /// quota's periods, as the marked speed's samples are.
    pub compute_calibration_s: f64,
}

impl Default for P2pProbeOptions {
    /// 8 B to 16 MiB by factors of 2: 22 sizes, 3 samples, up to 4 segments, 32 stall samples.
    /// A shaped link has regimes (start-up, a burst bucket passed at the interface's speed,
    /// the set rate less the bucket's credit beyond it: the testbed's `tbf` links show all
    /// three, docs/hbsp.md, "The ping-pong probe"), so each regime needs several sizes of its
    /// own; the halved spacing costs about 20% more probing time than factors of 4, as the
    /// largest sizes dominate it.
    fn default() -> Self {
        Self {
            sizes: (0..22).map(|k| 8 << k).collect(),
            samples: 3,
            max_segments: 4,
            stall_samples: 32,
            // From below a quota's budget per period to ten 10 ms periods: on the 8-host
            // testbed the stall grows until about 100 ms of compute and holds beyond
            // (`mpirun -np 8 mpi_check longsteps`, docs/hbsp.md), and `stall_at` takes the
            // last point's value beyond the points.
            compute_stall_s: vec![0.3e-3, 1e-3, 3e-3, 10e-3, 30e-3, 100e-3],
            compute_calibration_s: 0.5,
        }
    }
}

impl P2pProbeOptions {
    /// 8 B to 1 MiB by factors of 8: for tests and quick looks.
    pub fn quick() -> Self {
        Self {
            sizes: (0..7).map(|k| 8 << (3 * k)).collect(),
            samples: 2,
            max_segments: 2,
            stall_samples: 4,
            compute_stall_s: vec![1e-3],
            compute_calibration_s: 0.05,
        }
    }
}

/// One-way times of the network and the segments fitted to them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct P2pReport {
    /// Nodes probed (node 0 played ping-pong with each other node).
    pub p: usize,
    /// Names of the nodes, by pid.
    pub nodes: Vec<String>,
    /// Sizes measured, bytes.
    pub sizes: Vec<usize>,
    /// One-way time of each pair `(0, j)` at each size, s: `pairs[j - 1][k]`.
    pub pairs: Vec<Vec<f64>>,
    /// The network's one-way time at each size (the fastest pair), s.
    pub one_way_s: Vec<f64>,
    /// The segments fitted to `one_way_s`, by increasing `max_bytes`: the network's, and
    /// node 0's.
    pub segments: Vec<P2pSegment>,
    /// The segments fitted to each pair `(0, j)`'s times: node `j`'s, `pair_segments[j - 1]`.
    pub pair_segments: Vec<Vec<P2pSegment>>,
    /// Root mean square of the fit's relative errors.
    pub rms_relative_error: f64,
    /// The unstalled empty superstep (the barriers subtracted), s.
    pub empty_superstep_s: f64,
    /// The stall of a superstep that moves messages at `p` nodes (see the module docs), s:
    /// written as `message_stall_s` beside `L(p)`.
    pub stall_s: f64,
    /// Message supersteps the stall was averaged over.
    pub stall_samples: usize,
    /// A superstep in which every node sends or receives a message at the smallest size, on
    /// average, beyond an empty superstep's average, s.
    pub all_nodes_excess_s: f64,
    /// Its stall (see the module docs): `all_nodes_excess_s` less what the segments charge
    /// its slowest transfer, at least 0, s; written as `message_stall_all_s` beside `L(p)`.
    pub all_nodes_stall_s: f64,
    /// Its 95% interval, from the spread of both means (normal, as the samples are hundreds).
    pub all_nodes_stall_s_ci95: [f64; 2],
    /// Supersteps in which every node took part that it was averaged over.
    pub all_nodes_samples: usize,
    /// Nodes 0 and 1 sending each other each size at once: the mean time, the empty
    /// supersteps' mean subtracted, s.
    pub exchange_s: Vec<f64>,
    /// Per size, how much of the second direction's bytes' cost the exchange paid on top of
    /// one way, in `[0, 1]` (see [`hetscale_machine::duplex`]), `None` at a start-up dominated size:
    /// written as `[[machine.duplex]]` at `p`.
    pub duplex_penalty: Vec<Option<f64>>,
    /// The compute lengths after which the supersteps of every node were timed, s (empty:
    /// not measured; see [`hetscale_machine::compute_stall`]).
    pub compute_stall_s: Vec<f64>,
    /// Per compute length, the stall: those supersteps' mean beyond the compute and beyond
    /// the supersteps of every node without it, at least 0, s, and its 95% interval; written
    /// as `[[machine.compute_stall]]` at `p`.
    pub compute_stall: Vec<(f64, [f64; 2])>,
    /// Supersteps timed per compute length (an eighth as many of those beyond a 10 ms quota
    /// period).
    pub compute_stall_samples: Vec<usize>,
}

fn checked(options: &P2pProbeOptions) -> Result<P2pProbeOptions> {
    let mut options = options.clone();
    options.sizes.retain(|&s| s > 0);
    options.sizes.sort_unstable();
    options.sizes.dedup();
    options.compute_stall_s.sort_by(f64::total_cmp);
    options.compute_stall_s.dedup();
    if options
        .compute_stall_s
        .iter()
        .any(|d| !(d.is_finite() && *d > 0.0))
        || !(options.compute_calibration_s.is_finite() && options.compute_calibration_s >= 0.0)
    {
        return Err(HbspError::InvalidBackend(format!(
            "the ping-pong probe's compute lengths must be seconds > 0 and its calibration >= 0, got {:?} and {}",
            options.compute_stall_s, options.compute_calibration_s
        )));
    }
    if options.sizes.len() < MIN_POINTS || options.samples == 0 || options.max_segments == 0 {
        return Err(HbspError::InvalidBackend(format!(
            "the ping-pong probe needs at least {MIN_POINTS} distinct sizes > 0, samples >= 1 and max_segments >= 1"
        )));
    }
    options.max_segments = options.max_segments.min(4);
    Ok(options)
}

/// Plays ping-pong between node 0 and each other node of `machine` on `backend` and fits the
/// segments (see the module docs).
pub fn probe_p2p(
    backend: &Backend,
    machine: &Machine,
    options: &P2pProbeOptions,
) -> Result<P2pReport> {
    let options = checked(options)?;
    if machine.p() < 2 {
        return Err(HbspError::InvalidBackend(
            "the ping-pong probe needs at least 2 nodes".into(),
        ));
    }
    let backend = backend.untraced();
    // On sim the compute is declared, not spun (see the after_compute module).
    let calibration =
        (!matches!(backend, Backend::Sim(_))).then_some(options.compute_calibration_s);
    let output = hbsp::run(&backend, machine, |ctx| {
        ping_pong(ctx, &options, calibration)
    })?;
    let PingPongTimes {
        pairs: samples,
        empty,
        all_nodes,
        exchange,
        after_compute,
    } = output.results[0].clone();
    let compute_stall_s: Vec<f64> = options
        .compute_stall_s
        .iter()
        .copied()
        .take(after_compute.len())
        .collect();
    let excess: Vec<(f64, f64)> = after_compute
        .iter()
        .map(|samples| excess_over_empty(samples, &all_nodes))
        .collect();
    let compute_stall = after_compute::stalls(&compute_stall_s, &excess);
    let rounds = 2 * options.samples;
    let empty_base = unstalled_empty(&empty, rounds);
    let pairs: Vec<Vec<f64>> = samples
        .iter()
        .map(|pair| {
            pair.iter()
                .map(|times| (unstalled(times, rounds) - empty_base).max(0.0))
                .collect()
        })
        .collect();
    let one_way_s: Vec<f64> = (0..options.sizes.len())
        .map(|k| {
            pairs
                .iter()
                .map(|pair| pair[k])
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let x: Vec<f64> = options.sizes.iter().map(|&s| s as f64).collect();
    let (segments, rms_relative_error) = fit_segments(&x, &one_way_s, options.max_segments)?;
    let pair_segments = pairs
        .iter()
        .map(|pair| Ok(fit_segments(&x, pair, options.max_segments)?.0))
        .collect::<Result<Vec<_>>>()?;
    let (stall_s, stall_samples) = stall(&samples, &pair_segments, &options.sizes, &empty, rounds);
    let exchange_mean: Vec<f64> = exchange.iter().map(|times| mean(times)).collect();
    let empty_mean = mean(&empty);
    let exchange_s = exchange_mean
        .iter()
        .map(|x| (x - empty_mean).max(0.0))
        .collect();
    // The first pair's one-way mean over the rounds' samples (the smallest size's further
    // ones, for the stall, left out: the exchange has none).
    let one_way_mean: Vec<f64> = samples[0]
        .iter()
        .map(|times| mean(&times[..rounds.min(times.len())]))
        .collect();
    let duplex_penalty = exchange::penalties(
        &options.sizes,
        &exchange_mean,
        &one_way_mean,
        &pair_segments[0],
    );
    // What the segments charge a transfer of the smallest size to the slowest node: a
    // fastest sample can itself be a stall on a host of a tenth of a core, the fit is not.
    let slowest_pair = pair_segments
        .iter()
        .map(|segments| p2p_time(segments, options.sizes[0] as u64))
        .fold(0.0, f64::max);
    let (all_nodes_excess_s, half_width) = excess_over_empty(&all_nodes, &empty);
    let all_nodes_stall_s = (all_nodes_excess_s - slowest_pair).max(0.0);
    let all_nodes_stall_s_ci95 = [
        (all_nodes_excess_s - half_width - slowest_pair).max(0.0),
        (all_nodes_excess_s + half_width - slowest_pair).max(0.0),
    ];
    Ok(P2pReport {
        p: machine.p(),
        nodes: machine.nodes().iter().map(|n| n.name.clone()).collect(),
        sizes: options.sizes,
        pairs,
        one_way_s,
        segments,
        pair_segments,
        rms_relative_error,
        empty_superstep_s: empty_base,
        stall_s,
        stall_samples,
        all_nodes_excess_s,
        all_nodes_stall_s,
        all_nodes_stall_s_ci95,
        all_nodes_samples: all_nodes.len(),
        exchange_s,
        duplex_penalty,
        compute_stall_samples: after_compute.iter().map(Vec::len).collect(),
        compute_stall_s,
        compute_stall,
    })
}

/// The mean excess of the message supersteps over their size's unstalled time, over each
/// pair's start-up dominated sizes, less the empty supersteps' mean excess over theirs, and
/// the number of message supersteps it came from; at least 0 (see the module docs).
/// `rounds`: the samples per size the rounds took (the smallest size has more after them).
fn stall(
    samples: &[Vec<Vec<f64>>],
    pair_segments: &[Vec<P2pSegment>],
    sizes: &[usize],
    empty: &[f64],
    rounds: usize,
) -> (f64, usize) {
    let mut excess = Vec::new();
    for (pair, segments) in samples.iter().zip(pair_segments) {
        for (times, &size) in pair.iter().zip(sizes) {
            if start_up_dominated(segments, size as u64) {
                let base = unstalled(times, rounds);
                excess.extend(times.iter().map(|t| t - base));
            }
        }
    }
    if excess.is_empty() || empty.is_empty() {
        return (0.0, excess.len());
    }
    let empty_excess = mean(empty) - unstalled_empty(empty, rounds);
    ((mean(&excess) - empty_excess).max(0.0), excess.len())
}

/// The supersteps' mean beyond the empty supersteps' mean and the half-width of its 95%
/// interval (0 and 0 without either).
fn excess_over_empty(supersteps: &[f64], empty: &[f64]) -> (f64, f64) {
    if supersteps.is_empty() || empty.is_empty() {
        return (0.0, 0.0);
    }
    let squared_error = |v: &[f64]| {
        let m = mean(v);
        let n = v.len() as f64;
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0) / n
    };
    let half_width = 1.96 * (squared_error(supersteps) + squared_error(empty)).sqrt();
    (mean(supersteps) - mean(empty), half_width)
}

/// A size's unstalled superstep: the fastest of the rounds' `rounds` samples of it (see the
/// module docs; the smallest size's further samples, for the stall, are left out so that
/// every size's is the fastest of as many).
fn unstalled(times: &[f64], rounds: usize) -> f64 {
    times[..rounds.min(times.len())]
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
}

/// The empty supersteps' counterpart of [`unstalled`]: the mean of the fastest of each run of
/// `rounds` (the fastest of many would be lower than the fastest of as many as a size has).
fn unstalled_empty(empty: &[f64], rounds: usize) -> f64 {
    let fastest: Vec<f64> = empty
        .chunks(rounds.max(1))
        .map(|chunk| unstalled(chunk, chunk.len()))
        .collect();
    mean(&fastest)
}

/// Whether the segment that covers `size` costs at least as much in start-up as in bytes.
fn start_up_dominated(segments: &[P2pSegment], size: u64) -> bool {
    segments
        .iter()
        .find(|s| size <= s.max_bytes)
        .or(segments.last())
        .is_some_and(|s| s.latency_s >= size as f64 * s.s_per_byte)
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// Every node's part of the ping-pong; node 0's times are the ones used.
///
/// Each round takes every size once, in an order shuffled afresh per round and pair (the same
/// on every node: a seeded permutation), so that a disturbance lasting a while (a host under a
/// CPU quota throttled for a stretch of periods, another program) falls on random sizes and
/// not on a run of neighbouring ones, which the segment fit would read as a step in the cost.
/// Then the supersteps in which every node takes part, at the smallest size (see the module
/// docs), as many as each pair's further samples for the stall, with as many empty ones, and
/// beside each round of them the same after every node computed each of
/// `compute_stall_s` (none where the marked speeds are not a rate of operations).
fn ping_pong(
    ctx: &mut Ctx<'_>,
    options: &P2pProbeOptions,
    calibration_s: Option<f64>,
) -> Result<PingPongTimes> {
    ctx.charge_work(0.0)?;
    let largest = options.sizes.iter().copied().max().unwrap_or(0);
    let payload = vec![0u8; largest];
    let mut empty = Vec::new();
    let mut pairs = Vec::new();
    let mut exchange = vec![Vec::with_capacity(2 * options.samples); options.sizes.len()];
    for partner in 1..ctx.nprocs() {
        let mut times = vec![Vec::with_capacity(2 * options.samples); options.sizes.len()];
        for round in 0..options.samples {
            for k in shuffled(options.sizes.len(), (partner * 1_000 + round) as u64) {
                let size = options.sizes[k];
                empty.push(time_delivered(ctx, |_| Ok(()))?);
                for (from, to) in [(0, partner), (partner, 0)] {
                    times[k].push(time_one_way(ctx, from, to, &payload[..size])?);
                }
                if partner == 1 {
                    // As many exchanges as one-way samples, beside them.
                    for _ in 0..2 {
                        exchange[k].push(time_exchange(ctx, &payload[..size])?);
                    }
                }
            }
        }
        // More samples of the smallest size, as the rounds take them, for the stall.
        let smallest = options.sizes[0];
        for _ in 0..options.stall_samples {
            empty.push(time_delivered(ctx, |_| Ok(()))?);
            for (from, to) in [(0, partner), (partner, 0)] {
                times[0].push(time_one_way(ctx, from, to, &payload[..smallest])?);
            }
        }
        pairs.push(times);
    }
    let smallest = &payload[..options.sizes[0]];
    // Eight times a pair's further samples: a mean over all nodes' stalls, rare and long, is
    // noisier than one pair's, and a sample costs milliseconds where the large sizes cost
    // seconds.
    let rounds = ALL_NODES_ROUNDS_PER_STALL_SAMPLE * options.stall_samples;
    let mut all_nodes = Vec::with_capacity(2 * rounds);
    // None on every node alike (the speeds are not a rate): then no node computes.
    let computer = node_computer(ctx, calibration_s);
    let lengths: &[f64] = computer.map_or(&[], |_| &options.compute_stall_s);
    let mut after_compute = vec![Vec::with_capacity(rounds); lengths.len()];
    for round in 0..rounds {
        let root = round % ctx.nprocs();
        empty.push(time_delivered(ctx, |_| Ok(()))?);
        all_nodes.push(time_delivered(ctx, |ctx| {
            from_root_to_all(ctx, root, smallest)
        })?);
        all_nodes.push(time_delivered(ctx, |ctx| {
            from_all_to_root(ctx, root, smallest)
        })?);
        // Beside them, so both kinds see the same moments of the machine; the direction
        // alternates with the rounds.
        if let Some(computer) = computer {
            for (k, &d) in lengths.iter().enumerate() {
                if !after_compute::timed_in_round(d, round, ALL_NODES_ROUNDS_PER_STALL_SAMPLE) {
                    continue;
                }
                after_compute[k].push(time_delivered(ctx, |ctx| {
                    computer.compute(ctx, d)?;
                    if round % 2 == 0 {
                        from_root_to_all(ctx, root, smallest)
                    } else {
                        from_all_to_root(ctx, root, smallest)
                    }
                })?);
            }
        }
    }
    Ok(PingPongTimes {
        pairs,
        empty,
        all_nodes,
        exchange,
        after_compute,
    })
}

/// How this node computes for the supersteps after compute: none when its marked speed is
/// not a rate of operations (a platform in other units), so that no node spins.
fn node_computer(ctx: &Ctx<'_>, calibration_s: Option<f64>) -> Option<after_compute::Computer> {
    let machine = ctx.machine();
    let scale = hetscale_machine::units::ops_scale(machine.speed_unit())?;
    let ops_per_s = machine.marked_speed(ctx.pid()) * scale;
    Some(after_compute::Computer::new(ops_per_s, calibration_s))
}

/// Node `root` sends `bytes` to every other node.
fn from_root_to_all(ctx: &mut Ctx<'_>, root: usize, bytes: &[u8]) -> Result<()> {
    if ctx.pid() == root {
        for to in (0..ctx.nprocs()).filter(|&to| to != root) {
            ctx.send(to, 0, bytes)?;
        }
    }
    Ok(())
}

/// Every node but `root` sends `bytes` to `root`.
fn from_all_to_root(ctx: &mut Ctx<'_>, root: usize, bytes: &[u8]) -> Result<()> {
    if ctx.pid() != root {
        ctx.send(root, 0, bytes)?;
    }
    Ok(())
}

/// Nodes 0 and 1 each send the other `bytes` at once, timed to their delivery.
fn time_exchange(ctx: &mut Ctx<'_>, bytes: &[u8]) -> Result<f64> {
    let partner = match ctx.pid() {
        0 => Some(1),
        1 => Some(0),
        _ => None,
    };
    time_delivered(ctx, |ctx| match partner {
        Some(to) => ctx.send(to, 0, bytes),
        None => Ok(()),
    })
}

/// Time of `from` sending `bytes` to `to`, to their delivery (see [`time_delivered`]).
fn time_one_way(ctx: &mut Ctx<'_>, from: usize, to: usize, bytes: &[u8]) -> Result<f64> {
    let sends = ctx.pid() == from;
    time_delivered(ctx, |ctx| {
        if sends {
            ctx.send(to, 0, bytes)
        } else {
            Ok(())
        }
    })
}

/// Time of one superstep doing `body` and of the empty superstep after it, as this node sees
/// them: the second ends only when every node has what the first sent (see the module docs).
fn time_delivered(ctx: &mut Ctx<'_>, body: impl FnOnce(&mut Ctx<'_>) -> Result<()>) -> Result<f64> {
    step(ctx)?;
    let start = ctx.time();
    body(ctx)?;
    step(ctx)?;
    ctx.recv_all::<u8>()?;
    step(ctx)?;
    Ok(ctx.time() - start)
}

/// The ping-pong's superstep times, as node 0 saw them.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
struct PingPongTimes {
    /// `pairs[j - 1][k]`: pair `(0, j)` at size `k`.
    pairs: Vec<Vec<Vec<f64>>>,
    /// The empty supersteps.
    empty: Vec<f64>,
    /// The supersteps in which every node took part.
    all_nodes: Vec<f64>,
    /// `exchange[k]`: nodes 0 and 1 swapping size `k` at once.
    exchange: Vec<Vec<f64>>,
    /// `after_compute[k]`: the supersteps of every node after the `k`-th compute length.
    after_compute: Vec<Vec<f64>>,
}

/// `0..n` in an order fixed by `seed` (Fisher-Yates on a SplitMix64 stream).
fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// What writing one node's (or the network's) segments into a platform did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum P2pMerge {
    /// The platform had none: written.
    Added,
    /// Replaced segments measured to a smaller size.
    ReplacedShorter,
    /// Replaced segments measured to the same size but faster there (the slower
    /// measurement of the same link stands).
    ReplacedFaster,
    /// Kept the platform's: measured further, or as far and slower.
    Kept(String),
}

/// The rule for one key (the network's segments, or one node's): replaced only by segments
/// measured to at least the same largest size, and, at the same size, only by slower ones.
fn merge_rule(old: &[P2pSegment], new: &[P2pSegment]) -> P2pMerge {
    let reach = new.last().map_or(0, |s| s.max_bytes);
    match old.last().map(|s| s.max_bytes) {
        None => P2pMerge::Added,
        Some(o) if reach > o => P2pMerge::ReplacedShorter,
        Some(o) if reach < o => P2pMerge::Kept(format!(
            "the platform's segments reach {o} bytes, this probe's only {reach}"
        )),
        Some(_) => {
            let (old_t, new_t) = (p2p_time(old, reach), p2p_time(new, reach));
            if new_t > old_t {
                P2pMerge::ReplacedFaster
            } else {
                P2pMerge::Kept(format!(
                    "at {reach} bytes the platform's segments take {old_t:.4e} s, this probe's {new_t:.4e} s: the slower stands"
                ))
            }
        }
    }
}

impl P2pReport {
    /// Writes the segments into `platform`'s `[[machine.p2p]]`: the fastest pair's as the
    /// network's (no `node`), each pair `(0, j)`'s as node `j`'s, each with `source(pair)`
    /// (`None`: the network's), key by key by `merge_rule`. A platform without `[machine]`
    /// gets one from its network ([`MachineModel::from_network`]) holding the segments.
    /// Returns, per key (`None`: the network), what was done.
    pub fn apply_to(
        &self,
        platform: &mut Platform,
        source: &dyn Fn(Option<&str>) -> String,
    ) -> Result<Vec<(Option<String>, P2pMerge)>> {
        let mut keyed: Vec<(Option<String>, &[P2pSegment])> = vec![(None, &self.segments)];
        for (name, segments) in self.nodes[1..].iter().zip(&self.pair_segments) {
            keyed.push((Some(name.clone()), segments));
        }
        let network = platform.network.clone();
        let model = platform
            .machine
            .get_or_insert_with(|| MachineModel::from_network(&network));
        // Segments of no machine size (an older probe's) give way to these, measured on a
        // known one.
        model.p2p.retain(|s| s.p.is_some());
        let mut done = Vec::new();
        let p = Some(self.p);
        for (key, segments) in keyed {
            let same = |s: &P2pSegment| s.node == key && s.p == p;
            let old: Vec<P2pSegment> = model.p2p.iter().filter(|s| same(s)).cloned().collect();
            let new: Vec<P2pSegment> = segments
                .iter()
                .map(|s| P2pSegment {
                    node: key.clone(),
                    p,
                    source: Some(source(key.as_deref())),
                    ..s.clone()
                })
                .collect();
            let merge = merge_rule(&old, &new);
            if !matches!(merge, P2pMerge::Kept(_)) {
                model.p2p.retain(|s| !same(s));
                model.p2p.extend(new);
            }
            done.push((key, merge));
        }
        // By machine size, the network's first, then by node: one order whatever the
        // probes' order.
        model
            .p2p
            .sort_by(|a, b| (a.p, &a.node, a.max_bytes).cmp(&(b.p, &b.node, b.max_bytes)));
        self.apply_stall_to(platform);
        let duplex_source = format!(
            "{}; the same sizes sent both ways at once",
            source(Some(&self.nodes[1]))
        );
        exchange::apply_duplex_to(
            platform,
            self.p,
            &self.sizes,
            &self.duplex_penalty,
            &duplex_source,
        );
        let compute_source = format!(
            "{}; supersteps in which every node computed first, beside those without",
            source(None)
        );
        after_compute::apply_to(
            platform,
            self.p,
            &self.compute_stall_s,
            &self.compute_stall,
            &compute_source,
        );
        platform.validate()?;
        Ok(done)
    }
}

impl P2pReport {
    /// Writes the stall as `message_stall_s` of the platform's measured `L` at this probe's
    /// `p`; a platform without `L(p)` measured at this `p` is left as it is (the superstep
    /// probe, which `probe --p2p` runs first, writes it).
    fn apply_stall_to(&self, platform: &mut Platform) {
        if let hetscale_machine::platform::BarrierCost::Table(points) = &mut platform.network.l {
            if let Some(point) = points.iter_mut().find(|pt| pt.p == self.p) {
                point.message_stall_s = self.stall_s;
                point.message_stall_all_s = Some(self.all_nodes_stall_s);
            }
        }
    }
}

/// Raises the platform's HBSP^1 `g` to its `[[machine.p2p]]`'s sustained cost per byte (the
/// last segment's `s_per_byte`, measured beyond any burst) when `g` is below it, and returns
/// the `g` it replaced. A superstep probe whose messages fit a shaped link's burst bucket, or
/// whose superstep times are dominated by waiting, measures a `g` faster than the wire; the
/// ping-pong's is the better-measured value, and a later superstep probe does not undo it.
///
/// Every `r_j` was measured relative to the old `g` (`g_j = r_j g`), so each is restated
/// against the new one, no node injecting faster than the sustained cost:
/// `r_j = max(1, r_j g_old / g_new)`.
pub fn raise_g_to_sustained(platform: &mut Platform) -> Option<f64> {
    // The sustained rate is the link's, whatever the machine size: the largest measured.
    let network = hetscale_machine::machine_model::p2p_segments(
        &platform.machine.as_ref()?.p2p,
        None,
        usize::MAX,
    );
    let sustained = network.last()?.s_per_byte;
    let g = platform.network.g_s_per_byte;
    (g < sustained).then(|| {
        platform.network.g_s_per_byte = sustained;
        for node in &mut platform.nodes {
            node.r = (node.r * g / sustained).max(1.0);
        }
        g
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stall_is_the_message_supersteps_excess_beyond_the_empty_ones() {
        // One pair, two sizes: 8 B (start-up dominated) and 1 MiB (bytes dominated). Of ten
        // 8 B samples two stalled 5 ms; of ten empty pairs one stalled 5 ms; the 1 MiB
        // samples' spread (a long transfer's own) is left out.
        let segments = vec![
            P2pSegment::new(1 << 10, 4e-4, 1e-9),
            P2pSegment::new(1 << 20, 0.0, 8e-8),
        ];
        let mut small = vec![1e-3; 10];
        small[3] += 5e-3;
        small[7] += 5e-3;
        let large = vec![0.08, 0.08, 0.2, 0.08];
        let mut empty = vec![5e-4; 10];
        empty[0] += 5e-3;
        let (stall_s, samples) =
            stall(&[vec![small, large]], &[segments], &[8, 1 << 20], &empty, 6);
        assert_eq!(samples, 10);
        assert!((stall_s - (1e-3 - 5e-4)).abs() < 1e-12, "{stall_s}");
        // Empty supersteps that stall more than the message ones: no negative stall.
        let calm = vec![1e-3; 10];
        let segments = vec![P2pSegment::new(1 << 10, 4e-4, 1e-9)];
        assert_eq!(stall(&[vec![calm]], &[segments], &[8], &empty, 6).0, 0.0);
    }

    #[test]
    fn when_most_supersteps_stall_the_unstalled_time_and_the_stall_still_sum_to_the_mean() {
        // A host of a tenth of a core: 7 of 10 supersteps of a size wait 5 ms, the median
        // among them (which left no excess to call a stall, and a one-way time of a stall).
        // The empty supersteps: 0.5 ms, every third stalled 5 ms.
        let segments = vec![P2pSegment::new(1 << 10, 4e-4, 1e-9)];
        let small: Vec<f64> = (0..10)
            .map(|i| 1e-3 + if i % 10 < 7 { 5e-3 } else { 0.0 })
            .collect();
        let empty: Vec<f64> = (0..12)
            .map(|i| 5e-4 + if i % 3 == 0 { 5e-3 } else { 0.0 })
            .collect();
        assert_eq!(unstalled(&small, 10), 1e-3);
        // Stalled the first 6 samples all: the rounds' fastest is a stall (and an outlier the
        // segment fit takes), but the stall is still what the samples took beyond it.
        assert_eq!(unstalled(&small, 6), 6e-3);
        assert_eq!(unstalled_empty(&empty, 6), 5e-4);
        let (stall_s, _) = stall(&[vec![small.clone()]], &[segments], &[8], &empty, 10);
        let one_way = unstalled(&small, 10) - unstalled_empty(&empty, 6);
        let charged = mean(&empty) + one_way + stall_s;
        assert!((stall_s - (3.5e-3 - 5e-3 / 3.0)).abs() < 1e-12, "{stall_s}");
        assert!(
            (charged - mean(&small)).abs() < 1e-12,
            "{charged} vs {}",
            mean(&small)
        );
    }

    #[test]
    fn a_shuffled_order_is_a_permutation_that_the_seed_fixes() {
        let a = shuffled(22, 7);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..22).collect::<Vec<_>>());
        assert_eq!(a, shuffled(22, 7));
        assert_ne!(a, shuffled(22, 8));
        assert_ne!(a, (0..22).collect::<Vec<_>>());
    }
}
