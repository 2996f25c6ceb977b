//! The report: sections of text, inline SVG figures and tables, written as one self-contained
//! `index.html` (no scripts, no network, no external files needed to read it) plus every table
//! as Markdown, CSV and JSON under `tables/`.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::chart::Svg;
use crate::error::{ReportError, Result, check_name};
use crate::markup::escape;
use crate::table::Table;

/// A figure: an SVG chart with an id (its anchor in the page) and a caption.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// HTML id: lower-case letters, digits, `-`, `_`.
    pub id: String,
    /// What the figure shows and how to read it.
    pub caption: String,
    /// The chart.
    pub svg: Svg,
}

impl Figure {
    /// A figure of `svg`.
    pub fn new(id: impl Into<String>, caption: impl Into<String>, svg: Svg) -> Self {
        Self {
            id: id.into(),
            caption: caption.into(),
            svg,
        }
    }

    fn to_html(&self) -> String {
        // The caption doubles as the chart's accessible name.
        let svg = self.svg.as_str().replacen(
            "<svg ",
            &format!(
                "<svg role=\"img\" aria-label=\"{}\" ",
                escape(&self.caption)
            ),
            1,
        );
        format!(
            "<figure id=\"{}\">\n{svg}<figcaption>{}</figcaption>\n</figure>\n",
            escape(&self.id),
            escape(&self.caption)
        )
    }
}

/// One piece of a section, shown in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Explanatory text; blank lines separate paragraphs.
    Text(String),
    /// A chart.
    Figure(Figure),
    /// A table (also written to `tables/<name>.{md,csv,json}`).
    Table(Table),
}

/// A section of the report: one view, e.g. the spacetime diagram or the psi matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// HTML id, the anchor of the view: lower-case letters, digits, `-`, `_`.
    pub id: String,
    /// Heading.
    pub title: String,
    /// Contents in order.
    pub blocks: Vec<Block>,
}

impl Section {
    /// An empty section.
    pub fn new(id: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    /// Adds explanatory text.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.blocks.push(Block::Text(text.into()));
        self
    }

    /// Adds a figure.
    pub fn figure(mut self, figure: Figure) -> Self {
        self.blocks.push(Block::Figure(figure));
        self
    }

    /// Adds a table.
    pub fn table(mut self, table: Table) -> Self {
        self.blocks.push(Block::Table(table));
        self
    }

    /// The tables of this section.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
    }

    fn to_html(&self) -> String {
        let mut out = format!(
            "<section id=\"{}\">\n<h2>{}</h2>\n",
            escape(&self.id),
            escape(&self.title)
        );
        for block in &self.blocks {
            match block {
                Block::Text(text) => out.push_str(&paragraphs(text)),
                Block::Figure(figure) => out.push_str(&figure.to_html()),
                Block::Table(table) => out.push_str(&table.to_html()),
            }
        }
        out.push_str("</section>\n");
        out
    }
}

fn paragraphs(text: &str) -> String {
    text.split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| format!("<p>{}</p>\n", escape(p)))
        .collect()
}

/// A report: a title, an introduction and sections.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Page title and top heading.
    pub title: String,
    /// Text under the title; blank lines separate paragraphs.
    pub intro: String,
    /// The views, in order.
    pub sections: Vec<Section>,
    /// The answer, shown first (before the introduction and the contents): the summary,
    /// beside the key figure.
    pub lead: Option<Lead>,
}

/// What a report opens with: the summary section and, beside it, the key figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Lead {
    /// The summary: tables of the answer and its verdicts.
    pub summary: Section,
    /// The one figure to see first.
    pub figure: Option<Figure>,
}

/// What [`Report::write`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The HTML page.
    pub index: PathBuf,
    /// Every table file (`.md`, `.csv`, `.json`).
    pub tables: Vec<PathBuf>,
    /// Every figure as a standalone SVG file, `figures/<figure id>.svg`.
    pub figures: Vec<PathBuf>,
}

impl Lead {
    /// The summary and the figure side by side.
    fn to_html(&self) -> String {
        let figure = self
            .figure
            .as_ref()
            .map(Figure::to_html)
            .unwrap_or_default();
        format!(
            "<div class=\"lead\">\n<div class=\"lead-summary\">\n{}</div>\n<div class=\"lead-figure\">\n{figure}</div>\n</div>\n",
            self.summary.to_html()
        )
    }
}

