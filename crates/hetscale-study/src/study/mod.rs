//! A whole study: the approaches the spec asks for, on every configuration, then psi, the
//! approaches side by side, the verification run and the held-out check.
//!
//! This folder owns a study's results: [`run_study`] and [`load_results`] here, what the numbers
//! do not say ([`warnings`]), the summary a study ends with ([`summary`]) and a study that settled
//! nothing ([`Unsettled`]).

pub mod point;
pub mod result;
mod summarize;
pub mod summary;
mod unsettled;
pub mod warnings;

use hetscale_model::fit::least_squares;
use hetscale_model::root::solve_for_target;
use hetscale_model::scalability::ScalabilityMatrix;

use hetscale_kernels::KernelRegistry;

use crate::approaches::computed::{ComputedFit, compute, size_at_level};
use crate::approaches::measured::search;
use crate::approaches::predicted::KernelTimeModel;
use crate::approaches::uncertainty::size_interval;
use crate::error::{Result, StudyError};
use crate::runner::{Measurement, Observer, Runner};
use crate::spec::configuration::ResolvedConfiguration;
use crate::spec::{Approach, StudySpec};
use crate::store::Store;
use crate::store::stored_spec::stored_spec;
use crate::study::summary::Summary;

// The result types live in `result` and `point`, below `warnings` and `summary`; re-exported so
// that callers keep naming them from here, beside the functions that make them.
pub use point::OperatingPoint;
pub use result::{
    ApproachResult, Calibration, Comparison, ConfigurationRow, Contour, ContourPoint, Failure,
    HeldOut, PsiIntervals, StudyResult,
};
pub use unsettled::{Unsettled, check_settled};

/// Contour levels as fractions of the target.
const CONTOUR_LEVELS: [f64; 5] = [0.5, 0.75, 1.0, 1.25, 1.5];

/// Runs `spec`, writing every run to `store` as it completes (and reusing the runs the store
/// already holds for this study).
pub fn run_study(spec: &StudySpec, store: &Store, observer: &dyn Observer) -> Result<StudyResult> {
    run_study_with(spec, &KernelRegistry::builtin(), store, observer)
}

/// As [`run_study`], the spec's kernel looked up in `registry` (a user's kernels added).
pub fn run_study_with(
    spec: &StudySpec,
    registry: &KernelRegistry,
    store: &Store,
    observer: &dyn Observer,
) -> Result<StudyResult> {
    let runner = Runner::new_with(spec, registry, store, observer)?;
    let result = analyse(&runner);
    // Whatever the approaches made of the runs that stopped, the study was interrupted.
    match runner.interruption()? {
        Some(interrupted) => Err(interrupted),
        None => result,
    }
}

/// Every study in `store`, its result re-derived from the stored runs without running anything
/// (an incomplete study is an error that says how to finish it).
pub fn load_results(store: &Store) -> Result<Vec<StudyResult>> {
    load_results_with(store, &KernelRegistry::builtin())
}

/// As [`load_results`], the studies' kernels looked up in `registry`.
pub fn load_results_with(store: &Store, registry: &KernelRegistry) -> Result<Vec<StudyResult>> {
    let names = store.studies()?;
    if names.is_empty() {
        return Err(StudyError::Store {
            path: store.path().to_string(),
            why: "holds no study: run hetscale study with this --db first".into(),
        });
    }
    // Every run is read (and checked) once, so a tampered one is named as such instead of
    // showing up as a missing run.
    store.runs(None)?;
    store.failed_runs(None)?;
    names
        .iter()
        .map(|name| {
            let spec = stored_spec(store, name, registry)?;
            analyse(&Runner::replaying(
                &spec,
                registry,
                store,
                &crate::runner::Silent,
            )?)
        })
        .collect()
}

