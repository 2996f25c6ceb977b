//! `hetscale report`: a study database's report (HTML with inline SVG, tables as
//! Markdown/CSV/JSON), every study's result re-derived from its stored runs, nothing run.

use crate::output::outln;
use std::path::{Path, PathBuf};

use anyhow::Context;
use hetscale_kernels::KernelRegistry;
use hetscale_report::views::study::study_report;
use hetscale_study::store::Store;
use hetscale_study::study::{StudyResult, load_results_with};

/// Arguments of `hetscale report`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale report hetscale-out/study.db
  hetscale report hetscale-out/study.db --out /tmp/report")]
pub struct Args {
    /// The study database (SQLite) a `hetscale study` wrote.
    pub db: PathBuf,
    /// Directory the report is written to (index.html and tables/); by default the database's
    /// own directory, where `hetscale study` writes its report.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `hetscale report`.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    hetscale_out::protect_input("the study database", &args.db);
    let store = Store::open_read_only(&args.db)?;
    let results = load_results_with(&store, registry)?;
    let out = match &args.out {
        Some(dir) => dir.clone(),
        None => args
            .db
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
    };
    let index = write_report(&results, &out)?;
    outln!("Report: {}", index.display());
    Ok(())
}

/// Writes the report of `results` into `dir`; returns the page's path.
pub fn write_report(results: &[StudyResult], dir: &Path) -> anyhow::Result<PathBuf> {
    let written = study_report(results)?
        .write(dir)
        .with_context(|| format!("cannot write the report into {}", dir.display()))?;
    Ok(written.index)
}
