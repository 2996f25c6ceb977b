//! The study views on the example study (`example_specs`) and on results with parts missing.

mod common;

use std::sync::OnceLock;

use hetscale_report::views::study::{VIEWS, study_prefixes, study_report};
use hetscale_report::{Block, Report};
use hetscale_study::study::{ApproachResult, PsiIntervals, StudyResult};

/// The example study, run once for every test of this file.
fn results() -> &'static [StudyResult] {
    static RESULTS: OnceLock<Vec<StudyResult>> = OnceLock::new();
    RESULTS.get_or_init(common::example_study_results)
}

fn text_of(report: &Report) -> String {
    report
        .sections
        .iter()
        .flat_map(|s| &s.blocks)
        .map(|b| match b {
            Block::Text(t) => t.clone(),
            Block::Figure(f) => f.caption.clone(),
            Block::Table(t) => t.title.clone(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn figures_of(report: &Report, section: &str) -> usize {
    report
        .sections
        .iter()
        .filter(|s| s.id == section)
        .flat_map(|s| &s.blocks)
        .filter(|b| matches!(b, Block::Figure(_)))
        .count()
}

#[test]
fn the_example_study_report_has_every_view_figure_and_table() {
    let report = study_report(results()).unwrap();
    let prefixes = study_prefixes(results());
    assert_eq!(prefixes, ["default-ge", "default-mm"]);
    for prefix in &prefixes {
        for view in VIEWS {
            let id = format!("{prefix}-{view}");
            assert!(
                report.sections.iter().any(|s| s.id == id),
                "section {id} is missing"
            );
        }
        assert_eq!(figures_of(&report, &format!("{prefix}-es-vs-n")), 1);
        // Per approach that settled two or more configurations a heat map (the first its
        // psi, the others their difference from it) or a note that it coincides; then the
        // curves.
        let result = &results()[prefixes.iter().position(|p| p == prefix).unwrap()];
        let section = format!("{prefix}-psi");
        let notes = report
            .sections
            .iter()
            .filter(|s| s.id == section)
            .flat_map(|s| &s.blocks)
            .filter(|b| matches!(b, Block::Text(t) if t.contains("so it is not drawn again")))
            .count();
        assert_eq!(
            figures_of(&report, &section) + notes,
            common::approaches_with_psi(result) + 1
        );
        assert_eq!(figures_of(&report, &format!("{prefix}-contours")), 1);
        assert_eq!(figures_of(&report, &format!("{prefix}-approaches")), 1);
    }
    let dir = tempfile::tempdir().unwrap();
    report.write(dir.path()).unwrap();
    for prefix in &prefixes {
        for table in [
            "configurations",
            "facts",
            "fits",
            "samples",
            "psi",
            "contours",
            "approaches",
            "held-out",
        ] {
            for ext in ["md", "csv", "json"] {
                let path = dir.path().join(format!("tables/{prefix}-{table}.{ext}"));
                assert!(path.exists(), "{} is missing", path.display());
            }
        }
    }
    let text = text_of(&report);
    // GE settles all three approaches; where one failed (MM's approach 3 on the uncalibrated
    // preset: HBSP^1's g h overstates Sunwulf's measured broadcast), the report says why.
    assert_eq!(common::approaches_with_psi(&results()[0]), 3);
    for failure in results().iter().flat_map(common::failures) {
        assert!(text.contains(&failure), "{failure} is not in the report");
    }
    assert!(text.contains("Held-out check: the time model"), "{text}");
    assert!(text.contains("an error of"), "{text}");
}

#[test]
fn the_tables_hold_every_configuration_and_sample() {
    let report = study_report(&results()[..1]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    report.write(dir.path()).unwrap();
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let result = &results()[0];
    let configs = read("tables/default-ge-configurations.csv");
    assert_eq!(configs.lines().count(), 1 + result.configurations.len());
    assert!(configs.contains("server*2:1,sunblade:1"), "{configs}");
    let samples = read("tables/default-ge-samples.csv");
    assert_eq!(samples.lines().count(), 1 + result.samples.len());
    let facts = read("tables/default-ge-facts.md");
    assert!(facts.contains("passed"), "the verified run: {facts}");
    assert!(facts.contains("calibrat"), "{facts}");
}

/// A result with every optional part removed: what a study whose target was unreachable on
/// every configuration leaves.
fn bare(result: &StudyResult) -> StudyResult {
    let mut bare = result.clone();
    bare.measured = None;
    bare.computed = None;
    bare.predicted = None;
    bare.fits.clear();
    bare.contours.clear();
    bare.samples.clear();
    bare.comparison.clear();
    bare.calibration = None;
    bare.held_out = None;
    bare.verification = None;
    bare
}

#[test]
fn a_study_with_nothing_settled_still_reports_what_it_has() {
    let report = study_report(&[bare(&results()[0])]).unwrap();
    let text = text_of(&report);
    for expected in [
        "No size was measured",
        "no psi to show",
        "nothing to draw",
        "No held-out check",
    ] {
        assert!(text.contains(expected), "missing \"{expected}\" in {text}");
    }
    let dir = tempfile::tempdir().unwrap();
    report.write(dir.path()).unwrap();
}

#[test]
fn a_one_configuration_study_draws_no_degenerate_view_and_says_why() {
    let result = common::one_configuration_result();
    assert_eq!(result.configurations.len(), 1);
    let report = study_report(std::slice::from_ref(&result)).unwrap();
    let prefix = &study_prefixes(std::slice::from_ref(&result))[0];
    // Only E_s versus N has something to show; a 1x1 psi matrix, a contour through one
    // point and sizes against one system size would be views of nothing.
    assert_eq!(figures_of(&report, &format!("{prefix}-es-vs-n")), 1);
    for view in ["psi", "contours", "approaches"] {
        assert_eq!(
            figures_of(&report, &format!("{prefix}-{view}")),
            0,
            "{view}"
        );
    }
    let text = text_of(&report);
    for why in [
        "no psi to show",
        "One configuration: a contour joins",
        "One configuration: the approaches' sizes are compared in the table",
    ] {
        assert!(text.contains(why), "missing \"{why}\" in {text}");
    }
    // No table of column headings alone.
    for table in report.sections.iter().flat_map(|s| &s.blocks) {
        if let Block::Table(t) = table {
            assert!(!t.rows.is_empty(), "table {} has no row", t.name);
        }
    }
}

#[test]
fn figure_titles_name_the_kernel_in_words_not_the_study_id() {
    let report = study_report(results()).unwrap();
    for figure in report.figures() {
        let svg = figure.svg.as_str();
        assert!(
            !svg.contains("default-ge") && !svg.contains("default-mm"),
            "{}",
            figure.id
        );
    }
    let svg = svg_of(&report, "default-ge-es-vs-n");
    assert!(
        svg.contains("GE: speed-efficiency against problem size"),
        "{}",
        &svg[..400]
    );
}

#[test]
fn without_fits_the_contour_view_draws_the_target_from_the_approaches() {
    let mut result = results()[0].clone();
    result.fits.clear();
    result.contours.clear();
    let report = study_report(&[result]).unwrap();
    assert_eq!(figures_of(&report, "default-ge-contours"), 1);
    assert!(text_of(&report).contains("only the target level is known"));
}

#[test]
fn bad_numbers_are_left_out_of_the_charts_not_fatal() {
    let mut result = results()[0].clone();
    result.samples[0].speed_efficiency = f64::NAN;
    result.samples[1].n = 0;
    result.fits[0].model.a = f64::INFINITY;
    if let Some(m) = result.measured.as_mut() {
        m.points[0].n = -1.0;
    }
    let report = study_report(&[result]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    report.write(dir.path()).unwrap();
    // Every figure is still drawn; the bad points are missing from E_s versus N: the NaN sample,
    // the sample at N = 0 (log axis) and the measured approach's N = -1 (its ring).
    let good = study_report(&results()[..1]).unwrap();
    for view in ["es-vs-n", "psi", "contours", "approaches"] {
        let section = format!("default-ge-{view}");
        assert_eq!(
            figures_of(&report, &section),
            figures_of(&good, &section),
            "{section}"
        );
    }
    let circles = |r: &Report| svg_of(r, "default-ge-es-vs-n").matches("<circle").count();
    assert_eq!(circles(&report), circles(&good) - 3);
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert!(
        !html.contains("NaN") && !html.contains("inf\""),
        "bad numbers reached the SVG"
    );
}

fn svg_of(report: &Report, section: &str) -> String {
    report
        .sections
        .iter()
        .filter(|s| s.id == section)
        .flat_map(|s| &s.blocks)
        .filter_map(|b| match b {
            Block::Figure(f) => Some(f.svg.as_str().to_owned()),
            _ => None,
        })
        .collect()
}

#[test]
fn studies_of_one_name_get_distinct_ids_and_no_study_is_an_error() {
    let twice = [results()[0].clone(), results()[0].clone()];
    assert_eq!(study_prefixes(&twice), ["default-ge", "default-ge-2"]);
    study_report(&twice).unwrap().validate().unwrap();
    let err = study_report(&[]).unwrap_err().to_string();
    assert!(err.contains("hetscale study"), "{err}");
}

#[test]
fn every_figure_prints_legibly_at_one_column_width() {
    let report = study_report(results()).unwrap();
    let mut checked = 0;
    for figure in report.figures() {
        let smallest = figure.svg.smallest_text_pt().unwrap();
        assert!(
            smallest >= hetscale_report::MIN_TEXT_PT,
            "{}: smallest text {smallest:.1} pt at one-column width",
            figure.id
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} figures");
}

#[test]
fn approaches_that_coincide_are_not_drawn_again_and_others_as_differences() {
    let mut same = results()[0].clone();
    let reference = same.measured.as_ref().unwrap().psi.clone();
    assert!(
        reference.is_some(),
        "GE's measured approach has a psi matrix"
    );
    for approach in [same.computed.as_mut(), same.predicted.as_mut()] {
        approach.unwrap().psi = reference.clone();
    }
    let report = study_report(&[same.clone()]).unwrap();
    // One heat map (measured) and the psi curves.
    assert_eq!(figures_of(&report, "default-ge-psi"), 2);
    let text = text_of(&report);
    for name in ["computed", "predicted"] {
        let note = format!("The {name} approach's psi matrix coincides with the measured one's");
        assert!(text.contains(&note), "{note} missing");
    }
    // A computed matrix 0.1 higher on one pair: drawn as its difference from measured.
    let reference = reference.unwrap();
    let mut chain = reference.superdiagonal();
    chain[0] += 0.1;
    same.computed.as_mut().unwrap().psi = Some(
        hetscale_model::scalability::ScalabilityMatrix::from_superdiagonal(
            reference.labels().to_vec(),
            &chain,
        )
        .unwrap(),
    );
    let report = study_report(&[same]).unwrap();
    assert_eq!(figures_of(&report, "default-ge-psi"), 3);
    let svg = svg_of(&report, "default-ge-psi");
    assert!(
        svg.contains("ψ, computed − measured"),
        "the difference map's title"
    );
    assert!(svg.contains("\n0.1\n"), "the cell shows the difference");
}

/// The lines (error bars among them) of the figures in `section` of `result`'s report.
fn polylines(result: &StudyResult, section: &str) -> usize {
    let report = study_report(std::slice::from_ref(result)).unwrap();
    svg_of(&report, section).matches("<polyline").count()
}

/// Each approach of `result`, which the example study's GE result has all three of.
fn approaches(result: &mut StudyResult) -> impl Iterator<Item = &mut ApproachResult> {
    [
        &mut result.measured,
        &mut result.computed,
        &mut result.predicted,
    ]
    .into_iter()
    .map(|approach| approach.as_mut().expect("all three approaches"))
}

#[test]
fn the_intervals_the_result_carries_are_drawn_as_error_bars() {
    let bars = |result: &StudyResult, view: &str| polylines(result, &format!("default-ge-{view}"));
    let mut without = results()[0].clone();
    for approach in approaches(&mut without) {
        for point in &mut approach.points {
            point.n_ci95 = None;
        }
    }
    let mut with = without.clone();
    let measured = with.measured.as_mut().unwrap();
    for point in &mut measured.points {
        // Narrow enough not to move the axes (a wider range can add a grid line).
        point.n_ci95 = Some((0.99 * point.n, 1.01 * point.n));
    }
    let intervals = measured.points.len();
    // Each interval: a line and two caps, in E_s versus N (along N) and N versus p (along N).
    assert_eq!(
        bars(&with, "es-vs-n"),
        bars(&without, "es-vs-n") + 3 * intervals
    );
    assert_eq!(
        bars(&with, "approaches"),
        bars(&without, "approaches") + 3 * intervals
    );
    // Samples carry their E_s interval: a vertical bar per sample whose runs spread (the
    // example study's sim runs do not: a zero-width interval draws nothing).
    let mut flat = without.clone();
    for m in &mut flat.samples {
        m.speed_efficiency_ci = (m.speed_efficiency, m.speed_efficiency);
    }
    let mut spread = flat.clone();
    for m in &mut spread.samples {
        m.speed_efficiency_ci = (0.9 * m.speed_efficiency, 1.1 * m.speed_efficiency);
    }
    let drawn = spread.samples.iter().filter(|m| m.n > 0).count();
    assert_eq!(bars(&spread, "es-vs-n"), bars(&flat, "es-vs-n") + 3 * drawn);
}

#[test]
fn psi_intervals_are_drawn_as_error_bars_on_the_psi_curves() {
    let bars = |result: &StudyResult| polylines(result, "default-ge-psi");
    let mut without = results()[0].clone();
    for approach in approaches(&mut without) {
        approach.psi_ci95 = None;
    }
    let mut with = without.clone();
    let measured = with.measured.as_mut().unwrap();
    let psi = measured.psi.as_ref().unwrap();
    let n = psi.len();
    // Below each psi, so the linear axis's range (up to just above 1) does not move.
    let values = (0..n)
        .map(|i| {
            (i..n)
                .map(|j| psi.get(i, j).filter(|_| j > i).map(|v| (0.99 * v, v)))
                .collect()
        })
        .collect();
    measured.psi_ci95 = Some(PsiIntervals {
        labels: psi.labels().to_vec(),
        values,
    });
    // A line and two caps per pair j > i, on the curve from each C_i.
    let pairs = n * (n - 1) / 2;
    assert!(pairs > 0);
    assert_eq!(bars(&with), bars(&without) + 3 * pairs);
}

#[test]
fn the_page_opens_with_the_summary_and_the_key_figure_before_the_definitions() {
    let report = study_report(results()).unwrap();
    let html = report.to_html().unwrap();
    let at = |what: &str| html.find(what).unwrap_or_else(|| panic!("no {what}"));
    assert!(at("<h1>") < at("id=\"summary\""));
    assert!(at("id=\"summary\"") < at("id=\"summary-figure\""));
    assert!(at("id=\"summary-figure\"") < at("Isospeed-efficiency scalability"));
    assert!(at("Isospeed-efficiency scalability") < at("<nav>"));
    // The summary table holds each approach's own N and psi from the base configuration.
    let lead = report.lead.as_ref().unwrap();
    let table = lead.summary.tables().next().unwrap();
    let ge = &results()[0];
    let measured = ge.measured.as_ref().unwrap();
    let psi = measured.psi.as_ref().unwrap();
    let rows = table.to_csv().unwrap();
    let last = rows.lines().nth(measured.points.len()).unwrap();
    let point = measured.points.last().unwrap();
    let psi_last = psi.get(0, measured.points.len() - 1).unwrap();
    assert!(
        last.starts_with(&format!(
            "{},{},{},{},{}",
            ge.spec.name, point.configuration, point.p, point.n, psi_last
        )),
        "{last}"
    );
    let text = text_of(&Report {
        sections: vec![lead.summary.clone()],
        ..Report::default()
    });
    assert!(
        text.contains(&ge.summary.approaches[0].verdict_line),
        "{text}"
    );
}
