//! `hetscale predict --from DB` (or `--runs FILE.csv`): the scaling model
//! ([`hetscale_model::scaling`]) fitted to a study's stored runs (or to runs measured
//! elsewhere), then asked for configurations never run: the size `N` holding the
//! target `E_s`, the time there and `psi` from the largest measured configuration, each with
//! a 95% interval from a bootstrap that refits and reselects the model.
//!
//! From a database, everything the fit needs is in it: the runs (their sizes, works and
//! times), the spec (the program, hence `W(n)`, and the configurations' node sets) and the
//! platform the study resolved (each node's marked speed), so a prediction needs neither the
//! spec file nor the platform file. Runs from a file need both named: the platform they ran
//! on and the program (a kernel, or a command's work formula).

use hbsp::Platform;
use hetscale_kernels::{KernelRegistry, flops_per_unit};
use hetscale_model::ModelError;
use hetscale_model::scaling::{
    BootstrapOptions, Configuration as ModelConfiguration, CustomTerm, HypothesisSpace, Interval,
    PredictionTarget, Progress, Run, ScalingData, SelectOptions, Selection, Term, bootstrap,
    held_up_to, reachable_from, select,
};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::prediction::{
    BaseConfiguration, ExcludedRun, FittedConfiguration, ModelSummary, PredictedPoint,
    ScalingPrediction, UnreachedPoint, sharpness, verdict,
};
use crate::calibrate::runs::MeasuredRun;
use crate::error::{Result, StudyError};
use crate::runner::SAMPLE;
use crate::runner::program::Program;
use crate::spec::configuration::{ResolvedConfiguration, resolve};
use crate::store::Store;
use crate::store::stored_spec::stored_spec;
use crate::study::warnings::{NOISE_FLOOR_S, OPTION_RANGE, unreachable_target};

/// How many runners-up the text and JSON show.
pub const RUNNERS_UP: usize = 3;

/// The study of `store` to fit: `name` if given (it must be stored), else the only one; a
/// database with several studies, or none, is an error that lists them.
pub fn pick_study(store: &Store, name: Option<&str>) -> Result<String> {
    let names = store.studies()?;
    let held = || match names.as_slice() {
        [] => "it holds none: run hetscale study with this --db first".to_string(),
        names => {
            let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
            format!("it holds {}", quoted.join(", "))
        }
    };
    let fail = |why: String| StudyError::Store {
        path: store.path().to_string(),
        why,
    };
    match name {
        Some(name) if names.iter().any(|n| n == name) => Ok(name.to_string()),
        Some(name) => Err(fail(format!("has no study \"{name}\": {}", held()))),
        None => match names.as_slice() {
            [only] => Ok(only.clone()),
            [] => Err(fail(format!("has no study: {}", held()))),
            _ => Err(fail(format!(
                "holds several studies, {}: pick one with --study NAME",
                held().trim_start_matches("it holds ")
            ))),
        },
    }
}

/// Measured runs, ready to fit: a study's stored ones ([`StudyRuns::load`]) or a CSV's
/// ([`StudyRuns::from_measured`]); what [`StudyRuns::fit`] and [`StudyRuns::predict`] need.
#[derive(Clone)]
pub struct StudyRuns {
    /// The study's target `E_s` (none for runs from a file: the caller gives one).
    pub target: Option<f64>,
    /// The relative tolerance around a target within which a size holds it.
    pub tolerance: f64,
    /// Whether the times are the simulator's virtual ones (no noise floor to leave out).
    pub simulated: bool,
    /// The platform the study resolved its configurations on, as stored.
    pub platform: Platform,
    /// The program, for `W(n)` at any size (shared with its own overhead hypothesis).
    pub program: Arc<Program>,
    /// The study's configurations that have measured runs, resolved on `platform`.
    pub configurations: Vec<ResolvedConfiguration>,
    /// The runs and configurations in the model's terms.
    pub data: ScalingData,
    /// Told of each bootstrap resample refitted (none unless set).
    pub progress: Progress,
    /// How many resamples the bootstrap refits (a planner's cheaper look uses fewer).
    pub resamples: usize,
}

