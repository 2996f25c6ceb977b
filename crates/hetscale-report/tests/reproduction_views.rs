//! The report's sections for `hetscale reproduce`'s statement checks: Kalinov's statements
//! beside the E_he series (table and chart), Williams & Parsons' observations beside the
//! improvement factors behind them.

use hbsp::Platform;
use hetscale_kernels::KernelRegistry;
use hetscale_papers::kalinov::summa::{KalinovExperiment, reproduce_kalinov};
use hetscale_papers::reproduce::{ReproducedValue, Reproduction};
use hetscale_papers::wp::collectives::{WpExperiment, reproduce_wp};
use hetscale_report::views::reproduction::{
    ID, KALINOV_ID, WP_ID, draw_published, kalinov_sections, reproduction_section, wp_sections,
};
use hetscale_report::views::study::study_report;
use hetscale_report::{Cell, Report};
use hetscale_study::calibrate::PlatformCalibration;

fn text(cell: &Cell) -> String {
    match cell {
        Cell::Text(t) => t.clone(),
        other => panic!("not text: {other:?}"),
    }
}

#[test]
fn kalinov_s_statements_stand_beside_the_e_he_series_and_its_chart() {
    let experiment = KalinovExperiment {
        processors: vec![4, 16],
        ..KalinovExperiment::default()
    };
    let k = reproduce_kalinov(&experiment, &KernelRegistry::builtin()).unwrap();
    let sections = kalinov_sections(&k).unwrap();
    let report = sections
        .into_iter()
        .fold(Report::new("t"), |r, s| r.section(s));
    let statements = report.tables().find(|t| t.name == KALINOV_ID).unwrap();
    let rows: Vec<(String, String)> = statements
        .rows
        .iter()
        .map(|r| (text(&r[0]), text(&r[3])))
        .collect();
    assert_eq!(
        rows,
        [
            ("hoho".into(), "scalable".into()),
            ("heho".into(), "scalable".into()),
            ("hohe1".into(), "not scalable".into()),
            ("hohe2".into(), "scalable".into()),
        ]
    );
    // E_he per p and strategy, and one chart of them.
    let series = report
        .tables()
        .find(|t| t.name == "summa-efficiency")
        .unwrap();
    assert_eq!(series.rows.len(), 2);
    assert_eq!(series.columns.len(), 1 + 4);
    assert_eq!(report.figures().count(), 1);
    assert!(report.to_html().unwrap().contains("Kalinov"));
}

#[test]
fn williams_and_parsons_observations_stand_beside_their_factors() {
    let experiment = WpExperiment {
        processors: vec![2, 4, 6],
        sizes_kb: vec![100, 500],
        ..WpExperiment::default()
    };
    let w = reproduce_wp(&experiment).unwrap();
    let report = wp_sections(&w)
        .unwrap()
        .into_iter()
        .fold(Report::new("t"), |r, s| r.section(s));
    let observations = report.tables().find(|t| t.name == WP_ID).unwrap();
    assert_eq!(observations.rows.len(), 7);
    let verdicts: Vec<String> = observations.rows.iter().map(|r| text(&r[3])).collect();
    assert_eq!(verdicts[5], "does not hold");
    assert!(text(&observations.rows[5][6]).contains("second phase"));
    assert_eq!(verdicts[2], "holds");
    assert_eq!(
        observations.rows[2][6],
        Cell::Empty,
        "a holding observation lacks nothing"
    );
    // Scatter T_s/T_f and T_u/T_b, broadcast T_s/T_f, T_u/T_b and T_1/T_2: one chart each.
    assert_eq!(report.figures().count(), 5);
}

mod common;

/// The example study's GE part as a reproduction whose paper published N = 1000 on every
/// configuration, hetscale finding 1100.
fn reproduction() -> Reproduction {
    let study = common::example_study_results().remove(0);
    let values = study
        .configurations
        .iter()
        .map(|c| ReproducedValue {
            paper: "jpdc".into(),
            table: "5".into(),
            item: c.label.clone(),
            quantity: "N".into(),
            unit: String::new(),
            published: 1000.0,
            tool: Some(1100.0),
            approach: "measured".into(),
            role: "validation".into(),
            rel_err: Some(0.1),
        })
        .collect();
    Reproduction {
        id: "jpdc-ge".into(),
        target: study.spec.target,
        assumption: None,
        held: None,
        calibration: PlatformCalibration {
            kernels: Vec::new(),
            platform: Platform::load("sunwulf").unwrap(),
        },
        values,
        study,
    }
}

#[test]
fn a_reproduction_draws_the_published_sizes_and_gives_errors_in_percent() {
    let r = reproduction();
    let mut report = study_report(std::slice::from_ref(&r.study)).unwrap();
    let figure = |report: &Report| {
        report
            .figures()
            .find(|f| f.id == "default-ge-approaches-figure")
            .unwrap()
            .clone()
    };
    let before = figure(&report);
    draw_published(&mut report, std::slice::from_ref(&r)).unwrap();
    let after = figure(&report);
    assert!(!before.svg.as_str().contains("published"));
    assert!(
        after.svg.as_str().contains("published"),
        "a key entry names the paper's series"
    );
    assert!(
        after.caption.contains("the paper's published N"),
        "{}",
        after.caption
    );
    // One grey disc per configuration, and one in the key.
    let discs = after.svg.as_str().matches("fill=\"#787878\"").count();
    assert_eq!(discs, r.study.configurations.len() + 1);

    let section = reproduction_section(std::slice::from_ref(&r)).unwrap();
    let table = Report::new("t").section(section);
    let table = table.tables().find(|t| t.name == ID).unwrap();
    let last = table.columns.len() - 1;
    assert_eq!(table.columns[last].unit.as_deref(), Some("%"));
    match &table.rows[0][last] {
        Cell::Number(percent) => assert!((percent - 10.0).abs() < 1e-9, "{percent}"),
        other => panic!("not a number: {other:?}"),
    }
}