fn analyse(runner: &Runner<'_>) -> Result<StudyResult> {
    let spec = runner.spec();
    let measured = spec.wants(Approach::Measured).then(|| run_measured(runner));
    let (computed, fits) = if spec.wants(Approach::Computed) {
        let (result, fits) = run_computed(runner, measured.as_ref());
        (Some(result), fits)
    } else {
        (None, Vec::new())
    };
    // Without a size on the base configuration (an unreachable target), approach 3 has
    // nothing to calibrate on and no run can be verified; the failures say why.
    let base = base_size(runner, measured.as_ref(), computed.as_ref());
    let verification = match &base {
        // A command's output is not checked: there is no run to verify.
        Ok(_) if runner.program().kernel().is_none() => None,
        Ok(b) => {
            let n = verification_size(runner, measured.as_ref(), computed.as_ref(), *b);
            Some(runner.verify(spec.verified_configuration(), n)?)
        }
        Err(_) => None,
    };
    let (predicted, calibration) = match (spec.wants(Approach::Predicted), base) {
        (false, _) => (None, None),
        (true, _) if runner.program().unmodelled().is_some() => {
            let why = runner
                .program()
                .unmodelled_in(spec.surface)
                .unwrap_or_default();
            (Some(all_failed(runner, Approach::Predicted, &why)), None)
        }
        (true, Ok(b)) => match run_predicted(runner, b) {
            Ok((result, calibration)) => (Some(result), Some(calibration)),
            // A model that cannot be calibrated fails approach 3 alone, with its reason.
            Err(e @ StudyError::Configuration { .. }) => {
                let why = e.to_string();
                (Some(all_failed(runner, Approach::Predicted, &why)), None)
            }
            Err(e) => return Err(e),
        },
        (true, Err(e)) => {
            let why = format!("no base size to calibrate on: {e}");
            (Some(all_failed(runner, Approach::Predicted, &why)), None)
        }
    };
    let held_out = held_out(runner, measured.as_ref().or(computed.as_ref()))?;
    let scaling_held_out = scaling_held_out(runner, measured.as_ref().or(computed.as_ref()));
    let comparison = compare(
        runner,
        measured.as_ref(),
        computed.as_ref(),
        predicted.as_ref(),
    );
    let samples: Vec<Measurement> = (0..runner.configurations().len())
        .flat_map(|i| runner.measurements_of(i))
        .collect();
    if let Some(error) = runner.failure_of_every_run() {
        return Err(error);
    }
    let contours = contours(runner, &fits);
    let warnings = study_warnings(runner, measured.as_ref(), computed.as_ref(), &samples)
        .into_iter()
        .chain(
            calibration
                .as_ref()
                .and_then(|c| c.warning(spec.backend == "sim")),
        )
        .collect();
    let mut result = StudyResult {
        spec: spec.clone(),
        configurations: runner
            .configurations()
            .iter()
            .map(|c| ConfigurationRow {
                label: c.configuration.label.clone(),
                nodes: c.nodes.clone(),
                p: c.configuration.nodes,
                marked_speed: c.configuration.marked_speed,
            })
            .collect(),
        measured,
        computed,
        fits,
        predicted,
        calibration,
        comparison,
        held_out,
        scaling_held_out,
        verification,
        samples,
        contours,
        warnings,
        summary: Summary::default(),
    };
    result.summary = Summary::of(&result);
    Ok(result)
}

fn study_warnings(
    runner: &Runner<'_>,
    measured: Option<&ApproachResult>,
    computed: Option<&ApproachResult>,
    samples: &[Measurement],
) -> Vec<String> {
    let spec = runner.spec();
    let expect = crate::study::warnings::Expectations {
        target: spec.target,
        tolerance: spec.tolerance,
        real_time: spec.backend != "sim",
    };
    let placeholder = runner.placeholder_warning().map(str::to_string);
    placeholder
        .into_iter()
        .chain(crate::study::warnings::warnings(
            &expect,
            points_of(measured),
            samples,
        ))
        .chain(crate::study::warnings::disagreements(
            points_of(measured),
            points_of(computed),
        ))
        .collect()
}

fn points_of(approach: Option<&ApproachResult>) -> &[OperatingPoint] {
    approach.map_or(&[], |r| r.points.as_slice())
}

