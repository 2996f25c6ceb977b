//! Collective operations, each returning its result and its predicted HBSP^1 cost.
//!
//! Every node of the run must call the same collective with the same root and the same
//! globally known sizes; a disagreement ends the run with [`HbspError::Mismatch`](crate::HbspError::Mismatch). Collectives
//! use their own message channel, so the user's queue is left alone; they start and end on a
//! superstep boundary (messages the user sent before the call are delivered by its first
//! `sync`).
//!
//! Costs are in seconds on the machine's HBSP^1 model (`g`, `r_j`, `L(p)`; `o` is not part of
//! HBSP^1), for the exact traffic the implementation generates, with `n` items of `T` counted
//! as `n * size_of::<T>()` bytes. Like BSPlib and LPF, each function documents its cost; below,
//! `h_j = max(bytes sent, bytes received)` of node `j`, `f` is the root, and
//! `cost(h) = g max_j (r_j h_j) + L`.
//!
//! | collective | supersteps | cost |
//! |---|---|---|
//! | [`scatter`], [`scatterv`] | 1 | `g max(r_f (n - n_f), max_j r_j n_j) + L`; balanced from the fastest root: `<= g n + L` |
//! | [`gather`], [`gatherv`] | 1 | the same with the roles reversed |
//! | [`broadcast`] one-phase | 1 | `g r_f (p - 1) n + L` (paper: `g n p + L`) |
//! | [`broadcast`] two-phase | 2 | scatter + allgather of pieces `<= g n (1 + r_s) + 2L` |
//! | [`reduce`] | 1 | `g max(r_f (p - 1) n, max_j r_j n) + L` |
//! | [`allreduce`] | 2 | reduce-scatter + allgather of balanced pieces, about `2 g r_s n + 2L` |
//! | [`allgather`] | 1 | `g max_j r_j max(n_j (p - 1), n - n_j) + L` |
//! | [`alltoall`], [`alltoallv`] | 1 | `g max_j r_j max(sum_k n_jk, sum_i n_ij) + L` |
//!
//! [`scatterv_in_place`] and [`broadcast_in_place`] are [`scatterv`] and [`broadcast`] whose
//! root keeps its data where it is (MPI's `MPI_IN_PLACE`): its value borrows the input, a
//! `Cow`, instead of a copy; same supersteps, messages and cost.
//!
//! [`scatterv_zeros`], [`gatherv_zeros`], [`broadcast_zeros`] and [`alltoallv_zeros`] are
//! their namesakes for a program that never reads the values (a sim skeleton run): the same
//! supersteps, messages, costs and traces, with payloads that are lengths only, so they take
//! no memory of the data's size.

use std::borrow::Cow;

use bytemuck::Pod;
use hetscale_model::hbsp as model;

use crate::backend::{Call, Load, Native};
use crate::ctx::{CostKey, Ctx, Traffic};
use crate::error::Result;

/// A collective's result and its predicted cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Collective<T> {
    /// The result on this node.
    pub value: T,
    /// The HBSP^1 cost of the whole operation, s; the same on every node.
    pub predicted_s: f64,
}

impl<T: Clone> Collective<Cow<'_, [T]>> {
    /// The result as a vector of its own (a copy where it borrowed the root's data).
    pub fn into_owned(self) -> Collective<Vec<T>> {
        Collective {
            value: self.value.into_owned(),
            predicted_s: self.predicted_s,
        }
    }
}

/// The node that distributes or collects the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Root {
    /// The node of highest marked speed (HBSPlib `hbsp_get_rank(1)`); the default.
    #[default]
    Fastest,
    /// The node of lowest marked speed (`hbsp_get_rank(p)`).
    Slowest,
    /// A given pid.
    Pid(usize),
}

impl From<usize> for Root {
    fn from(pid: usize) -> Self {
        Self::Pid(pid)
    }
}

/// How [`broadcast`] moves the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BroadcastAlgorithm {
    /// The root sends all `n` items to every node: one superstep.
    OnePhase,
    /// The root scatters balanced pieces, then every node sends its piece to the others.
    TwoPhase,
    /// Whichever of the two has the lower predicted cost on this machine; the default.
    #[default]
    Auto,
}

/// The name of every collective this module implements: what a platform's measured
/// `[[network.collective]]` and `[[machine.collective]]` entries may name.
pub const NAMES: [&str; 10] = [
    "broadcast",
    "scatter",
    "scatterv",
    "gather",
    "gatherv",
    "allgather",
    "reduce",
    "allreduce",
    "alltoall",
    "alltoallv",
];

const ONE_PHASE: u32 = 1;
const TWO_PHASE: u32 = 2;

fn resolve_root(ctx: &Ctx<'_>, root: Root) -> Result<usize> {
    match root {
        Root::Fastest => ctx.rank(1),
        Root::Slowest => ctx.rank(ctx.nprocs()),
        Root::Pid(pid) if pid < ctx.nprocs() => Ok(pid),
        Root::Pid(pid) => Err(ctx.misuse(format!(
            "root {pid} is not a pid: pids run from 0 to {}",
            ctx.nprocs() - 1
        ))),
    }
}

/// Bytes of `items` items of `T`; `usize::MAX` if that overflows (a zeros collective then
/// refuses it).
fn item_bytes<T>(items: usize) -> usize {
    items.saturating_mul(std::mem::size_of::<T>())
}

fn bytes<T>(items: usize) -> f64 {
    (items * std::mem::size_of::<T>()) as f64
}

