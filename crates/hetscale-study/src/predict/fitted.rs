//! `hetscale predict --from DB` and `--runs FILE.csv`: the scaling model ([`crate::scaling`])
//! fitted to measured runs, a study's stored ones or a file's, asked for the configurations
//! given: the size holding the target, or the time at `--time-at`.

use std::path::Path;
use std::sync::Arc;

use hbsp::Platform;
use hetscale_kernels::KernelRegistry;
use hetscale_model::scaling::Progress;

use super::answer::{Answer, Prediction, Source};
use super::question::Question;
use crate::calibrate::runs::RunsFile;
use crate::error::StudyError;
use crate::runner::program::Program;
use crate::scaling::fit::{StudyRuns, pick_study};
use crate::spec::DEFAULT_TOLERANCE;
use crate::store::Store;
use hetscale_model::numbers::significant;

/// The scaling model fitted to the runs of a study in the database `db` (`--study`, or its
/// only one; its programs from `registry`), asked on the platform `platform` gives, if any,
/// else on the study's own (its nodes are the ones the runs measured); `progress` is told of
/// the bootstrap's resamples.
pub fn from_study<E: From<StudyError>>(
    db: &str,
    registry: &KernelRegistry,
    platform: impl FnOnce() -> std::result::Result<Option<Platform>, E>,
    question: &Question,
    progress: Progress,
) -> std::result::Result<Prediction, E> {
    let store = Store::open_read_only(Path::new(db))?;
    let study = pick_study(&store, question.study.as_deref())?;
    let mut runs = StudyRuns::load(&store, &study, registry)?;
    runs.progress = progress;
    // A stored study always has a target.
    let target = question.target.or(runs.target);
    let platform = match platform()? {
        Some(platform) => platform,
        None => runs.platform.clone(),
    };
    Ok(fit_and_predict(
        runs,
        platform,
        target,
        &study,
        Source::From(db.to_string()),
        question,
    )?)
}

/// The scaling model fitted to the runs read from a CSV file ([`read_runs`]), measured on
/// the platform `platform` gives, of the program `program` gives for the name the runs'
/// `kernel` column holds (none when the file holds no runs); `progress` is told of the
/// bootstrap's resamples.
///
/// [`read_runs`]: crate::calibrate::runs::read_runs
pub fn from_runs<E: From<StudyError>>(
    file: &RunsFile,
    program: impl FnOnce(Option<&str>) -> std::result::Result<Program, E>,
    platform: impl FnOnce() -> std::result::Result<Platform, E>,
    question: &Question,
    progress: Progress,
) -> std::result::Result<Prediction, E> {
    let measured = &file.runs;
    let names: std::collections::BTreeSet<&str> =
        measured.iter().map(|r| r.kernel.as_str()).collect();
    if names.len() > 1 {
        return Err(StudyError::Question(format!(
            "--runs holds runs of several programs ({}): give one program's runs per file",
            names.iter().copied().collect::<Vec<_>>().join(", ")
        ))
        .into());
    }
    let program = program(names.first().copied())?;
    let platform = platform()?;
    // A study's default tolerance; fit_and_predict applies --tolerance to both sources.
    let mut runs = StudyRuns::from_measured(
        measured,
        platform.clone(),
        Arc::new(program),
        DEFAULT_TOLERANCE,
    )?;
    runs.progress = progress;
    let shown = file.source_name.clone();
    Ok(fit_and_predict(
        runs,
        platform,
        question.target,
        &shown,
        Source::Runs(shown.clone()),
        question,
    )?)
}

/// The scaling model fitted to `runs` (named `name` in the answer), asked for the
/// configurations `question` gives on `platform`: the size holding `target`, or the time at
/// `--time-at`.
fn fit_and_predict(
    mut runs: StudyRuns,
    platform: Platform,
    target: Option<f64>,
    name: &str,
    source: Source,
    question: &Question,
) -> crate::Result<Prediction> {
    if let Some(tolerance) = question.tolerance {
        runs.tolerance = tolerance;
    }
    let foreign =
        (platform != runs.platform).then(|| (runs.platform.name.clone(), platform.name.clone()));
    let (platform, configs) = question.configurations(platform)?;
    let selection = runs.fit(&configs, !question.normal_form)?;
    let mut answer = match question.time_at {
        Some(n) => Answer::ScalingTime(runs.predict_time_at(name, &selection, &configs, n)?),
        None => {
            // The command line requires --target unless --from (whose study has one) or
            // --time-at.
            let target = target
                .ok_or_else(|| StudyError::Question("give --target E_s, or --time-at N".into()))?;
            let (n_min, n_max) = question.n_range();
            Answer::Scaling(runs.predict(
                name,
                &selection,
                &configs,
                target,
                (n_min as f64, n_max as f64),
            )?)
        }
    };
    if let Some((fitted, asked)) = foreign {
        add_foreign_platform_cautions(&mut answer, &fitted, &asked);
    }
    Ok(Prediction {
        answer,
        source,
        platform: platform.name,
        nodes: question.nodes.clone(),
        replicate: question.replicate,
    })
}

/// A caution on every point of `answer` when the platform it predicts on (`asked`) is not the
/// one its runs were measured on (`fitted`): the model's overhead in `p` and `N` is what the
/// fitted machine's network and nodes gave, so elsewhere it is an assumption, the more so the
/// more the nodes' speeds differ.
fn add_foreign_platform_cautions(answer: &mut Answer, fitted: &str, asked: &str) {
    let per_node = |speed: f64, p: usize| speed / p.max(1) as f64;
    let (fitted_on, points): (&Vec<_>, Vec<_>) = match answer {
        Answer::Scaling(s) => (
            &s.fitted_on,
            s.points
                .iter_mut()
                .map(|pt| (per_node(pt.marked_speed_flops, pt.p), &mut pt.cautions))
                .collect(),
        ),
        Answer::ScalingTime(t) => (
            &t.fitted_on,
            t.points
                .iter_mut()
                .map(|pt| (per_node(pt.marked_speed_flops, pt.p), &mut pt.cautions))
                .collect(),
        ),
        Answer::Approach3(_) | Answer::DeclaredTimes(_) => return,
    };
    let fitted_speed = fitted_on
        .iter()
        .map(|c| per_node(c.marked_speed_flops, c.p))
        .fold(0.0, f64::max);
    let which = if fitted == asked {
        format!("a platform \"{asked}\" other than the one of that name the runs were measured on")
    } else {
        format!("platform \"{asked}\", the runs having been measured on \"{fitted}\"")
    };
    for (speed, cautions) in points {
        cautions.insert(
            0,
            format!(
                "predicted on {which}: its nodes average {}x the marked speed of the fitted ones, and the model's overhead in p and N is what {fitted}'s network and nodes gave, an assumption on another machine",
                significant(speed / fitted_speed, 2)
            ),
        );
    }
}
