//! Platforms: the nodes of a machine room and the network between them, read from TOML.
//!
//! A platform file looks like this (every key is described on the type that holds it):
//!
//! ```toml
//! name = "two-nodes"
//! description = "a fast and a slow node"
//! speed_unit = "Mflop/s"        # optional; the unit of marked_speed
//!
//! [network]
//! g_s_per_byte = 1.96e-7        # s per byte injected by the fastest node
//! o_s = 0.0                     # optional per-message overhead, s
//! L = { table = [ { p = 2, L_s = 9.0e-3 }, { p = 4, L_s = 1.5e-2 } ] }
//! # or L = { base_s = 0.0, per_node_s = 3.9e-4, per_log2_node_s = 0.0 }
//!
//! [[node]]
//! name = "fast"
//! kind = "ultrasparc"           # optional; lets node-sets say ultrasparc:2
//! marked_speed = 4.89           # per CPU
//! cpus = 1                      # optional, default 1
//! r = 1.0                       # optional, default 1 (injection slowness, fastest = 1)
//!
//! [[node]]
//! name = "slow"
//! marked_speed = 0.75
//! r = 4.08
//! ```
//!
//! [`Platform::select`] turns a platform and a [`NodeSet`](crate::nodeset::NodeSet) into the [`Machine`] a program runs on.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::barrier_cost::{BarrierCost, BarrierPoint};
use crate::error::{MachineError, Result};
use crate::machine_model::{CollectiveCost, ComputeRate, MachineModel};
use hetscale_model::hbsp::MessageStall;

/// A machine room: named nodes with their marked speeds and the network that joins them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// Short name, e.g. `ucf-cluster`.
    pub name: String,
    /// One line about where the numbers come from.
    #[serde(default)]
    pub description: String,
    /// Unit of every `marked_speed` of this platform (`Mflop/s` unless a paper used another).
    #[serde(default = "default_speed_unit")]
    pub speed_unit: String,
    /// The nodes, in the order that gives them their pids.
    #[serde(rename = "node", default)]
    pub nodes: Vec<Node>,
    /// The interconnect, as HBSP^1 sees it (what predictions use).
    pub network: Network,
    /// What the machine has beyond HBSP^1 (achieved rates, start-up costs, measured
    /// collectives, links and switch); `sim` charges it when present. See
    /// [`crate::machine_model`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineModel>,
}

fn default_speed_unit() -> String {
    "Mflop/s".to_owned()
}

/// One node of a platform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// Unique name (no spaces, commas, colons or `*`: node-sets refer to it).
    pub name: String,
    /// Optional kind shared by identical nodes, so a node-set can say `sunblade:3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Marked speed of one CPU of the node, in the platform's `speed_unit`.
    pub marked_speed: f64,
    /// Number of CPUs; a node-set may use up to this many (`server*2`).
    #[serde(default = "one_cpu")]
    pub cpus: u32,
    /// Injection slowness relative to the fastest injector (HBSP^1 `r_j`, fastest = 1).
    #[serde(default = "unit_r")]
    pub r: f64,
}

fn one_cpu() -> u32 {
    1
}

fn unit_r() -> f64 {
    1.0
}

