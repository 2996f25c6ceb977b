//! The HBSP^1 cost model (Williams & Parsons 2001, section 3).
//!
//! An HBSP^1 machine has `p` nodes, a bandwidth indicator `g` (seconds per byte injected by the
//! fastest node), per-node injection slowness `r_j` (fastest = 1) and a barrier cost `L`.
//! A superstep costs `w + g h + L` with the heterogeneous h-relation `h = max_j r_j h_j`, where
//! `h_j` is the larger of the bytes node `j` sends and receives.
//!
//! Two levels are offered: exact costs computed from who sends what to whom ([`Traffic`]), which
//! is what a simulator charges, and the paper's closed forms (e.g. scatter `g n + L`), which
//! simplify the exact costs (the root is taken to inject all `n` items).

use crate::error::{Result, all_positive, non_negative, positive};

/// The parameters of an HBSP^1 machine.
#[derive(Debug, Clone, PartialEq)]
pub struct HbspMachine {
    g: f64,
    r: Vec<f64>,
    l: f64,
    o: f64,
    stall: MessageStall,
}

/// What a superstep that moves messages costs beyond `L` and its transfers on average: a
/// measured stall (such as a host under a CPU quota waiting out its period), not HBSP^1's.
///
/// A superstep waits for every node that takes part, so the stall grows with them: `pair_s`
/// when two nodes move a message (a ping-pong), `all_s` when every node of the machine sends
/// or receives one. A superstep in which `a` of `p` nodes take part costs the stall linearly
/// between the two ([`MessageStall::at`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MessageStall {
    /// The stall when two nodes move a message, s.
    pub pair_s: f64,
    /// The stall when every node moves a message, s.
    pub all_s: f64,
}

impl MessageStall {
    /// The stall of a superstep in which `active` of `p` nodes send or receive a message:
    /// 0 when none does, `pair_s` at two (a message has two ends; one active node is a
    /// caller counting one end only, charged as a pair), `all_s` at `p`, linear between.
    pub fn at(&self, active: usize, p: usize) -> f64 {
        if active == 0 {
            return 0.0;
        }
        if p <= 2 || active <= 2 {
            return self.pair_s;
        }
        let share = (active.min(p) - 2) as f64 / (p - 2) as f64;
        self.pair_s + share * (self.all_s - self.pair_s)
    }
}

impl HbspMachine {
    /// A machine with bandwidth indicator `g` (s/byte of the fastest node), slowness `r` (one
    /// per node, each > 0) and barrier cost `l` (s).
    pub fn new(g: f64, r: Vec<f64>, l: f64) -> Result<Self> {
        non_negative("g", g)?;
        all_positive("r_j", &r)?;
        non_negative("L", l)?;
        Ok(Self {
            g,
            r,
            l,
            o: 0.0,
            stall: MessageStall::default(),
        })
    }

    /// The same machine with a per-message overhead `o` (s): a superstep whose busiest node
    /// sends or receives `m` messages costs `o m` more. HBSP^1 itself has no `o` (it is 0 by
    /// default); hetscale's platforms and simulator carry it, so exact costs include it.
    pub fn with_message_overhead(mut self, o: f64) -> Result<Self> {
        self.o = non_negative("o", o)?;
        Ok(self)
    }

    /// The same machine with the stall that a superstep moving any message costs beyond `L`
    /// and its traffic on average (measured, not HBSP^1's: none by default).
    pub fn with_message_stall(mut self, stall: MessageStall) -> Result<Self> {
        non_negative("message stall of a pair", stall.pair_s)?;
        non_negative("message stall of all nodes", stall.all_s)?;
        self.stall = stall;
        Ok(self)
    }

    /// The stall of a superstep in which `active` nodes send or receive a message, s.
    pub fn message_stall(&self, active: usize) -> f64 {
        self.stall.at(active, self.p())
    }

    /// Per-message overhead `o` in seconds.
    pub fn o(&self) -> f64 {
        self.o
    }

    /// Number of nodes `p`.
    pub fn p(&self) -> usize {
        self.r.len()
    }

