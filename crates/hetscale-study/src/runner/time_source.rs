//! Where a run's time comes from ([`TimeSource`]): the wall clock hetscale measured, a regular
//! expression's group in the program's standard output, or a JSON field of it; read from what
//! a launch kept of the run ([`CommandOutput`]), whose errors quote one line of its output
//! ([`reason_line`]).

use regex::Regex;
use std::process::ExitStatus;

/// Where a run's time comes from.
#[derive(Debug, Clone)]
pub enum TimeSource {
    /// The wall-clock time hetscale measured from spawn to exit.
    Wall,
    /// The first capture group of the last match of a regular expression in standard output
    /// (in one line, if more than the kept end of the output follows it), in seconds.
    Regex(Regex),
    /// A numeric field of the JSON standard output (the whole output, else its last line that
    /// parses, else the last line that has the field), as a dotted path such as
    /// `timing.total_s`, in seconds.
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

    /// Whether `line` of standard output holds a time this source reads.
    pub fn finds_time_in(&self, line: &str) -> bool {
        match self {
            Self::Wall => false,
            Self::Regex(regex) => last_capture(regex, line).is_some(),
            Self::Json(path) => json_number(line, path).is_some(),
        }
    }

    /// The run time of `output`, s: positive and finite, else a one-line error. It is read
    /// from the end of standard output, else from [`CommandOutput::time_line`]. The error
    /// quotes standard error's reason line, if any: a launcher such as `srun` may exit 0 on
    /// a run that never printed its time, and says why only there.
    pub fn read(&self, output: &CommandOutput) -> Result<f64, String> {
        self.read_stdout(output)
            .map_err(|error| match reason_line(&output.stderr) {
                Some(line) => format!("{error}; standard error ends \"{}\"", quoted(line)),
                None => error,
            })
    }

    fn read_stdout(&self, output: &CommandOutput) -> Result<f64, String> {
        let time = match self {
            Self::Wall => output.wall_s,
            Self::Regex(regex) => {
                let captured = last_capture(regex, &output.stdout)
                    .or_else(|| last_capture(regex, output.time_line.as_deref()?))
                    .ok_or_else(|| {
                        format!(
                            "the output has no match of time_regex \"{}\"",
                            regex.as_str()
                        )
                    })?;
                captured.trim().parse::<f64>().map_err(|_| {
                    format!(
                        "time_regex \"{}\" captured \"{}\", not a number",
                        regex.as_str(),
                        quoted(captured)
                    )
                })?
            }
            Self::Json(path) => json_time(&output.stdout, path).or_else(|error| {
                json_number(output.time_line.as_deref().unwrap_or_default(), path).ok_or(error)
            })?,
        };
        if time.is_finite() && time > 0.0 {
            Ok(time)
        } else {
            Err(format!("the time read is {time} s: it must be positive"))
        }
    }
}

/// The first group of `regex`'s last match in `text`.
fn last_capture<'t>(regex: &Regex, text: &'t str) -> Option<&'t str> {
    regex
        .captures_iter(text)
        .last()
        .and_then(|c| c.get(1))
        .map(|m| m.as_str())
}

/// The number at `path` in `text`, if it is a JSON document that has one.
fn json_number(text: &str, path: &str) -> Option<f64> {
    number_at(&serde_json::from_str(text.trim()).ok()?, path)
}

fn number_at(document: &serde_json::Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(document, |value, key| value.get(key))
        .and_then(serde_json::Value::as_f64)
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
    number_at(&document, path)
        .ok_or_else(|| format!("the output's JSON has no number at \"{path}\""))
}

/// What a launched program did.
#[derive(Debug, Clone)]
pub struct CommandOutput {
    /// How it exited.
    pub status: ExitStatus,
    /// The end of its standard output (lossy UTF-8): the last `external::KEPT_BYTES`.
    pub stdout: String,
    /// The end of its standard error (lossy UTF-8): the last `external::KEPT_BYTES`.
    pub stderr: String,
    /// The last line of standard output in which `external::launch_timed`'s time source found
    /// a time, however much was printed after it.
    pub time_line: Option<String>,
    /// Wall-clock time from spawn to exit, s.
    pub wall_s: f64,
}

/// The most of a program's output an error message quotes.
const QUOTED_BYTES: usize = 300;

fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

/// The line of a failed run's standard error that says why: Slurm's own reason when the run
/// went through `srun` (`*** STEP 12.0 ON h1 CANCELLED AT ... ***`, `... DUE TO TIME LIMIT
/// ***`, then the last `srun: error: ...`), else the last line that is not a rule of dashes
/// (mpirun frames its messages in them), else the last line.
pub fn reason_line(stderr: &str) -> Option<&str> {
    let lines = || stderr.lines().map(str::trim);
    lines()
        .rfind(|l| l.contains("***") && (l.contains(" CANCELLED") || l.contains(" DUE TO ")))
        .or_else(|| lines().rfind(|l| l.starts_with("srun: error:")))
        .or_else(|| lines().rfind(|l| l.chars().any(|c| c.is_alphanumeric())))
        .or_else(|| last_line(stderr))
}

/// `text`, or its last [`QUOTED_BYTES`] after an ellipsis: an error is one short line.
pub(super) fn quoted(text: &str) -> String {
    if text.len() <= QUOTED_BYTES {
        return text.to_string();
    }
    let mut start = text.len() - QUOTED_BYTES;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &text[start..])
}