fn byte_counts<T>(counts: &[usize]) -> Vec<f64> {
    counts.iter().map(|&c| bytes::<T>(c)).collect()
}

fn check_counts(ctx: &Ctx<'_>, what: &str, counts: &[usize]) -> Result<()> {
    if counts.len() == ctx.nprocs() {
        Ok(())
    } else {
        Err(ctx.misuse(format!(
            "{what}: counts has {} entries; give one per node ({})",
            counts.len(),
            ctx.nprocs()
        )))
    }
}

/// Start of each node's block in a buffer laid out by `counts` (exclusive prefix sums).
pub fn offsets(counts: &[usize]) -> Vec<usize> {
    counts
        .iter()
        .scan(0, |acc, &c| {
            let start = *acc;
            *acc += c;
            Some(start)
        })
        .collect()
}

/// Scatters `data` (significant at the root only) in balanced shares: node `j` receives
/// `c_j n` items (largest remainder, so the shares sum to `n`), in pid order.
///
/// Cost: one superstep, `g max(r_f (n - n_f), max_j r_j n_j) + L` bytes-wise; from the fastest
/// root with balanced shares this is at most the paper's `g n + L`.
pub fn scatter<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: Root,
    data: &[T],
) -> Result<Collective<Vec<T>>> {
    let root = resolve_root(ctx, root)?;
    let call = Call::Collective {
        name: "scatter",
        root: Some(root),
        shape: vec![],
        phase: 0,
    };
    let (n, value) = if native_scatter::<T>(ctx) {
        let machine = ctx.machine();
        scatter_natively(ctx, &call, root, data, &|n| machine.balanced_counts(n))?
    } else {
        if ctx.pid() == root {
            let counts = ctx.balanced_counts(data.len());
            send_pieces(ctx, root, data, &counts, data.len() as u64)?;
        }
        ctx.sync_as(&call)?;
        let n = if ctx.pid() == root {
            data.len()
        } else {
            received_total(ctx)?
        };
        let counts = ctx.shared_counts(n);
        (n, own_or_received(ctx, root, data, &counts)?.into_owned())
    };
    let counts = ctx.shared_counts(n);
    let key = CostKey {
        collective: "scatter",
        variant: 0,
        root,
        items: n,
        item_bytes: std::mem::size_of::<T>(),
    };
    let predicted_s = ctx.remembered_cost(key, || {
        Ok(model::scatter_cost(
            ctx.cost_model(),
            root,
            &byte_counts::<T>(&counts),
        )?)
    })?;
    Ok(Collective { value, predicted_s })
}

/// Scatters `data` (significant at the root only): node `j` receives `counts[j]` items, in pid
/// order. Every node passes the same `counts`; at the root they must sum to `data.len()`.
///
/// Cost: one superstep, as [`scatter`] with `n_j = counts[j]`.
pub fn scatterv<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: Root,
    data: &[T],
    counts: &[usize],
) -> Result<Collective<Vec<T>>> {
    scatterv_in_place(ctx, root, data, counts).map(Collective::into_owned)
}

/// [`scatterv`] whose root keeps its piece in place (MPI's `MPI_IN_PLACE`): its value
/// borrows `data` instead of copying it, which for megabytes saves the copy and the page
/// faults of a fresh vector. Other nodes get their piece as a vector, as from [`scatterv`].
///
/// Cost: as [`scatterv`].
pub fn scatterv_in_place<'d, T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: Root,
    data: &'d [T],
    counts: &[usize],
) -> Result<Collective<Cow<'d, [T]>>> {
    let root = resolve_root(ctx, root)?;
    check_counts(ctx, "scatterv", counts)?;
    let call = scatterv_call(root, counts);
    if ctx.pid() == root {
        let total: usize = counts.iter().sum();
        if total != data.len() {
            return Err(ctx.misuse(format!(
                "scatterv: the counts add up to {total} items but the root has {} to hand out; \
                 give counts that add up to the root's data length",
                data.len()
            )));
        }
    }
    let value = if native_scatter::<T>(ctx) {
        Cow::Owned(scatter_natively(ctx, &call, root, data, &|_| counts.to_vec())?.1)
    } else {
        if ctx.pid() == root {
            send_pieces(ctx, root, data, counts, data.len() as u64)?;
        }
        ctx.sync_as(&call)?;
        own_or_received(ctx, root, data, counts)?
    };
    let predicted_s = model::scatter_cost(ctx.cost_model(), root, &byte_counts::<T>(counts))?;
    Ok(Collective { value, predicted_s })
}

fn scatterv_call(root: usize, counts: &[usize]) -> Call {
    Call::Collective {
        name: "scatterv",
        root: Some(root),
        shape: counts.to_vec(),
        phase: 0,
    }
}

/// Root side of a scatter: one message per other node, empty ones included, so every node
/// learns `n` from the message's meta.
fn send_pieces<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: usize,
    data: &[T],
    counts: &[usize],
    n: u64,
) -> Result<()> {
    for (to, (start, count)) in offsets(counts)
        .into_iter()
        .zip(counts.iter().copied())
        .enumerate()
    {
        if to != root {
            ctx.send_internal(to, 0, n, data[start..start + count].to_vec())?;
        }
    }
    Ok(())
}

/// The total `n` a scatter's root sent along with the pieces (without taking them).
fn received_total(ctx: &mut Ctx<'_>) -> Result<usize> {
    match ctx.internal_meta() {
        Some(n) => Ok(n as usize),
        None => Err(ctx.misuse("scatter: no piece arrived from the root".into())),
    }
}

