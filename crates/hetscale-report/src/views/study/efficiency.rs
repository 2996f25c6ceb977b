//! E_s versus N per configuration (Chen, Sun & Wu's figures of speed-efficiency against
//! problem size): the measured samples, the computed approach's fitted curve
//! E_s(N) = W(N) / (T_fit(N) C), the target, and the size each approach chose.

use hetscale_kernels::{Kernel, kernel_by_name};
use hetscale_study::approaches::computed::ComputedFit;
use hetscale_study::runner::Measurement;
use hetscale_study::spec::Approach;
use hetscale_study::study::StudyResult;

use super::common::{
    Along, ES_VS_N, REFERENCE, approach_marker, approaches, drawable, drawable_with_intervals,
};
use super::setup::kernel_in_words;
use crate::chart::{Axes, Axis, Rgb, Series, line_chart, palette};
use crate::error::Result;
use crate::html::{Figure, Section};
use crate::table::{Column, Table};

/// Points on each fitted curve; enough for a smooth line at the page's width.
const CURVE_POINTS: usize = 80;

/// The chart of every configuration's samples and fit, with the target and the approaches'
/// sizes, and tables of the fits and of every sample.
pub fn efficiency_section(result: &StudyResult, prefix: &str) -> Result<Section> {
    let id = format!("{prefix}-{ES_VS_N}");
    let target = result.spec.target;
    let mut section = Section::new(id.clone(), format!("{}: E_s versus N", result.spec.name))
        .text(format!(
            "Speed-efficiency E_s = W / (T C) of every size measured on each configuration (points, with their 95% intervals as vertical bars), and the computed approach's fit E_s(N) = W(N) / (T_fit(N) C) with T_fit(N) = a W(N) / C + T_o(N) (lines, drawn over the sizes it was fitted on). Where a configuration's line crosses the dashed target E_s = {target} is the size that holds the target there; the larger the configuration, the further right it crosses. The ring, square and cross mark the N the measured, computed and predicted approaches chose, drawn a little above, on and below the target line so that sizes that coincide stay apart, with a horizontal bar for the 95% interval of N where the approach gives one."
        ));
    let series = efficiency_series(result);
    if series.iter().all(|s| s.points.is_empty()) {
        return Ok(section.text("No size was measured, so there is nothing to draw."));
    }
    let axes = Axes::new(
        Axis::new("problem size N").log(),
        Axis::new("speed-efficiency E_s").range(0.0, top_of(&series)),
    );
    let svg = line_chart(
        &format!(
            "{}: speed-efficiency against problem size",
            kernel_in_words(&result.spec)
        ),
        &axes,
        &series,
    )?;
    section = section.figure(Figure::new(
        format!("{id}-figure"),
        format!("One colour per configuration: points are measured samples, lines the fitted E_s(N); dashed: the target E_s = {target}; N on a log axis."),
        svg,
    ));
    if !result.fits.is_empty() {
        section = section.table(fits_table(result, prefix)?);
    }
    Ok(section.table(samples_table(result, prefix)?))
}

/// The top of the E_s axis: a little above the highest point, and at least above the target.
fn top_of(series: &[Series]) -> f64 {
    let high = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    (high * 1.08).max(0.05)
}