impl StudyRuns {
    /// Study `name`'s completed sample runs (the measurements the approaches share; the
    /// verification run is left out: it ran with real compute, at another speed than the
    /// skeleton's), each configuration's node speeds from the stored platform.
    pub fn load(store: &Store, name: &str, registry: &KernelRegistry) -> Result<Self> {
        let fail = |why: String| StudyError::Store {
            path: store.path().to_string(),
            why,
        };
        let spec = stored_spec(store, name, registry)?;
        let platform = match store.study_platform(name)? {
            Some(text) => Platform::from_toml_str(&text).map_err(|e| {
                fail(format!(
                    "study \"{name}\" has an invalid stored platform ({e}): the database was altered or damaged"
                ))
            })?,
            // Stored before platforms were: the spec's name is all there is.
            None => Platform::load(&spec.platform)?,
        };
        let program = Arc::new(Program::of(&spec, registry)?);
        let runs: Vec<_> = store
            .runs(Some(name))?
            .into_iter()
            .filter(|r| r.purpose == SAMPLE)
            .collect();
        let mut configurations = Vec::new();
        let mut data = ScalingData::default();
        for c in &spec.configurations {
            if !runs.iter().any(|r| r.configuration == c.label) {
                continue;
            }
            let resolved = resolve(&platform, &c.label, &c.nodes)?;
            data.configurations
                .push(model_configuration(&resolved, &c.label)?);
            configurations.push(resolved);
        }
        for r in &runs {
            if data.configuration(&r.configuration).is_some() {
                data.runs
                    .push(Run::new(&r.configuration, r.n as f64, r.work, r.time_s));
            }
        }
        if data.runs.is_empty() {
            return Err(fail(format!(
                "holds no measured runs of study \"{name}\": run it with hetscale study and this --db first"
            )));
        }
        Ok(Self {
            target: Some(spec.target),
            tolerance: spec.tolerance,
            simulated: spec.backend == "sim",
            platform,
            program,
            configurations,
            data,
            progress: Progress::default(),
            resamples: BootstrapOptions::default().resamples,
        })
    }

    /// Runs measured elsewhere (`hetscale predict --runs FILE.csv`): each configuration's
    /// node set resolved on `platform` (the machine they ran on, whose marked speeds give
    /// `E_s`), the work of each run from `program`. Real runs: those below the noise floor
    /// are left out of the fit.
    pub fn from_measured(
        runs: &[MeasuredRun],
        platform: Platform,
        program: Arc<Program>,
        tolerance: f64,
    ) -> Result<Self> {
        let mut configurations: Vec<ResolvedConfiguration> = Vec::new();
        let mut data = ScalingData::default();
        for r in runs {
            if !configurations
                .iter()
                .any(|c| c.configuration.label == r.configuration)
            {
                let resolved = resolve(&platform, &r.configuration, &r.nodes)?;
                data.configurations
                    .push(model_configuration(&resolved, &r.configuration)?);
                configurations.push(resolved);
            }
            let p = data
                .configuration(&r.configuration)
                .map_or(1, ModelConfiguration::nodes);
            let work = program.work(r.n as f64, p);
            if !work.is_finite() {
                return Err(StudyError::Model(ModelError::Inconsistent(format!(
                    "the work formula gives no positive work at N = {} on p = {p} (run of {}): give a --work formula in n and p that is positive at every size measured",
                    r.n, r.configuration
                ))));
            }
            data.runs
                .push(Run::new(&r.configuration, r.n as f64, work, r.time_s));
        }
        if data.runs.is_empty() {
            return Err(StudyError::Model(ModelError::Inconsistent(
                "the file holds no runs: give one measured run per line".into(),
            )));
        }
        Ok(Self {
            target: None,
            tolerance,
            simulated: false,
            platform,
            program,
            configurations,
            data,
            progress: Progress::default(),
            resamples: BootstrapOptions::default().resamples,
        })
    }

    /// The selected model: the runs below the noise floor left out on a real backend (the
    /// simulator's virtual times have no noise to leave out). `targets` are the configurations
    /// it will be asked about (the program's own overhead model, a hypothesis unless
    /// `own_model` is false, is evaluated on them: see [`hypothesis_space`]).
    pub fn fit(&self, targets: &[ResolvedConfiguration], own_model: bool) -> Result<Selection> {
        let min_time_s = if self.simulated { 0.0 } else { NOISE_FLOOR_S };
        let options = SelectOptions {
            min_time_s,
            ..SelectOptions::default()
        };
        let known = self
            .configurations
            .iter()
            .map(|c| (c.configuration.label.clone(), c.clone()))
            .chain(targets.iter().map(|c| (c.nodes.clone(), c.clone())));
        let space = if own_model {
            self.check_command_model()?;
            hypothesis_space(&self.program, known, &self.data)
        } else {
            HypothesisSpace::for_partition(self.program.partition())
        };
        Ok(select(&self.data, &space, &options)?)
    }

