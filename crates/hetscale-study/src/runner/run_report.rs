//! What `hetscale run` reports of one repeated run, a kernel's or any program's: its JSON
//! document ([`KernelRunReport`], [`CommandRunReport`]), what the numbers do not say (the
//! warnings) and, on `sim`, the interval the machine's own run would fall in.

use hbsp::{Backend, Platform};
use hetscale_kernels::{KernelRun, Verification};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::runner::program::RunOutcome;
use crate::runner::repeat::Repetitions;
use crate::spec::EXTERNAL_BACKEND;
use crate::spec::configuration::ResolvedConfiguration;
use crate::stats::Summary;

/// The 95% prediction interval of what the machine would measure, and the number of
/// calibration errors behind it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PredictionInterval {
    /// Its ends, s.
    pub low_s: f64,
    /// Its ends, s.
    pub high_s: f64,
    /// The errors of the calibration behind it.
    pub errors: usize,
}

/// On `sim`, the interval of what the machine would measure, when the platform's compute entry
/// for the kernel holds a calibration's errors on configurations it predicted from smaller
/// ones (`hetscale calibrate`).
pub fn prediction_interval(
    run: &KernelRun,
    backend: &Backend,
    platform: &Platform,
) -> Option<PredictionInterval> {
    if !backend.is_virtual() {
        return None;
    }
    let errors = platform
        .machine
        .as_ref()?
        .rate(Some(run.kernel), None)
        .held_out_errors;
    let (low_s, high_s) = hetscale_model::fit::interval_from_errors(run.time_s, &errors)?;
    Some(PredictionInterval {
        low_s,
        high_s,
        errors: errors.len(),
    })
}

/// What the user should know about a kernel run that succeeded: an `E_s` above 1 means the
/// code ran faster than the marked speeds allow, which no correct marked speed permits;
/// placeholder speeds make `E_s` meaningless; outlier runs make the mean and sd unreliable.
pub fn kernel_run_warnings(run: &KernelRun, times: &Summary, platform: &Platform) -> Vec<String> {
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

/// What the user should know about a program's run: placeholder speeds, outlier runs.
pub fn command_run_warnings(times: &Summary, platform: &Platform) -> Vec<String> {
    [platform.placeholder_warning(), times.outlier_warning()]
        .into_iter()
        .flatten()
        .collect()
}

/// A kernel run in the one JSON schema (README, "JSON output"); `marked_speed_flops` is `null`
/// on a platform whose speeds are not a flop rate (its `platform_speed_unit` says what they are).
#[derive(Debug, Serialize)]
pub struct KernelRunReport<'a> {
    kernel: &'a str,
    backend: String,
    virtual_time: bool,
    n: usize,
    nodes: &'a str,
    p: usize,
    time_s: f64,
    work_flop: f64,
    speed_flops: f64,
    marked_speed_flops: Option<f64>,
    platform_speed_unit: &'a str,
    speed_efficiency: Option<f64>,
    verification: &'a Verification,
    details: Map<String, Value>,
    platform: &'a str,
    time_stats_s: &'a Summary,
    /// Every run's time, in order (for a fit that resamples runs, say).
    times_s: &'a [f64],
    time_interval_s: Option<[f64; 2]>,
    warnings: &'a [String],
}

impl<'a> KernelRunReport<'a> {
    /// The report of `run` on `backend`, on the node set `nodes` of `platform`.
    pub fn new(
        run: &'a Repetitions<KernelRun>,
        backend: &Backend,
        nodes: &'a str,
        platform: &'a str,
        interval: Option<PredictionInterval>,
        warnings: &'a [String],
    ) -> Self {
        let last = &run.last;
        Self {
            kernel: last.kernel,
            backend: backend.to_string(),
            virtual_time: backend.is_virtual(),
            n: last.n,
            nodes,
            p: last.p,
            time_s: last.time_s,
            work_flop: last.work,
            speed_flops: last.speed(),
            marked_speed_flops: last.cluster_speed_flops(),
            platform_speed_unit: &last.speed_unit,
            speed_efficiency: last.speed_efficiency(),
            verification: &last.verification,
            details: crate::json::details(&last.details),
            platform,
            time_stats_s: &run.stats,
            times_s: &run.times_s,
            time_interval_s: interval.map(|i| [i.low_s, i.high_s]),
            warnings,
        }
    }
}

/// A program's run (`hetscale run --command`), in the one JSON schema; its text says the same.
#[derive(Debug, Serialize)]
pub struct CommandRunReport<'a> {
    /// The command template.
    pub command: &'a str,
    /// Always `external`: the command runs itself.
    pub backend: &'static str,
    /// The problem size.
    pub n: usize,
    /// The node count.
    pub p: usize,
    /// The node set as given.
    pub nodes: &'a str,
    /// The platform's name.
    pub platform: &'a str,
    /// The median of the measured runs' times, s.
    pub time_s: f64,
    /// Their statistics, s.
    pub time_stats_s: &'a Summary,
    /// Every measured run's time, in order, s.
    pub times_s: &'a [f64],
    /// The work `W`, flop.
    pub work_flop: f64,
    /// `S = W / T`, flop/s.
    pub speed_flops: f64,
    /// The configuration's marked speed `C`, flop/s.
    pub marked_speed_flops: f64,
    /// `E_s = S / C`.
    pub speed_efficiency: f64,
    /// What the numbers do not say.
    pub warnings: &'a [String],
}

impl<'a> CommandRunReport<'a> {
    /// The report of `run` of `command` at size `n` on `config` of `platform`.
    pub fn new(
        command: &'a str,
        n: usize,
        config: &'a ResolvedConfiguration,
        platform: &'a str,
        run: &'a Repetitions<RunOutcome>,
        warnings: &'a [String],
    ) -> Self {
        let c = config.configuration.marked_speed;
        let speed = run.last.work / run.last.time_s;
        Self {
            command,
            backend: EXTERNAL_BACKEND,
            n,
            p: config.configuration.nodes,
            nodes: &config.nodes,
            platform,
            time_s: run.last.time_s,
            time_stats_s: &run.stats,
            times_s: &run.times_s,
            work_flop: run.last.work,
            speed_flops: speed,
            marked_speed_flops: c,
            speed_efficiency: speed / c,
            warnings,
        }
    }
}
