//! The papers' published values beside what hetscale found (`hetscale reproduce`, and the
//! default study), and the statements Kalinov and Williams & Parsons make, checked.

use hetscale_papers::kalinov::KALINOV_KEEPS_SCALABILITY;
use hetscale_papers::kalinov::summa::KalinovReproduction;
use hetscale_papers::reproduce::Reproduction;
use hetscale_papers::tpds::slalom::MasparGap;
use hetscale_papers::wp::collectives::WpReproduction;

use super::collectives::{ImprovementPoint, collective_section};
use super::study::{
    PublishedSizes, draw_published_sizes, study_prefixes, study_report, summary_lead,
};
use super::summa::{StrategyEfficiency, summa_section};
use crate::error::Result;
use crate::html::{Lead, Report, Section};
use crate::table::{Cell, Column, Table};

/// Section id of [`reproduction_section`].
pub const ID: &str = "published-beside";

/// The report of `hetscale reproduce` (and of the default study): the studies' report with
/// the published values beside, then why SLALOM on the MasPar is not reproduced, then
/// Kalinov's and Williams & Parsons' statements checked.
pub fn reproduction_report(
    done: &[Reproduction],
    kalinov: Option<&KalinovReproduction>,
    wp: Option<&WpReproduction>,
    maspar: Option<&MasparGap>,
) -> Result<Report> {
    let mut report = if done.is_empty() {
        Report::new("hetscale reproduce").intro(
            "The papers' statements checked on hetscale's simulated machines (no study: \
             nothing is calibrated on the values checked).",
        )
    } else {
        let results: Vec<_> = done.iter().map(|r| r.study.clone()).collect();
        let mut report = study_report(&results)?;
        // The summary the page opens with has the papers' sizes beside hetscale's.
        report.lead = Some(reproduction_lead(done)?);
        draw_published(&mut report, done)?;
        report.push(reproduction_section(done)?);
        report
    };
    let statements = kalinov
        .map(kalinov_sections)
        .into_iter()
        .chain(wp.map(wp_sections))
        .collect::<Result<Vec<_>>>()?;
    if let Some(m) = maspar {
        report.push(unreproduced_section(&m.id, &m.explanation()));
    }
    statements
        .into_iter()
        .flatten()
        .for_each(|section| report.push(section));
    Ok(report)
}

/// One table of every published value beside hetscale's, with the median errors over the
/// validation rows in the text.
pub fn reproduction_section(reproductions: &[Reproduction]) -> Result<Section> {
    let columns = [
        "experiment",
        "table",
        "item",
        "quantity",
        "approach",
        "role",
        "published",
        "hetscale",
    ]
    .map(Column::new)
    .to_vec();
    // Percent, as the text and the study tables print relative errors.
    let columns = [columns, vec![Column::with_unit("relative error", "%")]].concat();
    let mut table = Table::new(ID, "Published beside hetscale", columns);
    for r in reproductions {
        for v in &r.values {
            table.push_row(vec![
                Cell::Text(r.id.clone()),
                Cell::Text(v.table.clone()),
                Cell::Text(v.item.clone()),
                Cell::Text(v.quantity.clone()),
                Cell::Text(v.approach.clone()),
                Cell::Text(v.role.clone()),
                Cell::Number(v.published),
                v.tool.map_or(Cell::Empty, Cell::Number),
                v.rel_err.map_or(Cell::Empty, |e| Cell::Number(100.0 * e)),
            ])?;
        }
    }
    let mut section = Section::new(ID, "The papers' values beside hetscale's").text(
        "Each experiment is calibrated on its base configuration's published rows only \
         (role calibration); every other row is a validation row, never used to fit. \
         Measured values come from the study's runs on the calibrated simulated machine.",
    );
    for r in reproductions {
        section = section.text(medians_line(r));
        for k in &r.calibration.kernels {
            section = section.text(format!(
                "{}: calibrated on the base configuration's {}: {}{}.",
                r.id,
                k.runs_label(),
                k.parameters_line(),
                k.cross_validation
                    .as_ref()
                    .map_or(String::new(), |cv| format!("; {}", cv.describe()))
            ));
        }
        if let Some(held) = &r.held {
            section = section.text(format!("{}: {}.", r.id, held.describe()));
        }
        if let Some(why) = &r.assumption {
            section = section.text(format!("{}: {why}.", r.id));
        }
    }
    Ok(section.table(table))
}

/// The summary the report opens with, the papers' published sizes beside hetscale's.
pub fn reproduction_lead(reproductions: &[Reproduction]) -> Result<Lead> {
    let results: Vec<_> = reproductions.iter().map(|r| r.study.clone()).collect();
    let published: Vec<PublishedSizes> = reproductions.iter().map(published_sizes).collect();
    summary_lead(&results, &published)
}

/// Draws each paper's sizes in its study's figure of the approaches' sizes in `report`
/// (built by `study_report` from the reproductions' studies, in order).
pub fn draw_published(report: &mut Report, reproductions: &[Reproduction]) -> Result<()> {
    let results: Vec<_> = reproductions.iter().map(|r| r.study.clone()).collect();
    for (r, prefix) in reproductions.iter().zip(study_prefixes(&results)) {
        draw_published_sizes(report, &prefix, &r.study, &published_sizes(r))?;
    }
    Ok(())
}

