//! Measuring a backend's HBSP^1 parameters `g`, `L`, `o` and `r_j`, with confidence
//! intervals, in the manner of BSPlib's `bspprobe`, LPF's `lpf_probe` and BSPonMPI's
//! `bompiprobe`.
//!
//! - `g` and `L`: supersteps that realise a full h-relation (every node sends `h / (p - 1)`
//!   bytes to every other node) for several `h` from 0 to megabytes; the per-size medians of
//!   each round are fitted to `time = g h + L` by least squares on relative errors.
//! - `o`: node 0 sends `m` small messages to node 1, compared with one message of the same
//!   total size; `o = (t_m - t_1) / (m - 1)`.
//! - `r_j`: each node times its own injection of one large message (its `send`);
//!   `r_j = t_j / min_k t_k`, per round.
//!
//! Each estimate is repeated over independent rounds; the report gives the mean and a 95%
//! Student-t confidence interval over rounds.

use serde::Serialize;

use crate::backend::Backend;
use crate::ctx::Ctx;
use crate::error::{HbspError, Result};
use crate::platform::{BarrierCost, BarrierPoint, Machine, Platform};

/// What to measure and how often.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeOptions {
    /// h-relation sizes in bytes per node (0 is added if missing).
    pub h_bytes: Vec<usize>,
    /// Supersteps timed per size and round (the median is used).
    pub samples: usize,
    /// Independent rounds, over which the confidence intervals are taken (at least 2).
    pub rounds: usize,
    /// Number of small messages for the `o` probe.
    pub small_messages: usize,
    /// Size of the message each node injects for the `r_j` probe, bytes.
    pub injection_bytes: usize,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        Self {
            h_bytes: vec![0, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20],
            samples: 7,
            rounds: 7,
            small_messages: 2000,
            injection_bytes: 4 << 20,
        }
    }
}

impl ProbeOptions {
    /// Small sizes and few repetitions, for tests and quick looks.
    pub fn quick() -> Self {
        Self {
            h_bytes: vec![0, 16 << 10, 256 << 10, 1 << 20],
            samples: 3,
            rounds: 3,
            small_messages: 200,
            injection_bytes: 1 << 20,
        }
    }
}

/// Measured parameters with 95% confidence intervals (`[lo, hi]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[allow(non_snake_case)]
pub struct ProbeReport {
    /// Number of nodes probed.
    pub p: usize,
    /// `g`, seconds per byte.
    pub g_s_per_byte: f64,
    /// Confidence interval of `g`.
    pub g_s_per_byte_ci: [f64; 2],
    /// `L(p)`, seconds.
    pub L_s: f64,
    /// Confidence interval of `L`.
    pub L_s_ci: [f64; 2],
    /// `o`, seconds per message.
    pub o_s: f64,
    /// Confidence interval of `o`.
    pub o_s_ci: [f64; 2],
    /// `r_j` per node, fastest = 1.
    pub r: Vec<f64>,
    /// Confidence interval of each `r_j`.
    pub r_ci: Vec<[f64; 2]>,
    /// Rounds the intervals are taken over.
    pub rounds: usize,
}

/// One round's estimates.
#[derive(Debug, Clone, Default)]
struct Round {
    g: f64,
    l: f64,
    o: f64,
    /// This node's injection time of the large message.
    injection_s: f64,
}

/// Measures `g`, `L`, `o` and `r_j` of `machine` on `backend`.
pub fn probe(backend: &Backend, machine: &Machine, options: &ProbeOptions) -> Result<ProbeReport> {
    let options = checked(options)?;
    let output = crate::run(backend, machine, |ctx| measure_rounds(ctx, &options))?;
    Ok(summarise(&output.results))
}

fn checked(options: &ProbeOptions) -> Result<ProbeOptions> {
    let mut options = options.clone();
    if options.rounds < 2 || options.samples == 0 || options.small_messages < 2 {
        return Err(HbspError::InvalidBackend(
            "probe needs rounds >= 2, samples >= 1 and small_messages >= 2".into(),
        ));
    }
    if !options.h_bytes.contains(&0) {
        options.h_bytes.insert(0, 0);
    }
    if options.h_bytes.len() < 2 {
        options.h_bytes.push(64 << 10);
    }
    Ok(options)
}

fn measure_rounds(ctx: &mut Ctx<'_>, options: &ProbeOptions) -> Result<Vec<Round>> {
    (0..options.rounds)
        .map(|_| measure_round(ctx, options))
        .collect()
}

fn measure_round(ctx: &mut Ctx<'_>, options: &ProbeOptions) -> Result<Round> {
    let mut points = Vec::with_capacity(options.h_bytes.len());
    for &h in &options.h_bytes {
        let times = (0..options.samples)
            .map(|_| time_superstep(ctx, |ctx| total_exchange(ctx, h)))
            .collect::<Result<Vec<_>>>()?;
        points.push((h as f64, median(times)));
    }
    let (g, l) = least_squares(&points);
    let o = overhead(ctx, options)?;
    let injection_s = injection_time(ctx, options)?;
    Ok(Round {
        g,
        l,
        o,
        injection_s,
    })
}

