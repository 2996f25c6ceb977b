//! The ping-pong's segments: piecewise-linear fits of one-way times in message size (see
//! the parent module's docs for the rules: weighted least squares on the relative error, the
//! number of segments by BIC, a physical start-up, never cheaper when larger).

use crate::probe::t95;
use hbsp::{HbspError, Result};
use hetscale_machine::machine_model::P2pSegment;

/// Fewest sizes a segment is fitted on (a line and a residual).
pub const MIN_POINTS: usize = 3;

/// A line `a + b x` fitted by least squares weighted by `1 / y^2` (relative error), with its
/// terms' 95% intervals and the sum of squared relative residuals of the line as written.
struct Line {
    a: f64,
    b: f64,
    a_ci: [f64; 2],
    b_ci: [f64; 2],
    rss: f64,
}

/// The weighted sums a line fit needs.
struct Sums {
    w: Vec<f64>,
    sw: f64,
    xm: f64,
    ym: f64,
    sxx: f64,
    sxy: f64,
}

impl Sums {
    fn new(x: &[f64], y: &[f64]) -> Self {
        let w: Vec<f64> = y
            .iter()
            .map(|&y| 1.0 / y.abs().max(1e-12).powi(2))
            .collect();
        let sw: f64 = w.iter().sum();
        let xm = x.iter().zip(&w).map(|(x, w)| x * w).sum::<f64>() / sw;
        let ym = y.iter().zip(&w).map(|(y, w)| y * w).sum::<f64>() / sw;
        let sxx = x.iter().zip(&w).map(|(x, w)| w * (x - xm).powi(2)).sum();
        let sxy = x
            .iter()
            .zip(y)
            .zip(&w)
            .map(|((x, y), w)| w * (x - xm) * (y - ym))
            .sum();
        Self {
            w,
            sw,
            xm,
            ym,
            sxx,
            sxy,
        }
    }

    fn rss(&self, x: &[f64], y: &[f64], a: f64, b: f64) -> f64 {
        x.iter()
            .zip(y)
            .zip(&self.w)
            .map(|((x, y), w)| w * (y - a - b * x).powi(2))
            .sum()
    }
}

/// The line a segment charges, for sizes above `x0` (the previous segment's end; 0 for the
/// first): a cost per byte >= 0 and a cost >= 0 at `x0`. The start-up of a segment beyond the
/// first may be negative: a link shaped by a token bucket passes its first bytes at the
/// interface's speed, so its large transfers cost `rate * (size - burst)`, a line with a
/// negative intercept (`sim` charges a node's intercepts once per superstep, its bytes per
/// transfer). When the free fit breaks a bound, the term is fixed there and the other refitted
/// with it (a clamp alone keeps a slope fitted beside the broken term, which then charges a
/// shaped link's large transfers below its rate; docs/hbsp.md, "The ping-pong probe", has the
/// testbed's case). The residuals, and so the choice of segments, are the written line's. A
/// term fixed by a bound keeps the free fit's interval, which then excludes it (or, for a cost
/// per byte the data do not show, holds 0).
fn weighted_line(x: &[f64], y: &[f64], x0: f64) -> Line {
    let n = x.len();
    let s = Sums::new(x, y);
    let b_free = if s.sxx > 0.0 { s.sxy / s.sxx } else { 0.0 };
    let a_free = s.ym - b_free * s.xm;
    let rss_free = s.rss(x, y, a_free, b_free);
    let (a_ci, b_ci) = if n > 2 && s.sxx > 0.0 {
        let s2 = rss_free / (n - 2) as f64;
        let t = t95(n - 2);
        let se_b = (s2 / s.sxx).sqrt();
        let se_a = (s2 * (1.0 / s.sw + s.xm * s.xm / s.sxx)).sqrt();
        (
            [a_free - t * se_a, a_free + t * se_a],
            [b_free - t * se_b, b_free + t * se_b],
        )
    } else {
        ([a_free, a_free], [b_free, b_free])
    };
    // A cost per byte the data do not show (its interval reaches 0) is not charged: on a
    // host under a CPU quota one stalled median among a segment's few sizes otherwise fits a
    // slope that charges every transfer of a start-up size as if it were a large one (the
    // testbed's case is the test `one_stalled_median_does_not_make_a_segment_of_its_own`).
    let slope_shown = b_free >= 0.0 && (n <= 2 || b_ci[0] > 0.0 || b_free == 0.0);
    if slope_shown && a_free + b_free * x0 >= 0.0 {
        return Line {
            a: a_free,
            b: b_free,
            a_ci,
            b_ci,
            rss: rss_free,
        };
    }
    // One term fixed at its bound; the other refitted alone, its interval from the new
    // residuals.
    let t = if n > 1 { t95(n - 1) } else { 0.0 };
    let dof = n.max(2) - 1;
    if !slope_shown {
        let a = s.ym.max(0.0);
        let rss = s.rss(x, y, a, 0.0);
        let se = (rss / dof as f64 / s.sw).sqrt();
        return Line {
            a,
            b: 0.0,
            a_ci: [a - t * se, a + t * se],
            b_ci,
            rss,
        };
    }
    // Through (x0, 0): y = b (x - x0).
    let d: Vec<f64> = x.iter().map(|x| x - x0).collect();
    let sdy: f64 = d.iter().zip(y).zip(&s.w).map(|((d, y), w)| w * d * y).sum();
    let sdd: f64 = d.iter().zip(&s.w).map(|(d, w)| w * d * d).sum();
    let b = if sdd > 0.0 { (sdy / sdd).max(0.0) } else { 0.0 };
    let rss = s.rss(x, y, -b * x0, b);
    let se = if sdd > 0.0 {
        (rss / dof as f64 / sdd).sqrt()
    } else {
        0.0
    };
    Line {
        a: -b * x0,
        b,
        a_ci,
        b_ci: [b - t * se, b + t * se],
        rss,
    }
}