/// The root's own piece, or the one piece a non-root received.
fn own_or_received<'d, T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: usize,
    data: &'d [T],
    counts: &[usize],
) -> Result<Cow<'d, [T]>> {
    if ctx.pid() == root {
        let start = offsets(counts)[root];
        return Ok(Cow::Borrowed(&data[start..start + counts[root]]));
    }
    let mut messages = ctx.take_internal::<T>()?;
    match messages.pop() {
        Some((message, _)) if messages.is_empty() => Ok(Cow::Owned(message.into_data())),
        _ => Err(ctx.misuse("scatter: expected exactly one piece from the root".into())),
    }
}

/// Gathers balanced shares of `n` items at the root: node `j` passes exactly its share
/// `ctx.balanced_counts(n)[j]` (what [`scatter`] gave it); the root gets the concatenation in
/// pid order, the other nodes `None`.
///
/// Cost: one superstep, `g max(r_f (n - n_f), max_j r_j n_j) + L`.
pub fn gather<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: Root,
    data: &[T],
    n: usize,
) -> Result<Collective<Option<Vec<T>>>> {
    let counts = ctx.balanced_counts(n);
    gather_counts(ctx, "gather", root, data, &counts)
}

/// Gathers `counts[j]` items from each node `j` at the root, which gets the concatenation in
/// pid order; the other nodes get `None`. Every node passes the same `counts`.
///
/// Cost: one superstep, as [`gather`] with `n_j = counts[j]`.
pub fn gatherv<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: Root,
    data: &[T],
    counts: &[usize],
) -> Result<Collective<Option<Vec<T>>>> {
    gather_counts(ctx, "gatherv", root, data, counts)
}

fn gather_counts<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    name: &'static str,
    root: Root,
    data: &[T],
    counts: &[usize],
) -> Result<Collective<Option<Vec<T>>>> {
    let root = resolve_root(ctx, root)?;
    check_counts(ctx, name, counts)?;
    let mine = counts[ctx.pid()];
    if data.len() != mine {
        return Err(ctx.misuse(format!(
            "{name}: this node passed {} items but its count is {mine}",
            data.len()
        )));
    }
    let call = gather_call(name, root, counts);
    if ctx.pid() != root {
        ctx.send_internal(root, 0, 0, data.to_vec())?;
    }
    ctx.sync_as(&call)?;
    let value = if ctx.pid() == root {
        Some(assemble(ctx, root, data)?)
    } else {
        None
    };
    let predicted_s = model::gather_cost(ctx.cost_model(), root, &byte_counts::<T>(counts))?;
    Ok(Collective { value, predicted_s })
}

fn gather_call(name: &'static str, root: usize, counts: &[usize]) -> Call {
    Call::Collective {
        name,
        root: Some(root),
        shape: counts.to_vec(),
        phase: 0,
    }
}

/// Concatenates the received pieces with this node's own at position `own`, in pid order.
fn assemble<T: Pod + Send>(ctx: &mut Ctx<'_>, own: usize, data: &[T]) -> Result<Vec<T>> {
    let mut pieces = ctx.take_internal::<T>()?;
    let at = pieces
        .iter()
        .position(|(m, _)| m.source > own)
        .unwrap_or(pieces.len());
    let mut out = Vec::new();
    for (message, _) in pieces.drain(..at) {
        out.extend_from_slice(&message.data);
    }
    out.extend_from_slice(data);
    for (message, _) in pieces {
        out.extend_from_slice(&message.data);
    }
    Ok(out)
}

/// Broadcasts `data` (significant at the root only) to every node.
///
/// - One-phase: the root sends all `n` items to each other node. Cost: one superstep,
///   `g r_f (p - 1) n + L` (the paper's `g n p + L`).
/// - Two-phase: the root scatters balanced pieces (`c_j n` items), then each node sends its
///   piece to every node but the root. Cost: two supersteps, at most `g n (1 + r_s) + 2L`.
/// - Auto: the root picks the one of lower predicted cost.
pub fn broadcast<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: Root,
    data: &[T],
    algorithm: BroadcastAlgorithm,
) -> Result<Collective<Vec<T>>> {
    broadcast_in_place(ctx, root, data, algorithm).map(Collective::into_owned)
}

/// [`broadcast`] whose root keeps its data in place: its value borrows `data` instead of
/// copying it (on backends with a native broadcast, which hand every node a vector, it is a
/// vector there too). Other nodes get a vector, as from [`broadcast`].
///
/// Cost: as [`broadcast`].
pub fn broadcast_in_place<'d, T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: Root,
    data: &'d [T],
    algorithm: BroadcastAlgorithm,
) -> Result<Collective<Cow<'d, [T]>>> {
    let root = resolve_root(ctx, root)?;
    let call = broadcast_call(root, algorithm);
    if ctx.has_native_broadcast() && std::mem::size_of::<T>() > 0 {
        let native = broadcast_natively(ctx, &call, root, Items::Values(data), algorithm)?.1;
        return Ok(Collective {
            value: Cow::Owned(native.value),
            predicted_s: native.predicted_s,
        });
    }
    let (tag, n, piece) = if ctx.pid() == root {
        let chosen = choose_broadcast::<T>(ctx, root, data.len(), algorithm)?;
        broadcast_first_phase(ctx, root, data, chosen)?;
        ctx.sync_as(&call)?;
        // The root's own piece, which only the second phase sends on.
        let piece = if chosen == ONE_PHASE {
            Vec::new()
        } else {
            let counts = ctx.balanced_counts(data.len());
            let start = offsets(&counts)[root];
            data[start..start + counts[root]].to_vec()
        };
        (chosen, data.len(), piece)
    } else {
        ctx.sync_as(&call)?;
        let mut messages = ctx.take_internal::<T>()?;
        match messages.pop() {
            Some((m, n)) if messages.is_empty() => (m.tag, n as usize, m.into_data()),
            _ => {
                return Err(
                    ctx.misuse("broadcast: expected exactly one message from the root".into())
                );
            }
        }
    };
    let predicted_s = broadcast_cost::<T>(ctx, root, n, tag)?;
    let value = match (tag, ctx.pid() == root) {
        (ONE_PHASE, true) => Cow::Borrowed(data),
        (ONE_PHASE, false) => Cow::Owned(piece),
        _ => broadcast_second_phase(ctx, root, &call, data, piece)?,
    };
    Ok(Collective { value, predicted_s })
}

