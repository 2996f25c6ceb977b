//! Launching any program as a run: a command template with placeholders, substituted without
//! a shell, spawned in its own process group with a timeout (the whole group is killed when it
//! expires), its output captured and its time read from the wall clock, a regular expression
//! or a JSON field.
//!
//! ```
//! use std::time::Duration;
//! use hetscale_study::external::{CommandTemplate, TimeSource, launch};
//!
//! let template = CommandTemplate::parse("echo time={n}e-3 on {p} nodes")?;
//! let argv = template.render(&[("n", "250".into()), ("p", "2".into())])?;
//! assert_eq!(argv, ["echo", "time=250e-3", "on", "2", "nodes"]);
//! let output = launch(&argv, Duration::from_secs(10))?;
//! let time = TimeSource::regex(r"time=(\S+)")?.read(&output)?;
//! assert_eq!(time, 0.25);
//! # Ok::<(), String>(())
//! ```
//!
//! The study runner uses this for external-command studies; anything else that runs one
//! program per measurement (e.g. `mpirun ... hetscale run --json`) can use it the same way.

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use regex::Regex;
use serde::{Deserialize, Serialize};
use wait_timeout::ChildExt;

/// The placeholders a study's command template may use: the problem size, the node count, the
/// configuration's node set as written, and a file listing its nodes (`name slots=k`).
pub const PLACEHOLDERS: [&str; 4] = ["n", "p", "nodes", "hostfile"];

/// How long the output readers may take to see end-of-file after the process group is gone.
const READER_GRACE: Duration = Duration::from_secs(1);

/// A command line with `{name}` placeholders, split into words like a shell would (quotes,
/// backslashes) but run without one; `{{` and `}}` stand for literal braces.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandTemplate {
    text: String,
    words: Vec<Vec<Piece>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Placeholder(String),
}

impl CommandTemplate {
    /// Parses `text` with the study placeholders ([`PLACEHOLDERS`]).
    pub fn parse(text: &str) -> Result<Self, String> {
        Self::parse_with(text, &PLACEHOLDERS)
    }

