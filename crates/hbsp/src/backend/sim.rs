//! The `sim` backend: the program runs for real (its nodes as coroutines on one thread, see
//! [`super::coroutines`], or one thread each: [`SimEngine`]), but time is virtual, charged
//! by the HBSP^1 cost model of the platform.
//!
//! Each superstep costs `max_j w_j + g max_j (r_j h_j) + o max_j m_j + L(p)`, where `w_j` is
//! node `j`'s compute time (see [`WorkCharge`]: declared work `ops / C_j`, or its thread CPU
//! time scaled by `host_speed / C_j`), `h_j` the larger of the bytes it sent and received,
//! `m_j` the larger of its message counts, `o` the per-message overhead and `L(p)` the
//! barrier, plus the platform's measured stall of a superstep that moves messages (0 unless
//! `probe --p2p` measured one). Messages a node sends to itself cross no network and are not
//! counted. The end of the program costs the last superstep's work and traffic but no
//! barrier. With all work declared, a run's virtual time depends only on the program, its
//! inputs and the platform.
//!
//! A platform with a machine model ([`hetscale_machine::machine_model`]) is charged by that model
//! instead: achieved rates per kernel and node kind, measured collectives, link rate and
//! latency (or the point-to-point cost piecewise-linear in message size that `probe --p2p`
//! measures), switch contention, start-up costs and jitter.

use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use hetscale_model::hbsp::MessageStall;
use serde::{Deserialize, Serialize};

use super::transport::Call;
use crate::error::{HbspError, Result};
use hetscale_machine::compute_stall::{ComputeStallPoint, compute_stall_points, stall_at};
use hetscale_machine::duplex::{DuplexPoint, duplex_points, port_time};
use hetscale_machine::machine_model::{
    Barrier, ComputeRate, MachineModel, P2pSegment, p2p_parts, p2p_segments, p2p_time,
};
use hetscale_machine::platform::Machine;

/// How a node's compute time `w_j` in a superstep is found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WorkCharge {
    /// Declared work (`Ctx::compute`, `Ctx::charge_work`) if the node declared any in this
    /// superstep, else its thread CPU time scaled by `host_speed / C_j` (SPEC section 4).
    #[default]
    Auto,
    /// Declared work only: runs are deterministic, bit for bit. For programs that declare all
    /// their work, such as hetscale's kernels.
    Declared,
    /// Thread CPU time only, scaled by `host_speed / C_j`; declarations are ignored.
    CpuTime,
}

/// Options of the sim backend.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimOptions {
    /// How compute time is charged.
    pub work: WorkCharge,
    /// Skip the closures of [`crate::Ctx::compute`] and charge only their declared work
    /// (skeleton execution, as SMPI's computation sampling), so sizes beyond this host can be
    /// simulated. Results of such runs are unverified.
    pub skip_compute: bool,
    /// Speed of this host in the platform's unit, used to scale the CPU time of undeclared
    /// compute; `None` takes the fastest node of the machine.
    pub host_speed: Option<f64>,
    /// Record a per-superstep [`crate::Trace`] (off saves memory at thousands of nodes).
    pub no_trace: bool,
    /// How the nodes execute: coroutines on one thread (the default) or one thread each.
    pub engine: SimEngine,
    /// OS threads (lanes) the coroutine engine spreads its nodes over, contiguous pid ranges
    /// that meet at every superstep's end; `None`: one. Results, times, traces and the error
    /// of a failed run are the same bit for bit whatever the count.
    pub lanes: Option<usize>,
}

/// How the nodes of a sim run execute. Both give the same virtual times, results and traces
/// when work is declared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SimEngine {
    /// Every node is a coroutine with its own stack, run in turn on one OS thread (see
    /// [`super::coroutines`]): tens of thousands of nodes, fast supersteps.
    #[default]
    Coroutines,
    /// One OS thread per node, as the threads backend: the baseline the coroutines replace.
    Threads,
}

impl std::str::FromStr for SimEngine {
    type Err = HbspError;

    fn from_str(name: &str) -> Result<Self> {
        match name {
            "coroutines" => Ok(Self::Coroutines),
            "threads" => Ok(Self::Threads),
            _ => Err(HbspError::InvalidBackend(format!(
                "unknown sim engine \"{name}\": use coroutines or threads"
            ))),
        }
    }
}

