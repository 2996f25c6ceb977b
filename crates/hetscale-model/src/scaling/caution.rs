//! What the data cannot support: the cautions a model and its predictions carry.

use crate::numbers::size;
use serde::Serialize;
use std::fmt;

/// A model whose cross-validated error is above this (%) says so ([`Caution::PoorFit`]).
pub const POOR_CV_ERROR_PERCENT: f64 = 20.0;

/// Predicting for more than this many times the largest fitted node count widens the
/// interval and says so ([`Caution::Extrapolation`]).
pub const MAX_EXTRAPOLATION: f64 = 8.0;

/// What the data cannot support; callers print each as a warning.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "caution", rename_all = "snake_case")]
pub enum Caution {
    /// Fitted on fewer than 3 configurations: cross-validation cannot leave a configuration
    /// out, so the form of the overhead in `p` is a guess; intervals are widened.
    FewConfigurations {
        /// How many configurations the model was fitted on.
        configurations: usize,
    },
    /// The target configuration has more than [`MAX_EXTRAPOLATION`] times the nodes of the
    /// largest fitted one; intervals are widened.
    Extrapolation {
        /// The target's node count.
        nodes: usize,
        /// The largest fitted node count.
        largest_fitted: usize,
    },
    /// The predicted size is more than [`MAX_EXTRAPOLATION`] times the largest fitted size:
    /// the overhead's growth in `n` is extrapolated; intervals are widened.
    SizeExtrapolation {
        /// The predicted size.
        n: f64,
        /// The largest fitted size.
        largest_fitted: f64,
    },
    /// The size asked about is less than 1/[`MAX_EXTRAPOLATION`] of the smallest fitted size:
    /// the overhead's form in `n` is extrapolated downwards; intervals are widened.
    SizeBelowFitted {
        /// The size asked about.
        n: f64,
        /// The smallest fitted size.
        smallest_fitted: f64,
    },
    /// The size interval, widened, reached past the sizes searched and was cut at their
    /// bound: the upper (or lower) end is that bound, not an estimate.
    IntervalAtBound {
        /// The bound the interval was cut at.
        n: f64,
        /// Whether it is the largest size searched (else the smallest).
        upper: bool,
    },
    /// The hypotheses the cross-validation cannot tell from the chosen one predict sizes
    /// beyond the resampled interval: the size interval was widened to take them in.
    ModelForm {
        /// How many hypotheses are plausible, the chosen one included.
        hypotheses: usize,
        /// The smallest size they predict.
        low: f64,
        /// The largest size they predict.
        high: f64,
        /// How many of them reach the target at no size searched.
        unreached: usize,
    },
    /// The cross-validated error is above [`POOR_CV_ERROR_PERCENT`].
    PoorFit {
        /// The model's cross-validated error, %.
        cv_error_percent: f64,
    },
}

impl fmt::Display for Caution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Caution::FewConfigurations { configurations } => write!(
                f,
                "fitted on {configurations} configuration(s), fewer than 3: no configuration could be left out to check the overhead's form in p; intervals widened"
            ),
            Caution::Extrapolation {
                nodes,
                largest_fitted,
            } => write!(
                f,
                "p = {nodes} is {:.0}x the largest fitted node count ({largest_fitted}), beyond {MAX_EXTRAPOLATION}x: intervals widened",
                *nodes as f64 / *largest_fitted as f64
            ),
            Caution::SizeExtrapolation { n, largest_fitted } => write!(
                f,
                "N = {n:.0} is {:.0}x the largest fitted size ({largest_fitted}), beyond {MAX_EXTRAPOLATION}x: intervals widened",
                n / largest_fitted
            ),
            Caution::SizeBelowFitted { n, smallest_fitted } => write!(
                f,
                "N = {} is {:.0}x below the smallest fitted size ({}), beyond {MAX_EXTRAPOLATION}x: intervals widened",
                size(*n),
                smallest_fitted / n,
                size(*smallest_fitted)
            ),
            Caution::IntervalAtBound { n, upper: true } => write!(
                f,
                "the interval of N reaches past the largest size searched and is cut at it, N = {n:.0}: its upper end is unknown (raise --n-max to see further)"
            ),
            Caution::IntervalAtBound { n, upper: false } => write!(
                f,
                "the interval of N reaches below the smallest size searched and is cut at it, N = {n:.0}"
            ),
            Caution::ModelForm {
                hypotheses,
                low,
                high,
                unreached,
            } => {
                write!(
                    f,
                    "{hypotheses} overhead forms fit the runs as well as the chosen one (95%) and predict N from {low:.0} to {high:.0}"
                )?;
                if *unreached > 0 {
                    write!(f, " ({unreached} reach the target at no size searched)")?;
                }
                f.write_str(": the interval takes them in")
            }
            Caution::PoorFit { cv_error_percent } => write!(
                f,
                "the model's cross-validated error is {cv_error_percent:.1}%, above {POOR_CV_ERROR_PERCENT}%: it does not explain the runs well"
            ),
        }
    }
}
