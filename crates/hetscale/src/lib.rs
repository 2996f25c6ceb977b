//! The `hetscale` command line: argument parsing and wiring only; the logic lives in the
//! library crates.
//!
//! [`main_with`] is the whole command line as a function, so a user's own binary gets every
//! subcommand with their kernels added (`hetscale run my-kernel ...`, a study spec with
//! `kernel = "my-kernel"`, `hetscale report` of such a study):
//!
//! ```no_run
//! use hetscale_kernels::{KernelRegistry, mm::MmKernel};
//!
//! fn main() -> std::process::ExitCode {
//!     // A real user registers their own `Kernel`; see examples/user-kernel.
//!     match KernelRegistry::builtin().with("my-mm", |_| Ok(Box::new(MmKernel))) {
//!         Ok(registry) => hetscale::main_with(registry),
//!         Err(e) => {
//!             eprintln!("{e}");
//!             std::process::ExitCode::FAILURE
//!         }
//!     }
//! }
//! ```

// Commands print through `output` (`outln!`, `out!`, `errln!`): std's print macros panic
// when a stream cannot be written.
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod cmd;
mod output;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use hetscale_kernels::KernelRegistry;
use output::errln;
use std::io::Write as _;
use std::process::ExitCode;

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
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
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
fn command_line() -> clap::Command {
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
fn parse<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut command = command_line();
    let matches = command.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|err| err.format(&mut command))
}

/// The exit code of a run refused before it started because it cannot fit this machine.
pub const REFUSED: u8 = 2;

/// The exit code of a study that settled no configuration (every one failed or its target
/// was unreachable); its database, results and report are written all the same.
pub const UNSETTLED: u8 = 3;

/// Whether `err` refuses a run too large for this machine, whichever crate refused it.
fn is_refusal(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<hbsp::HbspError>()
            .is_some_and(hbsp::HbspError::is_refusal)
            || cause
                .downcast_ref::<hetscale_kernels::KernelError>()
                .is_some_and(hetscale_kernels::KernelError::is_refusal)
            || cause
                .downcast_ref::<hetscale_study::StudyError>()
                .is_some_and(hetscale_study::StudyError::is_refusal)
    })
}

/// Runs the `hetscale` command line on this process's arguments, with the kernels of
/// `registry`; returns the exit code (failure after printing a one-line reason; [`REFUSED`]
/// for a run refused as too large for this machine).
pub fn main_with(registry: KernelRegistry) -> ExitCode {
    if let Err(err) = output::check_stdout_open() {
        errln!("hetscale: {err:#}");
        return ExitCode::FAILURE;
    }
    let cli = match parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err(err) => return parse_failure(&err),
    };
    let outcome = match cli.command {
        Command::Bench(args) => cmd::bench::run(&args),
        Command::Paper(args) => cmd::paper::run(&args),
        Command::Run(args) => cmd::run::run(&args, &registry),
        Command::Study(args) => cmd::study::run(&args, &registry),
        Command::Report(args) => cmd::report::run(&args, &registry),
        Command::Predict(args) => cmd::predict::run(&args, &registry),
        Command::Export(args) => cmd::export::run(&args),
        Command::Collectives(args) => cmd::collectives::run(&args),
        Command::Platform(args) => cmd::platform::run(&args, &registry),
        Command::Probe(args) => cmd::probe::run(&args),
        Command::Calibrate(args) => cmd::calibrate::run(&args, &registry),
        Command::Reproduce(args) => cmd::reproduce::run(&args, &registry),
        Command::Completions(args) => cmd::completions::run(&args, command_line()),
        Command::Man(args) => cmd::man::run(&args, command_line()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of stdout went away (`| head`): it has what it wanted; end quietly.
        Err(err) if output::is_closed_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            errln!("hetscale: {err:#}");
            if is_refusal(&err) {
                return ExitCode::from(REFUSED);
            }
            if err.is::<hetscale_study::study::Unsettled>() {
                return ExitCode::from(UNSETTLED);
            }
            // As a shell reports a process ended by the signal.
            hetscale_study::runner::interrupt::requested()
                .and_then(|signal| u8::try_from(128 + signal).ok())
                .map_or(ExitCode::FAILURE, ExitCode::from)
        }
    }
}

/// Shows a command line clap did not run: `--help` and `--version` as clap prints them, a usage
/// error (a bad value, a missing or unknown flag) in one line and a hint; returns clap's exit
/// code (2 for a usage error).
fn parse_failure(err: &clap::Error) -> ExitCode {
    if !err.use_stderr() {
        // clap does not flush: a full disk would be seen only at exit, and ignored there.
        if let Err(e) = err.print().and_then(|()| std::io::stdout().flush()) {
            output::stop_writing(&e);
        }
    } else if err.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        // `hetscale` alone: the help, unasked, on stderr.
        let _ = err.print();
    } else {
        errln!("{}", usage_error_line(&err.render().to_string()));
    }
    u8::try_from(err.exit_code()).map_or(ExitCode::FAILURE, ExitCode::from)
}

/// clap's rendering of a usage error (the error, tips, the usage, a pointer to `--help`, in
/// paragraphs) as one line, like every other error: `hetscale: `, the error, and clap's first
/// tip or else its pointer to `--help`.
fn usage_error_line(rendered: &str) -> String {
    let paragraphs: Vec<&str> = rendered
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let error = paragraphs.first().map_or(String::new(), |p| one_line(p));
    let tip = paragraphs
        .iter()
        .flat_map(|p| p.lines().map(str::trim))
        .find_map(|line| line.strip_prefix("tip: "));
    format!("hetscale: {error}; {}", tip.unwrap_or("try '--help'"))
}

/// An error paragraph on one line: `error: the following required arguments were not
/// provided:` and its list become `the following ... provided: <KERNEL>, --n <N>`.
fn one_line(paragraph: &str) -> String {
    let mut lines = paragraph.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let rest: Vec<&str> = lines.collect();
    match (rest.is_empty(), first.ends_with(':')) {
        (true, _) => first.to_string(),
        (false, true) => format!("{first} {}", rest.join(", ")),
        (false, false) => format!("{first} {}", rest.join(" ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