    /// Bandwidth indicator `g` in seconds per byte.
    pub fn g(&self) -> f64 {
        self.g
    }

    /// Barrier cost `L` in seconds.
    pub fn l(&self) -> f64 {
        self.l
    }

    /// Injection slowness of every node.
    pub fn r(&self) -> &[f64] {
        &self.r
    }

    /// `r_s`, the slowness of the slowest node.
    pub fn r_slowest(&self) -> f64 {
        self.r.iter().copied().fold(f64::MIN, f64::max)
    }

    /// Index of the fastest injector (smallest `r_j`; the lowest index on ties).
    pub fn fastest(&self) -> usize {
        argmin(&self.r)
    }

    /// Index of the slowest injector (largest `r_j`; the lowest index on ties).
    pub fn slowest(&self) -> usize {
        let neg: Vec<f64> = self.r.iter().map(|r| -r).collect();
        argmin(&neg)
    }

    /// The heterogeneous h-relation `h = max_j r_j h_j` for per-node `h_j` in bytes.
    pub fn h_relation(&self, h: &[f64]) -> Result<f64> {
        self.check_len(h.len())?;
        h.iter()
            .try_for_each(|&x| non_negative("h_j", x).map(|_| ()))?;
        Ok(self.r.iter().zip(h).map(|(r, h)| r * h).fold(0.0, f64::max))
    }

    /// Cost of one superstep, `w + g h + L` (Williams & Parsons eq. 1).
    pub fn superstep_cost(&self, w: f64, h: &[f64]) -> Result<f64> {
        non_negative("w", w)?;
        Ok(w + self.g * self.h_relation(h)? + self.l)
    }

    /// Cost of one superstep whose communication is described by `traffic`.
    pub fn traffic_cost(&self, w: f64, traffic: &Traffic) -> Result<f64> {
        Ok(self.superstep_cost(w, &traffic.h())? + self.o * traffic.busiest_messages())
    }

    fn check_len(&self, len: usize) -> Result<()> {
        if len == self.p() {
            Ok(())
        } else {
            Err(crate::ModelError::Inconsistent(format!(
                "expected one value per node ({}), got {len}",
                self.p()
            )))
        }
    }
}

fn argmin(values: &[f64]) -> usize {
    values
        .iter()
        .enumerate()
        .fold(
            (0, f64::INFINITY),
            |best, (i, &v)| if v < best.1 { (i, v) } else { best },
        )
        .0
}

/// Bytes sent and received by each node in one superstep.
#[derive(Debug, Clone, PartialEq)]
pub struct Traffic {
    /// Bytes each node injects.
    pub sent: Vec<f64>,
    /// Bytes each node receives.
    pub received: Vec<f64>,
    /// Messages each node sends.
    pub messages_sent: Vec<f64>,
    /// Messages each node receives.
    pub messages_received: Vec<f64>,
}

impl Traffic {
    /// No traffic on `p` nodes.
    pub fn idle(p: usize) -> Self {
        Self {
            sent: vec![0.0; p],
            received: vec![0.0; p],
            messages_sent: vec![0.0; p],
            messages_received: vec![0.0; p],
        }
    }

    /// Every node `j` sends `sizes[j]` bytes to every other node but `skipped`, in O(p) (as
    /// many [`Traffic::add`]s would take O(p^2): every node of a simulated superstep asks).
    pub fn each_to_all(sizes: &[f64], skipped: Option<usize>) -> Self {
        let p = sizes.len();
        let total: f64 = sizes.iter().sum();
        let receivers = |j: usize| {
            let others = p.saturating_sub(1);
            match skipped {
                Some(s) if s != j && s < p => others - 1,
                _ => others,
            }
        };
        let mut t = Self::idle(p);
        for (j, &size) in sizes.iter().enumerate() {
            t.sent[j] = size * receivers(j) as f64;
            t.messages_sent[j] = receivers(j) as f64;
            if skipped != Some(j) {
                t.received[j] = total - size;
                t.messages_received[j] = p.saturating_sub(1) as f64;
            }
        }
        t
    }

