//! The overhead model of the elimination: its supersteps replayed on a machine
//! ([`SolveModel`]), for `ge` and `slalom` predictions, and the bytes its trace holds.

use hbsp::Machine;
use std::collections::BinaryHeap;

use hetscale_model::hbsp::Traffic;

use crate::charges::{self, Charges, IDLE};
use crate::error::Result;
use crate::kernel::speeds;
use crate::partition::cyclic_owners;

use super::elimination::{columns_flops, fastest, owned_rows, within_block_flops};
use super::pivoting::{F64, Pivoting};

/// Bytes of the trace of an `n`-step elimination on `machine` (`ge`'s, and `slalom`'s solve).
pub(crate) fn elimination_trace_bytes(n: usize, pivoting: Pivoting, machine: &Machine) -> f64 {
    let p = machine.p() as f64;
    n as f64 * p * trace_bytes_per_step(pivoting, p)
}

/// Bytes of a node's trace per elimination step on `p` nodes.
fn trace_bytes_per_step(pivoting: Pivoting, p: f64) -> f64 {
    // Up to four supersteps per step with pivoting (the allreduce's two and a two-phase
    // broadcast's) and five without (two broadcasts, each two-phase at worst, and the
    // barrier), and a flow to every node in the allreduce's second superstep or the
    // second broadcast and in a two-phase broadcast (measured: 2.6 kB per node and step
    // at p = 64).
    let supersteps_per_step = match pivoting {
        Pivoting::Partial => 4.0,
        Pivoting::None => 5.0,
    };
    supersteps_per_step * 256.0 + flow_bytes(2.0, p as usize)
}

/// Bytes of `supersteps` supersteps' flows to every one of `p` nodes, none where a trace on
/// `p` nodes keeps totals only ([`hbsp::trace::FLOW_NODES`]).
pub(super) fn flow_bytes(supersteps: f64, p: usize) -> f64 {
    if hbsp::trace::records_flows(p) {
        supersteps * 24.0 * p as f64
    } else {
        0.0
    }
}

/// Values each broadcast of step `i`'s pivot row carries: columns `i..=N` at once with
/// pivoting; the paper's two broadcasts, `A`'s columns `i..N-1` then `b`, without.
fn pivot_broadcasts(pivoting: Pivoting, n: usize, i: usize) -> Vec<usize> {
    match pivoting {
        Pivoting::Partial => vec![n + 1 - i],
        Pivoting::None => vec![n - i, 1],
    }
}

/// The overhead model of [`Elimination::solve`]: its supersteps replayed on a machine, for
/// `ge` (after its scatter) and `slalom` (after its setup).
pub(crate) struct SolveModel {
    pub n: usize,
    pub pivoting: Pivoting,
    /// Rows per block (1: the row-cyclic program).
    pub block: usize,
    /// Work each flop declares (see [`work_per_flop`]).
    pub work_per_flop: f64,
}

impl SolveModel {
    /// Bytes of each node's rows of `[A | b]`.
    pub fn row_bytes(&self, machine: &Machine) -> Result<Vec<f64>> {
        if self.block > 1 {
            let layout = BlockLayout::new(self.n, self.block, machine)?;
            return Ok(rows_bytes(&layout.total, self.n));
        }
        let stride = replay_stride(self.n, machine.p());
        let steps = EliminationSteps::new(self.n, &speeds(machine), stride)?;
        Ok(rows_bytes(&steps.total, self.n))
    }

