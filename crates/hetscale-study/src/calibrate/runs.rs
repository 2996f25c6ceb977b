//! The runs `hetscale calibrate --runs FILE.csv` reads (`configuration,nodes,kernel,n,time_s`),
//! parsed and checked by [`crate::csv_rows`]: one-line errors naming file, line and field.

use std::collections::HashMap;
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
    let bytes = std::fs::read(path).map_err(|e| {
        file_error(format!(
            "cannot read it ({e}); give the path of a CSV file of runs"
        ))
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

const RUN_LAYOUT: Layout = Layout {
    columns: &RUN_COLUMNS,
    row: "run",
    example: "write one run per line, e.g. C_2,\"server*2:1,sunblade:1\",ge,310,0.95",
};
const SECONDS: &str = "give seconds, e.g. 0.25";
/// The shortest run time taken, s: below a nanosecond no clock measured it, and its weight
/// `1 / T` in a fit would swamp (or, subnormal, overflow) every other run's.
const SHORTEST_RUN_S: f64 = 1e-9;
/// The longest run time taken, s (about 31 years): a longer one is a unit or typing error.
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
        let message = if time < SHORTEST_RUN_S {
            format!("{text} s is shorter than any measured run ({SHORTEST_RUN_S:e} s)")
        } else if time > LONGEST_RUN_S {
            format!("{text} s is longer than any measured run ({LONGEST_RUN_S:e} s, 31 years)")
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
                run.configuration, first, run.nodes
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::parse_runs;

    const HEADER: &str = "configuration,nodes,kernel,n,time_s,repetition\n";

    #[test]
    fn a_row_is_a_copy_only_when_every_field_is_the_same() {
        let text = format!(
            "{HEADER}C_1,sunblade:1,ge,310,0.5,0\n\
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
        let once = parse_runs(&format!("{HEADER}C_1,sunblade:1,ge,310,0.5,0\n"), "r.csv").unwrap();
        assert_eq!((once.copies, once.copies_warning()), (0, None));
    }
}
