//! What the study views share: their ids, the approaches' colours and markers, system sizes
//! along an axis, units and the points a chart can draw.

use hetscale_study::spec::Approach;
use hetscale_study::study::{ApproachResult, StudyResult};

use crate::chart::{Axis, Marker, Rgb};
use hetscale_model::numbers::significant;

/// [`setup_section`](super::setup_section): configurations, calibration and verification.
pub const SETUP: &str = "setup";
/// [`efficiency_section`](super::efficiency_section): E_s versus N per configuration.
pub const ES_VS_N: &str = "es-vs-n";
/// [`psi_section`](super::psi_section): the psi matrices and psi curves.
pub const PSI: &str = "psi";
/// [`contours_section`](super::contours_section): isospeed-e contours.
pub const CONTOURS: &str = "contours";
/// [`approaches_section`](super::approaches_section): the approaches side by side, held-out check.
pub const APPROACHES: &str = "approaches";

/// The approaches' results that ran, in the papers' order.
pub(super) fn approaches(result: &StudyResult) -> Vec<&ApproachResult> {
    [&result.measured, &result.computed, &result.predicted]
        .into_iter()
        .flatten()
        .collect()
}

/// How an approach's chosen sizes are marked: hollow shapes and a cross, so the three stay
/// visible where they coincide.
pub(super) fn approach_marker(approach: Approach) -> Marker {
    match approach {
        Approach::Measured => Marker::Ring,
        Approach::Computed => Marker::Square,
        Approach::Predicted => Marker::Cross,
    }
}

/// A colour per approach, apart from the configurations' palette colours where both appear.
pub(super) fn approach_color(approach: Approach) -> Rgb {
    match approach {
        Approach::Measured => Rgb(0, 0, 0),
        Approach::Computed => Rgb(0, 114, 178),
        Approach::Predicted => Rgb(213, 94, 0),
    }
}

/// Reference lines (targets, ideal scaling).
pub(super) const REFERENCE: Rgb = Rgb(120, 120, 120);

/// Where configurations sit along a system-size axis: at their node count p when every
/// configuration has its own, else at their marked speed C (e.g. one p, different nodes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum SystemSize {
    Nodes,
    MarkedSpeed { unit: &'static str, per_flops: f64 },
}

impl SystemSize {
    pub(super) fn of(result: &StudyResult) -> Self {
        let mut ps: Vec<usize> = result.configurations.iter().map(|c| c.p).collect();
        ps.sort_unstable();
        ps.dedup();
        if ps.len() == result.configurations.len() {
            Self::Nodes
        } else {
            let (unit, per_flops) = speed_unit(
                result
                    .configurations
                    .iter()
                    .map(|c| c.marked_speed)
                    .fold(0.0, f64::max),
            );
            Self::MarkedSpeed { unit, per_flops }
        }
    }

    /// The position of a configuration with `p` nodes and marked speed `c` (flop/s).
    pub(super) fn value(self, p: usize, c: f64) -> f64 {
        match self {
            Self::Nodes => p as f64,
            Self::MarkedSpeed { per_flops, .. } => c * per_flops,
        }
    }

    /// The axis, logarithmic when the sizes span a factor 8 or more (doublings read evenly).
    pub(super) fn axis(self, result: &StudyResult) -> Axis {
        let axis = match self {
            Self::Nodes => Axis::new("nodes p").integers(),
            Self::MarkedSpeed { unit, .. } => Axis::new("marked speed C").unit(unit),
        };
        let values: Vec<f64> = result
            .configurations
            .iter()
            .map(|c| self.value(c.p, c.marked_speed))
            .filter(|v| *v > 0.0)
            .collect();
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(0.0, f64::max);
        if lo.is_finite() && hi >= 8.0 * lo {
            axis.log()
        } else {
            axis
        }
    }

    /// What the axis is, for captions.
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Nodes => "the number of nodes p",
            Self::MarkedSpeed { .. } => "the marked speed C",
        }
    }
}

/// The unit that keeps every configuration's marked speed in `result` readable.
pub(super) fn marked_speed_unit(result: &StudyResult) -> (&'static str, f64) {
    let max = result
        .configurations
        .iter()
        .map(|c| c.marked_speed)
        .fold(0.0, f64::max);
    speed_unit(max)
}

/// A unit that keeps speeds up to `max` flop/s readable: its name and how many of it make
/// one flop/s.
pub(super) fn speed_unit(max: f64) -> (&'static str, f64) {
    if max >= 1e12 {
        ("Tflop/s", 1e-12)
    } else if max >= 1e9 {
        ("Gflop/s", 1e-9)
    } else if max >= 1e6 {
        ("Mflop/s", 1e-6)
    } else {
        ("flop/s", 1.0)
    }
}

/// `+1.2%`, for relative differences in text.
pub(super) fn percent(relative: f64) -> String {
    let sign = if relative >= 0.0 { "+" } else { "" };
    format!("{sign}{}%", significant(100.0 * relative, 3))
}

/// Keeps the points a chart can draw: finite, and positive on the log axes.
pub(super) fn drawable(points: Vec<(f64, f64)>, log_x: bool, log_y: bool) -> Vec<(f64, f64)> {
    points
        .into_iter()
        .filter(|&(x, y)| {
            x.is_finite() && y.is_finite() && (!log_x || x > 0.0) && (!log_y || y > 0.0)
        })
        .collect()
}

/// An axis a 95% interval lies along.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Along {
    X,
    Y,
}

/// A 95% interval `(lo, hi)`, where a result carries one.
pub(super) type Interval = Option<(f64, f64)>;

/// Points with an optional interval along one axis, as a chart draws them: the points
/// [`drawable`] keeps, each with its interval when that is drawable too (a `None` interval,
/// e.g. an approach that gives none, draws no error bar).
pub(super) fn drawable_with_intervals(
    points: Vec<((f64, f64), Interval)>,
    log_x: bool,
    log_y: bool,
    along: Along,
) -> (Vec<(f64, f64)>, Vec<Interval>) {
    let log = match along {
        Along::X => log_x,
        Along::Y => log_y,
    };
    points
        .into_iter()
        .filter(|(p, _)| !drawable(vec![*p], log_x, log_y).is_empty())
        .map(|(p, interval)| {
            let interval = interval
                .filter(|&(lo, hi)| lo.is_finite() && hi.is_finite() && lo <= hi)
                .filter(|&(lo, _)| !log || lo > 0.0);
            (p, interval)
        })
        .unzip()
}
