//! One-dimensional data partitioners: who owns which rows, in proportion to marked speed.
//!
//! - [`block_counts`]: contiguous row blocks of `N C_j / C` rows (JPDC 4.1.2 "row-based
//!   heterogeneous block distribution"), rounded by the largest-remainder method of
//!   [`hetscale_model::hbsp::integer_shares`], so the counts sum to `N` and each is within one
//!   row of its ideal share (a node may get zero rows).
//! - [`cyclic_owners`]: the row-based heterogeneous cyclic distribution (JPDC 4.1.1) built by
//!   the incremental algorithm of Beaumont, Boudet, Petitet, Rastello and Robert, "A proposal
//!   for a heterogeneous cluster ScaLAPACK (dense linear solvers)", IEEE Trans. Computers
//!   50(10), 2001, section 3: row `i` goes to the node minimising `(n_j + 1) / C_j`, where `n_j`
//!   is the number of rows it already has (ties to the lower pid). Every prefix of rows, and so
//!   every trailing sub-matrix Gaussian elimination works on, is then split within one row of
//!   the speed proportions.
//!
//! - [`block_cyclic_owners`]: the same distribution dealt in blocks of `b` consecutive rows
//!   (`cyclic_owners` over the `ceil(N / b)` blocks; the last block may be shorter), for
//!   `ge`'s blocked variant: every prefix of blocks is split within one block of the speed
//!   proportions.
//!
//! [`load_balance_efficiency`] rates any split: 1 means every node finishes at the same time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::{Result, invalid};

/// Checks speeds: at least one, each positive and finite.
pub fn check_speeds(speeds: &[f64]) -> Result<()> {
    if speeds.is_empty() {
        return Err(invalid("no nodes: give at least one node"));
    }
    match speeds.iter().position(|s| !(s.is_finite() && *s > 0.0)) {
        None => Ok(()),
        Some(j) => Err(invalid(format!(
            "node {j} has marked speed {}; every marked_speed must be a positive number",
            speeds[j]
        ))),
    }
}

/// Rows per node of the heterogeneous block distribution of `n` rows.
pub fn block_counts(n: usize, speeds: &[f64]) -> Result<Vec<usize>> {
    check_speeds(speeds)?;
    Ok(hetscale_model::hbsp::integer_shares(n, speeds)?)
}

/// Start of each node's block given the counts (hbsp's, which lays out collectives' buffers).
pub use hbsp::collectives::offsets;

/// Owner pid of each of `n` rows under the heterogeneous cyclic distribution.
pub fn cyclic_owners(n: usize, speeds: &[f64]) -> Result<Vec<usize>> {
    check_speeds(speeds)?;
    // A min-heap of each node's finishing time with one more item, ties to the lower pid: the
    // same order as scanning all nodes per item, in O(n log p) instead of O(n p).
    let mut heap: BinaryHeap<Reverse<(Finish, usize)>> = speeds
        .iter()
        .enumerate()
        .map(|(j, s)| Reverse((Finish(1.0 / s), j)))
        .collect();
    let mut counts = vec![0usize; speeds.len()];
    let owners = (0..n)
        .map(|_| {
            let Reverse((_, best)) = heap.pop().expect("at least one node");
            counts[best] += 1;
            heap.push(Reverse((
                Finish((counts[best] + 1) as f64 / speeds[best]),
                best,
            )));
            best
        })
        .collect();
    Ok(owners)
}

/// Owner pid of each of `n` rows dealt block-cyclically: blocks of `block` consecutive rows
/// (the last one shorter when `block` does not divide `n`) distributed by [`cyclic_owners`],
/// so each node's share of the blocks, and of every prefix of them, follows its speed.
/// `block = 1` is [`cyclic_owners`] itself.
pub fn block_cyclic_owners(n: usize, block: usize, speeds: &[f64]) -> Result<Vec<usize>> {
    if block == 0 {
        return Err(invalid("a block of 0 rows: give a block of at least 1 row"));
    }
    let blocks = cyclic_owners(n.div_ceil(block), speeds)?;
    Ok((0..n).map(|i| blocks[i / block]).collect())
}