impl Report {
    /// An empty report.
    pub fn new(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            ..Self::default()
        }
    }

    /// Sets the introduction.
    pub fn intro(mut self, text: impl Into<String>) -> Self {
        self.intro = text.into();
        self
    }

    /// Adds a section.
    pub fn section(mut self, section: Section) -> Self {
        self.sections.push(section);
        self
    }

    /// Adds a section in place.
    pub fn push(&mut self, section: Section) {
        self.sections.push(section);
    }

    /// Opens the page with `lead`: before the introduction and the contents.
    pub fn lead(mut self, lead: Lead) -> Self {
        self.lead = Some(lead);
        self
    }

    /// The lead's summary, then every section.
    fn all_sections(&self) -> impl Iterator<Item = &Section> {
        self.lead.iter().map(|l| &l.summary).chain(&self.sections)
    }

    /// Every table of every section, in order.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.all_sections().flat_map(Section::tables)
    }

    /// Every figure, in order: the lead's, then every section's.
    pub fn figures(&self) -> impl Iterator<Item = &Figure> {
        let sections = self
            .all_sections()
            .flat_map(|s| &s.blocks)
            .filter_map(|b| match b {
                Block::Figure(f) => Some(f),
                _ => None,
            });
        self.lead
            .iter()
            .filter_map(|l| l.figure.as_ref())
            .chain(sections)
    }

    /// Checks that every id and table name is valid and used once.
    pub fn validate(&self) -> Result<()> {
        let mut ids = HashSet::new();
        let mut claim = |what: &'static str, id: String| -> Result<()> {
            check_name(what, id.strip_prefix("table-").unwrap_or(&id))?;
            if ids.insert(id.clone()) {
                Ok(())
            } else {
                Err(ReportError::Duplicate { what, name: id })
            }
        };
        if let Some(figure) = self.lead.as_ref().and_then(|l| l.figure.as_ref()) {
            claim("figure", figure.id.clone())?;
        }
        for section in self.all_sections() {
            claim("section", section.id.clone())?;
            for block in &section.blocks {
                match block {
                    Block::Figure(f) => claim("figure", f.id.clone())?,
                    Block::Table(t) => claim("table", format!("table-{}", t.name))?,
                    Block::Text(_) => {}
                }
            }
        }
        Ok(())
    }

    /// The self-contained HTML page.
    pub fn to_html(&self) -> Result<String> {
        self.validate()?;
        let mut out = format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<header>\n<h1>{title}</h1>\n</header>\n",
            title = escape(&self.title),
        );
        // The answer first; the definitions and the contents after it.
        if let Some(lead) = &self.lead {
            out.push_str(&lead.to_html());
        }
        let _ = writeln!(
            out,
            "<div class=\"intro\">\n{}</div>",
            paragraphs(&self.intro)
        );
        out.push_str(&self.contents());
        out.push_str("<main>\n");
        for section in &self.sections {
            out.push_str(&section.to_html());
        }
        let _ = write!(
            out,
            "</main>\n<footer>Written by hetscale-report {}. Tables are also in tables/ as CSV, Markdown and JSON.</footer>\n</body>\n</html>\n",
            env!("CARGO_PKG_VERSION")
        );
        Ok(out)
    }

    fn contents(&self) -> String {
        if self.sections.len() < 2 {
            return String::new();
        }
        let items: String = self
            .sections
            .iter()
            .map(|s| {
                format!(
                    "<li><a href=\"#{}\">{}</a></li>",
                    escape(&s.id),
                    escape(&s.title)
                )
            })
            .collect();
        format!("<nav><h2>Contents</h2><ol>{items}</ol></nav>\n")
    }

    /// Writes `dir/index.html`, `dir/tables/<name>.{md,csv,json}` and every figure as
    /// `dir/figures/<id>.svg` (for a paper or slides), creating `dir`. A symbolic link inside
    /// `dir` is never followed: one at a file's place is replaced, one at `tables` or
    /// `figures` refused (see [`hetscale_out`]), so a link planted in a shared `dir` cannot lead
    /// the report out of it.
    pub fn write(&self, dir: impl AsRef<Path>) -> Result<Written> {
        let dir = dir.as_ref();
        let html = self.to_html()?;
        std::fs::create_dir_all(dir).map_err(|e| ReportError::io(dir, e))?;
        let tables_dir = dir.join("tables");
        let figures_dir = dir.join("figures");
        // Both checked before any file is written: a link there fails the report whole.
        for sub in [&tables_dir, &figures_dir] {
            hetscale_out::create_real_dir(sub).map_err(|e| ReportError::io(sub, e))?;
        }
        let index = dir.join("index.html");
        write_file(&index, &html)?;
        let mut tables = Vec::new();
        for table in self.tables() {
            let base = tables_dir.join(&table.name);
            let json = serde_json::to_string_pretty(&table.to_json()).unwrap_or_default();
            for (ext, text) in [
                ("md", table.to_markdown()),
                ("csv", table.to_csv()?),
                ("json", json),
            ] {
                let path = base.with_extension(ext);
                write_file(&path, &text)?;
                tables.push(path);
            }
        }
        let figures = self.write_figures(&figures_dir)?;
        Ok(Written {
            index,
            tables,
            figures,
        })
    }

    fn write_figures(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        self.figures()
            .map(|figure| {
                let path = dir.join(format!("{}.svg", figure.id));
                write_file(&path, figure.svg.as_str())?;
                Ok(path)
            })
            .collect()
    }
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    hetscale_out::write_atomically(path, text).map_err(|e| ReportError::io(path, e))
}