    /// Replays the solve (after the starting barrier and whatever came before): per step `i`,
    /// with pivoting an allreduce of every node's 2-value candidate, then the broadcast of
    /// the pivot row's `N + 1 - i` values, and without pivoting the broadcasts of its `N - i`
    /// values of `A` and of its `b` value (each one or two supersteps, as
    /// `BroadcastAlgorithm::Auto` picks them); the gather; and the end, in which the root
    /// back-substitutes (`N^2` operations) and does `root_tail` more. Step `i`'s elimination
    /// (`1 + 2 (N - i)` per remaining row of each node, paced by the slowest node's share of
    /// the remaining rows) lands in the superstep after its broadcast, which without pivoting
    /// is the step's closing barrier; `first` (ops by pid, or empty) lands in the first
    /// superstep. Pivots are taken in natural order (row `i` at step `i`), as without
    /// pivoting and in skeleton runs. Returns the root's sequential operations.
    pub fn replay(
        &self,
        replay: &mut Charges<'_>,
        machine: &Machine,
        first: Vec<f64>,
        root_tail: f64,
    ) -> Result<f64> {
        if self.block > 1 {
            return self.replay_in_blocks(replay, machine, first, root_tail);
        }
        let (n, p) = (self.n, machine.p());
        let stride = replay_stride(n, p);
        let steps = EliminationSteps::new(n, &speeds(machine), stride)?;
        let row_bytes = rows_bytes(&steps.total, n);
        // One `(|a_ji|, j)` pair, as one item.
        let candidates = charges::allreduce(&machine.balanced_counts(1), 2.0 * F64);
        // Each step's elimination runs in the next superstep the program makes.
        let mut eliminate = first;
        for (i, owner, remaining) in steps {
            replay.set_weight(stride.min(n - 1 - i) as f64);
            if self.pivoting == Pivoting::Partial {
                replay.collective("allreduce", 0, &eliminate, &candidates[0])?;
                replay.collective("allreduce", 1, IDLE, &candidates[1])?;
                eliminate.clear();
            }
            for items in pivot_broadcasts(self.pivoting, n, i) {
                for (k, phase) in charges::broadcast(machine, owner, items, F64)?
                    .iter()
                    .enumerate()
                {
                    replay.collective("broadcast", k, &eliminate, phase)?;
                    eliminate.clear();
                }
            }
            let per_row = (1.0 + 2.0 * (n - i) as f64) * self.work_per_flop;
            eliminate = remaining.iter().map(|&r| r as f64 * per_row).collect();
            if self.pivoting == Pivoting::None {
                replay.superstep(&eliminate, &Traffic::idle(p))?;
                eliminate.clear();
            }
        }
        self.finish(replay, machine, &eliminate, &row_bytes, root_tail)
    }

    /// The gather (with `eliminate` in its superstep) and the end, in which the root
    /// back-substitutes and does `root_tail` more; returns the root's sequential operations.
    fn finish(
        &self,
        replay: &mut Charges<'_>,
        machine: &Machine,
        eliminate: &[f64],
        row_bytes: &[f64],
        root_tail: f64,
    ) -> Result<f64> {
        let (n, p) = (self.n, machine.p());
        let root = machine.ranking()[0];
        replay.set_weight(1.0);
        replay.collective("gatherv", 0, eliminate, &charges::gatherv(root, row_bytes))?;
        let mut sequential = vec![0.0; p];
        sequential[root] = (n as f64).powi(2) * self.work_per_flop + root_tail;
        replay.end(&sequential, &Traffic::idle(p))?;
        Ok(sequential[root])
    }