fn broadcast_call(root: usize, algorithm: BroadcastAlgorithm) -> Call {
    Call::Collective {
        name: "broadcast",
        root: Some(root),
        shape: vec![algorithm as usize],
        phase: 0,
    }
}

fn choose_broadcast<T>(
    ctx: &Ctx<'_>,
    root: usize,
    n: usize,
    algorithm: BroadcastAlgorithm,
) -> Result<u32> {
    Ok(match algorithm {
        BroadcastAlgorithm::OnePhase => ONE_PHASE,
        BroadcastAlgorithm::TwoPhase => TWO_PHASE,
        BroadcastAlgorithm::Auto => {
            let one = broadcast_cost::<T>(ctx, root, n, ONE_PHASE)?;
            let two = broadcast_cost::<T>(ctx, root, n, TWO_PHASE)?;
            if two < one { TWO_PHASE } else { ONE_PHASE }
        }
    })
}

/// Cost of broadcasting `n` items of `T` from `root` with the algorithm `tag`.
fn broadcast_cost<T>(ctx: &Ctx<'_>, root: usize, n: usize, tag: u32) -> Result<f64> {
    let key = CostKey {
        collective: "broadcast",
        variant: tag,
        root,
        items: n,
        item_bytes: std::mem::size_of::<T>(),
    };
    ctx.remembered_cost(key, || {
        let m = ctx.cost_model();
        if tag == ONE_PHASE {
            return Ok(model::one_phase_broadcast_cost(m, root, bytes::<T>(n))?);
        }
        let pieces = byte_counts::<T>(&ctx.shared_counts(n));
        let second = model::Traffic::each_to_all(&pieces, Some(root));
        Ok(model::scatter_cost(m, root, &pieces)? + m.traffic_cost(0.0, &second)?)
    })
}

fn broadcast_first_phase<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: usize,
    data: &[T],
    tag: u32,
) -> Result<()> {
    let n = data.len() as u64;
    if tag == ONE_PHASE {
        for to in (0..ctx.nprocs()).filter(|&to| to != root) {
            ctx.send_internal(to, ONE_PHASE, n, data.to_vec())?;
        }
        return Ok(());
    }
    let counts = ctx.balanced_counts(data.len());
    for (to, (start, count)) in offsets(&counts)
        .into_iter()
        .zip(counts.iter().copied())
        .enumerate()
    {
        if to != root {
            ctx.send_internal(to, TWO_PHASE, n, data[start..start + count].to_vec())?;
        }
    }
    Ok(())
}

fn broadcast_second_phase<'d, T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: usize,
    call: &Call,
    data: &'d [T],
    piece: Vec<T>,
) -> Result<Cow<'d, [T]>> {
    let me = ctx.pid();
    if !piece.is_empty() {
        for to in (0..ctx.nprocs()).filter(|&to| to != root && to != me) {
            ctx.send_internal(to, TWO_PHASE, 0, piece.clone())?;
        }
    }
    ctx.sync_as(&call.next_phase())?;
    if me == root {
        return Ok(Cow::Borrowed(data));
    }
    assemble(ctx, me, &piece).map(Cow::Owned)
}

/// Reduces equal-length vectors elementwise at the root with `op`, folding in pid order
/// (`x_0 op x_1 op ...`, so the result is deterministic); the other nodes get `None`.
///
/// Cost: one superstep, `g max(r_f (p - 1) n, max_j r_j n) + L` for `n` bytes per node.
pub fn reduce<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: Root,
    data: &[T],
    op: impl Fn(T, T) -> T,
) -> Result<Collective<Option<Vec<T>>>> {
    let root = resolve_root(ctx, root)?;
    let call = Call::Collective {
        name: "reduce",
        root: Some(root),
        shape: vec![data.len()],
        phase: 0,
    };
    if ctx.pid() != root {
        ctx.send_internal(root, 0, 0, data.to_vec())?;
    }
    ctx.sync_as(&call)?;
    let value = if ctx.pid() == root {
        let vectors = ordered_vectors(ctx, data)?;
        Some(fold(&vectors, &op))
    } else {
        None
    };
    let key = CostKey {
        collective: "reduce",
        variant: 0,
        root,
        items: data.len(),
        item_bytes: std::mem::size_of::<T>(),
    };
    let predicted_s = ctx.remembered_cost(key, || {
        Ok(model::reduce_cost(
            ctx.cost_model(),
            root,
            bytes::<T>(data.len()),
        )?)
    })?;
    Ok(Collective { value, predicted_s })
}

