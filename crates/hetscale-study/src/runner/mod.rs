//! The runner: executes a kernel at a problem size on one configuration, repeats it as the
//! spec's statistics ask, and writes every run to the store as it completes — or, when the
//! store already holds the run (an interrupted study being resumed), reads it instead.
//!
//! This folder owns running a program once and repeatedly: what is measured ([`program`]:
//! a kernel or a command), external commands ([`external`]) and where their time comes from
//! ([`time_source`]), MPI jobs ([`mpi_launch`]), SIGINT/SIGTERM ([`interrupt`]), one run
//! repeated as hyperfine repeats it ([`repeat`]) and what `hetscale run` reports of it
//! ([`run_report`]).

pub mod external;
pub mod interrupt;
pub mod mpi_launch;
pub mod program;
pub mod repeat;
pub mod run_report;
pub mod time_source;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use hbsp::{Backend, Platform, WorkCharge};
use hetscale_kernels::KernelRegistry;
use hetscale_kernels::memory::check_run_fits;
use serde::Serialize;

use crate::calibrate::runs::MEASURED_RUN_S;
use crate::error::{Result, StudyError};
use crate::runner::mpi_launch::MpiLauncher;
use crate::runner::program::{Hostfiles, Program, RunOutcome};
use crate::spec::configuration::{ResolvedConfiguration, resolve};
use crate::spec::{Approach, StudySpec};
use crate::stats::{Summary, summarize};
use crate::store::{RunKey, RunRecord, Store};

/// Purpose of runs that sample `E_s(N)` (the approaches share them).
pub const SAMPLE: &str = "sample";
/// Purpose of the run with real compute whose result is checked.
pub const VERIFICATION: &str = "verification";

/// Progress of a study, for progress bars; every method has a silent default.
pub trait Observer {
    /// `approach` starts on configuration `index` of `total`.
    fn configuration_started(
        &self,
        _approach: Approach,
        _label: &str,
        _index: usize,
        _total: usize,
    ) {
    }
    /// A size was measured (from new runs or from the store).
    fn measured(&self, _measurement: &Measurement) {}
    /// A completed run was read from the store instead of run again (a resumed study).
    fn run_reused(&self) {}
    /// A run stored as failed by an earlier study run is run again (a resumed study).
    fn failure_retried(&self) {}
    /// `approach` finished a configuration; `outcome` says what it found.
    fn configuration_finished(&self, _approach: Approach, _label: &str, _outcome: &str) {}
}

/// An observer that shows nothing.
pub struct Silent;

impl Observer for Silent {}

/// The median run time at one size of one configuration, and the speed-efficiency it gives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurement {
    /// Configuration label.
    pub configuration: String,
    /// Problem size.
    pub n: u64,
    /// Work `W(N)`, flop.
    #[serde(rename = "work_flop")]
    pub work: f64,
    /// Statistics of the run times, s.
    #[serde(rename = "time_stats_s")]
    pub time: Summary,
    /// `E_s = W / (T C)` with the median `T`.
    pub speed_efficiency: f64,
    /// `E_s` at the ends of the median's 95% interval (low, high).
    #[serde(rename = "speed_efficiency_ci95")]
    pub speed_efficiency_ci: (f64, f64),
}

/// Executes and records the runs of one study.
pub struct Runner<'a> {
    spec: &'a StudySpec,
    program: Arc<Program>,
    hostfiles: Hostfiles,
    /// The first run that failed, for a study none of whose runs completed.
    first_failure: RefCell<Option<String>>,
    /// The runs that failed in this study run, by key: their failures stand, where a failure
    /// stored by an earlier run of the study is retried.
    failed_here: RefCell<BTreeSet<OwnedKey>>,
    store: &'a Store,
    observer: &'a dyn Observer,
    backend: Backend,
    configurations: Vec<ResolvedConfiguration>,
    measurements: RefCell<BTreeMap<(usize, u64), Measurement>>,
    host: String,
    replay: bool,
    /// Present on `backend = "mpi"`: every run is an MPI job.
    launcher: Option<MpiLauncher>,
    /// Said when the platform's marked speeds are placeholders, not measurements.
    placeholder_warning: Option<String>,
}

