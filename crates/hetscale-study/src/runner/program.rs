//! What a study measures: a kernel (built in or a user's, from a [`KernelRegistry`]) run as an
//! HBSP program in-process, or any external command launched once per run.
//!
//! Both give the approaches what they need: the work `W(N)` (for a command, a formula in `n`
//! and `p`) and, for approach 3, a time model `T = T_compute + T_o` (for a kernel, its HBSP^1
//! overhead model; for a command, its compute under its declared partition plus its overhead
//! formula and declared communication).

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use hbsp::Backend;
use hetscale_kernels::{Kernel, KernelRegistry, Verification};
use hetscale_model::scaling::Partition;

use crate::error::{Result, StudyError};
use crate::runner::external::{
    ExternalCommand, hostfile_text, launch_timed, nodelist, placeholder_values,
};
use crate::spec::StudySpec;
use crate::spec::configuration::ResolvedConfiguration;

/// A kernel or an external command.
pub enum Program {
    /// An HBSP program run by `hbsp` on the spec's backend.
    Kernel(Box<dyn Kernel>),
    /// A program launched per run from the spec's `[command]`.
    Command(Box<ExternalCommand>),
}

/// Why approach 3 cannot model a command without an overhead model, in `study --command`'s
/// options.
const UNMODELLED_OPTIONS: &str = "needs an overhead model: give --overhead FORMULA (seconds, in n and p) or --communication STEPS (e.g. 100*neighbours(8*n)), or predict from the runs with hetscale predict --from";

/// [`UNMODELLED_OPTIONS`] in a spec's terms.
const UNMODELLED_COMMAND: &str = "needs an overhead model: add overhead = \"...\" (seconds, in n and p) or communication = \"...\" (e.g. 100*neighbours(8*n)) to [command], or predict from the runs with hetscale predict --from";

impl Program {
    /// The program `spec` names, kernels looked up in `registry`.
    pub fn of(spec: &StudySpec, registry: &KernelRegistry) -> Result<Self> {
        match &spec.command {
            Some(command) => {
                let command = command.validate().map_err(|message| StudyError::Spec {
                    source_name: spec.name.clone(),
                    line: None,
                    message: format!("[command] {message}"),
                })?;
                Ok(Self::Command(Box::new(command)))
            }
            None => Ok(Self::Kernel(
                registry.get(&spec.kernel, &spec.kernel_options)?,
            )),
        }
    }

    /// A program known only by its work formula `W(n, p)` (and, for approach 3, its overhead
    /// formula `T_o(n, p)`, s, its declared communication and partition): runs measured
    /// elsewhere, to fit and predict from, never launched (its command is `false`, which fails
    /// if anything ever tries).
    pub fn of_formulas(
        model: &crate::runner::external::CommandSpec,
    ) -> std::result::Result<Self, String> {
        let spec = crate::runner::external::CommandSpec {
            template: "false".into(),
            ..model.clone()
        };
        Ok(Self::Command(Box::new(spec.validate()?)))
    }

    /// An error unless the calibrated compute entry a command names (its `program`) is in
    /// `platform`'s machine model: named and missing, approach 3 would take the marked speed
    /// and no start-up in silence.
    pub fn check_calibrated_on(&self, platform: &hbsp::Platform) -> Result<()> {
        let Self::Command(command) = self else {
            return Ok(());
        };
        let Some(name) = &command.program else {
            return Ok(());
        };
        let rate = platform
            .machine
            .as_ref()
            .and_then(|model| model.compute.iter().find(|rate| rate.kernel == *name));
        let Some(rate) = rate else {
            return Err(StudyError::Hbsp(hbsp::HbspError::InvalidPlatform(format!(
                "program \"{name}\": platform {} has no compute entry of that name: fit one with hetscale calibrate --runs CSV --work ... --write-platform FILE, or leave the program out (the marked speed, no start-up)",
                platform.name
            ))));
        };
        let declared = command.declared_model();
        match &rate.declared_model {
            Some(calibrated) if *calibrated != declared => {
                Err(StudyError::Hbsp(hbsp::HbspError::InvalidPlatform(format!(
                    "program \"{name}\" was calibrated on platform {} with {calibrated}, not {declared}: its rate is the compute left once that model is taken out, so declare the same model, or calibrate again with this one",
                    platform.name
                ))))
            }
            _ => Ok(()),
        }
    }

    /// A command's declared model in one line ([`ExternalCommand::declared_model`]); none for
    /// a kernel, whose model is its own.
    pub fn declared_model(&self) -> Option<String> {
        match self {
            Self::Kernel(_) => None,
            Self::Command(command) => Some(command.declared_model()),
        }
    }

