//! The papers' published tables, recomputed from their published inputs.
//!
//! Each paper has a module holding its inputs, written once with their table beside them, and a
//! function that recomputes what those inputs determine with `hetscale-model`'s formulas
//! ([`crate::all_tables`] gathers them). A
//! [`PaperRow`] pairs a computed value with the published one (when the paper prints one) and
//! says whether the computation reproduces it to the published rounding.

use crate::published::Published;
use serde::Serialize;

/// One recomputed table.
#[derive(Debug, Clone, Serialize)]
pub struct PaperTable {
    /// Stable identifier, e.g. `jpdc-table6`.
    pub id: &'static str,
    /// What the table shows.
    pub title: String,
    /// The paper the inputs come from: authors, title, venue, year (and its tables).
    pub source: &'static str,
    /// The recomputed values.
    pub rows: Vec<PaperRow>,
    /// Findings: values that do not reproduce, parameters chosen, errors of predictions.
    pub notes: Vec<String>,
}

/// One value: computed here, and the published one where the paper prints it.
#[derive(Debug, Clone, Serialize)]
pub struct PaperRow {
    /// What the value is.
    pub label: String,
    /// The published value, if the paper prints one.
    pub published: Option<f64>,
    /// The value this crate computes from the published inputs.
    pub computed: f64,
    /// Whether `computed` rounds to `published` at the published precision (`None` when nothing
    /// is published).
    pub reproduced: Option<bool>,
    /// How many decimals the published value has (for display at the same precision).
    #[serde(skip)]
    pub published_text: Option<&'static str>,
}

impl PaperRow {
    /// A computed value compared with a published one.
    pub fn compared(label: impl Into<String>, published: Published, computed: f64) -> Self {
        Self {
            label: label.into(),
            published: Some(published.value()),
            computed,
            reproduced: Some(published.is_reproduced_by(computed)),
            published_text: Some(published.text()),
        }
    }

    /// A computed value the paper does not print.
    pub fn computed_only(label: impl Into<String>, computed: f64) -> Self {
        Self {
            label: label.into(),
            published: None,
            computed,
            reproduced: None,
            published_text: None,
        }
    }

    pub(crate) fn mismatch_note(&self) -> String {
        let published = self.published_text.unwrap_or("?");
        format!(
            "Not reproduced: {} is published as {published} but its inputs give {} ({:.6}).",
            self.label,
            self.computed_display(),
            self.computed
        )
    }

    /// The computed value formatted at the published precision (or 4 significant digits).
    pub fn computed_display(&self) -> String {
        match self.published_text {
            Some(text) => Published::new(text).format_like(self.computed),
            None => format!("{:.4}", self.computed),
        }
    }
}

impl PaperTable {
    /// The rows whose published value the inputs do not reproduce.
    pub fn mismatches(&self) -> impl Iterator<Item = &PaperRow> {
        self.rows.iter().filter(|r| r.reproduced == Some(false))
    }
}
