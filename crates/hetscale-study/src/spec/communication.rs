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

/// What a declaration's errors advise writing instead.
fn advice() -> String {
    format!(
        "write steps COUNT*PATTERN(BYTES) joined by ;, BYTES those of one message, e.g. 100*neighbours(8*n); allreduce(8) (patterns: {})",
        pattern_names()
    )
}

/// The patterns' names, `neighbours, alltoall, ...`.
fn pattern_names() -> String {
    Pattern::ALL
        .iter()
        .map(|p| p.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Communication {
    /// Parses `text`; the error is one line: `text` quoted, what is wrong in it and at which
    /// character, and what to write instead.
    pub fn parse(text: &str) -> Result<Self, String> {
        let fail = |why: String| format!("\"{text}\": {why}: {}", advice());
        let mut steps = Vec::new();
        let mut start = 0;
        for part in text.split(';') {
            let offset = start + (part.len() - part.trim_start().len());
            start += part.len() + 1;
            let step = part.trim();
            if !step.is_empty() {
                steps.push(parse_step(step, text[..offset].chars().count()).map_err(fail)?);
            }
        }
        if steps.is_empty() {
            return Err(fail("declares no step".into()));
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

/// `COUNT*PATTERN(BYTES)` or `PATTERN(BYTES)`, `offset` characters into the declaration:
/// the error says what is wrong and at which character of the declaration.
fn parse_step(text: &str, offset: usize) -> Result<DeclaredStep, String> {
    let character = |at: usize| offset + text[..at].chars().count() + 1;
    let (pattern, at) = Pattern::ALL
        .iter()
        .filter_map(|&p| find_call(text, p.name()).map(|at| (p, at)))
        .min_by_key(|&(_, at)| at)
        .ok_or_else(|| match called_name(text) {
            Some((name, at)) => format!("\"{name}\" at character {} is no pattern", character(at)),
            None => format!(
                "step \"{text}\" at character {} names no pattern",
                character(0)
            ),
        })?;
    let open = at + pattern.name().len();
    let close = matching_close(text, open)
        .ok_or_else(|| format!("\"(\" at character {} is never closed", character(open)))?;
    let rest = text[close + 1..].trim_start();
    if !rest.is_empty() {
        let rest_at = text.len() - rest.len();
        return Err(format!(
            "\"{rest}\" at character {} follows the bytes of {}(...) with no ; between the steps",
            character(rest_at),
            pattern.name()
        ));
    }
    let count = text[..at].trim();
    let count = match count.strip_suffix('*') {
        Some(count) => count.trim(),
        None if count.is_empty() => "1",
        None => {
            return Err(format!(
                "\"{count}\" at character {} comes before {} with no * between them",
                character(0),
                pattern.name()
            ));
        }
    };
    let count = Formula::parse_problem(count)
        .map_err(|p| format!("the count of {}: {}", pattern.name(), p.describe(offset)))?;
    let bytes = Formula::parse_problem(&text[open + 1..close]).map_err(|p| {
        format!(
            "the bytes of {}: {}",
            pattern.name(),
            p.describe(character(open + 1) - 1)
        )
    })?;
    Ok(DeclaredStep {
        count,
        pattern,
        bytes,
    })
}

/// The first name in `text` called as a function, `name(`, and where it starts.
fn called_name(text: &str) -> Option<(&str, usize)> {
    let open = text.find('(')?;
    let start = text[..open]
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    (start < open).then(|| (&text[start..open], start))
}

/// The `)` that closes the `(` at byte `open` of `text`.
fn matching_close(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => return Some(open + i),
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
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
            ("100*halo(8*n)", "is no pattern"),
            ("100*8*n", "names no pattern"),
            ("100*neighbours(8*n", "close"),
            ("100*neighbours(8*n) 3", "no ; between"),
            ("100 neighbours(8*n)", "with no *"),
            ("100*neighbours(8*q)", "only n"),
            ("q*neighbours(8)", "count"),
        ] {
            let err = Communication::parse(bad).unwrap_err();
            assert!(err.contains(says) && !err.contains('\n'), "{bad}: {err}");
        }
        for (bad, says) in [
            (
                "neighbours(8*n) allreduce(8)",
                "\"allreduce(8)\" at character 17 follows the bytes of neighbours(...) with no ; between the steps",
            ),
            (
                "100*neighbors(8*n)",
                "\"neighbors\" at character 5 is no pattern",
            ),
            (
                "allreduce(8); 2*neighbours(8*m)",
                "the bytes of neighbours: \"m\" at character 30",
            ),
            (
                "allreduce(8); q*gather(8)",
                "the count of gather: \"q\" at character 15",
            ),
            ("broadcast((8*n)", "\"(\" at character 10 is never closed"),
        ] {
            let err = Communication::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
            assert!(
                err.starts_with(&format!("\"{bad}\": "))
                    && err.contains("e.g. 100*neighbours(8*n); allreduce(8)")
                    && !err.contains("wlog"),
                "{bad}: {err}"
            );
        }
        let negative = Communication::parse("neighbours(n - 10)").unwrap();
        let err = negative.steps(4.0, 2.0).unwrap_err();
        assert!(err.contains("-6") && err.contains("bytes"), "{err}");
    }
}
