//! What a study found: per approach its operating points, failures and psi matrix, the
//! calibration, the held-out check, the comparison of approaches and the contours.

use hetscale_model::scalability::ScalabilityMatrix;
use serde::{Deserialize, Serialize};

use crate::approaches::computed::ComputedFit;
use crate::approaches::predicted::KernelTimeModel;
use crate::approaches::uncertainty::psi_interval;
use crate::runner::Measurement;
use crate::spec::{Approach, StudySpec};
use crate::store::RunRecord;
use crate::study::point::OperatingPoint;
use crate::study::summary::Summary;

/// A configuration an approach could not settle, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    /// Configuration label.
    pub configuration: String,
    /// The one-line reason.
    pub message: String,
}

/// What one approach found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApproachResult {
    /// Which approach.
    pub approach: Approach,
    /// One point per configuration it settled, in the spec's order.
    pub points: Vec<OperatingPoint>,
    /// The configurations it could not settle.
    pub failures: Vec<Failure>,
    /// `psi(C_i, C_j) = C_j W_i / (C_i W_j)` over the settled configurations.
    pub psi: Option<ScalabilityMatrix>,
    /// 95% intervals of `psi` from the points' `work_ci95`, laid out as `psi`.
    pub psi_ci95: Option<PsiIntervals>,
}

/// The 95% intervals of a psi matrix: `values[i][j - i]` for `psi(C_i, C_j)`, `j >= i` (the
/// layout of [`ScalabilityMatrix`]); `None` where neither size has an interval, and on the
/// diagonal, where `psi(C_i, C_i) = 1` exactly. Serialized, like psi, as a full square
/// matrix, `null` where there is no interval.
#[derive(Debug, Clone, PartialEq)]
pub struct PsiIntervals {
    /// Configuration labels, as the matrix's.
    pub labels: Vec<String>,
    /// Row `i` holds the intervals of `psi(C_i, C_i), psi(C_i, C_i+1), ...`.
    pub values: Vec<Vec<Option<(f64, f64)>>>,
}

impl Serialize for PsiIntervals {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let n = self.labels.len();
        let full: Vec<Vec<Option<(f64, f64)>>> = (0..n)
            .map(|i| (0..n).map(|j| self.get(i, j)).collect())
            .collect();
        let mut matrix = serializer.serialize_struct("PsiIntervals", 2)?;
        matrix.serialize_field("labels", &self.labels)?;
        matrix.serialize_field("values", &full)?;
        matrix.end()
    }
}

impl PsiIntervals {
    /// The intervals of `psi` over `points` (one per configuration, in order).
    pub(crate) fn of(points: &[OperatingPoint]) -> Option<Self> {
        let work = |p: &OperatingPoint| (p.marked_speed, (p.work, p.work_ci95));
        let values: Vec<Vec<Option<(f64, f64)>>> = (0..points.len())
            .map(|i| {
                (i..points.len())
                    .map(|j| {
                        (j > i)
                            .then(|| psi_interval(work(&points[i]), work(&points[j])))
                            .flatten()
                    })
                    .collect()
            })
            .collect();
        values.iter().flatten().any(Option::is_some).then(|| Self {
            labels: points.iter().map(|p| p.configuration.clone()).collect(),
            values,
        })
    }

    /// The interval of `psi(C_i, C_j)`, if known.
    pub fn get(&self, i: usize, j: usize) -> Option<(f64, f64)> {
        *self.values.get(i)?.get(j.checked_sub(i)?)?
    }
}

impl ApproachResult {
    /// The point of configuration `label`, if settled.
    pub fn point(&self, label: &str) -> Option<&OperatingPoint> {
        self.points.iter().find(|p| p.configuration == label)
    }
}

/// Approach 3's calibration on the base configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// The base configuration.
    pub configuration: String,
    /// The size measured there.
    pub n: u64,
    /// The measured median time, s.
    pub measured_time_s: f64,
    /// The model's compute and overhead times there, s.
    pub model_compute_s: f64,
    /// See `model_compute_s`.
    pub model_overhead_s: f64,
    /// The model with its compute factor fitted to the measurement.
    pub model: KernelTimeModel,
}

impl Calibration {
    /// What to say when the fitted compute factor `a` has the base configuration's nodes
    /// computing faster than their marked speed (`a < 1`: at `1 / a` times it). On a
    /// `simulated` machine no benchmark is at fault: its platform's machine model computes at
    /// a rate other than the marked speed it states.
    pub fn warning(&self, simulated: bool) -> Option<String> {
        let subject = format!(
            "approach 3's calibration on {}: compute factor a = {:.4}",
            self.configuration, self.model.compute_factor
        );
        let speedup = 1.0 / self.model.compute_factor;
        if simulated {
            return crate::calibrate::simulated_faster_than_marked(&subject, speedup);
        }
        crate::calibrate::faster_than_marked(&subject, speedup)
    }
}