/// This node's vector and the received ones, in pid order.
fn ordered_vectors<T: Pod + Send>(ctx: &mut Ctx<'_>, own: &[T]) -> Result<Vec<Vec<T>>> {
    let me = ctx.pid();
    let mut vectors: Vec<(usize, Vec<T>)> = ctx
        .take_internal::<T>()?
        .into_iter()
        .map(|(m, _)| (m.source, m.into_data()))
        .collect();
    vectors.push((me, own.to_vec()));
    vectors.sort_by_key(|(source, _)| *source);
    Ok(vectors.into_iter().map(|(_, v)| v).collect())
}

fn fold<T: Pod>(vectors: &[Vec<T>], op: &impl Fn(T, T) -> T) -> Vec<T> {
    let mut acc = vectors[0].clone();
    for v in &vectors[1..] {
        for (a, &b) in acc.iter_mut().zip(v) {
            *a = op(*a, b);
        }
    }
    acc
}

/// Reduces equal-length vectors elementwise with `op` and gives every node the result:
/// node `j` reduces the balanced piece `j` (folding in pid order), then the pieces are
/// allgathered.
///
/// Cost: two supersteps: an all-to-all of the pieces plus an allgather of them
/// (`hetscale_model::hbsp::allreduce_cost`), about `2 g r_s n + 2L`.
pub fn allreduce<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    data: &[T],
    op: impl Fn(T, T) -> T,
) -> Result<Collective<Vec<T>>> {
    let call = Call::Collective {
        name: "allreduce",
        root: None,
        shape: vec![data.len()],
        phase: 0,
    };
    // The shared split's holders: on n < p items only they send in the second superstep,
    // and no node walks all p pids, which p nodes would make O(p^2) per allreduce.
    let split = ctx.shared_counts(data.len());
    let (counts, starts) = (&split.counts, &split.starts);
    let me = ctx.pid();
    for &to in split.holders.iter().filter(|&&to| to != me) {
        ctx.send_internal(to, 0, 0, data[starts[to]..starts[to] + counts[to]].to_vec())?;
    }
    ctx.sync_as(&call)?;
    let own = &data[starts[me]..starts[me] + counts[me]];
    let reduced = fold(&ordered_vectors(ctx, own)?, &op);
    if !reduced.is_empty() {
        for to in (0..ctx.nprocs()).filter(|&to| to != me) {
            ctx.send_internal(to, 0, 0, reduced.clone())?;
        }
    }
    ctx.sync_as(&call.next_phase())?;
    let value = assemble(ctx, me, &reduced)?;
    let key = CostKey {
        collective: "allreduce",
        variant: 0,
        root: 0,
        items: data.len(),
        item_bytes: std::mem::size_of::<T>(),
    };
    let predicted_s = ctx.remembered_cost(key, || {
        Ok(model::allreduce_cost(
            ctx.cost_model(),
            &byte_counts::<T>(counts),
        )?)
    })?;
    Ok(Collective { value, predicted_s })
}

/// Gives every node every node's `data` (any lengths): `value[j]` is node `j`'s vector.
///
/// Cost: one superstep, `g max_j r_j max(n_j (p - 1), n - n_j) + L`.
pub fn allgather<T: Pod + Send>(ctx: &mut Ctx<'_>, data: &[T]) -> Result<Collective<Vec<Vec<T>>>> {
    let call = Call::Collective {
        name: "allgather",
        root: None,
        shape: vec![],
        phase: 0,
    };
    let me = ctx.pid();
    for to in (0..ctx.nprocs()).filter(|&to| to != me) {
        ctx.send_internal(to, 0, 0, data.to_vec())?;
    }
    ctx.sync_as(&call)?;
    let value = ordered_vectors(ctx, data)?;
    let sizes: Vec<usize> = value.iter().map(Vec::len).collect();
    let predicted_s = model::allgather_cost(ctx.cost_model(), &byte_counts::<T>(&sizes))?;
    Ok(Collective { value, predicted_s })
}

/// Personalised all-to-all with one block length `b` everywhere: `blocks[j]` (length `b`) goes
/// to node `j`; `value[i]` is the block node `i` sent here.
///
/// Cost: one superstep, `g b (p - 1) max_j r_j + L`.
pub fn alltoall<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    blocks: &[Vec<T>],
) -> Result<Collective<Vec<Vec<T>>>> {
    let b = blocks.first().map_or(0, Vec::len);
    if blocks.iter().any(|block| block.len() != b) {
        return Err(
            ctx.misuse("alltoall: blocks differ in length; use alltoallv for uneven blocks".into())
        );
    }
    let counts = vec![vec![b; ctx.nprocs()]; ctx.nprocs()];
    exchange_blocks(ctx, "alltoall", blocks, &counts)
}

/// Personalised all-to-all with uneven blocks: `counts[i][j]` items go from node `i` to node
/// `j`; every node passes the same `counts` and its own row of `blocks`.
///
/// Cost: one superstep, `g max_j r_j max(sum_k n_jk, sum_i n_ij) + L` (self-blocks excluded).
pub fn alltoallv<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    blocks: &[Vec<T>],
    counts: &[Vec<usize>],
) -> Result<Collective<Vec<Vec<T>>>> {
    exchange_blocks(ctx, "alltoallv", blocks, counts)
}

