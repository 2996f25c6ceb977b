//! The runs `hetscale calibrate --runs FILE.csv` reads (`configuration,nodes,kernel,n,time_s`),
//! parsed and checked by [`crate::csv_rows`]: one-line errors naming file, line and field.

use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::csv_rows::{Layout, Row, read_records, without_copies};
use crate::error::{Result, StudyError};

/// The columns of a runs CSV, as [`read_runs`] takes them.
pub const RUN_COLUMNS: [&str; 5] = ["configuration", "nodes", "kernel", "n", "time_s"];

/// One measured run: what `hetscale calibrate --runs FILE.csv` reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredRun {
    /// The configuration's label.
    pub configuration: String,
    /// Its node-set.
    pub nodes: String,
    /// The kernel run.
    pub kernel: String,
    /// The problem size.
    pub n: u64,
    /// The execution time, seconds.
    pub time_s: f64,
}

/// The runs a CSV file holds, each counted once.
#[derive(Debug, Clone, PartialEq)]
pub struct RunsFile {
    /// The runs, in the file's order, without the copies.
    pub runs: Vec<MeasuredRun>,
    /// How many rows repeated an earlier row field for field and were left out.
    pub copies: usize,
    /// The file, as errors and warnings name it.
    pub source_name: String,
}

impl RunsFile {
    /// The warning that rows were copies, none when none was.
    pub fn copies_warning(&self) -> Option<String> {
        let rows = self.runs.len() + self.copies;
        let (copies, were) = match self.copies {
            0 => return None,
            1 => ("1 row".to_string(), "was a copy"),
            n => (format!("{n} rows"), "were copies"),
        };
        Some(format!(
            "{}: {copies} of {rows} {were} of an earlier row, every field the same, and counted once; if they are repetitions that timed the same, number them in a repetition column, as hetscale export does",
            self.source_name
        ))
    }
}

/// The measured runs of the CSV file at `path` (see [`parse_runs`]).
pub fn read_runs(path: &Path) -> Result<RunsFile> {
    let source_name = path.display().to_string();
    let file_error = |message: String| StudyError::Csv {
        source_name: source_name.clone(),
        line: None,
        field: None,
        message,
    };
    let bytes = hetscale_out::read_capped(path, hetscale_out::input::RUNS_FILE).map_err(|e| {
        file_error(match e {
            hetscale_out::InputError::TooLarge(_) => e.to_string(),
            hetscale_out::InputError::Unreadable(_) => {
                format!("cannot read it ({e}); give the path of a CSV file of runs")
            }
        })
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        StudyError::Csv {
            source_name: source_name.clone(),
            line: Some(valid.iter().filter(|&&b| b == b'\n').count() + 1),
            field: None,
            message: "not UTF-8 text; save it as UTF-8 CSV".into(),
        }
    })?;
    parse_runs(&text, &source_name)
}

/// Measured runs from CSV text with the [`RUN_COLUMNS`]; `source_name` names it in errors.
/// A configuration label names one node-set throughout. A row that repeats an earlier one
/// field for field is a copy (a file concatenated with itself, say), not another run: it is
/// counted once, and [`RunsFile::copies`] says how many were.
pub fn parse_runs(text: &str, source_name: &str) -> Result<RunsFile> {
    check_run_count(text, source_name)?;
    let records: Vec<(Row, RunRecord)> = read_records(text, source_name, &RUN_LAYOUT)?;
    let (records, copies) = without_copies(records);
    let mut node_sets: HashMap<String, String> = HashMap::new();
    let runs = records
        .into_iter()
        .map(|(row, record)| {
            let run = row.measured_run(record)?;
            row.check_node_set(&mut node_sets, &run)?;
            Ok(run)
        })
        .collect::<Result<_>>()?;
    Ok(RunsFile {
        runs,
        copies,
        source_name: source_name.to_owned(),
    })
}

/// The most runs a runs file holds: a million, ten times a long campaign's export. Each run
/// read is held with its fields as text before it is checked; counting the lines first (a
/// run takes at least one) refuses a larger file before that memory is taken.
pub const MAX_RUNS: usize = 1_000_000;