/// A finishing time ordered by `total_cmp` (speeds are checked positive and finite).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Finish(f64);

impl Eq for Finish {}

impl PartialOrd for Finish {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Finish {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// `(W / C) / max_j (w_j / C_j)`: the ideal time over the slowest node's time, for work
/// `w_j` on node `j` of marked speed `C_j`. 1 is a perfect balance; a node with no work
/// counts as finished at once.
pub fn load_balance_efficiency(work: &[f64], speeds: &[f64]) -> f64 {
    let total_work: f64 = work.iter().sum();
    let total_speed: f64 = speeds.iter().sum();
    let slowest = work
        .iter()
        .zip(speeds)
        .map(|(w, s)| w / s)
        .fold(0.0, f64::max);
    if slowest == 0.0 {
        1.0
    } else {
        total_work / total_speed / slowest
    }
}

/// Load-balance efficiency of a row split: node `j` works in proportion to `counts[j]`.
pub fn rows_efficiency(counts: &[usize], speeds: &[f64]) -> f64 {
    let work: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
    load_balance_efficiency(&work, speeds)
}

/// `(name, value)` detail reporting a row split's efficiency, for [`crate::KernelRun`].
pub(crate) fn efficiency_detail(counts: &[usize], speeds: &[f64]) -> (String, String) {
    (
        "layout efficiency".into(),
        format!("{:.4}", rows_efficiency(counts, speeds)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cyclic_prefixes_stay_proportional() {
        let speeds = [3.0, 1.0, 2.0];
        let owners = cyclic_owners(600, &speeds).unwrap();
        let mut counts = [0usize; 3];
        for (i, &o) in owners.iter().enumerate() {
            counts[o] += 1;
            for j in 0..3 {
                let ideal = (i + 1) as f64 * speeds[j] / 6.0;
                assert!((counts[j] as f64 - ideal).abs() <= 1.0, "row {i} node {j}");
            }
        }
        assert_eq!(&owners[..6], &[0, 2, 0, 0, 1, 2]);
    }

    #[test]
    fn block_cyclic_owners_deal_whole_blocks_in_the_cyclic_order() {
        let speeds = [3.0, 1.0, 2.0];
        let blocks = cyclic_owners(4, &speeds).unwrap();
        let owners = block_cyclic_owners(10, 3, &speeds).unwrap();
        assert_eq!(owners.len(), 10);
        for (i, &o) in owners.iter().enumerate() {
            assert_eq!(o, blocks[i / 3], "row {i}");
        }
        assert_eq!(
            block_cyclic_owners(7, 1, &speeds).unwrap(),
            cyclic_owners(7, &speeds).unwrap()
        );
        assert!(block_cyclic_owners(7, 0, &speeds).is_err());
    }

    #[test]
    fn tiny_nodes_may_own_nothing() {
        let counts = block_counts(3, &[100.0, 1.0, 100.0]).unwrap();
        assert_eq!(counts.iter().sum::<usize>(), 3);
        assert_eq!(counts[1], 0);
        assert!(!cyclic_owners(3, &[100.0, 1.0, 100.0]).unwrap().contains(&1));
    }

    #[test]
    fn bad_speeds_are_one_line_errors() {
        for speeds in [&[][..], &[1.0, 0.0], &[f64::NAN]] {
            let err = block_counts(4, speeds).unwrap_err().to_string();
            assert!(!err.contains('\n') && !err.is_empty());
        }
    }

    #[test]
    fn efficiency_of_proportional_split_is_one() {
        assert_eq!(load_balance_efficiency(&[2.0, 1.0], &[2.0, 1.0]), 1.0);
        assert_eq!(load_balance_efficiency(&[1.0, 1.0], &[2.0, 1.0]), 2.0 / 3.0);
    }
}