    /// A command's overhead model (its formula, its declared communication) evaluated on
    /// every run: one that is not a time there is the user's to mend, so it is an error here
    /// rather than a hypothesis left out in silence (as a kernel's model that would not fit
    /// in memory is).
    fn check_command_model(&self) -> Result<()> {
        let Program::Command(command) = self.program.as_ref() else {
            return Ok(());
        };
        if !command.has_overhead_model() {
            return Ok(());
        }
        for run in &self.data.runs {
            let configuration = self
                .configurations
                .iter()
                .find(|c| c.configuration.label == run.configuration);
            if let Some(configuration) = configuration {
                self.program.model_parts(run.n, configuration)?;
            }
        }
        Ok(())
    }

    /// The prediction on each of `targets` at speed-efficiency `target`, sizes searched in
    /// `n_bounds`; `psi` is from the largest measured configuration (most nodes, then the
    /// fastest), the base.
    pub fn predict(
        &self,
        study: &str,
        selection: &Selection,
        targets: &[ResolvedConfiguration],
        target: f64,
        n_bounds: (f64, f64),
    ) -> Result<ScalingPrediction> {
        let base_index = (0..self.data.configurations.len())
            .max_by(|&a, &b| {
                let (a, b) = (&self.data.configurations[a], &self.data.configurations[b]);
                a.nodes()
                    .cmp(&b.nodes())
                    .then(a.marked_speed().total_cmp(&b.marked_speed()))
            })
            .ok_or_else(|| {
                StudyError::Model(ModelError::Inconsistent(
                    "no configuration was fitted".into(),
                ))
            })?;
        let base = &self.data.configurations[base_index];
        let base_work = |n: f64| self.program.work(n, base.nodes());
        let base_n = match selection
            .model
            .size_for_efficiency(target, base, &base_work, n_bounds)
        {
            Ok(n) => Some(n),
            // Runs from a file were not searched for the target, so their largest
            // configuration need not hold it: no psi, the prediction stands.
            Err(ModelError::Unreachable { .. }) if self.target.is_none() => None,
            // A model above the target at every size on a measured configuration cannot say
            // where it is held there: no psi; the requested configurations answer with the
            // intervals their distributions leave ([n_min, up to]).
            Err(ModelError::Unreachable { best, .. }) if best > target => None,
            Err(e) => return Err(self.poor_model(e, selection, &base.label, target)),
        };
        let reference = base_n.map(|_| base);
        let (mut points, mut unreached) = (Vec::new(), Vec::new());
        for t in targets {
            match self.predict_one(selection, t, reference, target, n_bounds)? {
                Ok(point) => points.push(point),
                Err(point) => unreached.push(point),
            }
        }
        // One configuration's answer is worth giving with the others' reasons, an interval
        // without a point ([n_from, open], [n_min, up to]) too; none is an error.
        let answered = !points.is_empty() || unreached.iter().any(|u| u.n_ci95.is_some());
        if !answered && !unreached.is_empty() {
            let first = unreached.swap_remove(0);
            return Err(StudyError::Configuration {
                configuration: first.nodes,
                message: first.reason,
            });
        }
        let excluded = selection
            .excluded
            .iter()
            .map(|e| ExcludedRun {
                configuration: e.run.configuration.clone(),
                n: e.run.n.round() as u64,
                time_s: e.run.time_s,
                reason: e.reason.clone(),
            })
            .collect();
        let fitted_on = self.fitted_on();
        let mut prediction = ScalingPrediction {
            study: study.to_string(),
            target,
            model: ModelSummary::of(&selection.model),
            runners_up: selection
                .runners_up
                .iter()
                .take(RUNNERS_UP)
                .map(ModelSummary::of)
                .collect(),
            fitted_on,
            excluded,
            base: BaseConfiguration {
                label: base.label.clone(),
                nodes: self
                    .configurations
                    .get(base_index)
                    .map_or_else(|| base.label.clone(), |c| c.nodes.clone()),
                p: base.nodes(),
                marked_speed_flops: base.marked_speed(),
                n_reference: base_n.map(|n| n.round() as u64),
            },
            points,
            unreached,
            verdict: String::new(),
        };
        prediction.verdict = verdict(&prediction);
        Ok(prediction)
    }

    /// The configurations fitted, with the sizes run on each.
    pub fn fitted_on(&self) -> Vec<FittedConfiguration> {
        self.configurations
            .iter()
            .map(|c| {
                let sizes = self
                    .data
                    .runs
                    .iter()
                    .filter(|r| r.configuration == c.configuration.label)
                    .map(|r| r.n.round() as u64);
                FittedConfiguration {
                    label: c.configuration.label.clone(),
                    nodes: c.nodes.clone(),
                    p: c.configuration.nodes,
                    marked_speed_flops: c.configuration.marked_speed,
                    n_min: sizes.clone().min().unwrap_or(0),
                    n_max: sizes.max().unwrap_or(0),
                }
            })
            .collect()
    }

