//! A published experiment as hetscale reproduces it: [`Experiment`] (its published rows, the
//! configurations, what the base configuration calibrates and how: the only input of the
//! calibration is [`Experiment::calibration_runs`]), [`ReproducedValue`] and [`Reproduction`].
//! Each paper's module builds its experiments (`crate::jpdc::experiments`, `crate::tpds::burg`,
//! `crate::tpds::slalom`); [`crate::reproduce`] names and runs them.

use std::path::Path;

use hbsp::Platform;
use hetscale_kernels::{KernelOptions, KernelRegistry};
use hetscale_model::{metrics, workload};
use serde::Serialize;

use crate::measurements::{PublishedValue, Quantity, published};
use hetscale_study::calibrate::runs::MeasuredRun;
use hetscale_study::calibrate::{FreeParameter, PlatformCalibration, simulate};
use hetscale_study::spec::StudySpec;
use hetscale_study::study::StudyResult;
use hetscale_study::{Result, StudyError};

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
    /// Configurations `(label, nodes)` in the paper's order; the first is the base unless
    /// [`Experiment::base_configuration`] names another.
    pub configurations: Vec<(String, String)>,
    /// The configuration calibrated on, when the paper publishes no run of the first (Sun &
    /// Rover's SLALOM on the nCUBE 2 has none on one node).
    pub base_configuration: Option<String>,
    /// The kernel's asymptotic rate over the marked speed, when the paper states it (SLALOM's
    /// 1.5 Mflop/s on an nCUBE 2 marked at Burg's 1.7): a machine fact, set before the
    /// calibration and not fitted.
    pub rate_fraction: Option<f64>,
    /// The machine model's parameters the base configuration's rows fit.
    pub free: Vec<FreeParameter>,
    /// Whether the base configuration chooses its free parameters itself, by leave-one-out
    /// error over its runs ([`hetscale_study::calibrate::choose_fit`]), instead of fitting `free`.
    pub chooses_free: bool,
    /// Whether the study holds the published target itself rather than the calibrated
    /// machine's `E_s` at the base point (see [`HeldEfficiency`]; `hetscale reproduce
    /// --published-target`).
    pub holds_published_target: bool,
    /// Whether the kernel takes the machine's start-up per run from the GE experiment's base
    /// (see [`machine_start_up`](crate::reproduce::machine_start_up)) instead of fitting its own.
    pub shares_start_up: bool,
    /// Largest problem size the study searches.
    pub n_max: u64,
    /// Whether approach 3 charges the collectives as measured on the machine (JPDC section
    /// 4.5 measured `T_broadcast(p)`, `T_send`, `T_barrier` for its prediction), instead of
    /// HBSP^1's `g h + L`.
    pub measures_collectives: bool,
    /// Whether the paper's approach 3 (prediction from the base's run) applies; Sun & Rover's
    /// SLALOM does not satisfy their Theorem 1, so for it hetscale predicts nothing either.
    pub predicts: bool,
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
    /// `(tool - published) / published` (in JSON a percentage, `rel_err_percent`).
    #[serde(
        rename = "rel_err_percent",
        serialize_with = "hetscale_study::json::fraction_as_percent_opt"
    )]
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
    /// The speed-efficiency the study held on the calibrated machine, when the base publishes
    /// its size at the target; `None`: the study held [`Reproduction::target`] itself.
    pub held: Option<HeldEfficiency>,
    /// The calibration on the base configuration.
    pub calibration: PlatformCalibration,
    /// Every value.
    pub values: Vec<ReproducedValue>,
    /// The study run on the calibrated machine.
    #[serde(skip)]
    pub study: StudyResult,
}

/// The speed-efficiency a reproduction's study holds: the calibrated machine's own at the
/// base configuration's published point.
///
/// Isospeed-e scalability compares configurations at one speed-efficiency, the base point's
/// (JPDC Corollary 2; section 4.5 predicts Table 12 by keeping "the speed-efficiency constant
/// based on the case of two nodes", from C_2's N = 310). A machine calibrated on several base
/// runs fits them in the least-squares sense, so its `E_s` at the base's published size is
/// near the published target, not on it (GE: 0.324 at N = 310 against 0.3); holding the
/// target itself would carry that base residual into every other configuration as a bias of
/// the same sign; holding the base point's value follows the machine's contour through it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldEfficiency {
    /// The calibrated machine's `E_s = W / (T C)` at the base point.
    pub e_s: f64,
    /// The base configuration.
    pub configuration: String,
    /// Its published size at the target.
    pub n: u64,
}

impl HeldEfficiency {
    /// One line: what was held, and where it comes from.
    pub fn describe(&self) -> String {
        format!(
            "held E_s = {:.4}: the calibrated machine's on {} at its published N = {} (the \
             contour through the base point)",
            self.e_s, self.configuration, self.n
        )
    }
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
        hetscale_study::stats::summarize(&errors)
            .ok()
            .map(|s| s.median)
    }
}

