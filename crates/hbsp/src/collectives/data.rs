//! The collectives on data: scatter, gather, broadcast, reduce, allreduce, allgather,
//! alltoall, each returning its result and its predicted HBSP^1 cost.

use std::borrow::Cow;

use bytemuck::Pod;
use hetscale_model::hbsp as model;

use super::common::*;
use super::native::*;
use crate::backend::Call;
use crate::ctx::offsets;
use crate::ctx::{CostKey, Ctx};
use crate::error::Result;

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

pub(super) fn scatterv_call(root: usize, counts: &[usize]) -> Call {
    Call::Collective {
        name: "scatterv",
        root: Some(root),
        shape: counts.to_vec(),
        phase: 0,
    }
}

/// Root side of a scatter: one message per other node, empty ones included, so every node
/// learns `n` from the message's meta.
pub(super) fn send_pieces<T: Pod + Send>(
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
pub(super) fn received_total(ctx: &mut Ctx<'_>) -> Result<usize> {
    match ctx.internal_meta() {
        Some(n) => Ok(n as usize),
        None => Err(ctx.misuse("scatter: no piece arrived from the root".into())),
    }
}

/// The root's own piece, or the one piece a non-root received.
pub(super) fn own_or_received<'d, T: Pod + Send>(
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

pub(super) fn gather_counts<T: Pod + Send>(
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

pub(super) fn gather_call(name: &'static str, root: usize, counts: &[usize]) -> Call {
    Call::Collective {
        name,
        root: Some(root),
        shape: counts.to_vec(),
        phase: 0,
    }
}

/// Concatenates the received pieces with this node's own at position `own`, in pid order.
pub(super) fn assemble<T: Pod + Send>(ctx: &mut Ctx<'_>, own: usize, data: &[T]) -> Result<Vec<T>> {
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

pub(super) fn broadcast_call(root: usize, algorithm: BroadcastAlgorithm) -> Call {
    Call::Collective {
        name: "broadcast",
        root: Some(root),
        shape: vec![algorithm as usize],
        phase: 0,
    }
}

pub(super) fn broadcast_first_phase<T: Pod + Send>(
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

pub(super) fn broadcast_second_phase<'d, T: Pod + Send>(
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
pub(super) fn ordered_vectors<T: Pod + Send>(ctx: &mut Ctx<'_>, own: &[T]) -> Result<Vec<Vec<T>>> {
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

pub(super) fn fold<T: Pod>(vectors: &[Vec<T>], op: &impl Fn(T, T) -> T) -> Vec<T> {
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

pub(super) fn exchange_blocks<T: Pod + Send>(
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

pub(super) fn check_square_counts(ctx: &Ctx<'_>, name: &str, counts: &[Vec<usize>]) -> Result<()> {
    let p = ctx.nprocs();
    if counts.len() != p || counts.iter().any(|row| row.len() != p) {
        return Err(ctx.misuse(format!(
            "{name}: counts must be a {p} x {p} matrix (one row per sending node)"
        )));
    }
    Ok(())
}

pub(super) fn exchange_call(name: &'static str, counts: &[Vec<usize>]) -> Call {
    Call::Collective {
        name,
        root: None,
        shape: counts.concat(),
        phase: 0,
    }
}

pub(super) fn alltoall_cost<T>(ctx: &Ctx<'_>, counts: &[Vec<usize>]) -> Result<f64> {
    let bytes_matrix: Vec<Vec<f64>> = counts.iter().map(|row| byte_counts::<T>(row)).collect();
    Ok(model::alltoall_cost(ctx.cost_model(), &bytes_matrix)?)
}
