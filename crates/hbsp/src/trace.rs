//! Traces: what each node did in each superstep, for spacetime diagrams, average speed charts
//! and task summaries.
//!
//! Times are seconds since the run began on the backend's clock. A superstep's `compute_s` is
//! the time from the end of the previous `sync` to the start of this one (computation and
//! sends); `wait_s` is the time inside `sync` (delivery and barrier). The last superstep of a
//! node runs from its last `sync` to the end of its program.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// Nodes beyond which a trace is summarised: each node keeps its per-superstep totals
/// (times, bytes and messages in and out, work) and its flow to itself, but not its
/// [`Flow`]s to the other nodes,
/// so a superstep's trace is O(p), not O(p^2) (a broadcast or an all-to-all on 1024 nodes
/// would otherwise record a million flows per superstep).
pub const FLOW_NODES: usize = 256;

/// Whether a trace on `p` nodes records each node's flows to each destination.
pub fn records_flows(p: usize) -> bool {
    p <= FLOW_NODES
}

/// The trace of a whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Platform the machine came from.
    pub platform: String,
    /// Number of nodes.
    pub p: usize,
    /// One entry per node, by pid.
    pub nodes: Vec<NodeTrace>,
}

/// The trace of one node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeTrace {
    /// The node's pid.
    pub pid: usize,
    /// Its name on the platform.
    pub name: String,
    /// Its marked speed in this run.
    pub marked_speed: f64,
    /// Its supersteps in order (empty if tracing was off).
    pub supersteps: Vec<SuperstepTrace>,
}

/// One node's share of one superstep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SuperstepTrace {
    /// Superstep number, from 0.
    pub index: u64,
    /// When the superstep began on this node, s.
    pub start_s: f64,
    /// Time computing and sending, s.
    pub compute_s: f64,
    /// Time inside `sync` (delivery and waiting for the other nodes), s.
    pub wait_s: f64,
    /// Payload bytes sent.
    pub bytes_out: u64,
    /// Payload bytes received at the end of the superstep.
    pub bytes_in: u64,
    /// Messages sent.
    pub messages_out: u64,
    /// Messages received at the end of the superstep.
    pub messages_in: u64,
    /// Work declared with `charge_work` or `compute`, in operations.
    pub work_ops: f64,
    /// User-named phases that ended in this superstep.
    pub phases: Vec<PhaseTrace>,
    /// What was sent to each destination, in order of first send (self-sends included);
    /// on more than [`FLOW_NODES`] nodes only the flow to itself.
    #[serde(default)]
    pub flows: Vec<Flow>,
}

/// The traffic from one node to one destination in one superstep.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flow {
    /// Destination pid.
    pub to: usize,
    /// Payload bytes sent to it.
    pub bytes: u64,
    /// Messages sent to it.
    pub messages: u64,
}

/// A user-named phase (`ctx.phase("factor", || ...)`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseTrace {
    /// The name given.
    pub name: String,
    /// When it began, s.
    pub start_s: f64,
    /// How long it took, s.
    pub duration_s: f64,
}

impl Trace {
    /// Number of supersteps of the run (the longest node trace).
    pub fn supersteps(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| n.supersteps.len())
            .max()
            .unwrap_or(0)
    }
}

/// Accumulates one node's trace.
pub(crate) struct Recorder {
    enabled: bool,
    /// Whether flows are recorded too (see [`FLOW_NODES`]).
    flows: bool,
    node: NodeTrace,
    current: SuperstepTrace,
    /// Index in `current.flows` of each destination's flow.
    flow_slot: HashMap<usize, usize>,
}

impl Recorder {
    /// A recorder for node `pid` of `p`.
    pub fn new(enabled: bool, pid: usize, p: usize, name: String, marked_speed: f64) -> Self {
        Self {
            enabled,
            flows: enabled && records_flows(p),
            node: NodeTrace {
                pid,
                name,
                marked_speed,
                supersteps: Vec::new(),
            },
            current: SuperstepTrace::default(),
            flow_slot: HashMap::new(),
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether each destination's flow is recorded, not only the totals.
    pub fn records_flows(&self) -> bool {
        self.flows
    }

    /// Marks the start of the first superstep.
    pub fn begin(&mut self, now_s: f64) {
        self.current.start_s = now_s;
    }

    pub fn sent(&mut self, to: usize, bytes: usize) {
        self.current.bytes_out += bytes as u64;
        self.current.messages_out += 1;
        // The flow to itself is kept in a summarised trace too: it tells the totals' network
        // traffic from the node's messages to itself.
        if self.flows || (self.enabled && to == self.node.pid) {
            self.flow_to(to, bytes as u64);
        }
    }

    /// Adds one message to the flow towards `to`; an index by destination keeps all-to-all
    /// patterns linear in the number of sends.
    fn flow_to(&mut self, to: usize, bytes: u64) {
        let flows = &mut self.current.flows;
        let slot = *self.flow_slot.entry(to).or_insert_with(|| {
            flows.push(Flow {
                to,
                ..Flow::default()
            });
            flows.len() - 1
        });
        flows[slot].bytes += bytes;
        flows[slot].messages += 1;
    }

    /// Adds a superstep's totals at once (no flows: only when flows are not recorded).
    pub(crate) fn count(&mut self, load: &crate::backend::transport::Load) {
        self.current.bytes_out += load.bytes_out;
        self.current.messages_out += load.messages_out;
        self.current.bytes_in += load.bytes_in;
        self.current.messages_in += load.messages_in;
    }

    pub fn received(&mut self, bytes: usize) {
        self.current.bytes_in += bytes as u64;
        self.current.messages_in += 1;
    }

    pub fn work(&mut self, ops: f64) {
        self.current.work_ops += ops;
    }

    pub fn phase(&mut self, name: &str, start_s: f64, duration_s: f64) {
        if self.enabled {
            self.current.phases.push(PhaseTrace {
                name: name.to_owned(),
                start_s,
                duration_s,
            });
        }
    }

    /// Closes the superstep that entered `sync` at `entered_s` and left at `left_s`.
    pub fn close(&mut self, entered_s: f64, left_s: f64) {
        self.flow_slot.clear();
        let index = self.current.index;
        let start_s = self.current.start_s;
        let mut step = std::mem::replace(
            &mut self.current,
            SuperstepTrace {
                index: index + 1,
                start_s: left_s,
                ..SuperstepTrace::default()
            },
        );
        if self.enabled {
            step.compute_s = entered_s - start_s;
            step.wait_s = left_s - entered_s;
            self.node.supersteps.push(step);
        }
    }

    pub fn finish(self) -> NodeTrace {
        self.node
    }
}
