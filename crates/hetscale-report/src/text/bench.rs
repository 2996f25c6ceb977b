//! `hetscale bench`: the marked speed of this machine's cores, or of each host of an MPI job.

use hetscale_study::speed::bench::HostSpeed;
use hetscale_study::speed::marked_speed::{BenchOptions, MarkedSpeedReport};

/// The suite's kernels, each one's median rate with its interval and MAD, then the marked
/// speed they make.
pub fn suite(report: &MarkedSpeedReport) -> String {
    let mut out = format!(
        "{:<6} {:>12} {:>12} {:>10} {:>10}  {}\n",
        "kernel", "median", "95% CI low", "high", "MAD", "problem"
    );
    for k in &report.kernels {
        let s = &k.mflops;
        out.push_str(&format!(
            "{:<6} {:>12.1} {:>12.1} {:>10.1} {:>10.1}  {}\n",
            k.name, s.median, s.median_ci.0, s.median_ci.1, s.mad, k.problem
        ));
    }
    let (lo, hi) = report.interval();
    out.push_str(&format!(
        "(rates in Mflop/s over {} timed samples {} after {} warm-up)\nmarked_speed = {:.1} Mflop/s per core, 95% CI [{lo:.1}, {hi:.1}] (mean of the medians, as JPDC section 4.3 averages NPB kernels); {} cores\n",
        report.options.repetitions,
        sample_words(&report.options),
        report.options.warmup,
        report.marked_speed,
        report.cores
    ));
    out
}

/// What one sample is: `of one run each`, or `of at least 0.25 s each`.
fn sample_words(options: &BenchOptions) -> String {
    if options.min_sample_s > 0.0 {
        // Rounded: 20 periods of 0.1 s print as 2, not 1.9999999999999998.
        let seconds = (options.min_sample_s * 1e6).round() / 1e6;
        format!("of at least {seconds} s each")
    } else {
        "of one run each".into()
    }
}

/// Each host's marked speed per core with its interval and ranks, all ranks measuring at once.
pub fn hosts(hosts: &[HostSpeed], options: &BenchOptions) -> String {
    let mut out = format!(
        "{:<16} {:>12} {:>12} {:>10}  ranks\n",
        "host", "Mflop/s", "95% CI low", "high"
    );
    for h in hosts {
        let ranks: Vec<String> = h.ranks.iter().map(|r| r.to_string()).collect();
        out.push_str(&format!(
            "{:<16} {:>12.1} {:>12.1} {:>10.1}  {}\n",
            h.host,
            h.marked_speed,
            h.interval.0,
            h.interval.1,
            ranks.join(",")
        ));
    }
    out.push_str(&format!(
        "(marked speed per core of each host, all ranks measuring at once: the mean of the medians of GEMM, LU, FFT and the STREAM triad over {} timed samples {})\n",
        options.repetitions,
        sample_words(options)
    ));
    out
}
