//! Reproduction of the papers' experiments (`hetscale reproduce`).
//!
//! For each published experiment: calibrate the platform's machine model ONLY on the base
//! (smallest) configuration's published rows ([`crate::calibrate`]), plus the machine facts
//! the paper states (already in the preset), then run the study on the simulated machine for
//! every configuration and set published beside measured (simulated), computed and predicted,
//! with relative errors. Rows of the other configurations are validation rows: nothing
//! computed from them feeds a fit ([`Experiment::calibration_runs`] is the only input of
//! the calibration).

use std::path::Path;

use hbsp::Platform;
use hetscale_kernels::{KernelOptions, KernelRegistry};
use hetscale_model::workload;
use serde::Serialize;

use crate::calibrate::{FreeParameter, PlatformCalibration, calibrate, simulate, with_rate};
use crate::error::{Result, StudyError};
use crate::measurements::{MeasuredRun, PublishedValue, Quantity, published};
use crate::runner::Observer;
use crate::spec::{Approach, StudySpec};
use crate::store::Store;
use crate::study::{StudyResult, run_study_with};

/// The experiments `hetscale reproduce` knows, by id.
pub const EXPERIMENTS: [&str; 3] = ["jpdc-ge", "jpdc-mm", "jpdc-conv2d"];

/// One published experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    /// `jpdc-ge`, ...
    pub id: String,
    /// Paper id of the data (`jpdc`).
    pub paper: String,
    /// Kernel run.
    pub kernel: String,
    /// Kernel options that make it the paper's program.
    pub options: KernelOptions,
    /// Target speed-efficiency.
    pub target: f64,
    /// Why this target, when the paper does not state it.
    pub assumption: Option<String>,
    /// Preset or platform file.
    pub platform: String,
    /// Configurations `(label, nodes)` in the paper's order; the first is the base.
    pub configurations: Vec<(String, String)>,
    /// The published rows of the experiment.
    pub values: Vec<PublishedValue>,
}

/// One value, published beside what hetscale finds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReproducedValue {
    /// Paper id.
    pub paper: String,
    /// Table (or `text`).
    pub table: String,
    /// Configuration, pair of configurations (`psi(C_2,C_4)`) or `C_4 N=300`.
    pub item: String,
    /// `N`, `psi` or `T`.
    pub quantity: String,
    /// Unit of the values.
    pub unit: String,
    /// The paper's value.
    pub published: f64,
    /// hetscale's value (`None`: the approach found none).
    pub tool: Option<f64>,
    /// `measured` (on sim), `computed` or `predicted`.
    pub approach: String,
    /// `calibration` (the base configuration's rows) or `validation`.
    pub role: String,
    /// `(tool - published) / published`.
    pub rel_err: Option<f64>,
}

/// An experiment reproduced.
#[derive(Debug, Clone, Serialize)]
pub struct Reproduction {
    /// Experiment id.
    pub id: String,
    /// Target speed-efficiency used.
    pub target: f64,
    /// Why this target, when the paper does not state it.
    pub assumption: Option<String>,
    /// The calibration on the base configuration.
    pub calibration: PlatformCalibration,
    /// Every value.
    pub values: Vec<ReproducedValue>,
    /// The study run on the calibrated machine.
    #[serde(skip)]
    pub study: StudyResult,
}

impl Reproduction {
    /// Median |rel err| of the validation rows of `quantity` by `approach`.
    pub fn median_error(&self, quantity: &str, approach: &str) -> Option<f64> {
        let errors: Vec<f64> = self
            .values
            .iter()
            .filter(|v| v.role == "validation" && v.quantity == quantity && v.approach == approach)
            .filter_map(|v| v.rel_err.map(f64::abs))
            .collect();
        crate::stats::summarize(&errors).ok().map(|s| s.median)
    }
}

impl Experiment {
    /// The experiment `id` (see [`EXPERIMENTS`]).
    pub fn named(id: &str) -> Result<Self> {
        let (kernel, target, assumption, pivoting) = match id {
            // JPDC section 4.4.1: E_s = 0.3; the paper's GE takes row i as pivot i.
            "jpdc-ge" => ("ge", 0.3, None, "none"),
            // JPDC section 4.4.2 and Table 8: E_s = 0.2 ("the speed-efficiency ... 0.2").
            "jpdc-mm" => ("mm", 0.2, None, "partial"),
            "jpdc-conv2d" => (
                "conv2d",
                0.2,
                Some(
                    "JPDC does not state conv2d's target E_s; section 4.4.4 says its testing \
                     \"was similar to the Matrix Multiplication experiment\", so MM's 0.2 is assumed"
                        .to_owned(),
                ),
                "partial",
            ),
            other => {
                return Err(StudyError::Calibration(format!(
                    "unknown experiment \"{other}\": use one of {}",
                    EXPERIMENTS.join(", ")
                )));
            }
        };
        // The CSV names each experiment after its kernel.
        let values: Vec<PublishedValue> = published("jpdc")?
            .into_iter()
            .filter(|v| v.experiment == kernel)
            .collect();
        let mut configurations: Vec<(String, String)> = Vec::new();
        for v in values
            .iter()
            .filter(|v| v.quantity == Quantity::ProblemSize)
        {
            configurations.push((v.configuration.clone(), v.nodes.clone()));
        }
        Ok(Self {
            id: id.to_owned(),
            paper: "jpdc".into(),
            kernel: kernel.into(),
            options: KernelOptions {
                pivoting: pivoting.into(),
                ..KernelOptions::default()
            },
            target,
            assumption,
            platform: "sunwulf".into(),
            configurations,
            values,
        })
    }

