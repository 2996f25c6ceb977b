//! `hetscale paper`: the papers' tables recomputed from their published inputs.

use crate::output::{out, outln};
use hetscale_papers::{self as papers, PaperRow, PaperTable};
use std::fmt::Write as _;

/// Arguments of `hetscale paper`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale paper
  hetscale paper --only jpdc --json")]
pub struct Args {
    /// Print one JSON array of tables instead of text.
    #[arg(long)]
    pub json: bool,
    /// Only the tables whose id contains this text (e.g. `jpdc`, `tpds-table1`).
    #[arg(long, value_name = "TEXT")]
    pub only: Option<String>,
}

/// Runs `hetscale paper`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let mut tables = papers::all_tables()?;
    if let Some(only) = &args.only {
        tables.retain(|t| t.id.contains(only.as_str()));
        anyhow::ensure!(
            !tables.is_empty(),
            "no table id contains '{only}'; run `hetscale paper` to see the ids"
        );
    }
    if args.json {
        let json =
            hetscale_study::json::document("paper", "tables", serde_json::to_value(&tables)?);
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        out!("{}", render_text(&tables));
    }
    Ok(())
}

fn render_text(tables: &[PaperTable]) -> String {
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
