//! The `[mpi]` table of a study spec: how a study on `backend = "mpi"` launches each run,
//! with `mpirun` or Slurm's `srun` (see [`crate::runner::mpi_launch`]).

use std::ops::Range;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::error::{Result, StudyError};

/// How a study on `backend = "mpi"` launches each run: an `mpirun -np P` job of
/// `hetscale run --backend mpi --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MpiLaunch {
    /// The launcher (`mpirun` or a compatible one).
    pub launcher: String,
    /// Arguments the launcher gets before `-np`, e.g. `["--oversubscribe"]`.
    pub launcher_args: Vec<String>,
    /// Host file, passed as `--hostfile`.
    pub hostfile: Option<String>,
    /// Hosts, passed as `--host` (e.g. `a,b` or `a:2,b:2`).
    pub hosts: Option<String>,
    /// The hetscale executable the ranks run, built with feature `mpi`; by default the one
    /// running the study.
    pub hetscale: Option<String>,
    /// Seconds a run may take before its job is killed and the run recorded as failed.
    pub timeout_s: f64,
}

impl MpiLaunch {
    /// Whether runs are Slurm job steps: the launcher is `srun` (by name or path), which gets
    /// each configuration's nodes as `--nodelist`, `--nodes` and `--ntasks`.
    pub fn uses_srun(&self) -> bool {
        std::path::Path::new(self.launcher.trim())
            .file_name()
            .is_some_and(|name| name == "srun")
    }
}

impl Default for MpiLaunch {
    fn default() -> Self {
        Self {
            launcher: "mpirun".into(),
            launcher_args: Vec::new(),
            hostfile: None,
            hosts: None,
            hetscale: None,
            timeout_s: 3600.0,
        }
    }
}

pub(super) fn validate(
    mpi: Option<Spanned<MpiLaunch>>,
    backend: &str,
    at: &impl Fn(Range<usize>, String) -> StudyError,
) -> Result<MpiLaunch> {
    let Some(mpi) = mpi else {
        return Ok(MpiLaunch::default());
    };
    if backend != "mpi" {
        return Err(at(
            mpi.span(),
            "[mpi] is for backend = \"mpi\": remove it or change the backend".into(),
        ));
    }
    crate::runner::external::timeout_of_s(mpi.get_ref().timeout_s)
        .map_err(|e| at(mpi.span(), format!("[mpi] {e}")))?;
    if mpi.get_ref().launcher.trim().is_empty() {
        return Err(at(
            mpi.span(),
            "[mpi] launcher is empty: give e.g. \"mpirun\"".into(),
        ));
    }
    let launch = mpi.get_ref();
    if launch.uses_srun() && (launch.hostfile.is_some() || launch.hosts.is_some()) {
        return Err(at(
            mpi.span(),
            "[mpi] hostfile and hosts are for mpirun: srun runs each configuration on its own nodes, named as Slurm names them; remove them".into(),
        ));
    }
    Ok(mpi.into_inner())
}
