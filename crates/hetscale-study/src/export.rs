//! Exports of stored runs: CSV, JSON and Extra-P's text input format.

use crate::error::{Result, StudyError};
use crate::store::{RunRecord, Store};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Export formats of `hetscale export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One row per run, with a header.
    Csv,
    /// A JSON array of runs.
    Json,
    /// Extra-P's text input format: parameters `p` and `n`, one region per kernel, metric `time`.
    Extrap,
}

impl std::str::FromStr for Format {
    type Err = StudyError;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "csv" => Ok(Self::Csv),
            "json" => Ok(Self::Json),
            "extrap" => Ok(Self::Extrap),
            other => Err(StudyError::Export(format!(
                "unknown format '{other}': use csv, json or extrap"
            ))),
        }
    }
}

/// The runs of `study` (of every study when `None`) in `format`; a study the database does
/// not hold is an error that names the ones it does.
pub fn export(store: &Store, study: Option<&str>, format: Format) -> Result<String> {
    if let Some(name) = study {
        let names = store.studies()?;
        if !names.iter().any(|n| n == name) {
            let held = match names.as_slice() {
                [] => "it holds none".to_string(),
                names => {
                    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                    format!("it holds {}", quoted.join(", "))
                }
            };
            return Err(StudyError::Store {
                path: store.path().to_string(),
                why: format!("has no study \"{name}\": {held}"),
            });
        }
    }
    render(&store.runs(study)?, format)
}

/// Renders `runs` in `format`.
pub fn render(runs: &[RunRecord], format: Format) -> Result<String> {
    match format {
        Format::Csv => csv_text(runs),
        Format::Json => {
            serde_json::to_string_pretty(runs).map_err(|e| StudyError::Export(e.to_string()))
        }
        Format::Extrap => Ok(extrap_text(runs)),
    }
}

fn csv_text(runs: &[RunRecord]) -> Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for run in runs {
        writer
            .serialize(run)
            .map_err(|e| StudyError::Export(e.to_string()))?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| StudyError::Export(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| StudyError::Export(e.to_string()))
}

/// Extra-P text: `PARAMETER p`, `PARAMETER n`, `POINTS (p n) ...`, then per kernel a `REGION`,
/// `METRIC time` and one `DATA` line of repetitions per point, in the order of `POINTS`.
fn extrap_text(runs: &[RunRecord]) -> String {
    let mut by_kernel: BTreeMap<&str, BTreeMap<(u32, u64), Vec<f64>>> = BTreeMap::new();
    for run in runs {
        by_kernel
            .entry(&run.kernel)
            .or_default()
            .entry((run.nodes, run.n))
            .or_default()
            .push(run.time_s);
    }
    let points: std::collections::BTreeSet<(u32, u64)> =
        by_kernel.values().flat_map(|m| m.keys().copied()).collect();
    let mut out = String::from("PARAMETER p\nPARAMETER n\n\nPOINTS");
    for (p, n) in &points {
        let _ = write!(out, " ( {p} {n} )");
    }
    out.push_str("\n\n");
    for (kernel, data) in &by_kernel {
        let _ = writeln!(out, "REGION {kernel}\nMETRIC time");
        for point in &points {
            // Extra-P needs a DATA line per point; a kernel without runs at a point repeats none.
            let values = data.get(point).map(|v| {
                v.iter()
                    .map(|t| format!("{t:.9}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            let _ = writeln!(out, "DATA {}", values.unwrap_or_default());
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn runs() -> Vec<RunRecord> {
        let store = Store::open_in_memory().unwrap();
        for (n, rep, t) in [(100, 0, 0.5), (100, 1, 0.25), (200, 0, 1.5)] {
            let mut r = crate::store::tests_support::sample(n, rep);
            r.time_s = t;
            store.record(&r).unwrap();
        }
        store.runs(None).unwrap()
    }

    #[test]
    fn extrap_lists_points_then_data_per_point() {
        let text = render(&runs(), Format::Extrap).unwrap();
        assert!(
            text.starts_with("PARAMETER p\nPARAMETER n\n\nPOINTS ( 2 100 ) ( 2 200 )\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "REGION mm\nMETRIC time\nDATA 0.500000000 0.250000000\nDATA 1.500000000\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_study_the_database_does_not_hold_is_named_with_those_it_does() {
        let store = Store::open_in_memory().unwrap();
        let err = export(&store, Some("nosuch"), Format::Csv)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("has no study \"nosuch\": it holds none"),
            "{err}"
        );
        store.register_study("ge", "{}", "").unwrap();
        store.register_study("mm", "{}", "").unwrap();
        let err = export(&store, Some("nosuch"), Format::Json)
            .unwrap_err()
            .to_string();
        assert!(err.contains("it holds \"ge\", \"mm\""), "{err}");
        assert_eq!(export(&store, Some("mm"), Format::Json).unwrap(), "[]");
    }

    #[test]
    fn csv_and_json_round_trip() {
        let runs = runs();
        let csv = render(&runs, Format::Csv).unwrap();
        assert_eq!(csv.lines().count(), 4);
        assert!(csv.starts_with("study,purpose,kernel,"));
        let back: Vec<RunRecord> =
            serde_json::from_str(&render(&runs, Format::Json).unwrap()).unwrap();
        assert_eq!(back, runs);
        assert!("xml".parse::<Format>().is_err());
    }
}
