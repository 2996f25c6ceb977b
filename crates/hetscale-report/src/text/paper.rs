//! `hetscale paper`: the papers' tables recomputed from their published inputs, beside the
//! published values.

use std::fmt::Write as _;

use hetscale_papers::{PaperRow, PaperTable};

/// Each table's published values beside the recomputed ones, with its notes, then how many
/// were reproduced.
pub fn tables(tables: &[PaperTable]) -> String {
    let mut out = String::new();
    for table in tables {
        let _ = writeln!(
            out,
            "== {} — {}\n   {}",
            table.id, table.title, table.source
        );
        let width = table
            .rows
            .iter()
            .map(|r| r.label.len())
            .max()
            .unwrap_or(5)
            .max(5);
        let _ = writeln!(
            out,
            "   {:<width$}  {:>12}  {:>12}  {:>9}",
            "value", "published", "computed", "diff"
        );
        for row in &table.rows {
            let _ = writeln!(out, "   {:<width$}  {}", row.label, row_cells(row));
        }
        for note in &table.notes {
            let _ = writeln!(out, "   * {note}");
        }
        out.push('\n');
    }
    let compared: Vec<&PaperRow> = tables
        .iter()
        .flat_map(|t| &t.rows)
        .filter(|r| r.reproduced.is_some())
        .collect();
    let failed = compared
        .iter()
        .filter(|r| r.reproduced == Some(false))
        .count();
    let _ = writeln!(
        out,
        "{} published values compared: {} reproduced, {failed} not reproduced (see the notes).",
        compared.len(),
        compared.len() - failed
    );
    out
}

fn row_cells(row: &PaperRow) -> String {
    match (row.published_text, row.published) {
        (Some(text), Some(published)) => {
            let diff = 100.0 * (row.computed - published) / published;
            let mark = if row.reproduced == Some(true) {
                "ok"
            } else {
                "NOT REPRODUCED"
            };
            format!(
                "{text:>12}  {:>12}  {diff:>+8.2}%  {mark}",
                row.computed_display()
            )
        }
        _ => format!("{:>12}  {:>12}", "-", row.computed_display()),
    }
}
