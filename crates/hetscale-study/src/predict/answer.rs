//! What `hetscale predict` answers ([`Prediction`]): the answer to the question its options
//! ask, with the inputs its JSON echoes. Every `--json` key is a field here; the text layer
//! (`hetscale_report::text::predict`) shows the same values.

use serde::Serialize;

use crate::approaches::predicted::PredictedStudy;
use crate::scaling::prediction::{ScalingPrediction, UnreachedPoint};
use crate::scaling::time::TimePrediction;

/// `hetscale predict`'s result: its answer beside the inputs asked about (the points' labels
/// are the node sets too).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// The answer, its keys at the top of the document.
    #[serde(flatten)]
    pub answer: Answer,
    /// What the prediction is of: a kernel, a declared program, or measured runs.
    #[serde(flatten)]
    pub source: Source,
    /// The platform predicted on (replicated, under its own name).
    pub platform: String,
    /// The node sets asked about, as given.
    pub nodes: Vec<String>,
    /// Copies of every node of the platform.
    pub replicate: usize,
}

/// The answer to each question `hetscale predict` asks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Answer {
    /// Approach 3 (a kernel's HBSP^1 model, a declared program's model): the size holding
    /// the target on each configuration.
    Approach3(Approach3Prediction),
    /// A declared program's model: the time at one size on each configuration.
    DeclaredTimes(DeclaredTimes),
    /// The scaling model fitted to measured runs: the size holding the target.
    Scaling(ScalingPrediction),
    /// The scaling model fitted to measured runs: the time at one size.
    ScalingTime(TimePrediction),
}

/// What a prediction is of, under the JSON key that echoes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A kernel, by name.
    Kernel(String),
    /// A declared program: its `--program` name, or "the declared program".
    Program(String),
    /// A study database whose runs were fitted.
    From(String),
    /// A CSV file whose runs were fitted, as its path was given.
    Runs(String),
}

impl Source {
    /// The kernel's or program's name, or the database's or file's path.
    pub fn name(&self) -> &str {
        match self {
            Self::Kernel(name) | Self::Program(name) | Self::From(name) | Self::Runs(name) => name,
        }
    }
}

/// Approach 3's prediction: the study on the configurations that hold the target in the
/// range, and why each other one does not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Approach3Prediction {
    /// The configurations that hold the target, with `psi` between them.
    #[serde(flatten)]
    pub study: PredictedStudy,
    /// The configurations that hold it at no size searched, in the order asked.
    pub unreached: Vec<UnreachedPoint>,
}

/// Approach 3's time at one size on each configuration, for a declared program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeclaredTimes {
    /// The size asked about.
    pub n: u64,
    /// One per configuration, in the order asked.
    pub points: Vec<DeclaredTime>,
}

/// Approach 3's time at one size on one configuration, for a declared program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeclaredTime {
    /// The node set as asked.
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
    /// From the calibration's errors on configurations it predicted from smaller ones.
    pub time_s_ci95: Option<(f64, f64)>,
    /// The speed-efficiency `W / (T C)` at that time.
    pub speed_efficiency: f64,
}
