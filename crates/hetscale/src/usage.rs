//! A command line clap did not run: its help and version as clap prints them, a usage error
//! in one line like every other error.

use std::io::Write as _;
use std::process::ExitCode;

use crate::output::{self, errln};

/// Shows a command line clap did not run: `--help` and `--version` as clap prints them, a usage
/// error (a bad value, a missing or unknown flag) in one line and a hint; returns clap's exit
/// code (2 for a usage error).
pub(crate) fn parse_failure(err: &clap::Error) -> ExitCode {
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
pub(crate) fn usage_error_line(rendered: &str) -> String {
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