/// Held-out validation: the time model fitted on every configuration but the largest, used to
/// predict the largest, against what was found there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldOut {
    /// The held-out (largest) configuration.
    pub configuration: String,
    /// The configurations fitted on.
    pub fitted_on: Vec<String>,
    /// The fitted model.
    pub model: KernelTimeModel,
    /// The size it predicts for the held-out configuration.
    pub n_predicted: f64,
    /// The size found there by `reference`.
    #[serde(serialize_with = "crate::json::as_integer")]
    pub n_reference: f64,
    /// The approach that found `n_reference`.
    pub reference: Approach,
    /// `(n_predicted - n_reference) / n_reference` (in JSON a percentage).
    #[serde(
        rename = "relative_error_percent",
        serialize_with = "crate::json::fraction_as_percent"
    )]
    pub relative_error: f64,
    /// The model's time at `n_reference` on the held-out configuration, s.
    pub time_predicted_s: f64,
    /// The time found at `n_reference` there, s.
    pub time_reference_s: f64,
    /// `(time_predicted_s - time_reference_s) / time_reference_s`: where speed-efficiency is
    /// flat in N, a small error in time moves N far, so both are shown. In JSON a percentage.
    #[serde(
        rename = "time_relative_error_percent",
        serialize_with = "crate::json::fraction_as_percent"
    )]
    pub time_relative_error: f64,
}

/// One configuration's size by each approach, and how far the others are from the measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Configuration label.
    pub configuration: String,
    /// Measured `N`.
    #[serde(rename = "n_measured", serialize_with = "crate::json::as_integer_opt")]
    pub measured: Option<f64>,
    /// Its 95% interval, if known.
    #[serde(rename = "n_measured_ci95")]
    pub measured_ci95: Option<(f64, f64)>,
    /// Computed `N`.
    #[serde(rename = "n_computed", serialize_with = "crate::json::as_integer_opt")]
    pub computed: Option<f64>,
    /// Its 95% interval, if known.
    #[serde(rename = "n_computed_ci95")]
    pub computed_ci95: Option<(f64, f64)>,
    /// Predicted `N`.
    #[serde(rename = "n_predicted", serialize_with = "crate::json::as_integer_opt")]
    pub predicted: Option<f64>,
    /// `(computed - measured) / measured` (in JSON a percentage).
    #[serde(
        rename = "computed_vs_measured_percent",
        serialize_with = "crate::json::fraction_as_percent_opt"
    )]
    pub computed_vs_measured: Option<f64>,
    /// `(predicted - measured) / measured` (in JSON a percentage).
    #[serde(
        rename = "predicted_vs_measured_percent",
        serialize_with = "crate::json::fraction_as_percent_opt"
    )]
    pub predicted_vs_measured: Option<f64>,
}

/// Everything a study found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyResult {
    /// The spec it ran.
    pub spec: StudySpec,
    /// The configurations: label, node set, p, C.
    pub configurations: Vec<ConfigurationRow>,
    /// Approach 1.
    pub measured: Option<ApproachResult>,
    /// Approach 2.
    pub computed: Option<ApproachResult>,
    /// Approach 2's fits, per configuration.
    pub fits: Vec<ComputedFit>,
    /// Approach 3.
    pub predicted: Option<ApproachResult>,
    /// Approach 3's calibration.
    pub calibration: Option<Calibration>,
    /// The approaches side by side.
    pub comparison: Vec<Comparison>,
    /// Held-out validation, when there are at least three configurations and a reference.
    pub held_out: Option<HeldOut>,
    /// Held-out validation with the scaling model (any program, commands included), when
    /// there are at least three configurations and a reference on the largest.
    pub scaling_held_out: Option<crate::scaling::fit::ScalingHeldOut>,
    /// The verified run with real compute.
    pub verification: Option<RunRecord>,
    /// Every size measured, by configuration and size.
    pub samples: Vec<Measurement>,
    /// Isospeed-e contours from the computed fits: for several speed-efficiencies around the
    /// target, the size and work each configuration needs (Sun & Rover's isospeed contours).
    pub contours: Vec<Contour>,
    /// What the numbers do not say by themselves (see [`crate::study::warnings`]), one line each.
    pub warnings: Vec<String>,
    /// The answer first: per approach, N and psi from the base, and a verdict.
    pub summary: Summary,
}

/// The configurations' sizes holding one speed-efficiency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contour {
    /// The speed-efficiency held.
    pub level: f64,
    /// One point per configuration whose fit reaches the level within its samples.
    pub points: Vec<ContourPoint>,
}

/// One configuration on a contour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContourPoint {
    /// Configuration label.
    pub configuration: String,
    /// Number of nodes.
    pub p: usize,
    /// Marked speed `C`, flop/s.
    #[serde(rename = "marked_speed_flops", alias = "marked_speed")]
    pub marked_speed: f64,
    /// Problem size (the real root of the fit at the level).
    #[serde(rename = "n_root", alias = "n")]
    pub n: f64,
    /// Work `W(N)`, flop.
    #[serde(rename = "work_flop", alias = "work")]
    pub work: f64,
}

/// A configuration as the result lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigurationRow {
    /// Label.
    pub label: String,
    /// Node set.
    pub nodes: String,
    /// Number of nodes.
    pub p: usize,
    /// Marked speed `C`, flop/s.
    #[serde(rename = "marked_speed_flops")]
    pub marked_speed: f64,
}
