//! The supersteps after compute (timed beside those of every node, `ping_pong`): every node
//! first computes `d` seconds at its marked speed, then the superstep moves the same
//! messages as one of every node, so what it takes beyond `d` and beyond those is the stall
//! a compute phase adds ([`hetscale_machine::compute_stall`], written as `[[machine.compute_stall]]`).
//!
//! On a real backend a node computes by spinning a loop of dependent multiply-adds (it holds
//! no data, so no cache or memory effect of a program's compute enters) for `d` times the
//! loop's long-run rate on that node, measured first over many of a CPU quota's periods,
//! as the marked speed is. On `sim` it declares `d` seconds of work at its marked speed and
//! spins nothing, so the probe measures back the stall the platform charges.

use std::time::Instant;

use hbsp::Ctx;
use hbsp::Result;
use hetscale_machine::compute_stall::ComputeStallPoint;
use hetscale_machine::platform::Platform;

/// Compute lengths beyond this, s (a CPU quota's period), are timed in one round of every
/// `stride` ([`timed_in_round`]).
pub(super) const LONG_S: f64 = 10e-3;

/// Whether the supersteps after `d` of compute are timed in `round`: every round for lengths
/// up to [`LONG_S`], one round of every `stride` beyond. A long length costs `d` on every
/// node each time, and its stall, a few quota periods at most, is a smaller share of it, so
/// fewer samples give its mean to the same share. The `i`-th block of `stride` rounds times
/// it in its `i mod stride`-th round, so that its samples take the rounds' roots and
/// directions in turn (a fixed offset would take one root and one direction only).
pub(super) fn timed_in_round(d: f64, round: usize, stride: usize) -> bool {
    let stride = stride.max(1);
    d <= LONG_S || round % stride == (round / stride) % stride
}

/// How a node computes `d` seconds: operations declared per second (its marked speed) and,
/// on a real backend, loop iterations per second.
#[derive(Debug, Clone, Copy)]
pub(super) struct Computer {
    ops_per_s: f64,
    iterations_per_s: Option<f64>,
}

impl Computer {
    /// `ops_per_s`: the node's marked speed in operations per second; `calibration_s`: how
    /// long to time the loop, or `None` on `sim` (no loop).
    pub(super) fn new(ops_per_s: f64, calibration_s: Option<f64>) -> Self {
        Self {
            ops_per_s,
            iterations_per_s: calibration_s.map(loop_rate),
        }
    }

    /// Computes `d` seconds at the node's speed, declared as work.
    pub(super) fn compute(&self, ctx: &mut Ctx<'_>, d: f64) -> Result<()> {
        let iterations = self.iterations_per_s.map_or(0, |rate| (d * rate) as u64);
        ctx.compute(d * self.ops_per_s, || spin(iterations))?;
        Ok(())
    }
}

/// `n` dependent multiply-adds.
fn spin(n: u64) -> f64 {
    let mut a = 1.0_f64;
    for _ in 0..n {
        a = std::hint::black_box(a * 1.000_000_1 + 1e-9);
    }
    a
}

/// The loop's iterations per second over at least `seconds` of wall time.
fn loop_rate(seconds: f64) -> f64 {
    let start = Instant::now();
    let mut done = 0_u64;
    let chunk = 1 << 14;
    while start.elapsed().as_secs_f64() < seconds || done == 0 {
        std::hint::black_box(spin(chunk));
        done += chunk;
    }
    done as f64 / start.elapsed().as_secs_f64()
}

/// Per compute length `d`: the stall, the supersteps' mean excess over those of every node
/// without compute, less `d`, at least 0, and its 95% interval; `excess[k]` is that mean
/// excess after `d[k]` of compute and its interval's half width.
pub(super) fn stalls(d: &[f64], excess: &[(f64, f64)]) -> Vec<(f64, [f64; 2])> {
    d.iter()
        .zip(excess)
        .map(|(&d, &(excess, half_width))| {
            let stall = excess - d;
            (
                stall.max(0.0),
                [(stall - half_width).max(0.0), (stall + half_width).max(0.0)],
            )
        })
        .collect()
}

/// Writes the stalls as the platform's `[[machine.compute_stall]]` points at `p` (replacing
/// those measured at `p`), with `source`. The platform has a `[machine]` table already (the
/// segments were written first).
pub(super) fn apply_to(
    platform: &mut Platform,
    p: usize,
    d: &[f64],
    stalls: &[(f64, [f64; 2])],
    source: &str,
) {
    let Some(model) = platform.machine.as_mut() else {
        return;
    };
    model.compute_stall.retain(|s| s.p != p);
    model
        .compute_stall
        .extend(
            d.iter()
                .zip(stalls)
                .map(|(&compute_s, &(stall_s, _))| ComputeStallPoint {
                    p,
                    compute_s,
                    stall_s,
                    source: Some(source.to_owned()),
                }),
        );
    model
        .compute_stall
        .sort_by(|a, b| a.p.cmp(&b.p).then(a.compute_s.total_cmp(&b.compute_s)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_beyond_a_quota_period_are_timed_once_per_stride() {
        let rounds = |d: f64| (0..32).filter(|&r| timed_in_round(d, r, 8)).count();
        assert_eq!(rounds(0.3e-3), 32);
        assert_eq!(rounds(LONG_S), 32);
        assert_eq!(rounds(30e-3), 4);
        assert_eq!(rounds(100e-3), 4);
        // The first round always times every length, so each has a sample.
        assert!(timed_in_round(1.0, 0, 8));
        assert_eq!((0..5).filter(|&r| timed_in_round(1.0, r, 0)).count(), 5);
        // On 8 nodes (root = round mod 8, direction = round mod 2) a long length's samples
        // take every root and both directions.
        let timed: Vec<usize> = (0..64).filter(|&r| timed_in_round(30e-3, r, 8)).collect();
        let mut roots: Vec<usize> = timed.iter().map(|r| r % 8).collect();
        roots.sort_unstable();
        assert_eq!(roots, (0..8).collect::<Vec<_>>(), "{timed:?}");
        assert!(timed.iter().any(|r| r % 2 == 0) && timed.iter().any(|r| r % 2 == 1));
    }

    #[test]
    fn the_stall_is_the_mean_beyond_the_compute_and_the_supersteps_without_it() {
        // After 1 ms of compute: 1.5 ms beyond the supersteps without it (a stall of 0.5 ms);
        // after 10 ms: 9 ms beyond them, less than the compute (read as no stall).
        let excess = [(1.5e-3, 0.1e-3), (9e-3, 0.1e-3)];
        let got = stalls(&[1e-3, 10e-3], &excess);
        assert!((got[0].0 - 0.5e-3).abs() < 1e-12, "{got:?}");
        let [lo, hi] = got[0].1;
        assert!(
            (lo - 0.4e-3).abs() < 1e-12 && (hi - 0.6e-3).abs() < 1e-12,
            "{got:?}"
        );
        assert_eq!(got[1].0, 0.0);
    }

    #[test]
    fn the_loop_rate_is_positive_and_finite() {
        let rate = loop_rate(0.01);
        assert!(rate.is_finite() && rate > 0.0, "{rate}");
    }
}
