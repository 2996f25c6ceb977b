//! The papers' measurements as data: their published values (`papers/*.csv`, embedded), parsed
//! and checked by the study crate's CSV reader (`hetscale_study::csv_rows`, which also reads a
//! user's runs, `hetscale_study::calibrate::runs`).
//!
//! The reader takes the columns by header name in any order, ignores extra columns, skips `#`
//! comment lines and trims whitespace. Every error is one line naming the file, the line and
//! the field, and what to write instead. Kernels and node-sets are not checked against a
//! registry or a platform here: the caller knows which ones apply.
//!
//! ```
//! use hetscale_papers::measurements::{Quantity, published, published_time_rows};
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

use std::fmt;
use std::str::FromStr;

use hetscale_study::calibrate::runs::MeasuredRun;
use hetscale_study::csv_rows::{Layout, Row, read_records};
use hetscale_study::{Result, StudyError};
use serde::{Deserialize, Serialize};

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

const PUBLISHED_LAYOUT: Layout = Layout {
    columns: &PUBLISHED_COLUMNS,
    row: "published value",
    example: "write one published value per line, as papers/README.md describes",
};
const TARGET: &str = "give the target speed-efficiency, e.g. 0.3, or leave it empty";
const NODE_SET_EXAMPLE: &str = "\"server*2:1,sunblade:1\"";

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

/// The checks of a published row, on the shared CSV reader's [`Row`].
trait PublishedRow {
    fn published_value(&self, record: PublishedRecord) -> Result<PublishedValue>;
    fn size_of(&self, quantity: Quantity, text: &str) -> Result<Option<u64>>;
    fn target(&self, text: &str) -> Result<Option<f64>>;
    fn check_pairing(
        &self,
        field: &str,
        text: &str,
        quantity: Quantity,
        what: &str,
        example: &str,
    ) -> Result<()>;
}

impl PublishedRow for Row {
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
