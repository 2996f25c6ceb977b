//! Approach 1, measured (Sun & Rover IV-A's control program): search the problem size of each
//! configuration by running it until the measured speed-efficiency is within tolerance of
//! the target — bracket by doubling or halving `N`, then regula falsi on integer `N`.

use serde::Serialize;

use crate::error::{Result, StudyError};
use crate::runner::{Measurement, Runner};

/// At most this many sizes are measured per configuration.
const MAX_EVALUATIONS: usize = 40;

/// A bracket `[below, above]` of the target: `E_s(below) < target < E_s(above)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bracket {
    /// The largest size measured below the target.
    pub below: Measurement,
    /// The smallest size measured above the target.
    pub above: Measurement,
}

/// Where a search stands after bracketing.
pub enum Bracketing {
    /// A measured size is already within tolerance.
    Hit(Measurement),
    /// The target lies between two measured sizes.
    Between(Bracket),
}

/// At most this many times the spec's repetitions are run at a size whose `E_s` interval
/// misses the target, before the noise is blamed (as hyperfine extends a noisy benchmark).
const NOISE_REPETITIONS: u32 = 3;

/// Finds the size on configuration `index` whose measured `E_s` is within tolerance of the
/// target, starting the bracket at `start`. A size whose `E_s` interval misses the tolerance
/// band is measured again with more repetitions; if it still misses, the configuration is not
/// settled: the noise of the runs, not `N`, decided where the search stopped.
pub fn search(runner: &Runner<'_>, index: usize, start: u64) -> Result<Measurement> {
    let found = match bracket(runner, index, start)? {
        Bracketing::Hit(m) => m,
        Bracketing::Between(b) => refine(runner, index, b)?,
    };
    if !misses_target(runner, &found) {
        return Ok(found);
    }
    let runs = NOISE_REPETITIONS * runner.spec().repetitions.max(1);
    let again = runner.remeasure(index, found.n, runs)?;
    if misses_target(runner, &again) {
        return Err(noise(runner, index, &again));
    }
    Ok(again)
}

/// Whether `m`'s `E_s` interval lies wholly outside the tolerance band around the target,
/// or its noise is unknown (one run) while its `E_s` is outside the band. Runs that all
/// agree (the simulator, a command printing exact times) have no noise: their size is off
/// the target by integer `N` alone, and stands (see [`crate::study::warnings`]).
fn misses_target(runner: &Runner<'_>, m: &Measurement) -> bool {
    let spec = runner.spec();
    if spec.backend == "sim" {
        // Virtual time has no noise.
        return false;
    }
    let band = spec.tolerance * spec.target;
    let (lo, hi) = m.speed_efficiency_ci;
    let off = |e: f64| (e - spec.target).abs() > band;
    match m.time.samples {
        1 => off(m.speed_efficiency),
        _ => lo < hi && (hi < spec.target - band || lo > spec.target + band),
    }
}

/// The error of a size the noise settled: its `E_s` interval misses the target after the
/// extra repetitions. Its message starts with [`NOT_SETTLED_NOISE`].
fn noise(runner: &Runner<'_>, index: usize, m: &Measurement) -> StudyError {
    let spec = runner.spec();
    let (lo, hi) = m.speed_efficiency_ci;
    let message = format!(
        "{NOT_SETTLED_NOISE} E_s = {:.4} (95% interval [{lo:.4}, {hi:.4}]) at N = {} after {} \
         runs misses the target {} +/- {:.2}%, yet the search stopped there: the noise of the \
         runs (a loaded machine?), not N, decides; rerun on a quiet machine or raise repetitions",
        m.speed_efficiency,
        m.n,
        m.time.samples,
        spec.target,
        100.0 * spec.tolerance
    );
    StudyError::Configuration {
        configuration: runner.configurations()[index].configuration.label.clone(),
        message,
    }
}

/// How the message of a configuration the noise left unsettled starts (the reason "noise").
pub const NOT_SETTLED_NOISE: &str = "noise:";

/// Brackets the target on configuration `index` from `start` by doubling `N` while `E_s` is
/// below the target, or halving it while above, within the spec's `[n_min, n_max]`.
pub fn bracket(runner: &Runner<'_>, index: usize, start: u64) -> Result<Bracketing> {
    let spec = runner.spec();
    let mut current = runner.measure(index, start.clamp(spec.n_min, spec.n_max))?;
    let mut best = current.clone();
    let upward = current.speed_efficiency < spec.target;
    loop {
        if within_tolerance(runner, &current) {
            return Ok(Bracketing::Hit(current));
        }
        if (current.speed_efficiency < spec.target) != upward {
            let (below, above) = if upward {
                (best, current)
            } else {
                (current, best)
            };
            return Ok(Bracketing::Between(Bracket { below, above }));
        }
        let next = if upward {
            (current.n * 2).min(spec.n_max)
        } else {
            (current.n / 2).max(spec.n_min)
        };
        if next == current.n {
            return Err(unreachable(runner, index, upward));
        }
        best = current;
        current = runner.measure(index, next)?;
    }
}

