//! A program's declared communication, as a `[command]` table's `communication` (or
//! `hetscale predict --communication`) gives it: steps separated by `;`, each
//! `COUNT*PATTERN(BYTES)`, where COUNT (optional, 1 if left out) and BYTES (per message) are
//! [formulas](super::formula) in `n` and `p`, and PATTERN one of
//! [`hetscale_kernels::declared::Pattern`]'s names. The probed machine charges it
//! ([`hetscale_kernels::declared::communication_s`]): so a program hetscale did not write gets
//! the same network model as the kernels it did.
//!
//! ```
//! use hetscale_study::spec::communication::Communication;
//!
//! // A 1-D Jacobi: 100 halo exchanges of one row of n doubles, then a reduction of 8 bytes.
//! let declared = Communication::parse("100*neighbours(8*n); allreduce(8)")?;
//! let steps = declared.steps(1024.0, 4.0)?;
//! assert_eq!((steps[0].count, steps[0].bytes), (100.0, 8192.0));
//! assert!(Communication::parse("100*halo(8*n)").is_err());
//! # Ok::<(), String>(())
//! ```

use super::formula::Formula;
use hetscale_kernels::declared::{Pattern, Step};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One declared step: how many times, what pattern, how many bytes a message.
#[derive(Debug, Clone, PartialEq)]
struct DeclaredStep {
    count: Formula,
    pattern: Pattern,
    bytes: Formula,
}

/// A parsed declaration; it serialises as the text it was parsed from.
#[derive(Debug, Clone, PartialEq)]
pub struct Communication {
    text: String,
    steps: Vec<DeclaredStep>,
}

impl Communication {
    /// Parses `text`; the error says what is wrong in one line.
    pub fn parse(text: &str) -> Result<Self, String> {
        let steps = text
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(parse_step)
            .collect::<Result<Vec<_>, _>>()?;
        if steps.is_empty() {
            return Err(format!(
                "communication \"{text}\" declares no step: write e.g. 100*neighbours(8*n)"
            ));
        }
        Ok(Self {
            text: text.to_string(),
            steps,
        })
    }

    /// The text it was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Its steps at size `n` on `p` nodes: counts and bytes evaluated, each finite and not
    /// negative, else a one-line error naming the step.
    pub fn steps(&self, n: f64, p: f64) -> Result<Vec<Step>, String> {
        self.steps
            .iter()
            .map(|step| {
                let value = |what: &str, formula: &Formula| {
                    let v = formula.eval(n, p)?;
                    if v.is_finite() && v >= 0.0 {
                        Ok(v)
                    } else {
                        Err(format!(
                            "communication: the {what} of {} \"{}\" is {v} at n = {n}, p = {p}: it must be finite and not negative",
                            step.pattern.name(),
                            formula.text()
                        ))
                    }
                };
                Ok(Step {
                    count: value("count", &step.count)?,
                    pattern: step.pattern,
                    bytes: value("bytes", &step.bytes)?,
                })
            })
            .collect()
    }
}

/// `COUNT*PATTERN(BYTES)` or `PATTERN(BYTES)`.
fn parse_step(text: &str) -> Result<DeclaredStep, String> {
    let names = || {
        Pattern::ALL
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (pattern, at) = Pattern::ALL
        .iter()
        .filter_map(|&p| find_call(text, p.name()).map(|at| (p, at)))
        .min_by_key(|&(_, at)| at)
        .ok_or_else(|| {
            format!(
                "communication step \"{text}\" names no pattern: write COUNT*PATTERN(BYTES), e.g. 100*neighbours(8*n), with a pattern of {}",
                names()
            )
        })?;
    let open = at + pattern.name().len();
    let close = text.rfind(')').filter(|&c| c > open).ok_or_else(|| {
        format!("communication step \"{text}\" does not close its bytes with \")\"")
    })?;
    if !text[close + 1..].trim().is_empty() {
        return Err(format!(
            "communication step \"{text}\" goes on after the pattern's bytes: write COUNT*PATTERN(BYTES), and separate steps with ;"
        ));
    }
    let count = text[..at].trim();
    let count = match count.strip_suffix('*') {
        Some(count) => count.trim(),
        None if count.is_empty() => "1",
        None => {
            return Err(format!(
                "communication step \"{text}\": write the count before the pattern with *, e.g. 100*{}(...)",
                pattern.name()
            ));
        }
    };
    let count = Formula::parse(count).map_err(|e| format!("communication count: {e}"))?;
    let bytes =
        Formula::parse(&text[open + 1..close]).map_err(|e| format!("communication bytes: {e}"))?;
    Ok(DeclaredStep {
        count,
        pattern,
        bytes,
    })
}

/// Where `name(` starts in `text` as a word of its own.
fn find_call(text: &str, name: &str) -> Option<usize> {
    let call = format!("{name}(");
    text.match_indices(&call).map(|(at, _)| at).find(|&at| {
        !text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

impl Serialize for Communication {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Communication {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_patterns_and_bytes_are_read_as_formulas() {
        let c = Communication::parse(" 2*n * alltoall(8*n^2/p^2) ; gather(8*(n/p)^2); ").unwrap();
        let steps = c.steps(64.0, 4.0).unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].pattern, Pattern::Alltoall);
        assert_eq!((steps[0].count, steps[0].bytes), (128.0, 2048.0));
        assert_eq!(steps[1].pattern, Pattern::Gather);
        assert_eq!((steps[1].count, steps[1].bytes), (1.0, 2048.0));
    }

    #[test]
    fn bad_declarations_are_one_line_errors_that_say_what_to_write() {
        for (bad, says) in [
            ("", "declares no step"),
            ("100*halo(8*n)", "names no pattern"),
            ("100*neighbours(8*n", "close"),
            ("100*neighbours(8*n) 3", "goes on after"),
            ("100 neighbours(8*n)", "with *"),
            ("100*neighbours(8*q)", "only n"),
            ("q*neighbours(8)", "count"),
        ] {
            let err = Communication::parse(bad).unwrap_err();
            assert!(err.contains(says) && !err.contains('\n'), "{bad}: {err}");
        }
        let negative = Communication::parse("neighbours(n - 10)").unwrap();
        let err = negative.steps(4.0, 2.0).unwrap_err();
        assert!(err.contains("-6") && err.contains("bytes"), "{err}");
    }
}
