//! The views of a study (`hetscale study`, `hetscale report DB`), after the papers' figures:
//! the setup (configurations, calibration, verification), E_s versus N per configuration with
//! the fits and the target, the psi matrix and psi curves, isospeed-e contours over (system
//! size, work), and the three approaches side by side with the held-out check.
//!
//! Each study is one part of the report; its section ids are `<study>-<view>`, where
//! `<study>` is [`study_prefixes`]' id for it and `<view>` one of [`VIEWS`].

mod approaches;
mod common;
mod contours;
mod efficiency;
mod psi;
mod setup;

use hetscale_study::spec::Approach;
use hetscale_study::study::StudyResult;

pub use approaches::{approaches_section, draw_published_sizes};
pub use common::{APPROACHES, CONTOURS, ES_VS_N, PSI, SETUP};
#[cfg(test)]
use common::{Along, drawable_with_intervals, percent};
pub use contours::contours_section;
pub use efficiency::efficiency_section;
pub use psi::psi_section;
pub use setup::setup_section;

use crate::error::{ReportError, Result};
use crate::html::{Block, Figure, Lead, Report, Section};
use crate::table::{Cell, Column, Table};

/// The views of one study, in the order they appear; a section's id is `<study>-<view>`.
pub const VIEWS: [&str; 5] = [SETUP, ES_VS_N, PSI, CONTOURS, APPROACHES];
/// The report of `results`: one part per study, each with every view.
pub fn study_report(results: &[StudyResult]) -> Result<Report> {
    if results.is_empty() {
        return Err(ReportError::NoData {
            what: "the study report".into(),
            hint: "run a study first (hetscale study) or give a database that holds one",
        });
    }
    let names: Vec<&str> = results.iter().map(|r| r.spec.name.as_str()).collect();
    let mut report = Report::new(match names.as_slice() {
        [one] => format!("hetscale study {one}"),
        _ => format!("hetscale studies: {}", names.join(", ")),
    })
    .intro(INTRO)
    .lead(summary_lead(results, &[])?);
    for (result, prefix) in results.iter().zip(study_prefixes(results)) {
        for section in study_sections(result, &prefix)? {
            report.push(section);
        }
    }
    Ok(report)
}

const INTRO: &str = "Isospeed-efficiency scalability (Chen, Sun & Wu): the speed-efficiency E_s = W / (T C) of a run of work W in time T on a configuration of marked speed C is held at a target while the configuration grows, and psi(C, C') = C' W / (C W') says how much faster than the machine the work W' must grow to hold it (1 is ideal). Three approaches find the size N that holds the target on each configuration: measured (a search by runs), computed (a fit of T(N) = a W/C + T_o(N) to sampled runs, inverted) and predicted (the kernel's HBSP^1 overhead model, calibrated on the first configuration).

Every table is also in tables/ as Markdown, CSV and JSON.";

/// Section id of the summary the report opens with.
pub const SUMMARY: &str = "summary";

/// The published sizes of one study's configurations (label, N), beside hetscale's in the
/// summary; empty for a study that reproduces no paper.
pub type PublishedSizes = Vec<(String, f64)>;

/// What the report opens with: the summary of every study (N and psi(base, C_j) per approach
/// and configuration, `published[i]`'s sizes beside study `i`'s, each approach's verdict and
/// the held-out error) beside the key figure, the first study's E_s versus N.
pub fn summary_lead(results: &[StudyResult], published: &[PublishedSizes]) -> Result<Lead> {
    let mut summary = Section::new(SUMMARY, "Summary").table(summary_table(results, published)?);
    for result in results {
        let s = &result.summary;
        for a in &s.approaches {
            summary = summary.text(format!(
                "{} ({}): {}",
                s.study,
                a.approach.name(),
                a.verdict_line
            ));
        }
        if let Some(line) = s.held_out_line() {
            summary = summary.text(format!("{}, {line}", s.study));
        }
    }
    let figure = match (results.first(), study_prefixes(results).first()) {
        (Some(first), Some(prefix)) => key_figure(first, prefix)?,
        _ => None,
    };
    Ok(Lead { summary, figure })
}

