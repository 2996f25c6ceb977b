//! The fit of a platform's machine model to measured runs: each run simulated and split into
//! the parts the model is linear in, a weighted linear fit with 95% intervals and residuals,
//! and each fit's leave-one-out error.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use hbsp::Platform;
use hetscale_kernels::{KernelOptions, KernelRegistry};
use hetscale_machine::machine_model::ComputeRate;
use hetscale_model::fit::{Parameter, fit_linear};
use serde::Serialize;

use super::runs::MeasuredRun;
use super::simulation::{RunParts, run_parts, with_rate};
use crate::error::{Result, StudyError};
use crate::runner::program::Program;

/// A parameter of the machine model that calibration may fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FreeParameter {
    /// `rate_fraction`: the kernel's achieved rate over the marked speed.
    RateFraction,
    /// `run_overhead_s`: the kernel's start-up per run.
    RunOverhead,
    /// `process_overhead_s`: the kernel's start-up per run and process.
    ProcessOverhead,
    /// `half_work`: the block of work that runs at half the asymptotic rate.
    HalfWork,
    /// `collective_scale`: the kernel's measured collectives and barriers over the machine's.
    CollectiveScale,
}

impl FreeParameter {
    /// The name used in platform files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::RateFraction => "rate_fraction",
            Self::RunOverhead => "run_overhead_s",
            Self::ProcessOverhead => "process_overhead_s",
            Self::HalfWork => "half_work",
            Self::CollectiveScale => "collective_scale",
        }
    }

    /// Parses `rate_fraction`, `run_overhead_s`, `process_overhead_s`, `half_work` or
    /// `collective_scale`.
    pub fn parse(name: &str) -> Result<Self> {
        match name.trim() {
            "rate_fraction" | "rate" => Ok(Self::RateFraction),
            "run_overhead_s" | "run_overhead" => Ok(Self::RunOverhead),
            "process_overhead_s" | "process_overhead" => Ok(Self::ProcessOverhead),
            "half_work" => Ok(Self::HalfWork),
            "collective_scale" => Ok(Self::CollectiveScale),
            other => Err(StudyError::Calibration(format!(
                "unknown parameter \"{other}\": fit rate_fraction, run_overhead_s, \
                 process_overhead_s, half_work and/or collective_scale"
            ))),
        }
    }
}

/// A fitted value with its 95% interval (none when the runs leave no degree of freedom).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The value written to the platform.
    pub estimate: f64,
    /// 95% confidence interval (in JSON clipped at 0: no parameter is negative).
    #[serde(rename = "estimate_ci95", serialize_with = "non_negative_ci95")]
    pub ci95: Option<(f64, f64)>,
    /// Whether it was fitted (false: kept from the platform).
    pub fitted: bool,
}

/// Serializes an interval of a parameter that cannot be negative with its low end at least 0.
fn non_negative_ci95<S: serde::Serializer>(
    ci95: &Option<(f64, f64)>,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    Serialize::serialize(&ci95.map(|(lo, hi)| (lo.max(0.0), hi)), serializer)
}

/// One run, measured beside the calibrated model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Residual {
    /// The run's configuration label.
    pub configuration: String,
    /// Problem size.
    pub n: u64,
    /// Measured time, s.
    pub measured_s: f64,
    /// Time of the calibrated model on `sim`, s.
    pub model_s: f64,
    /// `(model - measured) / measured` (in JSON a percentage, `rel_err_percent`).
    #[serde(
        rename = "rel_err_percent",
        serialize_with = "crate::json::fraction_as_percent"
    )]
    pub rel_err: f64,
}

/// The calibration of one kernel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelCalibration {
    /// Kernel name.
    pub kernel: String,
    /// `f`.
    pub rate_fraction: Estimate,
    /// `s`, seconds.
    pub run_overhead_s: Estimate,
    /// `s_p`, seconds per process.
    pub process_overhead_s: Estimate,
    /// `w_1/2`, operations.
    #[serde(rename = "half_work_flop")]
    pub half_work: Estimate,
    /// Factor on the measured collectives and the barrier.
    pub collective_scale: Estimate,
    /// One per run.
    pub residuals: Vec<Residual>,
    /// The fit's error on runs it was not given; `None` when the runs cannot spare one.
    pub cross_validation: Option<CrossValidation>,
    /// The fit's error on configurations it was not given: each configuration predicted by a
    /// fit on those of fewer processes (`None` when none can be: one configuration, or
    /// smaller ones that leave a parameter unidentified). What a prediction of a larger
    /// configuration never run can expect: it is written into the platform
    /// (`held_out_errors`), and `sim` runs give their 95% prediction interval from it.
    pub held_out: Option<CrossValidation>,
}