    /// The error when the model reaches no size holding the target on a configuration the
    /// study measured: the model, not the range, is at fault, so it says which runs the fit
    /// had, and (as `--runs` does on any configuration) on which side of its curve the target
    /// lies and what to change.
    fn poor_model(
        &self,
        e: ModelError,
        selection: &Selection,
        label: &str,
        target: f64,
    ) -> StudyError {
        let ModelError::Unreachable {
            what,
            lo,
            hi,
            best,
            best_at,
            ..
        } = e
        else {
            return unreachable_on(e, label);
        };
        let kept = selection.model.runs;
        let below = selection.excluded.len();
        let advice = unreachable_target(what, target, (lo, hi), (best, best_at), OPTION_RANGE);
        StudyError::Model(ModelError::Inconsistent(format!(
            "the model fitted to the runs ({}, cross-validated error {:.0}%) holds E_s = {target} at no size on \"{label}\", a configuration the study measured: {advice} ({kept} runs fitted, {below} left out below the noise floor of {NOISE_FLOOR_S} s)",
            selection.model, selection.model.cv_error_percent
        )))
    }

    /// The bootstrap's options, telling [`Self::progress`].
    pub(crate) fn bootstrap_options(&self) -> BootstrapOptions {
        BootstrapOptions {
            progress: self.progress.clone(),
            resamples: self.resamples,
            ..BootstrapOptions::default()
        }
    }

    /// The point on `target_config`, or (the inner error) why the model holds the target at
    /// no size in `n_bounds` there.
    pub(crate) fn predict_one(
        &self,
        selection: &Selection,
        target_config: &ResolvedConfiguration,
        reference: Option<&ModelConfiguration>,
        target: f64,
        n_bounds: (f64, f64),
    ) -> Result<std::result::Result<PredictedPoint, UnreachedPoint>> {
        let label = &target_config.nodes;
        let configuration = model_configuration(target_config, label)?;
        let p = configuration.nodes();
        let work = |n: f64| self.program.work(n, p);
        let prediction = PredictionTarget {
            configuration: &configuration,
            efficiency: target,
            tolerance: self.tolerance,
            n_bounds,
            reference,
        };
        let bootstrapped = bootstrap(
            &self.data,
            selection,
            &prediction,
            &work,
            &self.bootstrap_options(),
        );
        let estimate = match bootstrapped {
            Ok(estimate) => estimate,
            Err(e) => {
                // The model falls short of the target everywhere, or exceeds it everywhere;
                // its distribution may leave an interval without a point.
                let options = self.bootstrap_options();
                let (from, up_to) = match e {
                    ModelError::Unreachable { .. } => (
                        reachable_from(&self.data, selection, &prediction, &work, &options)?,
                        held_up_to(&self.data, selection, &prediction, &work, &options)?,
                    ),
                    _ => (None, None),
                };
                let speed = configuration.marked_speed();
                let unreached = unreachable_on(e, label);
                return UnreachedPoint::from_error(label, p, speed, unreached)
                    .map(|u| Err(u.held_from(from).held_up_to(up_to, n_bounds.0)));
            }
        };
        let n = estimate.size.estimate;
        let measured = self
            .configurations
            .iter()
            .any(|c| c.configuration.nodes == p && same_speeds(c, &configuration));
        Ok(Ok(PredictedPoint {
            nodes: label.clone(),
            p,
            marked_speed_flops: configuration.marked_speed(),
            measured,
            n: n.round() as u64,
            n_ci95: size_ends(&estimate.size),
            n_sharpness: sharpness(n, &estimate.size, p, estimate.sharp_from_nodes),
            n_sharp_from_nodes: estimate.sharp_from_nodes,
            work_flop: work(n),
            time_s: estimate.time_s.estimate,
            time_s_ci95: (
                estimate.time_s.low,
                estimate
                    .time_s
                    .high
                    .is_finite()
                    .then_some(estimate.time_s.high),
            ),
            psi_from_base: estimate.psi.map(|i| i.estimate),
            psi_from_base_ci95: estimate.psi.map(|i| [i.low, i.high]),
            cautions: estimate.cautions.iter().map(ToString::to_string).collect(),
            predictive: estimate.predictive,
        }))
    }
}

/// A size interval's ends, whole; no upper end where it is open.
fn size_ends(size: &Interval) -> (u64, Option<u64>) {
    let high = size.high.is_finite().then(|| size.high.round() as u64);
    (size.low.round() as u64, high)
}

/// A configuration's runs for [`scaling_held_out`]: each size with its work (flop) and time (s).
pub struct ConfigurationRuns<'a> {
    /// The configuration.
    pub configuration: &'a ResolvedConfiguration,
    /// `(n, work_flop, time_s)`, one per size.
    pub runs: Vec<(f64, f64, f64)>,
}

