//! Measurements as data: the papers' published values (`papers/*.csv`, embedded) and a user's
//! measured runs (`configuration,nodes,kernel,n,time_s`), parsed and checked.
//!
//! Both readers take the columns by header name in any order, ignore extra columns, skip `#`
//! comment lines and trim whitespace. Every error is one line naming the file, the line and
//! the field, and what to write instead. Kernels and node-sets are not checked against a
//! registry or a platform here: the caller knows which ones apply.
//!
//! ```
//! use hetscale_study::measurements::{Quantity, published, published_time_rows};
//!
//! let jpdc = published("jpdc")?;
//! let c_2 = jpdc
//!     .iter()
//!     .find(|v| v.quantity == Quantity::ProblemSize && v.configuration == "C_2")
//!     .unwrap();
//! assert_eq!((c_2.value, c_2.target_e_s), (310.0, Some(0.3)));
//! assert_eq!(published_time_rows(&jpdc).len(), 12); // Tables 3 and 4
//! # Ok::<(), hetscale_study::StudyError>(())
//! ```

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use csv::StringRecord;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StudyError};

/// The papers whose published values are embedded, by id, with their CSV (`papers/README.md`
/// describes the columns and sources).
const EMBEDDED: [(&str, &str); 2] = [
    // Chen, Sun & Wu, JPDC 2008, section 4.
    ("jpdc", include_str!("../papers/jpdc.csv")),
    // Sun & Rover, IEEE TPDS 1994, section IV-B.
    ("tpds", include_str!("../papers/tpds.csv")),
];

/// The ids of the papers whose published values [`published`] has.
pub fn papers() -> Vec<&'static str> {
    EMBEDDED.iter().map(|&(id, _)| id).collect()
}

/// The columns of a runs CSV, as [`read_runs`] takes them.
pub const RUN_COLUMNS: [&str; 5] = ["configuration", "nodes", "kernel", "n", "time_s"];

/// The columns of a published-values CSV, as [`parse_published`] takes them.
pub const PUBLISHED_COLUMNS: [&str; 12] = [
    "paper",
    "table",
    "source",
    "experiment",
    "configuration",
    "nodes",
    "kernel",
    "quantity",
    "n",
    "value",
    "unit",
    "target_e_s",
];

/// What a published value is, spelled in the CSV as the paper writes its symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Quantity {
    /// `T`: execution time at a problem size, seconds.
    #[serde(rename = "T")]
    Time,
    /// `N`: the problem size that holds the target speed-efficiency.
    #[serde(rename = "N")]
    ProblemSize,
    /// `E_s`: a speed-efficiency measured at a problem size.
    #[serde(rename = "E_s")]
    SpeedEfficiency,
    /// `psi`: isospeed-e scalability between two configurations.
    #[serde(rename = "psi")]
    Psi,
    /// `N_predicted`: a problem size the paper predicts rather than measures.
    #[serde(rename = "N_predicted")]
    PredictedProblemSize,
    /// `psi_predicted`: a psi the paper predicts rather than measures.
    #[serde(rename = "psi_predicted")]
    PredictedPsi,
    /// `C`: a configuration's marked speed, Mflop/s.
    #[serde(rename = "C")]
    MarkedSpeed,
    /// `W`: the work at a problem size, as the paper prints it (a cross-check of its `N`).
    #[serde(rename = "W")]
    Work,
    /// `T_iso`: the execution time at the target speed-efficiency, at a problem size the
    /// paper does not give (Sun & Rover's Table II), seconds.
    #[serde(rename = "T_iso")]
    IsospeedTime,
}

impl Quantity {
    /// Every quantity, in the order error messages list them.
    pub const ALL: [Self; 9] = [
        Self::Time,
        Self::ProblemSize,
        Self::SpeedEfficiency,
        Self::Psi,
        Self::PredictedProblemSize,
        Self::PredictedPsi,
        Self::MarkedSpeed,
        Self::Work,
        Self::IsospeedTime,
    ];

