//! Calibration from a study database (`hetscale calibrate --from DB`): its runs, the platform
//! its studies ran on and their kernel options.

use hbsp::Platform;
use hetscale_kernels::{KernelOptions, KernelRegistry};

use super::runs::MeasuredRun;
use crate::error::{Result, StudyError};

/// What a study database offers calibration: its runs, the platform its studies ran on and
/// their kernel options.
#[derive(Debug, Clone)]
pub struct StoredRuns {
    /// One per stored (successful) run.
    pub runs: Vec<MeasuredRun>,
    /// The platform the studies resolved (stored with them).
    pub platform: Platform,
    /// Kernel options of the studies.
    pub options: KernelOptions,
}

/// The runs of every study in `store`, with the node-set of each run's configuration.
/// Studies on different platforms or with different kernel options are refused: calibrate
/// one machine and one program at a time.
pub fn stored_runs(store: &crate::store::Store, registry: &KernelRegistry) -> Result<StoredRuns> {
    let mut found: Option<(String, KernelOptions)> = None;
    let mut runs = Vec::new();
    for name in store.studies()? {
        let refuse = |why: &str| StudyError::Calibration(format!("{}: {why}", store.path()));
        let spec = crate::store::stored_spec::stored_spec(store, &name, registry)?;
        let platform = store
            .study_platform(&name)?
            .ok_or_else(|| refuse("a study without its platform: rerun it with this hetscale"))?;
        match &found {
            Some((p, o)) if *p != platform || *o != spec.kernel_options => {
                return Err(refuse(&format!(
                    "study \"{name}\" ran on another platform or with other kernel options; \
                     calibrate one machine and one program at a time (copy its runs to a CSV)"
                )));
            }
            Some(_) => {}
            None => found = Some((platform, spec.kernel_options.clone())),
        }
        for run in store.runs(Some(&name))? {
            let nodes = spec
                .configurations
                .iter()
                .find(|c| c.label == run.configuration)
                .map(|c| c.nodes.clone())
                .ok_or_else(|| {
                    refuse(&format!(
                        "run of unknown configuration {}",
                        run.configuration
                    ))
                })?;
            runs.push(MeasuredRun {
                configuration: run.configuration,
                nodes,
                kernel: run.kernel,
                n: run.n,
                time_s: run.time_s,
            });
        }
    }
    let Some((platform, options)) = found else {
        return Err(StudyError::Calibration(format!(
            "{}: holds no study: give the database a hetscale study wrote",
            store.path()
        )));
    };
    Ok(StoredRuns {
        runs,
        platform: Platform::from_toml_str(&platform)?,
        options,
    })
}