/// What the held-out configuration measured: the size holding the target and its time.
pub struct HeldOutReference {
    /// The approach whose size it is.
    pub approach: crate::spec::Approach,
    /// Its size `N`.
    pub n: f64,
    /// Its time at `N`, s.
    pub time_s: f64,
}

/// The held-out check with the scaling model: selected on every configuration but the
/// largest, it predicts the largest, against what was found there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingHeldOut {
    /// The held-out (largest) configuration.
    pub configuration: String,
    /// The configurations fitted on.
    pub fitted_on: Vec<String>,
    /// The selected model.
    pub model: ModelSummary,
    /// The size it predicts holding the target on the held-out configuration.
    #[serde(serialize_with = "crate::json::as_integer")]
    pub n_predicted: f64,
    /// Its 95% interval from the predictive distribution; no upper end where it is open.
    pub n_predicted_ci95: (u64, Option<u64>),
    /// The size found there by `reference`.
    #[serde(serialize_with = "crate::json::as_integer")]
    pub n_reference: f64,
    /// The approach that found `n_reference`.
    pub reference: crate::spec::Approach,
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
    /// `(time_predicted_s - time_reference_s) / time_reference_s` (in JSON a percentage).
    #[serde(
        rename = "time_relative_error_percent",
        serialize_with = "crate::json::fraction_as_percent"
    )]
    pub time_relative_error: f64,
    /// What the data cannot support, one line each.
    pub cautions: Vec<String>,
}

