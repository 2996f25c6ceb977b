//! 95% intervals on sizes derived from runs: where the target `E_s` may lie given the noise
//! of the measured `E_s`.

use crate::runner::Measurement;

/// The 95% interval of the size where `E_s(N)` meets `target`, from the interval of `E_s`
/// measured at `at` and the local slope of `E_s(N)` between the sizes measured nearest on each
/// side of it (`measured`: the configuration's sizes), widened to whole sizes and to hold
/// `at` itself (the search stopped there: the target is met within its tolerance); `None`
/// without a usable slope, or from a single run, whose noise is unknown.
pub fn size_interval(
    at: &Measurement,
    measured: &[Measurement],
    target: f64,
) -> Option<(f64, f64)> {
    if at.time.samples < 2 {
        return None;
    }
    let below = measured.iter().filter(|m| m.n < at.n).max_by_key(|m| m.n);
    let above = measured.iter().filter(|m| m.n > at.n).min_by_key(|m| m.n);
    let (a, b) = match (below, above) {
        (Some(a), Some(b)) => (a, b),
        (Some(a), None) => (a, at),
        (None, Some(b)) => (at, b),
        (None, None) => return None,
    };
    let slope = (b.speed_efficiency - a.speed_efficiency) / (b.n as f64 - a.n as f64);
    if !slope.is_finite() || slope == 0.0 {
        return None;
    }
    let (e_lo, e_hi) = at.speed_efficiency_ci;
    let size = |e: f64| (at.n as f64 + (target - e) / slope).max(1.0);
    let (x, y, n) = (size(e_lo), size(e_hi), at.n as f64);
    Some((x.min(y).min(n).floor(), x.max(y).max(n).ceil()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    fn measured(n: u64, e_s: f64, ci: (f64, f64)) -> Measurement {
        Measurement {
            configuration: "C_2".into(),
            n,
            work: 1.0,
            time: summarize(&[1.0, 1.1, 0.9]).unwrap(),
            speed_efficiency: e_s,
            speed_efficiency_ci: ci,
        }
    }

    #[test]
    fn the_e_s_interval_maps_through_the_local_slope_onto_n() {
        // E_s rises 0.001 per unit of N around N = 300; at N = 300 it is 0.49 [0.45, 0.52].
        let sizes = [
            measured(200, 0.39, (0.39, 0.39)),
            measured(300, 0.49, (0.45, 0.52)),
            measured(400, 0.59, (0.59, 0.59)),
            measured(800, 0.8, (0.8, 0.8)),
        ];
        let (lo, hi) = size_interval(&sizes[1], &sizes, 0.5).unwrap();
        assert!(
            (lo - 280.0).abs() < 1e-9 && (hi - 350.0).abs() < 1e-9,
            "[{lo}, {hi}]"
        );
        // The largest size: the slope from its lower neighbour (0.21 / 400).
        let (lo, hi) = size_interval(&sizes[3], &sizes, 0.8).unwrap();
        assert!(
            (lo - 800.0).abs() < 1e-9 && (hi - 800.0).abs() < 1e-9,
            "[{lo}, {hi}]"
        );
        assert_eq!(size_interval(&sizes[1], &sizes[1..2], 0.5), None);
        // Runs that agree exactly (the simulator): from N to the crossing the slope puts at 310.
        let exact = Measurement {
            speed_efficiency_ci: (0.49, 0.49),
            ..sizes[1].clone()
        };
        assert_eq!(size_interval(&exact, &sizes, 0.5), Some((300.0, 310.0)));
        let flat = [
            measured(100, 0.5, (0.4, 0.6)),
            measured(200, 0.5, (0.5, 0.5)),
        ];
        assert_eq!(size_interval(&flat[0], &flat, 0.5), None);
        let once = Measurement {
            time: summarize(&[1.0]).unwrap(),
            ..sizes[1].clone()
        };
        assert_eq!(
            size_interval(&once, &sizes, 0.5),
            None,
            "one run: noise unknown"
        );
    }
}
