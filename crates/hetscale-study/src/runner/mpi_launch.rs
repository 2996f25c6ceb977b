//! Studies on the mpi backend: every run is an MPI job of its own,
//! `mpirun -np P hetscale run KERNEL --backend mpi ... --json`, whose JSON report gives the
//! time, the work and the verification. The study process itself needs no MPI.
//!
//! Each configuration runs on exactly its own nodes where the launcher can be told them:
//! - `mpirun` with `[mpi] hostfile` or `hosts` naming every node of the configuration: a
//!   hostfile of the configuration's nodes (`name slots=1`, rank `j` on node `j`), written per
//!   configuration under `hosts/STUDY/` beside the study's database. A configuration whose
//!   nodes are not all hosts named there gets the given hostfile or hosts as they are (mpirun
//!   then places its ranks on the first slots).
//! - `srun` (Slurm): `--nodes=K --ntasks=K --nodelist=a,b,... --distribution=arbitrary`, with
//!   `SLURM_HOSTFILE` naming the node of each rank in order, so rank `j` runs on node `j`;
//!   the nodes are Slurm's node names, checked against `sinfo` before the first run. Inside
//!   an allocation (`salloc`, `sbatch`) each run is a job step of it; outside, srun asks
//!   Slurm for an allocation per run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hbsp::Platform;
use hetscale_kernels::Verification;

use crate::error::{Result, StudyError};
use crate::runner::external::{launch, launch_env, nodelist, timeout_of_s};
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
    /// Per configuration (by label), the file that names its nodes: mpirun's hostfile, or
    /// srun's `SLURM_HOSTFILE`.
    node_files: BTreeMap<String, PathBuf>,
    /// The directory of the node files when it is a temporary one (no database file).
    _temp: Option<tempfile::TempDir>,
}

impl Drop for MpiLauncher {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.platform_file);
    }
}

impl MpiLauncher {
    /// The launcher for `spec`'s `configurations`, their node files written under
    /// `hosts/STUDY/` beside `database` (a temporary directory for `:memory:`); the ranks run
    /// `[mpi] hetscale`, or this executable. With srun, every node must be one Slurm knows.
    pub fn new(
        spec: &StudySpec,
        configurations: &[ResolvedConfiguration],
        database: &str,
    ) -> Result<Self> {
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
        let spec_error = |message: String| StudyError::Spec {
            source_name: spec.name.clone(),
            line: None,
            message,
        };
        let (dir, temp) = node_file_dir(&spec.name, database).map_err(&spec_error)?;
        let mut node_files = BTreeMap::new();
        let safe = |label: &str| -> String {
            label
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect()
        };
        let write = |path: &Path, text: String| {
            std::fs::write(path, text)
                .map_err(|e| spec_error(format!("cannot write {}: {e}", path.display())))
        };
        if spec.mpi.uses_srun() {
            let known = slurm_nodes(&spec.mpi.launcher).map_err(&spec_error)?;
            for config in configurations {
                if let Some(node) = config
                    .machine
                    .nodes()
                    .iter()
                    .find(|node| !known.contains(&node.name))
                {
                    return Err(spec_error(format!(
                        "node \"{}\" of configuration {} is not a node Slurm knows ({}): name the platform's nodes as Slurm does (hetscale bench --backend mpi through srun writes them)",
                        node.name,
                        config.configuration.label,
                        shortened(&known)
                    )));
                }
                let path = dir.join(format!("{}.slurm-hosts", safe(&config.configuration.label)));
                write(&path, one_per_line(&config.machine))?;
                node_files.insert(config.configuration.label.clone(), path);
            }
        } else {
            let known = mpirun_hosts(&spec.mpi);
            for config in configurations {
                let nodes = config.machine.nodes();
                if known.is_empty() || nodes.iter().any(|node| !known.contains(&node.name)) {
                    continue;
                }
                let path = dir.join(format!("{}.hosts", safe(&config.configuration.label)));
                let text = nodes
                    .iter()
                    .map(|n| format!("{} slots=1\n", n.name))
                    .collect();
                write(&path, text)?;
                node_files.insert(config.configuration.label.clone(), path);
            }
        }
        Ok(Self {
            hetscale,
            platform_file,
            node_files,
            _temp: temp,
        })
    }

