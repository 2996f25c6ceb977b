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

/// Fits `fit` (parameter names, or `auto` alone) of `platform`'s machine model to `runs`: of
/// the kernels of `registry` with `options`, or of the `declared` program; refused, in one
/// line, for `auto` beside names, `auto` for a declared program, and an unknown name.
pub fn calibrate_as_asked(
    platform: &Platform,
    registry: &KernelRegistry,
    options: &KernelOptions,
    runs: &[MeasuredRun],
    fit: &[String],
    declared: Option<&Program>,
) -> Result<Calibrated> {
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