fn refine(runner: &Runner<'_>, index: usize, mut b: Bracket) -> Result<Measurement> {
    let target = runner.spec().target;
    for _ in 0..MAX_EVALUATIONS {
        if b.above.n - b.below.n <= 1 {
            break;
        }
        let m = runner.measure(index, interpolate(&b, target))?;
        if within_tolerance(runner, &m) {
            return Ok(m);
        }
        if m.speed_efficiency < target {
            b.below = m;
        } else {
            b.above = m;
        }
    }
    // Adjacent sizes straddle the target: the closer one is the answer at integer N.
    let gap = |m: &Measurement| (m.speed_efficiency - target).abs();
    Ok(if gap(&b.below) <= gap(&b.above) {
        b.below
    } else {
        b.above
    })
}

/// Regula falsi on `(N, E_s)`, kept an eighth of the bracket away from its ends so a curved
/// `E_s(N)` cannot stall the search at one end.
fn interpolate(b: &Bracket, target: f64) -> u64 {
    let (lo, hi) = (b.below.n as f64, b.above.n as f64);
    let (e_lo, e_hi) = (b.below.speed_efficiency, b.above.speed_efficiency);
    let guess = lo + (target - e_lo) / (e_hi - e_lo) * (hi - lo);
    let margin = (hi - lo) / 8.0;
    let n = guess.clamp(lo + margin, hi - margin).round() as u64;
    n.clamp(b.below.n + 1, b.above.n - 1)
}

/// Whether `m` meets the target: within the relative tolerance, or (with repeated runs)
/// its confidence interval contains the target while being no wider than four tolerances —
/// then the noise, not the size, decides, and more sizes could not tell them apart. A wide
/// interval (three noisy runs) never counts as a hit: the search goes on with the median.
pub fn within_tolerance(runner: &Runner<'_>, m: &Measurement) -> bool {
    let spec = runner.spec();
    let band = spec.tolerance * spec.target;
    let (lo, hi) = m.speed_efficiency_ci;
    (m.speed_efficiency - spec.target).abs() <= band
        || (m.time.samples > 1 && lo <= spec.target && spec.target <= hi && hi - lo <= 4.0 * band)
}

/// Whether `E_s` over the sizes measured flattens out below `target`: its gains from the last
/// three sizes shrink (or vanish), and continuing them geometrically, their sum still falls
/// short of the target (so raising n_max would not help).
fn levels_off_below(measured: &[Measurement], target: f64) -> bool {
    let mut by_size: Vec<&Measurement> = measured.iter().collect();
    by_size.sort_by_key(|m| m.n);
    let [.., a, b, c] = by_size.as_slice() else {
        return false;
    };
    let (first, last) = (
        b.speed_efficiency - a.speed_efficiency,
        c.speed_efficiency - b.speed_efficiency,
    );
    if last <= 0.0 {
        return true;
    }
    let ratio = last / first;
    first > 0.0 && ratio < 1.0 && c.speed_efficiency + last * ratio / (1.0 - ratio) < target
}

/// The error of a search that ran out of sizes: upward, the highest `E_s` reached; downward,
/// the lowest (the target is met below `n_min`).
fn unreachable(runner: &Runner<'_>, index: usize, upward: bool) -> StudyError {
    let spec = runner.spec();
    let measured = runner.measurements_of(index);
    let by_efficiency =
        |a: &&Measurement, b: &&Measurement| a.speed_efficiency.total_cmp(&b.speed_efficiency);
    let extreme = if upward {
        measured.iter().max_by(by_efficiency)
    } else {
        measured.iter().min_by(by_efficiency)
    };
    let (e, n) = extreme.map_or((f64::NAN, 0), |m| (m.speed_efficiency, m.n));
    let message = if upward && levels_off_below(&measured, spec.target) {
        format!(
            "E_s levels off at {e:.4} (N = {n}) below the target {}: growing N up to {} barely \
             raises it, so this target is unreachable on this configuration; lower the target",
            spec.target, spec.n_max
        )
    } else {
        crate::study::warnings::unreachable_target(
            "E_s",
            spec.target,
            (spec.n_min as f64, spec.n_max as f64),
            (e, n as f64),
            crate::study::warnings::range_of(spec.surface),
        )
    };
    StudyError::Configuration {
        configuration: runner.configurations()[index].configuration.label.clone(),
        message,
    }
}
