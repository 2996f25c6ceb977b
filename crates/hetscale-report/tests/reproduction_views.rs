//! The report's sections for `hetscale reproduce`'s statement checks: Kalinov's statements
//! beside the E_he series (table and chart), Williams & Parsons' observations beside the
//! improvement factors behind them.

use hetscale_kernels::KernelRegistry;
use hetscale_report::views::reproduction::{KALINOV_ID, WP_ID, kalinov_sections, wp_sections};
use hetscale_report::{Cell, Report};
use hetscale_study::reproduce_kalinov::{KalinovExperiment, reproduce_kalinov};
use hetscale_study::reproduce_wp::{WpExperiment, reproduce_wp};

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
