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

use hbsp::{Backend, Platform};
use hetscale_kernels::KernelRegistry;
use hetscale_probe::collective_probe::{CollectiveProbeOptions, probe_collectives};
use hetscale_study::calibrate::{calibrate, choose_fit, with_rate};
use hetscale_study::runner::Observer;
use hetscale_study::spec::Approach;
use hetscale_study::store::Store;
use hetscale_study::study::{StudyResult, run_study_with};
use hetscale_study::{Result, StudyError};

use crate::kalinov::summa::KALINOV_SUMMA;
use crate::measurements::{PublishedValue, Quantity};
use crate::tpds::slalom::{TPDS_SLALOM, TPDS_SLALOM_MASPAR};
use crate::wp::collectives::WP_COLLECTIVES;

// Re-exported so that callers keep naming a reproduction's types from here, beside the
// function that makes them.
pub use crate::experiment::{Experiment, HeldEfficiency, ReproducedValue, Reproduction};
pub use crate::tpds::burg::TPDS_BURG_ORDER;

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

/// The default study, what `hetscale study` runs with no spec: the JPDC reproduction's
/// experiments (the embedded `hetscale_study::spec::example_specs` are examples, not this).
pub const DEFAULT_STUDY: [&str; 3] = ["jpdc-ge", "jpdc-mm", "jpdc-conv2d"];

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
