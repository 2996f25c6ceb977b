//! Run statistics after hyperfine's conventions: warm-up, repetitions, median and spread,
//! outliers by the median absolute deviation, confidence intervals, and repetition until the
//! interval is narrow enough.

use crate::error::{Result, StudyError};
use serde::Serialize;
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, StudentsT};

/// Modified z-score above which a sample is an outlier (Iglewicz & Hoaglin).
pub const OUTLIER_Z: f64 = 3.5;
/// Confidence level of the reported intervals.
pub const CONFIDENCE: f64 = 0.95;

/// Summary of repeated measurements of one quantity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Number of samples.
    pub samples: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one sample).
    pub stddev: f64,
    /// Median: the value hetscale reports.
    pub median: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    /// Distribution-free confidence interval of the median (order statistics); `(min, max)`
    /// when there are too few samples for 95%.
    #[serde(rename = "median_ci95")]
    pub median_ci: (f64, f64),
    /// Student-t confidence interval of the mean, clipped at 0 when no sample is negative (a
    /// time's or a rate's mean cannot be).
    #[serde(rename = "mean_ci95")]
    pub mean_ci: (f64, f64),
    /// Indices of samples whose modified z-score exceeds [`OUTLIER_Z`].
    pub outliers: Vec<usize>,
}

impl Summary {
    /// hyperfine's summary of repeated times: mean +/- standard deviation, the range, the median.
    pub fn time_line(&self) -> String {
        if self.samples == 1 {
            return format!("{:.6} s", self.median);
        }
        format!(
            "{:.6} s +/- {:.6} s (mean +/- sd of {} runs), range {:.6} s .. {:.6} s, median {:.6} s",
            self.mean, self.stddev, self.samples, self.min, self.max, self.median
        )
    }

    /// What to say of runs whose time is an outlier (modified z-score above [`OUTLIER_Z`], as
    /// hyperfine flags them), if any are: the median is robust to them, the mean and sd are not.
    pub fn outlier_warning(&self) -> Option<String> {
        if self.outliers.is_empty() {
            return None;
        }
        Some(format!(
            "{} of {} runs are statistical outliers (modified z-score > {OUTLIER_Z} around the \
             median {:.6} s; range {:.6} s .. {:.6} s): other programs or start-up interfered; \
             rerun on a quiet machine, or add --warmup runs",
            self.outliers.len(),
            self.samples,
            self.median,
            self.min,
            self.max
        ))
    }

    /// The same statistics of the samples times `factor` (> 0): a change of unit.
    pub fn scaled(&self, factor: f64) -> Summary {
        let scale = |(lo, hi): (f64, f64)| (lo * factor, hi * factor);
        Summary {
            mean: self.mean * factor,
            stddev: self.stddev * factor,
            median: self.median * factor,
            min: self.min * factor,
            max: self.max * factor,
            mad: self.mad * factor,
            median_ci: scale(self.median_ci),
            mean_ci: scale(self.mean_ci),
            ..self.clone()
        }
    }

    /// Half-width of the median interval relative to the median.
    pub fn relative_ci_half_width(&self) -> f64 {
        (self.median_ci.1 - self.median_ci.0) / (2.0 * self.median.abs())
    }
}