    /// The file naming `config`'s nodes, if it has one (see the module's documentation).
    pub fn node_file(&self, config: &ResolvedConfiguration) -> Option<&Path> {
        self.node_files
            .get(&config.configuration.label)
            .map(PathBuf::as_path)
    }

    /// The command line of one run, configuration `config` at size `n`, and what it adds to
    /// the environment (srun's `SLURM_HOSTFILE`).
    pub fn command(
        &self,
        spec: &StudySpec,
        config: &ResolvedConfiguration,
        n: u64,
    ) -> (Vec<String>, Vec<(String, String)>) {
        let mpi = &spec.mpi;
        let options = &spec.kernel_options;
        let mut argv = vec![mpi.launcher.clone()];
        let mut env = Vec::new();
        argv.extend(mpi.launcher_args.iter().cloned());
        let p = config.machine.p();
        let node_file = self.node_file(config);
        if mpi.uses_srun() {
            argv.extend([
                format!("--nodes={p}"),
                format!("--ntasks={p}"),
                format!("--nodelist={}", nodelist(&config.machine)),
                "--distribution=arbitrary".into(),
                format!("--job-name=hetscale-{}", spec.name),
            ]);
            if let Some(path) = node_file {
                env.push(("SLURM_HOSTFILE".into(), path.display().to_string()));
            }
        } else {
            argv.extend(["-np".into(), p.to_string()]);
            if let Some(path) = node_file {
                argv.extend(["--hostfile".into(), path.display().to_string()]);
            } else {
                if let Some(hostfile) = &mpi.hostfile {
                    argv.extend(["--hostfile".into(), hostfile.clone()]);
                }
                if let Some(hosts) = &mpi.hosts {
                    argv.extend(["--host".into(), hosts.clone()]);
                }
            }
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
        (argv, env)
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
        let (argv, env) = self.command(spec, config, n);
        let output = launch_env(&argv, &env, timeout).map_err(fail)?;
        parse_report(output.stdout.as_bytes()).map_err(fail)
    }
}

/// Where the node files of study `name` go: `hosts/NAME/` beside the database file, or a
/// temporary directory (kept alive by the second value) for a database in memory.
fn node_file_dir(
    name: &str,
    database: &str,
) -> std::result::Result<(PathBuf, Option<tempfile::TempDir>), String> {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if database == ":memory:" {
        let temp = tempfile::Builder::new()
            .prefix("hetscale-hosts-")
            .tempdir()
            .map_err(|e| format!("cannot make a directory for the node files: {e}"))?;
        return Ok((temp.path().to_path_buf(), Some(temp)));
    }
    let beside = Path::new(database).parent().unwrap_or(Path::new(""));
    let dir = std::path::absolute(beside.join("hosts").join(safe))
        .map_err(|e| format!("cannot place the node files beside {database}: {e}"))?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok((dir, None))
}

/// One node name per line, in the machine's order: `SLURM_HOSTFILE`, rank `j` on line `j`.
fn one_per_line(machine: &hbsp::Machine) -> String {
    machine
        .nodes()
        .iter()
        .map(|node| format!("{}\n", node.name))
        .collect()
}

/// The hosts `[mpi] hostfile` and `hosts` name (a hostfile's first word per line, `hosts`'
/// names before any `:slots`); none if neither is given or the hostfile cannot be read (mpirun
/// then says why).
fn mpirun_hosts(mpi: &crate::spec::MpiLaunch) -> BTreeSet<String> {
    let mut hosts = BTreeSet::new();
    if let Some(text) = mpi.hostfile.as_ref().and_then(|path| {
        hetscale_out::read_capped_to_string(path, hetscale_out::input::HOST_FILE).ok()
    }) {
        hosts.extend(
            text.lines()
                .map(|line| line.split('#').next().unwrap_or_default())
                .filter_map(|line| line.split_whitespace().next())
                .map(String::from),
        );
    }
    if let Some(list) = &mpi.hosts {
        hosts.extend(
            list.split(',')
                .filter_map(|h| h.split(':').next())
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty()),
        );
    }
    hosts
}

