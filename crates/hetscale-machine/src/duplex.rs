//! How a node's two directions share its link: `[[machine.duplex]]`, measured by `hetscale
//! probe --p2p` and charged by `sim` and the kernels' models (`hetscale-kernels`' charges).
//!
//! A full-duplex port sends and receives at once at its full rate each way, so a node that
//! does both in a superstep pays the larger side ([`crate::machine_model`]'s
//! `max(out_j, in_j)`). Not every link does: a queue of data on a shaped link (such as the
//! testbed's `tbf` links) delays the acknowledgements of the stream coming the other way, so
//! long streams in both directions together move little more than one, while a short stream
//! barely slows the other. Raw MPI shows it with `mpirun -np 2 mpi_check swap BYTES`
//! (`testbed/mpi_check.c`: `MPI_Sendrecv` against `MPI_Send`); the testbed's figures are in
//! docs/hbsp.md, "The ping-pong probe". The probe measures it as such: node 0 and node 1 swap
//! each size at once, and the **penalty** at a size is how much longer the swap takes than one
//! way, over one way, `clamp(exchange / one_way - 1, 0, 1)`: 0 a full-duplex port, 1 a port
//! that carries one direction at a time.
//!
//! A node that sends `o` bytes and receives `i` in a superstep pays its larger side plus the
//! penalty at `min(o, i)` bytes (the part of the traffic that flows both ways at once) times
//! its smaller side's bytes' cost ([`port_time`]); the start-ups overlap as before. Without
//! `[[machine.duplex]]` the penalty is 0, every platform's charge as it was.
//!
//! ```toml
//! [[machine.duplex]]
//! p = 2                  # nodes of the machine the probe ran on, as [[machine.p2p]]
//! bytes = 1048576        # size swapped
//! penalty = 0.85         # (exchange - one way) / one way, clamped to [0, 1]
//! source = "probe: exchange h1-h2, mpi backend"
//! ```

use serde::{Deserialize, Serialize};

/// The penalty measured at one size (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DuplexPoint {
    /// The number of nodes of the machine the probe ran on; none: every size. Either every
    /// point names its `p` or none does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<usize>,
    /// Bytes each of the two nodes sent the other.
    pub bytes: u64,
    /// `(exchange - one way) / one way`, in `[0, 1]`.
    pub penalty: f64,
    /// Where the point comes from, e.g. `"probe: exchange h1-h2, mpi backend"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The points that cost a run on `p` nodes, by increasing size: those measured on the most
/// nodes at most `p`, else on the fewest measured (as `[[machine.p2p]]`'s segments).
pub fn duplex_points(all: &[DuplexPoint], p: usize) -> Vec<DuplexPoint> {
    let sizes = all.iter().filter_map(|d| d.p);
    let level = sizes
        .clone()
        .filter(|&q| q <= p)
        .max()
        .or_else(|| sizes.min());
    let mut points: Vec<DuplexPoint> = all.iter().filter(|d| d.p == level).cloned().collect();
    points.sort_by_key(|d| d.bytes);
    points
}

/// The penalty at `bytes` on `points` (sorted by size): linear between the two measured
/// sizes around it, the nearest end's beyond them; 0 without points or bytes.
pub fn penalty_at(points: &[DuplexPoint], bytes: u64) -> f64 {
    if bytes == 0 || points.is_empty() {
        return 0.0;
    }
    let above = points.partition_point(|d| d.bytes < bytes);
    match (above.checked_sub(1).map(|i| &points[i]), points.get(above)) {
        (Some(lo), Some(hi)) => {
            let t = (bytes - lo.bytes) as f64 / (hi.bytes - lo.bytes) as f64;
            lo.penalty + t * (hi.penalty - lo.penalty)
        }
        (None, Some(end)) | (Some(end), None) => end.penalty,
        (None, None) => 0.0,
    }
}

/// One node's port in a superstep: its sending side and its receiving side, each `(total
/// s, bytes' cost s)` (a side's largest start-up plus its bytes' costs, and those bytes'
/// costs alone), `overlap_bytes` the smaller of the bytes it sends and receives. The larger
/// side, plus the penalty at `overlap_bytes` times the smaller side's bytes' cost.
pub fn port_time(
    out: (f64, f64),
    into: (f64, f64),
    overlap_bytes: u64,
    points: &[DuplexPoint],
) -> f64 {
    let shared = out.1.min(into.1);
    out.0.max(into.0) + penalty_at(points, overlap_bytes) * shared
}

