//! Collectives of zeros, for a program that never reads the values it moves (a sim skeleton
//! run): the supersteps, messages, costs and traces of their namesakes, with payloads that
//! are lengths only.

use bytemuck::Pod;
use hetscale_model::hbsp as model;

use super::common::*;
use super::data::*;
use super::native::*;
use crate::ctx::Ctx;
use crate::error::Result;

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
