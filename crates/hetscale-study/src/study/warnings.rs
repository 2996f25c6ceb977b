//! What a study's numbers do not say by themselves: a speed-efficiency above 1, a measured
//! search that ended outside its tolerance (and why), runs too short to rise above the noise;
//! and what to change when no size in the searched range reaches the target.

use hetscale_model::ModelError;

use crate::error::StudyError;
use crate::runner::Measurement;
use crate::study::point::OperatingPoint;

/// How the user names the ends of the searched range of `N`: a spec's keys or the command
/// line's options.
#[derive(Debug, Clone, Copy)]
pub struct RangeNames {
    /// The smallest size searched.
    pub n_min: &'static str,
    /// The largest size searched.
    pub n_max: &'static str,
}

/// The range as a study spec names it.
pub const SPEC_RANGE: RangeNames = RangeNames {
    n_min: "n_min",
    n_max: "n_max",
};

/// The range as `hetscale predict` and `study --command` name it.
pub const OPTION_RANGE: RangeNames = RangeNames {
    n_min: "--n-min",
    n_max: "--n-max",
};

/// The names of the searched range's ends as the user wrote the spec: its keys, or the
/// options of `study --command`.
pub fn range_of(surface: crate::spec::Surface) -> RangeNames {
    match surface {
        crate::spec::Surface::File => SPEC_RANGE,
        crate::spec::Surface::Options => OPTION_RANGE,
    }
}

/// What to change when no `N` in `[lo, hi]` reaches the target, `closest` being the `E_s`
/// (called `what`) nearest to it and its `N`. `E_s` grows with `N`, so an `E_s` above the
/// target means the target lies below `E_s` at the smallest `N` (lower `n_min`, or raise the
/// target); one below it, beyond `E_s` at the largest (raise `n_max`, or lower the target).
/// Either way, a closest `E_s` far inside the range (a model whose `E_s` does not grow with
/// `N` throughout) means a wider range would not help: change the target.
pub fn unreachable_target(
    what: &str,
    target: f64,
    (lo, hi): (f64, f64),
    (e, n): (f64, f64),
    names: RangeNames,
) -> String {
    let shown = hetscale_model::numbers::echoed(target);
    if e > target && n > 2.0 * lo {
        // The lowest is inside the range, not at its bottom: a smaller n_min would not help.
        format!(
            "{what} = {e:.4} at N = {n:.0}, its lowest in [{lo:.0}, {hi:.0}], already exceeds \
             the target {shown}: no N in the range falls to it; raise the target"
        )
    } else if e > target {
        format!(
            "{what} = {e:.4} at N = {n:.0} already exceeds the target {shown}: lower {} or raise the target",
            names.n_min
        )
    } else if n < hi / 2.0 {
        // The best is inside the range, not at its top: a larger range would not help.
        format!(
            "no N in [{lo:.0}, {hi:.0}] reaches {what} = {shown}: the highest {what} reached is \
             {e:.4} at N = {n:.0}, and it does not grow beyond that size; lower the target"
        )
    } else {
        format!(
            "no N in [{lo:.0}, {hi:.0}] reaches {what} = {shown}: the highest {what} reached is \
             {e:.4} at N = {n:.0}; raise {} or lower the target",
            names.n_max
        )
    }
}

/// `err` with [`unreachable_target`]'s advice if it is a model's unreachable target (then a
/// [`StudyError::Configuration`] of `configuration`), else as it is.
pub fn with_range_advice(err: ModelError, configuration: &str, names: RangeNames) -> StudyError {
    match err {
        ModelError::Unreachable {
            what,
            target,
            lo,
            hi,
            best,
            best_at,
        } => StudyError::Configuration {
            configuration: configuration.to_owned(),
            message: unreachable_target(what, target, (lo, hi), (best, best_at), names),
        },
        other => StudyError::Model(other),
    }
}

/// Runs shorter than this, on a real backend, are mostly start-up and timer noise.
pub const NOISE_FLOOR_S: f64 = 0.01;