impl Estimate {
    /// How the value was found: `95% CI [0.5366, 1.0303]`, `kept` (from the platform), or
    /// `exact fit (...)` when the runs left no degree of freedom.
    pub fn how(&self) -> String {
        match (self.fitted, self.ci95) {
            (false, _) => "kept".to_string(),
            (true, None) => "exact fit (as many runs as parameters)".to_string(),
            (true, Some((a, b))) => format!("95% CI [{a:.4}, {b:.4}]"),
        }
    }

    /// `name = 0.7057 (95% CI [0.5366, 1.0303])`: the value and [`Estimate::how`].
    pub fn describe(&self, name: &str) -> String {
        format!("{name} = {:.4} ({})", self.estimate, self.how())
    }
}

impl KernelCalibration {
    /// The five parameters by their platform-file names, fitted or kept.
    pub fn parameters(&self) -> [(&'static str, &Estimate); 5] {
        [
            (FreeParameter::RateFraction.name(), &self.rate_fraction),
            (FreeParameter::RunOverhead.name(), &self.run_overhead_s),
            (
                FreeParameter::ProcessOverhead.name(),
                &self.process_overhead_s,
            ),
            (FreeParameter::HalfWork.name(), &self.half_work),
            (
                FreeParameter::CollectiveScale.name(),
                &self.collective_scale,
            ),
        ]
    }

    /// `7 runs` (or `1 run`): what the fit saw.
    pub fn runs_label(&self) -> String {
        match self.residuals.len() {
            1 => "1 run".to_string(),
            n => format!("{n} runs"),
        }
    }

    /// What the fit implies that the runs or the platform should not: nodes computing faster
    /// than their marked speed, or a fitted parameter its runs do not bound. One line each.
    pub fn warnings(&self) -> Vec<String> {
        let subject = format!(
            "kernel {}: rate_fraction = {:.4}",
            self.kernel, self.rate_fraction.estimate
        );
        let faster = if self.rate_fraction.fitted {
            faster_than_marked(&subject, self.rate_fraction.estimate)
        } else {
            None
        };
        let unbounded = self.parameters().into_iter().filter_map(|(name, e)| {
            let (lo, hi) = e
                .ci95
                .filter(|(lo, hi)| !(lo.is_finite() && hi.is_finite()))?;
            Some(format!(
                "kernel {}: {name}'s 95% interval [{lo:.4}, {hi:.4}] is unbounded: the runs do \
                 not pin it down; add runs at other sizes or node-sets, or fit fewer parameters",
                self.kernel
            ))
        });
        faster.into_iter().chain(unbounded).collect()
    }

    /// Every parameter of the kernel's fit, fitted or kept, in one line.
    pub fn parameters_line(&self) -> String {
        self.parameters()
            .iter()
            .map(|(name, e)| e.describe(name))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// How well the fit predicts a run it was not given (leave-one-out cross-validation): each
/// run left out in turn, the other runs fitted with the same free parameters, the left-out
/// run predicted. Smaller is better; comparing it across choices of free parameters chooses
/// among them on the calibration runs alone. Unlike the linear fit's own
/// `FitQuality::loo_cv_rmse` (absolute, on the unweighted columns), these are relative errors
/// of the machine model as written to the platform: rate inverted, start-ups cut at zero.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrossValidation {
    /// `(predicted - measured) / measured` per run left out (every run, or a few spread
    /// evenly over many), in the runs' order. In JSON all three are percentages.
    #[serde(
        rename = "rel_errors_percent",
        serialize_with = "crate::json::fractions_as_percent"
    )]
    pub rel_errors: Vec<f64>,
    /// Root mean square of `rel_errors`.
    #[serde(
        rename = "rms_percent",
        serialize_with = "crate::json::fraction_as_percent"
    )]
    pub rms: f64,
    /// Largest `|rel_error|`.
    #[serde(
        rename = "max_abs_percent",
        serialize_with = "crate::json::fraction_as_percent"
    )]
    pub max_abs: f64,
}

