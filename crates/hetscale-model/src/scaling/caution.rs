//! What the data cannot support: the cautions a model and its predictions carry.

use crate::numbers::size;
use serde::Serialize;
use std::fmt;

/// A model whose cross-validated error is above this (%) says so ([`Caution::PoorFit`]).
pub const POOR_CV_ERROR_PERCENT: f64 = 20.0;

/// Predicting for more than this many times the largest fitted node count, or size, says so
/// ([`Caution::Extrapolation`], [`Caution::SizeExtrapolation`]).
pub const MAX_EXTRAPOLATION: f64 = 8.0;

/// What the data cannot support; callers print each as a warning.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "caution", rename_all = "snake_case")]
pub enum Caution {
    /// Fitted on fewer than 3 configurations: cross-validation cannot leave a configuration
    /// out, so the form of the overhead in `p` is a guess and no nested fold checks it.
    FewConfigurations {
        /// How many configurations the model was fitted on.
        configurations: usize,
    },
    /// The target configuration has more than [`MAX_EXTRAPOLATION`] times the nodes of the
    /// largest fitted one.
    Extrapolation {
        /// The target's node count.
        nodes: usize,
        /// The largest fitted node count.
        largest_fitted: usize,
    },
    /// The predicted size is more than [`MAX_EXTRAPOLATION`] times the largest fitted size:
    /// the overhead's growth in `n` is extrapolated.
    SizeExtrapolation {
        /// The predicted size.
        n: f64,
        /// The largest fitted size.
        largest_fitted: f64,
    },
    /// The size asked about is less than 1/[`MAX_EXTRAPOLATION`] of the smallest fitted size:
    /// the overhead's form in `n` is extrapolated downwards.
    SizeBelowFitted {
        /// The size asked about.
        n: f64,
        /// The smallest fitted size.
        smallest_fitted: f64,
    },
    /// The size interval's lower end is below the smallest size searched and cut at it: a
    /// smaller overhead, which the runs cannot exclude, holds the target there already.
    IntervalAtBound {
        /// The smallest size searched.
        n: f64,
    },
    /// The runs cannot exclude an overhead `factor` times the model's on the target (the
    /// interval's upper end), with which no size up to `n_max` holds the target: the size's
    /// upper end is open.
    OpenUpperEnd {
        /// The target's node count.
        nodes: usize,
        /// The target `E_s`.
        efficiency: f64,
        /// The overhead's factor at the 95% interval's upper end.
        factor: f64,
        /// The largest size searched.
        n_max: f64,
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
                "fitted on {configurations} configuration(s), fewer than 3: no configuration could be left out to check the overhead's form in p, nor a fold fitted small to check its extrapolation"
            ),
            Caution::Extrapolation {
                nodes,
                largest_fitted,
            } => write!(
                f,
                "p = {nodes} is {:.0}x the largest fitted node count ({largest_fitted}), beyond {MAX_EXTRAPOLATION}x: the overhead's form in p is extrapolated far past the runs",
                *nodes as f64 / *largest_fitted as f64
            ),
            Caution::SizeExtrapolation { n, largest_fitted } => write!(
                f,
                "N = {n:.0} is {:.0}x the largest fitted size ({largest_fitted}), beyond {MAX_EXTRAPOLATION}x: the overhead's growth in n is extrapolated",
                n / largest_fitted
            ),
            Caution::SizeBelowFitted { n, smallest_fitted } => write!(
                f,
                "N = {} is {:.0}x below the smallest fitted size ({}), beyond {MAX_EXTRAPOLATION}x: the overhead's form in n is extrapolated downwards",
                size(*n),
                smallest_fitted / n,
                size(*smallest_fitted)
            ),
            Caution::IntervalAtBound { n } => write!(
                f,
                "the interval of N reaches below the smallest size searched and is cut at it, N = {}",
                size(*n)
            ),
            Caution::OpenUpperEnd {
                nodes,
                efficiency,
                factor,
                n_max,
            } => write!(
                f,
                "the runs cannot exclude an overhead {factor:.2}x the model's on {nodes} nodes, with which E_s = {efficiency} is held at no size up to N = {}: the upper end of N is open",
                size(*n_max)
            ),
            Caution::PoorFit { cv_error_percent } => write!(
                f,
                "the model's cross-validated error is {cv_error_percent:.1}%, above {POOR_CV_ERROR_PERCENT}%: it does not explain the runs well"
            ),
        }
    }
}