/// The paper's N per configuration (its rows whose item is a configuration's label).
fn published_sizes(r: &Reproduction) -> PublishedSizes {
    let mut sizes = PublishedSizes::new();
    for v in r.values.iter().filter(|v| v.quantity == "N") {
        if !sizes.iter().any(|(label, _)| *label == v.item) {
            sizes.push((v.item.clone(), v.published));
        }
    }
    sizes
}

/// A published experiment hetscale does not reproduce, and why.
pub fn unreproduced_section(id: &str, explanation: &str) -> Section {
    Section::new(
        format!("{id}-not-reproduced"),
        format!("{id}: not reproduced"),
    )
    .text(format!("{id}: {explanation}."))
}

fn medians_line(r: &Reproduction) -> String {
    let parts: Vec<String> = [
        ("N", "measured"),
        ("N", "predicted"),
        ("psi", "measured"),
        ("T", "measured"),
        ("E_s", "measured"),
    ]
    .iter()
    .filter_map(|(q, a)| {
        r.median_error(q, a)
            .map(|m| format!("{q} ({a}) {:.1}%", 100.0 * m))
    })
    .collect();
    format!(
        "{}: median |relative error| over validation rows: {}.",
        r.id,
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    )
}

/// Section id of the table in [`kalinov_sections`].
pub const KALINOV_ID: &str = "kalinov-statements";
/// Section id of the table in [`wp_sections`].
pub const WP_ID: &str = "wp-observations";

/// Kalinov's statements beside hetscale's verdicts, then `E_he` versus `p` per strategy (a
/// chart and a table).
pub fn kalinov_sections(k: &KalinovReproduction) -> Result<Vec<Section>> {
    let mut table = Table::new(
        KALINOV_ID,
        "Kalinov's statements beside hetscale's E_he series",
        [
            "strategy",
            "section",
            "equation",
            "Kalinov",
            "hetscale",
            "E_he first p",
            "E_he last p",
            "kept",
            "agrees",
        ]
        .map(Column::new)
        .to_vec(),
    );
    let says = |scalable: bool| if scalable { "scalable" } else { "not scalable" };
    for s in &k.strategies {
        let (first, last) = (&s.points[0], &s.points[s.points.len() - 1]);
        table.push_row(vec![
            s.statement.strategy.name().into(),
            s.statement.section.into(),
            s.statement.equation.into(),
            says(s.statement.scalable).into(),
            says(s.scalable).into(),
            first.e_he.into(),
            last.e_he.into(),
            s.retained.into(),
            if s.agrees() { "yes" } else { "NO" }.into(),
        ])?;
    }
    let agree = k.strategies.iter().filter(|s| s.agrees()).count();
    let statements = Section::new(KALINOV_ID, "Kalinov's SUMMA strategies: his statements")
        .text(format!(
            "{}: each strategy run on {} at n^2/p = {:.0}, from p = {} to {}. Kalinov shows a strategy scalable when E_he depends on n^2 and p only through their ratio; hetscale calls a series scalable when E_he at the most processors keeps at least {:.0}% of its value at the fewest. {agree} of {} verdicts agree.",
            k.id,
            k.platform,
            k.n2_per_p,
            k.strategies.first().map_or(0, |s| s.points[0].p),
            k.strategies.first().map_or(0, |s| s.points[s.points.len() - 1].p),
            100.0 * KALINOV_KEEPS_SCALABILITY,
            k.strategies.len(),
        ))
        .table(table);
    let points: Vec<StrategyEfficiency> = k
        .strategies
        .iter()
        .flat_map(|s| {
            s.points.iter().map(|point| StrategyEfficiency {
                strategy: s.statement.strategy.name().into(),
                p: point.p,
                efficiency: point.e_he,
            })
        })
        .collect();
    let setting = format!(
        "simulated multiply phase on {}, n^2/p = {:.0}",
        k.platform, k.n2_per_p
    );
    Ok(vec![statements, summa_section(&points, &setting)?])
}

/// Williams & Parsons' observations, each with its verdict and number, then the improvement
/// factors behind them (charts and a table).
pub fn wp_sections(w: &WpReproduction) -> Result<Vec<Section>> {
    let mut table = Table::new(
        WP_ID,
        "Williams & Parsons' observations on the simulated cluster",
        [
            "observation",
            "where",
            "the paper says",
            "verdict",
            "number",
            "checked",
            "the machine model lacks",
        ]
        .map(Column::new)
        .to_vec(),
    );
    for o in &w.observations {
        table.push_row(vec![
            o.number.into(),
            o.source.into(),
            o.quote.into(),
            if o.holds { "holds" } else { "does not hold" }.into(),
            o.evidence.as_str().into(),
            o.check.as_str().into(),
            o.lacks.filter(|_| !o.holds).into(),
        ])?;
    }
    let observations = Section::new(WP_ID, "Williams & Parsons' scatter and broadcast")
        .text(format!(
            "{}: {} of {} observations hold on {} (machine: {}). Each is checked on the simulated (\"actual\") improvement factors; the numbers the paper quotes only validate.",
            w.id,
            w.holding(),
            w.observations.len(),
            w.platform,
            w.machine
        ))
        .table(table);
    let points: Vec<ImprovementPoint> = w.factors.iter().map(ImprovementPoint::from).collect();
    Ok(vec![
        observations,
        collective_section(&points, "sim backend, virtual time")?,
    ])
}