    /// Every node sends `pieces[j]` bytes to each other node `j`, in O(p).
    pub fn all_to_each(pieces: &[f64]) -> Self {
        let p = pieces.len();
        let total: f64 = pieces.iter().sum();
        let others = p.saturating_sub(1) as f64;
        let mut t = Self::idle(p);
        for (j, &piece) in pieces.iter().enumerate() {
            t.sent[j] = total - piece;
            t.received[j] = piece * others;
            t.messages_sent[j] = others;
            t.messages_received[j] = others;
        }
        t
    }

    /// Records one message of `bytes` from `from` to `to`; a node sending to itself costs
    /// nothing.
    pub fn add(&mut self, from: usize, to: usize, bytes: f64) {
        if from != to {
            self.sent[from] += bytes;
            self.received[to] += bytes;
            self.messages_sent[from] += 1.0;
            self.messages_received[to] += 1.0;
        }
    }

    /// How many nodes send or receive a message (what a superstep's stall waits for).
    pub fn active_nodes(&self) -> usize {
        self.messages_sent
            .iter()
            .zip(&self.messages_received)
            .filter(|(s, r)| **s > 0.0 || **r > 0.0)
            .count()
    }

    /// `max_j m_j`, with `m_j` the larger of the messages node `j` sends and receives.
    pub fn busiest_messages(&self) -> f64 {
        self.messages_sent
            .iter()
            .zip(&self.messages_received)
            .map(|(s, r)| s.max(*r))
            .fold(0.0, f64::max)
    }

    /// `h_j = max(sent_j, received_j)` per node.
    pub fn h(&self) -> Vec<f64> {
        self.sent
            .iter()
            .zip(&self.received)
            .map(|(s, r)| s.max(*r))
            .collect()
    }
}

/// Balanced shares `c_j = C_j / C` (Williams & Parsons section 4.4), from per-node speeds.
pub fn balanced_shares(speeds: &[f64]) -> Result<Vec<f64>> {
    all_positive("speed", speeds)?;
    let total: f64 = speeds.iter().sum();
    Ok(speeds.iter().map(|s| s / total).collect())
}

/// Splits `n` items in proportion to `weights` by the largest-remainder method: the counts sum to
/// `n` exactly and each differs from `n c_j` by less than one. Ties go to the lower index.
pub fn integer_shares(n: usize, weights: &[f64]) -> Result<Vec<usize>> {
    let shares = balanced_shares(weights)?;
    let ideal: Vec<f64> = shares.iter().map(|c| c * n as f64).collect();
    let mut counts: Vec<usize> = ideal.iter().map(|x| x.floor() as usize).collect();
    let assigned: usize = counts.iter().sum();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (ideal[a] - ideal[a].floor(), ideal[b] - ideal[b].floor());
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    for &j in order.iter().take(n.saturating_sub(assigned)) {
        counts[j] += 1;
    }
    Ok(counts)
}

/// Traffic of a scatter: `root` sends `counts[j]` bytes to each node `j` and keeps its own.
pub fn scatter_traffic(root: usize, counts: &[f64]) -> Traffic {
    let mut t = Traffic::idle(counts.len());
    for (j, &c) in counts.iter().enumerate() {
        t.add(root, j, c);
    }
    t
}

/// Traffic of a gather: each node `j` sends `counts[j]` bytes to `root`.
pub fn gather_traffic(root: usize, counts: &[f64]) -> Traffic {
    let mut t = Traffic::idle(counts.len());
    for (j, &c) in counts.iter().enumerate() {
        t.add(j, root, c);
    }
    t
}

/// Exact cost of a one-superstep scatter of `counts[j]` bytes to each node from `root`.
pub fn scatter_cost(m: &HbspMachine, root: usize, counts: &[f64]) -> Result<f64> {
    check_root(m, root)?;
    m.traffic_cost(0.0, &scatter_traffic(root, counts))
}

