//! Marked speed: the benchmarked sustained speed of one core of this machine.
//!
//! Sun, Chen & Wu (ICPP 2005 and JPDC 2008, section 4.3) run NPB kernels (LU, FT, BT, ...) on
//! each node "and take the average speed on each node as its marked speed". hetscale's suite has
//! the same spirit in four single-threaded kernels: dense GEMM and LU (faer), a complex FFT
//! (rustfft) and the memory-bound STREAM triad. Each is warmed up, repeated, and summarised by
//! its median rate; the marked speed is the mean of the four medians.
//!
//! A timed sample is not one run of a kernel but as many back-to-back runs as it takes to last
//! [`BenchOptions::min_sample_s`] of wall time (as hyperfine and criterion do), and its rate is
//! `flop x runs / elapsed`. A single run lasts a few to tens of milliseconds, the order of a
//! timer tick, a scheduler slice or a CPU quota's period, so where a preemption or a throttle
//! falls decides a single run's rate; over a quarter of a second such events average out.

use std::time::Instant;

use faer::{Mat, Par};
use num_complex::Complex64;
use serde::Serialize;

use crate::error::{Result, StudyError};
use crate::stats::{Summary, summarize};

/// Problem sizes and repetitions of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BenchOptions {
    /// GEMM order.
    pub gemm_n: usize,
    /// LU order.
    pub lu_n: usize,
    /// FFT length (a power of two).
    pub fft_len: usize,
    /// Triad vector length.
    pub triad_len: usize,
    /// Unrecorded runs before the timed ones.
    pub warmup: usize,
    /// Timed samples per kernel.
    pub repetitions: usize,
    /// Each sample (and each warm-up) repeats the kernel until it has lasted at least this
    /// many seconds of wall time; 0 times single runs.
    pub min_sample_s: f64,
}

/// The default [`BenchOptions::min_sample_s`]. Under a CFS quota a single short run catches a
/// throttle more or less by chance, so hosts' marked-speed ratios miss their quota ratios from
/// one measurement to the next (by up to 18% with single runs of 5-500 ms on the testbed's
/// hosts of 0.15-0.6 of a core at a 10 ms period,
/// `mpirun -np 4 hetscale bench --backend mpi --min-sample-time 0`; the testbed is
/// docs/testbed.md). Samples of at least 0.25 s span 25 or more such periods, so one throttle
/// more or less moves a sample by 4% or less, and the median of ten by far less. A longer
/// minimum costs time on a slow host without narrowing the spread further.
pub const MIN_SAMPLE_S: f64 = 0.25;

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            gemm_n: 512,
            lu_n: 1024,
            fft_len: 1 << 20,
            // Three arrays of 8 Mi doubles (192 MiB): far beyond any cache.
            triad_len: 1 << 23,
            warmup: 1,
            repetitions: 10,
            min_sample_s: MIN_SAMPLE_S,
        }
    }
}

impl BenchOptions {
    /// Small sizes, for tests and a first look (caches flatter the triad).
    pub fn quick() -> Self {
        Self {
            gemm_n: 128,
            lu_n: 128,
            fft_len: 1 << 12,
            triad_len: 1 << 16,
            warmup: 1,
            repetitions: 3,
            // Single runs: quick stays quick (tests, a first look).
            min_sample_s: 0.0,
        }
    }
}

/// One kernel's rates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelSpeed {
    /// Kernel name.
    pub name: &'static str,
    /// What one run computes.
    pub problem: String,
    /// Floating-point operations per run.
    #[serde(rename = "work_flop")]
    pub flop_per_run: f64,
    /// Statistics of the rate over the timed runs, Mflop/s (in JSON flop/s).
    #[serde(
        rename = "rate_stats_flops",
        serialize_with = "crate::json::summary_mflops_as_flops"
    )]
    pub mflops: Summary,
}

/// The suite's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MarkedSpeedReport {
    /// Cores of this machine (one node each on the `local` platform).
    pub cores: usize,
    /// Each kernel's rates.
    pub kernels: Vec<KernelSpeed>,
    /// Marked speed of one core: the mean of the kernels' median rates, Mflop/s (flop/s in
    /// JSON, as everywhere).
    #[serde(
        rename = "marked_speed_flops",
        serialize_with = "crate::json::mflops_as_flops"
    )]
    pub marked_speed: f64,
    /// The options used.
    pub options: BenchOptions,
}

