//! The size one approach found for one configuration: the bottom of a study's results, which
//! the warnings judge and the results hold.

use serde::Serialize;

/// The size one approach found for one configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperatingPoint {
    /// Configuration label.
    pub configuration: String,
    /// Number of nodes.
    pub p: usize,
    /// Marked speed `C`, flop/s.
    #[serde(rename = "marked_speed_flops")]
    pub marked_speed: f64,
    /// Problem size `N` (an integer).
    #[serde(serialize_with = "crate::json::as_integer")]
    pub n: f64,
    /// 95% interval of `N` from the noise of the runs, if known: from the measured `E_s`
    /// interval (measured approach) or a bootstrap of the fit (computed); never for the
    /// predicted approach, whose error is the model's, not the runs' (see the held-out check).
    pub n_ci95: Option<(f64, f64)>,
    /// Work `W(N)`, flop.
    #[serde(rename = "work_flop")]
    pub work: f64,
    /// `W` over `n_ci95`, flop.
    #[serde(rename = "work_flop_ci95")]
    pub work_ci95: Option<(f64, f64)>,
    /// Time `T`, s (measured, fitted or predicted).
    pub time_s: f64,
    /// `E_s = W / (T C)`.
    pub speed_efficiency: f64,
}
