//! A whole study: the approaches the spec asks for, on every configuration, then psi, the
//! approaches side by side, the verification run and the held-out check.

use crate::warnings::SPEC_RANGE;
use hetscale_model::fit::least_squares;
use hetscale_model::root::solve_for_target;
use hetscale_model::scalability::ScalabilityMatrix;
use serde::{Deserialize, Serialize};

use hetscale_kernels::KernelRegistry;

use crate::computed::{ComputedFit, compute, size_at_level};
use crate::configuration::ResolvedConfiguration;
use crate::error::{Result, StudyError};
use crate::measured::search;
use crate::predicted::{KernelTimeModel, PredictedStudy};
use crate::runner::{Measurement, Observer, Runner};
use crate::spec::{Approach, StudySpec};
use crate::store::{RunRecord, Store};
use crate::summary::Summary;
use crate::uncertainty::{psi_interval, size_interval};

/// The size one approach found for one configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperatingPoint {
    /// Configuration label.
    pub configuration: String,
    /// Number of nodes.
    pub p: usize,
    /// Marked speed `C`, flop/s.
    #[serde(rename = "marked_speed_flops")]
    pub marked_speed: f64,
    /// Problem size `N` (an integer).
    #[serde(serialize_with = "crate::json::as_integer")]
    pub n: f64,
    /// 95% interval of `N` from the noise of the runs, if known: from the measured `E_s`
    /// interval (measured approach) or a bootstrap of the fit (computed); never for the
    /// predicted approach, whose error is the model's, not the runs' (see the held-out check).
    pub n_ci95: Option<(f64, f64)>,
    /// Work `W(N)`, flop.
    #[serde(rename = "work_flop")]
    pub work: f64,
    /// `W` over `n_ci95`, flop.
    #[serde(rename = "work_flop_ci95")]
    pub work_ci95: Option<(f64, f64)>,
    /// Time `T`, s (measured, fitted or predicted).
    pub time_s: f64,
    /// `E_s = W / (T C)`.
    pub speed_efficiency: f64,
}

/// A configuration an approach could not settle, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    /// Configuration label.
    pub configuration: String,
    /// The one-line reason.
    pub message: String,
}

/// What one approach found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApproachResult {
    /// Which approach.
    pub approach: Approach,
    /// One point per configuration it settled, in the spec's order.
    pub points: Vec<OperatingPoint>,
    /// The configurations it could not settle.
    pub failures: Vec<Failure>,
    /// `psi(C_i, C_j) = C_j W_i / (C_i W_j)` over the settled configurations.
    pub psi: Option<ScalabilityMatrix>,
    /// 95% intervals of `psi` from the points' `work_ci95`, laid out as `psi`.
    pub psi_ci95: Option<PsiIntervals>,
}

/// The 95% intervals of a psi matrix: `values[i][j - i]` for `psi(C_i, C_j)`, `j >= i` (the
/// layout of [`ScalabilityMatrix`]); `None` where neither size has an interval, and on the
/// diagonal, where `psi(C_i, C_i) = 1` exactly. Serialized, like psi, as a full square
/// matrix, `null` where there is no interval.
#[derive(Debug, Clone, PartialEq)]
pub struct PsiIntervals {
    /// Configuration labels, as the matrix's.
    pub labels: Vec<String>,
    /// Row `i` holds the intervals of `psi(C_i, C_i), psi(C_i, C_i+1), ...`.
    pub values: Vec<Vec<Option<(f64, f64)>>>,
}

impl Serialize for PsiIntervals {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let n = self.labels.len();
        let full: Vec<Vec<Option<(f64, f64)>>> = (0..n)
            .map(|i| (0..n).map(|j| self.get(i, j)).collect())
            .collect();
        let mut matrix = serializer.serialize_struct("PsiIntervals", 2)?;
        matrix.serialize_field("labels", &self.labels)?;
        matrix.serialize_field("values", &full)?;
        matrix.end()
    }
}

impl PsiIntervals {
    /// The intervals of `psi` over `points` (one per configuration, in order).
    fn of(points: &[OperatingPoint]) -> Option<Self> {
        let work = |p: &OperatingPoint| (p.marked_speed, (p.work, p.work_ci95));
        let values: Vec<Vec<Option<(f64, f64)>>> = (0..points.len())
            .map(|i| {
                (i..points.len())
                    .map(|j| {
                        (j > i)
                            .then(|| psi_interval(work(&points[i]), work(&points[j])))
                            .flatten()
                    })
                    .collect()
            })
            .collect();
        values.iter().flatten().any(Option::is_some).then(|| Self {
            labels: points.iter().map(|p| p.configuration.clone()).collect(),
            values,
        })
    }

    /// The interval of `psi(C_i, C_j)`, if known.
    pub fn get(&self, i: usize, j: usize) -> Option<(f64, f64)> {
        *self.values.get(i)?.get(j.checked_sub(i)?)?
    }
}