/// The cost of one simulated superstep.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SuperstepCost {
    /// Superstep number, from 0.
    pub index: u64,
    /// `max_j w_j`, s.
    pub compute_s: f64,
    /// `g max_j (r_j h_j)`, s.
    pub communication_s: f64,
    /// `o max_j m_j`, s.
    pub overhead_s: f64,
    /// `L(p)`, s (0 for the end of the program and for a measured collective).
    pub barrier_s: f64,
    /// Fixed costs of the machine model: its `superstep_s`, and at the end of the program
    /// the kernel's `run_overhead_s`, s.
    #[serde(default)]
    pub fixed_s: f64,
    /// `max_j r_j h_j`, bytes.
    pub h_bytes: f64,
    /// `max_j m_j`, messages.
    pub messages: u64,
}

impl SuperstepCost {
    /// Total virtual time of the superstep, s.
    pub fn total_s(&self) -> f64 {
        self.compute_s + self.communication_s + self.overhead_s + self.barrier_s + self.fixed_s
    }
}

/// What nodes deposit during one superstep, double-buffered by superstep parity like the
/// mailboxes: written before the barrier that ends superstep `s`, read and reset by its
/// last arriver. By node: a node's deposit writes one place, not five arrays.
struct Tally(Vec<NodeTally>);

#[derive(Default)]
struct NodeTally {
    work_s: AtomicU64,
    bytes_out: AtomicU64,
    bytes_in: AtomicU64,
    messages_out: AtomicU64,
    messages_in: AtomicU64,
    /// With `[[machine.p2p]]`: the cost of the transfers this node sent and received, in
    /// picoseconds (integers, so that the sum is the same whatever order nodes deposit in):
    /// the largest start-up of each side (the transfers of a superstep are in flight
    /// together, so their start-ups overlap) and the sum of their bytes' costs (which queue
    /// on the node's link).
    p2p_out: PortTally,
    p2p_in: PortTally,
}

/// One side of a node's port in a superstep: see [`NodeTally`].
struct PortTally {
    /// The largest start-up, ps; `i64::MIN`: no transfer (a start-up may be negative).
    latency_ps: AtomicI64,
    bytes_ps: AtomicU64,
}

impl Default for PortTally {
    fn default() -> Self {
        Self {
            latency_ps: AtomicI64::new(i64::MIN),
            bytes_ps: AtomicU64::new(0),
        }
    }
}

impl PortTally {
    fn add(&self, (latency_s, bytes_s): (f64, f64)) {
        self.latency_ps
            .fetch_max((latency_s * 1e12).round() as i64, Ordering::Relaxed);
        self.bytes_ps
            .fetch_add(picoseconds(bytes_s), Ordering::Relaxed);
    }

    /// Seconds this side took and its bytes' cost alone (for [`port_time`]), and resets it for
    /// the next superstep of its parity.
    fn take(&self) -> (f64, f64) {
        let latency = self.latency_ps.swap(i64::MIN, Ordering::Relaxed);
        let bytes = self.bytes_ps.swap(0, Ordering::Relaxed);
        if latency == i64::MIN {
            return (0.0, 0.0);
        }
        let total = ((latency as f64 + bytes as f64) * 1e-12).max(0.0);
        (total, bytes as f64 * 1e-12)
    }
}

/// Seconds as whole picoseconds, for [`NodeTally`]'s order-independent sums.
fn picoseconds(s: f64) -> u64 {
    (s * 1e12).round() as u64
}

impl Tally {
    fn new(p: usize) -> Self {
        Self((0..p).map(|_| NodeTally::default()).collect())
    }
}

/// The virtual clock shared by the nodes of a sim run.
pub(crate) struct VirtualClock {
    /// `C_j` in operations per second.
    ops_per_s: Vec<f64>,
    /// Host speed over `C_j`: seconds of node time per second of host CPU time.
    cpu_scale: Vec<f64>,
    r: Vec<f64>,
    g: f64,
    o: f64,
    l: f64,
    /// What a superstep that moves messages costs beyond `l` (a measured stall).
    message_stall: MessageStall,
    /// The machine model, with the compute rate and jitter factor of each node.
    model: Option<ModelCharges>,
    /// Each node's `[[machine.p2p]]` segments (empty: the model has none).
    p2p: Vec<Vec<P2pSegment>>,
    /// The `[[machine.duplex]]` points at this machine's size (empty: full duplex).
    duplex: Vec<DuplexPoint>,
    /// The `[[machine.compute_stall]]` points at this machine's size (empty: none).
    compute_stall: Vec<ComputeStallPoint>,
    work: WorkCharge,
    tally: [Tally; 2],
    /// Virtual time at which the current superstep began, as `f64` bits.
    now_bits: AtomicU64,
    costs: Mutex<Vec<SuperstepCost>>,
}