/// The page's style: readable type, figures scaled to the page, tables with aligned numbers.
const STYLE: &str = "\
body { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; margin: 0 auto; max-width: 980px; padding: 1.5rem; color: #1d1d1f; line-height: 1.5; }
h1 { font-size: 1.8rem; margin-bottom: 0.3rem; }
h2 { font-size: 1.35rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; margin-top: 2.2rem; }
nav ol { columns: 2; }
figure { margin: 1.2rem 0; }
figure svg { width: 100%; max-width: 40rem; height: auto; display: block; border: 1px solid #eee; }
figcaption { font-size: 0.92rem; color: #444; margin-top: 0.4rem; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.3rem; }
caption .files { font-weight: normal; font-size: 0.85rem; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.6rem; }
th { background: #f5f5f7; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
.lead { display: grid; grid-template-columns: fit-content(860px) minmax(0, 1fr); gap: 1.5rem; align-items: start; width: min(1340px, calc(100vw - 3rem)); position: relative; left: 50%; transform: translateX(-50%); }
.lead h2 { margin-top: 0.6rem; }
.lead p { margin: 0.3rem 0; font-size: 0.9rem; }
.lead table { margin: 0.5rem 0; font-size: 0.78rem; }
.lead th, .lead td { padding: 0.1rem 0.35rem; }
.lead td { white-space: nowrap; }
.lead figure { margin: 0.6rem 0; }
.lead figure svg { max-width: 100%; }
@media (max-width: 900px) { .lead { grid-template-columns: 1fr; } }
footer { margin-top: 3rem; font-size: 0.85rem; color: #666; }
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Column;

    fn table(name: &str) -> Table {
        Table::new(name, "t", vec![Column::new("a")])
    }

    #[test]
    fn text_is_escaped_and_split_into_paragraphs() {
        let html = Report::new("a < b")
            .section(Section::new("one", "One").text("x & y\n\nsecond"))
            .to_html()
            .unwrap();
        assert!(html.contains("<title>a &lt; b</title>"));
        assert!(html.contains("<p>x &amp; y</p>\n<p>second</p>"));
    }

    #[test]
    fn duplicate_and_bad_names_are_rejected() {
        let dup = Report::new("r")
            .section(Section::new("a", "A").table(table("t")))
            .section(Section::new("b", "B").table(table("t")));
        assert!(
            dup.validate()
                .unwrap_err()
                .to_string()
                .contains("two tables named")
        );
        let bad = Report::new("r").section(Section::new("Bad Id", "A"));
        assert!(
            bad.validate()
                .unwrap_err()
                .to_string()
                .contains("not a valid name")
        );
    }

    #[test]
    fn write_puts_tables_beside_the_page() {
        let dir = tempfile::tempdir().unwrap();
        let written = Report::new("r")
            .section(Section::new("a", "A").table(table("runs")))
            .write(dir.path())
            .unwrap();
        assert!(written.index.ends_with("index.html"));
        assert_eq!(written.tables.len(), 3);
        assert!(dir.path().join("tables/runs.csv").exists());
    }

    #[test]
    fn write_puts_each_figure_in_its_own_svg_file() {
        let dir = tempfile::tempdir().unwrap();
        let svg = crate::chart::line_chart(
            "chart",
            &crate::chart::Axes::default(),
            &[crate::chart::Series::line(
                "a",
                vec![(1.0, 2.0), (2.0, 3.0)],
            )],
        )
        .unwrap();
        let written = Report::new("r")
            .section(Section::new("a", "A").figure(Figure::new(
                "a-figure",
                "A chart.",
                svg.clone(),
            )))
            .write(dir.path())
            .unwrap();
        let path = dir.path().join("figures/a-figure.svg");
        assert_eq!(written.figures, std::slice::from_ref(&path));
        let file = std::fs::read_to_string(path).unwrap();
        assert_eq!(file, svg.as_str());
        assert!(
            file.contains("xmlns=\"http://www.w3.org/2000/svg\""),
            "a standalone SVG names its namespace"
        );
    }

    #[cfg(unix)]
    #[test]
    fn write_follows_no_link_planted_in_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&victim, out.join("index.html")).unwrap();
        let report = Report::new("r").section(Section::new("a", "A").table(table("runs")));
        report.write(&out).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(
            std::fs::read_to_string(out.join("index.html"))
                .unwrap()
                .contains("<html")
        );
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::os::unix::fs::symlink(&elsewhere, shared.join("tables")).unwrap();
        let err = report.write(&shared).unwrap_err().to_string();
        assert!(
            err.ends_with(
                "tables: it is a symbolic link, not a directory: hetscale follows no \
                 link inside its output directory; remove the link or write elsewhere"
            ),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        assert!(
            !shared.join("index.html").exists(),
            "refused before any file is written"
        );
    }
}
