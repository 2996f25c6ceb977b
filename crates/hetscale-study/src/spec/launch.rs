//! How each run of an mpi study is launched, as the command line overrides the spec's `[mpi]`
//! table (`hetscale study --launcher --hosts --hostfile`).

use std::path::PathBuf;

use crate::error::{Result, StudyError};
use crate::spec::StudySpec;

/// The launch options of `hetscale study`: each, if given, replaces the spec's own.
#[derive(Debug, Clone, Default)]
pub struct LaunchOptions {
    /// What launches each run: `mpirun` or `srun`, or a path to either.
    pub launcher: Option<String>,
    /// Hosts for every run's mpirun (`--host`).
    pub hosts: Option<String>,
    /// Host file for every run's mpirun (`--hostfile`).
    pub hostfile: Option<PathBuf>,
}

impl LaunchOptions {
    /// Hands these options to `spec`'s mpi launches; refused, in one line, for a study that
    /// does not run on mpi, an empty launcher, and hosts for `srun` (which takes each
    /// configuration's own nodes).
    pub fn apply_to(&self, spec: &mut StudySpec) -> Result<()> {
        if self.hosts.is_none() && self.hostfile.is_none() && self.launcher.is_none() {
            return Ok(());
        }
        ensure(spec.backend == "mpi", || {
            format!(
                "--launcher, --hosts and --hostfile are for studies with backend = \"mpi\"; study \"{}\" runs on {}{}",
                spec.name,
                if spec.command.is_some() {
                    "its own command"
                } else {
                    spec.backend.as_str()
                },
                if spec.command.is_some() {
                    ": put srun in the command template, with --nodelist={nodelist}"
                } else {
                    ""
                }
            )
        })?;
        if let Some(launcher) = &self.launcher {
            ensure(!launcher.trim().is_empty(), || {
                "--launcher is empty: give srun or mpirun".into()
            })?;
            spec.mpi.launcher = launcher.clone();
            if spec.mpi.uses_srun() {
                // The spec's hosts are mpirun's; srun takes each configuration's own nodes.
                spec.mpi.hostfile = None;
                spec.mpi.hosts = None;
            }
        }
        ensure(
            !(spec.mpi.uses_srun() && (self.hosts.is_some() || self.hostfile.is_some())),
            || {
                "--hosts and --hostfile are for mpirun: srun runs each configuration on its own nodes, named as Slurm names them".into()
            },
        )?;
        if let Some(hosts) = &self.hosts {
            spec.mpi.hosts = Some(hosts.clone());
        }
        if let Some(path) = &self.hostfile {
            ensure(path.is_file(), || {
                format!("--hostfile {}: no such file", path.display())
            })?;
            spec.mpi.hostfile = Some(path.display().to_string());
        }
        Ok(())
    }
}

fn ensure(holds: bool, why: impl FnOnce() -> String) -> Result<()> {
    match holds {
        true => Ok(()),
        false => Err(StudyError::Options(why())),
    }
}