impl VirtualClock {
    pub fn new(machine: &Machine, options: &SimOptions) -> Result<Self> {
        let scale = hetscale_machine::units::ops_scale(machine.speed_unit());
        let speeds: Vec<f64> = machine.nodes().iter().map(|n| n.marked_speed).collect();
        let host = match options.host_speed {
            Some(s) if s.is_finite() && s > 0.0 => s,
            Some(s) => {
                return Err(HbspError::InvalidBackend(format!(
                    "host_speed must be > 0, got {s}"
                )));
            }
            None => speeds.iter().copied().fold(0.0, f64::max),
        };
        let network = machine.network();
        Ok(Self {
            ops_per_s: speeds
                .iter()
                .map(|s| s * scale.unwrap_or(f64::NAN))
                .collect(),
            cpu_scale: speeds.iter().map(|s| host / s).collect(),
            r: machine.nodes().iter().map(|n| n.r).collect(),
            g: network.g_s_per_byte,
            o: network.o_s,
            l: machine.l_s(),
            message_stall: machine.message_stall(),
            model: machine.model().map(|m| ModelCharges::new(m, machine)),
            p2p: machine
                .model()
                .filter(|m| !m.p2p.is_empty())
                .map(|m| {
                    machine
                        .nodes()
                        .iter()
                        .map(|n| p2p_segments(&m.p2p, Some(&n.name), machine.p()))
                        .collect()
                })
                .unwrap_or_default(),
            duplex: machine
                .model()
                .map(|m| duplex_points(&m.duplex, machine.p()))
                .unwrap_or_default(),
            compute_stall: machine
                .model()
                .map(|m| compute_stall_points(&m.compute_stall, machine.p()))
                .unwrap_or_default(),
            work: options.work,
            tally: [Tally::new(machine.p()), Tally::new(machine.p())],
            now_bits: AtomicU64::new(0f64.to_bits()),
            costs: Mutex::new(Vec::new()),
        })
    }

    /// Virtual time at which the current superstep began.
    pub fn superstep_start(&self) -> f64 {
        f64::from_bits(self.now_bits.load(Ordering::Acquire))
    }

    /// How compute time is charged.
    pub fn work_charge(&self) -> WorkCharge {
        self.work
    }

    /// Seconds node `pid` needs for `ops` operations; an error if the platform's speeds are
    /// not operation rates, unless `ops` is 0: declaring no work (as the probe does, so that
    /// CPU time is not charged) needs no rate.
    pub fn work_time(&self, pid: usize, ops: f64) -> Result<f64> {
        let rate = self.ops_per_s[pid];
        if ops == 0.0 {
            return Ok(0.0);
        }
        if rate.is_nan() {
            return Err(HbspError::InvalidBackend(
                "sim cannot charge declared work on this platform: its speed_unit is not a rate of operations (use flop/s, kflop/s, Mflop/s or Gflop/s)".into(),
            ));
        }
        Ok(match &self.model {
            Some(m) => m.rates[pid].block_time(ops, rate) * m.jitter[pid],
            None => ops / rate,
        })
    }

    /// Node time for `cpu_s` seconds of host CPU time on node `pid`.
    pub fn cpu_time(&self, pid: usize, cpu_s: f64) -> f64 {
        let slowdown = self
            .model
            .as_ref()
            .map_or(1.0, |m| m.jitter[pid] / m.rates[pid].rate_fraction);
        cpu_s * self.cpu_scale[pid] * slowdown
    }

    /// Records node `pid`'s compute time and the messages it sent this superstep
    /// (`(destination, messages, bytes)`, self-sends excluded by the caller).
    pub fn deposit(
        &self,
        parity: usize,
        pid: usize,
        work_s: f64,
        sent: impl Iterator<Item = (usize, u64, u64)>,
    ) {
        let t = &self.tally[parity].0;
        let (mut messages_out, mut bytes_out) = (0, 0);
        for (to, messages, bytes) in sent {
            messages_out += messages;
            bytes_out += bytes;
            t[to].bytes_in.fetch_add(bytes, Ordering::Relaxed);
            t[to].messages_in.fetch_add(messages, Ordering::Relaxed);
            if !self.p2p.is_empty() {
                // A superstep's messages to one node travel as one transfer (the MPI
                // backend packs them into one buffer per destination).
                // The slower end's segments.
                let slower = if p2p_time(&self.p2p[to], bytes) > p2p_time(&self.p2p[pid], bytes) {
                    to
                } else {
                    pid
                };
                let parts = p2p_parts(&self.p2p[slower], bytes);
                t[pid].p2p_out.add(parts);
                t[to].p2p_in.add(parts);
            }
        }
        let node = &t[pid];
        node.work_s.store(work_s.to_bits(), Ordering::Relaxed);
        node.bytes_out.fetch_add(bytes_out, Ordering::Relaxed);
        node.messages_out.fetch_add(messages_out, Ordering::Relaxed);
    }