impl CrossValidation {
    fn of(rel_errors: Vec<f64>) -> Self {
        let rms = (rel_errors.iter().map(|e| e * e).sum::<f64>() / rel_errors.len() as f64).sqrt();
        let max_abs = rel_errors.iter().fold(0.0_f64, |m, e| m.max(e.abs()));
        Self {
            rel_errors,
            rms,
            max_abs,
        }
    }

    /// `leave-one-out error: rms 6.3%, largest 11.7% (7 runs)`.
    pub fn describe(&self) -> String {
        format!(
            "leave-one-out error: rms {:.1}%, largest {:.1}% ({} runs)",
            100.0 * self.rms,
            100.0 * self.max_abs,
            self.rel_errors.len()
        )
    }
}

/// How far above its marked speed a fit may put a node before it is said: timing noise and
/// the model's rounding move a fit a few percent, a node beating its own benchmark by more
/// is a marked speed measured too low (a loaded machine) or runs of another machine.
const FASTER_THAN_MARKED_SLACK: f64 = 1.05;

/// What to say when a fit (`subject`, e.g. `rate_fraction = 3.27`) has nodes computing at
/// `speedup` times their marked speed, beyond `FASTER_THAN_MARKED_SLACK`; `None` otherwise.
pub fn faster_than_marked(subject: &str, speedup: f64) -> Option<String> {
    (speedup > FASTER_THAN_MARKED_SLACK).then(|| {
        format!(
            "{subject} has the nodes computing at {speedup:.2}x their marked speed, which a \
             benchmarked sustained speed should not allow: the marked speeds are too low for \
             this code (measure them with `hetscale bench` on a quiet machine), or the runs are \
             not of this platform"
        )
    })
}

/// [`faster_than_marked`] for runs of the simulator: their times are the platform's machine
/// model's, so the nodes beat their marked speed because that model's compute rates
/// (`[[machine.compute]]`) say so, not because a benchmark ran on a loaded machine.
pub fn simulated_faster_than_marked(subject: &str, speedup: f64) -> Option<String> {
    (speedup > FASTER_THAN_MARKED_SLACK).then(|| {
        format!(
            "{subject} has the simulated nodes computing at {speedup:.2}x their marked speed: \
             the platform's machine model computes this code at a rate its marked speeds do \
             not state (its [[machine.compute]] entries), and approach 3 takes that in \
             through a; give both from one source to remove the gap"
        )
    })
}

/// A calibrated platform and how it was found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlatformCalibration {
    /// One per kernel of the runs, in name order.
    pub kernels: Vec<KernelCalibration>,
    /// The platform with the fitted values in its machine model.
    #[serde(skip)]
    pub platform: Platform,
}

/// Fits the `free` parameters of each kernel's compute rate in `platform`'s machine model
/// to `runs` (see the module docs).
pub fn calibrate(
    platform: &Platform,
    registry: &KernelRegistry,
    options: &KernelOptions,
    runs: &[MeasuredRun],
    free: &[FreeParameter],
) -> Result<PlatformCalibration> {
    calibrate_with(&Simulations::new(platform, registry, options), runs, free)
}

/// [`calibrate`] for a program hetscale does not run, known by its declared model
/// ([`Program::of_formulas`]: its work, overhead, communication and partition): each run's
/// compute at the marked speed and the rest of its model are the parts the compute rate and
/// start-ups are fitted to. `w_1/2` and `collective_scale` belong to kernels' supersteps and
/// are refused.
pub fn calibrate_declared(
    platform: &Platform,
    program: &Program,
    runs: &[MeasuredRun],
    free: &[FreeParameter],
) -> Result<PlatformCalibration> {
    if let Some(p) = free
        .iter()
        .find(|p| matches!(p, FreeParameter::HalfWork | FreeParameter::CollectiveScale))
    {
        return Err(StudyError::Calibration(format!(
            "{} belongs to a kernel's supersteps, not to a declared program: fit rate_fraction, run_overhead_s and/or process_overhead_s",
            p.name()
        )));
    }
    let registry = KernelRegistry::builtin();
    let options = KernelOptions::default();
    let mut simulations = Simulations::new(platform, &registry, &options);
    simulations.declared = Some(program);
    calibrate_with(&simulations, runs, free)
}

