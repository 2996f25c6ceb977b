//! The runs a scaling model is fitted to: configurations (each node's marked speed) and runs
//! (size and time on one of them).

use crate::error::{ModelError, Result, all_positive, positive};
use serde::Serialize;

/// A set of nodes a program ran on: its label and each node's marked speed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Configuration {
    /// The name runs refer to it by (unique within a [`ScalingData`]).
    pub label: String,
    /// Each node's marked speed `C_i`, flop/s; the node count `p` is their number.
    pub marked_speeds_flops: Vec<f64>,
}

impl Configuration {
    /// A configuration of the nodes with these marked speeds (flop/s, each positive).
    pub fn new(label: &str, marked_speeds_flops: Vec<f64>) -> Result<Self> {
        all_positive("marked_speed", &marked_speeds_flops)?;
        Ok(Self {
            label: label.to_owned(),
            marked_speeds_flops,
        })
    }

    /// The node count `p`.
    pub fn nodes(&self) -> usize {
        self.marked_speeds_flops.len()
    }

    /// The configuration's marked speed `C = sum_i C_i`, flop/s.
    pub fn marked_speed(&self) -> f64 {
        self.marked_speeds_flops.iter().sum()
    }

    /// The slowest node's marked speed `C_min`, flop/s.
    pub fn slowest_marked_speed(&self) -> f64 {
        self.marked_speeds_flops
            .iter()
            .fold(f64::INFINITY, |a, &b| a.min(b))
    }

    /// The slowest node's share factor `C / (p min_i C_i)` (>= 1): how much longer than
    /// `W / C` the compute takes when every node gets the same share of the work; 1 on a
    /// homogeneous configuration.
    pub fn slowest_share(&self) -> f64 {
        self.marked_speed() / (self.nodes() as f64 * self.slowest_marked_speed())
    }

    pub(super) fn check(&self) -> Result<()> {
        if self.label.is_empty() {
            return Err(ModelError::Inconsistent(
                "a configuration has an empty label: name every configuration".into(),
            ));
        }
        all_positive("marked_speed", &self.marked_speeds_flops)
            .map_err(|e| ModelError::Inconsistent(format!("configuration \"{}\": {e}", self.label)))
    }
}

/// How a program splits its work among a configuration's nodes (its author knows it from its
/// source, as its messages): it decides the compute term of its model, so that two small
/// configurations need not tell load imbalance from communication.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Partition {
    /// Shares in proportion to marked speed, as hetscale's kernels split theirs and
    /// isospeed-efficiency assumes (the default): the compute term is `W/C`, and hypotheses
    /// may add the slowest node's share `W/(p C_min) - W/C` where the runs show other costs
    /// that the slowest node sets.
    #[default]
    Speed,
    /// The same share on every node (a block split by rank): the slowest node finishes last,
    /// and the compute term is `W/(p C_min)`.
    Equal,
}

impl Partition {
    /// The names [`Partition::from_str`](std::str::FromStr) takes.
    pub const NAMES: [&'static str; 2] = ["speed", "equal"];
}

impl std::str::FromStr for Partition {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        match text.trim() {
            "speed" => Ok(Self::Speed),
            "equal" => Ok(Self::Equal),
            other => Err(format!(
                "partition \"{other}\" is not known: give \"speed\" (shares in proportion to marked speed) or \"equal\" (the same share on every node)"
            )),
        }
    }
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Speed => "speed",
            Self::Equal => "equal",
        })
    }
}

/// One measured run: a size on a configuration, its work and its time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// The label of the [`Configuration`] it ran on.
    pub configuration: String,
    /// The problem size `n`.
    pub n: f64,
    /// The work `W(n)`, flop.
    pub work_flop: f64,
    /// The measured time, s.
    pub time_s: f64,
}

impl Run {
    /// A run of size `n` with work `work_flop` taking `time_s` on `configuration`.
    pub fn new(configuration: &str, n: f64, work_flop: f64, time_s: f64) -> Self {
        Self {
            configuration: configuration.to_owned(),
            n,
            work_flop,
            time_s,
        }
    }
}

/// The runs a model is fitted to and the configurations they ran on.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ScalingData {
    /// Every configuration a run refers to.
    pub configurations: Vec<Configuration>,
    /// The runs.
    pub runs: Vec<Run>,
}

impl ScalingData {
    /// The configuration labelled `label`.
    pub fn configuration(&self, label: &str) -> Option<&Configuration> {
        self.configurations.iter().find(|c| c.label == label)
    }

    /// Checks every configuration and run, one line naming the first bad one: labels unique
    /// and known, speeds, sizes, work and times positive and finite.
    pub fn check(&self) -> Result<()> {
        for (i, c) in self.configurations.iter().enumerate() {
            c.check()?;
            if self.configurations[..i].iter().any(|d| d.label == c.label) {
                return Err(ModelError::Inconsistent(format!(
                    "two configurations are labelled \"{}\": labels must be unique",
                    c.label
                )));
            }
        }
        if self.runs.is_empty() {
            return Err(ModelError::Inconsistent(
                "no runs to fit a scaling model to".into(),
            ));
        }
        for (i, run) in self.runs.iter().enumerate() {
            let bad = |e: ModelError| {
                ModelError::Inconsistent(format!(
                    "run {} (n = {} on \"{}\"): {e}",
                    i + 1,
                    run.n,
                    run.configuration
                ))
            };
            if self.configuration(&run.configuration).is_none() {
                return Err(bad(ModelError::Inconsistent(
                    "its configuration is not among the configurations given".into(),
                )));
            }
            positive("n", run.n).map_err(bad)?;
            positive("work_flop", run.work_flop).map_err(bad)?;
            positive("time_s", run.time_s).map_err(bad)?;
        }
        Ok(())
    }
}
