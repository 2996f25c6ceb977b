//! `hetscale paper`: the papers' tables recomputed from their published inputs.

use crate::output::{out, outln};
use hetscale_papers as papers;
use hetscale_report::text;

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
        out!("{}", text::paper::tables(&tables));
    }
    Ok(())
}
