//! `hetscale export`: a study database as CSV, JSON or Extra-P text.

use crate::output::out;
use hetscale_study::export::{Format, render};
use hetscale_study::store::Store;
use std::path::PathBuf;

/// Arguments of `hetscale export`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The study database (SQLite) to export.
    pub db: PathBuf,
    /// Output format: csv, json, or extrap (Extra-P's text input format).
    #[arg(long, default_value = "csv")]
    pub format: String,
    /// Only the runs of this study.
    #[arg(long)]
    pub study: Option<String>,
    /// Write to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// Runs `hetscale export`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let format: Format = args.format.parse()?;
    anyhow::ensure!(
        args.db.is_file(),
        "no study database at {}: give the --db file a study wrote",
        args.db.display()
    );
    let runs = Store::open(&args.db)?.runs(args.study.as_deref())?;
    let text = render(&runs, format)?;
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display())),
        None => {
            out!("{text}");
            Ok(())
        }
    }
}