impl ApproachResult {
    /// The point of configuration `label`, if settled.
    pub fn point(&self, label: &str) -> Option<&OperatingPoint> {
        self.points.iter().find(|p| p.configuration == label)
    }
}

/// Approach 3's calibration on the base configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// The base configuration.
    pub configuration: String,
    /// The size measured there.
    pub n: u64,
    /// The measured median time, s.
    pub measured_time_s: f64,
    /// The model's compute and overhead times there, s.
    pub model_compute_s: f64,
    /// See `model_compute_s`.
    pub model_overhead_s: f64,
    /// The model with its compute factor fitted to the measurement.
    pub model: KernelTimeModel,
}

impl Calibration {
    /// What to say when the fitted compute factor `a` has the base configuration's nodes
    /// computing faster than their marked speed (`a < 1`: at `1 / a` times it).
    pub fn warning(&self) -> Option<String> {
        let subject = format!(
            "approach 3's calibration on {}: compute factor a = {:.4}",
            self.configuration, self.model.compute_factor
        );
        crate::calibrate::faster_than_marked(&subject, 1.0 / self.model.compute_factor)
    }
}

/// Held-out validation: the time model fitted on every configuration but the largest, used to
/// predict the largest, against what was found there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldOut {
    /// The held-out (largest) configuration.
    pub configuration: String,
    /// The configurations fitted on.
    pub fitted_on: Vec<String>,
    /// The fitted model.
    pub model: KernelTimeModel,
    /// The size it predicts for the held-out configuration.
    pub n_predicted: f64,
    /// The size found there by `reference`.
    #[serde(serialize_with = "crate::json::as_integer")]
    pub n_reference: f64,
    /// The approach that found `n_reference`.
    pub reference: Approach,
    /// `(n_predicted - n_reference) / n_reference` (in JSON a percentage).
    #[serde(
        rename = "relative_error_percent",
        serialize_with = "crate::json::fraction_as_percent"
    )]
    pub relative_error: f64,
    /// The model's time at `n_reference` on the held-out configuration, s.
    pub time_predicted_s: f64,
    /// The time found at `n_reference` there, s.
    pub time_reference_s: f64,
    /// `(time_predicted_s - time_reference_s) / time_reference_s`: where speed-efficiency is
    /// flat in N, a small error in time moves N far, so both are shown. In JSON a percentage.
    #[serde(
        rename = "time_relative_error_percent",
        serialize_with = "crate::json::fraction_as_percent"
    )]
    pub time_relative_error: f64,
}

/// One configuration's size by each approach, and how far the others are from the measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Configuration label.
    pub configuration: String,
    /// Measured `N`.
    #[serde(rename = "n_measured", serialize_with = "crate::json::as_integer_opt")]
    pub measured: Option<f64>,
    /// Its 95% interval, if known.
    #[serde(rename = "n_measured_ci95")]
    pub measured_ci95: Option<(f64, f64)>,
    /// Computed `N`.
    #[serde(rename = "n_computed", serialize_with = "crate::json::as_integer_opt")]
    pub computed: Option<f64>,
    /// Its 95% interval, if known.
    #[serde(rename = "n_computed_ci95")]
    pub computed_ci95: Option<(f64, f64)>,
    /// Predicted `N`.
    #[serde(rename = "n_predicted", serialize_with = "crate::json::as_integer_opt")]
    pub predicted: Option<f64>,
    /// `(computed - measured) / measured` (in JSON a percentage).
    #[serde(
        rename = "computed_vs_measured_percent",
        serialize_with = "crate::json::fraction_as_percent_opt"
    )]
    pub computed_vs_measured: Option<f64>,
    /// `(predicted - measured) / measured` (in JSON a percentage).
    #[serde(
        rename = "predicted_vs_measured_percent",
        serialize_with = "crate::json::fraction_as_percent_opt"
    )]
    pub predicted_vs_measured: Option<f64>,
}

/// Everything a study found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyResult {
    /// The spec it ran.
    pub spec: StudySpec,
    /// The configurations: label, node set, p, C.
    pub configurations: Vec<ConfigurationRow>,
    /// Approach 1.
    pub measured: Option<ApproachResult>,
    /// Approach 2.
    pub computed: Option<ApproachResult>,
    /// Approach 2's fits, per configuration.
    pub fits: Vec<ComputedFit>,
    /// Approach 3.
    pub predicted: Option<ApproachResult>,
    /// Approach 3's calibration.
    pub calibration: Option<Calibration>,
    /// The approaches side by side.
    pub comparison: Vec<Comparison>,
    /// Held-out validation, when there are at least three configurations and a reference.
    pub held_out: Option<HeldOut>,
    /// Held-out validation with the scaling model (any program, commands included), when
    /// there are at least three configurations and a reference on the largest.
    pub scaling_held_out: Option<crate::scaling_fit::ScalingHeldOut>,
    /// The verified run with real compute.
    pub verification: Option<RunRecord>,
    /// Every size measured, by configuration and size.
    pub samples: Vec<Measurement>,
    /// Isospeed-e contours from the computed fits: for several speed-efficiencies around the
    /// target, the size and work each configuration needs (Sun & Rover's isospeed contours).
    pub contours: Vec<Contour>,
    /// What the numbers do not say by themselves (see [`crate::warnings`]), one line each.
    pub warnings: Vec<String>,
    /// The answer first: per approach, N and psi from the base, and a verdict.
    pub summary: Summary,
}

