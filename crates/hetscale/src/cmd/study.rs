//! `hetscale study`.

/// Arguments of `hetscale study`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print results as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `hetscale study`.
pub fn run(_args: &Args) -> anyhow::Result<()> {
    anyhow::bail!("not yet wired")
}
