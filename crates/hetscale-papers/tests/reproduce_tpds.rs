//! `hetscale reproduce`'s Sun & Rover experiment (`tpds-burg`) on its first four system sizes:
//! the simulated nCUBE 2 reaches the isospeed on each, its measured psi agree with Table V, and
//! no validation row moves any value hetscale finds.

mod common;

use common::run;
use hetscale_papers::reproduce::{Experiment, TPDS_BURG_ORDER};

/// `tpds-burg` on 1, 2, 4 and 8 nodes (the full experiment runs to 128 nodes: slow unoptimized).
fn small_burg() -> Experiment {
    common::small("tpds-burg", &["1", "2", "4", "8"])
}

#[test]
fn burg_on_the_ncube_reaches_the_isospeed_and_table_v() {
    let experiment = small_burg();
    assert_eq!(experiment.options.order, TPDS_BURG_ORDER);
    let reproduction = run(&experiment);
    let measured = reproduction.study.measured.as_ref().unwrap();
    for (label, _) in &experiment.configurations {
        assert!(
            measured.point(label).is_some(),
            "system size {label} never reached E_s = 0.5"
        );
    }
    // The study ran the experiment's order, not the kernel's default.
    let base = measured.point("1").unwrap();
    let order = TPDS_BURG_ORDER as f64;
    assert_eq!(
        base.work,
        10.0 * order * base.n - 4.0 * order * (order + 1.0)
    );
    let psi_rows = reproduction
        .values
        .iter()
        .filter(|v| v.table == "V" && v.approach == "measured")
        .count();
    assert_eq!(psi_rows, 6);
    let median = reproduction.median_error("psi", "measured").unwrap();
    assert!(median <= 0.15, "Table V median |error| {median:.3}");
}

#[test]
fn changing_a_validation_row_moves_no_value_hetscale_finds() {
    common::check_validation_rows_move_nothing(&small_burg());
}
