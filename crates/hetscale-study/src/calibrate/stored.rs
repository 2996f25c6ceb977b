//! Calibration from a study database (`hetscale calibrate --db DB [--study NAME]`): its runs,
//! the platform its studies ran on and their kernel options, or, for a command study, the
//! program its spec declares.

use hbsp::Platform;
use hetscale_kernels::{KernelOptions, KernelRegistry};

use super::runs::MeasuredRun;
use crate::error::{Result, StudyError};
use crate::runner::program::Program;
use crate::scaling::fit::pick_study;
use crate::spec::StudySpec;
use crate::store::Store;
use crate::store::stored_spec::stored_spec;

/// What a study database offers calibration: its runs, the platform its studies ran on and
/// their kernel options.
pub struct StoredRuns {
    /// One per stored (successful) run.
    pub runs: Vec<MeasuredRun>,
    /// The platform the studies resolved (stored with them).
    pub platform: Platform,
    /// Kernel options of the studies.
    pub options: KernelOptions,
    /// A command study's program, known by the model its spec declares (its runs' kernel is
    /// the program's name: its spec's `program`, else the study's name); none for kernels.
    pub declared: Option<Program>,
}

/// The runs of study `study` in `store`, or, without a name, of every study there, which must
/// then share one platform and one program (else the error names them and asks for
/// `--study`): calibrate one machine and one program at a time.
pub fn stored_runs(
    store: &Store,
    registry: &KernelRegistry,
    study: Option<&str>,
) -> Result<StoredRuns> {
    let names = match study {
        Some(_) => vec![pick_study(store, study)?],
        None => store.studies()?,
    };
    let mut found: Option<StoredRuns> = None;
    for name in &names {
        let one = study_runs(store, registry, name)?;
        match &mut found {
            None => found = Some(one),
            Some(all) if same_machine_and_program(all, &one) => all.runs.extend(one.runs),
            Some(_) => {
                let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                return Err(StudyError::Calibration(format!(
                    "{}: its studies {} ran on different platforms or programs: calibrate one at a time with --study NAME",
                    store.path(),
                    quoted.join(", ")
                )));
            }
        }
    }
    found.ok_or_else(|| {
        StudyError::Calibration(format!(
            "{}: holds no study: give the database a hetscale study wrote",
            store.path()
        ))
    })
}

/// Whether `one` can be fitted with `all`: the same platform, kernel options and program.
fn same_machine_and_program(all: &StoredRuns, one: &StoredRuns) -> bool {
    let model = |s: &StoredRuns| s.declared.as_ref().and_then(Program::declared_model);
    all.platform == one.platform && all.options == one.options && model(all) == model(one)
}

/// Study `name`'s runs, each with the node set of its configuration.
fn study_runs(store: &Store, registry: &KernelRegistry, name: &str) -> Result<StoredRuns> {
    let refuse = |why: &str| StudyError::Calibration(format!("{}: {why}", store.path()));
    let spec = stored_spec(store, name, registry)?;
    let platform = store
        .study_platform(name)?
        .ok_or_else(|| refuse("a study without its platform: rerun it with this hetscale"))?;
    let declared = declared_program(&spec, name)?;
    let program_name = declared.as_ref().map(|(program, _)| program.clone());
    let mut runs = Vec::new();
    for run in store.runs(Some(name))? {
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
            kernel: program_name.clone().unwrap_or(run.kernel),
            n: run.n,
            time_s: run.time_s,
        });
    }
    Ok(StoredRuns {
        runs,
        platform: Platform::from_toml_str(&platform)?,
        options: spec.kernel_options.clone(),
        declared: declared.map(|(_, program)| program),
    })
}

