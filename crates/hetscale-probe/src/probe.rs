//! Measuring a backend's HBSP^1 parameters `g`, `r_j`, `L` and `o`, with confidence
//! intervals, in the manner of BSPlib's `bspprobe`, LPF's `lpf_probe` and BSPonMPI's
//! `bompiprobe`: every figure is the time of whole supersteps, barrier included.
//!
//! - `g` and `r_j`: for each node `j` in turn, supersteps in which only `j` injects `h`
//!   bytes, spread over the other nodes, for several `h`. Node `j`'s superstep times are fitted
//!   to `T_j(h) = g_j h + b` by least squares; `g = min_j g_j` (the fastest node's time per
//!   byte) and `r_j = g_j / g`. The intercept is not used: it holds `L` plus the per-message
//!   overhead of the messages.
//! - `L`: batches of consecutive empty supersteps, each sample the mean of one batch, as the
//!   `sync_latency` benchmark times them: a single superstep timed alone carries the wake-up
//!   of nodes that parked after the work before it, which a running program does not pay
//!   at every superstep.
//! - `o`: node 0 sends `m` small messages to node 1, compared with one message of the same
//!   total size; `o = (t_m - t_1) / (m - 1)`.
//!
//! Each estimate is repeated over independent rounds; the report gives the mean and a 95%
//! Student-t confidence interval over rounds.
//!
//! A receiver's slowness also bounds a superstep: HBSP^1 counts `h_k` as the larger of bytes
//! sent and received, so node `j`'s injection shows as `g_j h` only while every receiver's
//! `r_k b_k` stays below `r_j h`. A pilot sweep with an even spread (`b_k = h / (p - 1)`) comes
//! first, then up to two more that give each receiver a share in inverse proportion to its rate
//! in the sweep before; the measured rounds use the last sweep's shares. That hides the
//! receivers whenever `sum_{k != j} 1 / r_k > 1 / r_j`, which holds for every node when `p >= 3`
//! unless one node is much faster than all the others. At `p = 2` no spread helps and both
//! nodes measure the slower one's rate.
//!
//! The probe declares no work (`charge_work(0)`) in its supersteps, so on the `sim` backend
//! they cost the platform's network parameters exactly, not the host's copying time.

use hetscale_model::fit::polyfit;
use hetscale_model::numbers::human_seconds;
use serde::Serialize;

use hbsp::Ctx;
use hbsp::backend::Backend;
use hbsp::collectives::allgather;
use hbsp::{HbspError, Result};
use hetscale_machine::platform::{BarrierCost, BarrierPoint, Machine, Platform};

/// What to measure and how often.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeOptions {
    /// Bytes each node injects per superstep in the `g`, `r_j` probe; at least two distinct
    /// sizes above 0 (zeros are ignored: `L` has its own empty supersteps).
    pub h_bytes: Vec<usize>,
    /// Supersteps timed per size, node and round (the median is used).
    pub samples: usize,
    /// Independent rounds, over which the confidence intervals are taken (at least 2).
    pub rounds: usize,
    /// Number of small messages for the `o` probe.
    pub small_messages: usize,
    /// Consecutive empty supersteps timed together for one sample of `L` (at least 1).
    pub sync_batch: usize,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        Self {
            h_bytes: vec![4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20],
            samples: 7,
            rounds: 7,
            small_messages: 2000,
            sync_batch: 200,
        }
    }
}

impl ProbeOptions {
    /// Small sizes and few repetitions, for tests and quick looks.
    pub fn quick() -> Self {
        Self {
            h_bytes: vec![16 << 10, 256 << 10, 1 << 20],
            samples: 3,
            rounds: 3,
            small_messages: 200,
            sync_batch: 10,
        }
    }
}

