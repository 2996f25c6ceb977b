//! Williams & Parsons' collective experiments: improvement factors (`T_s/T_f`, `T_u/T_b`,
//! `T_1/T_2`), actual beside the HBSP^1 model's prediction.

use hetscale_papers::wp::experiments::{CollectiveKind, Improvement};

use super::ids;
use crate::chart::{Axes, Axis, Series, line_chart, palette};
use crate::error::{ReportError, Result};
use crate::html::{Figure, Section};
use crate::table::{Column, Table};

/// One improvement factor at one machine size and input size.
#[derive(Debug, Clone, PartialEq)]
pub struct ImprovementPoint {
    /// `scatter` or `broadcast`.
    pub collective: String,
    /// `T_s/T_f`, `T_u/T_b` or `T_1/T_2`.
    pub factor: String,
    /// Number of nodes.
    pub p: usize,
    /// Input size, KB.
    pub n_kb: usize,
    /// From measured (or simulated) times.
    pub actual: f64,
    /// From the model's predicted times.
    pub predicted: f64,
}

impl From<&Improvement> for ImprovementPoint {
    fn from(i: &Improvement) -> Self {
        let collective = match i.collective {
            CollectiveKind::Scatter => "scatter",
            CollectiveKind::Broadcast => "broadcast",
        };
        Self {
            collective: collective.into(),
            factor: i.factor.into(),
            p: i.p,
            n_kb: i.n_kb,
            actual: i.actual,
            predicted: i.predicted,
        }
    }
}

/// A chart per (collective, factor) of the factor versus input size, one colour per `p`
/// (solid: actual, dashed: predicted), and a table of every point. `clock` says where the
/// actual times come from, e.g. `sim backend, virtual time`.
pub fn collective_section(points: &[ImprovementPoint], clock: &str) -> Result<Section> {
    if points.is_empty() {
        return Err(ReportError::NoData {
            what: "the collective experiments".into(),
            hint: "run them first (hetscale collectives) and pass their improvement factors",
        });
    }
    let mut section = Section::new(ids::COLLECTIVE_IMPROVEMENTS, "Collective improvement factors").text(format!(
        "Williams & Parsons' experiments ({clock}): T_s/T_f is how much faster a scatter or broadcast is from the fastest root than from the slowest; T_u/T_b how much faster balanced shares (c_j = C_j / C) are than even ones; T_1/T_2 how a one-phase broadcast compares with a two-phase one. Above 1 the second variant wins. Solid lines are the actual factors, dashed lines the HBSP^1 model's predictions."
    ));
    for (k, (collective, factor)) in groups(points).into_iter().enumerate() {
        let group: Vec<&ImprovementPoint> = points
            .iter()
            .filter(|p| p.collective == collective && p.factor == factor)
            .collect();
        let title = format!("{collective} {factor}, actual and predicted");
        let svg = line_chart(&title, &group_axes(&group, &factor), &group_series(&group))?;
        let id = format!("{}-figure-{}", ids::COLLECTIVE_IMPROVEMENTS, k + 1);
        section = section.figure(Figure::new(
            id,
            format!("{collective}: improvement factor {factor}; one colour per number of nodes p."),
            svg,
        ));
    }
    Ok(section.table(improvement_table(points)?))
}

/// Distinct (collective, factor) pairs in order of first appearance.
fn groups(points: &[ImprovementPoint]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for p in points {
        let key = (p.collective.clone(), p.factor.clone());
        if !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

/// Input size across, unless there is only one size: then p across.
fn by_size(group: &[&ImprovementPoint]) -> bool {
    group.iter().any(|p| p.n_kb != group[0].n_kb)
}

fn group_axes(group: &[&ImprovementPoint], factor: &str) -> Axes {
    let x = if by_size(group) {
        Axis::new("input size n").unit("KB")
    } else {
        Axis::new("nodes p").integers()
    };
    Axes::new(x, Axis::new(format!("improvement factor {factor}")))
}

fn group_series(group: &[&ImprovementPoint]) -> Vec<Series> {
    if !by_size(group) {
        let mut sorted = group.to_vec();
        sorted.sort_by_key(|p| p.p);
        let n = sorted[0].n_kb;
        return vec![
            Series::line(
                format!("actual, n = {n} KB"),
                sorted.iter().map(|p| (p.p as f64, p.actual)).collect(),
            )
            .color(palette(0)),
            Series::dashed(
                format!("predicted, n = {n} KB"),
                sorted.iter().map(|p| (p.p as f64, p.predicted)).collect(),
            )
            .color(palette(0)),
        ];
    }
    let mut ps: Vec<usize> = group.iter().map(|p| p.p).collect();
    ps.sort_unstable();
    ps.dedup();
    ps.iter()
        .enumerate()
        .flat_map(|(i, &p)| {
            let mut row: Vec<&&ImprovementPoint> = group.iter().filter(|q| q.p == p).collect();
            row.sort_by_key(|q| q.n_kb);
            [
                Series::line(
                    format!("p = {p} actual"),
                    row.iter().map(|q| (q.n_kb as f64, q.actual)).collect(),
                )
                .color(palette(i)),
                Series::dashed(
                    format!("p = {p} predicted"),
                    row.iter().map(|q| (q.n_kb as f64, q.predicted)).collect(),
                )
                .color(palette(i)),
            ]
        })
        .collect()
}

fn improvement_table(points: &[ImprovementPoint]) -> Result<Table> {
    let mut table = Table::new(
        ids::COLLECTIVE_IMPROVEMENTS,
        "Improvement factors, actual and predicted",
        vec![
            Column::new("collective"),
            Column::new("factor"),
            Column::new("p"),
            Column::with_unit("n", "KB"),
            Column::new("actual"),
            Column::new("predicted"),
            Column::new("actual / predicted"),
        ],
    );
    for p in points {
        table.push_row(vec![
            p.collective.as_str().into(),
            p.factor.as_str().into(),
            p.p.into(),
            p.n_kb.into(),
            p.actual.into(),
            p.predicted.into(),
            (p.actual / p.predicted).into(),
        ])?;
    }
    Ok(table)
}