/// The network parameters of the HBSP^1 model, plus an optional per-message overhead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Network {
    /// `g`: seconds per byte injected by the fastest node.
    pub g_s_per_byte: f64,
    /// `o`: seconds of overhead per message (0 = pure HBSP^1).
    #[serde(default)]
    pub o_s: f64,
    /// `L(p)`: the barrier cost as a function of the number of nodes.
    #[serde(rename = "L")]
    pub l: BarrierCost,
    /// Collectives measured on this machine as such (`hetscale_probe::collective_probe`; JPDC
    /// 2008 section 4.5 measured `T_broadcast(p)` so): models charge a collective listed here
    /// by its formula, once, with no barrier, instead of HBSP^1's `g h + L` for each of its
    /// supersteps. The payload is the most bytes one node receives in its first superstep.
    #[serde(default, rename = "collective", skip_serializing_if = "Vec::is_empty")]
    pub collectives: Vec<CollectiveCost>,
    /// Where `g`, `o`, `L` and the `r_j` come from (a paper's table, a probe: what, where,
    /// when).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Platform {
    /// Parses and validates a platform from TOML text; errors are one line with the TOML line.
    pub fn from_toml_str(text: &str) -> Result<Self> {
        let platform: Platform = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        platform.validate()?;
        Ok(platform)
    }

    /// Reads and validates a platform file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = hetscale_out::read_capped_to_string(path, hetscale_out::input::PLATFORM_FILE)
            .map_err(|e| MachineError::File {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
        Self::from_toml_str(&text).map_err(|e| match e {
            MachineError::InvalidPlatform(m) => {
                MachineError::InvalidPlatform(format!("{}: {m}", path.display()))
            }
            other => other,
        })
    }

    /// The platform as TOML text.
    pub fn to_toml_string(&self) -> Result<String> {
        toml::to_string(self).map_err(|e| MachineError::InvalidPlatform(e.to_string()))
    }

    /// Writes the platform as a TOML file, whole or not at all.
    pub fn write_file(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        hetscale_out::write_atomically(path, self.to_toml_string()?)
            .map_err(|e| file_error(path, &e))
    }

    /// Checks every field; the error names the node or key and the problem.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(MachineError::InvalidPlatform(m));
        if self.name.trim().is_empty() {
            return bad("platform name is empty: write name = \"my-cluster\"".into());
        }
        for (key, text) in [
            ("name", &self.name),
            ("description", &self.description),
            ("speed_unit", &self.speed_unit),
        ] {
            if let Some(problem) = control_character_problem(text) {
                return bad(format!("platform {key} {problem}"));
            }
        }
        if self.nodes.is_empty() {
            return bad(format!(
                "platform \"{}\" has no nodes: add a [[node]] table with name and marked_speed",
                self.name
            ));
        }
        let mut names = HashSet::new();
        for node in &self.nodes {
            node.validate()?;
            if !names.insert(node.name.as_str()) {
                return bad(format!(
                    "node \"{}\" is listed twice: node names must be unique",
                    node.name
                ));
            }
        }
        if let Some(node) = self
            .nodes
            .iter()
            .find(|n| n.kind.as_deref().is_some_and(|k| names.contains(k)))
        {
            return bad(format!(
                "node \"{}\": kind \"{}\" is also a node name; give the kind another name",
                node.name,
                node.kind.as_deref().unwrap_or_default()
            ));
        }
        self.network
            .validate()
            .map_err(MachineError::InvalidPlatform)?;
        if let Some(model) = &self.machine {
            model
                .validate()
                .and_then(|()| model.check_kinds(&self.kinds()))
                .map_err(MachineError::InvalidPlatform)?;
        }
        self.check_derived().map_err(MachineError::InvalidPlatform)
    }

    /// Checks that every `[[machine.compute]]` entry names one of `kernels` (or `*`); the
    /// platform cannot know the kernels, so whoever loads it for a registry calls this.
    pub fn check_kernels(&self, kernels: &[String]) -> Result<()> {
        match &self.machine {
            Some(model) => model
                .check_kernels(kernels)
                .map_err(|e| MachineError::InvalidPlatform(format!("platform {}: {e}", self.name))),
            None => Ok(()),
        }
    }

    /// Every field can be finite while what is computed from them is not: C = sum C_j,
    /// the speed and injection ratios, and the network costs at the largest machine this
    /// platform makes. An infinite C makes every share 0 and every E_s 0, silently.
    fn check_derived(&self) -> std::result::Result<(), String> {
        let total: f64 = self
            .nodes
            .iter()
            .map(|n| n.marked_speed * f64::from(n.cpus))
            .sum();
        if !total.is_finite() {
            return Err(format!(
                "the marked speeds sum to {total} (C overflows): give them in a larger speed_unit"
            ));
        }
        let speed_ratio = extreme_ratio(self.nodes.iter().map(|n| n.marked_speed));
        if !speed_ratio.is_finite() {
            return Err(format!(
                "the speed ratio C_max / C_min = {speed_ratio} overflows: check the marked speeds"
            ));
        }
        let r_ratio = extreme_ratio(self.nodes.iter().map(|n| n.r));
        if !r_ratio.is_finite() {
            return Err(format!(
                "the injection ratio r_max / r_min = {r_ratio} overflows: check the nodes' r (1 = fastest injector)"
            ));
        }
        let r_max = self.nodes.iter().map(|n| n.r).fold(0.0, f64::max);
        let p_max = self.nodes.iter().map(|n| n.cpus as usize).sum();
        self.network.check_derived(r_max, p_max)
    }

    /// The machine of the nodes `picks` selects (each node's index and the CPUs it uses), in
    /// that order: what [`Platform::select`] builds once a node set is resolved.
    pub(crate) fn machine_of(&self, picks: Vec<(usize, u32)>) -> Machine {
        let nodes = picks
            .into_iter()
            .map(|(index, cpus_used)| MachineNode::new(&self.nodes[index], cpus_used))
            .collect();
        Machine {
            platform: self.name.clone(),
            speed_unit: self.speed_unit.clone(),
            nodes,
            network: self.network.clone(),
            model: self.machine.clone(),
            workload: None,
        }
    }

    /// A hypothetical platform with `copies` copies of every node (copy `k > 0` of node `x` is
    /// named `x~k`, same kind, speed and `r`), for predictions beyond the machine that exists.
    pub fn replicated(&self, copies: usize) -> Result<Self> {
        if copies == 0 {
            return Err(MachineError::InvalidPlatform(
                "replicate the platform at least once (copies >= 1)".into(),
            ));
        }
        if copies == 1 {
            return Ok(self.clone());
        }
        let nodes = (0..copies)
            .flat_map(|k| {
                self.nodes.iter().map(move |n| Node {
                    name: if k == 0 {
                        n.name.clone()
                    } else {
                        format!("{}~{k}", n.name)
                    },
                    ..n.clone()
                })
            })
            .collect();
        Ok(Self {
            name: format!("{} x{copies}", self.name),
            description: format!("{} copies of {}", copies, self.name),
            nodes,
            ..self.clone()
        })
    }

    /// The distinct node kinds, in platform order.
    pub fn kinds(&self) -> Vec<&str> {
        let mut seen = HashSet::new();
        self.nodes
            .iter()
            .filter_map(|n| n.kind.as_deref())
            .filter(|k| seen.insert(*k))
            .collect()
    }
}

