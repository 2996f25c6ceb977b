//! The scaling model's time at a fixed size: `hetscale predict --time-at N`, the question a
//! machine's T at one problem size answers (where [`super::fit`] asks for the size
//! holding a target `E_s`).

use hetscale_model::ModelError;
use hetscale_model::scaling::{Predictive, Selection, bootstrap_time};
use serde::Serialize;

use super::fit::{StudyRuns, model_configuration};
use super::prediction::{FittedConfiguration, ModelSummary};
use crate::error::{Result, StudyError};
use crate::spec::configuration::ResolvedConfiguration;

/// The time at one size on one requested configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimePoint {
    /// The node set as requested.
    pub nodes: String,
    /// The node count.
    pub p: usize,
    /// The marked speed `C`, flop/s.
    pub marked_speed_flops: f64,
    /// The size.
    pub n: u64,
    /// The work at `n`, flop.
    pub work_flop: f64,
    /// The time at `n`, s.
    pub time_s: f64,
    /// Its 95% interval, s.
    pub time_s_ci95: [f64; 2],
    /// The speed-efficiency `W / (T C)` at that time.
    pub speed_efficiency: f64,
    /// The predictive distribution the interval is read from.
    pub predictive: Predictive,
    /// What the data cannot support, one line each.
    pub cautions: Vec<String>,
}

/// `predict --time-at`'s result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimePrediction {
    /// The study fitted (or the file).
    pub study: String,
    /// The size asked about.
    pub n: u64,
    /// The selected model.
    pub model: ModelSummary,
    /// The configurations fitted on.
    pub fitted_on: Vec<FittedConfiguration>,
    /// One per requested configuration, in the order requested.
    pub points: Vec<TimePoint>,
}

impl StudyRuns {
    /// The time `selection` predicts at size `n` on each of `targets`, with the bootstrap's
    /// 95% interval ([`bootstrap_time`]).
    pub fn predict_time_at(
        &self,
        study: &str,
        selection: &Selection,
        targets: &[ResolvedConfiguration],
        n: u64,
    ) -> Result<TimePrediction> {
        let points = targets
            .iter()
            .map(|target| self.time_on(selection, target, n))
            .collect::<Result<Vec<_>>>()?;
        Ok(TimePrediction {
            study: study.to_string(),
            n,
            model: ModelSummary::of(&selection.model),
            fitted_on: self.fitted_on(),
            points,
        })
    }

    fn time_on(
        &self,
        selection: &Selection,
        target: &ResolvedConfiguration,
        n: u64,
    ) -> Result<TimePoint> {
        let configuration = model_configuration(target, &target.nodes)?;
        let p = configuration.nodes();
        let work = self.program.work(n as f64, p);
        let at = bootstrap_time(
            &self.data,
            selection,
            &configuration,
            n as f64,
            work,
            &self.bootstrap_options(),
        )
        .map_err(|e| match e {
            // It names the configuration already.
            ModelError::TermUndefined { .. } => StudyError::Model(e),
            e => StudyError::Configuration {
                configuration: target.nodes.clone(),
                message: e.to_string(),
            },
        })?;
        let c = configuration.marked_speed();
        Ok(TimePoint {
            nodes: target.nodes.clone(),
            p,
            marked_speed_flops: c,
            n,
            work_flop: work,
            time_s: at.time_s.estimate,
            time_s_ci95: [at.time_s.low, at.time_s.high],
            speed_efficiency: work / (at.time_s.estimate * c),
            predictive: at.predictive,
            cautions: at.cautions.iter().map(ToString::to_string).collect(),
        })
    }
}
