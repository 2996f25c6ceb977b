//! A trace laid out in time: what each node was doing when (computing, communicating or
//! waiting) and which messages went where. The spacetime diagram, the task summary and the
//! Perfetto export all read this one layout, so they agree.
//!
//! The trace records, per node and superstep, the time computing (`compute_s`) and the time
//! inside `sync` (`wait_s`). A BSP superstep's exchange starts when the last node enters
//! `sync`; until then a node that arrived earlier is waiting. From that moment the node
//! communicates for its HBSP^1 cost `g r_j h_j + o m_j` (with a [`NetworkModel`]) or, without
//! one, for the rest of its `sync` if it sent or received anything; what remains is waiting
//! for the barrier.

use hbsp::Machine;
use hbsp::trace::{NodeTrace, PhaseTrace, SuperstepTrace, Trace};

use crate::error::{ReportError, Result};

/// The HBSP^1 parameters that price a node's communication.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkModel {
    /// `g`: seconds per byte injected by the fastest node.
    pub g_s_per_byte: f64,
    /// `o`: seconds of overhead per message.
    pub o_s: f64,
    /// `r_j` of each node, by pid.
    pub r: Vec<f64>,
}

impl NetworkModel {
    /// The network of the machine a trace was recorded on.
    pub fn from_machine(machine: &Machine) -> Self {
        Self {
            g_s_per_byte: machine.network().g_s_per_byte,
            o_s: machine.network().o_s,
            r: machine.nodes().iter().map(|n| n.r).collect(),
        }
    }
}

/// How to read a trace: its machine's network, speed unit and clock.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceOptions {
    /// Prices communication; `None` counts a node's whole exchange as communication.
    pub network: Option<NetworkModel>,
    /// Unit of the nodes' marked speeds, e.g. `Mflop/s`.
    pub speed_unit: String,
    /// Whether times are virtual (the `sim` backend) rather than measured.
    pub virtual_time: bool,
}

impl Default for TraceOptions {
    fn default() -> Self {
        Self {
            network: None,
            speed_unit: "Mflop/s".into(),
            virtual_time: false,
        }
    }
}

impl TraceOptions {
    /// Options for a trace recorded on `machine`.
    pub fn for_machine(machine: &Machine, virtual_time: bool) -> Self {
        Self {
            network: Some(NetworkModel::from_machine(machine)),
            speed_unit: machine.speed_unit().to_owned(),
            virtual_time,
        }
    }

    /// `virtual time` or `time`, for axis labels.
    pub fn time_label(&self) -> &'static str {
        if self.virtual_time {
            "virtual time"
        } else {
            "time"
        }
    }
}

/// What a node is doing during a slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Activity {
    /// Computing (and queueing sends).
    Compute,
    /// Sending and receiving in the superstep's exchange.
    Communication,
    /// Idle in `sync` until the last node enters it (waiting for slower nodes).
    Wait,
    /// In `sync` after the exchange, until the barrier releases every node: the barrier's own
    /// latency, not waiting for anyone.
    Barrier,
}

/// Achieved speed of a superstep, `work_ops / compute_s`, in `speed_unit` (a flop rate such
/// as `Mflop/s`; another unit reads as Mflop/s). `None` if the step declared no work or took
/// no time.
pub fn achieved_speed(step: &SuperstepTrace, speed_unit: &str) -> Option<f64> {
    (step.work_ops > 0.0 && step.compute_s > 0.0)
        .then(|| step.work_ops / step.compute_s / ops_per_unit(speed_unit))
}

/// The unit achieved speeds are shown in: `speed_unit` if it is a flop rate, else Mflop/s.
pub fn achieved_speed_unit(speed_unit: &str) -> &str {
    if hetscale_kernels::flops_per_unit(speed_unit).is_some() {
        speed_unit
    } else {
        "Mflop/s"
    }
}

fn ops_per_unit(speed_unit: &str) -> f64 {
    hetscale_kernels::flops_per_unit(speed_unit).unwrap_or(1e6)
}

impl Activity {
    /// All activities, in drawing order.
    pub const ALL: [Activity; 4] = [
        Activity::Compute,
        Activity::Communication,
        Activity::Wait,
        Activity::Barrier,
    ];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Activity::Compute => "compute",
            Activity::Communication => "communication",
            Activity::Wait => "wait",
            Activity::Barrier => "barrier",
        }
    }
}