impl Node {
    /// A node with one CPU and `r = 1`.
    pub fn new(name: impl Into<String>, marked_speed: f64) -> Self {
        Self {
            name: name.into(),
            kind: None,
            marked_speed,
            cpus: 1,
            r: 1.0,
        }
    }

    /// Sets the kind.
    pub fn with_kind(mut self, kind: &str) -> Self {
        self.kind = Some(kind.to_owned());
        self
    }

    /// Sets the number of CPUs.
    pub fn with_cpus(mut self, cpus: u32) -> Self {
        self.cpus = cpus;
        self
    }

    /// Sets the injection slowness `r`.
    pub fn with_r(mut self, r: f64) -> Self {
        self.r = r;
        self
    }

    fn validate(&self) -> Result<()> {
        let bad = |m: String| {
            Err(MachineError::InvalidPlatform(format!(
                "node \"{}\": {m}",
                self.name
            )))
        };
        if let Some(problem) = identifier_problem(&self.name) {
            return bad(format!("name {problem}"));
        }
        if let Some(problem) = self.kind.as_deref().and_then(identifier_problem) {
            return bad(format!("kind {problem}"));
        }
        if let Some(problem) = positive_normal_problem(self.marked_speed) {
            return bad(format!("marked_speed {problem}"));
        }
        if !(MARKED_SPEEDS.0..=MARKED_SPEEDS.1).contains(&self.marked_speed) {
            return bad(format!(
                "marked_speed = {:e} is outside {:e} to {:e} in the platform's speed_unit: no \
                 node is that slow or fast; check the number, or give it in another speed_unit",
                self.marked_speed, MARKED_SPEEDS.0, MARKED_SPEEDS.1
            ));
        }
        if self.cpus == 0 {
            return bad("cpus must be >= 1, got 0".into());
        }
        if let Some(problem) = positive_normal_problem(self.r) {
            return bad(format!("r {problem} (1 = fastest injector)"));
        }
        Ok(())
    }
}

/// The marked speeds a node may have, in its platform's `speed_unit` (from flop/s to
/// Tflop/s, or an index): beyond them a number is a typing or unit error, and far beyond
/// them (1e-300) times and efficiencies overflow to inf or NaN later, in a prediction.
const MARKED_SPEEDS: (f64, f64) = (1e-6, 1e18);

/// Why `value` cannot be a speed or a slowness: not finite, not > 0, or so close to 0
/// (subnormal, e.g. 5e-324) that dividing by it overflows and the statistics fail later.
fn positive_normal_problem(value: f64) -> Option<String> {
    if !(value.is_finite() && value > 0.0) {
        Some(format!("must be > 0, got {value}"))
    } else if !value.is_normal() {
        Some(format!(
            "= {value:e} is too close to 0 to compute with: give one of at least {:e}, or a smaller unit",
            f64::MIN_POSITIVE
        ))
    } else {
        None
    }
}