/// Exact cost of a one-superstep gather of `counts[j]` bytes from each node to `root`.
pub fn gather_cost(m: &HbspMachine, root: usize, counts: &[f64]) -> Result<f64> {
    check_root(m, root)?;
    m.traffic_cost(0.0, &gather_traffic(root, counts))
}

/// Exact cost of the one-phase broadcast: `root` sends all `n` bytes to every other node.
pub fn one_phase_broadcast_cost(m: &HbspMachine, root: usize, n: f64) -> Result<f64> {
    check_root(m, root)?;
    non_negative("n", n)?;
    let mut t = Traffic::idle(m.p());
    (0..m.p()).for_each(|j| t.add(root, j, n));
    m.traffic_cost(0.0, &t)
}

/// Exact cost of the two-phase broadcast: `root` scatters piece `j` (`pieces[j]` bytes) to node
/// `j`, then every node sends its piece to every other node. Two supersteps.
pub fn two_phase_broadcast_cost(m: &HbspMachine, root: usize, pieces: &[f64]) -> Result<f64> {
    let phase1 = scatter_cost(m, root, pieces)?;
    Ok(phase1 + m.traffic_cost(0.0, &Traffic::each_to_all(pieces, None))?)
}

fn check_root(m: &HbspMachine, root: usize) -> Result<()> {
    if root < m.p() {
        Ok(())
    } else {
        Err(crate::ModelError::Inconsistent(format!(
            "root {root} is not a node of a {}-node machine",
            m.p()
        )))
    }
}

/// Paper closed form of the balanced scatter from the fastest root: `g n + L` (section 3.2.1).
pub fn scatter_closed_form(g: f64, n: f64, l: f64) -> Result<f64> {
    Ok(non_negative("g", g)? * non_negative("n", n)? + non_negative("L", l)?)
}

/// Paper closed form of the two-phase broadcast: `g n (1 + r_s) + 2L` (section 3.2.2).
pub fn two_phase_broadcast_closed_form(g: f64, n: f64, r_s: f64, l: f64) -> Result<f64> {
    positive("r_s", r_s)?;
    Ok(non_negative("g", g)? * non_negative("n", n)? * (1.0 + r_s) + 2.0 * non_negative("L", l)?)
}

