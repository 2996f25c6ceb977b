//! Reproduction of the papers' experiments (`hetscale reproduce`).
//!
//! For each published experiment: calibrate the platform's machine model ONLY on the base
//! (smallest) configuration's published rows ([`hetscale_study::calibrate`]), plus the machine facts
//! the paper states (already in the preset), then run the study on the simulated machine for
//! every configuration and set published beside measured (simulated), computed and predicted,
//! with relative errors. Rows of the other configurations are validation rows: nothing
//! computed from them feeds a fit ([`Experiment::calibration_runs`] is the only input of
//! the calibration).

use std::path::Path;

use hbsp::collective_probe::{CollectiveProbeOptions, probe_collectives};
use hbsp::{Backend, Platform};
use hetscale_kernels::{KernelOptions, KernelRegistry};
use hetscale_model::{metrics, workload};
use serde::Serialize;

use crate::kalinov::summa::KALINOV_SUMMA;
use crate::measurements::{PublishedValue, Quantity, published};
use crate::tpds::slalom::{TPDS_SLALOM, TPDS_SLALOM_MASPAR};
use crate::wp::collectives::WP_COLLECTIVES;
use hetscale_study::calibrate::runs::MeasuredRun;
use hetscale_study::calibrate::{
    FreeParameter, PlatformCalibration, calibrate, choose_fit, simulate, with_rate,
};
use hetscale_study::runner::Observer;
use hetscale_study::spec::{Approach, StudySpec};
use hetscale_study::store::Store;
use hetscale_study::study::{StudyResult, run_study_with};
use hetscale_study::{Result, StudyError};

/// The experiments `hetscale reproduce` knows, by id. All but [`KALINOV_SUMMA`] are studies
/// ([`Experiment::named`]); that one has no published table to calibrate on and is
/// [`crate::kalinov::summa`]'s.
pub const EXPERIMENTS: [&str; 9] = [
    "jpdc-ge",
    "jpdc-mm",
    "jpdc-conv2d",
    "tpds-burg",
    "tpds-burg-maspar",
    TPDS_SLALOM,
    TPDS_SLALOM_MASPAR,
    KALINOV_SUMMA,
    WP_COLLECTIVES,
];

/// The experiments that are no study: they check a paper's statements on runs of their own,
/// with no calibration and no study report (see [`crate::kalinov::summa`] and [`crate::wp::collectives`]), or
/// say why the paper's data cannot be reproduced ([`crate::tpds::slalom::maspar_gap`]).
pub const STATEMENT_CHECKS: [&str; 3] = [KALINOV_SUMMA, WP_COLLECTIVES, TPDS_SLALOM_MASPAR];

/// The experiments of the default study: the JPDC reproduction.
pub const DEFAULT_STUDY: [&str; 3] = ["jpdc-ge", "jpdc-mm", "jpdc-conv2d"];