/// One stretch of one activity on one node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slice {
    /// What the node was doing.
    pub activity: Activity,
    /// Superstep number.
    pub superstep: u64,
    /// Start, s since the run began.
    pub start_s: f64,
    /// Length, s.
    pub duration_s: f64,
}

impl Slice {
    /// End, s.
    pub fn end_s(&self) -> f64 {
        self.start_s + self.duration_s
    }
}

/// One node's slices in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeTimeline {
    /// pid.
    pub pid: usize,
    /// Name on the platform.
    pub name: String,
    /// Marked speed `C_j`.
    pub marked_speed: f64,
    /// Slices, in time order, none overlapping.
    pub slices: Vec<Slice>,
    /// User-named phases, in order of their end.
    pub phases: Vec<PhaseTrace>,
}

/// The traffic from one node to another in one superstep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Message {
    /// Sending pid.
    pub from: usize,
    /// Receiving pid.
    pub to: usize,
    /// Superstep number.
    pub superstep: u64,
    /// Payload bytes.
    pub bytes: u64,
    /// Number of messages.
    pub messages: u64,
    /// When the sender's communication began, s.
    pub sent_s: f64,
    /// When the receiver's communication ended (the data is there), s.
    pub received_s: f64,
}

/// Time per activity of one node, s.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ActivityTotals {
    /// Computing.
    pub compute_s: f64,
    /// Communicating.
    pub communication_s: f64,
    /// Waiting for slower nodes.
    pub wait_s: f64,
    /// In the barrier after the exchange.
    pub barrier_s: f64,
}

impl ActivityTotals {
    /// All four.
    pub fn total_s(&self) -> f64 {
        self.compute_s + self.communication_s + self.wait_s + self.barrier_s
    }

    /// The time spent in `activity`.
    pub fn of(&self, activity: Activity) -> f64 {
        match activity {
            Activity::Compute => self.compute_s,
            Activity::Communication => self.communication_s,
            Activity::Wait => self.wait_s,
            Activity::Barrier => self.barrier_s,
        }
    }
}

/// A whole run laid out in time.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// One per node, by pid.
    pub nodes: Vec<NodeTimeline>,
    /// Traffic between distinct nodes (self-sends cross no network and are left out).
    pub messages: Vec<Message>,
    /// Number of supersteps.
    pub supersteps: usize,
    /// When the last node finished, s.
    pub end_s: f64,
}

/// Where one node's superstep falls in time.
#[derive(Debug, Clone, Copy)]
struct StepLayout {
    start: f64,
    enter: f64,
    exchange: f64,
    communication: Option<f64>,
    exit: f64,
}

impl Timeline {
    /// Lays out `trace`. Fails on a trace without nodes or supersteps, with a time that is
    /// not finite or negative, or whose network model has the wrong number of nodes.
    pub fn from_trace(trace: &Trace, network: Option<&NetworkModel>) -> Result<Self> {
        check_trace(trace, network)?;
        let layouts = layout(trace, network);
        let nodes = trace
            .nodes
            .iter()
            .zip(&layouts)
            .map(|(node, steps)| node_timeline(node, steps))
            .collect();
        let messages = messages(trace, &layouts);
        let end_s = layouts.iter().flatten().map(|s| s.exit).fold(0.0, f64::max);
        Ok(Self {
            nodes,
            messages,
            supersteps: trace.supersteps(),
            end_s,
        })
    }

    /// Time per activity of each node, by pid.
    pub fn totals(&self) -> Vec<ActivityTotals> {
        self.nodes
            .iter()
            .map(|node| {
                let mut t = ActivityTotals::default();
                for s in &node.slices {
                    match s.activity {
                        Activity::Compute => t.compute_s += s.duration_s,
                        Activity::Communication => t.communication_s += s.duration_s,
                        Activity::Wait => t.wait_s += s.duration_s,
                        Activity::Barrier => t.barrier_s += s.duration_s,
                    }
                }
                t
            })
            .collect()
    }
}