    /// How the program splits its work: a kernel in proportion to marked speed (its
    /// partitioners), a command as its spec declares.
    pub fn partition(&self) -> Partition {
        match self {
            Self::Kernel(_) => Partition::Speed,
            Self::Command(command) => command.partition,
        }
    }

    /// The kernel, if the program is one.
    pub fn kernel(&self) -> Option<&dyn Kernel> {
        match self {
            Self::Kernel(kernel) => Some(kernel.as_ref()),
            Self::Command(_) => None,
        }
    }

    /// Work `W` at size `n` on `p` nodes, flop; NaN where a command's work formula is not a
    /// positive number (the runner refuses to run such a size, naming it).
    pub fn work(&self, n: f64, p: usize) -> f64 {
        match self {
            Self::Kernel(kernel) => kernel.work(n.round().max(1.0) as usize),
            Self::Command(command) => command
                .work
                .eval_positive("work", n.round().max(1.0), p as f64)
                .unwrap_or(f64::NAN),
        }
    }

    /// Why approach 3 cannot model this program, if it cannot.
    pub fn unmodelled(&self) -> Option<String> {
        self.unmodelled_in(crate::spec::Surface::File)
    }

    /// [`Self::unmodelled`], its advice in the terms of `surface`: a spec's `[command]` keys
    /// or `study --command`'s options.
    pub fn unmodelled_in(&self, surface: crate::spec::Surface) -> Option<String> {
        match self {
            Self::Command(command) if !command.has_overhead_model() => Some(
                match surface {
                    crate::spec::Surface::File => UNMODELLED_COMMAND,
                    crate::spec::Surface::Options => UNMODELLED_OPTIONS,
                }
                .into(),
            ),
            _ => None,
        }
    }

    /// The time model's compute and overhead parts at size `n` on `config`, s.
    pub fn model_parts(&self, n: f64, config: &ResolvedConfiguration) -> Result<(f64, f64)> {
        let c = &config.configuration;
        match self {
            Self::Kernel(kernel) => {
                let n = n.round().max(1.0) as usize;
                let overhead = kernel.overhead(n, &config.machine)?;
                let total =
                    overhead.predicted_time_s(kernel.work(n), c.marked_speed, config.root_speed);
                // The compute the supersteps replay (idle on integer shares included) is what
                // a compute factor scales; the rest of T_o is communication.
                let balanced = total - overhead.overhead_s;
                let compute = if overhead.compute_s > 0.0 {
                    overhead.compute_s
                } else {
                    balanced
                };
                // The start-up a calibrated platform states is a machine fact, as g, L and o
                // are: HBSP^1 has no term for it.
                let start_up = config.machine.for_workload(kernel.name()).start_up_s();
                Ok((compute, total - compute + start_up))
            }
            Self::Command(command) => command_model_parts(command, n, config),
        }
    }
}

/// A command's time model at size `n` on `config`: its compute (`W / C`, or `W / (p C_min)`
/// for an equal split, at its `program`'s calibrated rate if it names one) and its `T_o`, the
/// overhead formula plus the declared communication charged on the configuration's machine
/// (plus that program's start-up).
fn command_model_parts(
    command: &ExternalCommand,
    n: f64,
    config: &ResolvedConfiguration,
) -> Result<(f64, f64)> {
    let c = &config.configuration;
    let fail = |message: String| StudyError::Configuration {
        configuration: c.label.clone(),
        message,
    };
    if !command.has_overhead_model() {
        return Err(fail(UNMODELLED_COMMAND.into()));
    }
    let (n, p) = (n.round().max(1.0), c.nodes as f64);
    let work = command.work.eval_positive("work", n, p).map_err(fail)?;
    let formula = match &command.overhead {
        Some(formula) => formula.eval(n, p).map_err(fail)?,
        None => 0.0,
    };
    if !(formula.is_finite() && formula >= 0.0) {
        return Err(fail(format!(
            "overhead \"{}\" is {formula} s at n = {n}, p = {p}: it must be finite and not negative",
            command.overhead.as_ref().map_or("", |f| f.text())
        )));
    }
    let declared = match &command.communication {
        Some(communication) => {
            let steps = communication.steps(n, p).map_err(fail)?;
            hetscale_kernels::declared::communication_s(&steps, &config.machine)
                .map_err(|e| fail(e.to_string()))?
        }
        None => 0.0,
    };
    let machine = match &command.program {
        Some(name) => config.machine.for_workload(name),
        None => config.machine.without_model(),
    };
    let compute = work / c.marked_speed * slowest_share(command.partition, &machine);
    Ok((compute, formula + declared + machine.start_up_s()))
}