/// Measured parameters with 95% confidence intervals (`[lo, hi]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[allow(non_snake_case)]
pub struct ProbeReport {
    /// Number of nodes probed.
    pub p: usize,
    /// `g`, seconds per byte injected by the fastest node.
    pub g_s_per_byte: f64,
    /// Confidence interval of `g` (in JSON `g_s_per_byte_ci95`, as every interval, and no
    /// lower than 0, as none of these quantities can be).
    #[serde(rename = "g_s_per_byte_ci95", serialize_with = "non_negative")]
    pub g_s_per_byte_ci: [f64; 2],
    /// `L(p)`, seconds (JSON `l_s`: the one JSON schema's keys are snake_case).
    #[serde(rename = "l_s")]
    pub L_s: f64,
    /// Confidence interval of `L`.
    #[serde(rename = "l_s_ci95", serialize_with = "non_negative")]
    pub L_s_ci: [f64; 2],
    /// `o`, seconds per message.
    pub o_s: f64,
    /// Confidence interval of `o`.
    #[serde(rename = "o_s_ci95", serialize_with = "non_negative")]
    pub o_s_ci: [f64; 2],
    /// `r_j` per node, fastest = 1.
    pub r: Vec<f64>,
    /// Confidence interval of each `r_j`.
    #[serde(rename = "r_ci95", serialize_with = "each_non_negative")]
    pub r_ci: Vec<[f64; 2]>,
    /// Rounds the intervals are taken over.
    pub rounds: usize,
    /// Why the figures do not describe the backend, when they do not: the machine was busy
    /// with other work during the probe, so samples that should agree spread too wide.
    /// `None` when the samples agreed.
    pub loaded: Option<String>,
}

/// One node's estimates from one round.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Round {
    /// `g_j` of this node: seconds per byte it injects.
    g: f64,
    /// Median empty superstep as this node saw it.
    l: f64,
    /// Every sample of `L` (mean superstep of one batch) behind the median.
    l_samples: Vec<f64>,
    /// The median single superstep of each batch.
    l_typical: Vec<f64>,
    /// Per-message overhead as this node saw it.
    o: f64,
}

/// Serializes an interval of a quantity that cannot be negative with its low end at least 0.
fn non_negative<S: serde::Serializer>(
    ci: &[f64; 2],
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    Serialize::serialize(&[ci[0].max(0.0), ci[1]], serializer)
}

/// [`non_negative`] for each node's interval.
fn each_non_negative<S: serde::Serializer>(
    cis: &[[f64; 2]],
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_seq(cis.iter().map(|ci| [ci[0].max(0.0), ci[1]]))
}

/// Measures `g`, `L`, `o` and `r_j` of `machine` on `backend`.
pub fn probe(backend: &Backend, machine: &Machine, options: &ProbeOptions) -> Result<ProbeReport> {
    probe_with_progress(backend, machine, options, &|_| {})
}

/// [`probe`], calling `progress` with the supersteps done so far (out of at most
/// [`probe_supersteps`]) as the probe goes. A probe that cannot fit this machine's memory is
/// refused before it starts ([`check_probe_fits`]).
pub fn probe_with_progress(
    backend: &Backend,
    machine: &Machine,
    options: &ProbeOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ProbeReport> {
    let options = checked(options)?;
    check_probe_fits(backend, machine.p(), &options)?;
    // Nothing reads a trace, which would grow with every superstep of every node: O(p^2).
    let backend = backend.untraced();
    let output = hbsp::run(&backend, machine, |ctx| {
        let report = |ctx: &Ctx<'_>| {
            if ctx.pid() == 0 {
                progress(ctx.superstep());
            }
        };
        measure_rounds(ctx, &options, &report)
    })?;
    Ok(summarise(&output.results))
}

/// Pilot sweeps of the `g`, `r_j` probe at most (see [`pilot_rates`]).
const PILOT_SWEEPS: usize = 3;

/// The supersteps of a probe of `p` nodes with `options`, at most (the pilot sweeps may
/// settle early): every node takes its turn injecting in every sweep, so they grow as `p`,
/// and each superstep takes every node, so the probe's time grows as `p^2`.
pub fn probe_supersteps(p: usize, options: &ProbeOptions) -> u64 {
    let (p, samples) = (p as u64, options.samples as u64);
    let gather = 1; // The allgather of the rates after a sweep: one superstep.
    let sweep = p * options.h_bytes.len() as u64 * samples * 2;
    let round = samples * (options.sync_batch as u64 + 1) + sweep + samples * 4;
    PILOT_SWEEPS as u64 * (sweep + gather) + options.rounds as u64 * round + 1
}

