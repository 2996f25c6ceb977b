//! Tables: one definition, written as HTML (in the report), Markdown, CSV and JSON.

use std::fmt::Write as _;

use serde::Serialize;

use crate::error::{ReportError, Result};
use crate::markup::escape;
use hetscale_model::numbers::significant;

/// Significant digits of numbers in the report's HTML and Markdown (CSV and JSON keep all).
const SHOWN_DIGITS: usize = 4;

/// A column: a name and, for quantities, a unit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    /// Name, e.g. `E_s` or `node`.
    pub name: String,
    /// Unit, e.g. `s` or `Mflop/s`; `None` for names and dimensionless numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

impl Column {
    /// A column without unit (names, counts, ratios).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            unit: None,
        }
    }

    /// A column of a quantity in `unit`.
    pub fn with_unit(name: impl Into<String>, unit: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            unit: Some(unit.into()),
        }
    }

    /// The header text: `name (unit)`.
    pub fn header(&self) -> String {
        match &self.unit {
            Some(unit) => format!("{} ({unit})", self.name),
            None => self.name.clone(),
        }
    }
}

/// One value of a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// A measured or computed quantity (non-finite values are written as JSON `null`).
    Number(f64),
    /// A count or index.
    Integer(i64),
    /// A name or label.
    Text(String),
    /// No value.
    Empty,
}

impl Cell {
    /// Short form for the HTML and Markdown tables.
    pub fn display(&self) -> String {
        match self {
            Cell::Number(v) => significant(*v, SHOWN_DIGITS),
            Cell::Integer(v) => v.to_string(),
            Cell::Text(s) => s.clone(),
            Cell::Empty => String::new(),
        }
    }

    /// Full-precision form for CSV.
    fn exact(&self) -> String {
        match self {
            Cell::Number(v) => v.to_string(),
            Cell::Integer(v) => v.to_string(),
            Cell::Text(s) => s.clone(),
            Cell::Empty => String::new(),
        }
    }

    fn is_numeric(&self) -> bool {
        matches!(self, Cell::Number(_) | Cell::Integer(_))
    }
}

impl From<f64> for Cell {
    fn from(v: f64) -> Self {
        Cell::Number(v)
    }
}

impl From<usize> for Cell {
    fn from(v: usize) -> Self {
        i64::try_from(v).map_or(Cell::Number(v as f64), Cell::Integer)
    }
}

impl From<u64> for Cell {
    fn from(v: u64) -> Self {
        i64::try_from(v).map_or(Cell::Number(v as f64), Cell::Integer)
    }
}

impl From<i64> for Cell {
    fn from(v: i64) -> Self {
        Cell::Integer(v)
    }
}

impl From<&str> for Cell {
    fn from(v: &str) -> Self {
        Cell::Text(v.to_owned())
    }
}

impl From<String> for Cell {
    fn from(v: String) -> Self {
        Cell::Text(v)
    }
}

impl<T: Into<Cell>> From<Option<T>> for Cell {
    fn from(v: Option<T>) -> Self {
        v.map_or(Cell::Empty, Into::into)
    }
}

