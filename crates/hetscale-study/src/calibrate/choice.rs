//! Choosing the free parameters on the runs alone (`hetscale calibrate --fit auto`): every
//! choice the runs identify, fitted and ranked by its leave-one-out error.

use hbsp::Platform;
use hetscale_kernels::{KernelOptions, KernelRegistry};
use serde::Serialize;

use super::{
    CrossValidation, FreeParameter, KernelCalibration, PlatformCalibration, Simulations,
    calibrate_with, runs_by_kernel, with_fit,
};
use crate::error::{Result, StudyError};
use crate::measurements::MeasuredRun;

/// Every free parameter, in the order `--fit auto` prefers them on a tie (a start-up per
/// process before one per run: on one configuration the runs cannot tell them apart, and
/// across configurations the papers' overheads grow with the processes).
pub const ALL_PARAMETERS: [FreeParameter; 5] = [
    FreeParameter::RateFraction,
    FreeParameter::ProcessOverhead,
    FreeParameter::RunOverhead,
    FreeParameter::HalfWork,
    FreeParameter::CollectiveScale,
];

/// One choice of free parameters, scored on the runs alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitChoice {
    /// The kernel whose runs chose.
    pub kernel: String,
    /// The parameters fitted, by their platform-file names.
    pub fit: Vec<&'static str>,
    /// The fit's leave-one-out error.
    pub cross_validation: CrossValidation,
}

/// The choice of free parameters that predicts left-out runs best, for each kernel of the
/// runs (`hetscale calibrate --fit auto`): every non-empty subset of [`ALL_PARAMETERS`] whose
/// fit, and every leave-one-out refit, the kernel's runs identify, ranked by leave-one-out
/// rms (to 1e-6: closer choices tie, and go to fewer parameters, then to
/// [`ALL_PARAMETERS`]' order). Returns the calibration with each kernel's best choice and
/// the rankings, kernel by kernel; an error when a kernel's runs can cross-validate no
/// choice (too few runs).
pub fn choose_fit(
    platform: &Platform,
    registry: &KernelRegistry,
    options: &KernelOptions,
    runs: &[MeasuredRun],
) -> Result<(PlatformCalibration, Vec<FitChoice>)> {
    let simulations = Simulations::new(platform, registry, options);
    let mut calibrated = platform.clone();
    let (mut kernels, mut rankings) = (Vec::new(), Vec::new());
    for (kernel, runs) in runs_by_kernel(runs) {
        let runs: Vec<MeasuredRun> = runs.into_iter().cloned().collect();
        let (fit, ranking) = choose_kernel_fit(&simulations, kernel, &runs)?;
        calibrated = with_fit(&calibrated, &fit);
        kernels.push(fit);
        rankings.extend(ranking);
    }
    calibrated.validate()?;
    Ok((
        PlatformCalibration {
            kernels,
            platform: calibrated,
        },
        rankings,
    ))
}

/// [`choose_fit`] for the runs of one kernel.
fn choose_kernel_fit(
    simulations: &Simulations,
    kernel: &str,
    runs: &[MeasuredRun],
) -> Result<(KernelCalibration, Vec<FitChoice>)> {
    let mut scored = Vec::new();
    for mask in 1u32..(1 << ALL_PARAMETERS.len()) {
        let free: Vec<FreeParameter> = ALL_PARAMETERS
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, p)| *p)
            .collect();
        let Ok(mut fit) = calibrate_with(simulations, runs, &free) else {
            continue;
        };
        let fit = fit.kernels.remove(0);
        let Some(cross_validation) = fit.cross_validation.clone() else {
            continue;
        };
        if cross_validation.rms.is_finite() {
            let choice = FitChoice {
                kernel: kernel.to_owned(),
                fit: free.iter().map(|p| p.name()).collect(),
                cross_validation,
            };
            scored.push((choice, fit));
        }
    }
    // Stable: tied choices keep the enumeration's order, which follows ALL_PARAMETERS.
    scored.sort_by_key(|(c, _)| ((c.cross_validation.rms * 1e6).round() as i64, c.fit.len()));
    let Some((_, best)) = scored.first().cloned() else {
        return Err(StudyError::Calibration(format!(
            "--fit auto: kernel {kernel}: {} run(s) leave no choice of parameters a left-out \
             run can check: add runs at other sizes or name the parameters with --fit",
            runs.len()
        )));
    };
    Ok((best, scored.into_iter().map(|(c, _)| c).collect()))
}