/// `max / min` of positive values.
fn extreme_ratio(values: impl Iterator<Item = f64> + Clone) -> f64 {
    let max = values.clone().fold(0.0, f64::max);
    let min = values.fold(f64::INFINITY, f64::min);
    max / min
}

/// Why `text`, a name or label a user gave and hetscale prints, cannot be printed as it is:
/// a control character (an escape, a bell) would reach the terminal or a CSV file raw.
pub fn control_character_problem(text: &str) -> Option<String> {
    text.chars().find(|c| c.is_control()).map(|c| {
        format!(
            "{:?} contains the control character {c:?}: remove it",
            hetscale_out::echoed(text)
        )
    })
}

fn identifier_problem(word: &str) -> Option<String> {
    if let Some(problem) = control_character_problem(word) {
        return Some(problem);
    }
    let separator = word
        .chars()
        .find(|c| c.is_whitespace() || [',', ':', '*'].contains(c));
    if word.is_empty() {
        Some("is empty".into())
    } else if word.parse::<usize>().is_ok() || word == "all" {
        Some(format!(
            "\"{word}\" reads as a node count in node-sets; add a letter"
        ))
    } else {
        separator.map(|c| {
            format!("\"{word}\" contains '{c}', which node-sets use as a separator; remove it")
        })
    }
}

impl Network {
    /// A network with bandwidth indicator `g`, constant barrier cost `l` and no overhead.
    pub fn new(g_s_per_byte: f64, l: BarrierCost) -> Self {
        Self {
            g_s_per_byte,
            o_s: 0.0,
            l,
            collectives: Vec::new(),
            source: None,
        }
    }

    /// The measured cost of collective `name`, if this network has one.
    pub fn collective(&self, name: &str) -> Option<&CollectiveCost> {
        self.collectives.iter().find(|c| c.name == name)
    }

    fn validate(&self) -> std::result::Result<(), String> {
        if !(self.g_s_per_byte.is_finite() && self.g_s_per_byte >= 0.0) {
            return Err(format!(
                "network.g_s_per_byte must be >= 0, got {}",
                self.g_s_per_byte
            ));
        }
        if !(self.o_s.is_finite() && self.o_s >= 0.0) {
            return Err(format!("network.o_s must be >= 0, got {}", self.o_s));
        }
        crate::machine_model::validate_collectives("network.collective", &self.collectives)?;
        self.l.validate()
    }

    /// The costs of the largest superstep any run can make must be finite: `g r_max h` and
    /// `o m` for an `h` or `m` as large as a 64-bit count, and `L(p)` up to `p_max` nodes.
    fn check_derived(&self, r_max: f64, p_max: usize) -> std::result::Result<(), String> {
        const LARGEST_COUNT: f64 = u64::MAX as f64;
        let g_h = self.g_s_per_byte * r_max * LARGEST_COUNT;
        if !g_h.is_finite() {
            return Err(format!(
                "network.g_s_per_byte = {} is too large: g r_max h overflows for large h",
                self.g_s_per_byte
            ));
        }
        if !(self.o_s * LARGEST_COUNT).is_finite() {
            return Err(format!(
                "network.o_s = {} is too large: o m overflows for many messages",
                self.o_s
            ));
        }
        // L(p) is linear in p, or in log2 p, so its largest value is at an end of 1..=p_max.
        for p in [1, p_max] {
            let l = self.l.at(p);
            if !l.is_finite() {
                return Err(format!(
                    "network.L: L({p}) = {l} overflows: check its terms or table"
                ));
            }
        }
        Ok(())
    }
}

fn toml_error(text: &str, err: &toml::de::Error) -> MachineError {
    let line = err.span().map(|s| {
        text.as_bytes()[..s.start.min(text.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    });
    let message = err.message().trim().replace('\n', "; ");
    MachineError::InvalidPlatform(match line {
        Some(line) => format!("line {line}: {message}"),
        None => message,
    })
}

fn file_error(path: &Path, err: &std::io::Error) -> MachineError {
    MachineError::File {
        path: path.display().to_string(),
        message: err.to_string(),
    }
}

/// The `p` nodes a program runs on: a platform restricted to a node-set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Machine {
    platform: String,
    speed_unit: String,
    nodes: Vec<MachineNode>,
    network: Network,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<MachineModel>,
    /// The kernel this machine runs, which picks the machine model's compute rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    workload: Option<String>,
}

/// A node as used by a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineNode {
    /// Name on the platform.
    pub name: String,
    /// Kind on the platform.
    pub kind: Option<String>,
    /// CPUs of the node this run uses.
    pub cpus_used: u32,
    /// Marked speed of the node in this run: per-CPU marked speed times `cpus_used`.
    pub marked_speed: f64,
    /// Injection slowness `r_j`.
    pub r: f64,
}

