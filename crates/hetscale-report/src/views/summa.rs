//! Kalinov's SUMMA distribution strategies: heterogeneous concurrent efficiency `E_he` versus
//! the number of processors (eqs. 6-11), one line per strategy.

use super::ids;
use crate::chart::{Axes, Axis, Series, line_chart};
use crate::error::{ReportError, Result};
use crate::html::{Figure, Section};
use crate::table::{Cell, Column, Table};

/// `E_he` of one strategy on `p` processors.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyEfficiency {
    /// `hoho`, `heho`, `hohe1` or `hohe2`.
    pub strategy: String,
    /// Number of processors.
    pub p: usize,
    /// Heterogeneous concurrent efficiency `E_he` (1 is ideal).
    pub efficiency: f64,
}

/// The chart (p on a log axis when it spans a factor 16 or more) and a table with one row
/// per `p` and one column per strategy. `setting` says how the points were obtained (the
/// platform, network and how n grows with p).
pub fn summa_section(points: &[StrategyEfficiency], setting: &str) -> Result<Section> {
    if points.is_empty() {
        return Err(ReportError::NoData {
            what: "the SUMMA strategy efficiencies".into(),
            hint: "compute E_he for at least one strategy and p (hetscale_model::summa::strategy_efficiency)",
        });
    }
    let strategies = distinct(points.iter().map(|p| p.strategy.clone()));
    let series: Vec<Series> = strategies
        .iter()
        .map(|s| {
            let mut pts: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| &p.strategy == s)
                .map(|p| (p.p as f64, p.efficiency))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series::line(s.clone(), pts)
        })
        .collect();
    let (p_min, p_max) = points
        .iter()
        .fold((usize::MAX, 0), |(lo, hi), p| (lo.min(p.p), hi.max(p.p)));
    let mut x = Axis::new("processors p").integers();
    if p_min > 0 && p_max >= 16 * p_min {
        x = x.log();
    }
    let top = points.iter().map(|p| p.efficiency).fold(1.0, f64::max) * 1.05;
    let axes = Axes::new(x, Axis::new("efficiency E_he").range(0.0, top));
    let svg = line_chart("SUMMA strategies: E_he versus p", &axes, &series)?;
    Ok(Section::new(ids::SUMMA_EFFICIENCY, "SUMMA strategies: efficiency versus p")
        .text(format!(
            "Heterogeneous concurrent efficiency E_he = n^3 / (p r_aver T) of SUMMA under Kalinov's four distribution strategies ({setting}). A strategy is scalable if its line stays level as p grows: HoHo is paced by the slowest processor, HeHo runs more processes on faster processors, HoHe1 distributes columns heterogeneously, HoHe2 the whole grid."
        ))
        .figure(Figure::new(format!("{}-figure", ids::SUMMA_EFFICIENCY), "One line per strategy; 1 is ideal use of the platform's aggregate performance.", svg))
        .table(efficiency_table(points, &strategies)?))
}

fn distinct<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

fn efficiency_table(points: &[StrategyEfficiency], strategies: &[String]) -> Result<Table> {
    let mut columns = vec![Column::new("p")];
    columns.extend(strategies.iter().map(|s| Column::new(format!("E_he {s}"))));
    let mut table = Table::new(
        ids::SUMMA_EFFICIENCY,
        "SUMMA heterogeneous concurrent efficiency by strategy",
        columns,
    );
    let mut ps = distinct(points.iter().map(|p| p.p));
    ps.sort_unstable();
    for p in ps {
        let mut row: Vec<Cell> = vec![p.into()];
        row.extend(strategies.iter().map(|s| {
            points
                .iter()
                .find(|q| q.p == p && &q.strategy == s)
                .map(|q| q.efficiency)
                .into()
        }));
        table.push_row(row)?;
    }
    Ok(table)
}