/// The contours at [`CONTOUR_LEVELS`] times the target, each configuration's size found on its
/// fit within the sizes measured there (no extrapolation).
fn contours(runner: &Runner<'_>, fits: &[ComputedFit]) -> Vec<Contour> {
    let target = runner.spec().target;
    CONTOUR_LEVELS
        .iter()
        .map(|f| f * target)
        .filter(|level| *level < 1.0)
        .map(|level| Contour {
            level,
            points: fits
                .iter()
                .filter_map(|fit| contour_point(runner, fit, level))
                .collect(),
        })
        .filter(|c| !c.points.is_empty())
        .collect()
}

fn contour_point(runner: &Runner<'_>, fit: &ComputedFit, level: f64) -> Option<ContourPoint> {
    if fit.poor_fit.is_some() {
        return None;
    }
    let index = runner
        .configurations()
        .iter()
        .position(|c| c.configuration.label == fit.configuration)?;
    let measured = runner.measurements_of(index);
    let range = (measured.first()?.n as f64, measured.last()?.n as f64);
    let n = size_at_level(runner, index, fit, level, range)?.round();
    let c = &runner.configurations()[index].configuration;
    Some(ContourPoint {
        configuration: c.label.clone(),
        p: c.nodes,
        marked_speed: c.marked_speed,
        n,
        work: runner.work(index, n),
    })
}

fn run_measured(runner: &Runner<'_>) -> ApproachResult {
    let mut start = runner.spec().n_min;
    let outcomes = each_configuration(runner, Approach::Measured, |index| {
        let m = search(runner, index, start)?;
        start = m.n;
        let interval = size_interval(&m, &runner.measurements_of(index), runner.spec().target);
        let point = point_of(runner, index, m.n as f64, m.time.median);
        Ok(with_interval(runner, index, point, interval))
    });
    approach_result(Approach::Measured, outcomes)
}

fn run_computed(
    runner: &Runner<'_>,
    measured: Option<&ApproachResult>,
) -> (ApproachResult, Vec<ComputedFit>) {
    let mut start = runner.spec().n_min;
    let mut fits = Vec::new();
    let outcomes = each_configuration(runner, Approach::Computed, |index| {
        let label = &runner.configurations()[index].configuration.label;
        let hint = measured.and_then(|m| m.point(label)).map(|p| p.n as u64);
        let fit = compute(runner, index, hint.unwrap_or(start))?;
        let Some(n) = fit.n else {
            let range = crate::study::warnings::range_of(runner.spec().surface);
            let message = format!(
                "{}: add repetitions or samples, or widen [{}, {}]",
                fit.poor_fit
                    .as_deref()
                    .unwrap_or("the fit was not inverted"),
                range.n_min,
                range.n_max
            );
            fits.push(fit);
            return Err(StudyError::Configuration {
                configuration: label.clone(),
                message,
            });
        };
        start = n.round() as u64;
        let work = runner.work(index, n.round());
        let time = fit.model.time(n, work);
        let point = point_of(runner, index, n, time);
        let point = with_interval(runner, index, point, fit.n_ci95);
        fits.push(fit);
        Ok(point)
    });
    (approach_result(Approach::Computed, outcomes), fits)
}

/// The size measured on the base configuration for approach 3's calibration: the measured or
/// computed size there, else the uncalibrated model's.
fn base_size(
    runner: &Runner<'_>,
    measured: Option<&ApproachResult>,
    computed: Option<&ApproachResult>,
) -> Result<u64> {
    let base = &runner.configurations()[0];
    let found = [measured, computed]
        .into_iter()
        .flatten()
        .find_map(|r| r.point(&base.configuration.label))
        .map(|p| p.n);
    let n = match found {
        Some(n) => n,
        None => model_size(runner, &KernelTimeModel::default(), base)?,
    };
    Ok(n.round() as u64)
}

/// The verified run is at the size found on the verified configuration.
fn verification_size(
    runner: &Runner<'_>,
    measured: Option<&ApproachResult>,
    computed: Option<&ApproachResult>,
    base: u64,
) -> u64 {
    let index = runner.spec().verified_configuration();
    let label = &runner.configurations()[index].configuration.label;
    [measured, computed]
        .into_iter()
        .flatten()
        .find_map(|r| r.point(label))
        .map_or(base, |p| p.n.round() as u64)
}

