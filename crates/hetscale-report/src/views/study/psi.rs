//! The isospeed-efficiency scalability psi(C_i, C_j) = C_j W_i / (C_i W_j): a heat map of the
//! matrix per approach (Sun & Rover's scalability matrices, Chen, Sun & Wu's tables) and
//! psi(N') curves, one per starting configuration.

use hetscale_model::scalability::ScalabilityMatrix;
use hetscale_study::spec::Approach;
use hetscale_study::study::{ApproachResult, StudyResult};

use super::common::{Along, Interval, PSI, SystemSize, approaches, drawable_with_intervals};
use super::setup::kernel_in_words;
use crate::chart::{
    Axes, Axis, ColorScale, HeatMap, Line, Scale, Series, heat_map, line_chart, palette,
};
use crate::error::Result;
use crate::html::{Figure, Section};
use crate::table::{Column, Table};
use hetscale_model::numbers::significant;

/// A heat map per approach with a psi matrix, the psi curves, and every entry as a table.
pub fn psi_section(result: &StudyResult, prefix: &str) -> Result<Section> {
    let id = format!("{prefix}-{PSI}");
    let mut section = Section::new(id.clone(), format!("{}: psi matrix and psi curves", result.spec.name))
        .text(format!(
            "psi(C_i, C_j) = C_j W_i / (C_i W_j), where W_i and W_j are the work that holds E_s = {} on configurations C_i and C_j. psi = 1 is ideal: the work grows in proportion to the marked speed. Below 1 it must grow faster than the machine; the smaller psi, the less scalable the algorithm-system combination. Entries chain, psi(a, c) = psi(a, b) psi(b, c), so the super-diagonal summarises each matrix.",
            result.spec.target
        ));
    let with_matrix: Vec<(&ApproachResult, &ScalabilityMatrix)> = approaches(result)
        .into_iter()
        .filter_map(|a| a.psi.as_ref().map(|m| (a, m)))
        // One configuration gives a 1x1 matrix of the trivial psi = 1: nothing to draw.
        .filter(|(_, m)| m.len() >= 2)
        .collect();
    if with_matrix.is_empty() {
        return Ok(section
            .text("No approach settled two or more configurations, so there is no psi to show."));
    }
    let (reference, reference_matrix) = with_matrix[0];
    let reference_name = reference.approach.name();
    section = section.figure(Figure::new(
        format!("{id}-figure-1"),
        format!("psi(C_i, C_j) from the {reference_name} approach's sizes: row C_i, column C_j; 1 on the diagonal; colour from 0 to 1."),
        heat_map(&psi_heat_map(&kernel_in_words(&result.spec), reference_name, reference_matrix))?,
    ));
    for (k, (approach, matrix)) in with_matrix.iter().enumerate().skip(1) {
        let name = approach.approach.name();
        let difference = psi_difference(reference_matrix, matrix);
        let largest = largest_difference(&difference);
        if difference.iter().flatten().all(Option::is_none) {
            section = section.text(format!(
                "The {name} approach's psi matrix shares no pair of configurations with the {reference_name} one's, so there is no difference to draw; the table lists it."
            ));
            continue;
        }
        if largest <= COINCIDE {
            section = section.text(format!(
                "The {name} approach's psi matrix coincides with the {reference_name} one's (no entry differs by more than {COINCIDE}), so it is not drawn again; the table lists it."
            ));
            continue;
        }
        section = section.figure(Figure::new(
            format!("{id}-figure-{}", k + 1),
            format!("The {name} approach's psi(C_i, C_j) minus the {reference_name} approach's, entry by entry: white where they agree, vermillion where {name} is higher, blue where lower (largest difference {}); blank where either has no entry.", significant(largest, 3)),
            heat_map(&difference_heat_map(&kernel_in_words(&result.spec), name, reference_name, reference_matrix, difference))?,
        ));
    }
    if let Some(curves) = psi_curves(result, &id, &with_matrix)? {
        section = section.figure(curves);
    }
    Ok(section.table(psi_table(prefix, &with_matrix)?))
}

