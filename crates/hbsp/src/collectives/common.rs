//! What every collective shares: its result type, the root, the broadcast's algorithm and
//! the byte and count helpers.

use std::borrow::Cow;

use hetscale_model::hbsp as model;

use crate::ctx::{CostKey, Ctx};
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

/// How [`broadcast`](super::broadcast) moves the data.
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

pub(super) const ONE_PHASE: u32 = 1;
pub(super) const TWO_PHASE: u32 = 2;

pub(super) fn resolve_root(ctx: &Ctx<'_>, root: Root) -> Result<usize> {
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
pub(super) fn item_bytes<T>(items: usize) -> usize {
    items.saturating_mul(std::mem::size_of::<T>())
}

pub(super) fn bytes<T>(items: usize) -> f64 {
    (items * std::mem::size_of::<T>()) as f64
}

pub(super) fn byte_counts<T>(counts: &[usize]) -> Vec<f64> {
    counts.iter().map(|&c| bytes::<T>(c)).collect()
}

pub(super) fn check_counts(ctx: &Ctx<'_>, what: &str, counts: &[usize]) -> Result<()> {
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

pub(super) fn choose_broadcast<T>(
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
pub(super) fn broadcast_cost<T>(ctx: &Ctx<'_>, root: usize, n: usize, tag: u32) -> Result<f64> {
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