    /// The base configuration's label.
    pub fn base(&self) -> &str {
        &self.configurations[0].0
    }

    /// The runs calibration may use: the base configuration's published times, and the
    /// times its published speed-efficiencies and target size imply (`T = W / (E_s C)`).
    pub fn calibration_runs(&self, platform: &Platform) -> Result<Vec<MeasuredRun>> {
        let base = self.base();
        let mut runs = Vec::new();
        for v in self.values.iter().filter(|v| v.configuration == base) {
            let (n, time_s) = match v.quantity {
                Quantity::Time => (v.n, Some(v.value)),
                Quantity::SpeedEfficiency => (v.n, self.implied_time(platform, v, v.value)?),
                Quantity::ProblemSize => {
                    let n = v.value.round() as u64;
                    let mut at = v.clone();
                    at.n = Some(n);
                    (Some(n), self.implied_time(platform, &at, self.target)?)
                }
                _ => (None, None),
            };
            if let (Some(n), Some(time_s)) = (n, time_s) {
                runs.push(MeasuredRun {
                    configuration: v.configuration.clone(),
                    nodes: v.nodes.clone(),
                    kernel: self.kernel.clone(),
                    n,
                    time_s,
                });
            }
        }
        Ok(runs)
    }

    /// `T = W(N) / (E_s C)` for a row at size `v.n`.
    fn implied_time(
        &self,
        platform: &Platform,
        v: &PublishedValue,
        e_s: f64,
    ) -> Result<Option<f64>> {
        let Some(n) = v.n else { return Ok(None) };
        let c = crate::runner::resolve(platform, &v.configuration, &v.nodes)?
            .configuration
            .marked_speed;
        Ok(Some(kernel_work(&self.kernel, n as f64)? / (e_s * c)))
    }

    fn spec(&self, platform_file: &Path) -> Result<StudySpec> {
        let mut text = format!(
            "name = \"{id}\"\nkernel = \"{kernel}\"\nbackend = \"sim\"\nplatform = \"{platform}\"\n\
             skeleton = true\ntarget = {target}\ntolerance = 0.01\n\
             approaches = [\"measured\", \"computed\", \"predicted\"]\n\
             n_min = 16\nn_max = 16384\nsamples = 4\n\n[kernel_options]\npivoting = \"{pivoting}\"\n",
            id = self.id,
            kernel = self.kernel,
            platform = platform_file.display(),
            target = self.target,
            pivoting = self.options.pivoting,
        );
        for (label, nodes) in &self.configurations {
            text.push_str(&format!(
                "\n[[configuration]]\nlabel = \"{label}\"\nnodes = \"{nodes}\"\n"
            ));
        }
        StudySpec::from_toml_str(&text, &self.id)
    }
}

/// The published work formula of `kernel` at size `n`.
fn kernel_work(kernel: &str, n: f64) -> Result<f64> {
    Ok(match kernel {
        "ge" => workload::ge(n)?,
        "mm" => workload::mm(n)?,
        _ => workload::conv2d(n)?,
    })
}

