//! Checked CSV rows: the reader every CSV hetscale takes shares (the runs `hetscale calibrate
//! --runs` reads, [`crate::calibrate::runs`], and the papers' published values, in
//! `hetscale-papers`).
//!
//! Columns are taken by header name in any order, extra columns ignored, `#` comment lines
//! skipped and whitespace trimmed. Every error is one line naming the file, the line and the
//! field, and what to write instead.

use std::collections::HashSet;

use csv::StringRecord;
use hetscale_out::echoed;
use serde::de::DeserializeOwned;

use crate::error::{Result, StudyError};

/// A kind of CSV: its columns and what one of its rows holds.
pub struct Layout {
    /// The columns the header must name.
    pub columns: &'static [&'static str],
    /// What one row holds, e.g. `run`.
    pub row: &'static str,
    /// What to write, for a file with no rows.
    pub example: &'static str,
}

/// The rows of `text` whose header names every one of `columns`, each with where it is.
pub fn read_records<R: DeserializeOwned>(
    text: &str,
    source_name: &str,
    layout: &Layout,
) -> Result<Vec<(Row, R)>> {
    // A spreadsheet's UTF-8 byte order mark would otherwise be part of the first column's name.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let file = Row {
        source_name: source_name.to_owned(),
        line: None,
        record: StringRecord::new(),
    };
    let mut lines = LineCounter::new(text);
    let headers = reader
        .headers()
        .map_err(|e| file.malformed(&e, &mut lines))?
        .clone();
    if headers.iter().all(str::is_empty) {
        return Err(file.error(
            None,
            format!(
                "the file is empty; write the header {} and one {} per line",
                layout.columns.join(","),
                layout.row
            ),
        ));
    }
    let header = Row {
        line: headers.position().map(|p| lines.line_of(p)),
        ..file.clone()
    };
    header.check_header(&headers, layout.columns)?;
    let mut records = Vec::new();
    for result in reader.records() {
        let record = result.map_err(|e| file.malformed(&e, &mut lines))?;
        let row = Row {
            line: record.position().map(|p| lines.line_of(p)),
            record: record.clone(),
            ..file.clone()
        };
        let fields = record
            .deserialize(Some(&headers))
            .map_err(|e| row.error(None, format!("cannot read the row ({e})")))?;
        records.push((row, fields));
    }
    if records.is_empty() {
        return Err(file.error(
            None,
            format!("no rows after the header; {}", layout.example),
        ));
    }
    Ok(records)
}

/// Line numbers of the records a csv reader returns, in order.
///
/// The csv crate's own line count leaves out blank and comment lines, and its byte position
/// is where it started reading, before the blank and comment lines it skipped: so skip them
/// here and count the newlines before the record's first byte, from the previous record on
/// (positions only grow, so a long file is counted once).
struct LineCounter<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            bytes: text.as_bytes(),
            at: 0,
            line: 1,
        }
    }

    fn line_of(&mut self, position: &csv::Position) -> usize {
        let bytes = self.bytes;
        let mut start =
            usize::try_from(position.byte()).map_or(bytes.len(), |b| b.min(bytes.len()));
        loop {
            while start < bytes.len() && matches!(bytes[start], b'\r' | b'\n') {
                start += 1;
            }
            let starts_line = start == 0 || bytes[start - 1] == b'\n';
            if start < bytes.len() && bytes[start] == b'#' && starts_line {
                start = bytes[start..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |end| start + end);
            } else {
                break;
            }
        }
        let from = self.at.min(start);
        self.line += bytes[from..start].iter().filter(|&&b| b == b'\n').count();
        self.at = start;
        self.line
    }
}

/// Whether the record the csv reader started at byte `start` (before the blank and comment
/// lines it skips) opens a quoted field that no quote closes: the reader then takes the rest
/// of the file as that field, and the row comes out short of fields. A quote opens a field
/// only at its start, and `""` inside one is a quote.
fn quote_left_open(bytes: &[u8], start: usize) -> bool {
    let mut at = start.min(bytes.len());
    // Past the blank and comment lines before the record.
    while let Some(&first) = bytes.get(at) {
        if !matches!(first, b'\r' | b'\n' | b'#') {
            break;
        }
        at = bytes[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |end| at + end + 1);
    }
    let (mut quoted, mut field_start) = (false, true);
    while let Some(&byte) = bytes.get(at) {
        if quoted {
            if byte == b'"' {
                if bytes.get(at + 1) == Some(&b'"') {
                    at += 1;
                } else {
                    quoted = false;
                }
            }
        } else {
            match byte {
                b'"' if field_start => quoted = true,
                b'\n' => return false,
                _ => {}
            }
            field_start = byte == b',';
        }
        at += 1;
    }
    quoted
}

/// Where a value comes from: the file and, for a row or the header, its line.
#[derive(Clone)]
pub struct Row {
    source_name: String,
    line: Option<usize>,
    /// A row's fields as read (trimmed), every column's: what makes it a copy of another.
    record: StringRecord,
}