/// Every way to cut `n` sorted points into `k` contiguous ranges of at least [`MIN_POINTS`]:
/// the end (exclusive) of each range.
fn splits(n: usize, k: usize) -> Vec<Vec<usize>> {
    if k == 1 {
        return if n >= MIN_POINTS {
            vec![vec![n]]
        } else {
            vec![]
        };
    }
    let mut all = Vec::new();
    for first in MIN_POINTS..=n.saturating_sub(MIN_POINTS * (k - 1)) {
        for mut rest in splits(n - first, k - 1) {
            for end in &mut rest {
                *end += first;
            }
            rest.insert(0, first);
            all.push(rest);
        }
    }
    all
}

/// The segments fitted to one-way times `y` at sizes `x` (sorted, distinct), with the rms
/// relative error of the fit (see the module docs).
pub fn fit_segments(x: &[f64], y: &[f64], max_segments: usize) -> Result<(Vec<P2pSegment>, f64)> {
    let n = x.len();
    if n < MIN_POINTS || y.len() != n {
        return Err(HbspError::InvalidBackend(format!(
            "a point-to-point fit needs at least {MIN_POINTS} sizes, one time each"
        )));
    }
    let mut best: Option<(f64, Vec<P2pSegment>, f64)> = None;
    for k in 1..=max_segments.max(1) {
        for ends in splits(n, k) {
            let mut start = 0;
            let mut segments = Vec::with_capacity(k);
            let mut rss = 0.0;
            for &end in &ends {
                let x0 = if start == 0 { 0.0 } else { x[start - 1] };
                let line = weighted_line(&x[start..end], &y[start..end], x0);
                rss += line.rss;
                segments.push(P2pSegment {
                    node: None,
                    p: None,
                    max_bytes: x[end - 1] as u64,
                    latency_s: line.a,
                    s_per_byte: line.b,
                    latency_s_ci95: Some(line.a_ci),
                    s_per_byte_ci95: Some(line.b_ci),
                    source: None,
                });
                start = end;
            }
            if !never_cheaper_when_larger(&segments, x, &ends) {
                continue;
            }
            // A floor on the error, so that exact data (sim) prefer the fewest segments.
            let floor = n as f64 * 1e-14;
            let bic =
                n as f64 * (rss.max(floor) / n as f64).ln() + (3 * k - 1) as f64 * (n as f64).ln();
            if best.as_ref().is_none_or(|(b, _, _)| bic < *b - 1e-9) {
                best = Some((bic, segments, rss));
            }
        }
    }
    let (_, segments, rss) = best.expect("at least one split of MIN_POINTS or more sizes");
    Ok((segments, (rss / n as f64).sqrt()))
}

