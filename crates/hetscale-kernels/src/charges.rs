//! The kernels' overhead models replay their node programs here, superstep by superstep,
//! and are charged exactly what the `sim` backend charges: a superstep costs
//! `max_j w_j + g max_j (r_j h_j) + o max_j m_j + L(p)` (`w_j = ops_j / C_j`; `h_j` and `m_j`
//! the larger of the bytes and of the messages node `j` sends and receives, self-sends
//! free), plus the platform's measured stall when any message moves (`message_stall_s`
//! when two nodes take part, up to `message_stall_all_s` when every node does), and
//! the program's end costs its work and traffic but no `L`. With `[[machine.compute_stall]]`
//! a superstep ending in a barrier also pays the stall measured after its slowest node's
//! compute (`hetscale_machine::compute_stall`), as `sim` does; a compute charged apart from its
//! superstep ([`Charges::slowest_compute`]) adds none.
//!
//! [`Charges::overhead`] then splits the total into the compute the time model predicts from
//! `W` and everything else, which is the overhead `T_o`: communication, barriers, idle time
//! of integer shares, and operations done beyond `W` (repeated scalar work, partial sums).
//!
//! The traffic builders mirror what `hbsp::collectives` actually sends, message for message
//! (which pieces travel even when empty, which do not), since every message costs `o`.
//!
//! On a platform whose machine model has `[[machine.p2p]]` segments (`hetscale probe --p2p`),
//! a superstep's `g max_j (r_j h_j) + o max_j m_j` is replaced by the point-to-point ports
//! that `sim` charges: node `j`'s sending side costs its transfers' start-up and their bytes'
//! costs on its segments at the machine's size, its receiving side likewise, and it pays the
//! larger (plus, with `[[machine.duplex]]`, the penalty on its smaller side's bytes, as
//! `sim`: `hetscale_machine::duplex::port_time`) plus `r_j receive b_j`. The traffic keeps each node's totals, not its transfers,
//! so its transfers are taken as of the mean size, on the node's own segments (`sim` sizes
//! each transfer and charges the slower end of each pair).

use hbsp::Machine;
use hetscale_machine::compute_stall::{ComputeStallPoint, compute_stall_points, stall_at};
use hetscale_machine::duplex::{DuplexPoint, duplex_points, port_time};
use hetscale_machine::machine_model::{P2pSegment, p2p_parts, p2p_segments};
use hetscale_model::hbsp::{self as cost, HbspMachine, Traffic};

use crate::error::Result;
use crate::kernel::{Overhead, flops_per_unit};

/// No compute in a superstep.
pub(crate) const IDLE: &[f64] = &[];

/// The running HBSP^1 charges of one program on one machine.
pub(crate) struct Charges<'m> {
    machine: &'m Machine,
    model: HbspMachine,
    /// Flop/s per unit of the machine's speeds; `None` when they are not a flop rate, so no
    /// compute time can be derived (and the simulator cannot charge declared work either).
    flops_per_unit: Option<f64>,
    communication_s: f64,
    compute_s: f64,
    /// How many identical supersteps each charged one stands for (see [`Charges::set_weight`]).
    weight: f64,
    /// Each node's `[[machine.p2p]]` segments at this machine's size; empty without them.
    p2p: Vec<Vec<P2pSegment>>,
    /// The machine model's `receive_s_per_byte` (with `p2p`).
    receive_s_per_byte: f64,
    /// The `[[machine.duplex]]` points at this machine's size (empty: full duplex).
    duplex: Vec<DuplexPoint>,
    /// The `[[machine.compute_stall]]` points at this machine's size (empty: none).
    compute_stall: Vec<ComputeStallPoint>,
}