fn check_trace(trace: &Trace, network: Option<&NetworkModel>) -> Result<()> {
    if trace.nodes.is_empty() || trace.supersteps() == 0 {
        return Err(ReportError::NoData {
            what: "the trace".into(),
            hint: "run with tracing on (the default) and at least one node",
        });
    }
    if let Some(net) = network {
        if net.r.len() != trace.nodes.len() {
            return Err(ReportError::BadValue(format!(
                "the network model has r_j for {} nodes but the trace has {}: build it from the machine the trace was recorded on",
                net.r.len(),
                trace.nodes.len()
            )));
        }
    }
    for node in &trace.nodes {
        for step in &node.supersteps {
            let times = [step.start_s, step.compute_s, step.wait_s];
            if times.iter().any(|t| !t.is_finite() || *t < 0.0) {
                return Err(ReportError::BadValue(format!(
                    "trace of node {} ({}), superstep {}: times must be finite and >= 0, got start {} s, compute {} s, wait {} s; the trace file is damaged",
                    node.pid, node.name, step.index, step.start_s, step.compute_s, step.wait_s
                )));
            }
        }
    }
    Ok(())
}

/// Bytes and messages a node exchanged with other nodes in a superstep, as
/// `(bytes out, bytes in, messages out, messages in)`.
fn network_traffic(pid: usize, step: &SuperstepTrace) -> (u64, u64, u64, u64) {
    let own = step.flows.iter().find(|f| f.to == pid);
    let (own_bytes, own_messages) = own.map_or((0, 0), |f| (f.bytes, f.messages));
    (
        step.bytes_out.saturating_sub(own_bytes),
        step.bytes_in.saturating_sub(own_bytes),
        step.messages_out.saturating_sub(own_messages),
        step.messages_in.saturating_sub(own_messages),
    )
}

fn layout(trace: &Trace, network: Option<&NetworkModel>) -> Vec<Vec<StepLayout>> {
    let exchange_starts: Vec<f64> = (0..trace.supersteps())
        .map(|k| {
            trace
                .nodes
                .iter()
                .filter_map(|n| n.supersteps.get(k))
                .map(|s| s.start_s + s.compute_s)
                .fold(0.0, f64::max)
        })
        .collect();
    trace
        .nodes
        .iter()
        .map(|node| {
            node.supersteps
                .iter()
                .zip(&exchange_starts)
                .map(|(step, &exchange)| step_layout(node.pid, step, exchange, network))
                .collect()
        })
        .collect()
}

fn step_layout(
    pid: usize,
    step: &SuperstepTrace,
    exchange: f64,
    network: Option<&NetworkModel>,
) -> StepLayout {
    let enter = step.start_s + step.compute_s;
    let exit = enter + step.wait_s;
    let exchange = exchange.clamp(enter, exit);
    let (bytes_out, bytes_in, messages_out, messages_in) = network_traffic(pid, step);
    let communication = (messages_out + messages_in > 0).then(|| {
        let available = exit - exchange;
        match network {
            Some(net) => {
                let h = bytes_out.max(bytes_in) as f64;
                let m = messages_out.max(messages_in) as f64;
                (net.g_s_per_byte * net.r[pid] * h + net.o_s * m).min(available)
            }
            None => available,
        }
    });
    StepLayout {
        start: step.start_s,
        enter,
        exchange,
        communication,
        exit,
    }
}

fn node_timeline(node: &NodeTrace, steps: &[StepLayout]) -> NodeTimeline {
    let mut slices = Vec::new();
    for (step, at) in node.supersteps.iter().zip(steps) {
        let k = step.index;
        push_slice(&mut slices, Activity::Compute, k, at.start, at.enter, false);
        push_slice(&mut slices, Activity::Wait, k, at.enter, at.exchange, false);
        let after = match at.communication {
            Some(d) => {
                // Kept even when zero-length: message arrows and flow events bind to it.
                push_slice(
                    &mut slices,
                    Activity::Communication,
                    k,
                    at.exchange,
                    at.exchange + d,
                    true,
                );
                at.exchange + d
            }
            None => at.exchange,
        };
        push_slice(&mut slices, Activity::Barrier, k, after, at.exit, false);
    }
    NodeTimeline {
        pid: node.pid,
        name: node.name.clone(),
        marked_speed: node.marked_speed,
        slices,
        phases: node
            .supersteps
            .iter()
            .flat_map(|s| s.phases.iter().cloned())
            .collect(),
    }
}