/// The thresholds a study is judged against.
pub struct Expectations {
    /// Target speed-efficiency.
    pub target: f64,
    /// Relative tolerance of the measured search.
    pub tolerance: f64,
    /// Whether times are measured (not the simulator's virtual time).
    pub real_time: bool,
}

/// Every warning on `samples` and the measured approach's `points`, one line each.
pub fn warnings(
    expect: &Expectations,
    points: &[OperatingPoint],
    samples: &[Measurement],
) -> Vec<String> {
    let mut out: Vec<String> = samples.iter().filter_map(above_one).collect();
    if expect.real_time {
        out.extend(short_runs(samples));
        out.extend(outlier_runs(samples));
    }
    out.extend(points.iter().filter_map(|p| off_target(expect, p, samples)));
    out
}

fn above_one(m: &Measurement) -> Option<String> {
    (m.speed_efficiency > 1.0).then(|| {
        format!(
            "{} at N = {}: E_s = {:.3} > 1: the marked speed is too low for this code; measure it \
             with `hetscale bench` and use that platform",
            m.configuration, m.n, m.speed_efficiency
        )
    })
}

fn short_runs(samples: &[Measurement]) -> Option<String> {
    let short: Vec<&Measurement> = samples
        .iter()
        .filter(|m| m.time.median < NOISE_FLOOR_S)
        .collect();
    let shortest = short
        .iter()
        .min_by(|a, b| a.time.median.total_cmp(&b.time.median))?;
    Some(format!(
        "{} of {} sizes ran shorter than the noise floor of {} s (shortest {:.2e} s: {} at \
         N = {}): their times are mostly start-up and noise; raise n_min",
        short.len(),
        samples.len(),
        NOISE_FLOOR_S,
        shortest.time.median,
        shortest.configuration,
        shortest.n
    ))
}

/// Configurations whose measured and computed sizes have 95% intervals that do not overlap:
/// one approach is wrong there beyond the noise of the runs.
pub fn disagreements(measured: &[OperatingPoint], computed: &[OperatingPoint]) -> Vec<String> {
    measured
        .iter()
        .filter_map(|m| {
            let c = computed
                .iter()
                .find(|c| c.configuration == m.configuration)?;
            let ((m_lo, m_hi), (c_lo, c_hi)) = (m.n_ci95?, c.n_ci95?);
            (m_hi < c_lo || c_hi < m_lo).then(|| {
                format!(
                    "{}: the measured N = {:.0} [{m_lo:.0}, {m_hi:.0}] and the computed N = {:.0} \
                     [{c_lo:.0}, {c_hi:.0}] disagree beyond their 95% intervals: check the \
                     computed fit's quality, or add repetitions",
                    m.configuration, m.n, c.n
                )
            })
        })
        .collect()
}

/// Sizes some of whose repeated runs are outliers (as `hetscale run --runs` flags them).
fn outlier_runs(samples: &[Measurement]) -> Option<String> {
    let with: Vec<&Measurement> = samples
        .iter()
        .filter(|m| !m.time.outliers.is_empty())
        .collect();
    let worst = with
        .iter()
        .max_by(|a, b| (a.time.max / a.time.median).total_cmp(&(b.time.max / b.time.median)))?;
    Some(format!(
        "{} of {} sizes had outlier runs (modified z-score > {}; the worst: {} at N = {}, range \
         {:.3e} s .. {:.3e} s around the median {:.3e} s): their medians stand, their means and \
         sd do not; rerun on a quiet machine or raise warmup",
        with.len(),
        samples.len(),
        crate::stats::OUTLIER_Z,
        worst.configuration,
        worst.n,
        worst.time.min,
        worst.time.max,
        worst.time.median
    ))
}