/// Whether `segments` (fitted to sizes `x`, each ending at the index in `ends`) charge no
/// measured size more than a larger one: each segment's first size costs at least what the one
/// before charges its last. Padding a message never makes it faster, so a fit that drops from
/// one measured size to the next has mistaken noise for a segment (such as a host's stalled
/// times at a few neighbouring sizes; the testbed's case is the test
/// `a_noisy_hosts_segments_never_charge_a_transfer_more_than_a_larger_one`). Between the two
/// sizes a shaper's knee may dip, as its line is extrapolated back from sizes past the burst.
fn never_cheaper_when_larger(segments: &[P2pSegment], x: &[f64], ends: &[usize]) -> bool {
    let cost = |s: &P2pSegment, at: f64| s.latency_s + s.s_per_byte * at;
    segments.windows(2).zip(ends).all(|(pair, &end)| {
        let (last, first) = (x[end - 1], x[end]);
        cost(&pair[1], first) >= cost(&pair[0], last) * (1.0 - 1e-9)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetscale_machine::machine_model::p2p_time;

    #[test]
    fn splits_cover_every_cut_with_enough_points() {
        assert_eq!(splits(6, 2), vec![vec![3, 6]]);
        assert_eq!(splits(7, 2), vec![vec![3, 7], vec![4, 7]]);
        assert!(splits(5, 2).is_empty());
        assert_eq!(splits(9, 3), vec![vec![3, 6, 9]]);
    }

    #[test]
    fn exact_two_segment_data_give_two_segments_at_the_break() {
        let x: Vec<f64> = (0..12).map(|k| (8u64 << (2 * k)) as f64).collect();
        let truth = [
            P2pSegment::new(1 << 17, 20e-6, 1e-9),
            P2pSegment::new(u64::MAX, 5e-3, 80e-9),
        ];
        let y: Vec<f64> = x.iter().map(|&s| p2p_time(&truth, s as u64)).collect();
        let (segments, rms) = fit_segments(&x, &y, 3).unwrap();
        assert_eq!(segments.len(), 2, "{segments:?}");
        assert_eq!(segments[0].max_bytes, 1 << 17);
        assert!((segments[1].s_per_byte - 80e-9).abs() < 1e-15);
        assert!((segments[0].latency_s - 20e-6).abs() < 1e-12);
        assert!(rms < 1e-9);
    }

    #[test]
    fn a_shaped_links_burst_is_fitted_as_a_negative_start_up_not_a_lower_rate() {
        // Start-up 0.4 ms, the first 600 kB at 3 ns/byte (the bucket), then 83.6 ns/byte.
        let x: Vec<f64> = (0..22).map(|k| (8u64 << k) as f64).collect();
        let y: Vec<f64> = x
            .iter()
            .map(|&b| 4e-4 + b.min(6e5) * 3e-9 + (b - 6e5).max(0.0) * 83.6e-9)
            .collect();
        let (segments, _) = fit_segments(&x, &y, 4).unwrap();
        let last = segments.last().unwrap();
        assert!(last.latency_s < 0.0, "{segments:?}");
        assert!(
            (last.s_per_byte / 83.6e-9 - 1.0).abs() < 0.05,
            "{segments:?}"
        );
        for &b in &[4.72e6, 16.0 * 1024.0 * 1024.0] {
            let want = 4e-4 + 6e5 * 3e-9 + (b - 6e5) * 83.6e-9;
            let got = p2p_time(&segments, b as u64);
            assert!((got / want - 1.0).abs() < 0.05, "{b}: {got} vs {want}");
        }
    }

    #[test]
    fn a_term_the_data_want_negative_is_fixed_and_the_other_refitted() {
        // A first segment whose free line starts below zero: through the origin instead,
        // with the slope refitted (not the free fit's slope with its intercept cut off).
        let x = [1e3, 2e3, 4e3, 8e3];
        let y = [0.5e-5, 1.5e-5, 3.5e-5, 7.5e-5];
        let line = weighted_line(&x, &y, 0.0);
        assert_eq!(line.a, 0.0);
        // Least squares on the relative error through the origin: sum(x/y) / sum((x/y)^2).
        let ratio: Vec<f64> = x.iter().zip(&y).map(|(x, y)| x / y).collect();
        let through_origin = ratio.iter().sum::<f64>() / ratio.iter().map(|r| r * r).sum::<f64>();
        assert!((line.b / through_origin - 1.0).abs() < 1e-12, "{}", line.b);
        assert!(
            line.a_ci[1] < 0.0,
            "the free fit's interval: {:?}",
            line.a_ci
        );
        // Times that fall with size: no cost per byte, the mean time.
        let line = weighted_line(&[1.0, 2.0, 3.0], &[3e-4, 2e-4, 1e-4], 0.0);
        assert_eq!(line.b, 0.0);
        assert!(line.a > 1e-4 && line.a < 3e-4);
    }

    #[test]
    fn one_stalled_median_does_not_make_a_segment_of_its_own() {
        // One-way times of one pair on the 4-host testbed (`hetscale probe --p2p`, medians
        // of 3 samples): the median at 32 B is a stall, which a free fit made a steep segment.
        let x: Vec<f64> = (0..22).map(|k| (8u64 << k) as f64).collect();
        let y = [
            6.6806e-4, 1.0687e-3, 2.7168e-3, 6.4699e-4, 8.7601e-4, 6.5785e-4, 6.3750e-4, 7.6246e-4,
            6.2276e-4, 6.5262e-4, 1.0282e-3, 6.1969e-4, 4.1477e-4, 1.3797e-3, 1.8521e-3, 1.2042e-2,
            3.4166e-2, 7.8585e-2, 1.6645e-1, 3.4273e-1, 6.9596e-1, 1.4087e0,
        ];
        let (segments, _) = fit_segments(&x, &y, 4).unwrap();
        for bytes in [8, 16, 32, 4096] {
            let t = p2p_time(&segments, bytes);
            assert!(t > 5e-4 && t < 9e-4, "{bytes} B: {t} s, {segments:?}");
        }
        let last = segments.last().unwrap();
        assert!(
            (last.s_per_byte / 84.3e-9 - 1.0).abs() < 0.05,
            "{segments:?}"
        );
    }

    #[test]
    fn a_noisy_hosts_segments_never_charge_a_transfer_more_than_a_larger_one() {
        // One-way times of two pairs on the 8-host testbed (`hetscale probe --p2p`, hosts of
        // a tenth of a core): below 128 KiB the times are stalls, whatever the size. Fitted
        // freely, one pair's got a segment charging 16 KiB more than 128 KiB, the other's a
        // segment starting far below where the one before it ended.
        let x: Vec<f64> = (0..22).map(|k| (8u64 << k) as f64).collect();
        let h7 = [
            3.0788e-3, 1.5352e-3, 8.9562e-4, 3.3869e-3, 1.5306e-3, 1.0797e-3, 1.6415e-3, 2.2859e-3,
            6.7636e-4, 1.3347e-3, 2.0773e-3, 5.0241e-3, 3.3973e-3, 2.0116e-3, 1.9634e-3, 1.2565e-2,
            3.5472e-2, 7.9211e-2, 1.7038e-1, 3.4601e-1, 7.0235e-1, 1.4235e0,
        ];
        let h4 = [
            1.2089e-3, 1.0932e-3, 2.0656e-3, 1.2243e-3, 1.6214e-3, 1.3666e-3, 1.2297e-3, 1.9163e-3,
            1.0383e-3, 1.5406e-3, 1.3722e-3, 1.4941e-3, 9.3764e-4, 3.5300e-3, 7.0925e-3, 1.2068e-2,
            3.8544e-2, 7.9739e-2, 1.7032e-1, 3.5749e-1, 7.0930e-1, 1.4525e0,
        ];
        for y in [h7, h4] {
            let (segments, _) = fit_segments(&x, &y, 4).unwrap();
            let mut before = 0.0;
            for bytes in x.iter().map(|&b| b as u64) {
                let t = p2p_time(&segments, bytes);
                assert!(t >= before * (1.0 - 1e-9), "{bytes} B: {t} s, {segments:?}");
                before = t;
            }
            let halo = p2p_time(&segments, 16 << 10);
            assert!(halo < 3e-3, "16 KiB: {halo} s, {segments:?}");
        }
    }

    #[test]
    fn a_straight_line_stays_one_segment() {
        let x: Vec<f64> = (0..8).map(|k| (8u64 << (3 * k)) as f64).collect();
        let y: Vec<f64> = x.iter().map(|s| 1e-4 + s * 8e-8).collect();
        let (segments, _) = fit_segments(&x, &y, 3).unwrap();
        assert_eq!(segments.len(), 1);
        assert_eq!(segments[0].max_bytes, x[7] as u64);
    }
}
