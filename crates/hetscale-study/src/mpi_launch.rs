//! Studies on the mpi backend: every run is an MPI job of its own,
//! `mpirun -np P hetscale run KERNEL --backend mpi ... --json`, whose JSON report gives the
//! time, the work and the verification. The study process itself needs no MPI.

use std::path::PathBuf;
use std::process::Command;

use hbsp::Platform;
use hetscale_kernels::Verification;

use crate::error::{Result, StudyError};
use crate::runner::ResolvedConfiguration;
use crate::spec::StudySpec;

/// What the runner keeps of one run, wherever it ran.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// Problem size `N`.
    pub n: usize,
    /// Run time, s.
    pub time_s: f64,
    /// Work `W(N)`, flop.
    pub work: f64,
    /// The result's check against the kernel's sequential reference.
    pub verification: Verification,
}

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
        let platform_file = std::env::temp_dir().join(format!(
            "hetscale-{}-{}.toml",
            spec.name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
            std::process::id()
        ));
        Platform::load(&spec.platform)?.write_file(&platform_file)?;
        Ok(Self {
            hetscale,
            platform_file,
        })
    }

    /// The command of one run: configuration `config` at size `n`.
    pub fn command(&self, spec: &StudySpec, config: &ResolvedConfiguration, n: usize) -> Command {
        let mpi = &spec.mpi;
        let mut command = Command::new(&mpi.launcher);
        command.args(&mpi.launcher_args);
        command.args(["-np", &config.machine.p().to_string()]);
        if let Some(hostfile) = &mpi.hostfile {
            command.args(["--hostfile", hostfile]);
        }
        if let Some(hosts) = &mpi.hosts {
            command.args(["--host", hosts]);
        }
        command.arg(&self.hetscale);
        command.args(["run", &spec.kernel, "--backend", "mpi", "--json"]);
        command.arg("--platform").arg(&self.platform_file);
        command.args(["--nodes", &config.nodes]);
        command.args(["--n", &n.to_string(), "--seed", &spec.seed.to_string()]);
        let options = &spec.kernel_options;
        command.args([
            "--pivoting",
            &options.pivoting,
            "--strategy",
            &options.strategy,
        ]);
        command.args([
            "--nb",
            &options.nb.to_string(),
            "--order",
            &options.order.to_string(),
        ]);
        if let Some(grid) = &options.grid {
            command.args(["--grid", grid]);
        }
        command
    }

    /// Runs configuration `config` at size `n` and reads its report.
    pub fn run(
        &self,
        spec: &StudySpec,
        config: &ResolvedConfiguration,
        n: usize,
    ) -> Result<RunOutcome> {
        let fail = |message: String| StudyError::Configuration {
            configuration: config.configuration.label.clone(),
            message: format!("N = {n} on mpi: {message}"),
        };
        let output = self.command(spec, config, n).output().map_err(|e| {
            fail(format!(
                "cannot start {} ({e}): install OpenMPI or set [mpi] launcher",
                spec.mpi.launcher
            ))
        })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr
                .lines()
                .rev()
                .find(|l| l.starts_with("hetscale:") || l.starts_with("hbsp:"))
                .or_else(|| stderr.lines().rev().find(|l| !l.trim().is_empty()))
                .unwrap_or("no message");
            return Err(fail(format!("the job failed ({}): {last}", output.status)));
        }
        parse_report(&output.stdout).map_err(fail)
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
        n: number(&json, "n")? as usize,
        time_s: number(&json, "time_s")?,
        work: number(&json, "work_flop")?,
        verification,
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
        assert!(outcome.verification.passed);
        let missing = parse_report(br#"{"n": 64, "work_flop": 1.0, "verification": {}}"#);
        assert!(missing.unwrap_err().contains("\"error\""));
        assert!(
            parse_report(b"hello")
                .unwrap_err()
                .contains("one JSON report")
        );
    }
}