/// Seconds a probe of `p` nodes takes, roughly: its supersteps ([`probe_supersteps`]) times
/// `p` times what a node's superstep costs on `backend` (from timing
/// `hetscale probe --quick --backend sim|threads --nodes P` at P = 64 to 500 on a 2-core host:
/// 0.63 us on sim's coroutines, 4.7 us on threads; mpi's is taken as threads'). A faster
/// or busier host differs; the progress shows the real pace.
pub fn probe_seconds(backend: &Backend, p: usize, options: &ProbeOptions) -> f64 {
    let node_superstep_s = match backend {
        Backend::Sim(sim) if sim.engine == hbsp::SimEngine::Coroutines => 0.7e-6,
        _ => 5e-6,
    };
    probe_supersteps(p, options) as f64 * p as f64 * node_superstep_s
}

/// Bytes a probe of `p` nodes takes at its peak: what every run takes
/// ([`hbsp::memory::run_bytes`]); the allgather of the rates, a message per pair of nodes,
/// and each node's copy of every rate; and the largest payload, sent and received.
pub fn probe_bytes(backend: &Backend, p: usize, options: &ProbeOptions) -> f64 {
    let largest = options.h_bytes.iter().copied().max().unwrap_or(0) as f64;
    // An MPI rank receives only its own node's messages.
    let receivers = if matches!(backend, Backend::Mpi(_)) {
        1.0
    } else {
        p as f64
    };
    let rates = receivers * p as f64 * (hbsp::memory::message_bytes(backend) + 8.0);
    hbsp::memory::run_bytes(backend, p) + rates + 2.0 * largest
}

/// Refuses, in one line, a probe of `p` nodes that would need more memory than is available,
/// with its estimate, its supersteps and what to change.
pub fn check_probe_fits(backend: &Backend, p: usize, options: &ProbeOptions) -> Result<()> {
    Ok(hetscale_machine::room::check_fits(
        &format!(
            "probing {p} nodes ({} supersteps, about {})",
            probe_supersteps(p, options),
            human_seconds(probe_seconds(backend, p, options))
        ),
        probe_bytes(backend, p, options),
        "probe fewer nodes (--nodes) and apply the measured r_j to the others of their kind",
    )?)
}

fn checked(options: &ProbeOptions) -> Result<ProbeOptions> {
    let mut options = options.clone();
    options.h_bytes.retain(|&h| h > 0);
    options.h_bytes.sort_unstable();
    options.h_bytes.dedup();
    if options.rounds < 2
        || options.samples == 0
        || options.small_messages < 2
        || options.sync_batch == 0
        || options.h_bytes.len() < 2
    {
        return Err(HbspError::InvalidBackend(
            "probe needs rounds >= 2, samples >= 1, small_messages >= 2, sync_batch >= 1 and at least two distinct sizes h_bytes > 0".into(),
        ));
    }
    Ok(options)
}

/// Called by every node after each injector's turn and each part of a round: node 0 reports
/// the supersteps done.
type Progress<'a> = dyn Fn(&Ctx<'_>) + 'a;

fn measure_rounds(
    ctx: &mut Ctx<'_>,
    options: &ProbeOptions,
    progress: &Progress<'_>,
) -> Result<Vec<Round>> {
    ctx.charge_work(0.0)?;
    let rates = pilot_rates(ctx, options, progress)?;
    (0..options.rounds)
        .map(|_| measure_round(ctx, options, &rates, progress))
        .collect()
}