/// One row per study and configuration: N and psi(base, C_j) by each approach, the
/// published N where there is one.
fn summary_table(results: &[StudyResult], published: &[PublishedSizes]) -> Result<Table> {
    let with_published = published.iter().any(|p| !p.is_empty());
    let mut columns = vec![
        Column::new("study"),
        Column::new("config"),
        Column::new("p"),
    ];
    for approach in Approach::ALL {
        columns.push(Column::new(format!("N ({})", approach.name())));
        columns.push(Column::new(format!("psi ({})", approach.name())));
    }
    if with_published {
        columns.push(Column::new("N (published)"));
    }
    let mut table = Table::new(
        SUMMARY,
        "N holding each study's E_s, and psi(base, C) from its first configuration",
        columns,
    );
    for (i, result) in results.iter().enumerate() {
        let summary = &result.summary;
        for (j, config) in result.configurations.iter().enumerate() {
            let mut row = vec![
                Cell::Text(summary.study.clone()),
                Cell::Text(config.label.clone()),
                Cell::Integer(config.p as i64),
            ];
            for approach in Approach::ALL {
                let found = summary.approaches.iter().find(|a| a.approach == approach);
                let summary_row = found.and_then(|a| a.rows.get(j));
                row.push(
                    summary_row
                        .and_then(|r| r.n)
                        .map_or(Cell::Empty, Cell::Number),
                );
                row.push(
                    summary_row
                        .and_then(|r| r.psi_from_base)
                        .map_or(Cell::Empty, Cell::Number),
                );
            }
            if with_published {
                let n = published
                    .get(i)
                    .and_then(|p| p.iter().find(|(label, _)| *label == config.label));
                row.push(n.map_or(Cell::Empty, |(_, n)| Cell::Number(*n)));
            }
            table.push_row(row)?;
        }
    }
    Ok(table)
}

/// The E_s versus N chart of `result`, under its own id: the figure to see first.
fn key_figure(result: &StudyResult, prefix: &str) -> Result<Option<Figure>> {
    let section = efficiency_section(result, prefix)?;
    Ok(section.blocks.into_iter().find_map(|block| match block {
        Block::Figure(figure) => Some(Figure {
            id: format!("{SUMMARY}-figure"),
            caption: format!("{}: {}", result.spec.name, figure.caption),
            ..figure
        }),
        _ => None,
    }))
}

/// Every view of one study, with section ids `<prefix>-<view>`.
pub fn study_sections(result: &StudyResult, prefix: &str) -> Result<Vec<Section>> {
    Ok(vec![
        setup_section(result, prefix)?,
        efficiency_section(result, prefix)?,
        psi_section(result, prefix)?,
        contours_section(result, prefix)?,
        approaches_section(result, prefix)?,
    ])
}

/// One id per study for its sections: the study's name made a valid HTML id (lower case,
/// `-` for anything else), made unique with `-2`, `-3`, ... when two names map to one id.
pub fn study_prefixes(results: &[StudyResult]) -> Vec<String> {
    let mut used: Vec<String> = Vec::new();
    for result in results {
        let base = id_of(&result.spec.name);
        let mut id = base.clone();
        let mut k = 2;
        while used.contains(&id) {
            id = format!("{base}-{k}");
            k += 1;
        }
        used.push(id);
    }
    used
}

/// `name` as an id: lower-case ASCII letters and digits kept, runs of anything else as one
/// `-`, starting with a letter.
fn id_of(name: &str) -> String {
    let mut id = String::new();
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' {
            id.push(c);
        } else if !id.is_empty() && !id.ends_with('-') {
            id.push('-');
        }
    }
    let id = id.trim_end_matches('-');
    if id.starts_with(|c: char| c.is_ascii_lowercase()) {
        id.to_owned()
    } else {
        format!("study-{id}").trim_end_matches('-').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_valid_ids() {
        assert_eq!(id_of("default-ge"), "default-ge");
        assert_eq!(id_of("My Study (v2)"), "my-study-v2");
        assert_eq!(id_of("2024 run"), "study-2024-run");
        assert_eq!(id_of("---"), "study");
        assert_eq!(id_of("ÉTUDE"), "tude");
    }

    #[test]
    fn intervals_follow_their_points_and_undrawable_ones_are_dropped() {
        let points = vec![
            ((1.0, 0.5), Some((0.8, 1.2))),
            ((0.0, 0.5), Some((0.1, 0.2))),
            ((2.0, 0.4), Some((-1.0, 3.0))),
            ((3.0, 0.3), Some((f64::NAN, 3.0))),
            ((4.0, 0.2), None),
        ];
        let (kept, intervals) = drawable_with_intervals(points, true, false, Along::X);
        assert_eq!(kept, [(1.0, 0.5), (2.0, 0.4), (3.0, 0.3), (4.0, 0.2)]);
        assert_eq!(intervals, [Some((0.8, 1.2)), None, None, None]);
    }

    #[test]
    fn percentages_carry_their_sign() {
        assert_eq!(percent(0.0071), "+0.71%");
        assert_eq!(percent(-0.25), "-25%");
    }
}