/// Time of one superstep doing `body`, as seen by node 0 between two barriers.
fn time_superstep(ctx: &mut Ctx<'_>, body: impl FnOnce(&mut Ctx<'_>) -> Result<()>) -> Result<f64> {
    ctx.sync()?;
    let start = ctx.time();
    body(ctx)?;
    ctx.sync()?;
    let elapsed = ctx.time() - start;
    ctx.recv_all::<u8>()?;
    Ok(elapsed)
}

fn peers(ctx: &Ctx<'_>) -> Vec<usize> {
    let me = ctx.pid();
    match ctx.nprocs() {
        1 => vec![me],
        p => (0..p).filter(|&j| j != me).collect(),
    }
}

fn total_exchange(ctx: &mut Ctx<'_>, h: usize) -> Result<()> {
    if h == 0 {
        return Ok(());
    }
    let to = peers(ctx);
    let chunk = vec![0u8; h.div_ceil(to.len())];
    for &j in &to {
        ctx.send(j, 0, &chunk)?;
    }
    Ok(())
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

/// Each node's time to inject one large message (its `send`, which on threads copies the
/// payload out of the program), median over samples; `r_j` is the ratio to the fastest node.
fn injection_time(ctx: &mut Ctx<'_>, options: &ProbeOptions) -> Result<f64> {
    let payload = vec![0u8; options.injection_bytes];
    let to = (ctx.pid() + 1) % ctx.nprocs();
    let mut samples = Vec::with_capacity(options.samples);
    for _ in 0..options.samples {
        ctx.sync()?;
        let start = ctx.time();
        ctx.send(to, 0, &payload)?;
        samples.push(ctx.time() - start);
        ctx.sync()?;
        ctx.recv_all::<u8>()?;
    }
    Ok(median(samples).max(f64::MIN_POSITIVE))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// Slope and intercept of the line through `points` by least squares on relative errors
/// (weights `1 / y^2`), so sizes spanning decades each count and the intercept is set by the
/// small ones rather than extrapolated from the large ones.
fn least_squares(points: &[(f64, f64)]) -> (f64, f64) {
    let weight = |y: f64| if y > 0.0 { 1.0 / (y * y) } else { 1.0 };
    let sw: f64 = points.iter().map(|p| weight(p.1)).sum();
    let mean_x = points.iter().map(|p| weight(p.1) * p.0).sum::<f64>() / sw;
    let mean_y = points.iter().map(|p| weight(p.1) * p.1).sum::<f64>() / sw;
    let sxx: f64 = points
        .iter()
        .map(|p| weight(p.1) * (p.0 - mean_x).powi(2))
        .sum();
    let sxy: f64 = points
        .iter()
        .map(|p| weight(p.1) * (p.0 - mean_x) * (p.1 - mean_y))
        .sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (slope, mean_y - slope * mean_x)
}

/// Node 0's rounds give `g`, `L` and `o`; every node's own injection times give the `r_j`.
fn summarise(per_node: &[Vec<Round>]) -> ProbeReport {
    let rounds = &per_node[0];
    let column = |f: &dyn Fn(&Round) -> f64| -> Vec<f64> { rounds.iter().map(f).collect() };
    let (g_s_per_byte, g_s_per_byte_ci) = mean_ci(&column(&|r| r.g));
    let (l_s, l_s_ci) = mean_ci(&column(&|r| r.l));
    let (o_s, o_s_ci) = mean_ci(&column(&|r| r.o));
    let slowness: Vec<Vec<f64>> = (0..rounds.len())
        .map(|k| {
            let times: Vec<f64> = per_node.iter().map(|node| node[k].injection_s).collect();
            let fastest = times.iter().copied().fold(f64::INFINITY, f64::min);
            times.iter().map(|t| t / fastest).collect()
        })
        .collect();
    let (r, r_ci) = (0..per_node.len())
        .map(|j| mean_ci(&slowness.iter().map(|round| round[j]).collect::<Vec<_>>()))
        .unzip();
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
    }
}

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
fn t95(df: usize) -> f64 {
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
        let point = BarrierPoint {
            p: self.p,
            l_s: self.L_s.max(0.0),
        };
        let mut table = match &platform.network.l {
            BarrierCost::Table(points) => {
                points.iter().copied().filter(|pt| pt.p != self.p).collect()
            }
            BarrierCost::Formula { .. } => Vec::new(),
        };
        table.push(point);
        table.sort_by_key(|pt| pt.p);
        platform.network.l = BarrierCost::Table(table);
        for (node, r) in machine.nodes().iter().zip(&self.r) {
            if let Some(target) = platform.nodes.iter_mut().find(|n| n.name == node.name) {
                target.r = *r;
            }
        }
        platform.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_squares_recovers_a_line() {
        let points: Vec<(f64, f64)> = (0..5)
            .map(|i| (i as f64 * 1e3, 2e-9 * i as f64 * 1e3 + 5e-6))
            .collect();
        let (g, l) = least_squares(&points);
        assert!((g - 2e-9).abs() < 1e-15 && (l - 5e-6).abs() < 1e-12);
    }

    #[test]
    fn confidence_interval_brackets_mean() {
        let (mean, [lo, hi]) = mean_ci(&[1.0, 2.0, 3.0]);
        assert_eq!(mean, 2.0);
        assert!((hi - mean - 4.303 * (1.0f64 / 3.0).sqrt()).abs() < 1e-9 && lo < mean);
    }
}