/// Every node's `g_k` from pilot sweeps, each spread by the previous one's rates (the first
/// evenly), until they agree within 1% or after three sweeps. Each sweep can only lower the
/// rates that slow receivers inflated, so they settle from above.
fn pilot_rates(
    ctx: &mut Ctx<'_>,
    options: &ProbeOptions,
    progress: &Progress<'_>,
) -> Result<Vec<f64>> {
    let mut rates: Option<Vec<f64>> = None;
    for _ in 0..PILOT_SWEEPS {
        let mine = injection_rate(ctx, options, rates.as_deref(), progress)?;
        let next: Vec<f64> = allgather(ctx, &[mine])?
            .value
            .into_iter()
            .flatten()
            .collect();
        // Every node gathered the same rates, so all take the same branch.
        let settled = rates.as_ref().is_some_and(|old| {
            old.iter()
                .zip(&next)
                .all(|(a, b)| (a - b).abs() <= 0.01 * a.abs().max(b.abs()))
        });
        rates = Some(next);
        if settled {
            break;
        }
    }
    Ok(rates.unwrap_or_default())
}

fn measure_round(
    ctx: &mut Ctx<'_>,
    options: &ProbeOptions,
    rates: &[f64],
    progress: &Progress<'_>,
) -> Result<Round> {
    let (empty, typical): (Vec<f64>, Vec<f64>) = (0..options.samples)
        .map(|_| time_empty_supersteps(ctx, options.sync_batch))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .unzip();
    progress(ctx);
    let g = injection_rate(ctx, options, Some(rates), progress)?;
    let o = overhead(ctx, options)?;
    progress(ctx);
    Ok(Round {
        g,
        l: median(empty.clone()),
        l_samples: empty,
        l_typical: typical,
        o,
    })
}

/// Mean and median time of `batch` consecutive empty supersteps, as this node sees them.
fn time_empty_supersteps(ctx: &mut Ctx<'_>, batch: usize) -> Result<(f64, f64)> {
    step(ctx)?;
    let start = ctx.time();
    let mut times = Vec::with_capacity(batch);
    let mut last = start;
    for _ in 0..batch {
        step(ctx)?;
        let now = ctx.time();
        times.push(now - last);
        last = now;
    }
    Ok(((last - start) / batch as f64, median(times)))
}

/// Ends the superstep, declaring no work for the next one: the probe's own bookkeeping must
/// not be charged as compute on `sim`.
pub(crate) fn step(ctx: &mut Ctx<'_>) -> Result<()> {
    ctx.sync()?;
    ctx.charge_work(0.0)
}