    /// [`SolveModel::replay`] of the blocked program: block step `k < B - 1` (`B` blocks)
    /// is the broadcast of the block's `(hi - lo) (N + 1 - lo)` values from its owner (one
    /// or two supersteps), whose first superstep holds the step's compute: each node's rows
    /// of the blocks `>= k` times [`columns_flops`] of block `k - 1`, and on the owner
    /// [`within_block_flops`] of block `k`. The last block's compute lands in the gather.
    ///
    /// The owners of the `B` blocks are exact (the cyclic distribution over `B` blocks, in
    /// `O(B log p)`), and so is every step's compute: the slowest node is the owner or the
    /// node of most rows per speed among the others, kept in a heap, so a step costs
    /// `O(log p)`. Past [`EXACT_REPLAY_NODE_STEPS`] node-steps the broadcasts, `O(p)` each,
    /// are sampled: of every `stride` consecutive steps one (at a low-discrepancy offset, so
    /// the sample does not follow the distribution's period) is charged for all `stride`.
    /// Below it every broadcast is replayed and the model is exact.
    fn replay_in_blocks(
        &self,
        replay: &mut Charges<'_>,
        machine: &Machine,
        first: Vec<f64>,
        root_tail: f64,
    ) -> Result<f64> {
        let (n, b, p) = (self.n, self.block, machine.p());
        let layout = BlockLayout::new(n, b, machine)?;
        let (count, owners) = (layout.owners.len(), &layout.owners);
        let row_bytes = rows_bytes(&layout.total, n);
        let bounds = |k: usize| (k * b, (k * b + b).min(n));
        // Flops per row of the blocks `>= k` in step `k`: block `k - 1`'s columns.
        let per_row = |k: usize| match k {
            0 => 0.0,
            _ => columns_flops(n, bounds(k - 1).0, bounds(k - 1).1),
        };
        let speed = |j: usize| machine.marked_speed(j);
        // Each node's compute in step `k` (`rows`: its rows of the blocks `>= k`).
        let compute = |k: usize, rows: &[usize]| -> Vec<f64> {
            let (lo, hi) = bounds(k);
            (0..p)
                .map(|j| {
                    let own = if j == owners[k] {
                        within_block_flops(n, lo, hi)
                    } else {
                        0.0
                    };
                    (rows[j] as f64 * per_row(k) + own) * self.work_per_flop
                })
                .collect()
        };
        let slowest = |ops: &[f64]| -> f64 {
            ops.iter()
                .enumerate()
                .map(|(j, w)| w / speed(j))
                .fold(0.0, f64::max)
        };
        let mut rows = layout.total.clone();
        // Rows per speed of each node, most first (as bits: the values are >= 0); entries
        // that no longer match `rows` are stale and skipped.
        let key = |j: usize, rows: usize| ((rows as f64 / speed(j)).to_bits(), j);
        let mut heap: BinaryHeap<(u64, usize)> = (0..p).map(|j| key(j, rows[j])).collect();
        let others_most = |heap: &mut BinaryHeap<(u64, usize)>, rows: &[usize], owner| {
            let mut owner_entry = None;
            let most = loop {
                match heap.peek().copied() {
                    None => break 0.0,
                    Some(top) if top != key(top.1, rows[top.1]) => {
                        heap.pop();
                    }
                    Some(top) if top.1 == owner => owner_entry = heap.pop(),
                    Some((bits, _)) => break f64::from_bits(bits),
                }
            };
            heap.extend(owner_entry);
            most
        };
        let mut first = Some(first).filter(|f| !f.is_empty());
        let stride = replay_stride(count, p);
        let steps = count - 1;
        for (window, start) in (0..steps).step_by(stride).enumerate() {
            let end = (start + stride).min(steps);
            replay.set_weight(1.0);
            for (k, &owner) in owners.iter().enumerate().take(end).skip(start) {
                let (lo, hi) = bounds(k);
                let time = match first.take() {
                    // The first superstep also holds `first`: per node, in O(p) once.
                    Some(first) => {
                        let ops: Vec<f64> = compute(k, &rows)
                            .iter()
                            .zip(&first)
                            .map(|(a, b)| a + b)
                            .collect();
                        slowest(&ops)
                    }
                    None => {
                        let own = (rows[owner] as f64 * per_row(k) + within_block_flops(n, lo, hi))
                            * self.work_per_flop
                            / speed(owner);
                        let others = others_most(&mut heap, &rows, owner)
                            * (per_row(k) * self.work_per_flop);
                        own.max(others)
                    }
                };
                replay.slowest_compute(time);
                rows[owner] -= hi - lo;
                heap.push(key(owner, rows[owner]));
            }
            let len = end - start;
            let sampled = start + sample_offset(window, len);
            let (lo, hi) = bounds(sampled);
            replay.set_weight(len as f64);
            for (phase, traffic) in
                charges::broadcast(machine, owners[sampled], (hi - lo) * (n + 1 - lo), F64)?
                    .iter()
                    .enumerate()
            {
                replay.collective("broadcast", phase, IDLE, traffic)?;
            }
        }
        let mut eliminate = compute(count - 1, &rows);
        if let Some(first) = first {
            eliminate.iter_mut().zip(&first).for_each(|(a, b)| *a += b);
        }
        self.finish(replay, machine, &eliminate, &row_bytes, root_tail)
    }
}

/// Which of `len` consecutive steps window `window` samples: `len {window phi}` (`phi` the
/// golden ratio's fraction), spread evenly and never in step with a periodic distribution.
fn sample_offset(window: usize, len: usize) -> usize {
    const PHI: f64 = 0.618_033_988_749_894_9;
    (((window as f64 * PHI).fract() * len as f64) as usize).min(len.saturating_sub(1))
}

/// The blocked distribution the GE model replays: the owner of each of the `B` blocks and
/// each node's rows in all (the last block is shorter when `b` does not divide `N`).
struct BlockLayout {
    owners: Vec<usize>,
    total: Vec<usize>,
}

