//! `hetscale export`: a study database as CSV, JSON or Extra-P text.

use crate::output::out;
use hetscale_study::export::{Format, export};
use hetscale_study::store::Store;
use std::path::PathBuf;

/// Arguments of `hetscale export`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale export hetscale-out/study.db
  hetscale export hetscale-out/study.db --format extrap --study ge --out ge.txt")]
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
    #[arg(long, short = 'o', alias = "output", value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs `hetscale export`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let format: Format = args.format.parse()?;
    hbsp::file::protect_input("the study database", &args.db);
    let store = Store::open_read_only(&args.db)?;
    let text = export(&store, args.study.as_deref(), format)?;
    match &args.out {
        Some(path) => hbsp::file::write_atomically(path, text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display())),
        None => {
            out!("{text}");
            Ok(())
        }
    }
}