impl<'a> Runner<'a> {
    /// Resolves the spec's kernel (a built-in one) or command, backend, platform and
    /// configurations and registers the study in the store with the platform it resolved
    /// (refusing a stored study of the same name with another spec or platform).
    pub fn new(spec: &'a StudySpec, store: &'a Store, observer: &'a dyn Observer) -> Result<Self> {
        Self::new_with(spec, &KernelRegistry::builtin(), store, observer)
    }

    /// As [`Runner::new`], the kernel looked up in `registry`.
    pub fn new_with(
        spec: &'a StudySpec,
        registry: &KernelRegistry,
        store: &'a Store,
        observer: &'a dyn Observer,
    ) -> Result<Self> {
        let platform = crate::speed::local_speed::load_platform(&spec.platform)?.platform;
        platform.check_kernels(&registry.names())?;
        let runner = Self::on_platform(spec, registry, &platform, store, observer)?;
        runner.program.check_calibrated_on(&platform)?;
        store.register_study(&spec.name, &spec.canonical(), &platform.to_toml_string()?)?;
        Ok(Self {
            launcher: match spec.backend.as_str() {
                "mpi" => Some(MpiLauncher::new(
                    spec,
                    &runner.configurations,
                    store.path(),
                )?),
                _ => None,
            },
            ..runner
        })
    }

    /// A runner that only reads the store: a run it does not hold is an error, so a study's
    /// result can be re-derived (for a report) without running anything. The study's
    /// configurations are resolved on the platform stored with it, so the report needs
    /// neither the platform file nor the directory the study ran in.
    pub fn replaying(
        spec: &'a StudySpec,
        registry: &KernelRegistry,
        store: &'a Store,
        observer: &'a dyn Observer,
    ) -> Result<Self> {
        let platform = match store.study_platform(&spec.name)? {
            Some(text) => Platform::from_toml_str(&text).map_err(|e| StudyError::Store {
                path: store.path().to_string(),
                why: format!(
                    "study \"{}\" has an invalid stored platform ({e}): the database was altered or damaged",
                    spec.name
                ),
            })?,
            // Stored before platforms were (schema 3): the spec's name is all there is.
            None => Platform::load(&spec.platform)?,
        };
        Ok(Self {
            replay: true,
            ..Self::on_platform(spec, registry, &platform, store, observer)?
        })
    }