/// The configurations' sizes holding one speed-efficiency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contour {
    /// The speed-efficiency held.
    pub level: f64,
    /// One point per configuration whose fit reaches the level within its samples.
    pub points: Vec<ContourPoint>,
}

/// One configuration on a contour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContourPoint {
    /// Configuration label.
    pub configuration: String,
    /// Number of nodes.
    pub p: usize,
    /// Marked speed `C`, flop/s.
    #[serde(rename = "marked_speed_flops", alias = "marked_speed")]
    pub marked_speed: f64,
    /// Problem size (the real root of the fit at the level).
    #[serde(rename = "n_root", alias = "n")]
    pub n: f64,
    /// Work `W(N)`, flop.
    #[serde(rename = "work_flop", alias = "work")]
    pub work: f64,
}

/// Contour levels as fractions of the target.
const CONTOUR_LEVELS: [f64; 5] = [0.5, 0.75, 1.0, 1.25, 1.5];

/// A configuration as the result lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigurationRow {
    /// Label.
    pub label: String,
    /// Node set.
    pub nodes: String,
    /// Number of nodes.
    pub p: usize,
    /// Marked speed `C`, flop/s.
    #[serde(rename = "marked_speed_flops")]
    pub marked_speed: f64,
}

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

/// The spec study `name` was stored with, checked as a spec file is: a database altered by
/// hand must not reach the approaches with, say, `n_max = 0`.
pub(crate) fn stored_spec(
    store: &Store,
    name: &str,
    registry: &KernelRegistry,
) -> Result<StudySpec> {
    let fail = |why: String| StudyError::Store {
        path: store.path().to_string(),
        why,
    };
    let text = store.study_spec(name)?.unwrap_or_default();
    let spec: StudySpec = serde_json::from_str(&text).map_err(|e| {
        fail(format!("study \"{name}\" has an unreadable spec ({e}): was it written by another hetscale version?"))
    })?;
    spec.validated(registry).map_err(|e| {
        fail(format!(
            "study \"{name}\" has an invalid spec ({e}): the database was altered or damaged; rerun the study with a new --db"
        ))
    })
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
            let why = runner.program().unmodelled().unwrap_or_default();
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
        .chain(calibration.as_ref().and_then(Calibration::warning))
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
    let expect = crate::warnings::Expectations {
        target: spec.target,
        tolerance: spec.tolerance,
        real_time: spec.backend != "sim",
    };
    let placeholder = runner.placeholder_warning().map(str::to_string);
    placeholder
        .into_iter()
        .chain(crate::warnings::warnings(
            &expect,
            points_of(measured),
            samples,
        ))
        .chain(crate::warnings::disagreements(
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
            let message = format!(
                "{}: add repetitions or samples, or widen [n_min, n_max]",
                fit.poor_fit
                    .as_deref()
                    .unwrap_or("the fit was not inverted")
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
    .map_err(|e| crate::warnings::with_range_advice(e, &config.configuration.label, SPEC_RANGE))
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
) -> Option<crate::scaling_fit::ScalingHeldOut> {
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
        .map(|(index, config)| crate::scaling_fit::ConfigurationRuns {
            configuration: config,
            runs: runner
                .measurements_of(index)
                .iter()
                .map(|m| (m.n as f64, m.work, m.time.median))
                .collect(),
        })
        .collect();
    let spec = runner.spec();
    crate::scaling_fit::scaling_held_out(
        &fitted,
        &configs[last],
        runner.program(),
        spec.backend == "sim",
        spec.target,
        (spec.n_min as f64, spec.n_max as f64),
        &crate::scaling_fit::HeldOutReference {
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
        .take_while(|_| crate::interrupt::requested().is_none())
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

/// Approach 3 without running anything: the kernel's (or command's) time model as derived
/// (`a = k = 1`) on each configuration, e.g. at 4096 nodes.
pub fn predict_configurations(
    program: &crate::program::Program,
    configs: &[ResolvedConfiguration],
    target: f64,
    (n_min, n_max): (u64, u64),
) -> Result<PredictedStudy> {
    Ok(KernelTimeModel::default().predict(
        program,
        configs,
        target,
        (n_min as f64, n_max as f64),
    )?)
}
