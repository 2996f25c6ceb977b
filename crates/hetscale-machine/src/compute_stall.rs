//! What a superstep costs beyond its compute and an empty one's stall when its nodes compute
//! before it: `[[machine.compute_stall]]`, measured by `hetscale probe --p2p` and charged by
//! `sim`.
//!
//! HBSP^1 charges a superstep `max_j w_j` for its compute, and `sim` adds `L(p)` and the
//! measured stall of a superstep that moves messages (`message_stall_all_s`, measured with no
//! compute before it). On hosts under a CPU quota a compute phase spans the hosts' quota
//! periods, and each host ends it at its own point of its period, so the superstep waits
//! longer for the last one than an empty superstep does; the longer the compute, the more it
//! waits, until the stall levels off. Raw MPI shows it with
//! `mpirun -np P mpi_check supersteps` (`testbed/mpi_check.c`: every rank computes, then an
//! 8-byte message to a rotating root and a barrier) and, for compute of 10 to 300 ms,
//! `mpi_check longsteps`; the testbed's figures are in docs/hbsp.md, "The ping-pong probe". A
//! cluster without quotas measures about 0.
//!
//! The probe times supersteps in which every node first computes `d` seconds at its marked
//! speed, then moves the same messages as its supersteps of every node; the **stall** at `d`
//! is their mean less `d` less the mean of those without compute. `sim` adds it, at the
//! superstep's longest compute `max_j c_j`, to every superstep it charges a barrier:
//! linearly between the measured `d`, from 0 at no compute, the last point's beyond it.
//!
//! ```toml
//! [[machine.compute_stall]]
//! p = 8                  # nodes of the machine the probe ran on
//! compute_s = 0.001      # d: each node's compute before the superstep
//! stall_s = 0.0009       # the superstep's mean beyond d and beyond one without compute
//! source = "probe: supersteps after compute on h1-h8, mpi backend"
//! ```
use serde::{Deserialize, Serialize};

/// The stall measured after one compute length (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComputeStallPoint {
    /// The number of nodes of the machine the probe ran on.
    pub p: usize,
    /// Seconds each node computed before the superstep.
    pub compute_s: f64,
    /// The superstep's mean beyond `compute_s` and beyond a superstep without compute, s.
    pub stall_s: f64,
    /// Where the point comes from, e.g. `"probe: supersteps after compute, mpi backend"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The points that cost a run on `p` nodes, by increasing compute: those measured on the
/// most nodes at most `p`; none below the fewest measured (a single node waits for no
/// other, and a stall grows with the nodes a superstep waits for, so a smaller machine's is
/// not a larger one's).
pub fn compute_stall_points(all: &[ComputeStallPoint], p: usize) -> Vec<ComputeStallPoint> {
    let level = all.iter().map(|d| d.p).filter(|&q| q <= p).max();
    let mut points: Vec<ComputeStallPoint> =
        all.iter().filter(|d| Some(d.p) == level).cloned().collect();
    points.sort_by(|a, b| a.compute_s.total_cmp(&b.compute_s));
    points
}

/// The stall after `compute_s` seconds of compute on `points` (sorted by compute): 0 at no
/// compute, linear from there to the first point and between points, the last point's
/// beyond it; 0 without points.
pub fn stall_at(points: &[ComputeStallPoint], compute_s: f64) -> f64 {
    if compute_s.is_nan() || compute_s <= 0.0 || points.is_empty() {
        return 0.0;
    }
    let above = points.partition_point(|d| d.compute_s < compute_s);
    let (lo_s, lo_stall) = match above.checked_sub(1) {
        Some(i) => (points[i].compute_s, points[i].stall_s),
        None => (0.0, 0.0),
    };
    match points.get(above) {
        Some(hi) => {
            let t = (compute_s - lo_s) / (hi.compute_s - lo_s);
            lo_stall + t * (hi.stall_s - lo_stall)
        }
        None => lo_stall,
    }
}

/// Checks `[[machine.compute_stall]]`: `p >= 1`, compute above 0, stalls at least 0, all
/// finite, and no compute length twice at one `p`.
pub fn validate_compute_stall(all: &[ComputeStallPoint]) -> Result<(), String> {
    for (i, d) in all.iter().enumerate() {
        let at = format!(
            "machine.compute_stall point {} (p = {}, compute_s = {})",
            i + 1,
            d.p,
            d.compute_s
        );
        if d.p == 0 {
            return Err(format!("{at}: p is the nodes it was measured on, >= 1"));
        }
        if !(d.compute_s.is_finite() && d.compute_s > 0.0) {
            return Err(format!(
                "{at}: compute_s must be a finite number of seconds > 0"
            ));
        }
        if !(d.stall_s.is_finite() && d.stall_s >= 0.0) {
            return Err(format!(
                "{at}: stall_s = {} must be a finite number of seconds >= 0",
                d.stall_s
            ));
        }
        if all[..i]
            .iter()
            .any(|e| e.p == d.p && e.compute_s == d.compute_s)
        {
            return Err(format!("{at}: listed twice at this p: keep one"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(p: usize, compute_s: f64, stall_s: f64) -> ComputeStallPoint {
        ComputeStallPoint {
            p,
            compute_s,
            stall_s,
            source: None,
        }
    }

    #[test]
    fn the_stall_rises_from_zero_through_the_points_and_holds_beyond_the_last() {
        let points = vec![point(8, 1e-3, 1e-3), point(8, 1e-2, 3e-3)];
        assert_eq!(stall_at(&points, 0.0), 0.0);
        assert!((stall_at(&points, 0.5e-3) - 0.5e-3).abs() < 1e-15);
        assert!((stall_at(&points, 1e-3) - 1e-3).abs() < 1e-15);
        assert!((stall_at(&points, 5.5e-3) - 2e-3).abs() < 1e-15);
        assert_eq!(stall_at(&points, 1.0), 3e-3);
        assert_eq!(stall_at(&[], 1.0), 0.0);
        assert_eq!(stall_at(&points, f64::NAN), 0.0);
    }

    #[test]
    fn a_run_takes_the_points_of_the_largest_machine_measured_not_above_it() {
        let all = vec![
            point(8, 1e-2, 3e-3),
            point(2, 1e-3, 1e-4),
            point(8, 1e-3, 1e-3),
            point(4, 1e-3, 5e-4),
        ];
        let at = |p| -> Vec<(usize, f64)> {
            compute_stall_points(&all, p)
                .iter()
                .map(|d| (d.p, d.compute_s))
                .collect()
        };
        assert_eq!(at(8), vec![(8, 1e-3), (8, 1e-2)]);
        assert_eq!(at(6), vec![(4, 1e-3)]);
        assert_eq!(at(1), vec![]);
        assert!(compute_stall_points(&[], 4).is_empty());
    }

    #[test]
    fn bad_points_are_refused_with_what_to_change() {
        let negative = validate_compute_stall(&[point(4, 1e-3, -1e-3)]).unwrap_err();
        assert!(negative.contains("stall_s = -0.001"), "{negative}");
        let zero = validate_compute_stall(&[point(4, 0.0, 1e-3)]).unwrap_err();
        assert!(zero.contains("compute_s must be"), "{zero}");
        let twice = validate_compute_stall(&[point(4, 1e-3, 0.0), point(4, 1e-3, 1e-3)]);
        assert!(twice.unwrap_err().contains("listed twice"));
        assert!(validate_compute_stall(&[point(0, 1e-3, 0.0)]).is_err());
        assert!(validate_compute_stall(&[point(4, 1e-3, 0.0), point(8, 1e-3, 1e-3)]).is_ok());
    }
}