impl MachineNode {
    fn new(node: &Node, cpus_used: u32) -> Self {
        Self {
            name: node.name.clone(),
            kind: node.kind.clone(),
            cpus_used,
            marked_speed: node.marked_speed * f64::from(cpus_used),
            r: node.r,
        }
    }
}

impl Machine {
    /// Name of the platform the nodes come from.
    pub fn platform(&self) -> &str {
        &self.platform
    }

    /// Unit of the marked speeds.
    pub fn speed_unit(&self) -> &str {
        &self.speed_unit
    }

    /// Number of nodes `p`.
    pub fn p(&self) -> usize {
        self.nodes.len()
    }

    /// Processes the run has: a node using `N` CPUs runs `N` of them, as JPDC's server ran two
    /// MPI processes for its two CPUs. Costs that grow with the number of processes (section
    /// 4.5's `T_broadcast` and `T_barrier`, "where p is the number of processes") take this.
    pub fn processes(&self) -> usize {
        self.nodes.iter().map(|n| n.cpus_used as usize).sum()
    }

    /// The nodes, indexed by pid.
    pub fn nodes(&self) -> &[MachineNode] {
        &self.nodes
    }

    /// The network parameters.
    pub fn network(&self) -> &Network {
        &self.network
    }

    /// The machine model `sim` charges, if the platform has one.
    pub fn model(&self) -> Option<&MachineModel> {
        self.model.as_ref()
    }

    /// This machine without its machine model: pure HBSP^1 on `sim`.
    pub fn without_model(&self) -> Self {
        Self {
            model: None,
            ..self.clone()
        }
    }

    /// The kernel this machine runs (see [`Machine::for_workload`]).
    pub fn workload(&self) -> Option<&str> {
        self.workload.as_deref()
    }

    /// This machine running `kernel`: `sim` charges the machine model's rate for it.
    pub fn for_workload(&self, kernel: &str) -> Self {
        Self {
            workload: Some(kernel.to_owned()),
            ..self.clone()
        }
    }

    /// Marked speed `C_j` of node `pid` in this run.
    pub fn marked_speed(&self, pid: usize) -> f64 {
        self.nodes[pid].marked_speed
    }

    /// `C = sum_j C_j`.
    pub fn cluster_speed(&self) -> f64 {
        self.nodes.iter().map(|n| n.marked_speed).sum()
    }

    /// The start-up a run of this machine's workload pays on its machine model (none without
    /// one): `run_overhead_s` plus `process_overhead_s` per process. With node kinds
    /// differing, the largest of each is the one waited for.
    pub fn start_up_s(&self) -> f64 {
        let Some(model) = &self.model else {
            return 0.0;
        };
        let largest = |field: fn(&ComputeRate) -> f64| {
            self.nodes
                .iter()
                .map(|n| field(&model.rate(self.workload(), n.kind.as_deref())))
                .fold(0.0, f64::max)
        };
        largest(|r| r.run_overhead_s) + self.processes() as f64 * largest(|r| r.process_overhead_s)
    }

    /// `L(p)` for this machine's processes (see [`Machine::processes`]), in seconds.
    pub fn l_s(&self) -> f64 {
        self.network.l.at(self.processes())
    }

    /// The stall of a superstep that moves messages, for this machine's processes.
    pub fn message_stall(&self) -> MessageStall {
        self.network.l.message_stall_at(self.processes())
    }

    /// Pids from fastest to slowest marked speed (ties: lower pid first); HBSPlib's rank
    /// `k` is element `k - 1`.
    pub fn ranking(&self) -> Vec<usize> {
        let mut pids: Vec<usize> = (0..self.p()).collect();
        pids.sort_by(|&a, &b| {
            self.marked_speed(b)
                .total_cmp(&self.marked_speed(a))
                .then(a.cmp(&b))
        });
        pids
    }

    /// Balanced shares `c_j = C_j / C`.
    pub fn shares(&self) -> Vec<f64> {
        let c = self.cluster_speed();
        self.nodes.iter().map(|n| n.marked_speed / c).collect()
    }