/// Reproduces `experiment`: calibrates on its base configuration, writes the calibrated
/// platform into `out`, runs the study (runs stored in `store`) and compares.
pub fn reproduce(
    experiment: &Experiment,
    registry: &KernelRegistry,
    store: &Store,
    observer: &dyn Observer,
    out: &Path,
) -> Result<Reproduction> {
    let platform = Platform::load(&experiment.platform)?;
    let runs = experiment.calibration_runs(&platform)?;
    let calibration = if runs.len() >= MIN_RUNS_FOR_START_UP {
        let both = [FreeParameter::RateFraction, FreeParameter::RunOverhead];
        calibrate(&platform, registry, &experiment.options, &runs, &both)?
    } else {
        // One run identifies one parameter, the rate; the start-up is the machine's.
        let start_up = machine_start_up(registry, &experiment.platform)?;
        let platform = with_rate(&platform, &experiment.kernel, |rate| {
            rate.run_overhead_s = start_up;
        });
        let rate = [FreeParameter::RateFraction];
        calibrate(&platform, registry, &experiment.options, &runs, &rate)?
    };
    let platform_file = out.join(format!("{}.platform.toml", experiment.id));
    calibration.platform.write_file(&platform_file)?;
    let spec = experiment.spec(&platform_file)?;
    let study = run_study_with(&spec, registry, store, observer)?;
    let mut values = size_and_psi_rows(experiment, &study);
    values.extend(time_rows(experiment, &calibration.platform, registry)?);
    Ok(Reproduction {
        id: experiment.id.clone(),
        target: experiment.target,
        assumption: experiment.assumption.clone(),
        calibration,
        values,
        study,
    })
}

/// Base runs needed to fit the start-up beside the rate (two parameters, one degree of
/// freedom left for an interval).
const MIN_RUNS_FOR_START_UP: usize = 3;

/// Sunwulf's start-up per run, calibrated on the GE experiment's base configuration (JPDC
/// Table 3 and section 4.4.1: the only base with several runs). Every JPDC program starts
/// the same way, with process 0 reading the marked-speed file (section 4.1.2), so the MM and
/// conv2d experiments, whose base has one published size, take it as a machine fact. Only
/// base rows are used: no validation row of any experiment.
pub fn machine_start_up(registry: &KernelRegistry, platform: &str) -> Result<f64> {
    let ge = Experiment::named("jpdc-ge")?;
    let platform = Platform::load(platform)?;
    let runs = ge.calibration_runs(&platform)?;
    let both = [FreeParameter::RateFraction, FreeParameter::RunOverhead];
    let fit = calibrate(&platform, registry, &ge.options, &runs, &both)?;
    Ok(fit.kernels[0].run_overhead_s.estimate)
}

fn role(experiment: &Experiment, configuration: &str) -> String {
    if configuration == experiment.base() {
        "calibration".into()
    } else {
        "validation".into()
    }
}

fn row(
    v: &PublishedValue,
    item: String,
    tool: Option<f64>,
    approach: &str,
    role: String,
) -> ReproducedValue {
    ReproducedValue {
        paper: v.paper.clone(),
        table: v.table.clone(),
        item,
        quantity: v.quantity.as_str().into(),
        unit: v.unit.clone(),
        published: v.value,
        tool,
        approach: approach.into(),
        role,
        rel_err: tool.map(|t| (t - v.value) / v.value),
    }
}

fn size_and_psi_rows(experiment: &Experiment, study: &StudyResult) -> Vec<ReproducedValue> {
    let approaches = [
        (Approach::Measured, &study.measured),
        (Approach::Computed, &study.computed),
        (Approach::Predicted, &study.predicted),
    ];
    let mut rows = Vec::new();
    for v in &experiment.values {
        for (approach, result) in &approaches {
            let Some(result) = result else { continue };
            let name = approach.name();
            match v.quantity {
                Quantity::ProblemSize => {
                    let tool = result.point(&v.configuration).map(|p| p.n);
                    let role = role(experiment, &v.configuration);
                    rows.push(row(v, v.configuration.clone(), tool, name, role));
                }
                Quantity::Psi => {
                    let Some((from, to)) = v.configuration.split_once('>') else {
                        continue;
                    };
                    let tool = match (result.point(from), result.point(to)) {
                        (Some(a), Some(b)) => {
                            Some(b.marked_speed * a.work / (a.marked_speed * b.work))
                        }
                        _ => None,
                    };
                    // A psi from the base to another configuration still depends on a
                    // validation size.
                    rows.push(row(
                        v,
                        format!("psi({from},{to})"),
                        tool,
                        name,
                        "validation".into(),
                    ));
                }
                _ => {}
            }
        }
    }
    rows
}

fn time_rows(
    experiment: &Experiment,
    platform: &Platform,
    registry: &KernelRegistry,
) -> Result<Vec<ReproducedValue>> {
    let mut rows = Vec::new();
    for v in experiment
        .values
        .iter()
        .filter(|v| v.quantity == Quantity::Time)
    {
        let Some(n) = v.n else { continue };
        let run = MeasuredRun {
            configuration: v.configuration.clone(),
            nodes: v.nodes.clone(),
            kernel: experiment.kernel.clone(),
            n,
            time_s: v.value,
        };
        let tool = simulate(platform, registry, &experiment.options, &run)?;
        let role = role(experiment, &v.configuration);
        rows.push(row(
            v,
            format!("{} N={n}", v.configuration),
            Some(tool),
            "measured",
            role,
        ));
    }
    Ok(rows)
}