/// Entries of two approaches' psi matrices this close count as equal: the tables print psi
/// to three significant digits.
const COINCIDE: f64 = 0.005;

/// `matrix - reference` entry by entry over the reference's configurations (`[i][j]`, j > i),
/// `None` where either lacks the entry (an approach holds only the configurations it settled).
fn psi_difference(
    reference: &ScalabilityMatrix,
    matrix: &ScalabilityMatrix,
) -> Vec<Vec<Option<f64>>> {
    let index = |label: &String| matrix.labels().iter().position(|l| l == label);
    let labels = reference.labels();
    (0..labels.len())
        .map(|i| {
            (0..labels.len())
                .map(|j| {
                    if j <= i {
                        return None;
                    }
                    let theirs = matrix.get(index(&labels[i])?, index(&labels[j])?)?;
                    Some(theirs - reference.get(i, j)?).filter(|d| d.is_finite())
                })
                .collect()
        })
        .collect()
}

fn largest_difference(difference: &[Vec<Option<f64>>]) -> f64 {
    difference
        .iter()
        .flatten()
        .flatten()
        .map(|d| d.abs())
        .fold(0.0, f64::max)
}

fn difference_heat_map(
    study: &str,
    approach: &str,
    reference: &str,
    reference_matrix: &ScalabilityMatrix,
    difference: Vec<Vec<Option<f64>>>,
) -> HeatMap {
    HeatMap {
        title: format!("{study}: psi, {approach} − {reference}"),
        x: Axis::new("to configuration C_j"),
        y: Axis::new("from configuration C_i"),
        column_labels: reference_matrix.labels().to_vec(),
        row_labels: reference_matrix.labels().to_vec(),
        values: difference,
        value_label: "difference in psi".into(),
        value_range: None,
        colors: ColorScale::Diverging,
    }
}

fn psi_heat_map(study: &str, approach: &str, matrix: &ScalabilityMatrix) -> HeatMap {
    let n = matrix.len();
    HeatMap {
        title: format!("{study}: psi(C_i, C_j), {approach}"),
        x: Axis::new("to configuration C_j"),
        y: Axis::new("from configuration C_i"),
        column_labels: matrix.labels().to_vec(),
        row_labels: matrix.labels().to_vec(),
        values: (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| (j >= i).then(|| matrix.get(i, j)).flatten())
                    .map(|v| v.filter(|v| v.is_finite()))
                    .collect()
            })
            .collect(),
        value_label: "psi".into(),
        value_range: Some((0.0, 1.0)),
        colors: ColorScale::Viridis,
    }
}

/// psi(C_i, C_j) against the size of C_j, a line per starting configuration C_i: solid from
/// the first approach with a matrix (measured when it ran), dashed from the predicted one.
fn psi_curves(
    result: &StudyResult,
    id: &str,
    with_matrix: &[(&ApproachResult, &ScalabilityMatrix)],
) -> Result<Option<Figure>> {
    let Some(&(reference, _)) = with_matrix.first() else {
        return Ok(None);
    };
    let predicted = with_matrix
        .iter()
        .find(|(a, _)| a.approach == Approach::Predicted && a.approach != reference.approach);
    let size = SystemSize::of(result);
    let x_axis = size.axis(result);
    let log_x = x_axis.scale == Scale::Log;
    let mut series = Vec::new();
    let starts = with_matrix[0].1.len().saturating_sub(1);
    for i in 0..starts {
        let color = palette(i);
        let (approach, matrix) = with_matrix[0];
        let from = &matrix.labels()[i];
        let (solid, intervals) =
            drawable_with_intervals(curve_from(approach, matrix, i, size), log_x, true, Along::Y);
        series.push(
            Series::line(format!("from {from}"), solid)
                .y_intervals(intervals)
                .color(color),
        );
        if let Some((approach, matrix)) = predicted {
            let (dashed, intervals) = drawable_with_intervals(
                curve_from(approach, matrix, i, size),
                log_x,
                true,
                Along::Y,
            );
            // One key entry says what dashed means: on the first dashed line drawn.
            let named = !series
                .iter()
                .any(|s: &Series| s.line == Line::Dashed && !s.points.is_empty());
            let label = if named && !dashed.is_empty() {
                "dashed: predicted"
            } else {
                ""
            };
            series.push(
                Series::dashed(label, dashed)
                    .y_intervals(intervals)
                    .color(color),
            );
        }
    }
    if series.iter().all(|s| s.points.len() < 2) {
        return Ok(None);
    }
    let y_axis = psi_axis(&series);
    let title = format!(
        "{}: psi(C_i, C_j) against {}",
        kernel_in_words(&result.spec),
        x_axis.label
    );
    let svg = line_chart(&title, &Axes::new(x_axis, y_axis), &series)?;
    Ok(Some(Figure::new(
        format!("{id}-curves"),
        format!(
            "psi(C_i, C_j) against {} of C_j, one line per starting configuration C_i (from the {} approach's sizes{}); each line starts at 1 on C_i itself.",
            size.name(),
            reference.approach.name(),
            if predicted.is_some() {
                "; dashed: the predicted approach's"
            } else {
                ""
            }
        ),
        svg,
    )))
}