    /// Parses `text`, allowing the placeholders `allowed`.
    pub fn parse_with(text: &str, allowed: &[&str]) -> Result<Self, String> {
        let split = shell_words::split(text)
            .map_err(|e| format!("command \"{text}\": {e}: close the quote"))?;
        if split.is_empty() {
            return Err("the command is empty: give a program and its arguments".into());
        }
        let words = split
            .iter()
            .map(|w| pieces(w, allowed).map_err(|e| format!("command \"{text}\": {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            text: text.to_string(),
            words,
        })
    }

    /// The text it was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the template uses placeholder `name`.
    pub fn uses(&self, name: &str) -> bool {
        self.words
            .iter()
            .flatten()
            .any(|p| matches!(p, Piece::Placeholder(n) if n == name))
    }

    /// The argument vector with every placeholder replaced by its value in `values`.
    pub fn render(&self, values: &[(&str, String)]) -> Result<Vec<String>, String> {
        self.words
            .iter()
            .map(|word| {
                word.iter()
                    .map(|piece| match piece {
                        Piece::Text(t) => Ok(t.clone()),
                        Piece::Placeholder(name) => values
                            .iter()
                            .find(|(n, _)| n == name)
                            .map(|(_, v)| v.clone())
                            .ok_or_else(|| format!("no value for {{{name}}}")),
                    })
                    .collect::<Result<String, String>>()
            })
            .collect()
    }
}

/// Splits one word into text and placeholders.
fn pieces(word: &str, allowed: &[&str]) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('{', Some('{')) | ('}', Some('}')) => {
                chars.next();
                text.push(c);
            }
            ('{', _) => {
                let mut name = String::new();
                let closed = chars.by_ref().any(|c| {
                    c == '}' || {
                        name.push(c);
                        false
                    }
                });
                if name.contains('{') || !closed {
                    return Err(format!(
                        "unbalanced brace in \"{word}\": write {{name}} for a placeholder, {{{{ for a literal {{"
                    ));
                }
                if !allowed.contains(&name.as_str()) {
                    return Err(format!(
                        "unknown placeholder {{{name}}}: use {}",
                        allowed
                            .iter()
                            .map(|a| format!("{{{a}}}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                out.push(Piece::Text(std::mem::take(&mut text)));
                out.push(Piece::Placeholder(name));
            }
            ('}', _) => {
                return Err(format!(
                    "unbalanced brace in \"{word}\": write }}}} for a literal }}"
                ));
            }
            _ => text.push(c),
        }
    }
    out.push(Piece::Text(text));
    out.retain(|p| !matches!(p, Piece::Text(t) if t.is_empty()));
    Ok(out)
}

/// What a launched program did.
#[derive(Debug, Clone)]
pub struct CommandOutput {
    /// How it exited.
    pub status: ExitStatus,
    /// Its standard output (lossy UTF-8).
    pub stdout: String,
    /// Its standard error (lossy UTF-8).
    pub stderr: String,
    /// Wall-clock time from spawn to exit, s.
    pub wall_s: f64,
}

/// Runs `argv` (program and arguments, no shell) in a new process group, capturing its output;
/// after `timeout` the whole group is killed and the launch fails. A non-zero exit is an error
/// quoting the last line of standard error. Every error is one line.
pub fn launch(argv: &[String], timeout: Duration) -> Result<CommandOutput, String> {
    let (program, args) = argv
        .split_first()
        .ok_or("the command is empty: give a program and its arguments")?;
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let start = Instant::now();
    let mut child = command.spawn().map_err(|e| {
        format!("cannot start \"{program}\": {e}: check the path and that it is executable")
    })?;
    let stdout = read_in_background(child.stdout.take());
    let stderr = read_in_background(child.stderr.take());
    let waited = child.wait_timeout(timeout);
    let wall_s = start.elapsed().as_secs_f64();
    let status = match waited {
        Ok(Some(status)) => status,
        Ok(None) | Err(_) => {
            kill_group(child.id());
            let _ = child.wait();
            let why = match waited {
                Err(e) => format!("waiting for \"{program}\" failed: {e}"),
                _ => format!(
                    "\"{program}\" timed out after {:.3} s (killed): raise timeout_s or lower n_max",
                    timeout.as_secs_f64()
                ),
            };
            return Err(why);
        }
    };
    // The program may have left children in its group holding the pipes open.
    kill_group(child.id());
    let output = CommandOutput {
        status,
        stdout: collect(stdout),
        stderr: collect(stderr),
        wall_s,
    };
    if !output.status.success() {
        return Err(format!(
            "\"{program}\" failed ({}){}",
            output.status,
            last_line(&output.stderr)
                .map(|l| format!(": {l}"))
                .unwrap_or_default()
        ));
    }
    Ok(output)
}

fn read_in_background(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (sender, receiver) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = sender.send(bytes);
        });
    }
    receiver
}

