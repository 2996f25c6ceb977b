//! The three approaches side by side (Chen, Sun & Wu's comparison of measured, computed and
//! predicted sizes): the size each found per configuration, how far apart they are, and the
//! held-out checks of prediction (the kernel's own time model, and the scaling model any
//! program gets).

use hetscale_study::scaling::fit::ScalingHeldOut;
use hetscale_study::study::{HeldOut, StudyResult};

use super::common::{
    APPROACHES, Along, REFERENCE, SystemSize, approach_color, approach_marker, approaches,
    drawable, drawable_with_intervals, percent,
};
use super::setup::kernel_in_words;
use crate::chart::{Axes, Axis, Marker, Rgb, Scale, Series, line_chart};
use crate::error::Result;
use crate::html::{Block, Figure, Report, Section};
use crate::table::{Cell, Column, Table};
use hetscale_model::numbers::significant;

/// Colour of the held-out prediction's marker.
const HELD_OUT: Rgb = Rgb(204, 121, 167);

/// Colour of the scaling model's held-out prediction and its interval.
const SCALING_HELD_OUT: Rgb = Rgb(86, 180, 233);

/// N against system size per approach with the held-out prediction, the held-out check and
/// the approaches' failures in words, and tables of the sizes and the check.
pub fn approaches_section(result: &StudyResult, prefix: &str) -> Result<Section> {
    let id = format!("{prefix}-{APPROACHES}");
    let mut section = Section::new(
        id.clone(),
        format!("{}: the three approaches side by side", result.spec.name),
    )
    .text(format!(
        "The size N holding E_s = {} on each configuration as measured (searched by runs), computed (the fit inverted) and predicted (the calibrated overhead model solved), with the computed and predicted sizes' differences from the measured one.",
        result.spec.target
    ))
    .text(held_out_text(result.held_out.as_ref()));
    if let Some(h) = &result.scaling_held_out {
        section = section.text(scaling_held_out_text(h));
    }
    if let Some(failures) = failures_text(result) {
        section = section.text(failures);
    }
    if result.configurations.len() < 2 {
        section = section.text("One configuration: the approaches' sizes are compared in the table, with no system size to draw them against.");
    } else if let Some(figure) = size_figure(result, &id, &[])? {
        section = section.figure(figure);
    }
    section = section.table(comparison_table(result, prefix)?);
    if let Some(h) = &result.held_out {
        section = section.table(held_out_table(h, prefix)?);
    }
    if let Some(h) = &result.scaling_held_out {
        section = section.table(scaling_held_out_table(h, prefix)?);
    }
    Ok(section)
}

/// N against system size per approach, with the held-out prediction and the paper's sizes
/// `published` (configuration label, N; empty outside a reproduction); `None` without a
/// size to draw.
fn size_figure(
    result: &StudyResult,
    id: &str,
    published: &[(String, f64)],
) -> Result<Option<Figure>> {
    let size = SystemSize::of(result);
    let mut series = size_series(result);
    if let Some(paper) = published_series(result, size, published) {
        // First, so the approaches' hollow markers ring the paper's discs.
        series.insert(0, paper);
    }
    if series.iter().all(|s| s.points.is_empty()) {
        return Ok(None);
    }
    let axes = Axes::new(size.axis(result), Axis::new("problem size N").log());
    let title = format!(
        "{}: problem size holding E_s = {}",
        kernel_in_words(&result.spec),
        result.spec.target
    );
    let caption = format!(
        "N against {} on log axes; ring: measured, square: computed, cross: predicted{}{}{}; vertical bars: 95% intervals of N where an approach gives them.",
        size.name(),
        if result.held_out.is_some() {
            ", triangle: the held-out prediction for the largest configuration"
        } else {
            ""
        },
        if result.scaling_held_out.is_some() {
            ", blue disc: the scaling model's held-out prediction with its 95% interval"
        } else {
            ""
        },
        if published.is_empty() {
            ""
        } else {
            ", grey disc: the paper's published N"
        }
    );
    Ok(Some(Figure::new(
        format!("{id}-figure"),
        caption,
        line_chart(&title, &axes, &series)?,
    )))
}

/// The paper's sizes as a series labelled "published", at the configurations they name.
fn published_series(
    result: &StudyResult,
    size: SystemSize,
    published: &[(String, f64)],
) -> Option<Series> {
    let log_x = size.axis(result).scale == Scale::Log;
    let points: Vec<(f64, f64)> = published
        .iter()
        .filter_map(|(label, n)| {
            let c = result.configurations.iter().find(|c| c.label == *label)?;
            Some((size.value(c.p, c.marked_speed), *n))
        })
        .collect();
    let points = drawable(points, log_x, true);
    (!points.is_empty()).then(|| Series::scatter("published", points).color(REFERENCE))
}