/// The points `(size of C_j, psi(C_i, C_j))` for `j >= i` of one matrix, each with its 95%
/// interval where the approach has one, placed by the approach's own points (a matrix holds
/// only the configurations the approach settled).
fn curve_from(
    approach: &ApproachResult,
    matrix: &ScalabilityMatrix,
    i: usize,
    size: SystemSize,
) -> Vec<((f64, f64), Interval)> {
    (i..matrix.len())
        .filter_map(|j| {
            let label = &matrix.labels()[j];
            let point = approach.point(label)?;
            let psi = matrix.get(i, j)?;
            let ci = approach.psi_ci95.as_ref().and_then(|c| c.get(i, j));
            Some(((size.value(point.p, point.marked_speed), psi), ci))
        })
        .collect()
}

/// psi on a log axis when it falls below a tenth (work growing much faster than the
/// machine), so the curves do not crowd the bottom; else linear from 0 to just above 1.
fn psi_axis(series: &[Series]) -> Axis {
    // The error bars' ends too: an explicit range must hold every bar.
    let ends = series.iter().flat_map(|s| {
        s.y_intervals
            .iter()
            .flatten()
            .flat_map(|&(lo, hi)| [lo, hi])
    });
    let values = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(ends);
    let (lo, hi) = values.fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let axis = Axis::new("isospeed-e scalability psi");
    if lo < 0.1 {
        axis.log()
    } else {
        axis.range(0.0, hi.max(1.0) * 1.05)
    }
}

fn psi_table(prefix: &str, with_matrix: &[(&ApproachResult, &ScalabilityMatrix)]) -> Result<Table> {
    let mut table = Table::new(
        format!("{prefix}-psi"),
        "psi(C_i, C_j) = C_j W_i / (C_i W_j) by approach (j > i; consecutive pairs form the super-diagonal)",
        vec![
            Column::new("approach"),
            Column::new("from C_i"),
            Column::new("to C_j"),
            Column::new("consecutive"),
            Column::new("psi"),
            Column::new("psi 95% low"),
            Column::new("psi 95% high"),
        ],
    );
    for (approach, matrix) in with_matrix {
        let labels = matrix.labels();
        for i in 0..matrix.len() {
            for j in i + 1..matrix.len() {
                let ci = approach.psi_ci95.as_ref().and_then(|c| c.get(i, j));
                table.push_row(vec![
                    approach.approach.name().into(),
                    labels[i].as_str().into(),
                    labels[j].as_str().into(),
                    if j == i + 1 { "yes" } else { "" }.into(),
                    matrix.get(i, j).into(),
                    ci.map(|ci| ci.0).into(),
                    ci.map(|ci| ci.1).into(),
                ])?;
            }
        }
    }
    Ok(table)
}
