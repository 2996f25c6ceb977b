//! What `hetscale reproduce` runs: the experiments asked for, each study calibrated as the
//! command line says (`--platform`, `--fit`, `--rate-fraction`, `--published-target`), and the
//! statement checks among them.

use hetscale_kernels::KernelRegistry;
use hetscale_study::calibrate::FreeParameter;
use hetscale_study::{Result, StudyError};

use crate::kalinov::summa::{KALINOV_SUMMA, KalinovExperiment};
use crate::reproduce::{EXPERIMENTS, Experiment, STATEMENT_CHECKS};
use crate::tpds::slalom::{MasparGap, TPDS_SLALOM_MASPAR, maspar_gap};
use crate::wp::collectives::{WP_COLLECTIVES, WpExperiment};

/// How the experiments are asked for.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// Only this experiment (one of [`EXPERIMENTS`]); every one without it.
    pub only: Option<String>,
    /// The machine facts to start from instead of each experiment's own paper's machine.
    pub platform: Option<String>,
    /// Parameters the base configuration fits instead of the experiment's own choice, or
    /// `auto` alone: the choice with the smallest leave-one-out error.
    pub fit: Option<Vec<String>>,
    /// The kernel's achieved rate over the marked speed, set before the fit.
    pub rate_fraction: Option<f64>,
    /// Hold the paper's target E_s itself instead of the machine's own E_s at the base
    /// configuration's published size.
    pub published_target: bool,
}

/// The experiments to run: the studies, calibrated as asked, and the statement checks.
#[derive(Debug)]
pub struct Plan {
    /// The experiments that are studies, in [`EXPERIMENTS`]' order.
    pub experiments: Vec<Experiment>,
    /// Kalinov's SUMMA strategies, if asked for.
    pub kalinov: Option<KalinovExperiment>,
    /// Williams & Parsons' collectives, if asked for.
    pub wp: Option<WpExperiment>,
    /// Why SLALOM on the MasPar is not reproduced, if asked for.
    pub maspar: Option<MasparGap>,
}

/// The plan `options` ask for; refused, in one line, for an unknown experiment, `--fit auto`
/// beside parameter names, an unknown parameter, and calibration options with no study to
/// calibrate.
pub fn plan(options: &PlanOptions, registry: &KernelRegistry) -> Result<Plan> {
    let ids: Vec<&str> = match &options.only {
        Some(id) => vec![id.as_str()],
        None => EXPERIMENTS.to_vec(),
    };
    let platform_or = |default: &str| options.platform.clone().unwrap_or_else(|| default.into());
    let kalinov = ids.contains(&KALINOV_SUMMA).then(|| KalinovExperiment {
        platform: platform_or("kalinov"),
        ..KalinovExperiment::default()
    });
    let wp = ids.contains(&WP_COLLECTIVES).then(|| WpExperiment {
        platform: platform_or("ucf-cluster"),
        ..WpExperiment::default()
    });
    let maspar = ids
        .contains(&TPDS_SLALOM_MASPAR)
        .then(|| maspar_gap(registry))
        .transpose()?;
    let experiments = ids
        .iter()
        .filter(|id| !STATEMENT_CHECKS.contains(id))
        .map(|id| calibrated(id, options))
        .collect::<Result<Vec<_>>>()?;
    if experiments.is_empty()
        && (options.fit.is_some() || options.rate_fraction.is_some() || options.published_target)
    {
        return Err(StudyError::Options(format!(
            "--fit, --rate-fraction and --published-target calibrate a study experiment, and {} \
             calibrates nothing: use them with --only {}",
            ids.join(", "),
            studies().join(" | ")
        )));
    }
    Ok(Plan {
        experiments,
        kalinov,
        wp,
        maspar,
    })
}

/// The study experiment `id`, on `--platform` if given, calibrated as `options` ask.
fn calibrated(id: &str, options: &PlanOptions) -> Result<Experiment> {
    let mut experiment = Experiment::named(id)?;
    if let Some(platform) = &options.platform {
        experiment.platform = platform.clone();
    }
    let experiment = if is_auto(&options.fit) {
        experiment
            .calibrated_with(None, options.rate_fraction)?
            .choosing_free()
    } else {
        experiment.calibrated_with(free_parameters(&options.fit)?, options.rate_fraction)?
    };
    Ok(if options.published_target {
        experiment.holding_published_target()
    } else {
        experiment
    })
}

/// `--fit`'s parameters, if given.
fn free_parameters(fit: &Option<Vec<String>>) -> Result<Option<Vec<FreeParameter>>> {
    if fit.iter().flatten().any(|name| name.trim() == "auto") {
        return Err(StudyError::Options(
            "--fit auto chooses the parameters itself: give it alone".into(),
        ));
    }
    fit.as_ref()
        .map(|names| names.iter().map(|n| FreeParameter::parse(n)).collect())
        .transpose()
}

/// Whether `--fit` is `auto` alone (beside names it is refused by [`free_parameters`]).
fn is_auto(fit: &Option<Vec<String>>) -> bool {
    fit.as_deref()
        .is_some_and(|names| names.len() == 1 && names[0].trim() == "auto")
}

/// The experiments that calibrate (all but the statement checks).
fn studies() -> Vec<&'static str> {
    EXPERIMENTS
        .into_iter()
        .filter(|id| !STATEMENT_CHECKS.contains(id))
        .collect()
}
