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

mod common;
mod data;
mod native;
mod zeros;

pub use common::{BroadcastAlgorithm, Collective, Root};
pub use data::{
    allgather, allreduce, alltoall, alltoallv, broadcast, broadcast_in_place, gather, gatherv,
    reduce, scatter, scatterv, scatterv_in_place,
};
pub use hetscale_machine::collective_names::NAMES;
// `offsets` lives in `ctx` (which lays out buffers by counts too); re-exported here, where
// callers of the collectives look for it.
pub use crate::ctx::offsets;
pub use zeros::{alltoallv_zeros, broadcast_zeros, gatherv_zeros, scatterv_zeros};