/// A declared program's run split as the fit takes it: its compute at the marked speed (`A`)
/// and the rest of its model (`B`: overhead formula and declared communication), with no
/// rate or start-up of its own.
fn declared_parts(platform: &Platform, program: &Program, run: &MeasuredRun) -> Result<RunParts> {
    let config = crate::spec::configuration::resolve(platform, &run.configuration, &run.nodes)?;
    let (compute_s, rest_s) = program.model_parts(run.n as f64, &config)?;
    Ok(RunParts {
        compute_s,
        per_half_work_s: 0.0,
        collective_s: 0.0,
        rest_s,
        processes: config.machine.processes() as f64,
    })
}

/// The runs of each kernel, in kernel-name order.
pub(super) fn runs_by_kernel(runs: &[MeasuredRun]) -> BTreeMap<&str, Vec<&MeasuredRun>> {
    let mut by_kernel: BTreeMap<&str, Vec<&MeasuredRun>> = BTreeMap::new();
    for run in runs {
        by_kernel.entry(run.kernel.as_str()).or_default().push(run);
    }
    by_kernel
}

/// `platform` with `fit`'s values for its kernel.
pub(super) fn with_fit(platform: &Platform, fit: &KernelCalibration) -> Platform {
    with_rate(platform, &fit.kernel, |rate| {
        rate.rate_fraction = fit.rate_fraction.estimate;
        rate.run_overhead_s = fit.run_overhead_s.estimate;
        rate.process_overhead_s = fit.process_overhead_s.estimate;
        rate.half_work = fit.half_work.estimate;
        rate.collective_scale = fit.collective_scale.estimate;
        rate.held_out_errors = fit
            .held_out
            .as_ref()
            .map_or_else(Vec::new, |h| h.rel_errors.clone());
        rate.source = Some(fit_source(fit));
    })
}

/// Where a calibrated entry comes from: `fit: hetscale calibrate on the ge runs of C_1 (N =
/// 256, 512), C_2 (N = 256, 512)`.
fn fit_source(fit: &KernelCalibration) -> String {
    let mut configurations: Vec<(String, Vec<u64>)> = Vec::new();
    for r in &fit.residuals {
        match configurations
            .iter_mut()
            .find(|(c, _)| *c == r.configuration)
        {
            Some((_, sizes)) if !sizes.contains(&r.n) => sizes.push(r.n),
            Some(_) => {}
            None => configurations.push((r.configuration.clone(), vec![r.n])),
        }
    }
    let runs: Vec<String> = configurations
        .iter()
        .map(|(c, sizes)| {
            let sizes: Vec<String> = sizes.iter().map(u64::to_string).collect();
            format!("{c} (N = {})", sizes.join(", "))
        })
        .collect();
    format!(
        "fit: hetscale calibrate on the {} runs of {}",
        fit.kernel,
        runs.join(", ")
    )
}

/// [`calibrate`] on `simulations`' platform, whose runs' parts it keeps across calls.
pub(super) fn calibrate_with(
    simulations: &Simulations,
    runs: &[MeasuredRun],
    free: &[FreeParameter],
) -> Result<PlatformCalibration> {
    if runs.is_empty() {
        return Err(StudyError::Calibration(
            "no runs to calibrate on: give at least one measured run".into(),
        ));
    }
    if free.is_empty() {
        return Err(StudyError::Calibration(
            "no parameter to fit: free rate_fraction, run_overhead_s, process_overhead_s, \
             half_work and/or collective_scale"
                .into(),
        ));
    }
    let mut calibrated = simulations.platform.clone();
    let mut kernels = Vec::new();
    for (kernel, runs) in runs_by_kernel(runs) {
        let fit = calibrate_kernel(simulations, kernel, &runs, free)?;
        calibrated = with_fit(&calibrated, &fit);
        if let Some(program) = simulations.declared {
            calibrated = with_rate(&calibrated, kernel, |rate| {
                rate.declared = true;
                rate.declared_model = program.declared_model();
            });
        }
        kernels.push(fit);
    }
    calibrated.validate()?;
    Ok(PlatformCalibration {
        kernels,
        platform: calibrated,
    })
}