/// The node names Slurm knows, from the `sinfo` beside `launcher` (or on `PATH`); a one-line
/// error when srun is missing or Slurm does not answer.
fn slurm_nodes(launcher: &str) -> std::result::Result<BTreeSet<String>, String> {
    let srun = Path::new(launcher.trim());
    let found = if srun.components().count() > 1 {
        srun.is_file()
    } else {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(srun).is_file()))
    };
    if !found {
        return Err(format!(
            "[mpi] launcher = \"{launcher}\": no such program: install Slurm's client commands (srun, sinfo) or give srun's path"
        ));
    }
    let sinfo = match srun.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(dir) if dir.join("sinfo").is_file() => dir.join("sinfo").display().to_string(),
        _ => "sinfo".into(),
    };
    let argv = [sinfo, "-h".into(), "-N".into(), "-o".into(), "%N".into()];
    let output = launch(&argv, Duration::from_secs(60)).map_err(|e| {
        format!("Slurm did not answer ({e}): run the study where sinfo and srun reach the cluster, or inside an allocation (salloc)")
    })?;
    let nodes: BTreeSet<String> = output.stdout.split_whitespace().map(String::from).collect();
    if nodes.is_empty() {
        return Err("sinfo lists no node: the cluster or this allocation has none".into());
    }
    Ok(nodes)
}