/// Paper closed form of the one-phase broadcast: `g n p + L` (section 3.2.2).
pub fn one_phase_broadcast_closed_form(g: f64, n: f64, p: usize, l: f64) -> Result<f64> {
    positive("p", p as f64)?;
    Ok(non_negative("g", g)? * non_negative("n", n)? * p as f64 + non_negative("L", l)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_grows_from_a_pairs_to_every_nodes_with_the_nodes_taking_part() {
        let stall = MessageStall {
            pair_s: 1e-3,
            all_s: 4e-3,
        };
        assert_eq!(stall.at(0, 8), 0.0);
        assert_eq!(stall.at(1, 8), 1e-3);
        assert_eq!(stall.at(2, 8), 1e-3);
        assert!((stall.at(5, 8) - 2.5e-3).abs() < 1e-15);
        assert_eq!(stall.at(8, 8), 4e-3);
        // Two nodes are a pair whatever was measured for all of them.
        assert_eq!(stall.at(2, 2), 1e-3);
        let machine = ucf4().with_message_stall(stall).unwrap();
        assert!((machine.message_stall(3) - 2.5e-3).abs() < 1e-15);
        let negative = MessageStall {
            pair_s: 1e-3,
            all_s: -1.0,
        };
        assert!(ucf4().with_message_stall(negative).is_err());
    }

    fn ucf4() -> HbspMachine {
        // Williams & Parsons Table 5 (r_j) for gromit, chromus, aditi, dcn_sgi1; g and L of Table 4 / 4.4.
        HbspMachine::new(0.196e-6, vec![1.00, 4.08, 1.03, 2.12], 15_000e-6).unwrap()
    }

    #[test]
    fn superstep_is_w_plus_gh_plus_l() {
        let m = ucf4();
        let cost = m.superstep_cost(1.0, &[10.0, 10.0, 0.0, 0.0]).unwrap();
        assert!((cost - (1.0 + 0.196e-6 * 40.8 + 0.015)).abs() < 1e-15);
    }

    #[test]
    fn h_relation_rejects_wrong_length_and_negative() {
        let m = ucf4();
        assert!(m.h_relation(&[1.0]).is_err());
        assert!(m.h_relation(&[1.0, -1.0, 0.0, 0.0]).is_err());
    }

    #[test]
    fn balanced_scatter_from_fastest_is_below_closed_form() {
        // With r_j c_j < 1 the root's injection dominates: exact cost = g n (1 - c_f) + L <= g n + L.
        let m = ucf4();
        let c = balanced_shares(&[4.89, 0.75, 4.45, 2.80]).unwrap();
        let n = 1e6;
        let counts: Vec<f64> = c.iter().map(|c| c * n).collect();
        let exact = scatter_cost(&m, 0, &counts).unwrap();
        assert!((exact - (m.g() * n * (1.0 - c[0]) + m.l())).abs() < 1e-12);
        assert!(exact <= scatter_closed_form(m.g(), n, m.l()).unwrap());
    }

    #[test]
    fn two_phase_broadcast_matches_paper_bound() {
        let m = ucf4();
        let n = 1e6;
        let pieces = vec![n / 4.0; 4];
        let exact = two_phase_broadcast_cost(&m, 0, &pieces).unwrap();
        let closed = two_phase_broadcast_closed_form(m.g(), n, m.r_slowest(), m.l()).unwrap();
        assert!(exact <= closed + 1e-12, "{exact} > {closed}");
        // Phase 1: chromus (r = 4.08 > p) receiving n/4 outweighs the root injecting 3n/4, the
        // case the paper's simplification to g n excludes. Phase 2: r_s * 3n/4 on chromus.
        let phase1 = m.g() * (4.08 * 0.25 * n) + m.l();
        let phase2 = m.g() * 4.08 * 0.75 * n + m.l();
        assert!((exact - (phase1 + phase2)).abs() < 1e-12);
    }

    #[test]
    fn integer_shares_sum_and_proportion() {
        let w = [4.89, 0.75, 4.45, 2.80];
        for n in [0, 1, 7, 100, 12_345] {
            let counts = integer_shares(n, &w).unwrap();
            assert_eq!(counts.iter().sum::<usize>(), n);
            let c = balanced_shares(&w).unwrap();
            for (k, c) in counts.iter().zip(c) {
                assert!((*k as f64 - c * n as f64).abs() < 1.0);
            }
        }
    }

    #[test]
    fn bad_machines_are_errors() {
        assert!(HbspMachine::new(-1.0, vec![1.0], 0.0).is_err());
        assert!(HbspMachine::new(1.0, vec![], 0.0).is_err());
        assert!(HbspMachine::new(1.0, vec![0.0], 0.0).is_err());
        assert!(scatter_cost(&ucf4(), 9, &[0.0; 4]).is_err());
    }
}

// Costs of the further collectives of the `hbsp` library (reduce, allgather, alltoall,
// allreduce), exact in the same sense as `scatter_cost`: from who sends what to whom.

/// Traffic of an all-to-all: `counts[i][j]` bytes go from node `i` to node `j`.
pub fn alltoall_traffic(counts: &[Vec<f64>]) -> Traffic {
    let mut t = Traffic::idle(counts.len());
    for (i, row) in counts.iter().enumerate() {
        for (j, &c) in row.iter().enumerate().take(counts.len()) {
            t.add(i, j, c);
        }
    }
    t
}

/// Exact cost of a one-superstep all-to-all of `counts[i][j]` bytes from `i` to `j`.
pub fn alltoall_cost(m: &HbspMachine, counts: &[Vec<f64>]) -> Result<f64> {
    m.check_len(counts.len())?;
    for row in counts {
        m.check_len(row.len())?;
    }
    m.traffic_cost(0.0, &alltoall_traffic(counts))
}

/// Exact cost of a one-superstep allgather: node `j` sends its `counts[j]` bytes to every
/// other node.
pub fn allgather_cost(m: &HbspMachine, counts: &[f64]) -> Result<f64> {
    m.check_len(counts.len())?;
    m.traffic_cost(0.0, &Traffic::each_to_all(counts, None))
}

/// Exact cost of a direct reduce of `n` bytes per node: every node sends its `n` bytes to
/// `root`, which combines them (combining work not counted). One superstep.
pub fn reduce_cost(m: &HbspMachine, root: usize, n: f64) -> Result<f64> {
    non_negative("n", n)?;
    gather_cost(m, root, &vec![n; m.p()])
}

/// Exact cost of the two-superstep allreduce: a reduce-scatter in which node `j` receives and
/// combines piece `j` (`pieces[j]` bytes) of every vector, then an allgather of the pieces.
pub fn allreduce_cost(m: &HbspMachine, pieces: &[f64]) -> Result<f64> {
    m.check_len(pieces.len())?;
    let reduce_scatter = m.traffic_cost(0.0, &Traffic::all_to_each(pieces))?;
    Ok(reduce_scatter + allgather_cost(m, pieces)?)
}

#[cfg(test)]
mod collective_cost_tests {
    use super::*;

    /// The O(p) traffic of the all-to-all patterns is the sum of their messages.
    #[test]
    fn all_to_all_patterns_add_up_their_messages() {
        let sizes = [10.0, 0.0, 30.0, 20.0];
        for skipped in [None, Some(0), Some(2)] {
            let mut expect = Traffic::idle(4);
            for (j, &size) in sizes.iter().enumerate() {
                (0..4)
                    .filter(|&k| Some(k) != skipped)
                    .for_each(|k| expect.add(j, k, size));
            }
            assert_eq!(Traffic::each_to_all(&sizes, skipped), expect, "{skipped:?}");
        }
        let mut expect = Traffic::idle(4);
        for j in 0..4 {
            (0..4).for_each(|k| expect.add(j, k, sizes[k]));
        }
        assert_eq!(Traffic::all_to_each(&sizes), expect);
    }

    fn ucf4() -> HbspMachine {
        HbspMachine::new(0.196e-6, vec![1.00, 4.08, 1.03, 2.12], 15_000e-6).unwrap()
    }

    #[test]
    fn reduce_is_gather_of_equal_vectors() {
        let m = ucf4();
        // Root 0 receives 3n; the slowest sender injects r = 4.08 times n.
        let n = 1000.0;
        let expect = m.g() * f64::max(3.0 * n, 4.08 * n) + m.l();
        assert!((reduce_cost(&m, 0, n).unwrap() - expect).abs() < 1e-15);
    }

    #[test]
    fn allgather_h_is_max_of_sent_and_received() {
        let m = ucf4();
        let counts = [10.0, 0.0, 30.0, 20.0];
        // Node 1 sends nothing but receives 60; node 2 sends 90 and receives 30.
        let h = [30.0_f64.max(50.0), 60.0, 90.0, 60.0];
        let expect = m.superstep_cost(0.0, &h).unwrap();
        assert!((allgather_cost(&m, &counts).unwrap() - expect).abs() < 1e-15);
    }

    #[test]
    fn allreduce_is_two_supersteps() {
        let m = ucf4();
        let pieces = [400.0, 100.0, 300.0, 200.0];
        let cost = allreduce_cost(&m, &pieces).unwrap();
        assert!(cost > 2.0 * m.l());
        assert!(allreduce_cost(&m, &[1.0]).is_err());
    }

    #[test]
    fn alltoall_rejects_ragged_matrices() {
        let m = ucf4();
        assert!(
            alltoall_cost(
                &m,
                &[vec![1.0; 4], vec![1.0; 3], vec![1.0; 4], vec![1.0; 4]]
            )
            .is_err()
        );
        let zero = alltoall_cost(&m, &vec![vec![0.0; 4]; 4]).unwrap();
        assert!((zero - m.l()).abs() < 1e-15);
    }
}
