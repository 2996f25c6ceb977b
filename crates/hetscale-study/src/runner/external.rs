//! Launching any program as a run: a command template with placeholders, substituted without
//! a shell, spawned in its own process group with a timeout (the whole group is ended when it
//! expires, or when a signal asks hetscale to stop), the end of its output kept and
//! its time read from the wall clock, a regular expression or a JSON field.
//!
//! ```
//! use std::time::Duration;
//! use hetscale_study::runner::external::{CommandTemplate, launch};
//! use hetscale_study::runner::time_source::TimeSource;
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

use std::collections::VecDeque;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hetscale_model::scaling::Partition;
use nix::sys::signal::Signal;

use serde::{Deserialize, Serialize};
use wait_timeout::ChildExt;

use super::time_source::{CommandOutput, TimeSource, quoted, reason_line};

/// The placeholders a study's command template may use: the problem size, the node count, the
/// configuration's node set as written, a file listing its nodes (`name slots=k`) and its
/// nodes' names in Slurm's comma syntax (`a,b,c`, for `srun --nodelist`).
pub const PLACEHOLDERS: [&str; 5] = ["n", "p", "nodes", "hostfile", "nodelist"];

/// How long the output readers may take to see end-of-file after the process group is gone;
/// what arrived by then is kept even if a daemon the program left holds the pipes open.
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

/// How much of the end of each output stream [`launch`] keeps: a program may print without
/// bound (`yes`), and its time is at the end or in [`CommandOutput::time_line`].
pub const KEPT_BYTES: usize = 1 << 20;

/// Lines longer than this are kept in the tail but not searched for the time as they stream.
const LONGEST_TIME_LINE: usize = 64 << 10;

/// How often a wait looks whether a signal (see [`crate::runner::interrupt`]) asked hetscale to stop.
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

/// How long a process group asked to stop (SIGTERM) may take before it is killed (SIGKILL).
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Runs `argv` (program and arguments, no shell) in a new process group, keeping the end of
/// its output; after `timeout`, or when SIGINT, SIGTERM or SIGHUP asks hetscale to stop (see
/// [`crate::runner::interrupt`]), the whole group is ended and the launch fails. A non-zero exit is an
/// error quoting the end of the last line of standard error. Every error is one line.
///
/// On Linux the program also gets SIGTERM if hetscale dies, even by SIGKILL; what the program
/// started itself is then left to the program (`mpirun` ends its job on SIGTERM).
pub fn launch(argv: &[String], timeout: Duration) -> Result<CommandOutput, String> {
    launch_with(argv, &[], timeout, None)
}

/// As [`launch`], with `env` added to the program's environment.
pub fn launch_env(
    argv: &[String],
    env: &[(String, String)],
    timeout: Duration,
) -> Result<CommandOutput, String> {
    launch_with(argv, env, timeout, None)
}

/// As [`launch`], showing `time` each line of standard output as it arrives, so that the
/// time it reads is found however much the program prints after it.
pub fn launch_timed(
    argv: &[String],
    timeout: Duration,
    time: &TimeSource,
) -> Result<CommandOutput, String> {
    let watched = (!matches!(time, TimeSource::Wall)).then(|| time.clone());
    launch_with(argv, &[], timeout, watched)
}

fn launch_with(
    argv: &[String],
    env: &[(String, String)],
    timeout: Duration,
    time: Option<TimeSource>,
) -> Result<CommandOutput, String> {
    let (program, args) = argv
        .split_first()
        .ok_or("the command is empty: give a program and its arguments")?;
    let start = Instant::now();
    let mut child = spawn(program, args, env)?;
    let stdout = Capture::start(child.stdout.take(), time);
    let stderr = Capture::start(child.stderr.take(), None);
    let status = wait(&mut child, program, timeout)?;
    let wall_s = start.elapsed().as_secs_f64();
    // The program may have left children in its group holding the pipes open.
    signal_group(child.id(), Signal::SIGKILL);
    let grace_ends = Instant::now() + READER_GRACE;
    let (stdout, time_line) = stdout.finish(grace_ends);
    let (stderr, _) = stderr.finish(grace_ends);
    if !status.success() {
        return Err(format!(
            "\"{program}\" failed ({status}){}",
            reason_line(&stderr)
                .map(|l| format!(": {}", quoted(l)))
                .unwrap_or_default()
        ));
    }
    Ok(CommandOutput {
        status,
        stdout,
        stderr,
        time_line,
        wall_s,
    })
}