/// How wide, relative to the marked speed, its 95% interval may be before the marked speed
/// is not to be trusted: a quiet core repeats a kernel within a few percent; wider is other
/// work on the machine (or frequency scaling), and every `E_s` built on it inherits it.
pub const MAX_RELATIVE_WIDTH: f64 = 0.10;

impl MarkedSpeedReport {
    /// The 95% interval of the marked speed, Mflop/s: the mean of the kernels' interval ends,
    /// as the marked speed is the mean of their medians.
    pub fn interval(&self) -> (f64, f64) {
        let count = self.kernels.len().max(1) as f64;
        let sum = |end: fn(&Summary) -> f64| {
            self.kernels.iter().map(|k| end(&k.mflops)).sum::<f64>() / count
        };
        (sum(|s| s.median_ci.0), sum(|s| s.median_ci.1))
    }

    /// What to say when the marked speed's interval is wider than [`MAX_RELATIVE_WIDTH`] of
    /// it (the machine was loaded while it was measured), naming the kernel that spread most.
    pub fn spread_warning(&self) -> Option<String> {
        let (lo, hi) = self.interval();
        let width = (hi - lo) / self.marked_speed;
        if width <= MAX_RELATIVE_WIDTH {
            return None;
        }
        let relative =
            |k: &&KernelSpeed| (k.mflops.median_ci.1 - k.mflops.median_ci.0) / k.mflops.median;
        let widest = self
            .kernels
            .iter()
            .max_by(|a, b| relative(a).total_cmp(&relative(b)))?;
        Some(format!(
            "the marked speed {:.1} Mflop/s has a 95% interval of {lo:.1}-{hi:.1} Mflop/s ({:.0}% \
             of it, more than {:.0}%; {} spread most, {:.1}-{:.1} Mflop/s): the machine was \
             loaded while it was measured, so this speed, and every E_s on it, is not to be \
             trusted; rerun hetscale bench on a quiet machine",
            self.marked_speed,
            100.0 * width,
            100.0 * MAX_RELATIVE_WIDTH,
            widest.name,
            widest.mflops.median_ci.0,
            widest.mflops.median_ci.1
        ))
    }
}

/// Runs the suite on one core.
pub fn measure(options: &BenchOptions) -> Result<MarkedSpeedReport> {
    check(options)?;
    let kernels = vec![gemm(options)?, lu(options)?, fft(options)?, triad(options)?];
    let marked_speed = kernels.iter().map(|k| k.mflops.median).sum::<f64>() / kernels.len() as f64;
    Ok(MarkedSpeedReport {
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernels,
        marked_speed,
        options: *options,
    })
}

fn check(options: &BenchOptions) -> Result<()> {
    let bad = |why: String| Err(StudyError::Stats(why));
    if options.repetitions == 0 {
        return bad("benchmark repetitions = 0: use at least 1".into());
    }
    if !(options.min_sample_s.is_finite() && (0.0..=60.0).contains(&options.min_sample_s)) {
        return bad(format!(
            "minimum sample time {} s: give 0 to 60 seconds",
            options.min_sample_s
        ));
    }
    if !options.fft_len.is_power_of_two() {
        return bad(format!(
            "FFT length {} is not a power of two",
            options.fft_len
        ));
    }
    if [options.gemm_n, options.lu_n, options.triad_len].contains(&0) {
        return bad("benchmark sizes must be positive".into());
    }
    Ok(())
}

/// Times `run` (after the warm-up) and summarises `flop / time` in Mflop/s, each sample
/// [`sample`]'s runs over their elapsed time.
fn rates(options: &BenchOptions, flop: f64, mut run: impl FnMut()) -> Result<Summary> {
    let start = Instant::now();
    let mut clock = || start.elapsed().as_secs_f64();
    (0..options.warmup).for_each(|_| {
        sample(options.min_sample_s, &mut clock, &mut run);
    });
    let samples: Vec<f64> = (0..options.repetitions)
        .map(|_| {
            let (runs, elapsed) = sample(options.min_sample_s, &mut clock, &mut run);
            flop * runs as f64 / elapsed.max(1e-9) / 1e6
        })
        .collect();
    summarize(&samples)
}