/// How much longer than `W / C` the compute takes on `machine` under `partition`, the
/// slowest node finishing last: `C / (p min_j C_j f_j)` for an equal split, `C / (C min_j
/// f_j)` for shares in proportion to marked speed, `f_j` node `j`'s rate fraction for the
/// machine's workload (1 without a machine model).
fn slowest_share(partition: Partition, machine: &hbsp::Machine) -> f64 {
    let fraction = |node: &hbsp::MachineNode| {
        machine.model().map_or(1.0, |model| {
            model
                .rate(machine.workload(), node.kind.as_deref())
                .rate_fraction
        })
    };
    let nodes = machine.nodes();
    let marked: f64 = nodes.iter().map(|n| n.marked_speed).sum();
    let slowest = |speed: &dyn Fn(&hbsp::MachineNode) -> f64| {
        nodes.iter().map(speed).fold(f64::INFINITY, f64::min)
    };
    match partition {
        Partition::Equal => {
            marked / (nodes.len() as f64 * slowest(&|n| n.marked_speed * fraction(n)))
        }
        Partition::Speed => 1.0 / slowest(&|n| fraction(n)),
    }
}

/// What one run gave the runner.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// Problem size.
    pub n: u64,
    /// Run time `T`, s.
    pub time_s: f64,
    /// Work `W`, flop.
    pub work: f64,
    /// A kernel's check of its result; none for a command.
    pub verification: Option<Verification>,
}

/// Runs `program` once at size `n` on `config`: a kernel on `backend` with inputs from
/// `seed`, or the command with its placeholders filled (`hostfile` if it uses `{hostfile}`,
/// `{nodelist}` the configuration's node names for `srun --nodelist`).
/// Every error is one line that names `N`.
pub fn execute(
    program: &Program,
    seed: u64,
    config: &ResolvedConfiguration,
    backend: &Backend,
    n: u64,
    hostfile: Option<&Path>,
) -> Result<RunOutcome> {
    let fail = |message: String| StudyError::Configuration {
        configuration: config.configuration.label.clone(),
        message: format!("N = {n}: {message}"),
    };
    match program {
        Program::Kernel(kernel) => {
            let size = usize::try_from(n)
                .map_err(|_| fail("does not fit this machine's address space".into()))?;
            let inputs = hetscale_kernels::inputs_for(kernel.as_ref(), size, seed, backend)
                .map_err(|e| fail(e.to_string()))?;
            let run = kernel
                .run(
                    &inputs,
                    backend,
                    &config.machine.for_workload(kernel.name()),
                )
                .map_err(|e| fail(e.to_string()))?;
            Ok(RunOutcome {
                n,
                time_s: run.time_s,
                work: run.work,
                verification: Some(run.verification),
            })
        }
        Program::Command(command) => {
            let p = config.configuration.nodes;
            let work = command
                .work
                .eval_positive("work", n as f64, p as f64)
                .map_err(fail)?;
            let mut values = placeholder_values(n, &config.nodes, p, hostfile);
            values.push(("nodelist", nodelist(&config.machine)));
            let argv = command.template.render(&values).map_err(fail)?;
            let output = launch_timed(&argv, command.timeout, &command.time).map_err(fail)?;
            let time_s = command.time.read(&output).map_err(fail)?;
            Ok(RunOutcome {
                n,
                time_s,
                work,
                verification: None,
            })
        }
    }
}

/// The hostfiles of a command study's configurations, written on first use into a directory
/// that lives as long as the runner.
#[derive(Default)]
pub struct Hostfiles {
    dir: RefCell<Option<tempfile::TempDir>>,
}