/// Starts `program` in a process group of its own, its output piped.
fn spawn(program: &str, args: &[String], env: &[(String, String)]) -> Result<Child, String> {
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    #[cfg(target_os = "linux")]
    end_with_parent(&mut command);
    command.spawn().map_err(|e| {
        format!("cannot start \"{program}\": {e}: check the path and that it is executable")
    })
}

/// Has the kernel send the program SIGTERM when hetscale dies, however it dies: a SIGKILLed
/// hetscale cannot end the group itself, and the program must not run on with no timeout.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn end_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = nix::unistd::getpid();
    // SAFETY: the hook runs in the forked child before exec, where only async-signal-safe
    // calls are allowed: it makes two system calls (prctl, getppid) and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM)?;
            // hetscale died before the request took effect: nobody would send the signal.
            if nix::unistd::getppid() != parent {
                return Err(nix::errno::Errno::ESRCH.into());
            }
            Ok(())
        });
    }
}

/// Waits for `child` to exit; ends its group and fails after `timeout` or when hetscale is
/// asked to stop.
fn wait(child: &mut Child, program: &str, timeout: Duration) -> Result<ExitStatus, String> {
    let deadline = Instant::now() + timeout;
    let why = loop {
        if let Some(signal) = crate::runner::interrupt::requested() {
            break format!(
                "interrupted by {}: \"{program}\" and its process group were ended",
                crate::runner::interrupt::name(signal)
            );
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match child.wait_timeout(left.min(INTERRUPT_POLL)) {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if left > INTERRUPT_POLL => {}
            Ok(None) => {
                break format!(
                    "\"{program}\" timed out after {:.3} s (killed): raise timeout_s or lower n_max",
                    timeout.as_secs_f64()
                );
            }
            Err(e) => break format!("waiting for \"{program}\" failed: {e}"),
        }
    };
    stop_group(child);
    Err(why)
}

/// Asks `child`'s process group to end (SIGTERM, so that e.g. `mpirun` can end its job on
/// other nodes), kills what is left after a grace period, and reaps the child.
fn stop_group(child: &mut Child) {
    signal_group(child.id(), Signal::SIGTERM);
    let ended = matches!(child.wait_timeout(STOP_GRACE), Ok(Some(_)));
    signal_group(child.id(), Signal::SIGKILL);
    if !ended {
        let _ = child.wait();
    }
}

/// Sends `signal` to process group `pgid` (the launched program and everything it started
/// there); a group that is already gone is fine.
fn signal_group(pgid: u32, signal: Signal) {
    if let Ok(pgid) = i32::try_from(pgid) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal);
    }
}

/// One output stream, read on a thread of its own as it arrives.
struct Capture {
    kept: Arc<(Mutex<Kept>, Condvar)>,
}

/// What is kept of a stream: its last [`KEPT_BYTES`] and the last line the time source
/// found a time in.
#[derive(Default)]
struct Kept {
    tail: VecDeque<u8>,
    line: Vec<u8>,
    line_too_long: bool,
    time_line: Option<String>,
    ended: bool,
}