/// Runs `run` back to back until `clock` (seconds) has advanced by at least `min_s` since
/// the first run started, at least once: `(runs, elapsed seconds)`.
fn sample(min_s: f64, clock: &mut impl FnMut() -> f64, run: &mut impl FnMut()) -> (u64, f64) {
    let start = clock();
    let mut runs = 0u64;
    loop {
        run();
        runs += 1;
        let elapsed = clock() - start;
        if elapsed >= min_s {
            return (runs, elapsed);
        }
    }
}

fn matrix(n: usize, seed: u64) -> Mat<f64> {
    // A cheap deterministic fill with a dominant diagonal, so LU needs no large pivots.
    Mat::from_fn(n, n, |i, j| {
        let x = ((i * 31 + j * 17) as u64 ^ seed) % 1000;
        x as f64 / 1000.0 + if i == j { n as f64 } else { 0.0 }
    })
}

fn gemm(options: &BenchOptions) -> Result<KernelSpeed> {
    let n = options.gemm_n;
    let (a, b) = (matrix(n, 1), matrix(n, 2));
    let mut c = Mat::<f64>::zeros(n, n);
    let flop = 2.0 * (n as f64).powi(3);
    let mflops = rates(options, flop, || {
        faer::linalg::matmul::matmul(
            c.as_mut(),
            faer::Accum::Replace,
            a.as_ref(),
            b.as_ref(),
            1.0,
            Par::Seq,
        );
        std::hint::black_box(&c);
    })?;
    Ok(KernelSpeed {
        name: "gemm",
        problem: format!("C = A B, {n} x {n} doubles (faer)"),
        flop_per_run: flop,
        mflops,
    })
}

fn lu(options: &BenchOptions) -> Result<KernelSpeed> {
    let n = options.lu_n;
    let a = matrix(n, 3);
    let flop = 2.0 / 3.0 * (n as f64).powi(3);
    let mflops = rates(options, flop, || {
        std::hint::black_box(a.partial_piv_lu());
    })?;
    Ok(KernelSpeed {
        name: "lu",
        problem: format!("partial-pivoting LU, {n} x {n} doubles (faer), 2/3 n^3 flop"),
        flop_per_run: flop,
        mflops,
    })
}

fn fft(options: &BenchOptions) -> Result<KernelSpeed> {
    let len = options.fft_len;
    let plan = rustfft::FftPlanner::<f64>::new().plan_fft_forward(len);
    let mut data: Vec<Complex64> = (0..len)
        .map(|i| Complex64::new((i % 7) as f64, (i % 3) as f64))
        .collect();
    // The conventional FFT count, 5 N log2 N.
    let flop = 5.0 * len as f64 * (len as f64).log2();
    let mflops = rates(options, flop, || {
        plan.process(&mut data);
        std::hint::black_box(&data);
    })?;
    Ok(KernelSpeed {
        name: "fft",
        problem: format!("complex FFT of {len} points (rustfft), 5 N log2 N flop"),
        flop_per_run: flop,
        mflops,
    })
}