impl Experiment {
    /// The published rows of the CSV's `experiment` and its configurations, in the paper's
    /// order.
    pub(crate) fn from_paper(
        id: &str,
        paper: &str,
        experiment: &str,
        kernel: &str,
        target: f64,
        platform: &str,
    ) -> Result<Self> {
        let values: Vec<PublishedValue> = published(paper)?
            .into_iter()
            .filter(|v| v.experiment == experiment)
            .collect();
        let mut configurations: Vec<(String, String)> = Vec::new();
        for v in values
            .iter()
            .filter(|v| matches!(v.quantity, Quantity::ProblemSize | Quantity::IsospeedTime))
        {
            if !configurations
                .iter()
                .any(|(label, _)| *label == v.configuration)
            {
                configurations.push((v.configuration.clone(), v.nodes.clone()));
            }
        }
        Ok(Self {
            id: id.to_owned(),
            paper: paper.into(),
            kernel: kernel.into(),
            options: KernelOptions::default(),
            target,
            assumption: None,
            platform: platform.into(),
            configurations,
            base_configuration: None,
            rate_fraction: None,
            values,
            free: vec![FreeParameter::RateFraction],
            chooses_free: false,
            holds_published_target: false,
            shares_start_up: false,
            n_max: 16384,
            measures_collectives: false,
            predicts: true,
        })
    }

    /// The experiment calibrated another way (`hetscale reproduce --fit`, `--rate-fraction`):
    /// the base configuration fits `free` instead of the experiment's own choice, and the
    /// kernel's `rate_fraction`, when given, is a machine fact set before the fit (kept unless
    /// `free` names it). The runs calibrated on stay the base's: a choice of parameters cannot
    /// bring a validation row into the fit.
    pub fn calibrated_with(
        mut self,
        free: Option<Vec<FreeParameter>>,
        rate_fraction: Option<f64>,
    ) -> Result<Self> {
        if let Some(fraction) = rate_fraction {
            if !(fraction.is_finite() && fraction > 0.0) {
                return Err(StudyError::Calibration(format!(
                    "rate fraction {fraction} is not a positive number: give the kernel's \
                     achieved rate over the marked speed, e.g. 0.5"
                )));
            }
            self.rate_fraction = Some(fraction);
        }
        if let Some(free) = free {
            if free.is_empty() {
                return Err(StudyError::Calibration(
                    "no parameter to fit: name at least one (e.g. rate_fraction)".into(),
                ));
            }
            self.free = free;
        }
        Ok(self)
    }

    /// The experiment with its free parameters chosen on the base's runs (`hetscale reproduce
    /// --fit auto`): every choice they identify, ranked by leave-one-out error.
    pub fn choosing_free(self) -> Self {
        Self {
            chooses_free: true,
            ..self
        }
    }

    /// The experiment holding its published target on the calibrated machine, as a study of
    /// that target would, instead of the base point's `E_s` (`hetscale reproduce
    /// --published-target`).
    pub fn holding_published_target(self) -> Self {
        Self {
            holds_published_target: true,
            ..self
        }
    }

    /// The base configuration's label.
    pub fn base(&self) -> &str {
        self.base_configuration
            .as_deref()
            .unwrap_or(&self.configurations[0].0)
    }