fn run_predicted(runner: &Runner<'_>, base_n: u64) -> Result<(ApproachResult, Calibration)> {
    let calibration = calibrate(runner, base_n)?;
    let outcomes = each_configuration(runner, Approach::Predicted, |index| {
        let config = &runner.configurations()[index];
        let n = model_size(runner, &calibration.model, config)?;
        let time = calibration.model.time(runner.program(), n, config)?;
        Ok(point_of(runner, index, n, time))
    });
    Ok((approach_result(Approach::Predicted, outcomes), calibration))
}

/// Fits the kernel's model to the base configuration's measurements (Chen, Sun & Wu's
/// `alpha / C_i` from a base run; Sun & Rover's approach 3 from "only the single node
/// execution information"): with two sizes or more measured there, `T - T_o = a T_compute +
/// b` (the average unit speed curve in Hockney form, and start-up); with one, or when that
/// fit gives a negative `b`, `a = (T - T_o) / T_compute` at `n` alone.
fn calibrate(runner: &Runner<'_>, n: u64) -> Result<Calibration> {
    let base = &runner.configurations()[0];
    let measured = runner.measure(0, n)?;
    let (compute, overhead) = KernelTimeModel::parts(runner.program(), n as f64, base)?;
    let spare = measured.time.median - overhead;
    if spare <= 0.0 {
        return Err(StudyError::Configuration {
            configuration: base.configuration.label.clone(),
            message: format!(
                "the kernel's overhead model ({overhead:.3e} s) exceeds the measured time ({:.3e} s) at N = {n}: the platform's g, L or o overstate this machine; probe it (hetscale probe --write-platform)",
                measured.time.median
            ),
        });
    }
    let model = base_curve(runner)?.unwrap_or(KernelTimeModel {
        compute_factor: spare / compute,
        ..KernelTimeModel::default()
    });
    Ok(Calibration {
        configuration: base.configuration.label.clone(),
        n,
        measured_time_s: measured.time.median,
        model_compute_s: compute,
        model_overhead_s: overhead,
        model,
    })
}

/// `T - T_o = a T_compute + b` over every size measured on the base configuration, if there
/// are two or more and the fit is physical (`a > 0`, `b >= 0`).
fn base_curve(runner: &Runner<'_>) -> Result<Option<KernelTimeModel>> {
    let base = &runner.configurations()[0];
    let measurements = runner.measurements_of(0);
    if measurements.len() < 2 {
        return Ok(None);
    }
    let (mut compute, mut spare) = (Vec::new(), Vec::new());
    for m in &measurements {
        let (c, o) = KernelTimeModel::parts(runner.program(), m.n as f64, base)?;
        compute.push(c);
        spare.push(m.time.median - o);
    }
    let ones = vec![1.0; compute.len()];
    Ok(match least_squares(&[compute, ones], &spare) {
        Ok((c, _)) if c[0] > 0.0 && c[1] >= 0.0 => Some(KernelTimeModel {
            compute_factor: c[0],
            fixed_s: c[1],
            ..KernelTimeModel::default()
        }),
        _ => None,
    })
}

/// The size where `model` gives the target on `config`, searched over the spec's range.
fn model_size(
    runner: &Runner<'_>,
    model: &KernelTimeModel,
    config: &ResolvedConfiguration,
) -> Result<f64> {
    let spec = runner.spec();
    let program = runner.program();
    let efficiency = |n: f64| {
        let work = program.work(n, config.configuration.nodes);
        let time = model
            .time(program, n, config)
            .map_err(|e| hetscale_model::ModelError::Inconsistent(e.to_string()))?;
        Ok(work / (time * config.configuration.marked_speed))
    };
    solve_for_target(
        efficiency,
        spec.target,
        spec.n_min as f64,
        spec.n_max as f64,
        "predicted speed-efficiency",
    )
    .map_err(|e| {
        crate::study::warnings::with_range_advice(
            e,
            &config.configuration.label,
            crate::study::warnings::range_of(spec.surface),
        )
    })
}

