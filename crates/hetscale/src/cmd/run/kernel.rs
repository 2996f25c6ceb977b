//! `hetscale run KERNEL`: one kernel run on one machine; prints T, W, S = W/T, C and E_s.

use crate::cmd::load_platform;
use crate::cmd::mpi::{Job, SpeedSource};
use crate::output::{errln, out, outln};

use anyhow::{Context, bail};
use hbsp::{Backend, Platform};
use hetscale_kernels::run_inputs::RunInputs;
use hetscale_kernels::{KernelRegistry, KernelRun, write_npy};
use hetscale_report::text;
use hetscale_report::views::run::run_report;
use hetscale_report::{EXPORT_BYTES_PER_TRACE_BYTE, TraceOptions, write_chrome_trace};
use hetscale_study::runner::repeat::repeated;
use hetscale_study::runner::run_report::{
    KernelRunReport, kernel_run_warnings, prediction_interval,
};

use super::args::Args;

/// Runs `hetscale run KERNEL`.
pub(super) fn run(args: &Args, kernel: &str, registry: &KernelRegistry) -> anyhow::Result<()> {
    for npy in &args.input {
        hetscale_out::protect_input("--input", npy);
    }
    if let Some(path) = &args.trace {
        ensure_parent_exists("--trace", path)?;
    }
    let backend = backend(args)?;
    let job = Job::start(&backend)?;
    let platform = load_platform(&args.platform, registry)?;
    let machine = machine(args, &platform, job.as_ref())?;
    let kernel = args.kernel_options.kernel(kernel, registry)?;
    let exported = args.trace.is_some() || args.report.is_some();
    let inputs = RunInputs {
        n: args.n,
        files: args.input.clone(),
        seed: args.seed,
        export_per_trace_byte: exported.then_some(EXPORT_BYTES_PER_TRACE_BYTE),
    }
    .make(kernel.as_ref(), &machine, &backend)?;
    let machine = machine.for_workload(kernel.name());
    let repeated = repeated(args.warmup, args.runs, || {
        anyhow::Ok(kernel.run(&inputs, &backend, &machine)?)
    })?;
    if job.as_ref().is_some_and(|job| job.rank() != 0) {
        // Every rank holds the same run; rank 0 speaks for the job.
        return Ok(());
    }
    let run = &repeated.last;
    if let Some(path) = &args.dump_result {
        anyhow::ensure!(
            !args.skip_compute,
            "a skeleton run (--skip-compute) computes no result to dump"
        );
        hetscale_out::write_atomically_with(path, |temporary| {
            write_npy(temporary, &run.result).map_err(std::io::Error::other)
        })
        .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let written = write_views(args, run, &backend, &machine)?;
    let interval = prediction_interval(run, &backend, &platform);
    let warnings = kernel_run_warnings(run, &repeated.stats, &platform);
    warnings.iter().for_each(|w| errln!("warning: {w}"));
    if args.json {
        let report = KernelRunReport::new(
            &repeated,
            &backend,
            &args.nodes,
            &platform.name,
            interval,
            &warnings,
        );
        let report = hetscale_study::json::document("run", "run", serde_json::to_value(&report)?);
        outln!("{}", serde_json::to_string_pretty(&report)?);
        // Standard output stays one JSON document.
        written.iter().for_each(|line| errln!("{line}"));
    } else {
        out!("{}", text::run::kernel(run, &backend, &repeated.stats));
        if let Some(interval) = &interval {
            out!("{}", text::run::prediction_interval(interval));
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