/// `records` without the rows that repeat an earlier row field for field (extra columns
/// included), and how many did: a file concatenated with itself, say. Two repetitions of a
/// run differ in some field (their times, or a `repetition` column), so they both stay.
pub fn without_copies<R>(records: Vec<(Row, R)>) -> (Vec<(Row, R)>, usize) {
    let copy: Vec<bool> = {
        let mut seen: HashSet<Vec<&str>> = HashSet::with_capacity(records.len());
        records
            .iter()
            .map(|(row, _)| !seen.insert(row.record.iter().collect()))
            .collect()
    };
    let copies = copy.iter().filter(|&&c| c).count();
    let kept = records
        .into_iter()
        .zip(copy)
        .filter_map(|(record, copy)| (!copy).then_some(record))
        .collect();
    (kept, copies)
}

impl Row {
    /// An error at this row, in `field` when given; `message` says what to write.
    pub fn error(&self, field: Option<&str>, message: String) -> StudyError {
        StudyError::Csv {
            source_name: self.source_name.clone(),
            line: self.line,
            field: field.map(str::to_owned),
            // A quoted CSV field may span lines; the error quoting it stays on one.
            message: message.replace('\r', "\\r").replace('\n', "\\n"),
        }
    }

    /// The csv crate's own complaint (ragged row, bad UTF-8), at its line.
    fn malformed(&self, error: &csv::Error, lines: &mut LineCounter) -> StudyError {
        let bytes = lines.bytes;
        let mut at = |pos: Option<&csv::Position>| Row {
            line: pos.map(|p| lines.line_of(p)),
            ..self.clone()
        };
        match error.kind() {
            csv::ErrorKind::UnequalLengths {
                pos,
                expected_len,
                len,
            } => {
                let start = pos.as_ref().map_or(0, |p| p.byte());
                let open = quote_left_open(bytes, usize::try_from(start).unwrap_or(0));
                let row = at(pos.as_ref());
                if open {
                    return row.error(
                        None,
                        "a quote opens a field that no quote closes, so the rest of the file \
                         reads as that field; close the quote (\"server:1,sunfire:1\") or remove it"
                            .into(),
                    );
                }
                let fields = if *len == 1 { "field" } else { "fields" };
                row.error(
                    None,
                    format!(
                        "{len} {fields} where the header has {expected_len}; quote a field that holds commas, e.g. \"server:1,sunfire:1\""
                    ),
                )
            }
            csv::ErrorKind::Utf8 { pos, .. } => {
                at(pos.as_ref()).error(None, "not UTF-8 text; save it as UTF-8 CSV".into())
            }
            _ => self.error(None, format!("cannot read it as CSV ({error})")),
        }
    }

    fn check_header(&self, headers: &StringRecord, columns: &[&str]) -> Result<()> {
        if let Some(twice) = columns
            .iter()
            .find(|&&c| headers.iter().filter(|&h| h == c).count() > 1)
        {
            return Err(self.error(
                None,
                format!("the header names column {twice} twice; keep one"),
            ));
        }
        let missing: Vec<&str> = columns
            .iter()
            .copied()
            .filter(|&c| !headers.iter().any(|h| h == c))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(self.error(
            None,
            format!(
                "the header lacks column(s) {}; it must name {} (in any order)",
                missing.join(", "),
                columns.join(", ")
            ),
        ))
    }

    /// `text` when not empty and free of control characters; `what` says what to give.
    pub fn text(&self, field: &str, text: String, what: &str) -> Result<String> {
        if text.is_empty() {
            return Err(self.error(Some(field), format!("empty; give {what}")));
        }
        // Labels and names are printed: no terminal escapes.
        if let Some(problem) = hetscale_machine::platform::control_character_problem(&text) {
            return Err(self.error(Some(field), problem));
        }
        Ok(text)
    }

    /// A finite number greater than zero.
    pub fn positive(&self, field: &str, text: &str, give: &str) -> Result<f64> {
        let fail = |what: String| Err(self.error(Some(field), format!("{what}; {give}")));
        if text.is_empty() {
            return fail("empty".into());
        }
        let shown = echoed(text);
        match text.parse::<f64>() {
            Err(_) => fail(format!("\"{shown}\" is not a number")),
            Ok(x) if !x.is_finite() => fail(format!("{shown} is not a finite number")),
            Ok(x) if x <= 0.0 => fail(format!("{shown} is not positive")),
            Ok(x) => Ok(x),
        }
    }

    /// A problem size from 1 to [`hetscale_kernels::MAX_N`].
    pub fn size(&self, field: &str, text: &str) -> Result<u64> {
        let max = hetscale_kernels::MAX_N;
        let digits_only = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        let negative = text
            .strip_prefix('-')
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
        let shown = echoed(text);
        let message = match text.parse::<u64>() {
            Ok(0) => "0 is no problem size; give a whole number from 1, e.g. 310".to_owned(),
            Ok(n) if n <= max => return Ok(n),
            // Above MAX_N, or all digits but beyond u64: a size the models cannot represent.
            Ok(_) => {
                format!("{shown} is above the largest problem size, {max} (2^53); give a smaller n")
            }
            Err(_) if digits_only => {
                format!("{shown} is above the largest problem size, {max} (2^53); give a smaller n")
            }
            Err(_) if text.is_empty() => "empty; give a problem size from 1, e.g. 310".to_owned(),
            Err(_) if negative => {
                format!("{shown} is negative; a problem size is at least 1, e.g. 310")
            }
            Err(_) => {
                format!("\"{shown}\" is not a whole number; give a problem size from 1, e.g. 310")
            }
        };
        Err(self.error(Some(field), message))
    }
}