/// A measured size whose `E_s` is outside the tolerance, with the reason the search stopped.
fn off_target(
    expect: &Expectations,
    point: &OperatingPoint,
    samples: &[Measurement],
) -> Option<String> {
    let band = expect.tolerance * expect.target;
    let gap = point.speed_efficiency - expect.target;
    if gap.abs() <= band {
        return None;
    }
    let n = point.n.round() as u64;
    let at = |size: u64| {
        samples
            .iter()
            .find(|m| m.configuration == point.configuration && m.n == size)
    };
    let neighbour = if gap > 0.0 {
        n.checked_sub(1)
    } else {
        Some(n + 1)
    };
    let crossed = neighbour
        .and_then(at)
        .is_some_and(|m| (m.speed_efficiency - expect.target) * gap < 0.0);
    let why = match at(n) {
        _ if crossed => format!(
            "N = {} is on the other side of the target: integer N cannot get closer",
            neighbour.unwrap_or(n)
        ),
        Some(m)
            if m.speed_efficiency_ci.0 <= expect.target
                && expect.target <= m.speed_efficiency_ci.1 =>
        {
            format!(
                "its 95% interval [{:.4}, {:.4}] contains the target: the noise, not N, decides",
                m.speed_efficiency_ci.0, m.speed_efficiency_ci.1
            )
        }
        _ => "the search ran out of sizes to try".to_string(),
    };
    Some(format!(
        "{}: the measured search ended at N = {n} with E_s = {:.4}, outside {} +/- {}%: {why}",
        point.configuration,
        point.speed_efficiency,
        expect.target,
        expect.tolerance * 100.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    fn sample(n: u64, times: &[f64], e_s: f64, ci: (f64, f64)) -> Measurement {
        Measurement {
            configuration: "C_2".into(),
            n,
            work: 1.0,
            time: summarize(times).unwrap(),
            speed_efficiency: e_s,
            speed_efficiency_ci: ci,
        }
    }

    fn point(n: f64, e_s: f64) -> OperatingPoint {
        OperatingPoint {
            configuration: "C_2".into(),
            p: 2,
            marked_speed: 1e9,
            n,
            n_ci95: None,
            work: 1.0,
            work_ci95: None,
            time_s: 1.0,
            speed_efficiency: e_s,
        }
    }

    #[test]
    fn measured_and_computed_sizes_disagreeing_beyond_their_intervals_are_named() {
        let with = |n: f64, ci: (f64, f64)| OperatingPoint {
            n_ci95: Some(ci),
            ..point(n, 0.5)
        };
        let measured = [with(322.0, (290.0, 360.0))];
        assert_eq!(
            disagreements(&measured, &[with(175.0, (150.0, 200.0))]),
            vec![
                "C_2: the measured N = 322 [290, 360] and the computed N = 175 [150, 200] \
                 disagree beyond their 95% intervals: check the computed fit's quality, or add \
                 repetitions"
            ]
        );
        assert!(disagreements(&measured, &[with(280.0, (250.0, 295.0))]).is_empty());
        assert!(
            disagreements(&measured, &[point(175.0, 0.5)]).is_empty(),
            "no interval"
        );
    }

    #[test]
    fn the_advice_on_an_unreachable_target_follows_the_side_it_missed() {
        let below = unreachable_target("E_s", 1e-5, (8.0, 1e7), (1e-4, 8.0), OPTION_RANGE);
        assert_eq!(
            below,
            "E_s = 0.0001 at N = 8 already exceeds the target 1e-5: lower --n-min or raise \
             the target"
        );
        // The target is echoed as typed would be, not as 300 digits.
        let tiny = unreachable_target("E_s", 1e-300, (8.0, 1e7), (1e-4, 8.0), OPTION_RANGE);
        assert!(tiny.contains("the target 1e-300: lower --n-min"), "{tiny}");
        let above = unreachable_target("E_s", 0.9, (16.0, 64.0), (0.5, 64.0), SPEC_RANGE);
        assert_eq!(
            above,
            "no N in [16, 64] reaches E_s = 0.9: the highest E_s reached is 0.5000 at N = 64; \
             raise n_max or lower the target"
        );
        // A best far inside the range: a larger n_max would not reach the target.
        let flat = unreachable_target("E_s", 0.09, (8.0, 1e7), (0.0575, 24.0), OPTION_RANGE);
        assert_eq!(
            flat,
            "no N in [8, 10000000] reaches E_s = 0.09: the highest E_s reached is 0.0575 at \
             N = 24, and it does not grow beyond that size; lower the target"
        );
        // A lowest far inside the range: a smaller n_min would not reach the target.
        let dip = unreachable_target("E_s", 0.046, (512.0, 8192.0), (0.06, 6020.0), OPTION_RANGE);
        assert_eq!(
            dip,
            "E_s = 0.0600 at N = 6020, its lowest in [512, 8192], already exceeds the target \
             0.046: no N in the range falls to it; raise the target"
        );
        let model = ModelError::Unreachable {
            what: "speed-efficiency",
            target: 0.9,
            lo: 16.0,
            hi: 64.0,
            best: 0.5,
            best_at: 64.0,
        };
        assert_eq!(
            with_range_advice(model, "C_2", SPEC_RANGE).to_string(),
            "configuration C_2: no N in [16, 64] reaches speed-efficiency = 0.9: the highest \
             speed-efficiency reached is 0.5000 at N = 64; raise n_max or lower the target"
        );
    }

    const EXPECT: Expectations = Expectations {
        target: 0.2,
        tolerance: 0.01,
        real_time: true,
    };

    #[test]
    fn a_search_that_ended_outside_tolerance_says_why() {
        let integer = [
            sample(170, &[1.0], 0.1993, (0.1993, 0.1993)),
            sample(171, &[1.0], 0.2073, (0.2073, 0.2073)),
        ];
        assert_eq!(
            warnings(&EXPECT, &[point(171.0, 0.2073)], &integer),
            vec![
                "C_2: the measured search ended at N = 171 with E_s = 0.2073, outside 0.2 +/- 1%: \
                  N = 170 is on the other side of the target: integer N cannot get closer"
            ]
        );
        let noisy = [sample(322, &[1.0, 1.2, 0.8], 0.408, (0.15, 0.58))];
        assert_eq!(
            warnings(&EXPECT, &[point(322.0, 0.408)], &noisy)[0],
            "C_2: the measured search ended at N = 322 with E_s = 0.4080, outside 0.2 +/- 1%: \
             its 95% interval [0.1500, 0.5800] contains the target: the noise, not N, decides"
        );
        let within = [sample(171, &[1.0], 0.2019, (0.2019, 0.2019))];
        assert!(warnings(&EXPECT, &[point(171.0, 0.2019)], &within).is_empty());
    }

    #[test]
    fn efficiency_above_one_and_runs_below_the_noise_floor_are_named() {
        let samples = [
            sample(512, &[0.5], 3.49, (3.4, 3.6)),
            sample(16, &[0.002], 0.1, (0.1, 0.1)),
            sample(8, &[0.001], 0.05, (0.05, 0.05)),
        ];
        let found = warnings(&EXPECT, &[], &samples);
        assert_eq!(
            found,
            vec![
                "C_2 at N = 512: E_s = 3.490 > 1: the marked speed is too low for this code; \
                 measure it with `hetscale bench` and use that platform",
                "2 of 3 sizes ran shorter than the noise floor of 0.01 s (shortest 1.00e-3 s: C_2 \
                 at N = 8): their times are mostly start-up and noise; raise n_min"
            ]
        );
        let noisy = [
            sample(64, &[1.0, 1.02, 0.98, 1.01, 0.99, 2.0], 0.3, (0.29, 0.31)),
            sample(128, &[2.0, 2.0, 2.0], 0.4, (0.4, 0.4)),
        ];
        assert_eq!(
            warnings(&EXPECT, &[], &noisy),
            vec![
                "1 of 2 sizes had outlier runs (modified z-score > 3.5; the worst: C_2 at N = 64, \
                 range 9.800e-1 s .. 2.000e0 s around the median 1.005e0 s): their medians \
                 stand, their means and sd do not; rerun on a quiet machine or raise warmup"
            ]
        );
        let simulated = Expectations {
            real_time: false,
            ..EXPECT
        };
        assert_eq!(
            warnings(&simulated, &[], &samples).len(),
            1,
            "virtual time has no noise"
        );
    }
}