/// Each run's parts ([`run_parts`]) on one platform, simulated once per run and choice of
/// free `w_1/2` and `collective_scale`. A kernel's parts do not depend on the other kernels'
/// fitted rates, so the platform before any fit serves every kernel.
pub(super) struct Simulations<'a> {
    platform: &'a Platform,
    registry: &'a KernelRegistry,
    options: &'a KernelOptions,
    /// A program known by its declared model, whose runs are charged by that model rather
    /// than simulated as a kernel.
    declared: Option<&'a Program>,
    parts: RefCell<HashMap<PartsKey, RunParts>>,
}

/// A run's kernel, node-set and size, and whether `w_1/2` and `collective_scale` are free.
type PartsKey = (String, String, u64, bool, bool);

impl<'a> Simulations<'a> {
    pub(super) fn new(
        platform: &'a Platform,
        registry: &'a KernelRegistry,
        options: &'a KernelOptions,
    ) -> Self {
        Self {
            platform,
            registry,
            options,
            declared: None,
            parts: RefCell::default(),
        }
    }

    fn parts(&self, run: &MeasuredRun, half_work: bool, scale: bool) -> Result<RunParts> {
        let key = (
            run.kernel.clone(),
            run.nodes.clone(),
            run.n,
            half_work,
            scale,
        );
        if let Some(parts) = self.parts.borrow().get(&key) {
            return Ok(*parts);
        }
        let parts = match self.declared {
            Some(program) => declared_parts(self.platform, program, run)?,
            None => run_parts(
                self.platform,
                self.registry,
                self.options,
                run,
                half_work,
                scale,
            )?,
        };
        self.parts.borrow_mut().insert(key, parts);
        Ok(parts)
    }
}

