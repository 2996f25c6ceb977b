//! Studies on the mpi backend: every run is an MPI job of its own,
//! `mpirun -np P hetscale run KERNEL --backend mpi ... --json`, whose JSON report gives the
//! time, the work and the verification. The study process itself needs no MPI.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use hbsp::Platform;
use hetscale_kernels::Verification;

use crate::error::{Result, StudyError};
use crate::runner::external::{launch, timeout_of_s};
use crate::runner::program::RunOutcome;
use crate::spec::StudySpec;
use crate::spec::configuration::ResolvedConfiguration;

/// Launches the runs of one study as MPI jobs.
pub struct MpiLauncher {
    hetscale: PathBuf,
    /// The platform as this process resolved it, written for the ranks: a preset such as
    /// `local` depends on the host and on the cores a rank is bound to, so the ranks must
    /// not resolve it again.
    platform_file: PathBuf,
}

impl Drop for MpiLauncher {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.platform_file);
    }
}

impl MpiLauncher {
    /// The launcher for `spec`; the ranks run `[mpi] hetscale`, or this executable.
    pub fn new(spec: &StudySpec) -> Result<Self> {
        let hetscale = match &spec.mpi.hetscale {
            Some(path) => PathBuf::from(path),
            None => std::env::current_exe().map_err(|e| StudyError::Spec {
                source_name: spec.name.clone(),
                line: None,
                message: format!(
                    "cannot find the running hetscale ({e}): set [mpi] hetscale to its path"
                ),
            })?,
        };
        // One file per launcher: two launchers of one study must not delete each other's.
        static LAUNCHERS: AtomicUsize = AtomicUsize::new(0);
        let platform_file = std::env::temp_dir().join(format!(
            "hetscale-{}-{}-{}.toml",
            spec.name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
            std::process::id(),
            LAUNCHERS.fetch_add(1, Ordering::Relaxed)
        ));
        Platform::load(&spec.platform)?.write_file(&platform_file)?;
        Ok(Self {
            hetscale,
            platform_file,
        })
    }

    /// The command line of one run: configuration `config` at size `n`.
    pub fn argv(&self, spec: &StudySpec, config: &ResolvedConfiguration, n: u64) -> Vec<String> {
        let mpi = &spec.mpi;
        let options = &spec.kernel_options;
        let mut argv = vec![mpi.launcher.clone()];
        argv.extend(mpi.launcher_args.iter().cloned());
        argv.extend(["-np".into(), config.machine.p().to_string()]);
        if let Some(hostfile) = &mpi.hostfile {
            argv.extend(["--hostfile".into(), hostfile.clone()]);
        }
        if let Some(hosts) = &mpi.hosts {
            argv.extend(["--host".into(), hosts.clone()]);
        }
        argv.push(self.hetscale.display().to_string());
        let run = [
            "run",
            &spec.kernel,
            "--backend",
            "mpi",
            "--json",
            "--nodes",
            &config.nodes,
            "--pivoting",
            &options.pivoting,
            "--strategy",
            &options.strategy,
        ];
        argv.extend(run.map(String::from));
        argv.extend([
            "--platform".into(),
            self.platform_file.display().to_string(),
        ]);
        argv.extend([
            "--n".into(),
            n.to_string(),
            "--seed".into(),
            spec.seed.to_string(),
        ]);
        argv.extend(["--nb".into(), options.nb.to_string()]);
        argv.extend(["--order".into(), options.order.to_string()]);
        if let Some(grid) = &options.grid {
            argv.extend(["--grid".into(), grid.clone()]);
        }
        // Only when set, so the default command line stays as it was.
        if options.block != 1 {
            argv.extend(["--block".into(), options.block.to_string()]);
        }
        argv
    }

    /// Runs configuration `config` at size `n` and reads its report.
    pub fn run(
        &self,
        spec: &StudySpec,
        config: &ResolvedConfiguration,
        n: u64,
    ) -> Result<RunOutcome> {
        let fail = |message: String| StudyError::Configuration {
            configuration: config.configuration.label.clone(),
            message: format!("N = {n} on mpi: {message}"),
        };
        let timeout = timeout_of_s(spec.mpi.timeout_s).map_err(fail)?;
        let output = launch(&self.argv(spec, config, n), timeout).map_err(fail)?;
        parse_report(output.stdout.as_bytes()).map_err(fail)
    }
}

/// The outcome in `hetscale run --json`'s report.
fn parse_report(stdout: &[u8]) -> std::result::Result<RunOutcome, String> {
    let json: serde_json::Value = serde_json::from_slice(stdout)
        .map_err(|e| format!("rank 0 did not print one JSON report ({e})"))?;
    let number = |value: &serde_json::Value, field: &str| {
        value[field]
            .as_f64()
            .ok_or_else(|| format!("the JSON report has no number \"{field}\""))
    };
    let checked = &json["verification"];
    let mut verification = Verification::new(
        checked["method"].as_str().unwrap_or_default(),
        number(checked, "error")?,
        number(checked, "tolerance")?,
    );
    verification.passed = checked["passed"].as_bool().unwrap_or(false);
    Ok(RunOutcome {
        n: number(&json, "n")? as u64,
        time_s: number(&json, "time_s")?,
        work: number(&json, "work_flop")?,
        verification: Some(verification),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_gives_time_work_and_verification() {
        let report = br#"{"n": 64, "time_s": 0.25, "work_flop": 1.5e5,
            "verification": {"method": "residual", "error": 1e-14, "tolerance": 1e-10,
            "passed": true, "skipped": false}}"#;
        let outcome = parse_report(report).unwrap();
        assert_eq!((outcome.n, outcome.time_s, outcome.work), (64, 0.25, 1.5e5));
        assert!(outcome.verification.unwrap().passed);
        let missing = parse_report(br#"{"n": 64, "work_flop": 1.0, "verification": {}}"#);
        assert!(missing.unwrap_err().contains("\"error\""));
        assert!(
            parse_report(b"hello")
                .unwrap_err()
                .contains("one JSON report")
        );
    }
}