/// Appends a slice, merging it into the previous one if that is the same activity of the same
/// superstep and ends where this one starts.
fn push_slice(
    slices: &mut Vec<Slice>,
    activity: Activity,
    superstep: u64,
    start: f64,
    end: f64,
    keep_empty: bool,
) {
    let duration = end - start;
    if duration <= 0.0 && !keep_empty {
        return;
    }
    if let Some(last) = slices.last_mut() {
        if last.activity == activity && last.superstep == superstep && last.end_s() == start {
            last.duration_s += duration;
            return;
        }
    }
    slices.push(Slice {
        activity,
        superstep,
        start_s: start,
        duration_s: duration.max(0.0),
    });
}

fn messages(trace: &Trace, layouts: &[Vec<StepLayout>]) -> Vec<Message> {
    let mut out = Vec::new();
    for (node, steps) in trace.nodes.iter().zip(layouts) {
        for (k, step) in node.supersteps.iter().enumerate() {
            for flow in step.flows.iter().filter(|f| f.to != node.pid) {
                let receiver = layouts.get(flow.to).and_then(|s| s.get(k));
                if let Some(receiver) = receiver {
                    out.push(Message {
                        from: node.pid,
                        to: flow.to,
                        superstep: step.index,
                        bytes: flow.bytes,
                        messages: flow.messages,
                        sent_s: steps[k].exchange,
                        received_s: receiver.exchange + receiver.communication.unwrap_or(0.0),
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hbsp::trace::Flow;

    /// Two nodes, one superstep: node 0 computes 2 s and sends 100 bytes to node 1, which
    /// computes 1 s; the sync ends at 3 s.
    fn two_nodes() -> Trace {
        let step = |compute_s: f64, wait_s: f64| SuperstepTrace {
            compute_s,
            wait_s,
            ..SuperstepTrace::default()
        };
        let mut sender = step(2.0, 1.0);
        sender.bytes_out = 100;
        sender.messages_out = 1;
        sender.flows = vec![Flow {
            to: 1,
            bytes: 100,
            messages: 1,
        }];
        let mut receiver = step(1.0, 2.0);
        receiver.bytes_in = 100;
        receiver.messages_in = 1;
        let node = |pid: usize, s: SuperstepTrace| NodeTrace {
            pid,
            name: format!("n{pid}"),
            marked_speed: 1.0,
            supersteps: vec![s],
        };
        Trace {
            platform: "test".into(),
            p: 2,
            nodes: vec![node(0, sender), node(1, receiver)],
        }
    }

    #[test]
    fn exchange_starts_when_the_last_node_enters_sync() {
        let t = Timeline::from_trace(&two_nodes(), None).unwrap();
        let kinds: Vec<_> = t.nodes[1]
            .slices
            .iter()
            .map(|s| (s.activity, s.start_s, s.duration_s))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (Activity::Compute, 0.0, 1.0),
                (Activity::Wait, 1.0, 1.0),
                (Activity::Communication, 2.0, 1.0)
            ]
        );
        assert_eq!(t.messages.len(), 1);
        assert_eq!((t.messages[0].sent_s, t.messages[0].received_s), (2.0, 3.0));
        assert_eq!(t.end_s, 3.0);
    }

    #[test]
    fn a_network_model_prices_communication() {
        let net = NetworkModel {
            g_s_per_byte: 0.001,
            o_s: 0.0,
            r: vec![1.0, 2.0],
        };
        let t = Timeline::from_trace(&two_nodes(), Some(&net)).unwrap();
        let totals = t.totals();
        assert!((totals[1].communication_s - 0.2).abs() < 1e-12);
        // 1 s for the slower node 0 to enter sync; after the exchange, the barrier.
        assert!((totals[1].wait_s - 1.0).abs() < 1e-12);
        assert!((totals[1].barrier_s - 0.8).abs() < 1e-12);
        assert!((totals[1].total_s() - 3.0).abs() < 1e-12);
        let last = t.nodes[1].slices.last().unwrap();
        assert_eq!((last.activity, last.start_s), (Activity::Barrier, 2.2));
    }

    #[test]
    fn bad_traces_are_refused() {
        let err = Timeline::from_trace(&Trace::default(), None).unwrap_err();
        assert!(err.to_string().contains("the trace has no data"));
        let mut t = two_nodes();
        t.nodes[0].supersteps[0].wait_s = f64::NAN;
        assert!(Timeline::from_trace(&t, None).is_err());
        let net = NetworkModel {
            g_s_per_byte: 1.0,
            o_s: 0.0,
            r: vec![1.0],
        };
        assert!(Timeline::from_trace(&two_nodes(), Some(&net)).is_err());
    }
}