/// An error if `text` has more lines than [`MAX_RUNS`] runs and a header could take.
fn check_run_count(text: &str, source_name: &str) -> Result<()> {
    let lines = text.bytes().filter(|&b| b == b'\n').count();
    if lines <= MAX_RUNS + 1 {
        return Ok(());
    }
    Err(StudyError::Csv {
        source_name: source_name.to_owned(),
        line: None,
        field: None,
        message: format!(
            "{lines} lines, more than the {MAX_RUNS} runs (one per line) a runs file may hold: {}",
            hetscale_out::input::RUNS_FILE.advice
        ),
    })
}

const RUN_LAYOUT: Layout = Layout {
    columns: &RUN_COLUMNS,
    row: "run",
    example: "write one run per line, e.g. C_2,\"server*2:1,sunblade:1\",ge,310,0.95",
};
const SECONDS: &str = "give seconds, e.g. 0.25";
/// The times a measured run takes, s, in a runs CSV and in a study database alike: from a
/// nanosecond (below it no clock measured it, and its weight `1 / T` in a fit would swamp,
/// or, subnormal, overflow, every other run's) to about 31 years (a longer one is a unit or
/// typing error, or a tampered database).
pub const MEASURED_RUN_S: RangeInclusive<f64> = SHORTEST_RUN_S..=LONGEST_RUN_S;
const SHORTEST_RUN_S: f64 = 1e-9;
const LONGEST_RUN_S: f64 = 1e9;
const NODE_SET_EXAMPLE: &str = "\"server*2:1,sunblade:1\"";

/// A runs row as written, before its fields are checked.
#[derive(Deserialize)]
struct RunRecord {
    configuration: String,
    nodes: String,
    kernel: String,
    n: String,
    time_s: String,
}

impl Row {
    fn measured_run(&self, record: RunRecord) -> Result<MeasuredRun> {
        Ok(MeasuredRun {
            configuration: self.text(
                "configuration",
                record.configuration,
                "the configuration's label, e.g. C_2",
            )?,
            nodes: self.text(
                "nodes",
                record.nodes,
                &format!("a node-set, e.g. {NODE_SET_EXAMPLE}"),
            )?,
            kernel: self.text("kernel", record.kernel, "a kernel name, e.g. ge")?,
            n: self.size("n", &record.n)?,
            time_s: self.run_time(&record.time_s)?,
        })
    }

    /// A run's `time_s`: a finite number of seconds within what a clock measures.
    fn run_time(&self, text: &str) -> Result<f64> {
        let time = self.positive("time_s", text, SECONDS)?;
        let shown = hetscale_out::echoed(text);
        let message = if time < SHORTEST_RUN_S {
            format!("{shown} s is shorter than any measured run ({SHORTEST_RUN_S:e} s)")
        } else if time > LONGEST_RUN_S {
            format!("{shown} s is longer than any measured run ({LONGEST_RUN_S:e} s, 31 years)")
        } else {
            return Ok(time);
        };
        Err(self.error(Some("time_s"), format!("{message}; {SECONDS}")))
    }

