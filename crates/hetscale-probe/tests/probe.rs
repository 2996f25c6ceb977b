//! The probe measures plausible parameters and writes them into a platform.

// hbsp's test fixtures, shared rather than copied: these tests probe the machines hbsp's
// tests charge.
#[path = "../../hbsp/tests/common/mod.rs"]
mod common;

use hbsp::{Backend, Platform};
use hetscale_probe::probe::{self, ProbeOptions};

#[test]
fn quick_probe_reports_estimates_with_intervals() {
    let platform = hetscale_machine::presets::local(3);
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
        "g_s_per_byte_ci95",
        "l_s",
        "l_s_ci95",
        "o_s",
        "o_s_ci95",
        "r",
        "r_ci95",
        "loaded",
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
    let machine = hetscale_machine::presets::local(1).all().unwrap();
    let options = ProbeOptions {
        rounds: 1,
        ..ProbeOptions::quick()
    };
    assert!(probe::probe(&Backend::threads(), &machine, &options).is_err());
}

fn assert_close(what: &str, measured: f64, expected: f64) {
    let error = (measured - expected).abs() / expected.abs();
    assert!(
        error <= 0.01,
        "{what}: probed {measured:e}, platform has {expected:e}"
    );
}

/// On `sim` a superstep costs exactly the platform's parameters, so the probe must give them
/// back: `g` of the fastest injector, every node's own `r_j` and `L(10)` of Williams &
/// Parsons' ten-node cluster, whose `r_j` run from 1 to 4.08.
#[test]
fn probe_on_sim_recovers_the_ucf_cluster() {
    let platform = Platform::load("ucf-cluster").unwrap();
    for backend in common::sim() {
        let machine = platform.all().unwrap();
        let l_s = machine.l_s();
        let report =
            common::within_5s(move || probe::probe(&backend, &machine, &ProbeOptions::quick()))
                .unwrap();
        assert_eq!(report.p, 10);
        assert_close("g", report.g_s_per_byte, platform.network.g_s_per_byte);
        assert_close("L", report.L_s, l_s);
        assert!(report.o_s.abs() < 1e-12, "o = {:e}", report.o_s);
        let distinct: std::collections::BTreeSet<u64> = platform
            .nodes
            .iter()
            .map(|n| (n.r * 100.0) as u64)
            .collect();
        assert!(distinct.len() >= 8, "the preset's r_j should differ");
        for (node, (r, [lo, hi])) in platform.nodes.iter().zip(report.r.iter().zip(&report.r_ci)) {
            assert_close(&format!("r of {}", node.name), *r, node.r);
            assert!(lo <= r && r <= hi);
        }
    }
}

/// Sunwulf has a per-message start-up (o = 0.08 ms) and L growing with p.
#[test]
fn probe_on_sim_recovers_overhead_and_barrier() {
    let platform = Platform::load("sunwulf").unwrap();
    for backend in common::sim() {
        let machine = platform.select(&"4".parse().unwrap()).unwrap();
        let l_s = machine.l_s();
        let report =
            common::within_5s(move || probe::probe(&backend, &machine, &ProbeOptions::quick()))
                .unwrap();
        assert_close("g", report.g_s_per_byte, platform.network.g_s_per_byte);
        assert_close("L", report.L_s, l_s);
        assert_close("o", report.o_s, platform.network.o_s);
        for r in &report.r {
            assert_close("r", *r, 1.0);
        }
    }
}

/// With three or four ucf nodes an even spread lets chromus (r = 4.08) bound the others'
/// injections; the weighted sweeps must still find every node's own r_j.
#[test]
fn probe_on_sim_sees_past_a_slow_receiver_at_small_p() {
    let platform = Platform::load("ucf-cluster").unwrap();
    for (p, backend) in ["3", "4"]
        .into_iter()
        .flat_map(|p| common::sim().map(|b| (p, b)))
    {
        let machine = platform.select(&p.parse().unwrap()).unwrap();
        let nodes: Vec<f64> = machine.nodes().iter().map(|n| n.r).collect();
        let l_s = machine.l_s();
        let report =
            common::within_5s(move || probe::probe(&backend, &machine, &ProbeOptions::quick()))
                .unwrap();
        assert_close("g", report.g_s_per_byte, platform.network.g_s_per_byte);
        assert_close("L", report.L_s, l_s);
        for (measured, expected) in report.r.iter().zip(&nodes) {
            assert_close(&format!("r at p = {p}"), *measured, *expected);
        }
    }
}

/// The probe reports its progress in supersteps, never past [`probe::probe_supersteps`], and
/// the count is the probe's own: at most one pilot sweep (which may settle early) fewer.
#[test]
fn the_probe_s_progress_counts_the_supersteps_it_estimated() {
    let platform = Platform::load("ucf-cluster").unwrap();
    let machine = platform.select(&"6".parse().unwrap()).unwrap();
    let options = ProbeOptions::quick();
    let reported = std::sync::Mutex::new(Vec::new());
    probe::probe_with_progress(&Backend::sim_declared(), &machine, &options, &|done| {
        reported.lock().unwrap().push(done);
    })
    .unwrap();
    let reported = reported.into_inner().unwrap();
    let estimate = probe::probe_supersteps(6, &options);
    let sweep = 6 * options.h_bytes.len() as u64 * options.samples as u64 * 2;
    assert!(reported.is_sorted(), "{reported:?}");
    let last = *reported.last().unwrap();
    assert!(
        last <= estimate && last + sweep + 2 >= estimate,
        "{last} of {estimate}"
    );
}

/// A probe is O(p^2) in time and memory (every node injects in turn while all take part;
/// every node gathers every rate): `probe --nodes 100000 --quick` grew past 6 GB in 20 s and
/// ran on. It is refused before it starts, in one line with its estimates and what to do.
#[test]
fn a_probe_that_cannot_fit_is_refused_with_its_estimates() {
    let options = ProbeOptions::quick();
    let bytes = |p| probe::probe_bytes(&Backend::threads(), p, &options);
    assert!(bytes(100_000) > 1e12, "{:e}", bytes(100_000));
    assert!(bytes(2_000) > 3.5 * bytes(1_000), "grows as p^2");
    assert!(probe::probe_seconds(&Backend::threads(), 1_000, &options) > 100.0);
    let err = probe::check_probe_fits(&Backend::threads(), 100_000, &options)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("probing 100000 nodes (")
            && err.contains(" supersteps, about ")
            && err.contains("of memory but")
            && err.contains("probe fewer nodes")
            && !err.contains('\n'),
        "{err}"
    );
    assert!(probe::check_probe_fits(&Backend::threads(), 8, &options).is_ok());
}

/// Nothing reads a probe's trace, which grew with every superstep of every node (3.2 GB for
/// a quick sim probe of 500 nodes): the probe runs its backend untraced.
#[test]
fn an_untraced_backend_records_no_trace() {
    for backend in [Backend::threads(), Backend::sim(), Backend::mpi()] {
        assert!(backend.records_trace());
        assert!(!backend.untraced().records_trace(), "{backend}");
    }
}
