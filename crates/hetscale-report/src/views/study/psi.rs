//! The isospeed-efficiency scalability psi(C_i, C_j) = C_j W_i / (C_i W_j): a heat map of the
//! matrix per approach (Sun & Rover's scalability matrices, Chen, Sun & Wu's tables) and
//! psi(N') curves, one per starting configuration.

use hetscale_model::scalability::ScalabilityMatrix;
use hetscale_study::spec::Approach;
use hetscale_study::study::{ApproachResult, StudyResult};

use super::{PSI, REFERENCE, SystemSize, approaches, drawable};
use crate::chart::{Axes, Axis, HeatMap, Scale, Series, heat_map, line_chart, palette};
use crate::error::Result;
use crate::html::{Figure, Section};
use crate::table::{Column, Table};

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
        .filter(|(_, m)| !m.is_empty())
        .collect();
    if with_matrix.is_empty() {
        return Ok(section
            .text("No approach settled two or more configurations, so there is no psi to show."));
    }
    for (k, (approach, matrix)) in with_matrix.iter().enumerate() {
        let name = approach.approach.name();
        section = section.figure(Figure::new(
            format!("{id}-figure-{}", k + 1),
            format!("psi(C_i, C_j) from the {name} approach's sizes: row C_i, column C_j; 1 on the diagonal; colour from 0 to 1."),
            heat_map(&psi_heat_map(&result.spec.name, name, matrix))?,
        ));
    }
    if let Some(curves) = psi_curves(result, &id, &with_matrix)? {
        section = section.figure(curves);
    }
    Ok(section.table(psi_table(prefix, &with_matrix)?))
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
        let solid = curve_from(approach, matrix, i, size);
        series
            .push(Series::line(format!("from {from}"), drawable(solid, log_x, true)).color(color));
        if let Some((approach, matrix)) = predicted {
            let dashed = curve_from(approach, matrix, i, size);
            series.push(Series::dashed("", drawable(dashed, log_x, true)).color(color));
        }
    }
    if series.iter().all(|s| s.points.len() < 2) {
        return Ok(None);
    }
    if predicted.is_some() {
        // A legend entry for the line style alone.
        series.push(Series::dashed("dashed: predicted", Vec::new()).color(REFERENCE));
    }
    let y_axis = psi_axis(&series);
    let title = format!(
        "{}: psi(C_i, C_j) versus {}",
        result.spec.name, x_axis.label
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

/// The points `(size of C_j, psi(C_i, C_j))` for `j >= i` of one matrix, placed by the
/// approach's own points (a matrix holds only the configurations the approach settled).
fn curve_from(
    approach: &ApproachResult,
    matrix: &ScalabilityMatrix,
    i: usize,
    size: SystemSize,
) -> Vec<(f64, f64)> {
    (i..matrix.len())
        .filter_map(|j| {
            let label = &matrix.labels()[j];
            let point = approach.point(label)?;
            Some((size.value(point.p, point.marked_speed), matrix.get(i, j)?))
        })
        .collect()
}

/// psi on a log axis when it falls below a tenth (work growing much faster than the
/// machine), so the curves do not crowd the bottom; else linear from 0 to just above 1.
fn psi_axis(series: &[Series]) -> Axis {
    let values = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
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