    /// An error if `run`'s configuration label named another node-set on an earlier row:
    /// calibration would simulate one label's runs on two machines.
    fn check_node_set(
        &self,
        node_sets: &mut HashMap<String, String>,
        run: &MeasuredRun,
    ) -> Result<()> {
        let first = node_sets
            .entry(run.configuration.clone())
            .or_insert_with(|| run.nodes.clone());
        if *first == run.nodes {
            return Ok(());
        }
        Err(self.error(
            Some("nodes"),
            format!(
                "configuration {:?} was {:?} on an earlier row and is {:?} here; a label names \
                 one node-set: give this one another label",
                hetscale_out::echoed(&run.configuration),
                hetscale_out::echoed(first),
                hetscale_out::echoed(&run.nodes)
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "configuration,nodes,kernel,n,time_s\n";

    fn error_of(rows: &str) -> String {
        let err = parse_runs(&format!("{HEADER}{rows}"), "runs.csv")
            .unwrap_err()
            .to_string();
        assert_eq!(err.lines().count(), 1, "{err}");
        err
    }

    #[test]
    fn more_lines_than_runs_a_file_may_hold_are_refused_before_they_are_read() {
        let text = format!("{HEADER}{}", "\n".repeat(MAX_RUNS + 1));
        let err = parse_runs(&text, "runs.csv").unwrap_err().to_string();
        assert!(
            err.starts_with("runs.csv: 1000002 lines, more than the 1000000 runs"),
            "{err}"
        );
        // At the cap, the file is read (and here found to hold no rows).
        let text = format!("{HEADER}{}", "\n".repeat(MAX_RUNS));
        let err = parse_runs(&text, "runs.csv").unwrap_err().to_string();
        assert!(err.contains("no rows after the header"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_runs_file_that_never_ends_is_read_no_further_than_its_cap() {
        let err = read_runs(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(
            err.starts_with("/dev/zero: larger than 64 MiB, the cap on a runs file: split it"),
            "{err}"
        );
    }

    #[test]
    fn a_megabyte_field_is_echoed_cut_with_its_length() {
        let time = "9".repeat(1_000_000);
        let err = error_of(&format!("C_1,sunblade:1,ge,310,{time}\n"));
        assert!(
            err.len() < 300 && err.contains("(1000000 characters)"),
            "{}",
            &err[..err.len().min(300)]
        );
        let n = "9".repeat(1_000_000);
        assert!(error_of(&format!("C_1,sunblade:1,ge,{n},1\n")).len() < 300);
        let word = "x".repeat(1_000_000);
        assert!(error_of(&format!("C_1,sunblade:1,ge,{word},1\n")).len() < 300);
    }

    #[test]
    fn a_negative_size_is_called_negative_not_a_fraction() {
        let err = error_of("C_1,sunblade:1,ge,-100,0.5\n");
        assert!(
            err.contains("-100 is negative; a problem size is at least 1")
                && !err.contains("whole"),
            "{err}"
        );
        assert!(error_of("C_1,sunblade:1,ge,1.5,0.5\n").contains("\"1.5\" is not a whole number"));
    }

    #[test]
    fn an_unbalanced_quote_is_named_as_such() {
        for rows in [
            "C_1,\"sunblade:1,ge,310,0.5\n",
            "C_1,\"sunblade:1,ge,310,0.5\nC_2,sunblade:2,ge,310,0.4\n",
            "# a \"comment\n\nC_1,\"sunblade:1,ge,310,0.5\n",
        ] {
            let err = error_of(rows);
            assert!(
                err.contains("a quote opens a field that no quote closes")
                    && !err.contains("holds commas"),
                "{rows:?}: {err}"
            );
        }
        // Commas left unquoted are the other way a row comes out ragged.
        let err = error_of("C_2,server:1,sunfire:1,ge,310,0.5\n");
        assert!(err.contains("quote a field that holds commas"), "{err}");
        let err = error_of("C_2,\"server:1,sunfire:1\",ge,310\n");
        assert!(err.contains("4 fields where the header has 5"), "{err}");
        assert!(!err.contains("no quote closes"), "{err}");
    }

    const NUMBERED: &str = "configuration,nodes,kernel,n,time_s,repetition\n";

    #[test]
    fn a_row_is_a_copy_only_when_every_field_is_the_same() {
        let text = format!(
            "{NUMBERED}C_1,sunblade:1,ge,310,0.5,0\n\
             C_1,sunblade:1,ge,310,0.5,1\n\
             C_1 , sunblade:1,ge,310,0.5 ,0\n\
             C_1,sunblade:1,ge,310,0.5,0\n\
             C_1,sunblade:1,ge,310,0.52,0\n"
        );
        let file = parse_runs(&text, "runs.csv").unwrap();
        // The second differs in its repetition, the fifth in its time: runs, not copies; the
        // third (but for spaces) and the fourth are the first again.
        assert_eq!(file.runs.len(), 3, "{:?}", file.runs);
        assert_eq!(file.copies, 2);
        assert_eq!(
            file.copies_warning().unwrap(),
            "runs.csv: 2 rows of 5 were copies of an earlier row, every field the same, and \
             counted once; if they are repetitions that timed the same, number them in a \
             repetition column, as hetscale export does"
        );
        let once =
            parse_runs(&format!("{NUMBERED}C_1,sunblade:1,ge,310,0.5,0\n"), "r.csv").unwrap();
        assert_eq!((once.copies, once.copies_warning()), (0, None));
    }
}