/// The model order of Sun & Rover's Burg (see [`Experiment::named`]`("tpds-burg")`'s
/// assumption).
pub const TPDS_BURG_ORDER: usize = 10;

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
    /// (see [`machine_start_up`]) instead of fitting its own.
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
    /// The experiment `id` (see [`EXPERIMENTS`]).
    pub fn named(id: &str) -> Result<Self> {
        match id {
            "jpdc-ge" | "jpdc-mm" | "jpdc-conv2d" => Self::jpdc(id),
            "tpds-burg" => Self::tpds_burg("tpds-burg", "burg-ncube", "ncube2"),
            "tpds-burg-maspar" => Self::tpds_burg("tpds-burg-maspar", "burg-maspar", "maspar"),
            TPDS_SLALOM => crate::tpds::slalom::tpds_slalom(),
            TPDS_SLALOM_MASPAR => Err(StudyError::Reproduce(format!(
                "{TPDS_SLALOM_MASPAR} is not a study: see reproduce_slalom::maspar_gap"
            ))),
            KALINOV_SUMMA => Err(StudyError::Reproduce(format!(
                "{KALINOV_SUMMA} is not a study: reproduce it with reproduce_kalinov::reproduce_kalinov"
            ))),
            WP_COLLECTIVES => Err(StudyError::Reproduce(format!(
                "{WP_COLLECTIVES} is not a study: reproduce it with reproduce_wp::reproduce_wp"
            ))),
            other => Err(StudyError::Reproduce(format!(
                "unknown experiment \"{other}\": use one of {}",
                EXPERIMENTS.join(", ")
            ))),
        }
    }

    fn jpdc(id: &str) -> Result<Self> {
        let (kernel, target, assumption, pivoting) = match id {
            // JPDC section 4.4.1: E_s = 0.3; the paper's GE takes row i as pivot i.
            "jpdc-ge" => ("ge", 0.3, None, "none"),
            // JPDC section 4.4.2 and Table 8: E_s = 0.2 ("the speed-efficiency ... 0.2").
            "jpdc-mm" => ("mm", 0.2, None, "partial"),
            _ => (
                "conv2d",
                0.2,
                Some(
                    "JPDC does not state conv2d's target E_s; section 4.4.4 says its testing \
                     \"was similar to the Matrix Multiplication experiment\", so MM's 0.2 is assumed"
                        .to_owned(),
                ),
                "partial",
            ),
        };
        // Only GE's base publishes several runs: enough to fit, beside the rate, what its
        // collectives cost against section 4.5's benchmarks and a start-up. The start-up is
        // per process: the bases of MM and conv2d, which take it, run on fewer processes than
        // their other configurations.
        let (free, shares_start_up) = if kernel == "ge" {
            (
                vec![
                    FreeParameter::RateFraction,
                    FreeParameter::CollectiveScale,
                    FreeParameter::ProcessOverhead,
                ],
                false,
            )
        } else {
            (vec![FreeParameter::RateFraction], true)
        };
        Self::from_paper(id, "jpdc", kernel, kernel, target, "sunwulf").map(|e| Self {
            assumption,
            options: KernelOptions {
                pivoting: pivoting.into(),
                ..KernelOptions::default()
            },
            free,
            shares_start_up,
            n_max: 16384,
            measures_collectives: true,
            ..e
        })
    }

    /// Sun & Rover's Burg on the nCUBE 2 (TPDS 1994, section IV-B) or the MasPar MP-1
    /// (section IV-D): isospeed at half the asymptotic speed (1.7 Mflop/s, 41 Kflop/s), which
    /// is the preset's marked speed, so `E_s = 0.5`. Only the average unit speed curve is
    /// fitted, on the smallest system's time at the isospeed (Table II, Table IX), as their
    /// approach 3 uses "only the single node execution information"; `r_inf` and the
    /// network are the paper's.
    fn tpds_burg(id: &str, experiment: &str, platform: &str) -> Result<Self> {
        Self::from_paper(id, "tpds", experiment, "burg", 0.5, platform).map(|e| Self {
            assumption: Some(format!(
                "Sun & Rover do not state Burg's model order; order {TPDS_BURG_ORDER} does \
                 10 x {TPDS_BURG_ORDER} = 100 flop per sample, as section IV-C's sizes imply at \
                 Table II's times (W = 0.85 Mflop/s x p x T: 105 per sample for 440 samples on \
                 4 nodes, 101 for 2880 on 16), so those two sizes check the order, not the model"
            )),
            options: KernelOptions {
                order: TPDS_BURG_ORDER,
                ..KernelOptions::default()
            },
            free: vec![FreeParameter::HalfWork],
            shares_start_up: false,
            // At 128 nodes the isospeed needs millions of samples.
            n_max: 1 << 24,
            ..e
        })
    }

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
            hetscale_study::configuration::resolve(platform, &v.configuration, &v.nodes)?
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
    fn simulated_time(
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
    fn simulated_efficiency(
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
    fn held_efficiency(
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
    fn spec(&self, platform_file: &Path, target: f64) -> Result<StudySpec> {
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

/// Reproduces `experiment`: calibrates on its base configuration, writes the calibrated
/// platform into `out`, runs the study (runs stored in `store`) and compares.
pub fn reproduce(
    experiment: &Experiment,
    registry: &KernelRegistry,
    store: &Store,
    observer: &dyn Observer,
    out: &Path,
) -> Result<Reproduction> {
    let mut platform = Platform::load(&experiment.platform)?;
    if let Some(fraction) = experiment.rate_fraction {
        platform = with_rate(&platform, &experiment.kernel, |rate| {
            rate.rate_fraction = fraction;
        });
    }
    let runs = experiment.calibration_runs(&platform, registry)?;
    if experiment.shares_start_up {
        let start_up = machine_start_up(registry, &experiment.platform)?;
        platform = with_rate(&platform, &experiment.kernel, |rate| {
            rate.process_overhead_s = start_up;
        });
    }
    let mut calibration = if experiment.chooses_free {
        choose_fit(&platform, registry, &experiment.options, &runs)?.0
    } else {
        calibrate(
            &platform,
            registry,
            &experiment.options,
            &runs,
            &experiment.free,
        )?
    };
    if experiment.measures_collectives {
        calibration.platform = with_measured_collectives(&calibration.platform, experiment)?;
    }
    let platform_file = out.join(format!("{}.platform.toml", experiment.id));
    calibration.platform.write_file(&platform_file)?;
    let held = experiment.held_efficiency(&calibration.platform, registry)?;
    let target = held.as_ref().map_or(experiment.target, |h| h.e_s);
    let spec = experiment.spec(&platform_file, target)?;
    // A reproduction's runs follow from its calibration: another calibration (a new hetscale,
    // another --platform) makes them stale, and they are redone rather than refused.
    let resolved = Platform::load(&platform_file.to_string_lossy())?.to_toml_string()?;
    store.replace_if_changed(&spec.name, &spec.canonical(), &resolved)?;
    let study = run_study_with(&spec, registry, store, observer)?;
    let mut values = size_and_psi_rows(experiment, &study);
    values.extend(run_rows(experiment, &calibration.platform, registry)?);
    Ok(Reproduction {
        id: experiment.id.clone(),
        target: experiment.target,
        assumption: experiment.assumption.clone(),
        held,
        calibration,
        values,
        study,
    })
}

/// `platform` with its collectives measured on the simulated machine over the experiment's
/// node counts, as [`probe_collectives`] would measure a real one. These are probe runs of
/// the collectives alone, not the experiment's published rows.
fn with_measured_collectives(platform: &Platform, experiment: &Experiment) -> Result<Platform> {
    let machines = experiment
        .configurations
        .iter()
        .map(|(_, nodes)| Ok(platform.select(&nodes.parse()?)?))
        .collect::<Result<Vec<_>>>()?;
    let options = CollectiveProbeOptions {
        // Deterministic on sim: one sample per size.
        samples: 1,
        ..CollectiveProbeOptions::all()
    };
    let mut platform = platform.clone();
    platform.network.collectives = probe_collectives(&Backend::sim(), &machines, &options)?;
    Ok(platform)
}

/// Sunwulf's start-up per run and process, calibrated on the GE experiment's base
/// configuration (JPDC Table 3 and section 4.4.1: the only base with several runs). Every JPDC program starts
/// the same way, with process 0 reading the marked-speed file (section 4.1.2), so the MM and
/// conv2d experiments, whose base has one published size, take it as a machine fact. Only
/// base rows are used: no validation row of any experiment.
pub fn machine_start_up(registry: &KernelRegistry, platform: &str) -> Result<f64> {
    let ge = Experiment::named("jpdc-ge")?;
    let platform = Platform::load(platform)?;
    let runs = ge.calibration_runs(&platform, registry)?;
    let fit = calibrate(&platform, registry, &ge.options, &runs, &ge.free)?;
    Ok(fit.kernels[0].process_overhead_s.estimate)
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
                Quantity::IsospeedTime => {
                    let tool = result.point(&v.configuration).map(|p| p.time_s);
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

/// The rows of a run at a published size: its time beside a published time (Tables 3-4), its
/// `E_s` beside a published speed-efficiency (section 4.4.1's 0.312 at N = 310 on C_2, the
/// base point the study holds, and 0.288 at N = 480 on C_4).
fn run_rows(
    experiment: &Experiment,
    platform: &Platform,
    registry: &KernelRegistry,
) -> Result<Vec<ReproducedValue>> {
    let mut rows = Vec::new();
    for v in &experiment.values {
        let Some(n) = v.n else { continue };
        let tool = match v.quantity {
            Quantity::Time => experiment.simulated_time(platform, registry, v, n)?,
            Quantity::SpeedEfficiency => {
                experiment.simulated_efficiency(platform, registry, v, n)?
            }
            _ => continue,
        };
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