impl Capture {
    fn start(pipe: Option<impl Read + Send + 'static>, time: Option<TimeSource>) -> Self {
        let kept = Arc::new((Mutex::new(Kept::default()), Condvar::new()));
        let Some(mut pipe) = pipe else {
            kept.0.lock().unwrap_or_else(PoisonError::into_inner).ended = true;
            return Self { kept };
        };
        let shared = Arc::clone(&kept);
        std::thread::spawn(move || {
            let mut chunk = vec![0; 64 << 10];
            let (kept, ended) = &*shared;
            loop {
                let read = match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(read) => read,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
                kept.push(&chunk[..read], time.as_ref());
            }
            let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(time) = &time {
                // A last line with no newline.
                kept.end_line(time);
            }
            kept.ended = true;
            ended.notify_all();
        });
        Self { kept }
    }

    /// What arrived until the stream ended or, if something outside the program's group (a
    /// daemon it left) holds the pipe open, until `deadline`: the tail as text and the last
    /// line with a time.
    fn finish(self, deadline: Instant) -> (String, Option<String>) {
        let (kept, ended) = &*self.kept;
        let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
        while !kept.ended {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            kept = ended
                .wait_timeout(kept, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let tail = kept.tail.make_contiguous();
        let text = String::from_utf8_lossy(tail).into_owned();
        (text, kept.time_line.clone())
    }
}

impl Kept {
    fn push(&mut self, bytes: &[u8], time: Option<&TimeSource>) {
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(KEPT_BYTES);
        self.tail.drain(..excess);
        let Some(time) = time else {
            return;
        };
        for piece in bytes.split_inclusive(|&b| b == b'\n') {
            let (text, complete) = match piece.strip_suffix(b"\n") {
                Some(text) => (text, true),
                None => (piece, false),
            };
            if self.line.len() + text.len() > LONGEST_TIME_LINE {
                self.line_too_long = true;
            } else if !self.line_too_long {
                self.line.extend_from_slice(text);
            }
            if complete {
                self.end_line(time);
            }
        }
    }

    fn end_line(&mut self, time: &TimeSource) {
        let line = String::from_utf8_lossy(&self.line);
        if !self.line_too_long && time.finds_time_in(&line) {
            self.time_line = Some(line.into_owned());
        }
        self.line.clear();
        self.line_too_long = false;
    }
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
    /// The program's communication as declared steps, e.g. `100*neighbours(8*n)`
    /// ([`crate::spec::communication`]): charged on the machine and added to `overhead`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub communication: Option<String>,
    /// How the program splits its work among the nodes, `"speed"` or `"equal"`
    /// ([`Partition`]): an equal split's compute is `W/(p C_min)`, not `W/C`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// The program's name in the platform's machine model: its compute rate and start-up are
    /// the `[[machine.compute]]` entry of this `kernel` name, as `hetscale calibrate --runs`
    /// writes it for runs of that name (without it, the marked speed and no start-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
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
            hetscale_model::numbers::echoed(seconds)
        ))
    }
}

/// A validated [`CommandSpec`], ready to run.
#[derive(Debug, Clone)]
pub struct ExternalCommand {
    /// The template.
    pub template: CommandTemplate,
    /// `W(n, p)`.
    pub work: crate::spec::formula::Formula,
    /// `T_o(n, p)`, s, if given.
    pub overhead: Option<crate::spec::formula::Formula>,
    /// The declared communication, if given.
    pub communication: Option<crate::spec::communication::Communication>,
    /// How it splits its work ([`Partition::Speed`] when not declared).
    pub partition: Partition,
    /// Its name in the platform's machine model, if its compute rate is calibrated there.
    pub program: Option<String>,
    /// Where the time comes from.
    pub time: TimeSource,
    /// Per-run timeout.
    pub timeout: Duration,
}

impl ExternalCommand {
    /// Whether approach 3 can model it: it gives an overhead formula, a declared
    /// communication, or both (their sum is `T_o`).
    pub fn has_overhead_model(&self) -> bool {
        self.overhead.is_some() || self.communication.is_some()
    }