/// A command study's program by its name (its spec's `program`, else the study's) and the
/// model its spec declares, which calibration takes out of the runs' times: refused when the
/// spec declares no overhead, in the spec's own terms.
fn declared_program(spec: &StudySpec, study: &str) -> Result<Option<(String, Program)>> {
    let Some(command) = &spec.command else {
        return Ok(None);
    };
    if command.overhead.is_none() && command.communication.is_none() {
        return Err(StudyError::Calibration(format!(
            "study \"{study}\" runs a command whose spec declares no overhead: calibration fits the compute rate left once the declared model is taken out, so add overhead = \"...\" (seconds, in n and p; \"0\" if none) or communication = \"...\" to its [command] and rerun the study"
        )));
    }
    let name = command.program.clone().unwrap_or_else(|| study.to_owned());
    let program = Program::of_formulas(command).map_err(|why| {
        StudyError::Calibration(format!("study \"{study}\": its [command] {why}"))
    })?;
    Ok(Some((name, program)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store holding `studies`, each `(name, spec text)` stored with its platform and two
    /// runs on its one configuration `C_2` (sunwulf's `sunblade:2`).
    fn store_of(studies: &[(&str, &str)]) -> Store {
        let store = Store::open_in_memory().unwrap();
        for (name, text) in studies {
            let spec = StudySpec::from_toml_str(text, "t.toml").unwrap();
            let platform = Platform::load(&spec.platform).unwrap();
            store
                .register_study(name, &spec.canonical(), &platform.to_toml_string().unwrap())
                .unwrap();
            for (repetition, n) in [(0, 64), (1, 128)] {
                let mut run = crate::store::tests_support::sample(n, repetition);
                run.study = (*name).into();
                run.configuration = "C_2".into();
                store.record(&run).unwrap();
            }
        }
        store
    }

    fn kernel_study(name: &str, platform: &str, nodes: &str) -> String {
        format!(
            "name = \"{name}\"\nkernel = \"mm\"\nplatform = \"{platform}\"\ntarget = 0.3\nn_max = 4096\n\
             [[configuration]]\nlabel = \"C_2\"\nnodes = \"{nodes}\"\n"
        )
    }

    fn command_study(name: &str, overhead: &str) -> String {
        format!(
            "name = \"{name}\"\nplatform = \"sunwulf\"\ntarget = 0.3\nn_max = 4096\n[command]\ntemplate = \"./solver {{n}}\"\n\
             work = \"2*n^3\"\n{overhead}\n[[configuration]]\nlabel = \"C_2\"\nnodes = \"sunblade:2\"\n"
        )
    }

    #[test]
    fn studies_on_different_platforms_are_named_and_one_is_picked_with_study() {
        let (a, b) = (
            kernel_study("a", "sunwulf", "sunblade:2"),
            kernel_study("b", "kalinov", "fast:2"),
        );
        let store = store_of(&[("a", &a), ("b", &b)]);
        let registry = KernelRegistry::builtin();
        let err = stored_runs(&store, &registry, None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("\"a\", \"b\" ran on different platforms") && err.contains("--study NAME"),
            "{err}"
        );
        let b = stored_runs(&store, &registry, Some("b")).unwrap();
        assert_eq!(b.platform.name, "kalinov");
        assert_eq!(b.runs.len(), 2);
        let err = stored_runs(&store, &registry, Some("c"))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("has no study \"c\""), "{err}");
    }

    #[test]
    fn a_command_study_is_calibrated_as_its_declared_program() {
        let spec = command_study(
            "solver-study",
            "overhead = \"1e-3*p\"\nprogram = \"solver\"",
        );
        let store = store_of(&[("solver-study", &spec)]);
        let stored = stored_runs(&store, &KernelRegistry::builtin(), None).unwrap();
        assert!(
            stored.runs.iter().all(|r| r.kernel == "solver"),
            "{:?}",
            stored.runs
        );
        let model = stored.declared.as_ref().and_then(Program::declared_model);
        assert_eq!(
            model.as_deref(),
            Some("work = 2*n^3; overhead = 1e-3*p; partition = speed")
        );
        // Without an overhead model there is no compute rate to separate: said in the spec's terms.
        let spec = command_study("bare", "");
        let store = store_of(&[("bare", &spec)]);
        let err = stored_runs(&store, &KernelRegistry::builtin(), None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("add overhead = \"...\"") && err.contains("[command]"),
            "{err}"
        );
    }
}
