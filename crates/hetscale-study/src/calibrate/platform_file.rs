//! The platform `calibrate --write-platform FILE` writes: a new file is the calibrated
//! platform; an existing one is extended, never replaced: it keeps everything it holds and
//! gets the fitted kernels' `[[machine.compute]]` entries (replacing those of the same
//! kernels). A file that describes another platform than the one calibrated is refused,
//! since its nodes' marked speeds are not those the rates were fitted against.

use std::path::Path;

use hbsp::Platform;

use super::fit::PlatformCalibration;
use super::simulation::with_rate;
use crate::error::{Result, StudyError};

/// What to write to `path`: `calibrated.platform` if there is no file there, else the file's
/// platform with the fitted entries; an error if that file describes another platform than
/// `fitted_on`, the platform the runs were fitted on.
pub fn platform_to_write(
    path: &Path,
    fitted_on: &Platform,
    calibrated: &PlatformCalibration,
) -> Result<Platform> {
    if !path.exists() {
        return Ok(calibrated.platform.clone());
    }
    let existing = Platform::from_file(path).map_err(|e| {
        StudyError::Calibration(format!(
            "--write-platform {} is there but is no platform file to extend ({e}): write to a new file",
            path.display()
        ))
    })?;
    if existing.name != fitted_on.name || existing.nodes != fitted_on.nodes {
        return Err(StudyError::Calibration(format!(
            "--write-platform {} describes platform \"{}\" ({} nodes), not \"{}\" ({} nodes), the one calibrated: \
             its marked speeds are not those the rates were fitted against; write to a new file, \
             or calibrate --platform {} to extend it",
            path.display(),
            hetscale_out::echoed(&existing.name),
            existing.nodes.len(),
            fitted_on.name,
            fitted_on.nodes.len(),
            path.display()
        )));
    }
    let mut extended = existing;
    for kernel in &calibrated.kernels {
        if let Some(entry) = fitted_entry(&calibrated.platform, &kernel.kernel) {
            extended = with_rate(&extended, &kernel.kernel, |rate| *rate = entry.clone());
        }
    }
    extended.validate()?;
    Ok(extended)
}

/// The calibrated platform's `(kernel, any kind)` compute entry, the one the fit writes.
fn fitted_entry<'a>(
    platform: &'a Platform,
    kernel: &str,
) -> Option<&'a hetscale_machine::machine_model::ComputeRate> {
    platform
        .machine
        .as_ref()?
        .compute
        .iter()
        .find(|c| c.kernel == kernel && c.kind == "*")
}