/// Fits `T = a T_compute + k T_o` on every size measured on all configurations but the
/// largest, predicts the largest, and compares with what `reference` found there.
fn held_out(runner: &Runner<'_>, reference: Option<&ApproachResult>) -> Result<Option<HeldOut>> {
    let configs = runner.configurations();
    let Some(reference) = reference else {
        return Ok(None);
    };
    if runner.program().unmodelled().is_some() {
        return Ok(None);
    }
    let last = configs.len() - 1;
    let Some(target_point) = reference.point(&configs[last].configuration.label) else {
        return Ok(None);
    };
    if configs.len() < 3 {
        return Ok(None);
    }
    let (mut compute, mut overhead, mut times) = (Vec::new(), Vec::new(), Vec::new());
    for (index, config) in configs[..last].iter().enumerate() {
        for m in runner.measurements_of(index) {
            let (c, o) = KernelTimeModel::parts(runner.program(), m.n as f64, config)?;
            compute.push(c);
            overhead.push(o);
            times.push(m.time.median);
        }
    }
    // A start-up per run, as approach 3's base curve has (`T - T_o = a T_compute + b`).
    let ones = vec![1.0; times.len()];
    let Ok((coefficients, _)) = least_squares(&[compute, overhead, ones], &times) else {
        return Ok(None);
    };
    let model = KernelTimeModel {
        compute_factor: coefficients[0],
        overhead_factor: coefficients[1],
        fixed_s: coefficients[2],
    };
    let n_predicted = model_size(runner, &model, &configs[last])?;
    let time_predicted_s = model.time(runner.program(), target_point.n, &configs[last])?;
    let time_reference_s = target_point.time_s;
    Ok(Some(HeldOut {
        configuration: configs[last].configuration.label.clone(),
        fitted_on: configs[..last]
            .iter()
            .map(|c| c.configuration.label.clone())
            .collect(),
        model,
        n_predicted,
        n_reference: target_point.n,
        reference: reference.approach,
        relative_error: (n_predicted - target_point.n) / target_point.n,
        time_predicted_s,
        time_reference_s,
        time_relative_error: (time_predicted_s - time_reference_s) / time_reference_s,
    }))
}

/// The held-out check with the scaling model, on any program: selected on the runs of every
/// configuration but the largest, it predicts the largest's `N` (with its bootstrap interval)
/// and the time at `reference`'s `N` there. A model that cannot be selected or does not reach
/// the target gives no check rather than failing the study: the approaches' answers stand
/// without it.
fn scaling_held_out(
    runner: &Runner<'_>,
    reference: Option<&ApproachResult>,
) -> Option<crate::scaling::fit::ScalingHeldOut> {
    let configs = runner.configurations();
    if configs.len() < 3 {
        return None;
    }
    let reference = reference?;
    let last = configs.len() - 1;
    let target_point = reference.point(&configs[last].configuration.label)?;
    let fitted: Vec<_> = configs[..last]
        .iter()
        .enumerate()
        .map(|(index, config)| crate::scaling::fit::ConfigurationRuns {
            configuration: config,
            runs: runner
                .measurements_of(index)
                .iter()
                .map(|m| (m.n as f64, m.work, m.time.median))
                .collect(),
        })
        .collect();
    let spec = runner.spec();
    crate::scaling::fit::scaling_held_out(
        &fitted,
        &configs[last],
        runner.program(),
        spec.backend == "sim",
        (spec.target, spec.tolerance),
        (spec.n_min as f64, spec.n_max as f64),
        &crate::scaling::fit::HeldOutReference {
            approach: reference.approach,
            n: target_point.n,
            time_s: target_point.time_s,
        },
    )
    .ok()
}