fn exchange_blocks<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    name: &'static str,
    blocks: &[Vec<T>],
    counts: &[Vec<usize>],
) -> Result<Collective<Vec<Vec<T>>>> {
    let (p, me) = (ctx.nprocs(), ctx.pid());
    check_square_counts(ctx, name, counts)?;
    let mine: Vec<usize> = blocks.iter().map(Vec::len).collect();
    if counts[me] != mine {
        return Err(ctx.misuse(format!(
            "{name}: this node's blocks have lengths {mine:?} but its row of counts is {:?}; pass one block per node, as counted",
            counts[me]
        )));
    }
    let call = exchange_call(name, counts);
    for (to, block) in blocks
        .iter()
        .enumerate()
        .filter(|(to, b)| *to != me && !b.is_empty())
    {
        ctx.send_internal(to, 0, 0, block.clone())?;
    }
    ctx.sync_as(&call)?;
    let mut value: Vec<Vec<T>> = vec![Vec::new(); p];
    for (message, _) in ctx.take_internal::<T>()? {
        let source = message.source;
        value[source] = message.into_data();
    }
    value[me] = blocks[me].clone();
    let predicted_s = alltoall_cost::<T>(ctx, counts)?;
    Ok(Collective { value, predicted_s })
}

fn check_square_counts(ctx: &Ctx<'_>, name: &str, counts: &[Vec<usize>]) -> Result<()> {
    let p = ctx.nprocs();
    if counts.len() != p || counts.iter().any(|row| row.len() != p) {
        return Err(ctx.misuse(format!(
            "{name}: counts must be a {p} x {p} matrix (one row per sending node)"
        )));
    }
    Ok(())
}

fn exchange_call(name: &'static str, counts: &[Vec<usize>]) -> Call {
    Call::Collective {
        name,
        root: None,
        shape: counts.concat(),
        phase: 0,
    }
}

fn alltoall_cost<T>(ctx: &Ctx<'_>, counts: &[Vec<usize>]) -> Result<f64> {
    let bytes_matrix: Vec<Vec<f64>> = counts.iter().map(|row| byte_counts::<T>(row)).collect();
    Ok(model::alltoall_cost(ctx.cost_model(), &bytes_matrix)?)
}

// Collectives of zeros: for a program that never reads the values it moves (a sim skeleton
// run). Each makes the supersteps, messages and calls of its namesake for the same counts, so
// every backend charges and traces it bit for bit as the namesake, but every payload is a
// length that owns no memory (see `Ctx::send_zeros`) and receivers learn only how many items
// they would have received: memory does not grow with the data.

/// [`scatterv`] of `counts[j]` items of `T` to each node `j`, without the items: returns
/// this node's count.
pub fn scatterv_zeros<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: Root,
    counts: &[usize],
) -> Result<Collective<usize>> {
    let root = resolve_root(ctx, root)?;
    check_counts(ctx, "scatterv", counts)?;
    if ctx.pid() == root {
        // As `send_pieces`: a message to every other node, empty ones included.
        // Saturating: a skeleton's absurd counts are refused by the send, not overflowed here.
        let total = counts.iter().fold(0usize, |a, &c| a.saturating_add(c)) as u64;
        for (to, &count) in counts.iter().enumerate().filter(|&(to, _)| to != root) {
            ctx.send_internal_zeros(to, 0, total, item_bytes::<T>(count))?;
        }
    }
    ctx.sync_as(&scatterv_call(root, counts))?;
    ctx.discard_internal();
    let predicted_s = model::scatter_cost(ctx.cost_model(), root, &byte_counts::<T>(counts))?;
    Ok(Collective {
        value: counts[ctx.pid()],
        predicted_s,
    })
}

/// [`gatherv`] of `counts[j]` items of `T` from each node `j`, without the items: the root
/// gets the total count, the other nodes `None`.
pub fn gatherv_zeros<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: Root,
    counts: &[usize],
) -> Result<Collective<Option<usize>>> {
    let root = resolve_root(ctx, root)?;
    check_counts(ctx, "gatherv", counts)?;
    let me = ctx.pid();
    if me != root {
        ctx.send_internal_zeros(root, 0, 0, item_bytes::<T>(counts[me]))?;
    }
    ctx.sync_as(&gather_call("gatherv", root, counts))?;
    ctx.discard_internal();
    let predicted_s = model::gather_cost(ctx.cost_model(), root, &byte_counts::<T>(counts))?;
    Ok(Collective {
        value: (me == root).then(|| counts.iter().sum()),
        predicted_s,
    })
}

/// [`broadcast`] of `n` items of `T` (`n` significant at the root only), without the items:
/// returns `n` on every node.
pub fn broadcast_zeros<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    root: Root,
    n: usize,
    algorithm: BroadcastAlgorithm,
) -> Result<Collective<usize>> {
    let root = resolve_root(ctx, root)?;
    let call = broadcast_call(root, algorithm);
    if ctx.pid() == root {
        ctx.check_zeros(item_bytes::<T>(n))?;
    }
    if ctx.has_native_broadcast() && std::mem::size_of::<T>() > 0 {
        let (n, sent) = broadcast_natively::<T>(ctx, &call, root, Items::Count(n), algorithm)?;
        return Ok(Collective {
            value: n,
            predicted_s: sent.predicted_s,
        });
    }
    let me = ctx.pid();
    let (tag, n) = if me == root {
        let tag = choose_broadcast::<T>(ctx, root, n, algorithm)?;
        // As `broadcast_first_phase`: all items to each node, or each its balanced piece.
        let split = ctx.shared_counts(n);
        for to in (0..ctx.nprocs()).filter(|&to| to != root) {
            let items = if tag == ONE_PHASE { n } else { split[to] };
            ctx.send_internal_zeros(to, tag, n as u64, item_bytes::<T>(items))?;
        }
        ctx.sync_as(&call)?;
        (tag, n)
    } else {
        ctx.sync_as(&call)?;
        let n = ctx.internal_meta().unwrap_or(0) as usize;
        match ctx.discard_internal()[..] {
            [piece] => (piece.tag, n),
            _ => {
                return Err(
                    ctx.misuse("broadcast: expected exactly one message from the root".into())
                );
            }
        }
    };
    if tag == TWO_PHASE {
        // As `broadcast_second_phase`: every node's non-empty piece to all but the root.
        let piece = item_bytes::<T>(ctx.shared_counts(n)[me]);
        if piece > 0 {
            for to in (0..ctx.nprocs()).filter(|&to| to != root && to != me) {
                ctx.send_internal_zeros(to, TWO_PHASE, 0, piece)?;
            }
        }
        ctx.sync_as(&call.next_phase())?;
        ctx.discard_internal();
    }
    let predicted_s = broadcast_cost::<T>(ctx, root, n, tag)?;
    Ok(Collective {
        value: n,
        predicted_s,
    })
}