    /// The CSV's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Time => "T",
            Self::ProblemSize => "N",
            Self::SpeedEfficiency => "E_s",
            Self::Psi => "psi",
            Self::PredictedProblemSize => "N_predicted",
            Self::PredictedPsi => "psi_predicted",
            Self::MarkedSpeed => "C",
            Self::Work => "W",
            Self::IsospeedTime => "T_iso",
        }
    }

    /// The unit its values are written in (`1` for a pure number).
    pub fn unit(self) -> &'static str {
        match self {
            Self::Time | Self::IsospeedTime => "s",
            Self::MarkedSpeed => "Mflop/s",
            _ => "1",
        }
    }

    /// Whether a value of it belongs to one problem size, given in the `n` column.
    pub fn belongs_to_a_size(self) -> bool {
        matches!(self, Self::Time | Self::SpeedEfficiency | Self::Work)
    }

    /// Whether it relates two configurations, written `FROM>TO`.
    pub fn relates_two_configurations(self) -> bool {
        matches!(self, Self::Psi | Self::PredictedPsi)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Quantity {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|q| q.as_str() == text)
            .ok_or_else(|| {
                let known: Vec<&str> = Self::ALL.iter().map(|q| q.as_str()).collect();
                format!(
                    "\"{text}\" is no quantity; write one of {}",
                    known.join(", ")
                )
            })
    }
}

/// One value a paper publishes, with where it is printed and what it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishedValue {
    /// The paper's id, e.g. `jpdc`.
    pub paper: String,
    /// The table's number, or `text` for a value given in the prose.
    pub table: String,
    /// Where exactly: table and case or column, or section and the quoted sentence.
    pub source: String,
    /// The experiment, e.g. `ge`.
    pub experiment: String,
    /// The paper's configuration label (`C_2`, `C'_4`); `FROM>TO` for psi.
    pub configuration: String,
    /// The hetscale node-set of that configuration on the paper's platform preset; `FROM>TO`
    /// for psi.
    pub nodes: String,
    /// The hetscale kernel name.
    pub kernel: String,
    /// What the value is.
    pub quantity: Quantity,
    /// The problem size the value belongs to (`T`, `E_s`, `W`).
    pub n: Option<u64>,
    /// The value, in `unit`.
    pub value: f64,
    /// The quantity's unit.
    pub unit: String,
    /// The target speed-efficiency an `N` or psi holds, when the paper states it.
    pub target_e_s: Option<f64>,
}

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

/// The published values of paper `paper` (one of [`papers`]).
pub fn published(paper: &str) -> Result<Vec<PublishedValue>> {
    let paper = paper.trim();
    let (id, text) = EMBEDDED
        .iter()
        .find(|&&(id, _)| id == paper)
        .ok_or_else(|| StudyError::UnknownPaper {
            id: paper.to_owned(),
            known: papers().into_iter().map(str::to_owned).collect(),
        })?;
    parse_published(text, &format!("papers/{id}.csv"))
}

/// Published values from CSV text with the [`PUBLISHED_COLUMNS`]; `source_name` names it in
/// errors.
pub fn parse_published(text: &str, source_name: &str) -> Result<Vec<PublishedValue>> {
    let records: Vec<(Row, PublishedRecord)> = read_records(text, source_name, &PUBLISHED_LAYOUT)?;
    records
        .into_iter()
        .map(|(row, record)| row.published_value(record))
        .collect()
}

/// The measured runs of the CSV file at `path` (see [`parse_runs`]).
pub fn read_runs(path: &Path) -> Result<Vec<MeasuredRun>> {
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
/// A configuration label names one node-set throughout.
pub fn parse_runs(text: &str, source_name: &str) -> Result<Vec<MeasuredRun>> {
    let records: Vec<(Row, RunRecord)> = read_records(text, source_name, &RUN_LAYOUT)?;
    let mut node_sets: HashMap<String, String> = HashMap::new();
    records
        .into_iter()
        .map(|(row, record)| {
            let run = row.measured_run(record)?;
            row.check_node_set(&mut node_sets, &run)?;
            Ok(run)
        })
        .collect()
}

/// The `T` values as runs, e.g. to calibrate on a paper's published times.
pub fn published_time_rows(values: &[PublishedValue]) -> Vec<MeasuredRun> {
    values
        .iter()
        .filter(|v| v.quantity == Quantity::Time)
        .filter_map(|v| {
            Some(MeasuredRun {
                configuration: v.configuration.clone(),
                nodes: v.nodes.clone(),
                kernel: v.kernel.clone(),
                n: v.n?,
                time_s: v.value,
            })
        })
        .collect()
}

/// A kind of CSV: its columns and what one of its rows holds.
struct Layout {
    columns: &'static [&'static str],
    row: &'static str,
    example: &'static str,
}