impl<'m> Charges<'m> {
    pub fn new(machine: &'m Machine) -> Self {
        let with_p2p = machine.model().filter(|m| !m.p2p.is_empty());
        Self {
            machine,
            model: machine.cost_model(),
            flops_per_unit: flops_per_unit(machine.speed_unit()),
            communication_s: 0.0,
            compute_s: 0.0,
            weight: 1.0,
            p2p: with_p2p.map_or_else(Vec::new, |m| {
                machine
                    .nodes()
                    .iter()
                    .map(|n| p2p_segments(&m.p2p, Some(&n.name), machine.p()))
                    .collect()
            }),
            receive_s_per_byte: with_p2p.map_or(0.0, |m| m.receive_s_per_byte),
            duplex: with_p2p.map_or_else(Vec::new, |m| duplex_points(&m.duplex, machine.p())),
            compute_stall: machine.model().map_or_else(Vec::new, |m| {
                compute_stall_points(&m.compute_stall, machine.p())
            }),
        }
    }

    /// The busiest node's point-to-point port (see the module docs).
    fn p2p_ports(&self, traffic: &Traffic) -> f64 {
        // A side's (total, bytes' cost), as `sim`'s port tally keeps it.
        let side = |segments: &[P2pSegment], messages: f64, bytes: f64| {
            if messages <= 0.0 {
                return (0.0, 0.0);
            }
            let (latency, each_s) = p2p_parts(segments, (bytes / messages).round() as u64);
            let bytes_s = messages * each_s;
            ((latency + bytes_s).max(0.0), bytes_s)
        };
        self.p2p
            .iter()
            .zip(self.machine.nodes())
            .enumerate()
            .map(|(j, (segments, node))| {
                let out = side(segments, traffic.messages_sent[j], traffic.sent[j]);
                let into = side(segments, traffic.messages_received[j], traffic.received[j]);
                let overlap = traffic.sent[j].min(traffic.received[j]).round() as u64;
                port_time(out, into, overlap, &self.duplex)
                    + node.r * self.receive_s_per_byte * traffic.received[j]
            })
            .fold(0.0, f64::max)
    }

    /// Charges every following superstep `weight` times: a long program replays a sample of
    /// its steps, each standing for its neighbours, instead of all of them.
    pub fn set_weight(&mut self, weight: f64) {
        self.weight = weight;
    }

    /// A superstep ending in a barrier, in which node `j` computes `ops[j]` operations (none
    /// if `ops` is empty) and `traffic` moves.
    pub fn superstep(&mut self, ops: &[f64], traffic: &Traffic) -> Result<()> {
        self.end(ops, traffic)?;
        let stall = self.model.message_stall(traffic.active_nodes())
            + stall_at(&self.compute_stall, self.slowest(ops));
        self.communication_s += self.weight * (self.model.l() + stall);
        Ok(())
    }

    /// Superstep `phase` (0 = the first) of collective `name`, with compute `ops` and traffic
    /// `traffic`. Where the network lists a measured cost for `name` (measured by
    /// `hetscale_probe::collective_probe`), the collective costs that once, on its first superstep, for the most
    /// bytes one node receives there, and no barrier: what `sim` charges a machine model's
    /// measured collective. Otherwise it is an HBSP^1 superstep like any other.
    pub fn collective(
        &mut self,
        name: &str,
        phase: usize,
        ops: &[f64],
        traffic: &Traffic,
    ) -> Result<()> {
        let Some(cost) = self.machine.network().collective(name) else {
            return self.superstep(ops, traffic);
        };
        self.end(ops, &Traffic::idle(self.machine.p()))?;
        if phase == 0 {
            let payload = traffic.received.iter().copied().fold(0.0, f64::max);
            self.communication_s += self.weight * cost.at(self.machine.p(), payload);
        }
        Ok(())
    }

    /// The compute of a superstep whose slowest node takes `ops_per_speed` (its operations
    /// over its marked speed, `max_j ops_j / C_j`), charged apart from the superstep's
    /// traffic and barrier (which [`Charges::collective`] charges with no compute): a model
    /// that finds the slowest node without a per-node vector.
    pub fn slowest_compute(&mut self, ops_per_speed: f64) {
        if let Some(unit) = self.flops_per_unit {
            self.compute_s += self.weight * ops_per_speed / unit;
        }
    }