/// [`alltoallv`] of `counts[i][j]` items of `T` from each node `i` to each node `j`,
/// without the items: `value[i]` is how many node `i` sent here.
pub fn alltoallv_zeros<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    counts: &[Vec<usize>],
) -> Result<Collective<Vec<usize>>> {
    check_square_counts(ctx, "alltoallv", counts)?;
    let me = ctx.pid();
    // As `exchange_blocks`: only non-empty blocks travel.
    for (to, &count) in counts[me].iter().enumerate() {
        if to != me && count > 0 {
            ctx.send_internal_zeros(to, 0, 0, item_bytes::<T>(count))?;
        }
    }
    ctx.sync_as(&exchange_call("alltoallv", counts))?;
    ctx.discard_internal();
    let predicted_s = alltoall_cost::<T>(ctx, counts)?;
    Ok(Collective {
        value: counts.iter().map(|row| row[me]).collect(),
        predicted_s,
    })
}

/// What a native broadcast's root moves: its values, or only how many (a broadcast of zeros).
enum Items<'a, T> {
    Values(&'a [T]),
    Count(usize),
}

impl<T> Items<'_, T> {
    fn len(&self) -> usize {
        match self {
            Self::Values(data) => data.len(),
            Self::Count(n) => *n,
        }
    }
}

// Native collectives: on a backend with collectives of its own (MPI), a collective whose
// result one of them computes calls it, and the trace counts the messages of the HBSP^1
// algorithm it stands for, so results, costs and traces are those of every other backend.

/// Whether a scatter moves natively: on a backend with collectives of its own, equal pieces
/// or not (the root sends every piece from its data and copies its own meanwhile; as
/// messages, packed and unpacked, uneven pieces took 2x longer).
fn native_scatter<T>(ctx: &Ctx<'_>) -> bool {
    ctx.has_native_collectives() && std::mem::size_of::<T>() > 0
}

/// A scatter by the backend's own collective: `counts(n)` gives every node's items of the
/// `n` the root holds. Returns `n` and this node's piece.
fn scatter_natively<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    call: &Call,
    root: usize,
    data: &[T],
    counts: &dyn Fn(usize) -> Vec<usize>,
) -> Result<(usize, Vec<T>)> {
    let size = std::mem::size_of::<T>();
    let me = ctx.pid();
    let source: &[u8] = if me == root {
        bytemuck::cast_slice(data)
    } else {
        &[]
    };
    let byte_counts =
        |bytes: usize| -> Vec<usize> { counts(bytes / size).iter().map(|&c| c * size).collect() };
    let native = Native::Scatter {
        root,
        source,
        counts: &byte_counts,
    };
    let (announced, value) = ctx.sync_native(call, native, |ctx, bytes| {
        let counts = byte_counts(bytes);
        Ok(scatter_traffic(ctx, root, |j| counts[j]))
    })?;
    Ok((announced / size, value))
}

/// The messages of a scatter of `counts` bytes from `root`, as [`send_pieces`] sends them.
fn scatter_traffic(ctx: &Ctx<'_>, root: usize, piece: impl Fn(usize) -> usize) -> Traffic {
    let me = ctx.pid();
    if me == root {
        Traffic {
            sent: (0..ctx.nprocs())
                .filter(|&to| to != root)
                .map(|to| (to, piece(to)))
                .collect(),
            ..Traffic::default()
        }
    } else {
        Traffic {
            received: vec![piece(me)],
            ..Traffic::default()
        }
    }
}

/// A broadcast by the backend's own collective; `algorithm` sets the predicted cost, what
/// the trace counts and what sim charges (two-phase: two supersteps, the second moving
/// nothing more).
/// Returns the number of items the root broadcast and what this node received.
fn broadcast_natively<T: Pod + Send>(
    ctx: &mut Ctx<'_>,
    call: &Call,
    root: usize,
    items: Items<'_, T>,
    algorithm: BroadcastAlgorithm,
) -> Result<(usize, Collective<Vec<T>>)> {
    let size = std::mem::size_of::<T>();
    let loads = if ctx.pid() == root {
        let tag = choose_broadcast::<T>(ctx, root, items.len(), algorithm)?;
        let pieces = broadcast_pieces::<T>(ctx, items.len(), tag);
        broadcast_loads(root, &pieces, tag)
    } else {
        Vec::new()
    };
    let is_root = ctx.pid() == root;
    let native = match items {
        Items::Values(data) => Native::Broadcast {
            root,
            source: if is_root {
                bytemuck::cast_slice(data)
            } else {
                &[]
            },
            loads: &loads,
        },
        Items::Count(n) => Native::BroadcastLength {
            root,
            bytes: if is_root { n * size } else { 0 },
            loads: &loads,
        },
    };
    let mut second = Traffic::default();
    let (announced, value) = ctx.sync_native(call, native, |ctx, bytes| {
        let n = bytes / size;
        let tag = choose_broadcast::<T>(ctx, root, n, algorithm)?;
        let pieces = broadcast_pieces::<T>(ctx, n, tag);
        if tag == TWO_PHASE {
            second = if ctx.tracing() {
                allgather_traffic(ctx, root, &pieces)
            } else {
                Traffic::totals(allgather_load(root, ctx.pid(), &pieces, bytes))
            };
        }
        Ok(scatter_traffic(ctx, root, |j| pieces.of(j)))
    })?;
    let n = announced / size;
    let tag = choose_broadcast::<T>(ctx, root, n, algorithm)?;
    if tag == TWO_PHASE {
        ctx.count_traffic(&second);
        ctx.sync_as(&call.next_phase())?;
    }
    let predicted_s = broadcast_cost::<T>(ctx, root, n, tag)?;
    Ok((n, Collective { value, predicted_s }))
}