const RUN_LAYOUT: Layout = Layout {
    columns: &RUN_COLUMNS,
    row: "run",
    example: "write one run per line, e.g. C_2,\"server*2:1,sunblade:1\",ge,310,0.95",
};
const PUBLISHED_LAYOUT: Layout = Layout {
    columns: &PUBLISHED_COLUMNS,
    row: "published value",
    example: "write one published value per line, as papers/README.md describes",
};
const SECONDS: &str = "give seconds, e.g. 0.25";
/// The shortest run time taken, s: below a nanosecond no clock measured it, and its weight
/// `1 / T` in a fit would swamp (or, subnormal, overflow) every other run's.
const SHORTEST_RUN_S: f64 = 1e-9;
/// The longest run time taken, s (about 31 years): a longer one is a unit or typing error.
const LONGEST_RUN_S: f64 = 1e9;
const TARGET: &str = "give the target speed-efficiency, e.g. 0.3, or leave it empty";
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

/// A published row as written, before its fields are checked.
#[derive(Deserialize)]
struct PublishedRecord {
    paper: String,
    table: String,
    source: String,
    experiment: String,
    configuration: String,
    nodes: String,
    kernel: String,
    quantity: String,
    n: String,
    value: String,
    unit: String,
    target_e_s: String,
}