    /// Records every node's `loads` in the supersteps of this parity: a collective that
    /// moved its data natively, as its messages would have been recorded.
    pub fn deposit_loads(&self, parity: usize, loads: &[super::transport::Load]) {
        for (pid, (node, load)) in self.tally[parity].0.iter().zip(loads).enumerate() {
            node.bytes_out.fetch_add(load.bytes_out, Ordering::Relaxed);
            node.messages_out
                .fetch_add(load.messages_out, Ordering::Relaxed);
            node.bytes_in.fetch_add(load.bytes_in, Ordering::Relaxed);
            node.messages_in
                .fetch_add(load.messages_in, Ordering::Relaxed);
            if !self.p2p.is_empty() {
                // Transfers of the mean size: the loads keep no sizes.
                let transfers = |messages: u64, bytes: u64| {
                    let each = bytes.checked_div(messages).unwrap_or(0);
                    let (latency, each_s) = p2p_parts(&self.p2p[pid], each);
                    (latency, messages as f64 * each_s)
                };
                if load.messages_out > 0 {
                    node.p2p_out
                        .add(transfers(load.messages_out, load.bytes_out));
                }
                if load.messages_in > 0 {
                    node.p2p_in.add(transfers(load.messages_in, load.bytes_in));
                }
            }
        }
    }

    /// Run by the last node to reach the barrier ending superstep `index` (ended by `call`):
    /// charges the superstep and resets this parity's tally.
    pub fn close_superstep(&self, parity: usize, index: u64, call: &Call) {
        let traffic = self.take_traffic(parity);
        let cost = match &self.model {
            Some(model) => model.charge(index, call, &traffic, self),
            None => self.hbsp_charge(index, *call != Call::End, &traffic),
        };
        let next = self.superstep_start() + cost.total_s();
        self.now_bits.store(next.to_bits(), Ordering::Release);
        self.costs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(cost);
    }

    fn take_traffic(&self, parity: usize) -> Vec<NodeTraffic> {
        let take = |v: &AtomicU64| v.swap(0, Ordering::Relaxed);
        self.tally[parity]
            .0
            .iter()
            .map(|node| {
                let (bytes_out, bytes_in) = (take(&node.bytes_out), take(&node.bytes_in));
                let (out, into) = (node.p2p_out.take(), node.p2p_in.take());
                NodeTraffic {
                    work_s: f64::from_bits(take(&node.work_s)),
                    bytes_out,
                    bytes_in,
                    messages_out: take(&node.messages_out),
                    messages_in: take(&node.messages_in),
                    p2p_s: port_time(out, into, bytes_out.min(bytes_in), &self.duplex),
                }
            })
            .collect()
    }

    /// The measured stall for the nodes that send or receive a message in the superstep.
    fn stall_of(&self, traffic: &[NodeTraffic]) -> f64 {
        let active = traffic.iter().filter(|n| n.m() > 0).count();
        self.message_stall.at(active, traffic.len())
    }

    /// `max_j w_j + g max_j (r_j h_j) + o max_j m_j + L(p)`.
    fn hbsp_charge(
        &self,
        index: u64,
        with_barrier: bool,
        traffic: &[NodeTraffic],
    ) -> SuperstepCost {
        let mut cost = SuperstepCost {
            index,
            barrier_s: if with_barrier {
                self.l + self.stall_of(traffic)
            } else {
                0.0
            },
            ..Default::default()
        };
        for (node, r) in traffic.iter().zip(&self.r) {
            cost.compute_s = cost.compute_s.max(node.work_s);
            cost.h_bytes = cost.h_bytes.max(r * node.h() as f64);
            cost.messages = cost.messages.max(node.m());
        }
        cost.communication_s = self.g * cost.h_bytes;
        cost.overhead_s = self.o * cost.messages as f64;
        cost
    }