/// Summarises `samples` (at least one, all finite).
pub fn summarize(samples: &[f64]) -> Result<Summary> {
    if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
        return Err(StudyError::Stats("need at least one finite sample".into()));
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let stddev = if n > 1 {
        (sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let median = median_of_sorted(&sorted);
    let mut deviations: Vec<f64> = sorted.iter().map(|x| (x - median).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    let mad = median_of_sorted(&deviations);
    Ok(Summary {
        samples: n,
        mean,
        stddev,
        median,
        min: sorted[0],
        max: sorted[n - 1],
        mad,
        median_ci: median_interval(&sorted),
        mean_ci: clipped_at_zero(mean_interval(mean, stddev, n), sorted[0]),
        outliers: outliers(samples, median, mad),
    })
}

/// `interval` with its low end raised to 0 when the smallest sample is not negative.
fn clipped_at_zero((lo, hi): (f64, f64), smallest: f64) -> (f64, f64) {
    if smallest >= 0.0 {
        (lo.max(0.0), hi)
    } else {
        (lo, hi)
    }
}

fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Order statistics `(x_(k), x_(n-k+1))` with the largest `k` whose coverage is >= 95%:
/// `P(k <= B <= n - k) >= 0.95` for `B ~ Binomial(n, 1/2)`.
fn median_interval(sorted: &[f64]) -> (f64, f64) {
    let n = sorted.len();
    let Ok(binomial) = Binomial::new(0.5, n as u64) else {
        return (sorted[0], sorted[n - 1]);
    };
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let k = (1..=n / 2)
        .take_while(|&k| binomial.cdf(k as u64 - 1) <= tail)
        .last();
    match k {
        Some(k) => (sorted[k - 1], sorted[n - k]),
        None => (sorted[0], sorted[n - 1]),
    }
}

fn mean_interval(mean: f64, stddev: f64, n: usize) -> (f64, f64) {
    if n < 2 {
        return (mean, mean);
    }
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .map(|d| d.inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0))
        .unwrap_or(f64::INFINITY);
    let half = t * stddev / (n as f64).sqrt();
    (mean - half, mean + half)
}

/// Samples whose modified z-score `0.6745 |x - median| / MAD` exceeds [`OUTLIER_Z`].
fn outliers(samples: &[f64], median: f64, mad: f64) -> Vec<usize> {
    if mad == 0.0 {
        return samples
            .iter()
            .enumerate()
            .filter(|(_, x)| **x != median)
            .map(|(i, _)| i)
            .collect();
    }
    samples
        .iter()
        .enumerate()
        .filter(|(_, x)| 0.6745 * (*x - median).abs() / mad > OUTLIER_Z)
        .map(|(i, _)| i)
        .collect()
}

/// How many times to run a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Repetitions {
    /// Runs discarded before measuring (caches, page faults, thread start-up).
    pub warmup: usize,
    /// Runs always measured.
    pub min_runs: usize,
    /// Runs never exceeded.
    pub max_runs: usize,
    /// Keep running (up to `max_runs`) until the median's interval half-width is at most this
    /// fraction of the median; `None` runs exactly `min_runs`.
    pub target_relative_ci: Option<f64>,
}

impl Default for Repetitions {
    fn default() -> Self {
        Self {
            warmup: 1,
            min_runs: 3,
            max_runs: 10,
            target_relative_ci: None,
        }
    }
}

impl Repetitions {
    /// Whether another measured run is wanted after `samples`.
    pub fn wants_more(&self, samples: &[f64]) -> bool {
        if samples.len() < self.min_runs {
            return true;
        }
        if samples.len() >= self.max_runs {
            return false;
        }
        match (self.target_relative_ci, summarize(samples)) {
            (Some(target), Ok(s)) => s.relative_ci_half_width() > target,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_samples() {
        let s = summarize(&[3.0, 1.0, 2.0, 4.0, 100.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.mad), (3.0, 1.0, 100.0, 1.0));
        assert_eq!(s.outliers, vec![4]);
        assert!((s.mean - 22.0).abs() < 1e-12);
        // Five samples are too few for a 95% order-statistic interval of the median.
        assert_eq!(s.median_ci, (1.0, 100.0));
        // The t interval of the mean reaches below 0; no time or rate can, so it stops there.
        assert_eq!(s.mean_ci.0, 0.0);
        assert!(summarize(&[-3.0, 1.0, 2.0]).unwrap().mean_ci.0 < -3.0);
        let mflops = summarize(&[2.0, 4.0]).unwrap().scaled(1e6);
        assert_eq!((mflops.median, mflops.max, mflops.samples), (3e6, 4e6, 2));
    }

    #[test]
    fn repeated_times_are_summarised_as_hyperfine_does_and_outliers_named() {
        // Median 1.005, MAD 0.015: 2.0 has a modified z-score of 44.7, 0.98 of 1.1.
        let s = summarize(&[1.0, 1.02, 0.98, 1.01, 0.99, 2.0]).unwrap();
        assert_eq!(
            s.time_line(),
            "1.166667 s +/- 0.408493 s (mean +/- sd of 6 runs), range 0.980000 s .. 2.000000 s, \
             median 1.005000 s"
        );
        assert_eq!(s.outliers, vec![5]);
        assert_eq!(
            s.outlier_warning().unwrap(),
            "1 of 6 runs are statistical outliers (modified z-score > 3.5 around the median \
             1.005000 s; range 0.980000 s .. 2.000000 s): other programs or start-up interfered; \
             rerun on a quiet machine, or add --warmup runs"
        );
        let steady = summarize(&[1.0, 1.02, 0.98, 1.01, 0.99]).unwrap();
        assert_eq!(steady.outlier_warning(), None);
        assert_eq!(summarize(&[0.25]).unwrap().time_line(), "0.250000 s");
    }

    #[test]
    fn median_interval_uses_order_statistics() {
        // n = 10: P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024, so k = 2: (x_2, x_9).
        let samples: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(summarize(&samples).unwrap().median_ci, (2.0, 9.0));
    }

    #[test]
    fn repetition_stops_when_interval_is_narrow() {
        let policy = Repetitions {
            warmup: 0,
            min_runs: 6,
            max_runs: 50,
            target_relative_ci: Some(0.05),
        };
        assert!(policy.wants_more(&[1.0; 5]));
        assert!(!policy.wants_more(&[1.0; 6]));
        let noisy = [1.0, 2.0, 1.0, 2.0, 1.0, 2.0];
        assert!(policy.wants_more(&noisy));
        assert!(!policy.wants_more(&[1.0; 50]));
    }

    #[test]
    fn no_samples_is_an_error() {
        assert!(summarize(&[]).is_err());
        assert!(summarize(&[1.0, f64::NAN]).is_err());
    }
}