fn calibrate_kernel(
    simulations: &Simulations,
    kernel: &str,
    runs: &[&MeasuredRun],
    free: &[FreeParameter],
) -> Result<KernelCalibration> {
    let current = current_rate(simulations.platform, kernel);
    let fits = |p: FreeParameter| free.contains(&p);
    let parts = runs
        .iter()
        .map(|run| {
            simulations.parts(
                run,
                fits(FreeParameter::HalfWork),
                fits(FreeParameter::CollectiveScale),
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let columns = design(&parts, free);
    let problem = Problem {
        names: columns.iter().map(|(name, _)| *name).collect(),
        columns: columns.into_iter().map(|(_, c)| c).collect(),
        y: runs
            .iter()
            .zip(&parts)
            .map(|(run, p)| run.time_s - known_part(p, &current, free))
            .collect(),
        weights: runs.iter().map(|r| 1.0 / r.time_s).collect(),
    };
    let fitted = problem.fit(kernel, &current)?;
    let residuals = runs
        .iter()
        .zip(&parts)
        .map(|(run, p)| {
            let model_s = fitted.model_time(p);
            Residual {
                configuration: run.configuration.clone(),
                n: run.n,
                measured_s: run.time_s,
                model_s,
                rel_err: (model_s - run.time_s) / run.time_s,
            }
        })
        .collect();
    let cross_validation = problem.leave_one_out(kernel, runs, &parts, &current);
    let held_out = problem.predict_forward(kernel, runs, &parts, &current);
    Ok(KernelCalibration {
        kernel: kernel.to_owned(),
        rate_fraction: fitted.rate_fraction,
        run_overhead_s: fitted.run_overhead_s,
        process_overhead_s: fitted.process_overhead_s,
        half_work: fitted.half_work,
        collective_scale: fitted.collective_scale,
        residuals,
        cross_validation,
        held_out,
    })
}

/// The five parameters of one kernel's compute rate after a fit.
struct Fitted {
    rate_fraction: Estimate,
    run_overhead_s: Estimate,
    process_overhead_s: Estimate,
    half_work: Estimate,
    collective_scale: Estimate,
}

impl Fitted {
    /// `(model - measured) / measured` for `run`, whose parts are `p`.
    fn rel_error(&self, p: &RunParts, run: &MeasuredRun) -> f64 {
        (self.model_time(p) - run.time_s) / run.time_s
    }

    /// `(A + K w_1/2) / f + S c + B + s + P s_p`.
    fn model_time(&self, p: &RunParts) -> f64 {
        let compute = p.compute_s + p.per_half_work_s * self.half_work.estimate;
        compute / self.rate_fraction.estimate
            + p.collective_s * self.collective_scale.estimate
            + p.rest_s
            + self.run_overhead_s.estimate
            + p.processes * self.process_overhead_s.estimate
    }
}

/// The weighted linear least-squares problem of one kernel's calibration: a column per free
/// parameter, the measured time less the known part as `y`, `1/T` as weights.
struct Problem {
    names: Vec<&'static str>,
    columns: Vec<Vec<f64>>,
    y: Vec<f64>,
    weights: Vec<f64>,
}

impl Problem {
    /// The fit, read back as the model's parameters (those without a column keep
    /// `current`'s values).
    fn fit(&self, kernel: &str, current: &ComputeRate) -> Result<Fitted> {
        let fit = fit_linear(&self.names, &self.columns, &self.y, Some(&self.weights))
            .map_err(|e| StudyError::Calibration(format!("kernel {kernel}: {e}")))?;
        let parameter = |name: &str| fit.parameters.iter().find(|p| p.name == name);
        let fitted_or = |name: &str, value: f64| match parameter(name) {
            Some(p) => cut_at_zero(p.estimate, p.ci95),
            None => kept(value),
        };
        let rate_fraction = match parameter("1/rate_fraction") {
            Some(theta) => rate_estimate(kernel, theta)?,
            None => kept(current.rate_fraction),
        };
        let half_work = match parameter("half_work/rate_fraction") {
            // w_1/2 = theta f; its interval is theta's scaled by f.
            Some(p) => {
                let f = rate_fraction.estimate;
                cut_at_zero(p.estimate * f, p.ci95.map(|(lo, hi)| (lo * f, hi * f)))
            }
            None => kept(current.half_work),
        };
        Ok(Fitted {
            rate_fraction,
            run_overhead_s: fitted_or("run_overhead_s", current.run_overhead_s),
            process_overhead_s: fitted_or("process_overhead_s", current.process_overhead_s),
            half_work,
            collective_scale: fitted_or("collective_scale", current.collective_scale),
        })
    }

    /// The problem of the runs `keep` accepts (by index).
    fn keeping(&self, keep: impl Fn(usize) -> bool) -> Self {
        let drop = |values: &[f64]| -> Vec<f64> {
            values
                .iter()
                .enumerate()
                .filter(|(j, _)| keep(*j))
                .map(|(_, v)| *v)
                .collect()
        };
        Self {
            names: self.names.clone(),
            columns: self.columns.iter().map(|c| drop(c)).collect(),
            y: drop(&self.y),
            weights: drop(&self.weights),
        }
    }

    /// Each run left out in turn, the others fitted, the left-out run predicted (of more than
    /// [`MOST_LEFT_OUT`] runs, that many spread evenly). `None` when fewer runs than
    /// parameters would remain, or when a run's absence leaves a parameter unidentified (e.g.
    /// the only run of its size).
    fn leave_one_out(
        &self,
        kernel: &str,
        runs: &[&MeasuredRun],
        parts: &[RunParts],
        current: &ComputeRate,
    ) -> Option<CrossValidation> {
        if runs.len() <= self.columns.len() {
            return None;
        }
        let rel_errors = left_out(runs.len())
            .map(|i| {
                let fitted = self.keeping(|j| j != i).fit(kernel, current).ok()?;
                Some(fitted.rel_error(&parts[i], runs[i]))
            })
            .collect::<Option<Vec<f64>>>()?;
        Some(CrossValidation::of(rel_errors))
    }

    /// Each configuration predicted from a fit on the configurations of fewer processes, as
    /// a prediction goes (forward, as a forecast is validated on later points, not earlier
    /// ones: a fit on C_2's runs alone, all communication, may not identify the compute rate
    /// that predicts C_1, an error no prediction of a larger machine makes): its runs' errors,
    /// configuration by configuration. A configuration whose smaller ones leave a parameter
    /// unidentified or no degree of freedom is not predicted; `None` when none is.
    fn predict_forward(
        &self,
        kernel: &str,
        runs: &[&MeasuredRun],
        parts: &[RunParts],
        current: &ComputeRate,
    ) -> Option<CrossValidation> {
        let mut sizes: Vec<(&str, f64)> = runs
            .iter()
            .zip(parts)
            .map(|(r, p)| (r.configuration.as_str(), p.processes))
            .collect();
        sizes.sort_by(|a, b| a.0.cmp(b.0));
        sizes.dedup_by(|a, b| a.0 == b.0);
        let mut rel_errors = Vec::new();
        for (configuration, processes) in sizes {
            let smaller = self.keeping(|j| parts[j].processes < processes);
            if smaller.y.len() <= self.columns.len() {
                continue;
            }
            let Ok(fitted) = smaller.fit(kernel, current) else {
                continue;
            };
            for (i, run) in runs.iter().enumerate() {
                if run.configuration == configuration {
                    rel_errors.push(fitted.rel_error(&parts[i], run));
                }
            }
        }
        (!rel_errors.is_empty()).then(|| CrossValidation::of(rel_errors))
    }
}

/// The most runs cross-validation leaves out: each costs a fit of all the others, so leaving
/// out every one of a million runs would take hours, and among many runs a few spread evenly
/// estimate the error as well.
const MOST_LEFT_OUT: usize = 30;

/// The runs of `count` that cross-validation leaves out: all of them, or [`MOST_LEFT_OUT`]
/// spread evenly over them.
fn left_out(count: usize) -> impl Iterator<Item = usize> {
    let taken = count.min(MOST_LEFT_OUT);
    (0..taken).map(move |k| k * count / taken)
}

/// The fit's columns, one per free parameter: `1/f` multiplies `A`, `w_1/2 / f` multiplies
/// `K`, `c` multiplies `S`, `s` multiplies 1 and `s_p` multiplies `P`. Without `1/f` free,
/// `w_1/2 / f` is read with the platform's `f`; the parts of parameters not free are in
/// [`known_part`].
fn design(parts: &[RunParts], free: &[FreeParameter]) -> Vec<(&'static str, Vec<f64>)> {
    let mut columns = Vec::new();
    if free.contains(&FreeParameter::RateFraction) {
        columns.push((
            "1/rate_fraction",
            parts.iter().map(|p| p.compute_s).collect(),
        ));
    }
    if free.contains(&FreeParameter::HalfWork) {
        columns.push((
            "half_work/rate_fraction",
            parts.iter().map(|p| p.per_half_work_s).collect(),
        ));
    }
    if free.contains(&FreeParameter::CollectiveScale) {
        columns.push((
            "collective_scale",
            parts.iter().map(|p| p.collective_s).collect(),
        ));
    }
    if free.contains(&FreeParameter::RunOverhead) {
        columns.push(("run_overhead_s", vec![1.0; parts.len()]));
    }
    if free.contains(&FreeParameter::ProcessOverhead) {
        columns.push((
            "process_overhead_s",
            parts.iter().map(|p| p.processes).collect(),
        ));
    }
    columns
}

/// The part of a run's time that no free parameter explains.
fn known_part(p: &RunParts, current: &ComputeRate, free: &[FreeParameter]) -> f64 {
    let mut known = p.rest_s;
    if !free.contains(&FreeParameter::RateFraction) {
        known += p.compute_s / current.rate_fraction;
    }
    if !free.contains(&FreeParameter::RunOverhead) {
        known += current.run_overhead_s;
    }
    if !free.contains(&FreeParameter::ProcessOverhead) {
        known += p.processes * current.process_overhead_s;
    }
    known
}

/// A start-up or a half-performance work cannot be negative: estimate and interval are cut
/// at 0 alike.
fn cut_at_zero(estimate: f64, ci95: Option<(f64, f64)>) -> Estimate {
    Estimate {
        estimate: estimate.max(0.0),
        ci95: ci95.map(|(lo, hi)| (lo.max(0.0), hi.max(0.0))),
        fitted: true,
    }
}

fn kept(value: f64) -> Estimate {
    Estimate {
        estimate: value,
        ci95: None,
        fitted: false,
    }
}

/// `f = 1 / theta`; its interval is the inverted interval of `theta` when that stays positive.
fn rate_estimate(kernel: &str, theta: &Parameter) -> Result<Estimate> {
    if theta.estimate.is_nan() || theta.estimate <= 0.0 {
        return Err(StudyError::Calibration(format!(
            "kernel {kernel}: the runs leave no time for computing (1/rate_fraction = {:.3}): \
             the machine model's communication or run_overhead_s already exceeds them; \
             check the platform's network and the runs' node-sets",
            theta.estimate
        )));
    }
    let ci95 = theta
        .ci95
        .map(|(lo, hi)| (1.0 / hi, if lo > 0.0 { 1.0 / lo } else { f64::INFINITY }));
    Ok(Estimate {
        estimate: 1.0 / theta.estimate,
        ci95,
        fitted: true,
    })
}

fn current_rate(platform: &Platform, kernel: &str) -> ComputeRate {
    platform
        .machine
        .as_ref()
        .map(|m| m.rate(Some(kernel), None))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(estimate: f64, ci95: Option<(f64, f64)>, fitted: bool) -> Estimate {
        Estimate {
            estimate,
            ci95,
            fitted,
        }
    }

    #[test]
    fn the_parameters_line_says_which_were_fitted_and_how_well() {
        let kept = estimate(0.0, None, false);
        let k = KernelCalibration {
            kernel: "ge".into(),
            rate_fraction: estimate(0.70568, Some((0.5366, 1.0303)), true),
            run_overhead_s: kept,
            process_overhead_s: estimate(0.035, None, true),
            half_work: kept,
            collective_scale: estimate(1.0, None, false),
            residuals: Vec::new(),
            cross_validation: None,
            held_out: None,
        };
        assert_eq!(
            k.parameters_line(),
            "rate_fraction = 0.7057 (95% CI [0.5366, 1.0303]), run_overhead_s = 0.0000 (kept), \
             process_overhead_s = 0.0350 (exact fit (as many runs as parameters)), \
             half_work = 0.0000 (kept), collective_scale = 1.0000 (kept)"
        );
        assert_eq!(k.runs_label(), "0 runs");
        let one = KernelCalibration {
            residuals: vec![Residual {
                configuration: "C_2".into(),
                n: 100,
                measured_s: 1.0,
                model_s: 1.0,
                rel_err: 0.0,
            }],
            ..k
        };
        assert_eq!(one.runs_label(), "1 run");
    }

    #[test]
    fn a_node_faster_than_its_marked_speed_and_an_unbounded_interval_are_said() {
        let kept = estimate(0.0, None, false);
        let fit = |rate: Estimate| KernelCalibration {
            kernel: "ge".into(),
            rate_fraction: rate,
            run_overhead_s: estimate(0.01, Some((0.0, 0.02)), true),
            process_overhead_s: kept,
            half_work: kept,
            collective_scale: kept,
            residuals: Vec::new(),
            cross_validation: None,
            held_out: None,
        };
        // `calibrate`'s GE on a loaded host: 3.27 [1.34, inf].
        let warnings = fit(estimate(3.27, Some((1.34, f64::INFINITY)), true)).warnings();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].starts_with("kernel ge: rate_fraction = 3.2700 has the nodes computing at 3.27x their marked speed"),
            "{}",
            warnings[0]
        );
        assert!(
            warnings[1]
                .starts_with("kernel ge: rate_fraction's 95% interval [1.3400, inf] is unbounded"),
            "{}",
            warnings[1]
        );
        // A physical fit, or a fast rate kept from the platform, says nothing.
        assert!(
            fit(estimate(0.7, Some((0.5, 1.03)), true))
                .warnings()
                .is_empty()
        );
        assert!(
            fit(estimate(1.04, Some((0.9, 1.2)), true))
                .warnings()
                .is_empty()
        );
        assert!(fit(estimate(2.0, None, false)).warnings().is_empty());
        assert_eq!(
            faster_than_marked("a = 0.5", 1.0 / 0.5)
                .map(|w| w.starts_with("a = 0.5 has the nodes computing at 2.00x")),
            Some(true)
        );
        // A simulated machine's gap is its platform's to close, not a benchmark's.
        let simulated = simulated_faster_than_marked("a = 0.5", 1.0 / 0.5).unwrap();
        assert!(
            simulated.contains("[[machine.compute]]") && !simulated.contains("hetscale bench"),
            "{simulated}"
        );
        assert_eq!(simulated_faster_than_marked("a = 1", 1.0), None);
    }
}