fn triad(options: &BenchOptions) -> Result<KernelSpeed> {
    let len = options.triad_len;
    let (b, c) = (vec![1.5f64; len], vec![2.5f64; len]);
    let mut a = vec![0.0f64; len];
    let flop = 2.0 * len as f64;
    let mflops = rates(options, flop, || {
        for ((x, y), z) in a.iter_mut().zip(&b).zip(&c) {
            *x = y + 3.0 * z;
        }
        std::hint::black_box(&a);
    })?;
    Ok(KernelSpeed {
        name: "triad",
        problem: format!("STREAM triad a = b + s c on {len} doubles, 2 flop per element"),
        flop_per_run: flop,
        mflops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_measures_four_positive_rates_and_averages_them() {
        let report = measure(&BenchOptions::quick()).unwrap();
        let names: Vec<&str> = report.kernels.iter().map(|k| k.name).collect();
        assert_eq!(names, ["gemm", "lu", "fft", "triad"]);
        assert!(
            report
                .kernels
                .iter()
                .all(|k| k.mflops.median > 0.0 && k.mflops.samples == 3)
        );
        let mean = report.kernels.iter().map(|k| k.mflops.median).sum::<f64>() / 4.0;
        assert!((report.marked_speed - mean).abs() < 1e-9 * mean);
    }

    fn kernel(name: &'static str, rates: &[f64]) -> KernelSpeed {
        KernelSpeed {
            name,
            problem: String::new(),
            flop_per_run: 1.0,
            mflops: summarize(rates).unwrap(),
        }
    }

    fn report(gemm: &[f64]) -> MarkedSpeedReport {
        let steady = [1000.0, 1010.0, 990.0];
        let kernels = vec![
            kernel("gemm", gemm),
            kernel("lu", &steady),
            kernel("fft", &steady),
            kernel("triad", &steady),
        ];
        let marked_speed = kernels.iter().map(|k| k.mflops.median).sum::<f64>() / 4.0;
        MarkedSpeedReport {
            cores: 2,
            kernels,
            marked_speed,
            options: BenchOptions::quick(),
        }
    }

    #[test]
    fn a_marked_speed_whose_interval_is_wider_than_a_tenth_of_it_is_not_trusted() {
        // Steady kernels: an interval 2% wide.
        let quiet = report(&[1000.0, 1010.0, 990.0]);
        assert_eq!(quiet.interval(), (990.0, 1010.0));
        assert_eq!(quiet.spread_warning(), None);
        // A loaded host's GEMM, 123-1,890 Mflop/s around 1,000.
        let loaded = report(&[123.0, 1000.0, 1890.0]);
        let (lo, hi) = loaded.interval();
        assert!(
            (lo - 773.25).abs() < 1e-9 && (hi - 1230.0).abs() < 1e-9,
            "{lo} {hi}"
        );
        let warning = loaded.spread_warning().unwrap();
        assert!(
            warning.starts_with("the marked speed 1000.0 Mflop/s has a 95% interval of 773.2-1230.0 Mflop/s (46% of it, more than 10%; gemm spread most, 123.0-1890.0 Mflop/s): the machine was loaded"),
            "{warning}"
        );
        // Just over the line, and just under it.
        assert!(report(&[900.0, 1000.0, 1350.0]).spread_warning().is_some());
        assert!(report(&[950.0, 1000.0, 1280.0]).spread_warning().is_none());
    }

    /// A clock that advances by `step` seconds at each run, read before and after.
    fn fake(step: f64) -> (impl FnMut() -> f64, impl FnMut()) {
        let now = std::rc::Rc::new(std::cell::Cell::new(0.0));
        let (read, tick) = (now.clone(), now);
        (move || read.get(), move || tick.set(tick.get() + step))
    }

    #[test]
    fn a_sample_repeats_the_kernel_until_it_has_lasted_the_minimum() {
        // 30 ms runs, 0.25 s minimum: 9 runs, 0.27 s.
        let (mut clock, mut run) = fake(0.03);
        let (runs, elapsed) = sample(0.25, &mut clock, &mut run);
        assert_eq!(runs, 9);
        assert!((elapsed - 0.27).abs() < 1e-12, "{elapsed}");
        // A run longer than the minimum: once. A minimum of 0: once (single runs).
        let (mut clock, mut run) = fake(0.4);
        assert_eq!(sample(0.25, &mut clock, &mut run).0, 1);
        let (mut clock, mut run) = fake(1e-3);
        assert_eq!(sample(0.0, &mut clock, &mut run), (1, 1e-3));
        // Exactly the minimum is enough: 0.25 / 0.0625 = 4 runs, no fifth.
        let (mut clock, mut run) = fake(0.0625);
        assert_eq!(sample(0.25, &mut clock, &mut run), (4, 0.25));
    }

    #[test]
    fn bad_options_are_refused() {
        let mut options = BenchOptions::quick();
        options.fft_len = 1000;
        assert!(
            measure(&options)
                .unwrap_err()
                .to_string()
                .contains("power of two")
        );
        options = BenchOptions::quick();
        options.repetitions = 0;
        assert!(measure(&options).is_err());
        options = BenchOptions::quick();
        options.min_sample_s = f64::NAN;
        assert!(
            measure(&options)
                .unwrap_err()
                .to_string()
                .contains("minimum sample time")
        );
    }
}