/// Selects the scaling model on `fitted` (runs below the noise floor left out unless
/// `simulated`: virtual times have no noise), predicts with the bootstrap's 95% interval the
/// size holding `target` (within the relative `tolerance`) on `held_out` (sizes searched in `n_bounds`, the work of size `n` on
/// `p` nodes from `program`), and its time at the reference's size there.
pub fn scaling_held_out(
    fitted: &[ConfigurationRuns<'_>],
    held_out: &ResolvedConfiguration,
    program: &Arc<Program>,
    simulated: bool,
    (target, tolerance): (f64, f64),
    n_bounds: (f64, f64),
    reference: &HeldOutReference,
) -> Result<ScalingHeldOut> {
    let mut data = ScalingData::default();
    for c in fitted {
        let label = &c.configuration.configuration.label;
        data.configurations
            .push(model_configuration(c.configuration, label)?);
        data.runs.extend(
            c.runs
                .iter()
                .map(|&(n, work, time)| Run::new(label, n, work, time)),
        );
    }
    let options = SelectOptions {
        min_time_s: if simulated { 0.0 } else { NOISE_FLOOR_S },
        ..SelectOptions::default()
    };
    let known = fitted
        .iter()
        .map(|c| c.configuration)
        .chain([held_out])
        .map(|c| (c.configuration.label.clone(), c.clone()));
    let selection = select(&data, &hypothesis_space(program, known, &data), &options)?;
    let label = &held_out.configuration.label;
    let configuration = model_configuration(held_out, label)?;
    let p = configuration.nodes();
    let work = |n: f64| program.work(n, p);
    let estimate = bootstrap(
        &data,
        &selection,
        &PredictionTarget {
            configuration: &configuration,
            efficiency: target,
            tolerance,
            n_bounds,
            reference: None,
        },
        &work,
        &BootstrapOptions::default(),
    )
    .map_err(|e| unreachable_on(e, label))?;
    let n_predicted = estimate.size.estimate;
    let time_predicted_s =
        selection
            .model
            .predict_time(reference.n, work(reference.n), &configuration)?;
    Ok(ScalingHeldOut {
        configuration: label.clone(),
        fitted_on: fitted
            .iter()
            .map(|c| c.configuration.configuration.label.clone())
            .collect(),
        model: ModelSummary::of(&selection.model),
        n_predicted,
        n_predicted_ci95: size_ends(&estimate.size),
        n_reference: reference.n,
        reference: reference.approach,
        relative_error: (n_predicted - reference.n) / reference.n,
        time_predicted_s,
        time_reference_s: reference.time_s,
        time_relative_error: (time_predicted_s - reference.time_s) / reference.time_s,
        cautions: estimate.cautions.iter().map(ToString::to_string).collect(),
    })
}

/// What [`hypothesis_space`] names the program's own overhead model in formulas.
pub const OWN_OVERHEAD_KERNEL: &str = "T_o,hbsp";
/// ... and a command's `overhead` formula and declared `communication`.
pub const OWN_OVERHEAD_COMMAND: &str = "T_o,spec";

/// The hypotheses for `program`'s runs in `data`: Extra-P's normal form, plus the program's
/// own overhead model as one more term when it has one, so that the runs choose between the
/// derived model and the normal form, in a space whose compute term is the program's
/// partition's (`W/C`, or `W/(p C_min)` for a command that declares an equal split). The term
/// is all the program's time model adds to that compute term: for a kernel (split by speed),
/// `T - W/C` of its HBSP^1 model on the configuration's machine with the platform's `g`, `L`
/// and `r_j`, load imbalance included (a process grid's shares, say); for a command, its
/// `overhead` formula plus its declared `communication` charged on the configuration's
/// machine (its compute is the compute term itself, at the rate `a` fits). The term is
/// evaluated on `configurations` (by the label the model's configurations carry: the fitted
/// ones' labels, the targets' node sets) at integer sizes, cached, and left out when it is
/// not finite on every run (a model that would not fit in memory, say).
pub fn hypothesis_space(
    program: &Arc<Program>,
    configurations: impl IntoIterator<Item = (String, ResolvedConfiguration)>,
    data: &ScalingData,
) -> HypothesisSpace {
    let space = HypothesisSpace::for_partition(program.partition());
    let compute = space.compute_term();
    let name = match program.as_ref() {
        Program::Kernel(_) => OWN_OVERHEAD_KERNEL,
        Program::Command(command) if command.has_overhead_model() => OWN_OVERHEAD_COMMAND,
        Program::Command(_) => return space,
    };
    let table: HashMap<String, ResolvedConfiguration> = configurations.into_iter().collect();
    let program = Arc::clone(program);
    let cache: Mutex<HashMap<(String, u64), std::result::Result<f64, String>>> = Mutex::default();
    let overhead = move |n: f64, c: &ModelConfiguration| {
        let key = (c.label.clone(), n.round().max(1.0) as u64);
        if let Some(value) = cache.lock().expect("not poisoned").get(&key) {
            return value.clone();
        }
        let value = table
            .get(&c.label)
            .map_or(Ok(f64::NAN), |r| own_overhead(&program, &compute, n, r, c));
        cache
            .lock()
            .expect("not poisoned")
            .insert(key, value.clone());
        value
    };
    let overhead = Arc::new(overhead);
    let finite = data.runs.iter().all(|r| {
        data.configuration(&r.configuration)
            .is_some_and(|c| overhead(r.n, c).is_ok_and(f64::is_finite))
    });
    if !finite {
        return space;
    }
    space.with_custom(CustomTerm::fallible(name, move |n, c| overhead(n, c)))
}

/// The value of [`hypothesis_space`]'s own-overhead term at size `n` on `resolved` (`c` as
/// the model sees it), `compute` the space's compute term. A command's declared model that
/// has no value there (an overhead formula that turns negative, say) is the reason, as
/// approach 3 without runs gives it, since it is the user's input that is wrong; a kernel's
/// model that has none (too large for memory, say) is NaN, which only leaves its term out.
fn own_overhead(
    program: &Program,
    compute: &Term,
    n: f64,
    resolved: &ResolvedConfiguration,
    c: &ModelConfiguration,
) -> std::result::Result<f64, String> {
    match (program.model_parts(n, resolved), program) {
        (Ok((replayed, overhead)), Program::Kernel(_)) => {
            let work = program.work(n, resolved.configuration.nodes);
            Ok(replayed + overhead - compute.value(n, work, c))
        }
        (Ok((_, overhead)), Program::Command(_)) => Ok(overhead),
        (Err(_), Program::Kernel(_)) => Ok(f64::NAN),
        (Err(StudyError::Configuration { message, .. }), Program::Command(_)) => Err(message),
        (Err(e), Program::Command(_)) => Err(e.to_string()),
    }
}

/// Whether `resolved` has the node speeds of `configuration` (the same node set, in effect).
fn same_speeds(resolved: &ResolvedConfiguration, configuration: &ModelConfiguration) -> bool {
    model_configuration(resolved, "x").is_ok_and(|c| {
        let mut a = c.marked_speeds_flops;
        let mut b = configuration.marked_speeds_flops.clone();
        a.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        a.iter()
            .zip(&b)
            .all(|(x, y)| (x - y).abs() <= 1e-9 * x.abs().max(1.0))
            && a.len() == b.len()
    })
}

/// A model error on configuration `label`, a target the sizes cannot reach saying which
/// bound to change.
fn unreachable_on(e: ModelError, label: &str) -> StudyError {
    crate::study::warnings::with_range_advice(e, label, crate::study::warnings::OPTION_RANGE)
}

/// `resolved`'s nodes as the model takes them: each node's marked speed in flop/s.
pub(crate) fn model_configuration(
    resolved: &ResolvedConfiguration,
    label: &str,
) -> Result<ModelConfiguration> {
    let machine = &resolved.machine;
    // resolve() has checked the platform's unit is a flop rate.
    let unit = flops_per_unit(machine.speed_unit()).unwrap_or(1.0);
    let speeds = (0..machine.p())
        .map(|i| machine.marked_speed(i) * unit)
        .collect();
    Ok(ModelConfiguration::new(label, speeds)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::StudySpec;

    /// A threads study of mm on 1, 2 and 4 SunBlades whose stored times follow
    /// `T = W/C + 1e-3 p`, the smallest sizes below the noise floor.
    fn threads_study() -> Store {
        study_of(
            ["sunblade:1", "sunblade:2", "sunblade:4"],
            &[16, 32, 64, 128, 256, 512],
            |_, n, resolved| {
                let c = &resolved.configuration;
                2.0 * n.powi(3) / c.marked_speed + 1e-3 * c.nodes as f64
            },
        )
    }

    /// Study "t" of MM on sunwulf's `nodes` (labels `C_<p>`), 3 runs at each of `sizes`, each
    /// taking `time(program, n, configuration)`.
    fn study_of(
        nodes: [&str; 3],
        sizes: &[u64],
        time: impl Fn(&Program, f64, &ResolvedConfiguration) -> f64,
    ) -> Store {
        let mut text = String::from(
            "name = \"t\"\nkernel = \"mm\"\nplatform = \"sunwulf\"\nbackend = \"threads\"\n\
             target = 0.3\nn_min = 16\nn_max = 4096\n",
        );
        for (i, set) in nodes.iter().enumerate() {
            text.push_str(&format!(
                "\n[[configuration]]\nlabel = \"C_{i}\"\nnodes = \"{set}\"\n"
            ));
        }
        let spec = StudySpec::from_toml_str(&text, "t.toml").unwrap();
        let program = Program::of(&spec, &KernelRegistry::builtin()).unwrap();
        let platform = Platform::load("sunwulf").unwrap();
        let store = Store::open_in_memory().unwrap();
        store
            .register_study("t", &spec.canonical(), &platform.to_toml_string().unwrap())
            .unwrap();
        for c in &spec.configurations {
            let resolved = resolve(&platform, &c.label, &c.nodes).unwrap();
            let (p, speed) = (
                resolved.configuration.nodes,
                resolved.configuration.marked_speed,
            );
            for &n in sizes {
                for repetition in 0..3 {
                    let work = 2.0 * (n as f64).powi(3);
                    let mut run = crate::store::tests_support::sample(n, repetition);
                    run.study = "t".into();
                    run.backend = "threads".into();
                    run.configuration = c.label.clone();
                    run.nodes = p as u32;
                    run.marked_speed = speed;
                    run.work = work;
                    run.time_s = time(&program, n as f64, &resolved);
                    run.speed_efficiency = work / (run.time_s * speed);
                    store.record(&run).unwrap();
                }
            }
        }
        store
    }

    #[test]
    fn runs_below_the_noise_floor_are_left_out_and_named_and_the_law_is_found() {
        let store = threads_study();
        let runs = StudyRuns::load(&store, "t", &KernelRegistry::builtin()).unwrap();
        assert_eq!(runs.data.runs.len(), 3 * 6 * 3);
        let selection = runs.fit(&[], true).unwrap();
        let platform = runs.platform.clone();
        let targets = [resolve(&platform, "sunblade:4", "sunblade:4").unwrap()];
        let prediction = runs
            .predict("t", &selection, &targets, 0.3, (8.0, 1e7))
            .unwrap();
        // Every run at n = 16 and 32 is shorter than 0.01 s; none at 64 is.
        assert!(!prediction.excluded.is_empty());
        assert!(
            prediction
                .excluded
                .iter()
                .all(|e| e.n <= 32 && e.time_s < NOISE_FLOOR_S),
            "{:?}",
            prediction.excluded
        );
        assert!(
            prediction.model.formula.starts_with("T = 1 W/C"),
            "{}",
            prediction.model.formula
        );
        // On the largest measured configuration, E_s = 0.3 where W/C = 0.3/0.7 * 4e-3 s.
        let point = &prediction.points[0];
        assert!(point.measured);
        let speed = targets[0].configuration.marked_speed;
        let exact = (0.3 / 0.7 * 4e-3 * speed / 2.0).cbrt();
        assert!(
            (point.n as f64 / exact - 1.0).abs() < 0.02,
            "N = {}, exactly {exact}",
            point.n
        );
        assert!(
            prediction.verdict.contains("4 nodes"),
            "{}",
            prediction.verdict
        );
    }

    #[test]
    fn a_flat_model_advises_the_side_of_its_curve_the_target_lies_on() {
        // E_s = 1/22.5 = 0.044 at every size: 0.05 lies above the curve, 0.03 below it.
        let store = study_of(
            ["sunblade:1", "sunblade:2", "sunblade:4"],
            &[128, 256, 384, 512],
            |_, n, resolved| 22.5 * 2.0 * n.powi(3) / resolved.configuration.marked_speed,
        );
        let runs = StudyRuns::load(&store, "t", &KernelRegistry::builtin()).unwrap();
        let selection = runs.fit(&[], true).unwrap();
        let targets = [resolve(&runs.platform, "sunblade:8", "sunblade:8").unwrap()];
        let advice = |target: f64| {
            runs.predict("t", &selection, &targets, target, (8.0, 1e7))
                .unwrap_err()
                .to_string()
        };
        let above = advice(0.05);
        assert!(above.contains("lower the target"), "{above}");
        assert!(!above.contains("raise the target"), "{above}");
        // Below the curve every size holds the target: the answer is an interval from the
        // smallest size, not an error, and its reason still says which way to move the target.
        let below = runs
            .predict("t", &selection, &targets, 0.03, (8.0, 1e7))
            .unwrap();
        let [unreached] = &below.unreached[..] else {
            panic!("{below:?}")
        };
        assert!(below.points.is_empty() && below.base.n_reference.is_none());
        assert!(
            unreached.reason.contains("raise the target"),
            "{}",
            unreached.reason
        );
        assert!(
            !unreached.reason.contains("lower the target"),
            "{}",
            unreached.reason
        );
        assert!(
            unreached.n_ci95.is_some_and(|(low, _)| low == 8),
            "{:?}",
            unreached.n_ci95
        );
        assert!(below.verdict.contains("N is in [8, "), "{}", below.verdict);
    }

    #[test]
    fn a_kernels_own_model_is_a_hypothesis_the_runs_can_choose() {
        // Runs that take exactly MM's HBSP^1 time on sunwulf's mixed nodes.
        let model_time = |program: &Program, n: f64, c: &ResolvedConfiguration| {
            let (compute, overhead) = program.model_parts(n, c).unwrap();
            compute + overhead
        };
        let nodes = [
            "server:1,sunblade:1",
            "server:1,sunblade:3",
            "server:1,sunblade:7",
        ];
        let store = study_of(nodes, &[128, 256, 384, 512, 768], model_time);
        let runs = StudyRuns::load(&store, "t", &KernelRegistry::builtin()).unwrap();
        // The term is the model's time beyond W/C.
        let known = runs
            .configurations
            .iter()
            .map(|c| (c.configuration.label.clone(), c.clone()));
        let space = hypothesis_space(&runs.program, known, &runs.data);
        let own = space
            .overhead_terms()
            .into_iter()
            .find(|t| t.to_string() == OWN_OVERHEAD_KERNEL)
            .expect("a kernel's own model is a hypothesis");
        let run = &runs.data.runs[0];
        let c = runs.data.configuration(&run.configuration).unwrap();
        let expected = run.time_s - run.work_flop / c.marked_speed();
        let value = own.value(run.n, run.work_flop, c);
        assert!(
            (value / expected - 1.0).abs() < 1e-9,
            "{value} vs {expected}"
        );

        let with = runs.fit(&[], true).unwrap();
        assert_eq!(
            with.model.hypothesis(),
            [OWN_OVERHEAD_KERNEL],
            "{}",
            with.model
        );
        assert!(
            with.model.cv_error_percent < 0.01,
            "{}",
            with.model.cv_error_percent
        );
        let without = runs.fit(&[], false).unwrap();
        assert!(
            !without.model.to_string().contains(OWN_OVERHEAD_KERNEL),
            "{}",
            without.model
        );
    }

    #[test]
    fn a_database_without_the_study_names_those_it_holds() {
        let store = Store::open_in_memory().unwrap();
        let err = pick_study(&store, None).unwrap_err().to_string();
        assert!(err.contains("has no study"), "{err}");
        store.register_study("ge", "{}", "").unwrap();
        assert_eq!(pick_study(&store, None).unwrap(), "ge");
        store.register_study("mm", "{}", "").unwrap();
        let err = pick_study(&store, None).unwrap_err().to_string();
        assert!(
            err.contains("\"ge\", \"mm\": pick one with --study NAME"),
            "{err}"
        );
        let err = pick_study(&store, Some("x")).unwrap_err().to_string();
        assert!(
            err.contains("has no study \"x\": it holds \"ge\", \"mm\""),
            "{err}"
        );
    }
}
