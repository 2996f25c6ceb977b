//! A study's configurations: a node set with its marked speed `C` (the papers' `C_i`), and the
//! same resolved on a platform into the HBSP machine it runs on. Below the programs, the
//! predicted approach and the runner, which all take them.

use hbsp::{Machine, Platform};
use hetscale_kernels::flops_per_unit;
use hetscale_model::error::positive;
use serde::Serialize;

use crate::error::{Result, StudyError};

/// One configuration of a study: a set of nodes and its marked speed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Configuration {
    /// How the configuration is shown (e.g. `C_8`).
    pub label: String,
    /// Number of nodes `p`.
    #[serde(rename = "p")]
    pub nodes: usize,
    /// Marked speed `C` of the configuration, flop/s.
    #[serde(rename = "marked_speed_flops")]
    pub marked_speed: f64,
}

impl Configuration {
    /// A validated configuration.
    pub fn new(
        label: impl Into<String>,
        nodes: usize,
        marked_speed: f64,
    ) -> hetscale_model::Result<Self> {
        positive("nodes", nodes as f64)?;
        positive("marked_speed", marked_speed)?;
        Ok(Self {
            label: label.into(),
            nodes,
            marked_speed,
        })
    }
}

/// A configuration of the study, resolved on its platform.
#[derive(Debug, Clone)]
pub struct ResolvedConfiguration {
    /// Label, node count and marked speed `C` in flop/s.
    pub configuration: Configuration,
    /// The node set as the spec wrote it.
    pub nodes: String,
    /// The HBSP machine it runs on.
    pub machine: Machine,
    /// Marked speed of the node that roots the kernels' distribution (the fastest), flop/s.
    pub root_speed: f64,
}

/// Resolves one configuration on `platform`; its marked speed must be a flop rate, since
/// `E_s = W / (T C)` divides flop by flop/s.
pub fn resolve(platform: &Platform, label: &str, nodes: &str) -> Result<ResolvedConfiguration> {
    let fail = |message: String| StudyError::Configuration {
        configuration: hetscale_out::echoed(label).into_owned(),
        message,
    };
    // A configuration labelled by its node set (`predict --nodes`) says it once.
    let in_nodes = |e: hetscale_machine::MachineError| {
        if label == nodes {
            fail(e.to_string())
        } else {
            fail(format!("nodes \"{}\": {e}", hetscale_out::echoed(nodes)))
        }
    };
    let machine = platform.select(&nodes.parse()?).map_err(in_nodes)?;
    let unit = flops_per_unit(machine.speed_unit()).ok_or_else(|| {
        fail(format!(
            "platform {} gives speeds in {}, not a flop rate: E_s = W / (T C) needs Mflop/s",
            platform.name,
            machine.speed_unit()
        ))
    })?;
    let root_speed = machine.marked_speed(machine.ranking()[0]) * unit;
    let configuration = Configuration::new(label, machine.p(), machine.cluster_speed() * unit)?;
    Ok(ResolvedConfiguration {
        configuration,
        nodes: nodes.into(),
        machine,
        root_speed,
    })
}