impl BlockLayout {
    fn new(n: usize, block: usize, machine: &Machine) -> Result<Self> {
        let p = machine.p();
        let owners = cyclic_owners(n.div_ceil(block), &speeds(machine))?;
        let last_owner = *owners.last().expect("N >= 1");
        let total = rows_of_blocks(&owned_rows(&owners, p), block, n, last_owner);
        Ok(Self { owners, total })
    }
}

/// Rows of `blocks[j]` blocks of `b` rows for each node `j`, counting the last block (of
/// `N - (B - 1) b` rows, `last_owner`'s) among them when its owner has any.
fn rows_of_blocks(blocks: &[usize], b: usize, n: usize, last_owner: usize) -> Vec<usize> {
    let short = n.div_ceil(b) * b - n;
    blocks
        .iter()
        .enumerate()
        .map(|(j, &count)| {
            let rows = count * b;
            if j == last_owner {
                rows.saturating_sub(short)
            } else {
                rows
            }
        })
        .collect()
}

/// Bytes of `rows[j]` rows of `[A | b]` for each node `j`.
fn rows_bytes(rows: &[usize], n: usize) -> Vec<f64> {
    rows.iter()
        .map(|&rows| rows as f64 * (n as f64 + 1.0) * F64)
        .collect()
}

/// Node-steps the GE model replays exactly; beyond, it replays every `stride`-th elimination
/// step and charges it for the `stride` steps it stands for, so a prediction at thousands of
/// nodes and N in the millions takes milliseconds. (The kernels' tests and the default study
/// stay below it, where the model is exact.)
pub(super) const EXACT_REPLAY_NODE_STEPS: usize = 100_000;

pub(super) fn replay_stride(n: usize, p: usize) -> usize {
    (n.saturating_mul(p))
        .div_ceil(EXACT_REPLAY_NODE_STEPS)
        .max(1)
}

/// The elimination steps `i < N - 1` the GE model replays, each with its pivot row's owner and
/// the rows every node still holds after it. With stride 1 they follow the exact cyclic
/// distribution; with a larger stride every `stride`-th step comes from the distribution's
/// prefix property (any first `i` rows are split in proportion to speed, within one row),
/// in O(p) per step instead of building all `N` owners.
struct EliminationSteps {
    n: usize,
    stride: usize,
    next: usize,
    /// Rows each node holds in all.
    total: Vec<usize>,
    shares: Vec<f64>,
    /// Exact owners, when the stride is 1.
    owners: Option<Vec<usize>>,
    remaining: Vec<usize>,
}

impl EliminationSteps {
    fn new(n: usize, speeds: &[f64], stride: usize) -> Result<Self> {
        let owners = (stride == 1)
            .then(|| cyclic_owners(n, speeds))
            .transpose()?;
        let total = match &owners {
            Some(owners) => owned_rows(owners, speeds.len()),
            None => hetscale_model::hbsp::integer_shares(n, speeds)?,
        };
        let sum: f64 = speeds.iter().sum();
        Ok(Self {
            n,
            stride,
            next: 0,
            remaining: total.clone(),
            shares: speeds.iter().map(|s| s / sum).collect(),
            total,
            owners,
        })
    }

    /// The owner of row `i`: exact with stride 1, else by the prefix property (the node
    /// whose share of the first rows grows from `i` to `i + 1`).
    fn owner(&self, i: usize) -> usize {
        match &self.owners {
            Some(owners) => owners[i],
            None => {
                let (before, after) = (self.prefix(i), self.prefix(i + 1));
                (0..before.len())
                    .find(|&j| after[j] > before[j])
                    .unwrap_or_else(|| fastest(&self.shares))
            }
        }
    }

    /// Rows of the first `i` each node holds, by the prefix property.
    fn prefix(&self, i: usize) -> Vec<usize> {
        self.shares
            .iter()
            .zip(&self.total)
            .map(|(c, &t)| ((i as f64 * c).floor() as usize).min(t))
            .collect()
    }
}

impl Iterator for EliminationSteps {
    type Item = (usize, usize, Vec<usize>);

    fn next(&mut self) -> Option<Self::Item> {
        let i = self.next;
        if i + 1 >= self.n {
            return None;
        }
        self.next += self.stride;
        let owner = match &self.owners {
            Some(owners) => {
                self.remaining[owners[i]] -= 1;
                owners[i]
            }
            None => {
                let after = self.prefix(i + 1);
                self.remaining = self.total.iter().zip(&after).map(|(t, a)| t - a).collect();
                self.owner(i)
            }
        };
        Some((i, owner, self.remaining.clone()))
    }
}