    /// The communication charged so far, s: traffic, barriers, stalls and measured collectives.
    pub fn communication(&self) -> f64 {
        self.communication_s
    }

    /// The program's last superstep: its compute and traffic, but no barrier.
    pub fn end(&mut self, ops: &[f64], traffic: &Traffic) -> Result<()> {
        let communication_s = if self.p2p.is_empty() {
            self.model.g() * self.model.h_relation(&traffic.h())?
                + self.model.o() * traffic.busiest_messages()
        } else {
            self.p2p_ports(traffic)
        };
        self.communication_s += self.weight * communication_s;
        self.compute_s += self.weight * self.slowest(ops);
        Ok(())
    }

    /// The slowest node's compute for `ops`, s: `max_j ops_j / C_j` (0 when the speeds are
    /// not a flop rate).
    fn slowest(&self, ops: &[f64]) -> f64 {
        let Some(unit) = self.flops_per_unit else {
            return 0.0;
        };
        ops.iter()
            .enumerate()
            .map(|(j, w)| w / (self.machine.marked_speed(j) * unit))
            .fold(0.0, f64::max)
    }

    /// The overhead model of the replayed program for work `work` (`W`), of which the
    /// implementation counts `counted_ops` operations, `sequential_ops` of them on the root
    /// (the fastest node) alone. The time model charges
    /// `(counted_ops - sequential_ops) / C + sequential_ops / C_root`; whatever the replayed
    /// supersteps cost beyond that is overhead.
    pub fn overhead(self, work: f64, counted_ops: f64, sequential_ops: f64) -> Overhead {
        // A work formula that vanishes (GE's published W(2) = 0) cannot scale the counted
        // operations: all compute time is then overhead.
        let ops_per_work = if work > 0.0 { counted_ops / work } else { 1.0 };
        let sequential_fraction = if counted_ops > 0.0 {
            sequential_ops / counted_ops
        } else {
            0.0
        };
        let modelled = Overhead {
            overhead_s: 0.0,
            compute_s: self.compute_s,
            sequential_fraction,
            ops_per_work,
        };
        let predicted_compute_s = match self.flops_per_unit {
            Some(unit) if work > 0.0 => modelled.predicted_time_s(
                work,
                self.machine.cluster_speed() * unit,
                self.machine.marked_speed(self.machine.ranking()[0]) * unit,
            ),
            _ => 0.0,
        };
        Overhead {
            overhead_s: self.communication_s + self.compute_s - predicted_compute_s,
            ..modelled
        }
    }
}

/// `scatterv` (and `scatter`): the root sends every other node its piece, empty ones too
/// (they carry the total size).
pub(crate) fn scatterv(root: usize, bytes: &[f64]) -> Traffic {
    cost::scatter_traffic(root, bytes)
}

/// `gatherv` (and `gather`): every other node sends the root its piece, empty ones too.
pub(crate) fn gatherv(root: usize, bytes: &[f64]) -> Traffic {
    cost::gather_traffic(root, bytes)
}

/// `allreduce` of a vector cut into `counts[j]` items of `item_bytes` for node `j`: the traffic
/// of its two supersteps. First every node sends each other node holding a piece that piece
/// of its vector, then every node holding a piece sends the reduced piece to every other node;
/// nodes without a piece send and receive no message for it.
pub(crate) fn allreduce(counts: &[usize], item_bytes: f64) -> [Traffic; 2] {
    let p = counts.len();
    let pieces: Vec<f64> = counts.iter().map(|&c| c as f64 * item_bytes).collect();
    let holders = counts.iter().filter(|&&c| c > 0).count() as f64;
    let total: f64 = pieces.iter().sum();
    let others = p.saturating_sub(1) as f64;
    let (mut scatter, mut gather) = (Traffic::idle(p), Traffic::idle(p));
    for (j, &piece) in pieces.iter().enumerate() {
        let holds = if counts[j] > 0 { 1.0 } else { 0.0 };
        scatter.sent[j] = total - piece;
        scatter.messages_sent[j] = holders - holds;
        scatter.received[j] = piece * others;
        scatter.messages_received[j] = holds * others;
        gather.sent[j] = piece * others;
        gather.messages_sent[j] = holds * others;
        gather.received[j] = total - piece;
        gather.messages_received[j] = holders - holds;
    }
    [scatter, gather]
}