    /// `n` items split in proportion to marked speed (largest remainder; sums to `n`).
    pub fn balanced_counts(&self, n: usize) -> Vec<usize> {
        let speeds: Vec<f64> = self.nodes.iter().map(|n| n.marked_speed).collect();
        hetscale_model::hbsp::integer_shares(n, &speeds)
            .expect("validated platforms have positive speeds")
    }

    /// The HBSP^1 cost model of this machine (`g`, `r_j`, `L(p)`).
    pub fn cost_model(&self) -> hetscale_model::hbsp::HbspMachine {
        let r = self.nodes.iter().map(|n| n.r).collect();
        hetscale_model::hbsp::HbspMachine::new(self.network.g_s_per_byte, r, self.l_s())
            .and_then(|m| m.with_message_overhead(self.network.o_s))
            .and_then(|m| m.with_message_stall(self.message_stall()))
            .expect("validated platforms have valid network parameters")
    }
}

impl MachineModel {
    /// The model a platform's HBSP^1 network implies: link `1 / g`, latency `o`, nothing
    /// else (what calibrating a platform without a `[machine]` table starts from).
    pub fn from_network(network: &Network) -> Self {
        let link = if network.g_s_per_byte > 0.0 {
            1.0 / network.g_s_per_byte
        } else {
            f64::MAX
        };
        Self {
            latency_s: network.o_s,
            ..Self::with_link(link)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_nodes(fast: f64, slow: f64) -> Platform {
        Platform {
            name: "two".into(),
            description: String::new(),
            speed_unit: default_speed_unit(),
            nodes: vec![Node::new("fast", fast), Node::new("slow", slow)],
            network: Network::new(1e-9, BarrierCost::constant(1e-6)),
            machine: None,
        }
    }

    fn problem(platform: &Platform) -> String {
        platform.validate().unwrap_err().to_string()
    }

    #[test]
    fn speeds_no_node_has_are_refused_before_c_or_a_ratio_overflows() {
        // 1e308 + 1e308 made C = inf; 1e300 / 1e-300 an infinite ratio; 1e-300 alone a NaN
        // time in a prediction.
        for (fast, slow) in [(1e308, 1e308), (1e300, 1e-300), (1.0, 1e-300)] {
            let err = problem(&two_nodes(fast, slow));
            assert!(err.contains("is outside 1e-6 to 1e18"), "{err}");
        }
        let mut many_cpus = two_nodes(1e18, 1.0);
        many_cpus.nodes[0].cpus = u32::MAX;
        many_cpus.validate().unwrap();
        two_nodes(1e18, 1e-6).validate().unwrap();
    }

    #[test]
    fn an_injection_ratio_that_overflows_is_refused() {
        let mut r = two_nodes(1.0, 1.0);
        r.nodes[1].r = 1e300;
        r.nodes[0].r = 1e-300;
        let err = problem(&r);
        assert!(err.contains("r_max / r_min"), "{err}");
    }

    #[test]
    fn network_costs_that_overflow_are_refused() {
        let mut g = two_nodes(1.0, 1.0);
        g.network.g_s_per_byte = 1e300;
        assert!(problem(&g).contains("g r_max h"), "{}", problem(&g));
        let mut o = two_nodes(1.0, 1.0);
        o.network.o_s = 1e300;
        assert!(problem(&o).contains("o m"), "{}", problem(&o));
        let mut l = two_nodes(1.0, 1.0);
        l.network.l = BarrierCost::Formula {
            base_s: 0.0,
            per_node_s: 1e308,
            per_log2_node_s: 0.0,
        };
        assert!(problem(&l).contains("L(2) = inf"), "{}", problem(&l));
        let mut table = two_nodes(1.0, 1.0);
        table.nodes[0].cpus = 1000;
        table.network.l = BarrierCost::Table(vec![
            BarrierPoint {
                p: 1,
                l_s: 0.0,
                message_stall_s: 0.0,
                message_stall_all_s: None,
            },
            BarrierPoint {
                p: 2,
                l_s: 1e306,
                message_stall_s: 0.0,
                message_stall_all_s: None,
            },
        ]);
        assert!(
            problem(&table).contains("L(1001) = inf"),
            "{}",
            problem(&table)
        );
    }

    #[test]
    fn the_presets_pass_the_derived_checks() {
        for platform in crate::presets::all() {
            platform.validate().unwrap();
        }
    }
}