fn efficiency_series(result: &StudyResult) -> Vec<Series> {
    let work = WorkFormula::of(result);
    let mut series = Vec::new();
    for (i, config) in result.configurations.iter().enumerate() {
        let color = palette(i);
        let samples = samples_of(result, &config.label);
        let (points, intervals) = drawable_with_intervals(
            samples
                .iter()
                .map(|m| {
                    (
                        (m.n as f64, m.speed_efficiency),
                        Some(m.speed_efficiency_ci),
                    )
                })
                .collect(),
            true,
            false,
            Along::Y,
        );
        let fit = result.fits.iter().find(|f| f.configuration == config.label);
        let curve = fit.map(|f| fitted_curve(f, &work)).unwrap_or_default();
        // The legend names the configuration once: by its line, or by its points if unfitted.
        let (point_label, curve_label) = if curve.is_empty() {
            (config.label.clone(), String::new())
        } else {
            (String::new(), config.label.clone())
        };
        series.push(
            Series::scatter(point_label, points)
                .y_intervals(intervals)
                .color(color),
        );
        match fit.and_then(|f| f.poor_fit.as_ref()) {
            _ if curve.is_empty() => {}
            // Drawn, so the reader sees how badly it fits, but marked as not inverted.
            Some(_) => series
                .push(Series::dashed(format!("{curve_label}: poor fit, no N"), curve).color(color)),
            None => series.push(Series::line(curve_label, curve).color(color).markers(false)),
        }
    }
    let (lo, hi) = n_range(&series);
    if lo < hi {
        let target = result.spec.target;
        series.push(
            Series::horizontal(format!("target E_s = {target}"), target, lo, hi).color(REFERENCE),
        );
    }
    for approach in approaches(result) {
        let (points, intervals) = drawable_with_intervals(
            approach
                .points
                .iter()
                .map(|p| ((p.n, p.speed_efficiency), p.n_ci95))
                .collect(),
            true,
            false,
            Along::X,
        );
        series.push(
            Series::scatter(format!("{} N", approach.approach.name()), points)
                .x_intervals(intervals)
                // Black: the configurations already use the palette's colours.
                .color(Rgb(0, 0, 0))
                .shape(approach_marker(approach.approach))
                .offset(0, approach_offset(approach.approach)),
        );
    }
    series
}

/// Pixels below its place an approach's marker on the target line is drawn: the three
/// approaches' sizes often coincide there, and a marker over another would hide it.
fn approach_offset(approach: Approach) -> i32 {
    match approach {
        Approach::Measured => -9,
        Approach::Computed => 0,
        Approach::Predicted => 9,
    }
}

/// The smallest and largest N drawn.
fn n_range(series: &[Series]) -> (f64, f64) {
    series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold((f64::INFINITY, 0.0), |(lo, hi), n| (lo.min(n), hi.max(n)))
}

fn samples_of<'a>(result: &'a StudyResult, label: &str) -> Vec<&'a Measurement> {
    result
        .samples
        .iter()
        .filter(|m| m.configuration == label)
        .collect()
}

/// `W(N)` for the fitted curves between samples.
enum WorkFormula {
    /// The kernel's own operation count (exact).
    Kernel(Box<dyn Kernel>),
    /// For a kernel this build does not know: a power law between neighbouring samples.
    Samples,
}

impl WorkFormula {
    fn of(result: &StudyResult) -> Self {
        kernel_by_name(&result.spec.kernel, &result.spec.kernel_options)
            .map_or(Self::Samples, Self::Kernel)
    }

    fn at(&self, n: u64, samples: &[Measurement]) -> Option<f64> {
        match self {
            Self::Kernel(kernel) => usize::try_from(n).ok().map(|n| kernel.work(n)),
            Self::Samples => power_law_between(n as f64, samples),
        }
    }
}

/// `W` at `n` from the two samples around it (or the nearest two at either end), assuming
/// `W = k N^e` between them: exact for a pure power law, close for the papers' polynomials.
fn power_law_between(n: f64, samples: &[Measurement]) -> Option<f64> {
    let mut points: Vec<(f64, f64)> = samples
        .iter()
        .filter(|m| m.n > 0 && m.work > 0.0)
        .map(|m| ((m.n as f64).ln(), m.work.ln()))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points.dedup_by(|a, b| a.0 == b.0);
    if points.len() < 2 || n <= 0.0 {
        return None;
    }
    let x = n.ln();
    let k = points
        .iter()
        .position(|p| p.0 >= x)
        .unwrap_or(points.len() - 1)
        .clamp(1, points.len() - 1);
    let ((x0, y0), (x1, y1)) = (points[k - 1], points[k]);
    Some((y0 + (y1 - y0) * (x - x0) / (x1 - x0)).exp())
}

