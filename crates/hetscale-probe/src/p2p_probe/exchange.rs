//! The exchange (timed by the ping-pong, `time_exchange`): node 0 and node 1 send each other
//! the same size at once, to measure how their links share the two directions (`[[machine.duplex]]`, see [`hetscale_machine::duplex`]).
//!
//! Per size, the exchange's mean time (over as many samples as the pair's one-way time has)
//! beyond the pair's one-way mean is what the second direction cost on top of the first;
//! over the one-way transfer's bytes' cost on the pair's segments it is the penalty `sim`
//! charges a node that sends and receives: the smaller side's bytes' cost times it. So on
//! `sim` the probe measures its penalty back.

use hetscale_machine::duplex::DuplexPoint;
use hetscale_machine::machine_model::{P2pSegment, p2p_parts};
use hetscale_machine::platform::Platform;

/// Per size: the penalty, `(mean exchange - mean one way) / bytes' cost`, clamped to
/// `[0, 1]`, from the means of the exchange's samples and of the pair's one-way samples (both
/// directions) and the pair's segments; `None` where the size is start-up dominated (its
/// bytes cost less than its start-up on the segments: there the difference is the stalls'
/// noise over a bytes' cost of microseconds, and the penalty, which acts on the bytes, is
/// not measured).
///
/// Means, not the fastest samples the segments take: a swap of a long stream is not slowed
/// now and then but most times, or not at all (raw MPI shows it with
/// `mpirun -np 2 mpi_check swap 2097152 6`; the testbed's figures are in docs/hbsp.md, "The
/// ping-pong probe"), so its expected cost is its mean; the one-way mean beside it takes off
/// the stalls both kinds of superstep share.
pub(super) fn penalties(
    sizes: &[usize],
    exchange_mean: &[f64],
    one_way_mean: &[f64],
    segments: &[P2pSegment],
) -> Vec<Option<f64>> {
    sizes
        .iter()
        .zip(exchange_mean.iter().zip(one_way_mean))
        .map(|(&size, (x, t))| {
            let (latency_s, bytes_s) = p2p_parts(segments, size as u64);
            (bytes_s > latency_s && bytes_s > 0.0).then(|| ((x - t) / bytes_s).clamp(0.0, 1.0))
        })
        .collect()
}

/// Writes the measured penalties as the platform's `[[machine.duplex]]` points at `p`
/// (replacing those measured at `p`; points of no `p`, an older form, give way), with
/// `source`. The platform has a `[machine]` table already (the segments were written first).
pub(super) fn apply_duplex_to(
    platform: &mut Platform,
    p: usize,
    sizes: &[usize],
    penalty: &[Option<f64>],
    source: &str,
) {
    let Some(model) = platform.machine.as_mut() else {
        return;
    };
    model.duplex.retain(|d| d.p.is_some() && d.p != Some(p));
    model
        .duplex
        .extend(sizes.iter().zip(penalty).filter_map(|(&bytes, &penalty)| {
            Some(DuplexPoint {
                p: Some(p),
                bytes: bytes as u64,
                penalty: penalty?,
                source: Some(source.to_owned()),
            })
        }));
    model.duplex.sort_by_key(|d| (d.p, d.bytes));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_penalty_is_the_exchanges_mean_excess_over_the_bytes_cost_of_one_way() {
        // 1 ms start-up, 80 ns/byte: 1 MiB costs 84 ms of bytes.
        let segments = vec![P2pSegment::new(1 << 24, 1e-3, 8e-8)];
        let sizes = [8, 1 << 20, 1 << 22];
        let bytes = |s: usize| s as f64 * 8e-8;
        let one_way: Vec<f64> = sizes.iter().map(|&s| 1e-3 + bytes(s)).collect();
        // Small: faster than one way (noise); 1 MiB: one swap at one way's time, one at
        // twice it (the mean pays half the bytes again); 4 MiB: more than twice.
        let exchange = [
            one_way[0] - 1e-4,
            one_way[1] + 0.5 * bytes(1 << 20),
            one_way[2] + 3.0 * bytes(1 << 22),
        ];
        let got = penalties(&sizes, &exchange, &one_way, &segments);
        // 8 B: start-up dominated, not measured.
        assert_eq!(got[0], None);
        assert!((got[1].unwrap() - 0.5).abs() < 1e-9, "{got:?}");
        assert_eq!(got[2], Some(1.0));
    }
}