/// Bytes of the piece each node gets from the root in a broadcast's first superstep: all
/// `n` items in one phase, the balanced share in two. Shared by the nodes, so a node
/// reading its own piece is O(1).
fn broadcast_pieces<T>(ctx: &Ctx<'_>, n: usize, tag: u32) -> Pieces {
    let size = std::mem::size_of::<T>();
    if tag == ONE_PHASE {
        Pieces::Equal {
            bytes: n * size,
            p: ctx.nprocs(),
        }
    } else {
        Pieces::Shares {
            split: ctx.shared_counts(n),
            item_bytes: size,
        }
    }
}

/// The pieces of a broadcast's first superstep, in bytes.
enum Pieces {
    /// Every node gets `bytes`.
    Equal { bytes: usize, p: usize },
    /// Node `j` gets `split[j]` items of `item_bytes`.
    Shares {
        split: std::sync::Arc<crate::ctx::Split>,
        item_bytes: usize,
    },
}

impl Pieces {
    fn len(&self) -> usize {
        match self {
            Self::Equal { p, .. } => *p,
            Self::Shares { split, .. } => split.counts.len(),
        }
    }

    fn of(&self, j: usize) -> usize {
        match self {
            Self::Equal { bytes, .. } => *bytes,
            Self::Shares { split, item_bytes } => split.counts[j] * item_bytes,
        }
    }

    /// Nodes whose piece is not empty.
    fn holders(&self) -> usize {
        match self {
            Self::Equal { bytes, p } => usize::from(*bytes > 0) * p,
            Self::Shares { split, .. } => split.holders.len(),
        }
    }
}

/// Every node's load in each superstep of a broadcast with `pieces` from `root`: the scatter
/// of the pieces, then (two-phase) their allgather; as the message path sends them.
fn broadcast_loads(root: usize, pieces: &Pieces, tag: u32) -> Vec<Vec<Load>> {
    let p = pieces.len();
    let first: Vec<Load> = (0..p)
        .map(|j| match j == root {
            true => Load {
                bytes_out: (0..p)
                    .filter(|&to| to != root)
                    .map(|to| pieces.of(to) as u64)
                    .sum(),
                messages_out: (p - 1) as u64,
                ..Load::default()
            },
            false => Load {
                bytes_in: pieces.of(j) as u64,
                messages_in: 1,
                ..Load::default()
            },
        })
        .collect();
    if tag == ONE_PHASE {
        return vec![first];
    }
    let total: usize = (0..p).map(|j| pieces.of(j)).sum();
    let second = (0..p)
        .map(|j| allgather_load(root, j, pieces, total))
        .collect();
    vec![first, second]
}

/// Node `me`'s load in a two-phase broadcast's second superstep, as
/// [`broadcast_second_phase`] sends it: every node with a piece sends it to every node but
/// the root and itself; `total` is the bytes of all pieces.
fn allgather_load(root: usize, me: usize, pieces: &Pieces, total: usize) -> Load {
    let p = pieces.len();
    let own = pieces.of(me) as u64;
    let receivers = if me == root {
        p - 1
    } else {
        p.saturating_sub(2)
    } as u64;
    let (bytes_out, messages_out) = if own > 0 {
        (own * receivers, receivers)
    } else {
        (0, 0)
    };
    let (bytes_in, messages_in) = if me == root {
        (0, 0)
    } else {
        (
            total as u64 - own,
            (pieces.holders() - usize::from(own > 0)) as u64,
        )
    };
    Load {
        bytes_out,
        messages_out,
        bytes_in,
        messages_in,
    }
}

/// The messages of a two-phase broadcast's second superstep, as
/// [`broadcast_second_phase`] sends them: every node, the root included, sends its non-empty
/// piece to every node but the root and itself.
fn allgather_traffic(ctx: &Ctx<'_>, root: usize, pieces: &Pieces) -> Traffic {
    let me = ctx.pid();
    let sent = if pieces.of(me) > 0 {
        (0..ctx.nprocs())
            .filter(|&to| to != root && to != me)
            .map(|to| (to, pieces.of(me)))
            .collect()
    } else {
        Vec::new()
    };
    let received = if me == root {
        Vec::new()
    } else {
        (0..ctx.nprocs())
            .filter(|&from| from != me && pieces.of(from) > 0)
            .map(|from| pieces.of(from))
            .collect()
    };
    Traffic {
        sent,
        received,
        ..Traffic::default()
    }
}
