//! A study that planned its own runs: how the intervals of `N` narrowed against the machine
//! time spent, and every step with the run it chose and why.

use hetscale_study::plan::AdaptiveStudy;
use hetscale_study::plan::picks::sharpness;

use hetscale_model::numbers::significant;

use crate::chart::{Axes, Axis, Series, line_chart};
use crate::error::Result;
use crate::html::{Figure, Report, Section};
use crate::table::{Cell, Column, Table};

/// The report of `study`: its answer, the figure of interval width against machine time, and
/// its steps.
pub fn report(study: &AdaptiveStudy) -> Result<Report> {
    Ok(Report::new(format!("Planned study \"{}\"", study.study))
        .intro(format!(
            "The study chose its own runs to pin N holding E_s = {} within ±{}% on the configurations asked about, each run the one expected to narrow the widest intervals most per second of machine time. {}",
            significant(study.target, 3),
            significant(study.precision_percent, 2),
            study.stopped
        ))
        .section(section(study)?))
}

/// The figure and the tables of `study`.
pub fn section(study: &AdaptiveStudy) -> Result<Section> {
    let id = "plan";
    Ok(Section::new(id, "Interval width against machine time")
        .text("Each line is one configuration asked about: the hi/lo of its N's 95% interval (an open upper end at the search bound) after each step, against the machine time the study's runs had taken; the dashed line is the precision asked.")
        .figure(Figure::new(
            format!("{id}-figure"),
            "hi/lo of N's 95% interval after each step; lower is sharper.",
            width_chart(study)?,
        ))
        .table(answer_table(study)?)
        .table(steps_table(study)?))
}

fn width_chart(study: &AdaptiveStudy) -> Result<crate::chart::Svg> {
    let mut series: Vec<Series> = study
        .predicted
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let points = study
                .width_by_cost
                .iter()
                .filter_map(|w| w.hi_over_lo.get(i).map(|r| (w.spent_s.max(1e-6), *r)))
                .collect();
            Series::line(format!("N on {}", s.nodes), points)
        })
        .collect();
    let r = study.precision_percent / 100.0;
    let spent = study
        .width_by_cost
        .iter()
        .map(|w| w.spent_s)
        .fold(0.0, f64::max);
    let first = study.width_by_cost.first().map_or(0.0, |w| w.spent_s);
    series.push(Series::horizontal(
        format!("±{}%", significant(100.0 * r, 2)),
        (1.0 + r) / (1.0 - r),
        first,
        spent.max(first * 1.01 + 1e-6),
    ));
    let axes = Axes::new(
        Axis::new("machine time spent").unit("s"),
        Axis::new("hi/lo of N's 95% interval").log(),
    );
    line_chart("N's interval against machine time", &axes, &series)
}

fn answer_table(study: &AdaptiveStudy) -> Result<Table> {
    let mut table = Table::new(
        "plan-answer",
        "N on each configuration asked about",
        ["nodes", "p", "N", "95% low", "95% high", "sharpness"]
            .map(Column::new)
            .to_vec(),
    );
    for s in &study.predicted {
        let (lo, hi) = s.n_ci95.map_or((None, None), |(lo, hi)| (Some(lo), hi));
        table.push_row(vec![
            s.nodes.as_str().into(),
            s.p.into(),
            s.n.into(),
            lo.into(),
            hi.map_or(Cell::Text("open".into()), Cell::from),
            sharpness(s).into(),
        ])?;
    }
    Ok(table)
}

fn steps_table(study: &AdaptiveStudy) -> Result<Table> {
    let mut table = Table::new(
        "plan-steps",
        "The runs the study chose, and why",
        vec![
            Column::new("step"),
            Column::new("configuration"),
            Column::new("N"),
            Column::new("runs"),
            Column::with_unit("cost", "s"),
            Column::with_unit("spent", "s"),
            Column::new("why"),
        ],
    );
    for s in &study.steps {
        table.push_row(vec![
            u64::from(s.step).into(),
            s.configuration.as_str().into(),
            s.n.into(),
            u64::from(s.runs).into(),
            s.cost_s.into(),
            s.spent_s.into(),
            s.reason.as_str().into(),
        ])?;
    }
    Ok(table)
}