/// The `alltoallv` of a transpose of row blocks: node `i`, holding `counts[i]` rows, sends
/// each other node `k` the `counts[i] x counts[k]` block of its columns, `bytes` per element;
/// empty blocks are not sent (as `hbsp::collectives::alltoallv` does). Built from per-node
/// sums, in O(p) rather than from a `p x p` matrix, so models of many nodes fit in memory.
pub(crate) fn block_transpose(counts: &[usize], bytes: f64) -> Traffic {
    let total: f64 = counts.iter().map(|&c| c as f64).sum();
    let holders = counts.iter().filter(|&&c| c > 0).count() as f64;
    let mut t = Traffic::idle(counts.len());
    for (i, &rows) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
        let rows = rows as f64;
        t.sent[i] = bytes * rows * (total - rows);
        t.received[i] = t.sent[i];
        t.messages_sent[i] = holders - 1.0;
        t.messages_received[i] = holders - 1.0;
    }
    t
}

/// `broadcast` with `BroadcastAlgorithm::Auto` of `items` items of `item_bytes` bytes from
/// `root`: the traffic of each superstep it makes (one for one-phase, two for two-phase).
///
/// The choice replays `hbsp::collectives::broadcast`'s exactly (its predicted costs, ties to
/// one-phase). Its prediction for two-phase counts an (empty) second-phase message from
/// every node to every non-root, but a node with an empty piece sends nothing and nobody
/// sends to itself: the traffic returned is what is sent.
pub(crate) fn broadcast(
    machine: &Machine,
    root: usize,
    items: usize,
    item_bytes: f64,
) -> Result<Vec<Traffic>> {
    let m = machine.cost_model();
    let p = machine.p();
    let counts = machine.balanced_counts(items);
    let pieces: Vec<f64> = counts.iter().map(|&c| c as f64 * item_bytes).collect();
    let one = cost::one_phase_broadcast_cost(&m, root, items as f64 * item_bytes)?;
    let predicted_second = second_phase(root, &pieces, |_| true);
    let two = cost::scatter_cost(&m, root, &pieces)? + m.traffic_cost(0.0, &predicted_second)?;
    if two >= one {
        let mut t = Traffic::idle(p);
        (0..p).for_each(|k| t.add(root, k, items as f64 * item_bytes));
        return Ok(vec![t]);
    }
    let second = second_phase(root, &pieces, |j| counts[j] > 0);
    Ok(vec![scatterv(root, &pieces), second])
}

/// The second phase of a two-phase broadcast: every node `j` that `sends` passes its piece to
/// every node but the root and itself. Built from per-node sums, in O(p) rather than one
/// `Traffic::add` per pair, so models of thousands of nodes stay fast.
fn second_phase(root: usize, pieces: &[f64], sends: impl Fn(usize) -> bool) -> Traffic {
    let p = pieces.len();
    let mut t = Traffic::idle(p);
    let senders: Vec<usize> = (0..p).filter(|&j| sends(j)).collect();
    let total: f64 = senders.iter().map(|&j| pieces[j]).sum();
    let receivers = (p - 1) as f64; // every node but the root
    for &j in &senders {
        let others = receivers - if j == root { 0.0 } else { 1.0 };
        t.sent[j] = pieces[j] * others;
        t.messages_sent[j] = others;
    }
    for k in (0..p).filter(|&k| k != root) {
        let own = if sends(k) { pieces[k] } else { 0.0 };
        t.received[k] = total - own;
        t.messages_received[k] = senders.len() as f64 - if sends(k) { 1.0 } else { 0.0 };
    }
    t
}