/// Checks `[[machine.duplex]]`: penalties in `[0, 1]`, sizes above 0 and distinct at each
/// machine size, and either every point with its `p` or none.
pub fn validate_duplex(all: &[DuplexPoint]) -> Result<(), String> {
    if all.iter().any(|d| d.p.is_some()) && all.iter().any(|d| d.p.is_none()) {
        return Err(
            "machine.duplex mixes points measured on a number of nodes (p = ...) with points of none: give every one its p, or none".into(),
        );
    }
    for (i, d) in all.iter().enumerate() {
        let at = format!("machine.duplex point {} (bytes = {})", i + 1, d.bytes);
        if !(0.0..=1.0).contains(&d.penalty) {
            return Err(format!(
                "{at}: penalty = {} must be in [0, 1] (0: both directions at full rate, 1: one at a time)",
                d.penalty
            ));
        }
        if d.bytes == 0 {
            return Err(format!("{at}: bytes must be > 0"));
        }
        if d.p == Some(0) {
            return Err(format!("{at}: p is the nodes it was measured on, >= 1"));
        }
        if all[..i].iter().any(|e| e.p == d.p && e.bytes == d.bytes) {
            return Err(format!("{at}: listed twice at this p: keep one"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(p: usize, bytes: u64, penalty: f64) -> DuplexPoint {
        DuplexPoint {
            p: Some(p),
            bytes,
            penalty,
            source: None,
        }
    }

    #[test]
    fn the_penalty_is_interpolated_between_sizes_and_held_beyond_them() {
        let points = vec![point(2, 1 << 18, 0.1), point(2, 1 << 20, 0.9)];
        assert_eq!(penalty_at(&points, 0), 0.0);
        assert_eq!(penalty_at(&points, 8), 0.1);
        assert_eq!(penalty_at(&points, 1 << 18), 0.1);
        let mid = (1 << 18) + ((1 << 20) - (1 << 18)) / 2;
        assert!((penalty_at(&points, mid) - 0.5).abs() < 1e-12);
        assert_eq!(penalty_at(&points, 1 << 24), 0.9);
        assert_eq!(penalty_at(&[], 1 << 20), 0.0);
    }

    #[test]
    fn a_port_pays_the_larger_side_and_the_penalty_on_the_smaller_sides_bytes() {
        let points = vec![point(2, 1 << 20, 1.0)];
        // Sending only: the penalty has nothing to act on.
        assert_eq!(port_time((0.09, 0.08), (0.0, 0.0), 0, &points), 0.09);
        // 1 MiB each way on a port that carries one direction at a time: both bytes' costs,
        // one start-up.
        assert!((port_time((0.09, 0.08), (0.09, 0.08), 1 << 20, &points) - 0.17).abs() < 1e-12);
        // A full-duplex port (no points): the larger side.
        assert_eq!(port_time((0.09, 0.08), (0.05, 0.04), 1 << 19, &[]), 0.09);
    }

    #[test]
    fn the_points_of_a_run_are_those_measured_on_the_most_nodes_at_most_its_own() {
        let all = vec![point(2, 64, 0.0), point(8, 64, 0.5), point(4, 64, 0.2)];
        assert_eq!(duplex_points(&all, 4)[0].penalty, 0.2);
        assert_eq!(duplex_points(&all, 7)[0].penalty, 0.2);
        assert_eq!(duplex_points(&all, 100)[0].penalty, 0.5);
        assert_eq!(duplex_points(&all, 1)[0].penalty, 0.0);
    }

    #[test]
    fn a_penalty_outside_zero_to_one_or_a_size_twice_is_refused() {
        assert!(validate_duplex(&[point(2, 64, 0.3)]).is_ok());
        let err = validate_duplex(&[point(2, 64, 1.5)]).unwrap_err();
        assert!(err.contains("penalty = 1.5 must be in [0, 1]"), "{err}");
        let err = validate_duplex(&[point(2, 64, f64::NAN)]).unwrap_err();
        assert!(err.contains("penalty = NaN"), "{err}");
        let err = validate_duplex(&[point(2, 64, 0.1), point(2, 64, 0.2)]).unwrap_err();
        assert!(err.contains("listed twice"), "{err}");
        let mut none = point(2, 64, 0.1);
        none.p = None;
        assert!(validate_duplex(&[none, point(2, 128, 0.1)]).is_err());
    }
}