fn collect(receiver: mpsc::Receiver<Vec<u8>>) -> String {
    let bytes = receiver.recv_timeout(READER_GRACE).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Kills process group `pgid` (the launched program and everything it started); a group that
/// is already gone is fine.
fn kill_group(pgid: u32) {
    if let Ok(pgid) = i32::try_from(pgid) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

/// Where a run's time comes from.
#[derive(Debug, Clone)]
pub enum TimeSource {
    /// The wall-clock time hetscale measured from spawn to exit.
    Wall,
    /// The first capture group of the last match of a regular expression in standard output,
    /// in seconds.
    Regex(Regex),
    /// A numeric field of the JSON standard output (the whole output, else its last line that
    /// parses), as a dotted path such as `timing.total_s`, in seconds.
    Json(String),
}

impl TimeSource {
    /// A regex source; the expression must have a capture group.
    pub fn regex(pattern: &str) -> Result<Self, String> {
        let regex = Regex::new(pattern).map_err(|e| {
            format!(
                "time_regex \"{pattern}\" does not compile: {}",
                e.to_string().lines().last().unwrap_or("").trim()
            )
        })?;
        if regex.captures_len() < 2 {
            return Err(format!(
                "time_regex \"{pattern}\" has no capture group: put the number in ( ), e.g. time: (\\S+)"
            ));
        }
        Ok(Self::Regex(regex))
    }

    /// The run time of `output`, s: positive and finite, else a one-line error.
    pub fn read(&self, output: &CommandOutput) -> Result<f64, String> {
        let time = match self {
            Self::Wall => output.wall_s,
            Self::Regex(regex) => {
                let captured = regex
                    .captures_iter(&output.stdout)
                    .last()
                    .and_then(|c| c.get(1))
                    .ok_or_else(|| {
                        format!(
                            "the output has no match of time_regex \"{}\"",
                            regex.as_str()
                        )
                    })?;
                captured.as_str().trim().parse::<f64>().map_err(|_| {
                    format!(
                        "time_regex \"{}\" captured \"{}\", not a number",
                        regex.as_str(),
                        captured.as_str()
                    )
                })?
            }
            Self::Json(path) => json_time(&output.stdout, path)?,
        };
        if time.is_finite() && time > 0.0 {
            Ok(time)
        } else {
            Err(format!("the time read is {time} s: it must be positive"))
        }
    }
}

fn json_time(stdout: &str, path: &str) -> Result<f64, String> {
    let document = serde_json::from_str::<serde_json::Value>(stdout)
        .ok()
        .or_else(|| {
            stdout
                .lines()
                .rev()
                .find_map(|l| serde_json::from_str(l.trim()).ok())
        })
        .ok_or("the output is not JSON (nor is any of its lines): print one JSON object")?;
    path.split('.')
        .try_fold(&document, |value, key| value.get(key))
        .and_then(serde_json::Value::as_f64)
        .ok_or_else(|| format!("the output's JSON has no number at \"{path}\""))
}

/// How a study's command is run, as its spec's `[command]` table gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    /// The command template, e.g. `./solver --size {n} --procs {p}`.
    pub template: String,
    /// The work `W` as a formula in `n` and `p`, e.g. `2*n^3`.
    pub work: String,
    /// The overhead `T_o` in seconds as a formula in `n` and `p`, for approach 3 (predicted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<String>,
    /// A regular expression whose first group is the time, s, in the standard output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_regex: Option<String>,
    /// A dotted path to the time, s, in the JSON standard output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_json: Option<String>,
    /// Seconds a run may take before its process group is killed and the run fails.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: f64,
}

fn default_timeout_s() -> f64 {
    600.0
}

/// The longest a run may be given before it is killed, s (30 days): anything longer is a
/// slip of the keyboard, and far longer would not fit a [`Duration`].
pub const MAX_TIMEOUT_S: f64 = 30.0 * 24.0 * 3600.0;

/// A run's timeout of `seconds` (a spec's `timeout_s`); the error is one line naming the field.
pub fn timeout_of_s(seconds: f64) -> Result<Duration, String> {
    if seconds > 0.0 && seconds <= MAX_TIMEOUT_S {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(format!(
            "timeout_s = {}: give a positive number of seconds up to {MAX_TIMEOUT_S} (30 days)",
            crate::spec::shown(seconds)
        ))
    }
}

/// A validated [`CommandSpec`], ready to run.
#[derive(Debug, Clone)]
pub struct ExternalCommand {
    /// The template.
    pub template: CommandTemplate,
    /// `W(n, p)`.
    pub work: crate::formula::Formula,
    /// `T_o(n, p)`, s, if given.
    pub overhead: Option<crate::formula::Formula>,
    /// Where the time comes from.
    pub time: TimeSource,
    /// Per-run timeout.
    pub timeout: Duration,
}

impl CommandSpec {
    /// A spec with the default timeout and wall-clock time.
    pub fn new(template: &str, work: &str) -> Self {
        Self {
            template: template.into(),
            work: work.into(),
            overhead: None,
            time_regex: None,
            time_json: None,
            timeout_s: default_timeout_s(),
        }
    }

    /// Parses and checks every part; the error is one line naming the field.
    pub fn validate(&self) -> Result<ExternalCommand, String> {
        use crate::formula::Formula;
        let template = CommandTemplate::parse(&self.template)?;
        let work = Formula::parse(&self.work).map_err(|e| format!("work: {e}"))?;
        let overhead = self
            .overhead
            .as_deref()
            .map(Formula::parse)
            .transpose()
            .map_err(|e| format!("overhead: {e}"))?;
        let time = match (&self.time_regex, &self.time_json) {
            (Some(_), Some(_)) => {
                return Err("give time_regex or time_json, not both".into());
            }
            (Some(pattern), None) => TimeSource::regex(pattern)?,
            (None, Some(path)) if path.trim().is_empty() => {
                return Err("time_json is empty: give the field's path, e.g. time_s".into());
            }
            (None, Some(path)) => TimeSource::Json(path.clone()),
            (None, None) => TimeSource::Wall,
        };
        Ok(ExternalCommand {
            template,
            work,
            overhead,
            time,
            timeout: timeout_of_s(self.timeout_s)?,
        })
    }
}

/// The values of [`PLACEHOLDERS`] for one run.
pub fn placeholder_values(
    n: u64,
    nodes: &str,
    p: usize,
    hostfile: Option<&Path>,
) -> Vec<(&'static str, String)> {
    let mut values = vec![
        ("n", n.to_string()),
        ("p", p.to_string()),
        ("nodes", nodes.to_string()),
    ];
    if let Some(path) = hostfile {
        values.push(("hostfile", path.display().to_string()));
    }
    values
}

/// The hostfile of a machine, in the `name slots=k` form OpenMPI reads: one line per node,
/// `k` the CPUs the configuration uses of it.
pub fn hostfile_text(machine: &hbsp::Machine) -> String {
    machine
        .nodes()
        .iter()
        .map(|node| format!("{} slots={}\n", node.name, node.cpus_used))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(text: &str) -> Vec<String> {
        CommandTemplate::parse(text)
            .unwrap()
            .render(&placeholder_values(64, "a,b", 2, Some(Path::new("/tmp/h"))))
            .unwrap()
    }

    #[test]
    fn placeholders_are_substituted_word_by_word_without_a_shell() {
        assert_eq!(
            argv("prog --n={n} -p {p} 'two words {nodes}' {hostfile} {{x}}"),
            [
                "prog",
                "--n=64",
                "-p",
                "2",
                "two words a,b",
                "/tmp/h",
                "{x}"
            ]
        );
        // A value with spaces or shell syntax stays one argument.
        let t = CommandTemplate::parse("echo {nodes}").unwrap();
        assert_eq!(
            t.render(&[("nodes", "a b;rm".into())]).unwrap(),
            ["echo", "a b;rm"]
        );
        assert!(t.uses("nodes") && !t.uses("n"));
    }

    #[test]
    fn bad_templates_say_what_is_wrong() {
        for (text, says) in [
            ("prog {q}", "unknown placeholder {q}"),
            ("prog {n", "unbalanced brace"),
            ("prog n}", "unbalanced brace"),
            ("prog {{n}", "unbalanced brace"),
            ("prog {n}{n", "unbalanced brace"),
            ("prog 'open", "quote"),
            ("", "empty"),
        ] {
            let err = CommandTemplate::parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }

    #[test]
    fn failures_timeouts_and_missing_fields_are_one_line_errors() {
        let sh = |script: &str| vec!["sh".to_string(), "-c".into(), script.into()];
        let err = launch(
            &sh("echo first >&2; echo 'the last line' >&2; exit 3"),
            Duration::from_secs(10),
        )
        .unwrap_err();
        assert!(
            err.contains("exit status: 3") && err.contains("the last line"),
            "{err}"
        );
        let start = Instant::now();
        // The child's own child must die too, or the pipe would stay open.
        let err = launch(&sh("sleep 30 & sleep 30"), Duration::from_millis(300)).unwrap_err();
        assert!(err.contains("timed out after 0.300 s"), "{err}");
        assert!(start.elapsed() < Duration::from_secs(5));
        let err = launch(&["/no/such/program".to_string()], Duration::from_secs(1)).unwrap_err();
        assert!(err.contains("cannot start"), "{err}");
        let out = launch(
            &sh("echo '{\"run\": {\"t\": 0.5}}'"),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(TimeSource::Json("run.t".into()).read(&out).unwrap(), 0.5);
        let err = TimeSource::Json("run.x".into()).read(&out).unwrap_err();
        assert!(err.contains("run.x"), "{err}");
        let err = TimeSource::regex("T=(\\S+)")
            .unwrap()
            .read(&out)
            .unwrap_err();
        assert!(err.contains("no match"), "{err}");
        assert!(
            TimeSource::regex("T=\\S+")
                .unwrap_err()
                .contains("capture group")
        );
        assert!(TimeSource::Wall.read(&out).unwrap() > 0.0);
    }

    #[test]
    fn command_specs_validate_each_field() {
        let mut spec = CommandSpec::new("prog {n}", "2*n^3");
        assert!(spec.validate().is_ok());
        spec.work = "2*x".into();
        assert!(spec.validate().unwrap_err().starts_with("work:"));
        spec.work = "n".into();
        spec.timeout_s = 0.0;
        assert!(spec.validate().unwrap_err().contains("timeout_s"));
        spec.timeout_s = 1.0;
        spec.time_regex = Some("(".into());
        assert!(spec.validate().unwrap_err().contains("does not compile"));
    }
}