    /// Its declared model in one line, spaces dropped and a zero overhead left out (`work =
    /// 2*n^3; communication = 100*neighbours(8*n); partition = speed`): what a calibration of
    /// its compute rate records, and what a prediction naming that calibration must declare.
    pub fn declared_model(&self) -> String {
        let compact = |text: &str| text.split_whitespace().collect::<String>();
        let mut parts = vec![format!("work = {}", compact(self.work.text()))];
        let overhead = self.overhead.as_ref().map(|o| compact(o.text()));
        if let Some(overhead) = overhead.filter(|o| o != "0") {
            parts.push(format!("overhead = {overhead}"));
        }
        if let Some(communication) = &self.communication {
            parts.push(format!("communication = {}", compact(communication.text())));
        }
        parts.push(format!("partition = {}", self.partition));
        parts.join("; ")
    }
}

impl CommandSpec {
    /// A spec with the default timeout and wall-clock time.
    pub fn new(template: &str, work: &str) -> Self {
        Self {
            template: template.into(),
            work: work.into(),
            overhead: None,
            communication: None,
            partition: None,
            program: None,
            time_regex: None,
            time_json: None,
            timeout_s: default_timeout_s(),
        }
    }

    /// Parses and checks every part; the error is one line naming the field.
    pub fn validate(&self) -> Result<ExternalCommand, String> {
        use crate::spec::formula::{Formula, Quantity};
        let template = CommandTemplate::parse(&self.template)?;
        let work =
            Formula::parse_as(&self.work, Quantity::Work).map_err(|e| format!("work = {e}"))?;
        let overhead = self
            .overhead
            .as_deref()
            .map(|text| Formula::parse_as(text, Quantity::Overhead))
            .transpose()
            .map_err(|e| format!("overhead = {e}"))?;
        let communication = self
            .communication
            .as_deref()
            .map(crate::spec::communication::Communication::parse)
            .transpose()
            .map_err(|e| format!("communication = {e}"))?;
        let partition = self
            .partition
            .as_deref()
            .map(str::parse)
            .transpose()?
            .unwrap_or_default();
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
            communication,
            partition,
            program: self.program.clone(),
            time,
            timeout: timeout_of_s(self.timeout_s)?,
        })
    }
}

/// The values of [`PLACEHOLDERS`] for one run (`{nodelist}` is added by the caller, who
/// knows the machine: [`nodelist`]).
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

