//! The exchange (timed by the ping-pong, `time_exchange`): node 0 and node 1 send each other
//! the same size at once, to measure how their links share the two directions (`[[machine.duplex]]`, see [`crate::duplex`]).
//!
//! Per size, the exchange's unstalled time (the fastest of as many samples as a pair's
//! one-way time has, less the empty superstep's) beyond the pair's one-way time is what the
//! second direction cost on top of the first; over the one-way transfer's bytes' cost on the
//! pair's segments it is the penalty `sim` charges a node that sends and receives: the
//! smaller side's bytes' cost times it. So on `sim` the probe measures its penalty back.

use crate::duplex::DuplexPoint;
use crate::machine_model::{P2pSegment, p2p_parts};
use crate::platform::Platform;

/// Per size: the penalty, `(exchange - one_way) / bytes' cost`, clamped to `[0, 1]` (0 where
/// the segments give the size no bytes' cost). `exchange` and `one_way` are unstalled times
/// with the empty superstep taken off; `segments` the pair's.
pub(super) fn penalties(
    sizes: &[usize],
    exchange: &[f64],
    one_way: &[f64],
    segments: &[P2pSegment],
) -> Vec<f64> {
    sizes
        .iter()
        .zip(exchange.iter().zip(one_way))
        .map(|(&size, (x, t))| {
            let (_, bytes_s) = p2p_parts(segments, size as u64);
            if bytes_s > 0.0 {
                ((x - t) / bytes_s).clamp(0.0, 1.0)
            } else {
                0.0
            }
        })
        .collect()
}

/// Writes the penalties as the platform's `[[machine.duplex]]` points at `p` (replacing
/// those measured at `p`; points of no `p`, an older form, give way), with `source`. The
/// platform has a `[machine]` table already (the segments were written first).
pub(super) fn apply_duplex_to(
    platform: &mut Platform,
    p: usize,
    sizes: &[usize],
    penalty: &[f64],
    source: &str,
) {
    let Some(model) = platform.machine.as_mut() else {
        return;
    };
    model.duplex.retain(|d| d.p.is_some() && d.p != Some(p));
    model.duplex.extend(
        sizes
            .iter()
            .zip(penalty)
            .map(|(&bytes, &penalty)| DuplexPoint {
                p: Some(p),
                bytes: bytes as u64,
                penalty,
                source: Some(source.to_owned()),
            }),
    );
    model.duplex.sort_by_key(|d| (d.p, d.bytes));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_penalty_is_the_exchanges_excess_over_the_bytes_cost_of_one_way() {
        // 1 ms start-up, 80 ns/byte: 1 MiB costs 84 ms of bytes.
        let segments = vec![P2pSegment::new(1 << 24, 1e-3, 8e-8)];
        let sizes = [8, 1 << 20, 1 << 22];
        let bytes = |s: usize| s as f64 * 8e-8;
        let one_way: Vec<f64> = sizes.iter().map(|&s| 1e-3 + bytes(s)).collect();
        // Small: as fast as one way; 1 MiB: half the bytes again; 4 MiB: more than twice.
        let exchange = [
            one_way[0] - 1e-4,
            one_way[1] + 0.5 * bytes(1 << 20),
            one_way[2] + 3.0 * bytes(1 << 22),
        ];
        let got = penalties(&sizes, &exchange, &one_way, &segments);
        assert_eq!(got[0], 0.0);
        assert!((got[1] - 0.5).abs() < 1e-9, "{got:?}");
        assert_eq!(got[2], 1.0);
    }
}