/// A table: a file-safe `name` (it becomes `tables/<name>.{md,csv,json}`), a title, columns
/// and rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    /// File-safe name: lower-case letters, digits, `-`, `_`.
    pub name: String,
    /// What the table shows.
    pub title: String,
    /// Its columns.
    pub columns: Vec<Column>,
    /// Its rows, one cell per column.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// An empty table.
    pub fn new(name: impl Into<String>, title: impl Into<String>, columns: Vec<Column>) -> Self {
        Self {
            name: name.into(),
            title: title.into(),
            columns,
            rows: Vec::new(),
        }
    }

    /// Appends a row; it must have one cell per column.
    pub fn push_row(&mut self, row: Vec<Cell>) -> Result<()> {
        if row.len() != self.columns.len() {
            return Err(ReportError::RowWidth {
                table: self.name.clone(),
                row: self.rows.len(),
                got: row.len(),
                expected: self.columns.len(),
            });
        }
        self.rows.push(row);
        Ok(())
    }

    /// The table as GitHub-flavoured Markdown, with its title as a heading. Markdown
    /// renderers pass HTML through, so text is HTML-escaped: a label such as `<script>`
    /// shows as written instead of running.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("### {}\n\n", escape_markdown(&self.title));
        let headers: Vec<String> = self.columns.iter().map(Column::header).collect();
        let _ = writeln!(out, "| {} |", markdown_cells(&headers).join(" | "));
        let rule: Vec<&str> = (0..self.columns.len())
            .map(|c| self.alignment_rule(c))
            .collect();
        let _ = writeln!(out, "|{}|", rule.join("|"));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(Cell::display).collect();
            let _ = writeln!(out, "| {} |", markdown_cells(&cells).join(" | "));
        }
        out
    }

    /// The table as CSV: a header row of `name (unit)`, then full-precision values.
    pub fn to_csv(&self) -> Result<String> {
        let mut writer = csv::Writer::from_writer(Vec::new());
        let csv_error = |e: csv::Error| ReportError::BadValue(format!("table {}: {e}", self.name));
        writer
            .write_record(self.columns.iter().map(Column::header))
            .map_err(csv_error)?;
        for row in &self.rows {
            writer
                .write_record(row.iter().map(Cell::exact))
                .map_err(csv_error)?;
        }
        let bytes = writer
            .into_inner()
            .map_err(|e| ReportError::BadValue(format!("table {}: {e}", self.name)))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The table as JSON: `{name, title, columns: [{name, unit}], rows: [[...]]}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The table as an HTML `<table>` with a caption and links to its files.
    pub fn to_html(&self) -> String {
        let mut out = format!(
            "<table id=\"table-{name}\">\n<caption>{title} <span class=\"files\">(<a href=\"tables/{name}.csv\">CSV</a>, <a href=\"tables/{name}.md\">Markdown</a>, <a href=\"tables/{name}.json\">JSON</a>)</span></caption>\n<thead><tr>",
            name = escape(&self.name),
            title = escape(&self.title)
        );
        for column in &self.columns {
            let _ = write!(out, "<th>{}</th>", escape(&column.header()));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for cell in row {
                let class = if cell.is_numeric() {
                    " class=\"num\""
                } else {
                    ""
                };
                let _ = write!(out, "<td{class}>{}</td>", escape(&cell.display()));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out
    }

    /// Right-aligns columns whose cells are all numbers.
    fn alignment_rule(&self, column: usize) -> &'static str {
        let numeric = self.rows.iter().all(|row| {
            row.get(column)
                .is_none_or(|c| c.is_numeric() || *c == Cell::Empty)
        });
        if numeric && !self.rows.is_empty() {
            "---:"
        } else {
            "---"
        }
    }
}

/// Cells as Markdown table text: HTML-escaped, and `|` escaped so it does not end the cell.
fn markdown_cells(cells: &[String]) -> Vec<String> {
    cells
        .iter()
        .map(|c| escape_markdown(c).replace('|', "\\|"))
        .collect()
}

/// Escapes the characters that start HTML in Markdown text (`&`, `<`, `>`); quotes stay, so
/// labels such as `C'_2` read as written in the `.md` file too.
fn escape_markdown(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(
            "runs",
            "Runs",
            vec![
                Column::new("node"),
                Column::with_unit("T", "s"),
                Column::new("p"),
            ],
        );
        t.push_row(vec!["a|b".into(), 0.123456789.into(), 4usize.into()])
            .unwrap();
        t.push_row(vec!["c".into(), f64::NAN.into(), Cell::Empty])
            .unwrap();
        t
    }

    #[test]
    fn rows_must_match_columns() {
        let mut t = sample();
        let err = t.push_row(vec![1.0.into()]).unwrap_err();
        assert!(
            err.to_string()
                .contains("has 1 cells, but the table has 3 columns")
        );
    }

    #[test]
    fn markdown_has_units_and_escapes_pipes() {
        let md = sample().to_markdown();
        assert!(md.contains("| node | T (s) | p |"));
        assert!(md.contains("a\\|b"));
        assert!(md.contains("0.1235"));
    }

    #[test]
    fn markdown_cells_titles_and_headers_are_html_escaped() {
        let mut t = Table::new(
            "runs",
            "Runs of <b>x</b>",
            vec![Column::with_unit("<i>T</i>", "s & more")],
        );
        t.push_row(vec!["<script>alert(1)</script>".into()])
            .unwrap();
        t.push_row(vec!["C'_2 \"a\"".into()]).unwrap();
        let md = t.to_markdown();
        assert!(md.contains("| C'_2 \"a\" |"), "quotes stay: {md}");
        assert!(!md.contains('<') && !md.contains('>'), "{md}");
        assert!(
            md.contains("| &lt;script&gt;alert(1)&lt;/script&gt; |"),
            "{md}"
        );
        assert!(md.contains("### Runs of &lt;b&gt;x&lt;/b&gt;"), "{md}");
        assert!(
            md.contains("| &lt;i&gt;T&lt;/i&gt; (s &amp; more) |"),
            "{md}"
        );
    }

    #[test]
    fn csv_keeps_full_precision() {
        let csv = sample().to_csv().unwrap();
        assert!(csv.starts_with("node,T (s),p\n"));
        assert!(csv.contains("0.123456789"));
    }

    #[test]
    fn json_writes_non_finite_as_null() {
        let json = sample().to_json();
        assert_eq!(json["columns"][1]["unit"], "s");
        assert!(json["rows"][1][1].is_null());
        assert_eq!(json["rows"][0][2], 4);
    }
}
