//! A scaling model fitted to any program's runs:
//! `T(n, configuration) = a W(n)/C + T_o(n, p) [+ b]` (`a W(n)/(p C_min)` for a program that
//! gives every node the same share: [`Partition`]).
//!
//! The overhead `T_o` is chosen from a hypothesis space in the spirit of Extra-P's performance
//! model normal form ([`HypothesisSpace`]: one or two terms `c n^i log2(n)^j p^k log2(p)^l`, a
//! term in the configuration's speeds, and any caller's own columns such as a kernel's HBSP^1
//! overhead) by cross-validation that leaves out whole configurations ([`select`]): the model
//! chosen is the one that predicts configurations it was not fitted on, the largest ones (and
//! the largest sizes) weighed most, since predicting larger configurations is what the model
//! is for; a prior on the number of factors keeps the winner from fitting the noise.
//!
//! Every fit is weighted least squares on relative residuals (times span decades) with every
//! coefficient `>= 0` (a negative overhead does not extrapolate). The chosen model prints as a
//! formula a person reads, with its 95% intervals, cross-validated error and runners-up
//! ([`Selection`]); it predicts times ([`ScalingModel::predict_time`]) and the size holding a
//! target speed-efficiency ([`ScalingModel::size_for_efficiency`]); [`bootstrap`] refits and
//! reselects on resampled runs for prediction intervals that include the model-selection
//! uncertainty, with [`Caution`]s when the data cannot support the prediction.
//!
//! ```
//! use hetscale_model::scaling::{select, Configuration, HypothesisSpace, Run, ScalingData, SelectOptions};
//!
//! // T = W/C + 1e-3 p on p = 1, 2, 4, 8 nodes of 1 Gflop/s, W = 2 n^3.
//! let mut data = ScalingData::default();
//! for p in [1usize, 2, 4, 8] {
//!     let label = format!("p{p}");
//!     data.configurations.push(Configuration::new(&label, vec![1e9; p])?);
//!     for n in [100.0, 200.0, 400.0] {
//!         let work = 2.0 * n * n * n;
//!         data.runs.push(Run::new(&label, n, work, work / (1e9 * p as f64) + 1e-3 * p as f64));
//!     }
//! }
//! let selection = select(&data, &HypothesisSpace::default(), &SelectOptions::default())?;
//! assert_eq!(selection.model.to_string(), "T = 1 W/C + 0.001 p");
//! # Ok::<(), hetscale_model::ModelError>(())
//! ```

mod caution;
mod data;
mod engine;
mod hypothesis;
mod model;
mod prediction;
mod predictive;
mod selection;

pub use caution::{Caution, MAX_EXTRAPOLATION, POOR_CV_ERROR_PERCENT};
pub use data::{Configuration, Partition, Run, ScalingData};
pub use hypothesis::{CustomTerm, Exponents, HypothesisSpace, Term};
pub use model::{FittedTerm, ScalingModel};
pub use prediction::{
    Bootstrap, BootstrapOptions, Interval, PredictionTarget, Progress, SHARP_FACTOR, TimeAt,
    bootstrap, bootstrap_time, held_up_to, is_sharp, reachable_from,
};
pub use predictive::{
    Constants, NestedFold, ONE_NODE_COUNT, Predictive, TWO_NODE_COUNTS, WITH_FOLDS,
};
pub use selection::{ExcludedRun, SelectOptions, Selection, select};
