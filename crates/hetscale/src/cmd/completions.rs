//! `hetscale completions SHELL`: the shell's completion script, generated from the command line.

use clap_complete::Shell;

/// Arguments of `hetscale completions`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale completions bash > ~/.local/share/bash-completion/completions/hetscale
  hetscale completions zsh > ~/.zfunc/_hetscale")]
pub struct Args {
    /// The shell: bash, elvish, fish, powershell or zsh.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Runs `hetscale completions`: writes the script for `command` to standard output.
pub fn run(args: &Args, mut command: clap::Command) -> anyhow::Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "hetscale", &mut script);
    crate::output::out!("{}", String::from_utf8(script)?);
    Ok(())
}
