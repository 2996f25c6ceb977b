//! `hetscale man`: the man pages, generated from the command line.

use anyhow::Context as _;
use std::path::{Path, PathBuf};

/// Arguments of `hetscale man`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale man | man -l -
  hetscale man --out /usr/local/share/man/man1")]
pub struct Args {
    /// Write hetscale.1 and a page per subcommand (hetscale-study.1, ...) into this directory
    /// instead of hetscale.1 to standard output.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Runs `hetscale man` on `command`.
pub fn run(args: &Args, command: clap::Command) -> anyhow::Result<()> {
    match &args.out {
        Some(dir) => write_pages(&command, dir),
        None => {
            crate::output::out!("{}", page(&command)?);
            Ok(())
        }
    }
}

/// The roff man page of `command`.
fn page(command: &clap::Command) -> anyhow::Result<String> {
    let mut roff = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut roff)?;
    Ok(String::from_utf8(roff)?)
}

/// Writes the page of `command` and of each of its subcommands, recursively, into `dir`:
/// `hetscale.1`, `hetscale-study.1`, `hetscale-platform-show.1`, ...
fn write_pages(command: &clap::Command, dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create --out {}", dir.display()))?;
    let mut command = command.clone();
    // Subcommands' pages are named after their parents' (`hetscale-platform-show`).
    command.build();
    write_tree(&command, dir)
}

fn write_tree(command: &clap::Command, dir: &Path) -> anyhow::Result<()> {
    let name = command.get_display_name().unwrap_or(command.get_name());
    let path = dir.join(format!("{name}.1"));
    hetscale_out::write_atomically(&path, page(command)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        write_tree(sub, dir)?;
    }
    Ok(())
}
