//! Native collectives: on a backend with collectives of its own (MPI), a collective whose
//! result one of them computes calls it, traced as the HBSP^1 algorithm it stands for.

use bytemuck::Pod;

use super::common::*;
use crate::backend::{Call, Load, Native};
use crate::ctx::{Ctx, Traffic};
use crate::error::Result;

/// What a native broadcast's root moves: its values, or only how many (a broadcast of zeros).
pub(super) enum Items<'a, T> {
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
/// or not (the root sends every piece from its data and copies its own meanwhile, where as
/// messages every piece is packed and unpacked; `bash crates/hbsp/benches/side_by_side.sh`
/// times it against `MPI_Scatterv` on uneven speeds, docs/validation.md, "The hbsp library").
pub(super) fn native_scatter<T>(ctx: &Ctx<'_>) -> bool {
    ctx.has_native_collectives() && std::mem::size_of::<T>() > 0
}

/// A scatter by the backend's own collective: `counts(n)` gives every node's items of the
/// `n` the root holds. Returns `n` and this node's piece.
pub(super) fn scatter_natively<T: Pod + Send>(
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
pub(super) fn scatter_traffic(
    ctx: &Ctx<'_>,
    root: usize,
    piece: impl Fn(usize) -> usize,
) -> Traffic {
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
pub(super) fn broadcast_natively<T: Pod + Send>(
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
pub(super) fn broadcast_pieces<T>(ctx: &Ctx<'_>, n: usize, tag: u32) -> Pieces {
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
pub(super) enum Pieces {
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
pub(super) fn broadcast_loads(root: usize, pieces: &Pieces, tag: u32) -> Vec<Vec<Load>> {
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
pub(super) fn allgather_load(root: usize, me: usize, pieces: &Pieces, total: usize) -> Load {
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
pub(super) fn allgather_traffic(ctx: &Ctx<'_>, root: usize, pieces: &Pieces) -> Traffic {
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
