//! The command line as clap parses it: every command and its arguments.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::cmd;

/// Measure, compute and predict the scalability of parallel algorithms on heterogeneous clusters.
#[derive(Debug, Parser)]
#[command(
    name = "hetscale",
    version,
    about,
    propagate_version = true,
    after_help = "\
Examples:
  hetscale study
  hetscale predict mm --nodes 4 --nodes 16 --nodes 64 --target 0.3
  hetscale paper --only jpdc"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Benchmark this machine's cores: their marked speed, and the `local` platform.
    Bench(cmd::bench::Args),
    /// Recompute the papers' published tables from their published inputs.
    Paper(cmd::paper::Args),
    /// Run one kernel on one machine and print T, W, S, C and E_s.
    Run(cmd::run::Args),
    /// Run a scalability study (with no spec: the built-in default study).
    Study(cmd::study::Args),
    /// Write the HTML report of a study database (E_s versus N, psi, contours, approaches).
    Report(cmd::report::Args),
    /// Predict the problem size holding a target E_s at any scale: a kernel's HBSP^1 model
    /// (approach 3, no runs), or the scaling model fitted to a study's runs (`--from DB`).
    Predict(cmd::predict::Args),
    /// The next runs a study would make to pin N at the scale asked about, each with its
    /// expected gain and cost, from a study's stored runs (nothing is run).
    Plan(cmd::plan::Args),
    /// Export a study database as CSV, JSON or Extra-P text.
    Export(cmd::export::Args),
    /// Williams & Parsons' scatter and broadcast experiments, actual beside predicted.
    Collectives(cmd::collectives::Args),
    /// List, show and validate platforms (nodes, marked speeds, network).
    Platform(cmd::platform::Args),
    /// Measure g, r_j, L and o of a backend, like BSPlib's probes.
    Probe(cmd::probe::Args),
    /// Fit a platform's machine model (compute rate, start-up) to measured runs.
    Calibrate(cmd::calibrate::Args),
    /// The papers' experiments: calibrate on the base configuration, predict the others.
    Reproduce(cmd::reproduce::Args),
    /// Print the shell completion script of bash, elvish, fish, powershell or zsh.
    Completions(cmd::completions::Args),
    /// Print the man page (roff), or write a page per command into a directory.
    Man(cmd::man::Args),
}

/// The command line as clap sees it: any option's value may be a negative number, so that
/// `--target -1` reaches the value's own check and its one-line error instead of being taken
/// for an unknown flag.
pub(crate) fn command_line() -> clap::Command {
    accept_negative_numbers(Cli::command())
}

fn accept_negative_numbers(command: clap::Command) -> clap::Command {
    command
        .mut_args(|arg| {
            // clap allows it only on arguments that take a value.
            let takes_value = arg.get_action().takes_values();
            arg.allow_negative_numbers(takes_value)
        })
        .mut_subcommands(accept_negative_numbers)
}

/// Parses `args` (the program name first) as [`command_line`].
pub(crate) fn parse<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut command = command_line();
    let matches = command.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|err| err.format(&mut command))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::usage_error_line;

    /// The line `hetscale` would show for the usage error of `args`.
    fn shown(args: &[&str]) -> String {
        let err = parse(std::iter::once("hetscale").chain(args.iter().copied()))
            .expect_err("a usage error");
        assert!(err.use_stderr() && err.exit_code() == 2);
        usage_error_line(&err.render().to_string())
    }

    /// Every command and subcommand of `hetscale`, with its name on the command line
    /// (`hetscale platform show`).
    fn every_command() -> Vec<(String, clap::Command)> {
        fn walk(prefix: &str, command: &clap::Command, all: &mut Vec<(String, clap::Command)>) {
            for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
                let name = format!("{prefix} {}", sub.get_name());
                all.push((name.clone(), sub.clone()));
                walk(&name, sub, all);
            }
        }
        let mut all = vec![("hetscale".to_string(), command_line())];
        walk("hetscale", &command_line(), &mut all);
        all
    }

    /// `line` split into words as a shell would, with '...' quoting.
    fn shell_words(line: &str) -> Vec<String> {
        line.split('\'')
            .enumerate()
            .flat_map(|(i, part)| match i % 2 {
                1 => vec![part.to_string()],
                _ => part.split_whitespace().map(String::from).collect(),
            })
            .collect()
    }

    #[test]
    fn every_command_has_examples_that_parse() {
        for (name, command) in every_command() {
            let help = command.clone().render_long_help().to_string();
            let examples: Vec<&str> = help
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with(&format!("{name} ")) || *l == name)
                .collect();
            assert!(help.contains("Example"), "{name} --help has no example");
            assert!(
                !examples.is_empty(),
                "{name} --help has no example of itself"
            );
            for example in examples {
                // The hetscale command alone, without a redirection or a pipe after it.
                let command = example.split(['>', '|']).next().unwrap_or_default();
                let words = shell_words(command);
                let words = words.iter().map(|w| w.replace('~', "/tmp"));
                if let Err(err) = parse(words) {
                    panic!("{name}'s example {example:?} does not parse: {err}");
                }
            }
        }
    }

    #[test]
    fn every_platform_flag_states_its_default_and_the_rule() {
        for (name, command) in every_command() {
            let Some(platform) = command.get_arguments().find(|a| a.get_id() == "platform") else {
                continue;
            };
            let help = platform
                .get_help()
                .map(ToString::to_string)
                .unwrap_or_default();
            assert!(
                help.contains("Default:") && help.contains("defaults to local"),
                "{name} --platform: {help}"
            );
        }
    }

    #[test]
    fn the_old_spellings_are_still_accepted() {
        let cli = parse(["hetscale", "bench", "--repetitions", "3"]).unwrap();
        assert!(matches!(cli.command, Command::Bench(ref a) if a.runs == Some(3)));
        let cli = parse([
            "hetscale",
            "collectives",
            "--p",
            "2,4",
            "--repetitions",
            "2",
        ])
        .unwrap();
        assert!(
            matches!(cli.command, Command::Collectives(ref a) if a.nodes == [2, 4] && a.runs == 2)
        );
        let cli = parse(["hetscale", "export", "s.db", "--output", "x.csv"]).unwrap();
        assert!(matches!(cli.command, Command::Export(ref a) if a.out.is_some()));
        let cli = parse([
            "hetscale",
            "study",
            "--command",
            "true",
            "--work",
            "n",
            "--nodes",
            "1",
            "--target",
            "0.5",
            "--n-max",
            "64",
            "--repetitions",
            "4",
        ])
        .unwrap();
        assert!(matches!(cli.command, Command::Study(ref a) if a.runs == Some(4)));
    }

    #[test]
    fn a_usage_error_is_one_line() {
        assert_eq!(
            shown(&["run", "mm", "--n", "NaN"]),
            "hetscale: invalid value 'NaN' for '--n <N>': invalid digit found in string; try \
             '--help'"
        );
        assert_eq!(
            shown(&["run", "mm", "--nod", "3"]),
            "hetscale: unexpected argument '--nod' found; a similar argument exists: '--nodes'"
        );
        assert_eq!(
            shown(&["platform", "show"]),
            "hetscale: the following required arguments were not provided: <NAME>; try '--help'"
        );
        for args in [
            &["run", "mm", "--backend"][..],
            &["run", "mm", "--runs", "0"],
            &["export"],
            &["calibrate"],
            &["no-such-command"],
            &["paper", "--only"],
        ] {
            let line = shown(args);
            assert!(
                line.starts_with("hetscale: ") && !line.contains('\n') && !line.contains("error:"),
                "{args:?}: {line}"
            );
        }
    }
}