/// The rows of `text` whose header names every one of `columns`, each with where it is.
fn read_records<R: DeserializeOwned>(
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

/// Where a value comes from: the file and, for a row or the header, its line.
#[derive(Clone)]
struct Row {
    source_name: String,
    line: Option<usize>,
}

impl Row {
    fn error(&self, field: Option<&str>, message: String) -> StudyError {
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
                let fields = if *len == 1 { "field" } else { "fields" };
                at(pos.as_ref()).error(
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

    fn published_value(&self, record: PublishedRecord) -> Result<PublishedValue> {
        let quantity: Quantity = record
            .quantity
            .parse()
            .map_err(|message| self.error(Some("quantity"), message))?;
        let configuration = self.text(
            "configuration",
            record.configuration,
            "the configuration's label, e.g. C_2",
        )?;
        self.check_pairing(
            "configuration",
            &configuration,
            quantity,
            "configuration",
            "C_2>C_4",
        )?;
        let nodes = self.text(
            "nodes",
            record.nodes,
            &format!("a node-set, e.g. {NODE_SET_EXAMPLE}"),
        )?;
        self.check_pairing(
            "nodes",
            &nodes,
            quantity,
            "node-set",
            "\"server*2:1,sunblade:1>server*2:1,sunblade:3\"",
        )?;
        let unit = quantity.unit();
        if record.unit != unit {
            return Err(self.error(
                Some("unit"),
                format!(
                    "{quantity} is in {unit}, not \"{}\"; convert the value to {unit} and write {unit}",
                    record.unit
                ),
            ));
        }
        Ok(PublishedValue {
            paper: self.text("paper", record.paper, "the paper's id, e.g. jpdc")?,
            table: self.text(
                "table",
                record.table,
                "the table's number, or text for a value the prose gives",
            )?,
            source: self.text(
                "source",
                record.source,
                "where the paper prints the value, e.g. \"Table 3, Case 1.2\"",
            )?,
            experiment: self.text("experiment", record.experiment, "the experiment, e.g. ge")?,
            configuration,
            nodes,
            kernel: self.text("kernel", record.kernel, "a kernel name, e.g. ge")?,
            quantity,
            n: self.size_of(quantity, &record.n)?,
            value: self.positive(
                "value",
                &record.value,
                &format!("give the published value in {unit}"),
            )?,
            unit: unit.to_owned(),
            target_e_s: self.target(&record.target_e_s)?,
        })
    }

    fn text(&self, field: &str, text: String, what: &str) -> Result<String> {
        if text.is_empty() {
            return Err(self.error(Some(field), format!("empty; give {what}")));
        }
        // Labels and names are printed: no terminal escapes.
        if let Some(problem) = hbsp::platform::control_character_problem(&text) {
            return Err(self.error(Some(field), problem));
        }
        Ok(text)
    }

    /// A finite number greater than zero.
    fn positive(&self, field: &str, text: &str, give: &str) -> Result<f64> {
        let fail = |what: String| Err(self.error(Some(field), format!("{what}; {give}")));
        if text.is_empty() {
            return fail("empty".into());
        }
        match text.parse::<f64>() {
            Err(_) => fail(format!("\"{text}\" is not a number")),
            Ok(x) if !x.is_finite() => fail(format!("{text} is not a finite number")),
            Ok(x) if x <= 0.0 => fail(format!("{text} is not positive")),
            Ok(x) => Ok(x),
        }
    }

    fn size(&self, field: &str, text: &str) -> Result<u64> {
        let max = hetscale_kernels::MAX_N;
        let digits_only = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        let message = match text.parse::<u64>() {
            Ok(0) => "0 is no problem size; give a whole number from 1, e.g. 310".to_owned(),
            Ok(n) if n <= max => return Ok(n),
            // Above MAX_N, or all digits but beyond u64: a size the models cannot represent.
            Ok(_) => {
                format!("{text} is above the largest problem size, {max} (2^53); give a smaller n")
            }
            Err(_) if digits_only => {
                format!("{text} is above the largest problem size, {max} (2^53); give a smaller n")
            }
            Err(_) if text.is_empty() => "empty; give a problem size from 1, e.g. 310".to_owned(),
            Err(_) => {
                format!("\"{text}\" is not a whole number; give a problem size from 1, e.g. 310")
            }
        };
        Err(self.error(Some(field), message))
    }

    /// `n` where the quantity belongs to a size, and nothing where it does not.
    fn size_of(&self, quantity: Quantity, text: &str) -> Result<Option<u64>> {
        match (quantity.belongs_to_a_size(), text.is_empty()) {
            (true, true) => Err(self.error(
                Some("n"),
                format!(
                    "empty, but {quantity} rows need the problem size they belong to; give it, e.g. 310"
                ),
            )),
            (true, false) => self.size("n", text).map(Some),
            (false, true) => Ok(None),
            (false, false) => Err(self.error(
                Some("n"),
                format!("{quantity} rows belong to no single problem size; leave n empty"),
            )),
        }
    }

    fn target(&self, text: &str) -> Result<Option<f64>> {
        if text.is_empty() {
            return Ok(None);
        }
        let target = self.positive("target_e_s", text, TARGET)?;
        if target > 1.0 {
            return Err(self.error(Some("target_e_s"), format!("{text} is above 1; {TARGET}")));
        }
        Ok(Some(target))
    }

    /// psi rows name two configurations as `FROM>TO`; every other row names one.
    fn check_pairing(
        &self,
        field: &str,
        text: &str,
        quantity: Quantity,
        what: &str,
        example: &str,
    ) -> Result<()> {
        let parts: Vec<&str> = text.split('>').collect();
        let message = match (quantity.relates_two_configurations(), parts.len()) {
            (true, 2) if parts.iter().all(|p| !p.trim().is_empty()) => return Ok(()),
            (true, 1) => format!(
                "\"{text}\" names one {what}; {quantity} rows name two as FROM>TO, e.g. {example}"
            ),
            (true, _) => format!(
                "\"{text}\" is not FROM>TO; {quantity} rows name two {what}s as FROM>TO, e.g. {example}"
            ),
            (false, 1) => return Ok(()),
            (false, _) => {
                format!("\"{text}\" names more than one {what}; only psi and psi_predicted rows do")
            }
        };
        Err(self.error(Some(field), message))
    }
}