    /// The per-superstep costs charged so far, in order.
    pub fn costs(&self) -> Vec<SuperstepCost> {
        self.costs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// What one node did in a superstep.
struct NodeTraffic {
    work_s: f64,
    bytes_out: u64,
    bytes_in: u64,
    messages_out: u64,
    messages_in: u64,
    /// With `[[machine.p2p]]`: the larger of its two sides, each the largest start-up of its
    /// transfers plus their bytes' costs (see [`NodeTally`]).
    p2p_s: f64,
}

impl NodeTraffic {
    fn h(&self) -> u64 {
        self.bytes_out.max(self.bytes_in)
    }

    fn m(&self) -> u64 {
        self.messages_out.max(self.messages_in)
    }
}

/// A machine model resolved for one machine and workload.
struct ModelCharges {
    model: MachineModel,
    rates: Vec<ComputeRate>,
    jitter: Vec<f64>,
    run_overhead_s: f64,
    /// Factor on measured collectives and the barrier (the largest of the nodes' rates).
    collective_scale: f64,
    /// The `p` of measured collectives' costs: [`Machine::processes`].
    processes: usize,
}

impl ModelCharges {
    fn new(model: &MachineModel, machine: &Machine) -> Self {
        let rates: Vec<ComputeRate> = machine
            .nodes()
            .iter()
            .map(|n| model.rate(machine.workload(), n.kind.as_deref()))
            .collect();
        let collective_scale = rates.iter().map(|r| r.collective_scale).fold(0.0, f64::max);
        Self {
            jitter: (0..machine.p()).map(|j| model.jitter_factor(j)).collect(),
            model: model.clone(),
            rates,
            run_overhead_s: machine.start_up_s(),
            collective_scale,
            processes: machine.processes(),
        }
    }

    /// The superstep's cost on the machine model (see [`hetscale_machine::machine_model`]).
    fn charge(
        &self,
        index: u64,
        call: &Call,
        traffic: &[NodeTraffic],
        clock: &VirtualClock,
    ) -> SuperstepCost {
        let m = &self.model;
        let p = traffic.len();
        let mut cost = SuperstepCost {
            index,
            ..Default::default()
        };
        for node in traffic {
            cost.compute_s = cost.compute_s.max(node.work_s);
            cost.messages = cost.messages.max(node.m());
        }
        let (measured, phase) = match call {
            Call::Collective { name, phase, .. } => (m.collective(name), *phase),
            _ => (None, 0),
        };
        let derived = match call {
            Call::Collective { name, phase, .. } if measured.is_none() => {
                let busiest = traffic.iter().max_by_key(|n| n.h());
                busiest.and_then(|n| {
                    m.derived_collective(name, *phase, p, n.h() as f64, n.m())
                        .map(|s| (s, n.h() as f64))
                })
            }
            _ => None,
        };
        if measured.is_some() && phase > 0 {
            // The measured cost of the whole collective was charged on its first superstep.
        } else if let Some(collective) = measured {
            let payload = traffic.iter().map(|n| n.bytes_in).max().unwrap_or(0) as f64;
            cost.h_bytes = payload;
            cost.communication_s = self.collective_scale * collective.at(self.processes, payload);
        } else if let Some((communication_s, h_bytes)) = derived {
            cost.h_bytes = h_bytes;
            cost.communication_s = communication_s;
        } else {
            let mut busiest: f64 = 0.0;
            for (node, r) in traffic.iter().zip(&clock.r) {
                let port = if clock.p2p.is_empty() {
                    m.port_time(*r, node.h(), node.bytes_in, node.m())
                } else {
                    node.p2p_s + r * m.receive_s_per_byte * node.bytes_in as f64
                };
                busiest = busiest.max(port);
                cost.h_bytes = cost.h_bytes.max(r * node.h() as f64);
            }
            if m.backplane_bytes_per_s > 0.0 {
                let total: u64 = traffic.iter().map(|n| n.bytes_out).sum();
                busiest = busiest.max(total as f64 / m.backplane_bytes_per_s);
            }
            cost.communication_s = busiest;
            if *call != Call::End && m.barrier == Barrier::Hbsp {
                cost.barrier_s = self.collective_scale * clock.l
                    + clock.stall_of(traffic)
                    + stall_at(&clock.compute_stall, cost.compute_s);
            }
        }
        cost.fixed_s = match call {
            Call::End => self.run_overhead_s,
            _ => m.superstep_s,
        };
        cost
    }
}