/// The node names of a machine in Slurm's comma syntax, in the machine's order (each node
/// once): `srun --nodelist`.
pub fn nodelist(machine: &hbsp::Machine) -> String {
    machine
        .nodes()
        .iter()
        .map(|node| node.name.as_str())
        .collect::<Vec<_>>()
        .join(",")
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
    fn slurms_reason_is_the_failure_of_a_run_it_ended() {
        let cancelled = "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n\
            slurmstepd: error: *** STEP 7.0 ON h1 CANCELLED AT 2026-11-27T11:00:00 ***\n\
            srun: error: h1: task 0: Terminated\nsrun: Force Terminated StepId=7.0\n";
        assert_eq!(
            reason_line(cancelled),
            Some("slurmstepd: error: *** STEP 7.0 ON h1 CANCELLED AT 2026-11-27T11:00:00 ***")
        );
        let refused = "srun: error: Unable to allocate resources: Invalid node name specified\n";
        assert_eq!(
            reason_line(refused),
            Some("srun: error: Unable to allocate resources: Invalid node name specified")
        );
        assert_eq!(reason_line("a\nthe end\n\n"), Some("the end"));
        assert_eq!(
            reason_line("----\nmpirun was unable to launch\n----\n"),
            Some("mpirun was unable to launch")
        );
        let err = launch(
            &sh(&format!(
                "printf '{}' >&2; exit 1",
                cancelled.replace('\n', "\\n")
            )),
            Duration::from_secs(10),
        )
        .unwrap_err();
        assert!(err.contains("CANCELLED AT"), "{err}");
        let out = launch_env(
            &sh("echo $HETSCALE_T"),
            &[("HETSCALE_T".into(), "given".into())],
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(out.stdout, "given\n");
    }

    #[test]
    fn a_run_that_exits_0_without_its_time_quotes_its_standard_error() {
        let regex = TimeSource::regex(r"elapsed: (\S+) s").unwrap();
        let out = launch(
            &sh("echo 'srun: error: h2: task 0: Terminated' >&2; exit 0"),
            Duration::from_secs(10),
        )
        .unwrap();
        let err = regex.read(&out).unwrap_err();
        assert!(
            err.contains("no match of time_regex") && err.ends_with("task 0: Terminated\""),
            "{err}"
        );
        let quiet = launch(&sh("echo nothing"), Duration::from_secs(10)).unwrap();
        assert!(!regex.read(&quiet).unwrap_err().contains("standard error"));
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

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".to_string(), "-c".into(), script.into()]
    }

    #[test]
    fn only_the_end_of_a_long_output_is_kept_and_errors_quote_a_few_hundred_bytes() {
        let out = launch(
            &sh("head -c 20000000 /dev/zero | tr '\\0' x; echo; echo end"),
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(out.stdout.len(), 1 << 20);
        assert!(out.stdout.ends_with("xxx\nend\n"));
        let err = launch(
            &sh("head -c 5000000 /dev/zero | tr '\\0' e >&2; exit 1"),
            Duration::from_secs(30),
        )
        .unwrap_err();
        assert!(
            err.len() < 400 && err.contains("exit status: 1") && err.ends_with("eee"),
            "{} bytes: {}...",
            err.len(),
            &err[..200.min(err.len())]
        );
        let out = launch(&sh("printf 'T=%05000dx' 0"), Duration::from_secs(10)).unwrap();
        let err = TimeSource::regex("T=(.*)").unwrap().read(&out).unwrap_err();
        assert!(err.len() < 400 && err.contains("not a number"), "{err}");
    }

    #[test]
    fn the_time_is_found_however_much_is_printed_after_it() {
        let after = "head -c 5000000 /dev/zero | tr '\\0' x";
        let regex = TimeSource::regex(r"time: (\S+)").unwrap();
        let out = launch_timed(
            &sh(&format!("echo time: 0.25; {after}")),
            Duration::from_secs(30),
            &regex,
        )
        .unwrap();
        assert_eq!(regex.read(&out).unwrap(), 0.25);
        let json = TimeSource::Json("run.t".into());
        let out = launch_timed(
            &sh(&format!("echo '{{\"run\": {{\"t\": 0.5}}}}'; {after}")),
            Duration::from_secs(30),
            &json,
        )
        .unwrap();
        assert_eq!(json.read(&out).unwrap(), 0.5);
    }

    #[test]
    fn output_printed_before_a_daemon_holds_the_pipes_is_read() {
        // setsid takes the sleeper out of the program's group, so it outlives the group and
        // keeps the pipes open past the readers' grace period.
        let out = launch(
            &sh("setsid sleep 3 & echo time: 0.5; printf 'no newline'"),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(out.stdout, "time: 0.5\nno newline");
        let regex = TimeSource::regex(r"time: (\S+)").unwrap();
        assert_eq!(regex.read(&out).unwrap(), 0.5);
    }

    #[test]
    fn command_specs_validate_each_field() {
        let mut spec = CommandSpec::new("prog {n}", "2*n^3");
        assert!(spec.validate().is_ok());
        spec.work = "2*x".into();
        assert!(spec.validate().unwrap_err().starts_with("work = "));
        spec.work = "n".into();
        spec.timeout_s = 0.0;
        assert!(spec.validate().unwrap_err().contains("timeout_s"));
        spec.timeout_s = 1.0;
        spec.time_regex = Some("(".into());
        assert!(spec.validate().unwrap_err().contains("does not compile"));
    }
}
