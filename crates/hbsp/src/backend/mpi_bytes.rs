//! Byte-level MPI operations of the MPI backend: the root's scatter, the superstep's
//! all-to-all exchange and an all-gather, with the errors for counts MPI cannot hold.

use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::error::{HbspError, Result};

/// The tag of a native scatter's pieces.
pub(super) const SCATTER_TAG: i32 = 2;

/// The error for more bytes in one superstep than MPI counts hold.
pub(super) fn too_many_bytes(pid: usize, what: &str, bytes: u64) -> HbspError {
    HbspError::InvalidArgument {
        pid,
        message: format!(
            "{bytes} bytes {what} in one superstep; MPI counts stop at 2 GiB: split the exchange over several supersteps"
        ),
    }
}

/// The error for a native collective whose nodes disagree on the item type.
pub(super) fn type_mismatch(collective: &str, bytes: usize) -> HbspError {
    HbspError::InvalidBackend(format!(
        "{collective}: {bytes} bytes are not a whole number of this node's items: call it with the same item type on every node"
    ))
}

/// The root's `source`, `counts[j]` bytes to rank `j`, into `target`: the root sends every
/// piece straight from `source` and copies its own while the others read (over shared memory
/// OpenMPI lets the receiver copy). `MPI_Scatterv` copies the root's piece first or last; with
/// pieces by speed the fastest root keeps the largest, so its copy is the longest part, and
/// here it overlaps the others' reads (`bash crates/hbsp/benches/side_by_side.sh` times it
/// against `MPI_Scatterv`, docs/validation.md, "The hbsp library").
pub(super) fn scatter_bytes(
    world: &SimpleCommunicator,
    root: usize,
    is_root: bool,
    source: &[u8],
    counts: &[usize],
    target: &mut [u8],
) {
    let process = world.process_at_rank(root as i32);
    if !is_root {
        if !target.is_empty() {
            process.receive_into_with_tag(target, SCATTER_TAG);
        }
        return;
    }
    let mut pieces = Vec::with_capacity(counts.len());
    let mut at = 0;
    for &count in counts {
        pieces.push(&source[at..at + count]);
        at += count;
    }
    mpi::request::scope(|scope| {
        let sending: Vec<_> = pieces
            .iter()
            .enumerate()
            .filter(|&(rank, piece)| rank != root && !piece.is_empty())
            .map(|(rank, piece)| {
                world.process_at_rank(rank as i32).immediate_send_with_tag(
                    scope,
                    *piece,
                    SCATTER_TAG,
                )
            })
            .collect();
        target.copy_from_slice(pieces[root]);
        for request in sending {
            request.wait();
        }
    });
}

/// Where each of `counts` starts when they are laid end to end.
fn displacements(counts: &[i32]) -> Vec<i32> {
    counts
        .iter()
        .scan(0, |at, &c| {
            let here = *at;
            *at += c;
            Some(here)
        })
        .collect()
}

/// Sends `counts[j]` bytes of `buffer` to rank `j` and receives `incoming[i]` from rank `i`.
pub(super) fn exchange_bytes(
    world: &SimpleCommunicator,
    buffer: &[u8],
    counts: &[i32],
    incoming: &[i32],
    received: &mut Vec<u8>,
) {
    let total: usize = incoming.iter().map(|&c| c as usize).sum();
    // Only grown, never cleared: MPI writes every byte that is read.
    if received.len() < total.max(1) {
        received.resize(total.max(1), 0);
    }
    let send = Partition::new(buffer, counts, displacements(counts));
    let recv_displacements = displacements(incoming);
    let mut recv = PartitionMut::new(&mut received[..], incoming, recv_displacements);
    world.all_to_all_varcount_into(&send, &mut recv);
}

/// Every rank's `local` bytes, by rank.
pub(super) fn all_gather_bytes(world: &SimpleCommunicator, local: &[u8]) -> Result<Vec<Vec<u8>>> {
    let len = i32::try_from(local.len()).map_err(|_| {
        HbspError::InvalidBackend(format!(
            "{} bytes to gather from one rank; MPI counts stop at 2 GiB",
            local.len()
        ))
    })?;
    let mut lens = vec![0i32; world.size() as usize];
    world.all_gather_into(&len, &mut lens[..]);
    let displacements: Vec<i32> = lens
        .iter()
        .scan(0i64, |at, &c| {
            let here = *at;
            *at += i64::from(c);
            Some(here)
        })
        .map(|d| i32::try_from(d).unwrap_or(i32::MAX))
        .collect();
    let total: usize = lens.iter().map(|&c| c as usize).sum();
    if total > i32::MAX as usize {
        return Err(HbspError::InvalidBackend(format!(
            "{total} bytes to gather from all ranks; MPI counts stop at 2 GiB"
        )));
    }
    let mut all = vec![0u8; total.max(1)];
    {
        let mut recv = PartitionMut::new(&mut all[..], &lens[..], &displacements[..]);
        world.all_gather_varcount_into(local, &mut recv);
    }
    Ok(displacements
        .iter()
        .zip(&lens)
        .map(|(&d, &c)| all[d as usize..(d + c) as usize].to_vec())
        .collect())
}
