//! `hetscale predict KERNEL`: approach 3 on the configurations asked, each that holds the
//! target answered even where another holds it at no size searched.

use hbsp::Platform;

use super::answer::{Answer, Approach3Prediction, Prediction, Source};
use super::question::Question;
use crate::approaches::predicted::{KernelTimeModel, PredictedStudy};
use crate::error::{Result, StudyError};
use crate::runner::program::Program;
use crate::scaling::prediction::UnreachedPoint;
use crate::spec::configuration::ResolvedConfiguration;
use crate::study::warnings::{OPTION_RANGE, with_range_advice};

/// Approach 3 for kernel `name` (`program`, its options applied) on `platform`: the size
/// holding `target` on each configuration `question` asks about.
pub fn kernel(
    name: &str,
    program: &Program,
    platform: Platform,
    target: f64,
    question: &Question,
) -> Result<Prediction> {
    let (platform, configs) = question.configurations(platform)?;
    let predicted = per_configuration(program, &configs, target, question.n_range())?;
    Ok(Prediction {
        answer: Answer::Approach3(predicted),
        source: Source::Kernel(name.to_string()),
        platform: platform.name,
        nodes: question.nodes.clone(),
        replicate: question.replicate,
    })
}

/// Approach 3's prediction on `configs`, sizes searched in `range`. One configuration's
/// answer is worth giving with the others' reasons (as a prediction from runs gives it);
/// where none holds the target in the range, the first one's reason is the error, naming
/// which of --n-min or --n-max to change.
pub fn per_configuration(
    program: &Program,
    configs: &[ResolvedConfiguration],
    target: f64,
    range: (u64, u64),
) -> Result<Approach3Prediction> {
    let on = |configs: &[ResolvedConfiguration]| study_on(program, configs, target, range);
    match on(configs) {
        Ok(study) => {
            return Ok(Approach3Prediction {
                study,
                unreached: Vec::new(),
            });
        }
        Err(StudyError::Model(_)) => {}
        Err(other) => return Err(other),
    }
    let (mut reached, mut unreached) = (Vec::new(), Vec::new());
    for config in configs {
        match on(std::slice::from_ref(config)) {
            Ok(_) => reached.push(config.clone()),
            Err(StudyError::Model(err)) => unreached.push(unreached_point(config, err)?),
            Err(other) => return Err(other),
        }
    }
    if reached.is_empty() {
        // Every configuration failed alone with a reason: the first is the error.
        let first = unreached.swap_remove(0);
        return Err(StudyError::Configuration {
            configuration: first.nodes,
            message: first.reason,
        });
    }
    Ok(Approach3Prediction {
        study: on(&reached)?,
        unreached,
    })
}

/// Approach 3 without running anything: the kernel's (or command's) time model as derived
/// (`a = k = 1`) on every configuration of `configs` at once, e.g. at 4096 nodes.
fn study_on(
    program: &Program,
    configs: &[ResolvedConfiguration],
    target: f64,
    (n_min, n_max): (u64, u64),
) -> Result<PredictedStudy> {
    Ok(KernelTimeModel::default().predict(
        program,
        configs,
        target,
        (n_min as f64, n_max as f64),
    )?)
}

/// `config` as a configuration the model brings to the target at no size searched, with the
/// advice of `err`; any other model error as it is.
fn unreached_point(
    config: &ResolvedConfiguration,
    err: hetscale_model::ModelError,
) -> Result<UnreachedPoint> {
    let c = &config.configuration;
    let err = with_range_advice(err, &c.label, OPTION_RANGE);
    UnreachedPoint::from_error(&c.label, c.nodes, c.marked_speed, err)
}
