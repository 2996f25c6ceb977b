//! Runs simulated for calibration: a measured run on the platform's machine model as a skeleton
//! (work charged, compute skipped), its time split into the parts the fit is linear in
//! ([`RunParts`]), and [`with_rate`], a platform with one kernel's compute rate changed.

use hbsp::{Backend, Machine, Platform, SimOptions, WorkCharge};
use hetscale_kernels::memory::check_run_fits;
use hetscale_kernels::{Kernel, KernelOptions, KernelRegistry, KernelRun, inputs_for};
use hetscale_machine::machine_model::{ComputeRate, MachineModel};

use super::runs::MeasuredRun;
use crate::error::{Result, StudyError};

/// What the machine model charges one run, split as `(A + K w_1/2) / f + S c + B + s + P s_p`.
#[derive(Debug, Clone, Copy)]
pub(super) struct RunParts {
    /// `A`, s (with the platform's `w_1/2` when it is not free).
    pub(super) compute_s: f64,
    /// `K`, s per operation of `w_1/2` (0 when `w_1/2` is not free).
    pub(super) per_half_work_s: f64,
    /// `S`, s: the measured collectives and barriers at `collective_scale = 1` (0 when it is
    /// not free: `B` then holds them at the platform's scale).
    pub(super) collective_s: f64,
    /// `B`, s.
    pub(super) rest_s: f64,
    /// `P`, the run's processes.
    pub(super) processes: f64,
}

/// `platform` with its (kernel, any kind) compute entry changed by `change`; the entry starts
/// from the rate the kernel has now. A platform without a machine model gets the one its
/// HBSP^1 network implies.
pub fn with_rate(
    platform: &Platform,
    kernel: &str,
    change: impl FnOnce(&mut ComputeRate),
) -> Platform {
    let mut out = platform.clone();
    let model = out
        .machine
        .get_or_insert_with(|| MachineModel::from_network(&platform.network));
    let mut rate = model.rate(Some(kernel), None);
    rate.kernel = kernel.to_owned();
    rate.kind = "*".to_owned();
    change(&mut rate);
    model
        .compute
        .retain(|c| !(c.kernel == kernel && c.kind == "*"));
    model.compute.push(rate);
    out
}

/// A reference `w_1/2` for measuring `K`, operations: large enough to stand well above
/// rounding, small enough not to change which node is the slowest.
const REFERENCE_HALF_WORK: f64 = 1e3;

/// Simulates `run` at `f = 1` and `f = 1/2` (no start-up; with `w_1/2 = 0` when it is free,
/// and once more at the reference `w_1/2`; at `collective_scale` 1 when it is free, and once
/// more at 2) and splits its time.
pub(super) fn run_parts(
    platform: &Platform,
    registry: &KernelRegistry,
    options: &KernelOptions,
    run: &MeasuredRun,
    free_half_work: bool,
    free_collective_scale: bool,
) -> Result<RunParts> {
    let base_scale = free_collective_scale.then_some(1.0);
    let at = |fraction: f64, half_work: Option<f64>, scale: Option<f64>| {
        let platform = with_rate(platform, &run.kernel, |rate| {
            rate.rate_fraction = fraction;
            rate.run_overhead_s = 0.0;
            rate.process_overhead_s = 0.0;
            if let Some(w) = half_work {
                rate.half_work = w;
            }
            if let Some(c) = scale {
                rate.collective_scale = c;
            }
        });
        simulate(&platform, registry, options, run)
    };
    let base_half_work = free_half_work.then_some(0.0);
    let full = at(1.0, base_half_work, base_scale)?;
    let half = at(0.5, base_half_work, base_scale)?;
    let per_half_work_s = if free_half_work {
        (at(1.0, Some(REFERENCE_HALF_WORK), base_scale)? - full) / REFERENCE_HALF_WORK
    } else {
        0.0
    };
    let collective_s = if free_collective_scale {
        at(1.0, base_half_work, Some(2.0))? - full
    } else {
        0.0
    };
    Ok(RunParts {
        compute_s: half - full,
        per_half_work_s,
        collective_s,
        rest_s: 2.0 * full - half - collective_s,
        processes: machine_of(platform, run)?.processes() as f64,
    })
}

/// The time of `run` on `platform`'s simulated machine (skeleton: compute is charged, not run).
pub fn simulate(
    platform: &Platform,
    registry: &KernelRegistry,
    options: &KernelOptions,
    run: &MeasuredRun,
) -> Result<f64> {
    let fail = |message: String| StudyError::Configuration {
        configuration: run.configuration.clone(),
        message: format!("N = {}: {message}", run.n),
    };
    let machine = machine_of(platform, run)?;
    let kernel = registry.get(&run.kernel, options)?;
    let n = usize::try_from(run.n).map_err(|_| fail("too large for this machine".into()))?;
    let out = skeleton_run(kernel.as_ref(), n, &machine).map_err(fail)?;
    Ok(out.time_s)
}

/// The machine `run` ran on: its node-set of `platform`, running its kernel.
fn machine_of(platform: &Platform, run: &MeasuredRun) -> Result<Machine> {
    let machine = platform
        .select(&run.nodes.parse()?)
        .map_err(|e| StudyError::Configuration {
            configuration: hetscale_out::echoed(&run.configuration).into_owned(),
            message: format!(
                "N = {}: nodes \"{}\": {e}",
                run.n,
                hetscale_out::echoed(&run.nodes)
            ),
        })?;
    Ok(machine.for_workload(&run.kernel))
}

/// A skeleton run of `kernel` at size `n` on `machine`'s sim (declared work charged, compute
/// skipped, size-only inputs, no trace), refused first if it would not fit this machine; the
/// error is the kernel's one line.
pub fn skeleton_run(
    kernel: &dyn Kernel,
    n: usize,
    machine: &Machine,
) -> std::result::Result<KernelRun, String> {
    let backend = Backend::Sim(SimOptions {
        work: WorkCharge::Declared,
        skip_compute: true,
        no_trace: true,
        ..SimOptions::default()
    });
    check_run_fits(kernel, n, machine, &backend).map_err(|e| e.to_string())?;
    let inputs = inputs_for(kernel, n, 1, &backend).map_err(|e| e.to_string())?;
    kernel
        .run(&inputs, &backend, machine)
        .map_err(|e| e.to_string())
}
