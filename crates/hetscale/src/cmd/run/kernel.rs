//! `hetscale run KERNEL`: one kernel run on one machine; prints T, W, S = W/T, C and E_s.

use crate::cmd::load_platform;
use crate::cmd::mpi::{Job, SpeedSource};
use crate::output::{errln, out, outln};

use anyhow::{Context, bail};
use hbsp::{Backend, Platform};
use hetscale_kernels::memory::{check_fits, check_run_fits, run_memory};
use hetscale_kernels::{
    Array, Kernel, KernelRegistry, KernelRun, Verification, inputs_for, read_npy, write_npy,
};
use hetscale_report::views::run::run_report;
use hetscale_report::{EXPORT_BYTES_PER_TRACE_BYTE, TraceOptions, write_chrome_trace};
use hetscale_study::runner::repeat::repeated;
use hetscale_study::stats::Summary;
use serde_json::json;

use super::args::Args;

/// Runs `hetscale run KERNEL`.
pub(super) fn run(args: &Args, kernel: &str, registry: &KernelRegistry) -> anyhow::Result<()> {
    for npy in &args.input {
        hbsp::file::protect_input("--input", npy);
    }
    if let Some(path) = &args.trace {
        ensure_parent_exists("--trace", path)?;
    }
    let backend = backend(args)?;
    let job = Job::start(&backend)?;
    let platform = load_platform(&args.platform, registry)?;
    let machine = machine(args, &platform, job.as_ref())?;
    let kernel = args.kernel_options.kernel(kernel, registry)?;
    let inputs = inputs(args, kernel.as_ref(), &machine, &backend)?;
    let machine = machine.for_workload(kernel.name());
    let (run, times, each_time_s) = repeated(args.warmup, args.runs, || {
        anyhow::Ok(kernel.run(&inputs, &backend, &machine)?)
    })?;
    if job.as_ref().is_some_and(|job| job.rank() != 0) {
        // Every rank holds the same run; rank 0 speaks for the job.
        return Ok(());
    }
    if let Some(path) = &args.dump_result {
        anyhow::ensure!(
            !args.skip_compute,
            "a skeleton run (--skip-compute) computes no result to dump"
        );
        hbsp::file::write_atomically_with(path, |temporary| {
            write_npy(temporary, &run.result).map_err(std::io::Error::other)
        })
        .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let written = write_views(args, &run, &backend, &machine)?;
    let interval = prediction_interval(&run, &backend, &platform);
    let warnings = warnings(&run, &times, &platform);
    warnings.iter().for_each(|w| errln!("warning: {w}"));
    if args.json {
        let mut report = report_json(&run, &backend, &args.nodes);
        report["platform"] = json!(platform.name);
        report["time_stats_s"] = json!(times);
        // Every run's time, in order (for a fit that resamples runs, say).
        report["times_s"] = json!(each_time_s);
        report["time_interval_s"] = json!(interval.map(|(lo, hi, _)| [lo, hi]));
        report["warnings"] = json!(warnings);
        let report = hetscale_study::json::document("run", "run", report);
        outln!("{}", serde_json::to_string_pretty(&report)?);
        // Standard output stays one JSON document.
        written.iter().for_each(|line| errln!("{line}"));
    } else {
        out!("{}", report_text(&run, &backend, &times));
        if let Some((lo, hi, errors)) = interval {
            outln!(
                "95% PI   [{lo:.6} s, {hi:.6} s] (from the calibration's errors on {errors} runs of configurations it predicted from smaller ones)"
            );
        }
        written.iter().for_each(|line| outln!("{line}"));
    }
    if !run.verification.passed && !run.verification.skipped {
        bail!(
            "verification failed: {} = {:.3e} exceeds {:.3e}",
            run.verification.method,
            run.verification.error,
            run.verification.tolerance
        );
    }
    Ok(())
}

/// On `sim`, the 95% prediction interval of what the machine would measure, with the number
/// of errors behind it, when the platform's compute entry for the kernel holds a calibration's
/// errors on configurations it predicted from smaller ones (`hetscale calibrate`).
fn prediction_interval(
    run: &KernelRun,
    backend: &Backend,
    platform: &Platform,
) -> Option<(f64, f64, usize)> {
    if !backend.is_virtual() {
        return None;
    }
    let errors = platform
        .machine
        .as_ref()?
        .rate(Some(run.kernel), None)
        .held_out_errors;
    let (lo, hi) = hetscale_model::fit::interval_from_errors(run.time_s, &errors)?;
    Some((lo, hi, errors.len()))
}

/// Fails before the run, not after it, if an output file's directory is missing.
fn ensure_parent_exists(flag: &str, path: &std::path::Path) -> anyhow::Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => bail!(
            "{flag} {}: directory {} does not exist; create it or write elsewhere",
            path.display(),
            dir.display()
        ),
        _ => Ok(()),
    }
}

/// Writes the Perfetto trace and the report, if asked for; returns a line per file written
/// for the user (`Trace: PATH`, `Report: DIR/index.html`).
fn write_views(
    args: &Args,
    run: &KernelRun,
    backend: &Backend,
    machine: &hbsp::Machine,
) -> anyhow::Result<Vec<String>> {
    let options = TraceOptions::for_machine(machine, backend.is_virtual());
    let mut written = Vec::new();
    if let Some(path) = &args.trace {
        write_chrome_trace(&run.trace, &options, path)?;
        written.push(format!("Trace: {}", path.display()));
    }
    if let Some(dir) = &args.report {
        let report = run_report(run, &backend.to_string(), &options)?.write(dir)?;
        written.push(format!("Report: {}", report.index.display()));
    }
    Ok(written)
}

