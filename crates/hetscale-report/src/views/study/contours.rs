//! Isospeed-e contours over (system size, work), after Sun & Rover's isospeed contours: for
//! each speed-efficiency level, the work every configuration needs to hold it.

use hetscale_study::study::StudyResult;

use super::common::{
    CONTOURS, REFERENCE, SystemSize, approach_color, approach_marker, approaches, drawable,
    marked_speed_unit,
};
use super::setup::kernel_in_words;
use crate::chart::{Axes, Axis, Scale, Series, line_chart, palette};
use crate::error::Result;
use crate::html::{Figure, Section};
use crate::table::{Column, Table};
use hetscale_model::numbers::significant;

/// How the target's contour is named in the legend.
const TARGET_MARK: &str = " (target)";

/// A line per E_s level from the computed fits (or, without them, the target level from the
/// approaches' sizes), with the ideal W ∝ C for comparison, and the points as a table.
pub fn contours_section(result: &StudyResult, prefix: &str) -> Result<Section> {
    let id = format!("{prefix}-{CONTOURS}");
    let size = SystemSize::of(result);
    let x_axis = size.axis(result);
    let log_x = x_axis.scale == Scale::Log;
    let from_fits = !result.contours.is_empty();
    let mut series = if from_fits {
        contour_series(result, size, log_x)
    } else {
        target_series(result, size, log_x)
    };
    let mut section = Section::new(id.clone(), format!("{}: isospeed-e contours", result.spec.name))
        .text(format!(
            "Each line joins the (system size, work) pairs that hold one speed-efficiency: the isospeed-e contours. The dashed grey line is ideal scaling, W in proportion to the marked speed C (psi = 1), drawn from the first configuration; a contour steeper than it needs work growing faster than the machine, and the gap widening with size is psi falling. {}",
            if from_fits {
                "The levels are fractions of the target; each configuration's size on a level is read off its computed fit, within the sizes sampled there (a configuration is missing from a level its fit does not reach)."
            } else {
                "Without the computed approach's fits only the target level is known: one line per approach, through the sizes it chose."
            }
        ));
    if let Some(ideal) = ideal_line(result, &series, size, log_x) {
        series.push(ideal);
    }
    if series.iter().all(|s| s.points.is_empty()) {
        return Ok(
            section.text("No configuration has a size on any level, so there is nothing to draw.")
        );
    }
    let axes = Axes::new(x_axis, Axis::new("work W").unit("flop").log());
    if result.configurations.len() < 2 {
        let text = "One configuration: a contour joins the sizes of two or more configurations, so there is none to draw.";
        return Ok(match from_fits {
            true => section.text(text).table(contour_table(result, prefix)?),
            false => section.text(text),
        });
    }
    let title = format!(
        "{}: isospeed-e contours, work against system size",
        kernel_in_words(&result.spec)
    );
    section = section.figure(Figure::new(
        format!("{id}-figure"),
        format!(
            "Work W against {} on log-log axes, one line per speed-efficiency level; dashed grey: W ∝ C.",
            size.name()
        ),
        line_chart(&title, &axes, &series)?,
    ));
    if from_fits {
        section = section.table(contour_table(result, prefix)?);
    }
    Ok(section)
}

fn contour_series(result: &StudyResult, size: SystemSize, log_x: bool) -> Vec<Series> {
    let target = result.spec.target;
    result
        .contours
        .iter()
        .enumerate()
        .map(|(k, contour)| {
            let points = contour
                .points
                .iter()
                .map(|p| (size.value(p.p, p.marked_speed), p.work))
                .collect();
            let is_target = (contour.level - target).abs() <= 1e-9 * target.abs().max(1.0);
            let label = format!(
                "E_s = {}{}",
                significant(contour.level, 3),
                if is_target { TARGET_MARK } else { "" }
            );
            Series::line(label, drawable(points, log_x, true)).color(palette(k))
        })
        .collect()
}

/// The target level from each approach's chosen sizes.
fn target_series(result: &StudyResult, size: SystemSize, log_x: bool) -> Vec<Series> {
    approaches(result)
        .into_iter()
        .map(|a| {
            let points = a
                .points
                .iter()
                .map(|p| (size.value(p.p, p.marked_speed), p.work))
                .collect();
            Series::line(
                format!("{}, E_s = {}", a.approach.name(), result.spec.target),
                drawable(points, log_x, true),
            )
            .color(approach_color(a.approach))
            .shape(approach_marker(a.approach))
        })
        .collect()
}

/// `W = W_0 C / C_0` at every configuration, through the first point of the target's line
/// (else of the first line with a point).
fn ideal_line(
    result: &StudyResult,
    series: &[Series],
    size: SystemSize,
    log_x: bool,
) -> Option<Series> {
    let target_line = series.iter().find(|s| s.label.ends_with(TARGET_MARK));
    let &(x0, w0) = target_line
        .and_then(|s| s.points.first())
        .or_else(|| series.iter().find_map(|s| s.points.first()))?;
    let c0 = result
        .configurations
        .iter()
        .find(|c| size.value(c.p, c.marked_speed) == x0)?
        .marked_speed;
    if c0 <= 0.0 {
        return None;
    }
    let points: Vec<(f64, f64)> = result
        .configurations
        .iter()
        .map(|c| (size.value(c.p, c.marked_speed), w0 * c.marked_speed / c0))
        .collect();
    let mut points = drawable(points, log_x, true);
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(Series::dashed("ideal, W ∝ C (psi = 1)", points).color(REFERENCE))
}

fn contour_table(result: &StudyResult, prefix: &str) -> Result<Table> {
    let (unit, per_flops) = marked_speed_unit(result);
    let mut table = Table::new(
        format!("{prefix}-contours"),
        "Isospeed-e contours: the size and work holding each level, per configuration",
        vec![
            Column::new("E_s level"),
            Column::new("configuration"),
            Column::new("nodes p"),
            Column::with_unit("marked speed C", unit),
            Column::new("N"),
            Column::with_unit("work W", "flop"),
        ],
    );
    for contour in &result.contours {
        for p in &contour.points {
            table.push_row(vec![
                contour.level.into(),
                p.configuration.as_str().into(),
                p.p.into(),
                (p.marked_speed * per_flops).into(),
                p.n.into(),
                p.work.into(),
            ])?;
        }
    }
    Ok(table)
}