/// The fit's `E_s(N)` at integer sizes spread geometrically over the sizes it was fitted on.
fn fitted_curve(fit: &ComputedFit, work: &WorkFormula) -> Vec<(f64, f64)> {
    let (Some(lo), Some(hi)) = (
        fit.samples.iter().map(|m| m.n).min(),
        fit.samples.iter().map(|m| m.n).max(),
    ) else {
        return Vec::new();
    };
    if lo == 0 || hi <= lo || fit.model.marked_speed <= 0.0 {
        return Vec::new();
    }
    let ratio = (hi as f64 / lo as f64).powf(1.0 / (CURVE_POINTS - 1) as f64);
    let mut sizes: Vec<u64> = (0..CURVE_POINTS)
        .map(|k| (lo as f64 * ratio.powi(k as i32)).round() as u64)
        .collect();
    sizes.dedup();
    let points = sizes
        .into_iter()
        .filter_map(|n| {
            let w = work.at(n, &fit.samples)?;
            let t = fit.model.time(n as f64, w);
            // A fit can dip to T <= 0 outside its data; such points mean nothing.
            (t > 0.0).then(|| (n as f64, w / (t * fit.model.marked_speed)))
        })
        .collect();
    drawable(points, true, false)
}

fn fits_table(result: &StudyResult, prefix: &str) -> Result<Table> {
    let mut table = Table::new(
        format!("{prefix}-fits"),
        "Computed approach: T(N) = a W/C + T_o(N) and the polynomial trend line of E_s(N), per configuration",
        vec![
            Column::new("configuration"),
            Column::new("samples"),
            Column::new("a"),
            Column::new("T_o(N) coefficients, constant first"),
            Column::new("R^2 of T"),
            Column::new("adjusted R^2 of T"),
            Column::with_unit("SMAPE of T", "%"),
            Column::with_unit("leave-one-out RMSE of T", "s"),
            Column::new("fit quality"),
            Column::new("N (model)"),
            Column::new("N (trend line)"),
            Column::new("R^2 of E_s trend"),
        ],
    );
    for f in &result.fits {
        let overhead: Vec<String> = f
            .model
            .overhead
            .coefficients
            .iter()
            .map(|c| format!("{c:.4e}"))
            .collect();
        table.push_row(vec![
            f.configuration.as_str().into(),
            f.samples.len().into(),
            f.model.a.into(),
            overhead.join(", ").into(),
            f.model_quality.r_squared.into(),
            f.model_quality.adjusted_r_squared.into(),
            f.model_quality.smape_percent.into(),
            f.model_quality.loo_cv_rmse.into(),
            f.poor_fit.as_deref().unwrap_or("good").into(),
            f.n.into(),
            f.n_trend.into(),
            f.trend_quality.r_squared.into(),
        ])?;
    }
    Ok(table)
}

fn samples_table(result: &StudyResult, prefix: &str) -> Result<Table> {
    let mut table = Table::new(
        format!("{prefix}-samples"),
        "Every size measured: median time and E_s with its 95% interval",
        vec![
            Column::new("configuration"),
            Column::new("N"),
            Column::with_unit("work W", "flop"),
            Column::new("runs"),
            Column::with_unit("median time T", "s"),
            Column::new("E_s"),
            Column::new("E_s low"),
            Column::new("E_s high"),
        ],
    );
    for m in &result.samples {
        table.push_row(vec![
            m.configuration.as_str().into(),
            m.n.into(),
            m.work.into(),
            m.time.samples.into(),
            m.time.median.into(),
            m.speed_efficiency.into(),
            m.speed_efficiency_ci.0.into(),
            m.speed_efficiency_ci.1.into(),
        ])?;
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetscale_study::stats::summarize;

    fn sample(n: u64, work: f64) -> Measurement {
        Measurement {
            configuration: "c".into(),
            n,
            work,
            time: summarize(&[1.0]).unwrap(),
            speed_efficiency: 0.1,
            speed_efficiency_ci: (0.1, 0.1),
        }
    }

    #[test]
    fn power_law_is_exact_for_a_cube_and_extrapolates_from_the_ends() {
        let samples = [sample(10, 2e3), sample(20, 16e3), sample(40, 128e3)];
        for n in [5.0, 15.0, 30.0, 80.0] {
            let w = power_law_between(n, &samples).unwrap();
            assert!((w / (2.0 * n * n * n) - 1.0).abs() < 1e-9, "{n}: {w}");
        }
        assert_eq!(power_law_between(10.0, &samples[..1]), None);
    }
}
