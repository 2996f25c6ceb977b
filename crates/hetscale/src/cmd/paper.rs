//! `hetscale paper`.

/// Arguments of `hetscale paper`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print one JSON array of tables instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `hetscale paper`.
pub fn run(_args: &Args) -> anyhow::Result<()> {
    anyhow::bail!("not yet wired")
}