    /// The runner of `spec` with its configurations resolved on `platform`; it launches no
    /// MPI job.
    fn on_platform(
        spec: &'a StudySpec,
        registry: &KernelRegistry,
        platform: &Platform,
        store: &'a Store,
        observer: &'a dyn Observer,
    ) -> Result<Self> {
        let program = Arc::new(Program::of(spec, registry)?);
        let configurations = spec
            .configurations
            .iter()
            .map(|c| resolve(platform, &c.label, &c.nodes))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            spec,
            program,
            hostfiles: Hostfiles::default(),
            first_failure: RefCell::new(None),
            failed_here: RefCell::new(BTreeSet::new()),
            store,
            observer,
            backend: backend(spec, spec.skeleton)?,
            configurations,
            measurements: RefCell::new(BTreeMap::new()),
            host: host_name(),
            replay: false,
            launcher: None,
            placeholder_warning: platform.placeholder_warning(),
        })
    }

    fn missing(&self, config: &ResolvedConfiguration, n: u64) -> StudyError {
        StudyError::Configuration {
            configuration: config.configuration.label.clone(),
            message: format!(
                "study \"{}\" is incomplete (no stored run at N = {n}): finish it with hetscale study and this --db",
                self.spec.name
            ),
        }
    }

    /// What to tell the user when the platform's marked speeds are placeholders.
    pub fn placeholder_warning(&self) -> Option<&str> {
        self.placeholder_warning.as_deref()
    }

    /// The study's spec.
    pub fn spec(&self) -> &StudySpec {
        self.spec
    }

    /// The kernel or command studied.
    pub fn program(&self) -> &Arc<Program> {
        &self.program
    }

    /// Work `W` at size `n` on configuration `index`, flop.
    pub fn work(&self, index: usize, n: f64) -> f64 {
        self.program
            .work(n, self.configurations[index].configuration.nodes)
    }

    /// The first run that failed, if no run has completed: why the whole study failed.
    pub fn failure_of_every_run(&self) -> Option<StudyError> {
        let none_completed = self.measurements.borrow().is_empty();
        let failure = self.first_failure.borrow().clone()?;
        none_completed.then(|| StudyError::Configuration {
            configuration: self.spec.name.clone(),
            message: format!("every run failed; the first: {failure}"),
        })
    }

    /// Why the study must stop, if a signal asked it to (see [`crate::runner::interrupt`]).
    pub fn interruption(&self) -> Result<Option<StudyError>> {
        if crate::runner::interrupt::requested().is_none() {
            return Ok(None);
        }
        // The whole database's: a rerun resumes every study in it (the default study's
        // experiments share one), not just the one that was cut short.
        let stored = self.store.completed_runs()?;
        Ok(Some(StudyError::Interrupted { stored }))
    }

    /// The configurations, in the spec's order.
    pub fn configurations(&self) -> &[ResolvedConfiguration] {
        &self.configurations
    }

    /// The observer.
    pub fn observer(&self) -> &dyn Observer {
        self.observer
    }

    /// Every size measured so far on configuration `index`, by size.
    pub fn measurements_of(&self, index: usize) -> Vec<Measurement> {
        self.measurements
            .borrow()
            .range((index, 0)..=(index, u64::MAX))
            .map(|(_, m)| m.clone())
            .collect()
    }

    /// Measures configuration `index` at size `n`: runs the repetitions the store does not hold
    /// yet, writes each as it completes, and summarises all of them.
    pub fn measure(&self, index: usize, n: u64) -> Result<Measurement> {
        if let Some(m) = self.measurements.borrow().get(&(index, n)) {
            return Ok(m.clone());
        }
        self.measure_runs(index, n, self.spec.repetitions)
    }

    /// Measures configuration `index` at size `n` again with at least `runs` repetitions,
    /// beyond the spec's if need be (a size whose noise must be pinned down), reusing the
    /// runs the store holds.
    pub fn remeasure(&self, index: usize, n: u64, runs: u32) -> Result<Measurement> {
        self.measure_runs(index, n, runs)
    }

    fn measure_runs(&self, index: usize, n: u64, at_least: u32) -> Result<Measurement> {
        let config = &self.configurations[index];
        // Runs this study measured already are read again, not reused from an earlier one.
        let known = self
            .measurements
            .borrow()
            .get(&(index, n))
            .map_or(0, |m| m.time.samples as u32);
        let mut times = Vec::new();
        let mut warmed_up = false;
        for repetition in 0..self.spec.max_repetitions.max(at_least) {
            let key = self.key(config, SAMPLE, n, repetition);
            let stored = if repetition < known {
                self.store.find(key)?
            } else {
                self.stored(key)?
            };
            let time = match stored {
                Some(stored) => stored.time_s,
                None => {
                    if let Some(error) = self.standing_failure(key)? {
                        return Err(self.failed(config, error));
                    }
                    if self.replay {
                        return Err(self.missing(config, n));
                    }
                    let warm_up = !std::mem::replace(&mut warmed_up, true);
                    self.execute_recorded(config, n, repetition, warm_up)?
                        .time_s
                }
            };
            times.push(time);
            if times.len() as u32 >= at_least && self.enough(&times)? {
                break;
            }
        }
        let measurement = self.summarise(config, n, &times)?;
        self.observer.measured(&measurement);
        self.measurements
            .borrow_mut()
            .insert((index, n), measurement.clone());
        Ok(measurement)
    }

    /// Runs configuration `index` at size `n` with real compute, checks the result against the
    /// kernel's sequential reference and records the run; a failed check is an error.
    pub fn verify(&self, index: usize, n: u64) -> Result<RunRecord> {
        let config = &self.configurations[index];
        let key = self.key(config, VERIFICATION, n, 0);
        if let Some(stored) = self.stored(key)? {
            // Before runs had a status, a failed check was stored as a completed run.
            if !stored.verified {
                return Err(self.failed(
                    config,
                    format!("the stored verification run at N = {n} did not pass"),
                ));
            }
            return Ok(stored);
        }
        if let Some(error) = self.standing_failure(key)? {
            return Err(self.failed(config, error));
        }
        if self.replay {
            return Err(self.missing(config, n));
        }
        let run = self.execute(config, &backend(self.spec, false)?, n)?;
        let record = self.record(config, VERIFICATION, 0, &run);
        match &run.verification {
            Some(v) if !v.passed => {
                let error = format!(
                    "verification failed at N = {n}: {} = {:.3e} exceeds {:.3e}",
                    v.method, v.error, v.tolerance
                );
                self.record_failure(key, &record, &error)?;
                Err(self.failed(config, error))
            }
            _ => {
                self.store.record(&record)?;
                Ok(record)
            }
        }
    }

    /// The stored failure of the run with `key` that stands. A report (replaying) shows every
    /// stored failure; a study retries one stored by an earlier run of it (a node that died,
    /// a timeout may not fail again), its failure kept in the store's failure history, and
    /// stands by one it made itself.
    fn standing_failure(&self, key: RunKey<'_>) -> Result<Option<String>> {
        let Some(error) = self.store.failure(key)? else {
            return Ok(None);
        };
        if self.replay || self.failed_here.borrow().contains(&OwnedKey::of(key)) {
            return Ok(Some(error));
        }
        self.observer.failure_retried();
        Ok(None)
    }

    /// Stores `record` as failed with `error`: a failure of this study run, which stands.
    fn record_failure(&self, key: RunKey<'_>, record: &RunRecord, error: &str) -> Result<()> {
        self.failed_here.borrow_mut().insert(OwnedKey::of(key));
        self.store.record_failure(record, error)?;
        Ok(())
    }

    /// The completed run with `key` the store holds, told to the observer as reused.
    fn stored(&self, key: RunKey<'_>) -> Result<Option<RunRecord>> {
        let found = self.store.find(key)?;
        if found.is_some() {
            self.observer.run_reused();
        }
        Ok(found)
    }

    fn key<'k>(
        &'k self,
        config: &'k ResolvedConfiguration,
        purpose: &'k str,
        n: u64,
        repetition: u32,
    ) -> RunKey<'k> {
        RunKey {
            study: &self.spec.name,
            purpose,
            configuration: &config.configuration.label,
            n,
            repetition,
        }
    }

    fn warm_up(&self, config: &ResolvedConfiguration, n: u64) -> Result<()> {
        for _ in 0..self.spec.warmup {
            self.execute(config, &self.backend, n)?;
        }
        Ok(())
    }

    /// Runs one sample, after the warm-up runs if `warm_up`, and stores it, completed or failed
    /// (a failure is never a measurement). A failed warm-up is stored as the sample's failure:
    /// the sample would have failed the same way, and a study none of whose runs completes
    /// must say so.
    fn execute_recorded(
        &self,
        config: &ResolvedConfiguration,
        n: u64,
        repetition: u32,
        warm_up: bool,
    ) -> Result<RunOutcome> {
        let started = std::time::Instant::now();
        let warmed = if warm_up {
            self.warm_up(config, n)
        } else {
            Ok(())
        };
        let outcome = warmed
            .and_then(|()| self.execute(config, &self.backend, n))
            .and_then(|run| measured_time(run, n));
        match outcome {
            Ok(run) => {
                self.store
                    .record(&self.record(config, SAMPLE, repetition, &run))?;
                Ok(run)
            }
            Err(e) => {
                if let Some(interrupted) = self.interruption()? {
                    // Cut short, not failed: the rerun runs it again.
                    return Err(interrupted);
                }
                let error = match e {
                    StudyError::Configuration { message, .. } => message,
                    other => other.to_string(),
                };
                let run = RunOutcome {
                    n,
                    time_s: started.elapsed().as_secs_f64(),
                    work: self.work_or_zero(config, n),
                    verification: None,
                };
                let record = self.record(config, SAMPLE, repetition, &run);
                let key = self.key(config, SAMPLE, n, repetition);
                self.record_failure(key, &record, &error)?;
                Err(self.failed(config, error))
            }
        }
    }

    /// The error of a failed run (`message` already names `N`), noted for the study's end.
    fn failed(&self, config: &ResolvedConfiguration, message: String) -> StudyError {
        let error = StudyError::Configuration {
            configuration: config.configuration.label.clone(),
            message,
        };
        self.first_failure
            .borrow_mut()
            .get_or_insert_with(|| error.to_string());
        error
    }

    fn work_or_zero(&self, config: &ResolvedConfiguration, n: u64) -> f64 {
        let work = self.program.work(n as f64, config.configuration.nodes);
        if work.is_finite() { work } else { 0.0 }
    }

    fn execute(
        &self,
        config: &ResolvedConfiguration,
        backend: &Backend,
        n: u64,
    ) -> Result<RunOutcome> {
        if let Some(interrupted) = self.interruption()? {
            return Err(interrupted);
        }
        if let Some(launcher) = &self.launcher {
            return launcher.run(self.spec, config, n);
        }
        if let Some(kernel) = self.program.kernel() {
            // Refused before the inputs are generated, not killed by the system halfway.
            let size = usize::try_from(n).unwrap_or(usize::MAX);
            check_run_fits(kernel, size, &config.machine, backend).map_err(|e| {
                StudyError::Configuration {
                    configuration: config.configuration.label.clone(),
                    message: format!("N = {n}: {e}"),
                }
            })?;
        }
        let hostfile = self.hostfiles.path_for(&self.program, config)?;
        crate::runner::program::execute(
            &self.program,
            self.spec.seed,
            config,
            backend,
            n,
            hostfile.as_deref(),
        )
    }

    fn enough(&self, times: &[f64]) -> Result<bool> {
        let runs = times.len() as u32;
        if runs < self.spec.repetitions {
            return Ok(false);
        }
        match self.spec.max_relative_ci {
            Some(limit) if runs >= 2 => Ok(summarize(times)?.relative_ci_half_width() <= limit),
            Some(_) => Ok(false),
            None => Ok(true),
        }
    }

    fn summarise(
        &self,
        config: &ResolvedConfiguration,
        n: u64,
        times: &[f64],
    ) -> Result<Measurement> {
        let time = summarize(times)?;
        let work = self.program.work(n as f64, config.configuration.nodes);
        let c = config.configuration.marked_speed;
        let efficiency = |t: f64| work / (t * c);
        Ok(Measurement {
            configuration: config.configuration.label.clone(),
            n,
            work,
            speed_efficiency: efficiency(time.median),
            speed_efficiency_ci: (efficiency(time.median_ci.1), efficiency(time.median_ci.0)),
            time,
        })
    }

    fn record(
        &self,
        config: &ResolvedConfiguration,
        purpose: &str,
        repetition: u32,
        run: &RunOutcome,
    ) -> RunRecord {
        let c = &config.configuration;
        RunRecord {
            study: self.spec.name.clone(),
            purpose: purpose.into(),
            kernel: self.spec.kernel.clone(),
            backend: self.spec.backend.clone(),
            platform: self.spec.platform.clone(),
            configuration: c.label.clone(),
            nodes: c.nodes as u32,
            marked_speed: c.marked_speed,
            n: run.n,
            repetition,
            time_s: run.time_s,
            work: run.work,
            speed_efficiency: run.work / (run.time_s * c.marked_speed),
            verified: run.verification.as_ref().is_some_and(|v| v.passed),
            host: self.host.clone(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// A [`RunKey`] within one study: purpose, configuration, size and repetition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct OwnedKey(String, String, u64, u32);

impl OwnedKey {
    fn of(key: RunKey<'_>) -> Self {
        Self(
            key.purpose.to_string(),
            key.configuration.to_string(),
            key.n,
            key.repetition,
        )
    }
}

/// The backend of the spec; on `sim`, kernels' declared work is charged exactly, so runs are
/// deterministic.
fn backend(spec: &StudySpec, skeleton: bool) -> Result<Backend> {
    if spec.command.is_some() {
        // Never used: a command runs itself.
        return Ok(Backend::threads());
    }
    let mut backend: Backend = spec.backend.parse()?;
    if let Backend::Sim(options) = &mut backend {
        options.work = WorkCharge::Declared;
        options.skip_compute = skeleton;
        options.no_trace = true;
    }
    Ok(backend)
}

/// `run` if its time is one a measured run takes ([`MEASURED_RUN_S`]), else the error of a
/// failed run: the store reads no other, so a time past it (a program that printed another
/// unit, a simulated size beyond any machine's patience) is a failed run, not a stored one.
fn measured_time(run: RunOutcome, n: u64) -> Result<RunOutcome> {
    if MEASURED_RUN_S.contains(&run.time_s) {
        return Ok(run);
    }
    Err(StudyError::Configuration {
        configuration: String::new(),
        message: format!(
            "the run at N = {n} took {:e} s, outside the {:e} to {:e} s a measured run takes: lower n_max, or check the time the program prints (time_regex, time_json) and its unit",
            run.time_s,
            MEASURED_RUN_S.start(),
            MEASURED_RUN_S.end()
        ),
    })
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}