    /// The runs calibration may use: the base configuration's published times, and the
    /// times its published speed-efficiencies and target size imply (`T = W / (E_s C)`); a
    /// time at the target speed whose size is not published (`T_iso`) is placed at the size
    /// whose work `E_s C T` is closest.
    pub fn calibration_runs(
        &self,
        platform: &Platform,
        registry: &KernelRegistry,
    ) -> Result<Vec<MeasuredRun>> {
        let base = self.base();
        let work = |n: u64| kernel_work(registry, &self.options, &self.kernel, n as f64);
        let mut runs = Vec::new();
        for v in self.values.iter().filter(|v| v.configuration == base) {
            let at = |n: u64| {
                let mut at = v.clone();
                at.n = Some(n);
                at
            };
            let (n, time_s) = match v.quantity {
                Quantity::Time => (v.n, Some(v.value)),
                Quantity::SpeedEfficiency => (v.n, self.implied_time(platform, v, v.value, &work)?),
                Quantity::ProblemSize => {
                    let n = v.value.round() as u64;
                    (
                        Some(n),
                        self.implied_time(platform, &at(n), self.target, &work)?,
                    )
                }
                Quantity::IsospeedTime => {
                    let c = self.marked_speed(platform, v)?;
                    let n = size_of_work(self.target * c * v.value, &work)?;
                    (
                        Some(n),
                        self.implied_time(platform, &at(n), self.target, &work)?,
                    )
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

    /// The marked speed of a row's configuration, flop/s.
    fn marked_speed(&self, platform: &Platform, v: &PublishedValue) -> Result<f64> {
        Ok(
            hetscale_study::spec::configuration::resolve(platform, &v.configuration, &v.nodes)?
                .configuration
                .marked_speed,
        )
    }

    /// `T = W(N) / (E_s C)` for a row at size `v.n`.
    fn implied_time(
        &self,
        platform: &Platform,
        v: &PublishedValue,
        e_s: f64,
        work: &dyn Fn(u64) -> Result<f64>,
    ) -> Result<Option<f64>> {
        let Some(n) = v.n else { return Ok(None) };
        Ok(Some(work(n)? / (e_s * self.marked_speed(platform, v)?)))
    }

    /// The time of the experiment's kernel at size `n` on row `v`'s configuration of the
    /// simulated `platform`, s.
    pub(crate) fn simulated_time(
        &self,
        platform: &Platform,
        registry: &KernelRegistry,
        v: &PublishedValue,
        n: u64,
    ) -> Result<f64> {
        let run = MeasuredRun {
            configuration: v.configuration.clone(),
            nodes: v.nodes.clone(),
            kernel: self.kernel.clone(),
            n,
            time_s: f64::NAN,
        };
        simulate(platform, registry, &self.options, &run)
    }

    /// `E_s = W / (T C)` of that run, with the paper's `W` and the configuration's `C`.
    pub(crate) fn simulated_efficiency(
        &self,
        platform: &Platform,
        registry: &KernelRegistry,
        v: &PublishedValue,
        n: u64,
    ) -> Result<f64> {
        let time_s = self.simulated_time(platform, registry, v, n)?;
        let work = kernel_work(registry, &self.options, &self.kernel, n as f64)?;
        Ok(metrics::speed_efficiency(
            work,
            time_s,
            self.marked_speed(platform, v)?,
        )?)
    }

    /// What the study holds on the calibrated `platform` (see [`HeldEfficiency`]): its `E_s` at
    /// the base configuration's published size at the target; `None` when the base
    /// publishes no such size (Sun & Rover's bases publish a time at the isospeed instead).
    pub(crate) fn held_efficiency(
        &self,
        platform: &Platform,
        registry: &KernelRegistry,
    ) -> Result<Option<HeldEfficiency>> {
        if self.holds_published_target {
            return Ok(None);
        }
        let base = self.base();
        let Some(v) = self
            .values
            .iter()
            .find(|v| v.configuration == base && v.quantity == Quantity::ProblemSize)
        else {
            return Ok(None);
        };
        let n = v.value.round() as u64;
        let e_s = self.simulated_efficiency(platform, registry, v, n)?;
        Ok(Some(HeldEfficiency {
            // To four places, as it prints: the study settles E_s to 0.01 anyway.
            e_s: (e_s * 1e4).round() / 1e4,
            configuration: v.configuration.clone(),
            n,
        }))
    }

    /// The study on the calibrated platform in `platform_file`, holding `target`.
    pub(crate) fn spec(&self, platform_file: &Path, target: f64) -> Result<StudySpec> {
        let mut text = format!(
            "name = \"{id}\"\nkernel = \"{kernel}\"\nbackend = \"sim\"\nplatform = \"{platform}\"\n\
             skeleton = true\ntarget = {target}\ntolerance = 0.01\n\
             approaches = [{approaches}]\n\
             n_min = 16\nn_max = {n_max}\nsamples = 4\n\n[kernel_options]\n{options}",
            id = self.id,
            kernel = self.kernel,
            platform = platform_file.display(),
            n_max = self.n_max,
            approaches = if self.predicts {
                "\"measured\", \"computed\", \"predicted\""
            } else {
                "\"measured\", \"computed\""
            },
            // Every option, so the study runs the experiment's program.
            options = toml::to_string(&self.options)
                .map_err(|e| StudyError::Calibration(format!("kernel options: {e}")))?,
        );
        for (label, nodes) in &self.configurations {
            text.push_str(&format!(
                "\n[[configuration]]\nlabel = \"{label}\"\nnodes = \"{nodes}\"\n"
            ));
        }
        StudySpec::from_toml_str(&text, &self.id)
    }
}

/// The work of `kernel` at size `n`: the paper's formula for the JPDC kernels, else the
/// kernel's own count.
pub(crate) fn kernel_work(
    registry: &KernelRegistry,
    options: &KernelOptions,
    kernel: &str,
    n: f64,
) -> Result<f64> {
    Ok(match kernel {
        "ge" => workload::ge(n)?,
        "mm" => workload::mm(n)?,
        "conv2d" => workload::conv2d(n)?,
        other => registry.get(other, options)?.work(n as usize),
    })
}

/// The smallest size whose work is closest to `target` (work grows with the size).
pub(crate) fn size_of_work(target: f64, work: &dyn Fn(u64) -> Result<f64>) -> Result<u64> {
    let mut high = 2u64;
    while work(high)? < target {
        high = high.checked_mul(2).ok_or_else(|| {
            StudyError::Calibration(format!("no problem size does {target:.3e} operations"))
        })?;
    }
    let mut low = 1u64;
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if work(mid)? < target {
            low = mid
        } else {
            high = mid
        }
    }
    Ok(if target - work(low)? <= work(high)? - target {
        low
    } else {
        high
    })
}