/// A set of names as a short list: the first few and how many more.
fn shortened(names: &BTreeSet<String>) -> String {
    let shown: Vec<&str> = names.iter().take(8).map(String::as_str).collect();
    match names.len().saturating_sub(shown.len()) {
        0 => shown.join(", "),
        more => format!("{}, and {more} more", shown.join(", ")),
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

#[cfg(test)]
mod launch_tests {
    use super::*;
    use crate::spec::configuration::resolve;
    use std::os::unix::fs::PermissionsExt;

    const PLATFORM: &str = "name = \"three\"\nspeed_unit = \"Mflop/s\"\n\
        [network]\ng_s_per_byte = 1e-8\no_s = 0.0\nL = { base_s = 1e-4 }\n\
        [[node]]\nname = \"h1\"\nmarked_speed = 600.0\n\
        [[node]]\nname = \"h2\"\nmarked_speed = 450.0\n\
        [[node]]\nname = \"h3\"\nmarked_speed = 300.0\n";

    /// A spec of configurations h1,h3 and 2 (the first two nodes) with `mpi` as its [mpi].
    fn setup(dir: &Path, mpi: &str) -> (StudySpec, Vec<ResolvedConfiguration>) {
        std::fs::write(dir.join("three.toml"), PLATFORM).unwrap();
        let text = format!(
            "name = \"t\"\nkernel = \"ge\"\nbackend = \"mpi\"\nplatform = \"{}\"\n\
             target = 0.3\nn_max = 512\n\
             [[configuration]]\nlabel = \"C a\"\nnodes = \"h3,h1\"\n\
             [[configuration]]\nlabel = \"C_2\"\nnodes = \"2\"\n[mpi]\n{mpi}\n",
            dir.join("three.toml").display()
        );
        let spec = StudySpec::from_toml_str(&text, "t.toml").unwrap();
        let platform = Platform::load(&spec.platform).unwrap();
        let configs = spec
            .configurations
            .iter()
            .map(|c| resolve(&platform, &c.label, &c.nodes).unwrap())
            .collect();
        (spec, configs)
    }

    fn script(path: &Path, text: &str) {
        std::fs::write(path, format!("#!/bin/sh\n{text}\n")).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn srun_gets_each_configurations_nodes_in_rank_order() {
        let dir = tempfile::tempdir().unwrap();
        let srun = dir.path().join("srun");
        script(&srun, "exit 0");
        script(&dir.path().join("sinfo"), "printf 'h1\\nh2\\nh3\\n'");
        let (spec, configs) = setup(dir.path(), &format!("launcher = \"{}\"", srun.display()));
        let db = dir.path().join("out").join("study.db");
        std::fs::create_dir_all(db.parent().unwrap()).unwrap();
        let launcher = MpiLauncher::new(&spec, &configs, db.to_str().unwrap()).unwrap();
        let (argv, env) = launcher.command(&spec, &configs[0], 64);
        // The machine's order is the platform's: h1 then h3.
        assert_eq!(
            argv[..6],
            [
                srun.display().to_string(),
                "--nodes=2".into(),
                "--ntasks=2".into(),
                "--nodelist=h1,h3".into(),
                "--distribution=arbitrary".into(),
                "--job-name=hetscale-t".into(),
            ]
        );
        let hostfile = dir.path().join("out/hosts/t/C_a.slurm-hosts");
        assert_eq!(
            env,
            [("SLURM_HOSTFILE".to_string(), hostfile.display().to_string())]
        );
        assert_eq!(std::fs::read_to_string(&hostfile).unwrap(), "h1\nh3\n");
        let (argv, _) = launcher.command(&spec, &configs[1], 64);
        assert!(argv.contains(&"--nodelist=h1,h2".to_string()), "{argv:?}");

        // A node Slurm does not know is refused before any run, in one line.
        script(&dir.path().join("sinfo"), "printf 'h1\\nh2\\n'");
        let err = MpiLauncher::new(&spec, &configs, ":memory:")
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("node \"h3\" of configuration C a is not a node Slurm knows (h1, h2)"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1);
        script(
            &dir.path().join("sinfo"),
            "echo 'sinfo: error: cannot reach' >&2; exit 1",
        );
        let err = MpiLauncher::new(&spec, &configs, ":memory:")
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("Slurm did not answer") && err.contains("cannot reach"),
            "{err}"
        );
        let (spec, configs) = setup(dir.path(), "launcher = \"/no/such/srun\"");
        let err = MpiLauncher::new(&spec, &configs, ":memory:")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("no such program"), "{err}");
    }

    #[test]
    fn mpirun_gets_a_hostfile_per_configuration_when_its_nodes_are_hosts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("hosts"),
            "# all\nh1 slots=1\nh2\nh3 slots=4\n",
        )
        .unwrap();
        let hostfile = dir.path().join("hosts").display().to_string();
        let (spec, configs) = setup(dir.path(), &format!("hostfile = \"{hostfile}\""));
        let launcher = MpiLauncher::new(&spec, &configs, ":memory:").unwrap();
        let (argv, env) = launcher.command(&spec, &configs[0], 64);
        assert!(env.is_empty());
        let at = argv.iter().position(|a| a == "--hostfile").unwrap();
        assert_eq!(argv[at - 2..at], ["-np".to_string(), "2".into()]);
        assert!(argv[at + 1].ends_with("C_a.hosts"), "{argv:?}");
        let text = std::fs::read_to_string(&argv[at + 1]).unwrap();
        assert_eq!(text, "h1 slots=1\nh3 slots=1\n");

        // Hosts that are not the platform's nodes: the given hostfile, as before.
        std::fs::write(dir.path().join("hosts"), "localhost slots=4\n").unwrap();
        let launcher = MpiLauncher::new(&spec, &configs, ":memory:").unwrap();
        let (argv, _) = launcher.command(&spec, &configs[0], 64);
        let at = argv.iter().position(|a| a == "--hostfile").unwrap();
        assert_eq!(argv[at + 1], hostfile);
        // Neither hostfile nor hosts: mpirun places the ranks itself.
        let (spec, configs) = setup(dir.path(), "launcher_args = [\"--oversubscribe\"]");
        let launcher = MpiLauncher::new(&spec, &configs, ":memory:").unwrap();
        let (argv, _) = launcher.command(&spec, &configs[1], 64);
        assert!(
            !argv.iter().any(|a| a == "--hostfile" || a == "--host"),
            "{argv:?}"
        );
        // --host names: a:2,b style.
        let (spec, configs) = setup(dir.path(), "hosts = \"h1:2,h2,h3\"");
        let launcher = MpiLauncher::new(&spec, &configs, ":memory:").unwrap();
        let (argv, _) = launcher.command(&spec, &configs[1], 64);
        assert!(!argv.iter().any(|a| a == "--host"), "{argv:?}");
        assert!(argv.iter().any(|a| a.ends_with("C_2.hosts")), "{argv:?}");
    }
}
