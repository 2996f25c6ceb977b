//! `hetscale run`: T, W, S = W/T, C and E_s of one run, a kernel's or any program's.

use hbsp::Backend;
use hetscale_kernels::{KernelRun, Verification};
use hetscale_study::runner::run_report::{CommandRunReport, PredictionInterval};
use hetscale_study::stats::Summary;

/// A kernel's run on `backend`, its time as `times` summarise its measured runs, then each of
/// the kernel's details.
pub fn kernel(run: &KernelRun, backend: &Backend, times: &Summary) -> String {
    let efficiency = run
        .speed_efficiency()
        .map_or("n/a (marked speeds are not a flop rate)".into(), |e| {
            format!("{e:.4}")
        });
    let mut out = format!(
        "kernel   {} on {backend}, p = {}, N = {}\n\
         T        {}\n\
         W        {:.6e} flop\n\
         S = W/T  {:.4} Mflop/s\n\
         C        {:.4} {}\n\
         E_s      {efficiency}\n\
         verified {}\n",
        run.kernel,
        run.p,
        run.n,
        times.time_line(),
        run.work,
        run.speed() / 1e6,
        run.cluster_speed,
        run.speed_unit,
        verification(&run.verification),
    );
    for (name, value) in &run.details {
        out.push_str(&format!("{name}: {value}\n"));
    }
    out
}

/// The verification line: its verdict and, where a check ran, its error and tolerance.
fn verification(v: &Verification) -> String {
    let verdict = match (v.passed, v.skipped) {
        (true, _) => "yes",
        (false, true) => return "skipped (skeleton run: the compute blocks did not run)".into(),
        (false, false) => "NO",
    };
    format!(
        "{verdict} ({} = {:.3e}, tolerance {:.3e})",
        v.method, v.error, v.tolerance
    )
}

/// The interval a `sim` run's machine would measure in, and what it stands on.
pub fn prediction_interval(interval: &PredictionInterval) -> String {
    let PredictionInterval {
        low_s: lo,
        high_s: hi,
        errors,
    } = interval;
    format!(
        "95% PI   [{lo:.6} s, {hi:.6} s] (from the calibration's errors on {errors} runs of configurations it predicted from smaller ones)\n"
    )
}

/// A program's run.
pub fn command(r: &CommandRunReport) -> String {
    format!(
        "command  {}\n\
         p        {} (nodes \"{}\" of {})\n\
         N        {}\n\
         T        {}\n\
         W        {:.6e} flop\n\
         S = W/T  {:.4} Mflop/s\n\
         C        {:.4} Mflop/s\n\
         E_s      {:.4}\n",
        r.command,
        r.p,
        r.nodes,
        r.platform,
        r.n,
        r.time_stats_s.time_line(),
        r.work_flop,
        r.speed_flops / 1e6,
        r.marked_speed_flops / 1e6,
        r.speed_efficiency,
    )
}
