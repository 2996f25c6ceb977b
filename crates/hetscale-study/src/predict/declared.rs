//! `hetscale predict --work ...`: approach 3 for a program hetscale does not run, known by its
//! declared model (its compute, overhead and communication) on the platform, with the compute
//! rate and start-up `--program`'s calibration wrote there: the size holding the target, or
//! the time at one size with the interval of that calibration's errors.

use hbsp::Platform;

use super::answer::{Answer, DeclaredTime, DeclaredTimes, Prediction, Source};
use super::approach3::per_configuration;
use super::question::Question;
use crate::error::{Result, StudyError};
use crate::runner::program::Program;
use crate::spec::configuration::ResolvedConfiguration;

/// Approach 3 for the declared `program` on the platform `platform` gives (loaded once the
/// program is known to be modelled): the size holding `--target` on each configuration, or
/// the time at `--time-at`.
pub fn declared<E: From<StudyError>>(
    program: &Program,
    platform: impl FnOnce() -> std::result::Result<Platform, E>,
    question: &Question,
) -> std::result::Result<Prediction, E> {
    if program.unmodelled().is_some() {
        return Err(StudyError::Question(
            "approach 3 adds the program's messages and overhead to its compute: give --communication STEPS or --overhead FORMULA (\"0\" if it has none)".into(),
        )
        .into());
    }
    let platform = platform()?;
    program.check_calibrated_on(&platform)?;
    let name = question
        .program
        .as_deref()
        .unwrap_or("the declared program");
    let (platform, configs) = question.configurations(platform)?;
    let answer = match question.target {
        Some(target) => Answer::Approach3(per_configuration(
            program,
            &configs,
            target,
            question.n_range(),
        )?),
        None => {
            let n = question
                .time_at
                .ok_or_else(|| StudyError::Question("give --target E or --time-at N".into()))?;
            let points =
                declared_times(program, &platform, &configs, n, question.program.as_deref())?;
            Answer::DeclaredTimes(DeclaredTimes { n, points })
        }
    };
    Ok(Prediction {
        answer,
        source: Source::Program(name.to_string()),
        platform: platform.name,
        nodes: question.nodes.clone(),
        replicate: question.replicate,
    })
}

/// Approach 3's time at size `n` on each configuration for a declared program, with the 95%
/// interval of the errors its calibration made on configurations it predicted from smaller
/// ones (none when the platform holds no calibration of `program`).
fn declared_times(
    program: &Program,
    platform: &Platform,
    configs: &[ResolvedConfiguration],
    n: u64,
    name: Option<&str>,
) -> Result<Vec<DeclaredTime>> {
    let errors = match (name, &platform.machine) {
        (Some(name), Some(model)) => model.rate(Some(name), None).held_out_errors,
        _ => Vec::new(),
    };
    configs
        .iter()
        .map(|config| {
            let (compute, overhead) = program.model_parts(n as f64, config)?;
            let time_s = compute + overhead;
            let c = &config.configuration;
            let work_flop = program.work(n as f64, c.nodes);
            Ok(DeclaredTime {
                nodes: config.nodes.clone(),
                p: c.nodes,
                marked_speed_flops: c.marked_speed,
                n,
                work_flop,
                time_s,
                time_s_ci95: hetscale_model::fit::interval_from_errors(time_s, &errors),
                speed_efficiency: work_flop / (time_s * c.marked_speed),
            })
        })
        .collect()
}
