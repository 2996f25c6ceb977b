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
