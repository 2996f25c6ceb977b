//! A platform, and the machine a node set selects from it, as `hetscale platform` shows them:
//! a summary of the platform, the machine's nodes with their shares, and both in the one JSON
//! schema, whose keys name their units (a flop rate as `marked_speed_flops`, HBSP's `L` as `l`).

use hbsp::{Machine, Platform};
use hetscale_kernels::flops_per_unit;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// A platform in one line: its name, node count, marked speed, unit, kinds and description.
#[derive(Debug, Serialize)]
pub struct PlatformSummary<'a> {
    /// The platform's name.
    pub name: &'a str,
    /// Its node count.
    pub p: usize,
    /// Its node kinds.
    pub kinds: Vec<&'a str>,
    /// The unit of its marked speeds.
    pub speed_unit: &'a str,
    /// What it is.
    pub description: &'a str,
    /// The cluster's marked speed in flop/s, when its unit is a flop rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marked_speed_flops: Option<f64>,
    /// The cluster's marked speed in its own unit, when that is not a flop rate (an index).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marked_speed_index: Option<f64>,
    /// The cluster's marked speed in the platform's unit.
    #[serde(skip)]
    pub cluster_speed: f64,
}

impl<'a> PlatformSummary<'a> {
    /// The summary of `platform`.
    pub fn of(platform: &'a Platform) -> Self {
        let cluster_speed: f64 = platform.nodes.iter().map(|n| n.marked_speed).sum();
        let flops = flops_per_unit(&platform.speed_unit);
        Self {
            name: &platform.name,
            p: platform.nodes.len(),
            kinds: platform.kinds(),
            speed_unit: &platform.speed_unit,
            description: &platform.description,
            marked_speed_flops: flops.map(|factor| cluster_speed * factor),
            marked_speed_index: flops.is_none().then_some(cluster_speed),
            cluster_speed,
        }
    }
}

/// `platform` in the JSON schema: its file's keys, every marked speed under [`speed_key`]'s
/// key, `L` as `l`.
pub fn platform_json(platform: &Platform) -> serde_json::Result<Value> {
    Ok(schema_keys(
        serde_json::to_value(platform)?,
        &platform.speed_unit,
    ))
}

/// The machine a node set selects: its nodes, each with its share of the work.
#[derive(Debug)]
pub struct MachineView<'a> {
    /// The machine.
    pub machine: &'a Machine,
    /// Its node count.
    pub p: usize,
    /// Its marked speed `C`, in the platform's unit.
    pub cluster_speed: f64,
    /// Each node's share of the work, in proportion to its marked speed.
    pub shares: Vec<f64>,
    /// `L(p)`, s.
    pub l_s: f64,
}

impl<'a> MachineView<'a> {
    /// The view of `machine`.
    pub fn of(machine: &'a Machine) -> Self {
        Self {
            machine,
            p: machine.p(),
            cluster_speed: machine.cluster_speed(),
            shares: machine.shares(),
            l_s: machine.l_s(),
        }
    }

    /// The machine in the JSON schema: `nodes` the node set as given and `p` its count, the
    /// cluster's and each node's marked speed under [`speed_key`], each node's share beside it.
    pub fn to_json(&self, nodes: &str) -> serde_json::Result<Value> {
        let unit = self.machine.speed_unit();
        let mut value = schema_keys(serde_json::to_value(self.machine)?, unit);
        let Some(object) = value.as_object_mut() else {
            return Err(serde::ser::Error::custom(
                "a machine serializes to a JSON object",
            ));
        };
        let mut each = object.remove("nodes").unwrap_or_default();
        for (node, share) in each.as_array_mut().into_iter().flatten().zip(&self.shares) {
            node["share"] = json!(share);
        }
        let (key, factor) = speed_key(unit);
        object.insert("node".into(), each);
        object.insert("nodes".into(), json!(nodes));
        object.insert("p".into(), json!(self.p));
        object.insert(key.into(), json!(self.cluster_speed * factor));
        object.insert("l_s".into(), json!(self.l_s));
        Ok(value)
    }
}

/// The JSON key of a marked speed in `unit`, and the factor that converts it: one JSON
/// schema across commands (README "JSON output") gives a flop rate as `marked_speed_flops` in
/// flop/s; a unit that is not a flop rate (a BYTEmark index) has no flop/s to give, so its
/// number keeps the platform's unit under `marked_speed_index`, which `speed_unit` names.
pub fn speed_key(unit: &str) -> (&'static str, f64) {
    match flops_per_unit(unit) {
        Some(factor) => ("marked_speed_flops", factor),
        None => ("marked_speed_index", 1.0),
    }
}

/// `value` (a platform or machine as its file names it) with the JSON schema's keys: every
/// marked speed under [`speed_key`], HBSP's barrier cost `L` (`L_s`) as `l` (`l_s`).
pub fn schema_keys(value: Value, unit: &str) -> Value {
    match value {
        Value::Object(map) => {
            let (speed, factor) = speed_key(unit);
            let renamed: Map<String, Value> = map
                .into_iter()
                .map(|(key, v)| match key.as_str() {
                    "marked_speed" => (speed.to_owned(), json!(v.as_f64().map(|s| s * factor))),
                    "L" => ("l".to_owned(), schema_keys(v, unit)),
                    "L_s" => ("l_s".to_owned(), v),
                    _ => (key, schema_keys(v, unit)),
                })
                .collect();
            Value::Object(renamed)
        }
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| schema_keys(v, unit)).collect())
        }
        other => other,
    }
}
