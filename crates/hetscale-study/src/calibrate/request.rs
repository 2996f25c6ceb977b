//! What `hetscale calibrate` asks for: the parameters to fit by name, or `auto` alone (every
//! choice the runs identify, ranked by leave-one-out error, the best one fitted), on a
//! kernel's runs or a declared program's; and the fit's JSON document.

use hbsp::Platform;
use hetscale_kernels::{KernelOptions, KernelRegistry};
use serde::Serialize;

use super::choice::{FitChoice, choose_fit};
use super::fit::{FreeParameter, PlatformCalibration, calibrate, calibrate_declared};
use super::runs::MeasuredRun;
use crate::error::{Result, StudyError};
use crate::runner::program::Program;

/// A calibration as asked for: the fit and, with `auto`, the choices it was chosen from.
#[derive(Debug, Clone)]
pub struct Calibrated {
    /// The fit.
    pub fit: PlatformCalibration,
    /// With `--fit auto`: every choice of free parameters the runs identify, best first.
    pub compared: Option<Vec<FitChoice>>,
}

/// Why a program declared by `--work` alone cannot be calibrated, in the command line's terms
/// (a spec's `[command]` says it in its own).
const DECLARE_A_MODEL: &str = "--work alone gives no time model to fit the runs to: give --overhead FORMULA (seconds, in n and p; \"0\" if it has none) or --communication STEPS (e.g. \"100*neighbours(8*n)\"), or both";

/// Fits `fit` (parameter names, or `auto` alone) of `platform`'s machine model to `runs`: of
/// the kernels of `registry` with `options`, or of the `declared` program; refused, in one
/// line, for a node set `platform` does not have, a declared program with no overhead model,
/// `auto` beside names, `auto` for a declared program, and an unknown name, checked in that
/// order: the runs themselves first, then what is asked of them.
pub fn calibrate_as_asked(
    platform: &Platform,
    registry: &KernelRegistry,
    options: &KernelOptions,
    runs: &[MeasuredRun],
    fit: &[String],
    declared: Option<&Program>,
) -> Result<Calibrated> {
    check_node_sets(platform, runs)?;
    if declared.is_some_and(|program| program.unmodelled().is_some()) {
        return Err(StudyError::Options(DECLARE_A_MODEL.into()));
    }
    if fit.iter().any(|f| f.trim() == "auto") {
        if fit.len() > 1 {
            return Err(StudyError::Options(
                "--fit auto chooses the parameters itself: give it alone".into(),
            ));
        }
        if declared.is_some() {
            return Err(StudyError::Options(
                "--fit auto compares a kernel's simulated parameters: with --work give them, e.g. --fit rate_fraction,run_overhead_s".into(),
            ));
        }
        let (fit, compared) = choose_fit(platform, registry, options, runs)?;
        return Ok(Calibrated {
            fit,
            compared: Some(compared),
        });
    }
    let free = fit
        .iter()
        .map(|name| FreeParameter::parse(name))
        .collect::<Result<Vec<_>>>()?;
    let fit = match declared {
        Some(program) => calibrate_declared(platform, program, runs, &free)?,
        None => calibrate(platform, registry, options, runs, &free)?,
    };
    Ok(Calibrated {
        fit,
        compared: None,
    })
}

/// An error naming the first node set of `runs` (in their order) that `platform` does not
/// have: before any fit, which would meet it only on its configuration's turn.
fn check_node_sets(platform: &Platform, runs: &[MeasuredRun]) -> Result<()> {
    let mut checked = std::collections::HashSet::new();
    for run in runs {
        if checked.insert((run.configuration.as_str(), run.nodes.as_str())) {
            crate::spec::configuration::resolve(platform, &run.configuration, &run.nodes)?;
        }
    }
    Ok(())
}

/// A calibration in the one JSON schema: the fit, the choices compared (with `auto`) and the
/// warnings.
#[derive(Debug, Serialize)]
pub struct CalibrationDocument<'a> {
    #[serde(flatten)]
    fit: &'a PlatformCalibration,
    #[serde(skip_serializing_if = "Option::is_none")]
    compared: Option<&'a [FitChoice]>,
    warnings: &'a [String],
}

impl<'a> CalibrationDocument<'a> {
    /// The document of `calibrated` with its `warnings`.
    pub fn new(calibrated: &'a Calibrated, warnings: &'a [String]) -> Self {
        Self {
            fit: &calibrated.fit,
            compared: calibrated.compared.as_deref(),
            warnings,
        }
    }
}