/// Time of one superstep doing `body`, as this node sees it between two barriers. Messages
/// it received are dropped after the clock stops.
pub(crate) fn time_superstep(
    ctx: &mut Ctx<'_>,
    body: impl FnOnce(&mut Ctx<'_>) -> Result<()>,
) -> Result<f64> {
    step(ctx)?;
    let start = ctx.time();
    body(ctx)?;
    step(ctx)?;
    let elapsed = ctx.time() - start;
    ctx.recv_all::<u8>()?;
    Ok(elapsed)
}

/// The nodes a node's bytes go to: all others, or itself when it is alone.
fn peers(ctx: &Ctx<'_>) -> Vec<usize> {
    let me = ctx.pid();
    match ctx.nprocs() {
        1 => vec![me],
        p => (0..p).filter(|&j| j != me).collect(),
    }
}

/// `g_j` of this node: every node takes its turn injecting while the others only receive,
/// and each fits its own turn's superstep times against the bytes it injected. `rates` (every
/// node's pilot `g_k`) weight the spread: see [`spread`].
fn injection_rate(
    ctx: &mut Ctx<'_>,
    options: &ProbeOptions,
    rates: Option<&[f64]>,
    progress: &Progress<'_>,
) -> Result<f64> {
    let mut slope = 0.0;
    for injector in 0..ctx.nprocs() {
        if injector == ctx.pid() {
            slope = inject(ctx, options, rates)?;
        } else {
            // A receiver's supersteps: as many as the injector's, nothing sent.
            for _ in 0..options.h_bytes.len() * options.samples {
                time_superstep(ctx, |_| Ok(()))?;
            }
        }
        progress(ctx);
    }
    Ok(slope)
}

/// This node's turn to inject: its superstep times against the bytes it sent, fitted. Only
/// the injector lists its peers and their shares (`p` each): every node holding them for
/// every turn took `p^2` memory.
fn inject(ctx: &mut Ctx<'_>, options: &ProbeOptions, rates: Option<&[f64]>) -> Result<f64> {
    let to = peers(ctx);
    let largest = options.h_bytes.last().copied().unwrap_or(0);
    let payload = vec![0u8; largest];
    let (mut bytes, mut times) = (Vec::new(), Vec::new());
    for &h in &options.h_bytes {
        let shares = spread(h, &to, rates);
        let samples = (0..options.samples)
            .map(|_| {
                time_superstep(ctx, |ctx| {
                    for (&j, &b) in to.iter().zip(&shares) {
                        ctx.send(j, 0, &payload[..b])?;
                    }
                    Ok(())
                })
            })
            .collect::<Result<Vec<_>>>()?;
        bytes.push(shares.iter().sum::<usize>() as f64);
        times.push(median(samples));
    }
    let (line, _) = polyfit(&bytes, &times, 1)?;
    // Timer noise on a fast host can tilt a flat line below zero; no node injects in
    // negative time.
    Ok(line.coefficients[1].max(0.0))
}

/// Bytes for each of `to` out of `h`: evenly, or, given pilot rates, in inverse proportion to
/// each receiver's rate. HBSP^1 charges a receiver `r_k` times what it receives, so an even
/// spread lets a slow receiver bound a fast injector whenever `r_k > (p - 1) r_j`; weighted,
/// every receiver is charged about `h / sum_k (1 / r_k)`, the least any spread allows.
fn spread(h: usize, to: &[usize], rates: Option<&[f64]>) -> Vec<usize> {
    let weights: Option<Vec<f64>> = rates.and_then(|rates| {
        let w: Vec<f64> = to
            .iter()
            .map(|&k| rates.get(k).map_or(0.0, |&g| 1.0 / g))
            .collect();
        w.iter().all(|w| w.is_finite() && *w > 0.0).then_some(w)
    });
    match weights {
        Some(w) => {
            let total: f64 = w.iter().sum();
            w.iter()
                .map(|w| (h as f64 * w / total).ceil() as usize)
                .map(|b| b.min(h))
                .collect()
        }
        None => vec![h.div_ceil(to.len()); to.len()],
    }
}

fn overhead(ctx: &mut Ctx<'_>, options: &ProbeOptions) -> Result<f64> {
    let (to, m) = (peers(ctx)[0], options.small_messages);
    let sender = ctx.pid() == 0;
    let mut many = Vec::with_capacity(options.samples);
    let mut one = Vec::with_capacity(options.samples);
    for _ in 0..options.samples {
        many.push(time_superstep(ctx, |ctx| {
            if sender {
                (0..m).try_for_each(|_| ctx.send(to, 0, &[0u64]))?;
            }
            Ok(())
        })?);
        one.push(time_superstep(ctx, |ctx| {
            if sender {
                ctx.send(to, 0, &vec![0u64; m])
            } else {
                Ok(())
            }
        })?);
    }
    Ok((median(many) - median(one)) / (m - 1) as f64)
}

pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// Node 0's rounds give `L` and `o`; the nodes' `g_j` give `g` and the `r_j`, round by round.
fn summarise(per_node: &[Vec<Round>]) -> ProbeReport {
    let rounds = &per_node[0];
    let column = |f: &dyn Fn(&Round) -> f64| -> Vec<f64> { rounds.iter().map(f).collect() };
    let (l_s, l_s_ci) = mean_ci(&column(&|r| r.l));
    let (o_s, o_s_ci) = mean_ci(&column(&|r| r.o));
    let fastest: Vec<f64> = (0..rounds.len())
        .map(|k| {
            per_node
                .iter()
                .map(|node| node[k].g)
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let (g_s_per_byte, g_s_per_byte_ci) = mean_ci(&fastest);
    let (r, r_ci) = per_node
        .iter()
        .map(|node| {
            let slowness: Vec<f64> = node
                .iter()
                .zip(&fastest)
                .map(|(round, &g)| {
                    // A backend that charges nothing for bytes (sim with g = 0, or a lone
                    // node sending to itself there) has no fastest rate to compare with.
                    if g > 0.0 { round.g / g } else { 1.0 }
                })
                .collect();
            mean_ci(&slowness)
        })
        .unzip();
    let l_samples: Vec<f64> = rounds.iter().flat_map(|r| r.l_samples.clone()).collect();
    let typical: Vec<f64> = rounds.iter().flat_map(|r| r.l_typical.clone()).collect();
    let loaded = too_wide("L", &l_samples)
        .or_else(|| too_wide("g", &fastest))
        .or_else(|| waited_for_cores(&l_samples, &typical));
    ProbeReport {
        p: per_node.len(),
        g_s_per_byte,
        g_s_per_byte_ci,
        L_s: l_s,
        L_s_ci: l_s_ci,
        o_s,
        o_s_ci,
        r,
        r_ci,
        rounds: rounds.len(),
        loaded,
    }
}

/// Samples of one quantity spread wider than a quiet machine spreads them: their upper
/// quartile more than [`LOADED_SPREAD`] times their lower one. On a quiet host repeated
/// batches of supersteps agree within tens of percent; when other processes take the cores,
/// whole batches wait for a node to be scheduled and the samples scatter by orders of
/// magnitude, so no figure from them is the backend's.
fn too_wide(name: &str, samples: &[f64]) -> Option<String> {
    let mut sorted: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    if sorted.len() < 2 {
        return None;
    }
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    let (low, high) = (at(0.25), at(0.75));
    (high > LOADED_SPREAD * low.max(0.0)).then(|| {
        format!(
            "the machine was busy during the probe: samples of {name} spread from {low:.3e} to {high:.3e} s (quartiles), more than {LOADED_SPREAD}x; rerun the probe when the machine is idle"
        )
    })
}

/// Empty supersteps whose mean is far above their median: most took the typical time and a
/// few waited, for milliseconds, until other processes let a node run. Each batch's mean then
/// agrees with the next (no spread), yet describes the other processes, not the backend.
fn waited_for_cores(means: &[f64], typical: &[f64]) -> Option<String> {
    if means.is_empty() || typical.is_empty() {
        return None;
    }
    let mean = median(means.to_vec());
    let typical = median(typical.to_vec());
    (mean > LOADED_SPREAD * typical.max(0.0)).then(|| {
        format!(
            "the machine was busy during the probe: empty supersteps took {mean:.3e} s on average but {typical:.3e} s typically, more than {LOADED_SPREAD}x (some waited for a core); rerun the probe when the machine is idle"
        )
    })
}

/// The widest quartile ratio of probe samples taken as a quiet machine's.
const LOADED_SPREAD: f64 = 2.0;

/// Mean and 95% Student-t confidence interval.
fn mean_ci(values: &[f64]) -> (f64, [f64; 2]) {
    let n = values.len();
    if n == 0 {
        return (f64::NAN, [f64::NAN; 2]);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, [mean; 2]);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t95(n - 1) * (var / n as f64).sqrt();
    (mean, [mean - half, mean + half])
}

/// Two-sided 95% quantile of Student's t with `df` degrees of freedom.
pub(crate) fn t95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    TABLE.get(df.max(1) - 1).copied().unwrap_or(1.960)
}

impl ProbeReport {
    /// Writes the measurements into `platform`: `g` and `o` (clamped at 0), `L` at this `p`
    /// (added to a measured table; a formula is replaced by a one-point table) and `r_j` of the
    /// probed nodes.
    pub fn apply_to(&self, platform: &mut Platform, machine: &Machine) -> Result<()> {
        platform.network.g_s_per_byte = self.g_s_per_byte.max(0.0);
        platform.network.o_s = self.o_s.max(0.0);
        let mut table: Vec<BarrierPoint> = match &platform.network.l {
            BarrierCost::Table(points) => points.clone(),
            BarrierCost::Formula { .. } => Vec::new(),
        };
        // The stalls the ping-pong measured at this p stay with the new L.
        let measured = table.iter().find(|pt| pt.p == self.p);
        let point = BarrierPoint {
            p: self.p,
            l_s: self.L_s.max(0.0),
            message_stall_s: measured.map_or(0.0, |pt| pt.message_stall_s),
            message_stall_all_s: measured.and_then(|pt| pt.message_stall_all_s),
        };
        table.retain(|pt| pt.p != self.p);
        table.push(point);
        table.sort_by_key(|pt| pt.p);
        platform.network.l = BarrierCost::Table(table);
        for (node, r) in machine.nodes().iter().zip(&self.r) {
            if let Some(target) = platform.nodes.iter_mut().find(|n| n.name == node.name) {
                target.r = *r;
            }
        }
        Ok(platform.validate()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_interval_brackets_mean() {
        let (mean, [lo, hi]) = mean_ci(&[1.0, 2.0, 3.0]);
        assert_eq!(mean, 2.0);
        assert!((hi - mean - 4.303 * (1.0f64 / 3.0).sqrt()).abs() < 1e-9 && lo < mean);
    }

    #[test]
    fn sizes_are_cleaned_and_too_few_rejected() {
        let options = ProbeOptions {
            h_bytes: vec![1 << 20, 0, 4096, 4096],
            ..ProbeOptions::quick()
        };
        assert_eq!(checked(&options).unwrap().h_bytes, vec![4096, 1 << 20]);
        let one_size = ProbeOptions {
            h_bytes: vec![0, 4096, 4096],
            ..ProbeOptions::quick()
        };
        assert!(checked(&one_size).is_err());
    }

    #[test]
    fn slowness_is_relative_to_the_fastest_node_of_each_round() {
        let round = |g| Round {
            g,
            l: 1e-5,
            l_samples: vec![1e-5],
            l_typical: vec![1e-5],
            o: 0.0,
        };
        let per_node = vec![
            vec![round(2e-9), round(4e-9)],
            vec![round(1e-9), round(2e-9)],
            vec![round(3e-9), round(6e-9)],
        ];
        let report = summarise(&per_node);
        assert!((report.g_s_per_byte - 1.5e-9).abs() < 1e-21);
        assert_eq!(report.r, vec![2.0, 1.0, 3.0]);
        assert_eq!(report.r_ci[2], [3.0, 3.0]);
    }

    #[test]
    fn samples_that_agree_are_steady_and_scattered_ones_say_the_machine_was_busy() {
        assert_eq!(
            too_wide("L", &[0.5e-6, 0.6e-6, 0.55e-6, 0.7e-6, 30e-6]),
            None
        );
        let busy = too_wide("L", &[0.5e-6, 8e-6, 0.6e-6, 1.2e-3, 40e-6]).unwrap();
        assert!(
            busy.contains("samples of L spread from 6.000e-7 to 4.000e-5 s")
                && busy.contains("rerun the probe when the machine is idle"),
            "{busy}"
        );
        assert_eq!(too_wide("g", &[1e-9]), None, "one sample has no spread");
    }

    #[test]
    fn a_report_from_scattered_rounds_is_marked_loaded() {
        let round = |l: f64, typical: f64| Round {
            g: 1e-9,
            l,
            l_samples: vec![l],
            l_typical: vec![typical],
            o: 0.0,
        };
        let steady = summarise(&[vec![
            round(1e-6, 0.9e-6),
            round(1.1e-6, 1e-6),
            round(0.9e-6, 0.8e-6),
        ]]);
        assert_eq!(steady.loaded, None);
        let scattered = summarise(&[vec![
            round(1e-6, 1e-6),
            round(1e-3, 1e-6),
            round(7e-6, 1e-6),
        ]]);
        assert!(scattered.loaded.unwrap().contains("samples of L"));
        // Every batch waited alike: no spread, but the mean is 1000 typical supersteps.
        let waiting = summarise(&[vec![
            round(1.3e-3, 0.5e-6),
            round(1.2e-3, 0.6e-6),
            round(1.4e-3, 0.5e-6),
        ]]);
        let why = waiting.loaded.unwrap();
        assert!(
            why.contains("took 1.300e-3 s on average but 5.000e-7 s typically"),
            "{why}"
        );
    }
}
