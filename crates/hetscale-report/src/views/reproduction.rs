//! The papers' published values beside what hetscale found (`hetscale reproduce`, and the
//! default study).

use hetscale_study::reproduce::Reproduction;

use crate::error::Result;
use crate::html::Section;
use crate::table::{Cell, Column, Table};

/// Section id of [`reproduction_section`].
pub const ID: &str = "published-beside";

/// One table of every published value beside hetscale's, with the median errors over the
/// validation rows in the text.
pub fn reproduction_section(reproductions: &[Reproduction]) -> Result<Section> {
    let columns = [
        "experiment",
        "table",
        "item",
        "quantity",
        "approach",
        "role",
        "published",
        "hetscale",
        "relative error",
    ]
    .map(Column::new)
    .to_vec();
    let mut table = Table::new(ID, "Published beside hetscale", columns);
    for r in reproductions {
        for v in &r.values {
            table.push_row(vec![
                Cell::Text(r.id.clone()),
                Cell::Text(v.table.clone()),
                Cell::Text(v.item.clone()),
                Cell::Text(v.quantity.clone()),
                Cell::Text(v.approach.clone()),
                Cell::Text(v.role.clone()),
                Cell::Number(v.published),
                v.tool.map_or(Cell::Empty, Cell::Number),
                v.rel_err.map_or(Cell::Empty, Cell::Number),
            ])?;
        }
    }
    let mut section = Section::new(ID, "The papers' values beside hetscale's").text(
        "Each experiment is calibrated on its base configuration's published rows only \
         (role calibration); every other row is a validation row, never used to fit. \
         Measured values come from the study's runs on the calibrated simulated machine.",
    );
    for r in reproductions {
        section = section.text(medians_line(r));
    }
    Ok(section.table(table))
}

fn medians_line(r: &Reproduction) -> String {
    let parts: Vec<String> = [
        ("N", "measured"),
        ("N", "predicted"),
        ("psi", "measured"),
        ("T", "measured"),
    ]
    .iter()
    .filter_map(|(q, a)| {
        r.median_error(q, a)
            .map(|m| format!("{q} ({a}) {:.1}%", 100.0 * m))
    })
    .collect();
    format!(
        "{}: median |relative error| over validation rows: {}.",
        r.id,
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    )
}