/// Redraws the figure of the approaches' sizes of `result` (section `<prefix>-approaches`
/// of `report`) with the paper's sizes `published` (configuration label, N) beside them, as
/// a reproduction shows them; a report without that figure is left as it is.
pub fn draw_published_sizes(
    report: &mut Report,
    prefix: &str,
    result: &StudyResult,
    published: &[(String, f64)],
) -> Result<()> {
    let id = format!("{prefix}-{APPROACHES}");
    let Some(section) = report.sections.iter_mut().find(|s| s.id == id) else {
        return Ok(());
    };
    let figure_id = format!("{id}-figure");
    for block in &mut section.blocks {
        if let Block::Figure(figure) = block
            && figure.id == figure_id
            && let Some(redrawn) = size_figure(result, &id, published)?
        {
            *figure = redrawn;
        }
    }
    Ok(())
}

fn held_out_text(held_out: Option<&HeldOut>) -> String {
    match held_out {
        Some(h) => format!(
            "Held-out check: the time model T = a T_compute + k T_o fitted on {} alone (a = {}, k = {}) predicts N = {} on {}, where the {} approach found N = {}: an error of {}.",
            h.fitted_on.join(", "),
            significant(h.model.compute_factor, 4),
            significant(h.model.overhead_factor, 4),
            significant(h.n_predicted, 5),
            h.configuration,
            h.reference.name(),
            significant(h.n_reference, 5),
            percent(h.relative_error)
        ),
        None => "No held-out check: it needs at least three configurations and a measured or computed size on the largest.".into(),
    }
}

fn scaling_held_out_text(h: &ScalingHeldOut) -> String {
    let mut text = format!(
        "Held-out check with the scaling model, which any program gets: selected on {} alone ({}, cross-validated error {}%), it predicts N = {} [{}, {}] (95% interval) on {}, where the {} approach found N = {}: an error of {}; its time at that N is {} s against {} s found, an error of {}.",
        h.fitted_on.join(", "),
        h.model.formula,
        significant(h.model.cv_error_percent, 3),
        significant(h.n_predicted, 5),
        significant(h.n_predicted_ci95.0 as f64, 5),
        h.n_predicted_ci95
            .1
            .map_or("open".into(), |high| significant(high as f64, 5)),
        h.configuration,
        h.reference.name(),
        significant(h.n_reference, 5),
        percent(h.relative_error),
        significant(h.time_predicted_s, 4),
        significant(h.time_reference_s, 4),
        percent(h.time_relative_error)
    );
    for caution in &h.cautions {
        text.push_str(&format!(" Caution: {caution}."));
    }
    text
}

