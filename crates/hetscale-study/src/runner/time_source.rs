//! Where a run's time comes from ([`TimeSource`]): the wall clock hetscale measured, a regular
//! expression's group in the program's standard output, or a JSON field of it; read from the
//! end of the output a launch kept ([`super::external::CommandOutput`]).

use regex::Regex;

use super::external::{CommandOutput, quoted, reason_line};

/// Where a run's time comes from.
#[derive(Debug, Clone)]
pub enum TimeSource {
    /// The wall-clock time hetscale measured from spawn to exit.
    Wall,
    /// The first capture group of the last match of a regular expression in standard output
    /// (in one line, if more than [`super::external::KEPT_BYTES`] follow it), in seconds.
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
