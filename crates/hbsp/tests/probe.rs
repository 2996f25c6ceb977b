//! The probe measures plausible parameters and writes them into a platform.

mod common;

use hbsp::probe::{self, ProbeOptions};
use hbsp::{Backend, Platform};

#[test]
fn quick_probe_reports_estimates_with_intervals() {
    let platform = hbsp::presets::local(3);
    let machine = platform.select(&"3".parse().unwrap()).unwrap();
    let report = common::within_5s(move || {
        probe::probe(&Backend::threads(), &machine, &ProbeOptions::quick())
    })
    .unwrap();
    assert_eq!(
        (report.p, report.r.len(), report.r_ci.len(), report.rounds),
        (3, 3, 3, 3)
    );
    for (value, [lo, hi]) in [
        (report.g_s_per_byte, report.g_s_per_byte_ci),
        (report.L_s, report.L_s_ci),
        (report.o_s, report.o_s_ci),
    ] {
        assert!(value.is_finite() && lo <= value && value <= hi);
    }
    assert!(report.r.iter().all(|&r| r >= 1.0 - 1e-12));
    let json = serde_json::to_value(&report).unwrap();
    for key in [
        "p",
        "g_s_per_byte",
        "g_s_per_byte_ci",
        "L_s",
        "L_s_ci",
        "o_s",
        "o_s_ci",
        "r",
        "r_ci",
    ] {
        assert!(json.get(key).is_some(), "JSON key {key}");
    }

    let mut target = platform.clone();
    let machine = platform.select(&"3".parse().unwrap()).unwrap();
    report.apply_to(&mut target, &machine).unwrap();
    let hbsp::BarrierCost::Table(points) = &target.network.l else {
        panic!("L became a table")
    };
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].p, 3);
    assert_eq!(target.nodes[2].r, report.r[2]);
    assert_eq!(
        Platform::from_toml_str(&target.to_toml_string().unwrap()).unwrap(),
        target
    );
}

#[test]
fn probe_rejects_too_few_rounds() {
    let machine = hbsp::presets::local(1).all().unwrap();
    let options = ProbeOptions {
        rounds: 1,
        ..ProbeOptions::quick()
    };
    assert!(probe::probe(&Backend::threads(), &machine, &options).is_err());
}