/// The configurations an approach could not settle, and why.
fn failures_text(result: &StudyResult) -> Option<String> {
    let lines: Vec<String> = approaches(result)
        .into_iter()
        .flat_map(|a| {
            a.failures.iter().map(move |f| {
                format!(
                    "The {} approach did not settle {}: {}",
                    a.approach.name(),
                    f.configuration,
                    f.message
                )
            })
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n\n"))
}

fn size_series(result: &StudyResult) -> Vec<Series> {
    let size = SystemSize::of(result);
    let log_x = size.axis(result).scale == Scale::Log;
    let mut series: Vec<Series> = approaches(result)
        .into_iter()
        .map(|a| {
            let (points, intervals) = drawable_with_intervals(
                a.points
                    .iter()
                    .map(|p| ((size.value(p.p, p.marked_speed), p.n), p.n_ci95))
                    .collect(),
                log_x,
                true,
                Along::Y,
            );
            let line = if a.approach == hetscale_study::spec::Approach::Predicted {
                Series::dashed(a.approach.name(), points).markers(true)
            } else {
                Series::line(a.approach.name(), points)
            };
            line.y_intervals(intervals)
                .color(approach_color(a.approach))
                .shape(approach_marker(a.approach))
        })
        .collect();
    if let Some(point) = held_out_point(result, size) {
        series.push(
            Series::scatter("held-out prediction", drawable(vec![point], log_x, true))
                .color(HELD_OUT)
                .shape(Marker::Triangle),
        );
    }
    if let Some((point, interval)) = scaling_held_out_point(result, size) {
        let (points, intervals) =
            drawable_with_intervals(vec![(point, Some(interval))], log_x, true, Along::Y);
        series.push(
            Series::scatter("held-out prediction (scaling model)", points)
                .y_intervals(intervals)
                .color(SCALING_HELD_OUT)
                .shape(Marker::Circle),
        );
    }
    series
}

/// The scaling model's held-out N on the largest configuration and its 95% interval.
fn scaling_held_out_point(
    result: &StudyResult,
    size: SystemSize,
) -> Option<((f64, f64), (f64, f64))> {
    let h = result.scaling_held_out.as_ref()?;
    let c = result
        .configurations
        .iter()
        .find(|c| c.label == h.configuration)?;
    Some((
        (size.value(c.p, c.marked_speed), h.n_predicted),
        (
            h.n_predicted_ci95.0 as f64,
            // An open upper end draws no bar above the point.
            h.n_predicted_ci95
                .1
                .map_or(h.n_predicted, |high| high as f64),
        ),
    ))
}

fn held_out_point(result: &StudyResult, size: SystemSize) -> Option<(f64, f64)> {
    let h = result.held_out.as_ref()?;
    let c = result
        .configurations
        .iter()
        .find(|c| c.label == h.configuration)?;
    Some((size.value(c.p, c.marked_speed), h.n_predicted))
}

fn comparison_table(result: &StudyResult, prefix: &str) -> Result<Table> {
    let mut table = Table::new(
        format!("{prefix}-approaches"),
        "N per approach and the differences from measured",
        vec![
            Column::new("configuration"),
            Column::new("nodes p"),
            Column::new("N measured"),
            Column::new("N measured 95% low"),
            Column::new("N measured 95% high"),
            Column::new("N computed"),
            Column::new("N computed 95% low"),
            Column::new("N computed 95% high"),
            Column::new("N predicted"),
            Column::with_unit("computed - measured", "%"),
            Column::with_unit("predicted - measured", "%"),
        ],
    );
    for c in &result.comparison {
        let p = result
            .configurations
            .iter()
            .find(|row| row.label == c.configuration)
            .map(|row| row.p);
        table.push_row(vec![
            c.configuration.as_str().into(),
            p.into(),
            c.measured.into(),
            c.measured_ci95.map(|ci| ci.0).into(),
            c.measured_ci95.map(|ci| ci.1).into(),
            c.computed.into(),
            c.computed_ci95.map(|ci| ci.0).into(),
            c.computed_ci95.map(|ci| ci.1).into(),
            c.predicted.into(),
            c.computed_vs_measured.map(|v| 100.0 * v).into(),
            c.predicted_vs_measured.map(|v| 100.0 * v).into(),
        ])?;
    }
    Ok(table)
}

fn held_out_table(h: &HeldOut, prefix: &str) -> Result<Table> {
    let mut table = Table::new(
        format!("{prefix}-held-out"),
        "Held-out validation: fitted on the smaller configurations, predicting the largest",
        vec![
            Column::new("held out"),
            Column::new("fitted on"),
            Column::new("a"),
            Column::new("k"),
            Column::new("N predicted"),
            Column::new("N found"),
            Column::new("found by"),
            Column::with_unit("error", "%"),
        ],
    );
    table.push_row(vec![
        h.configuration.as_str().into(),
        h.fitted_on.join(", ").into(),
        h.model.compute_factor.into(),
        h.model.overhead_factor.into(),
        h.n_predicted.into(),
        h.n_reference.into(),
        h.reference.name().into(),
        (100.0 * h.relative_error).into(),
    ])?;
    Ok(table)
}

fn scaling_held_out_table(h: &ScalingHeldOut, prefix: &str) -> Result<Table> {
    let mut table = Table::new(
        format!("{prefix}-scaling-held-out"),
        "Held-out validation with the scaling model: selected on the smaller configurations, predicting the largest",
        vec![
            Column::new("held out"),
            Column::new("fitted on"),
            Column::new("model"),
            Column::with_unit("cv error", "%"),
            Column::new("N predicted"),
            Column::new("N predicted 95% low"),
            Column::new("N predicted 95% high"),
            Column::new("N found"),
            Column::new("found by"),
            Column::with_unit("error", "%"),
            Column::with_unit("T predicted at N found", "s"),
            Column::with_unit("T found", "s"),
            Column::with_unit("time error", "%"),
        ],
    );
    table.push_row(vec![
        h.configuration.as_str().into(),
        h.fitted_on.join(", ").into(),
        h.model.formula.as_str().into(),
        h.model.cv_error_percent.into(),
        h.n_predicted.into(),
        (h.n_predicted_ci95.0 as f64).into(),
        h.n_predicted_ci95
            .1
            .map_or(Cell::from("open"), |high| (high as f64).into()),
        h.n_reference.into(),
        h.reference.name().into(),
        (100.0 * h.relative_error).into(),
        h.time_predicted_s.into(),
        h.time_reference_s.into(),
        (100.0 * h.time_relative_error).into(),
    ])?;
    Ok(table)
}