fn compare(
    runner: &Runner<'_>,
    measured: Option<&ApproachResult>,
    computed: Option<&ApproachResult>,
    predicted: Option<&ApproachResult>,
) -> Vec<Comparison> {
    let n_of =
        |r: Option<&ApproachResult>, label: &str| r.and_then(|r| r.point(label)).map(|p| p.n);
    let ci_of = |r: Option<&ApproachResult>, label: &str| {
        r.and_then(|r| r.point(label)).and_then(|p| p.n_ci95)
    };
    let relative = |a: Option<f64>, b: Option<f64>| Some((a? - b?) / b?);
    runner
        .configurations()
        .iter()
        .map(|c| {
            let label = &c.configuration.label;
            let (m, co, pr) = (
                n_of(measured, label),
                n_of(computed, label),
                n_of(predicted, label),
            );
            Comparison {
                configuration: label.clone(),
                measured: m,
                measured_ci95: ci_of(measured, label),
                computed: co,
                computed_ci95: ci_of(computed, label),
                predicted: pr,
                computed_vs_measured: relative(co, m),
                predicted_vs_measured: relative(pr, m),
            }
        })
        .collect()
}

/// Runs `settle` on every configuration in order, telling the observer; a configuration that
/// fails is recorded and the others still run. Once the study is interrupted no configuration
/// starts: the study ends with the interruption, and the observer hears of it once.
fn each_configuration(
    runner: &Runner<'_>,
    approach: Approach,
    mut settle: impl FnMut(usize) -> Result<OperatingPoint>,
) -> Vec<std::result::Result<OperatingPoint, Failure>> {
    let total = runner.configurations().len();
    (0..total)
        .take_while(|_| crate::runner::interrupt::requested().is_none())
        .map(|index| {
            let label = runner.configurations()[index].configuration.label.clone();
            runner
                .observer()
                .configuration_started(approach, &label, index, total);
            let outcome = settle(index);
            let shown = match &outcome {
                Ok(p) => format!("N = {:.0}, E_s = {:.3}", p.n, p.speed_efficiency),
                Err(e) => e.to_string(),
            };
            runner
                .observer()
                .configuration_finished(approach, &label, &shown);
            outcome.map_err(|e| Failure {
                configuration: label,
                message: match e {
                    StudyError::Configuration { message, .. } => message,
                    other => other.to_string(),
                },
            })
        })
        .collect()
}

fn approach_result(
    approach: Approach,
    outcomes: Vec<std::result::Result<OperatingPoint, Failure>>,
) -> ApproachResult {
    let (mut points, mut failures) = (Vec::new(), Vec::new());
    for outcome in outcomes {
        match outcome {
            Ok(p) => points.push(p),
            Err(f) => failures.push(f),
        }
    }
    let labels = points.iter().map(|p| p.configuration.clone()).collect();
    let systems: Vec<(f64, f64)> = points.iter().map(|p| (p.marked_speed, p.work)).collect();
    let psi = ScalabilityMatrix::from_systems(labels, &systems).ok();
    let psi_ci95 = psi.as_ref().and_then(|_| PsiIntervals::of(&points));
    ApproachResult {
        approach,
        points,
        failures,
        psi,
        psi_ci95,
    }
}

fn all_failed(runner: &Runner<'_>, approach: Approach, why: &str) -> ApproachResult {
    let outcomes = runner
        .configurations()
        .iter()
        .map(|c| {
            Err(Failure {
                configuration: c.configuration.label.clone(),
                message: why.to_string(),
            })
        })
        .collect();
    approach_result(approach, outcomes)
}

fn point_of(runner: &Runner<'_>, index: usize, n: f64, time_s: f64) -> OperatingPoint {
    let c = &runner.configurations()[index].configuration;
    // Sizes are integers; roots of the model land between two of them.
    let n = n.round().max(1.0);
    let work = runner.work(index, n);
    OperatingPoint {
        configuration: c.label.clone(),
        p: c.nodes,
        marked_speed: c.marked_speed,
        n,
        n_ci95: None,
        work,
        work_ci95: None,
        time_s,
        speed_efficiency: work / (time_s * c.marked_speed),
    }
}

/// `point` with the 95% interval `n_ci95` of its size and the work over it.
fn with_interval(
    runner: &Runner<'_>,
    index: usize,
    point: OperatingPoint,
    n_ci95: Option<(f64, f64)>,
) -> OperatingPoint {
    let work_ci95 = n_ci95.map(|(lo, hi)| {
        let (a, b) = (runner.work(index, lo), runner.work(index, hi));
        (a.min(b), a.max(b))
    });
    OperatingPoint {
        n_ci95,
        work_ci95,
        ..point
    }
}