impl Hostfiles {
    /// The hostfile of `config` if `program` is a command that uses `{hostfile}`.
    pub fn path_for(
        &self,
        program: &Program,
        config: &ResolvedConfiguration,
    ) -> Result<Option<PathBuf>> {
        let Program::Command(command) = program else {
            return Ok(None);
        };
        if !command.template.uses("hostfile") {
            return Ok(None);
        }
        let fail = |e: std::io::Error| StudyError::Configuration {
            configuration: config.configuration.label.clone(),
            message: format!("cannot write its hostfile in the temporary directory: {e}"),
        };
        let mut dir = self.dir.borrow_mut();
        if dir.is_none() {
            *dir = Some(
                tempfile::Builder::new()
                    .prefix("hetscale-hosts-")
                    .tempdir()
                    .map_err(fail)?,
            );
        }
        let dir = dir.as_ref().expect("created above");
        let safe: String = config
            .configuration
            .label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let path = dir.path().join(format!("{safe}.hosts"));
        std::fs::write(&path, hostfile_text(&config.machine)).map_err(fail)?;
        Ok(Some(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::external::CommandSpec;
    use crate::spec::configuration::resolve;
    use hetscale_kernels::declared::{Pattern, Step, communication_s};

    fn command(overhead: Option<&str>, communication: Option<&str>) -> Program {
        let spec = CommandSpec {
            overhead: overhead.map(str::to_string),
            communication: communication.map(str::to_string),
            ..CommandSpec::new("./solver {n}", "100*n^2")
        };
        Program::Command(Box::new(spec.validate().unwrap()))
    }

    #[test]
    fn a_commands_overhead_is_its_formula_plus_its_declared_communication_on_the_machine() {
        let ncube = hbsp::Platform::load("ncube2").unwrap();
        let config = resolve(&ncube, "C_4", "4").unwrap();
        let (n, p) = (1000.0, 4.0);
        let step = Step {
            count: 50.0,
            pattern: Pattern::Neighbours,
            bytes: 8.0 * n,
        };
        let halo = communication_s(&[step], &config.machine).unwrap();
        let (_, alone) = command(None, Some("50*neighbours(8*n)"))
            .model_parts(n, &config)
            .unwrap();
        assert!(
            (alone - halo).abs() < 1e-12 && halo > 0.0,
            "{alone} vs {halo}"
        );
        let (compute, both) = command(Some("1e-3*p"), Some("50*neighbours(8*n)"))
            .model_parts(n, &config)
            .unwrap();
        assert!((both - (halo + 1e-3 * p)).abs() < 1e-12, "{both}");
        assert!((compute - 100.0 * n * n / config.configuration.marked_speed).abs() < 1e-12);
        // Neither: approach 3 says what it needs.
        let err = command(None, None).model_parts(n, &config).unwrap_err();
        assert!(err.to_string().contains("communication = "), "{err}");
    }

    #[test]
    fn an_equal_split_computes_at_the_slowest_nodes_pace() {
        // Sunwulf's server (2 CPUs) and 3 SunBlades: 4 equal shares, the SunBlades finish last.
        let sunwulf = hbsp::Platform::load("sunwulf").unwrap();
        let config = resolve(&sunwulf, "C_4", "server*2:1,sunblade:3").unwrap();
        let machine = &config.machine;
        let speeds: Vec<f64> = (0..machine.p()).map(|i| machine.marked_speed(i)).collect();
        let slowest = speeds.iter().copied().fold(f64::INFINITY, f64::min);
        let share = speeds.iter().sum::<f64>() / (4.0 * slowest);
        assert!(share > 1.1, "{speeds:?}");
        let split = |partition: &str| {
            let spec = CommandSpec {
                overhead: Some("0".into()),
                partition: Some(partition.into()),
                ..CommandSpec::new("./solver {n}", "100*n^2")
            };
            let program = Program::Command(Box::new(spec.validate().unwrap()));
            assert_eq!(program.partition().to_string(), partition);
            program.model_parts(1000.0, &config).unwrap().0
        };
        let balanced = 100.0 * 1e6 / config.configuration.marked_speed;
        assert!((split("speed") / balanced - 1.0).abs() < 1e-12);
        assert!((split("equal") / (balanced * share) - 1.0).abs() < 1e-12);
        let spec = CommandSpec {
            partition: Some("rows".into()),
            ..CommandSpec::new("./solver {n}", "100*n^2")
        };
        let err = spec.validate().unwrap_err();
        assert!(
            err.contains("partition \"rows\"") && !err.contains('\n'),
            "{err}"
        );
        // Named, the program computes at its calibrated rate and pays its start-up.
        let calibrated = crate::calibrate::with_rate(&sunwulf, "solver", |rate| {
            rate.rate_fraction = 0.5;
            rate.run_overhead_s = 0.1;
            rate.process_overhead_s = 0.0;
            rate.declared = true;
        });
        let config = resolve(&calibrated, "C_4", "server*2:1,sunblade:3").unwrap();
        let spec = CommandSpec {
            overhead: Some("0".into()),
            partition: Some("equal".into()),
            program: Some("solver".into()),
            ..CommandSpec::new("./solver {n}", "100*n^2")
        };
        let program = Program::Command(Box::new(spec.validate().unwrap()));
        let (compute, overhead) = program.model_parts(1000.0, &config).unwrap();
        assert!(
            (compute / (2.0 * balanced * share) - 1.0).abs() < 1e-12,
            "{compute}"
        );
        assert!((overhead - 0.1).abs() < 1e-12, "{overhead}");
    }
}