fn machine(args: &Args, platform: &Platform, job: Option<&Job>) -> anyhow::Result<hbsp::Machine> {
    let nodes = args.nodes.parse()?;
    match job {
        Some(job) => job.machine(platform, &nodes, args.marked_speed_from),
        None => {
            anyhow::ensure!(
                args.marked_speed_from == SpeedSource::Nodes,
                "--marked-speed-from is for --backend mpi; other backends take --nodes"
            );
            Ok(platform.select(&nodes)?)
        }
    }
}

fn backend(args: &Args) -> anyhow::Result<Backend> {
    let mut backend: Backend = args.backend.parse()?;
    match &mut backend {
        Backend::Threads(options) => {
            anyhow::ensure!(!args.skip_compute, "--skip-compute needs --backend sim");
            options.emulate_speeds = args.emulate_speeds;
        }
        Backend::Sim(options) => {
            anyhow::ensure!(
                !args.emulate_speeds,
                "--emulate-speeds is for --backend threads; sim charges each node's speed already"
            );
            // hetscale's kernels declare all their work: charge exactly that, deterministically.
            options.work = hbsp::WorkCharge::Declared;
            options.skip_compute = args.skip_compute;
            options.engine = args.sim_engine.parse()?;
            // Only --trace and --report read the trace: at thousands of nodes it can outweigh
            // everything else the run holds.
            options.no_trace = args.trace.is_none() && args.report.is_none();
        }
        Backend::Mpi(options) => {
            anyhow::ensure!(!args.skip_compute, "--skip-compute needs --backend sim");
            options.emulate_speeds = args.emulate_speeds;
        }
        _ => bail!("backend {backend} cannot run kernels yet"),
    }
    Ok(backend)
}

/// The generated or read inputs, once the run is known to fit in memory (refused before
/// anything is generated; read files are checked before the run multiplies them).
fn inputs(
    args: &Args,
    kernel: &dyn Kernel,
    machine: &hbsp::Machine,
    backend: &Backend,
) -> anyhow::Result<Vec<Array>> {
    if args.input.is_empty() {
        let n = args
            .n
            .context("give the problem size with --n N, or input files with --input")?;
        check_run_fits(kernel, n, machine, backend)?;
        check_export_fits(args, kernel, n, machine, backend)?;
        return Ok(inputs_for(kernel, n, args.seed, backend)?);
    }
    let arrays = args
        .input
        .iter()
        .map(read_npy)
        .collect::<Result<Vec<_>, _>>()?;
    if let (Some(n), Some(first)) = (args.n, arrays.first()) {
        if first.shape.first() != Some(&n) {
            bail!(
                "--n {n} does not match {}, whose shape is {:?}: drop --n or fix it",
                first.name,
                first.shape
            );
        }
    }
    if let Some(&n) = arrays.first().and_then(|a| a.shape.first()) {
        check_run_fits(kernel, n, machine, backend)?;
        check_export_fits(args, kernel, n, machine, backend)?;
    }
    Ok(arrays)
}

/// Refuses, in one line, a run whose trace export (`--trace`, `--report`) would not fit
/// beside the run itself.
fn check_export_fits(
    args: &Args,
    kernel: &dyn Kernel,
    n: usize,
    machine: &hbsp::Machine,
    backend: &Backend,
) -> anyhow::Result<()> {
    if args.trace.is_none() && args.report.is_none() {
        return Ok(());
    }
    let export = EXPORT_BYTES_PER_TRACE_BYTE * kernel.trace_bytes(n, machine)?;
    let needed = run_memory(kernel, n, machine, backend)? + export;
    let what = format!(
        "{} at N = {n} on {} nodes with its trace exported",
        kernel.name(),
        machine.p()
    );
    Ok(check_fits(
        &what,
        needed,
        "drop --trace and --report, or use a smaller N or fewer nodes",
    )?)
}

/// What the user should know about a run that succeeded: an `E_s` above 1 means the code ran
/// faster than the marked speeds allow, which no correct marked speed permits; placeholder
/// speeds make `E_s` meaningless; outlier runs make the mean and sd unreliable.
fn warnings(run: &KernelRun, times: &Summary, platform: &Platform) -> Vec<String> {
    let above_one = run.speed_efficiency().filter(|&e| e > 1.0).map(|e| {
        format!(
            "E_s = {e:.4} > 1: this run went faster than the marked speed allows, so the marked speeds are wrong for this code; re-measure them with hetscale bench, or give the platform's real speeds"
        )
    });
    [
        platform.placeholder_warning(),
        above_one,
        times.outlier_warning(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The verification line: its verdict and, where a check ran, its error and tolerance.
fn verification_text(v: &Verification) -> String {
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

/// The run in the one JSON schema (README, "JSON output"); `marked_speed_flops` is `null` on a
/// platform whose speeds are not a flop rate (its `speed_unit` says what they are).
fn report_json(run: &KernelRun, backend: &Backend, nodes: &str) -> serde_json::Value {
    json!({
        "kernel": run.kernel,
        "backend": backend.to_string(),
        "virtual_time": backend.is_virtual(),
        "n": run.n,
        "nodes": nodes,
        "p": run.p,
        "time_s": run.time_s,
        "work_flop": run.work,
        "speed_flops": run.speed(),
        "marked_speed_flops": run.cluster_speed_flops(),
        "platform_speed_unit": run.speed_unit,
        "speed_efficiency": run.speed_efficiency(),
        "verification": run.verification,
        "details": hetscale_study::json::details(&run.details),
    })
}

fn report_text(run: &KernelRun, backend: &Backend, times: &Summary) -> String {
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
        verification_text(&run.verification),
    );
    for (name, value) in &run.details {
        out.push_str(&format!("{name}: {value}\n"));
    }
    out
}
