//! The probes on `sim` with a machine model: each recovers the parameters the platform
//! states (see `hetscale_machine::machine_model`).

// hbsp's test fixtures, shared rather than copied: these tests probe the machines hbsp's
// tests charge.
#[path = "../../hbsp/tests/common/mod.rs"]
mod common;

use common::model::{L, close, model, two_segments};
use hbsp::{BarrierCost, Machine, MachineModel, Platform};

/// The HBSP^1 `network` of the `sunwulf` preset is what `probe` measures on its simulated
/// machine model, so predictions (approach 3) use the probed g, L and o.
#[test]
fn probing_simulated_sunwulf_finds_its_hbsp_network() {
    let platform = Platform::load("sunwulf").unwrap();
    let machine = platform
        .select(&"server:1,sunblade:3".parse().unwrap())
        .unwrap();
    for backend in common::sim() {
        let report = hetscale_probe::probe::probe(
            &backend,
            &machine,
            &hetscale_probe::probe::ProbeOptions::quick(),
        )
        .unwrap();
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-3 * b;
        assert!(
            near(report.g_s_per_byte, platform.network.g_s_per_byte),
            "{report:?}"
        );
        assert!(near(report.L_s, platform.network.l.at(4)), "{report:?}");
        assert!(near(report.o_s, platform.network.o_s), "{report:?}");
    }
}

/// The ping-pong probe on `sim` over 8 B to 8 MiB by factors of 4.
fn ping_pong_on_sim(m: &Machine) -> hetscale_probe::p2p_probe::P2pReport {
    let options = hetscale_probe::p2p_probe::P2pProbeOptions {
        sizes: (0..11).map(|k| 8usize << (2 * k)).collect(),
        ..hetscale_probe::p2p_probe::P2pProbeOptions::quick()
    };
    let [backend, _] = common::sim_declared();
    hetscale_probe::p2p_probe::probe_p2p(&backend, m, &options).unwrap()
}

#[test]
fn the_ping_pong_probe_recovers_the_segments_of_a_simulated_platform() {
    use hetscale_probe::p2p_probe::P2pMerge;
    let mut p = common::platform(&[4.0, 1.0, 2.0]);
    p.machine = Some(MachineModel {
        p2p: two_segments(),
        ..model()
    });
    let m = p.all().unwrap();
    let report = ping_pong_on_sim(&m);
    // Deterministic supersteps: no stall (but the virtual clock's rounding).
    assert!(report.stall_s < 1e-12, "{}", report.stall_s);
    assert_eq!(report.segments.len(), 2, "{:?}", report.segments);
    let truth = two_segments();
    assert_eq!(report.segments[0].max_bytes, truth[0].max_bytes);
    for (got, want) in report.segments.iter().zip(&truth) {
        assert!(
            (got.latency_s - want.latency_s).abs() < 1e-9
                && (got.s_per_byte - want.s_per_byte).abs() < 1e-6 * want.s_per_byte,
            "{got:?} vs {want:?}"
        );
    }
    // Every pair is the same link here: each node's segments are the network's.
    assert_eq!(report.pair_segments.len(), 2);
    assert_eq!(report.pair_segments[1].len(), 2);
    // Written into a platform without [machine]; a shorter probe then keeps it.
    let mut target = common::platform(&[4.0, 1.0, 2.0]);
    let source = |node: Option<&str>| format!("probe: test {node:?}");
    let done = report.apply_to(&mut target, &source).unwrap();
    assert_eq!(done.len(), 3);
    assert!(done.iter().all(|(_, m)| *m == P2pMerge::Added), "{done:?}");
    let written = &target.machine.as_ref().unwrap().p2p;
    assert_eq!(written.len(), 6);
    assert_eq!(written[1].source.as_deref(), Some("probe: test None"));
    assert_eq!(written[1].node, None);
    assert!(written.iter().all(|s| s.p == Some(3)), "{written:?}");
    let mut shorter = report.clone();
    shorter.segments.pop();
    let done = shorter.apply_to(&mut target, &source).unwrap();
    assert!(matches!(done[0].1, P2pMerge::Kept(_)), "{done:?}");
    assert_eq!(target.machine.as_ref().unwrap().p2p.len(), 6);
    // A probe on another number of nodes adds its segments beside these.
    let mut on_two = report.clone();
    on_two.p = 2;
    on_two.apply_to(&mut target, &source).unwrap();
    let written = &target.machine.as_ref().unwrap().p2p;
    assert_eq!(written.len(), 12);
    assert_eq!(written.iter().filter(|s| s.p == Some(2)).count(), 6);
    // The superstep probe's g (1 ns/byte here) below the sustained 80 ns/byte is raised.
    assert_eq!(
        hetscale_probe::p2p_probe::raise_g_to_sustained(&mut target),
        Some(1e-9)
    );
    assert!((target.network.g_s_per_byte - 80e-9).abs() < 1e-6 * 80e-9);
    // Each node's r_j restated against the new g: 1.2 x 1 ns/byte is below the wire.
    assert!(target.nodes.iter().all(|n| n.r == 1.0));
    assert_eq!(
        hetscale_probe::p2p_probe::raise_g_to_sustained(&mut target),
        None
    );
    // The platform still round-trips through its file form.
    let text = toml::to_string(&target).unwrap();
    assert!(text.contains("[[machine.p2p]]"), "{text}");
    let back: Platform = toml::from_str(&text).unwrap();
    assert_eq!(back.machine.unwrap().p2p, target.machine.unwrap().p2p);
}

#[test]
fn a_superstep_every_node_takes_part_in_stalls_more_and_the_probe_measures_it() {
    use hbsp::BarrierPoint;
    // Four nodes: a pair's superstep stalls 1 ms, one in which all four take part 4 ms.
    let mut p = common::platform(&[4.0, 1.0, 2.0, 3.0]);
    p.machine = Some(MachineModel {
        p2p: two_segments(),
        ..model()
    });
    p.network.l = BarrierCost::Table(vec![BarrierPoint {
        p: 4,
        l_s: L,
        message_stall_s: 1e-3,
        message_stall_all_s: Some(4e-3),
    }]);
    let m = p.all().unwrap();
    let elapsed = |senders: &'static [usize]| {
        common::sim_elapsed(&m, move |ctx| {
            if senders.contains(&ctx.pid()) {
                ctx.send((ctx.pid() + 1) % 4, 0, &[0u8; 8])?;
            }
            ctx.sync()
        })
    };
    let pair = elapsed(&[0]);
    // Three nodes take part: halfway between the stalls; four: the whole 4 ms. Each
    // transfer is one message of 8 B on the same link, so only the stall differs.
    assert!(
        close(elapsed(&[0, 1]) - pair, 1.5e-3),
        "{}",
        elapsed(&[0, 1]) - pair
    );
    assert!(
        close(elapsed(&[0, 2]) - pair, 3e-3),
        "{}",
        elapsed(&[0, 2]) - pair
    );
    // The ping-pong probe measures it back beside the pairs' (which `sim` charges every
    // ping-pong superstep alike, so their fastest holds it and no stall is left over).
    let report = ping_pong_on_sim(&m);
    assert!(report.stall_s < 1e-12, "{}", report.stall_s);
    assert!(
        (report.all_nodes_stall_s - 3e-3).abs() < 1e-6,
        "{}",
        report.all_nodes_stall_s
    );
    assert!(report.all_nodes_samples > 0);
    let mut target = p.clone();
    report
        .apply_to(&mut target, &|_: Option<&str>| "probe: test".into())
        .unwrap();
    let BarrierCost::Table(points) = &target.network.l else {
        panic!("a table")
    };
    assert_eq!(
        points[0].message_stall_all_s,
        Some(report.all_nodes_stall_s)
    );
}

#[test]
fn a_transfer_costs_the_slower_ends_segments_and_the_probe_finds_each_node() {
    use hetscale_machine::machine_model::P2pSegment;
    // Node n2 answers slowly: its own segments, 1 ms + 100 ns/byte.
    let mut p2p = two_segments();
    p2p.push(P2pSegment {
        node: Some("n2".into()),
        ..P2pSegment::new(16 << 20, 1e-3, 100e-9)
    });
    let mut p = common::platform(&[1.0, 1.0, 1.0]);
    p.network.l = BarrierCost::constant(L);
    p.machine = Some(MachineModel { p2p, ..model() });
    let m = p.all().unwrap();
    let to = |k: usize| {
        common::sim_elapsed(&m, move |ctx| {
            if ctx.pid() == 0 {
                ctx.send(k, 0, &[0u8; 1024])?;
            }
            ctx.sync()
        })
    };
    assert!(close(to(1), 20e-6 + 1024.0 * 1e-9 + L), "{}", to(1));
    assert!(close(to(2), 1e-3 + 1024.0 * 100e-9 + L), "{}", to(2));
    let report = ping_pong_on_sim(&m);
    // The network's: the fastest pair (n0-n1), two segments; n2's: its own line.
    assert_eq!(report.segments.len(), 2, "{:?}", report.segments);
    let n2 = &report.pair_segments[1];
    assert_eq!(n2.len(), 1, "{n2:?}");
    assert!((n2[0].latency_s - 1e-3).abs() < 1e-9 && (n2[0].s_per_byte - 100e-9).abs() < 1e-12);
}

#[test]
fn a_link_that_carries_one_direction_at_a_time_charges_a_swap_twice_and_the_probe_measures_it() {
    use hetscale_machine::duplex::{DuplexPoint, penalty_at};
    // Full duplex up to 64 KiB, one direction at a time from 1 MiB, linear between.
    let point = |bytes: u64, penalty: f64| DuplexPoint {
        p: None,
        bytes,
        penalty,
        source: None,
    };
    let duplex = vec![point(64 << 10, 0.0), point(1 << 20, 1.0)];
    let mut p = common::platform(&[1.0, 1.0]);
    p.network.l = BarrierCost::constant(L);
    p.machine = Some(MachineModel {
        p2p: two_segments(),
        duplex: duplex.clone(),
        ..model()
    });
    let m = p.all().unwrap();
    let elapsed = |bytes: usize, both: bool| {
        common::sim_elapsed(&m, move |ctx| {
            if ctx.pid() == 0 || both {
                ctx.send(1 - ctx.pid(), 0, &vec![0u8; bytes])?;
            }
            ctx.sync()
        })
    };
    // 1 MiB each way: the second direction's bytes (80 ns each) on top of the first's.
    let swap_cost = elapsed(1 << 20, true) - elapsed(1 << 20, false);
    assert!(close(swap_cost, (1 << 20) as f64 * 80e-9), "{swap_cost}");
    // 8 B each way: both at once, no dearer than one.
    assert!(close(elapsed(8, true), elapsed(8, false)));
    // The probe swaps each size and measures the penalty back where a size's bytes cost
    // more than its start-up (from 32 KiB on these segments), and writes those at its p.
    let report = ping_pong_on_sim(&m);
    for (&size, &got) in report.sizes.iter().zip(&report.duplex_penalty) {
        let want = penalty_at(&duplex, size as u64);
        match got {
            Some(got) => assert!((got - want).abs() < 1e-6, "{size} B: {got} vs {want}"),
            None => assert!(size < 32 << 10, "{size} B not measured"),
        }
    }
    let measured = report.duplex_penalty.iter().flatten().count();
    assert!(measured >= 4, "{measured} sizes measured");
    let mut target = p.clone();
    report
        .apply_to(&mut target, &|_: Option<&str>| "probe: test".into())
        .unwrap();
    let written = &target.machine.as_ref().unwrap().duplex;
    assert_eq!(written.len(), measured);
    assert!(written.iter().all(|d| d.p == Some(2)));
}

#[test]
fn a_superstep_after_compute_pays_the_measured_stall_and_the_probe_measures_it_back() {
    use hetscale_machine::compute_stall::{ComputeStallPoint, stall_at};
    let point = |compute_s: f64, stall_s: f64| ComputeStallPoint {
        p: 3,
        compute_s,
        stall_s,
        source: None,
    };
    let table = vec![
        point(0.5e-3, 0.2e-3),
        point(1e-3, 0.6e-3),
        point(4e-3, 1e-3),
    ];
    let with_table = |compute_stall: Vec<ComputeStallPoint>| {
        let mut p = common::platform(&[4.0, 1.0, 2.0]);
        p.network.l = BarrierCost::constant(L);
        p.machine = Some(MachineModel {
            p2p: two_segments(),
            compute_stall,
            ..model()
        });
        p
    };
    let (stalled, plain) = (with_table(table.clone()), with_table(Vec::new()));
    // Every node computes 2000 operations: 2 ms on the slowest (1 Mflop/s), then all send.
    let elapsed = |p: &Platform, ops: f64| {
        common::sim_elapsed(&p.all().unwrap(), move |ctx| {
            ctx.charge_work(ops)?;
            ctx.send((ctx.pid() + 1) % 3, 0, &[0u8; 8])?;
            ctx.sync()
        })
    };
    let extra = elapsed(&stalled, 2000.0) - elapsed(&plain, 2000.0);
    let want = stall_at(&table, 2e-3);
    assert!((want - (0.6e-3 + 0.4e-3 / 3.0)).abs() < 1e-15);
    assert!((extra - want).abs() < 1e-12, "{extra} vs {want}");
    // A superstep without compute pays none of it.
    assert!(close(elapsed(&stalled, 0.0), elapsed(&plain, 0.0)));
    // The probe computes each length on every node, then moves the supersteps of every node,
    // and reads the stall back: between the points, and the last one's beyond them. A length
    // beyond a 10 ms quota period is timed in one round of every eight.
    let options = hetscale_probe::p2p_probe::P2pProbeOptions {
        compute_stall_s: vec![0.5e-3, 2e-3, 8e-3, 30e-3],
        ..hetscale_probe::p2p_probe::P2pProbeOptions::quick()
    };
    let [backend, _] = common::sim_declared();
    let report =
        hetscale_probe::p2p_probe::probe_p2p(&backend, &stalled.all().unwrap(), &options).unwrap();
    assert_eq!(report.compute_stall_s, vec![0.5e-3, 2e-3, 8e-3, 30e-3]);
    let rounds = 8 * options.stall_samples;
    assert_eq!(
        report.compute_stall_samples,
        vec![rounds, rounds, rounds, rounds / 8]
    );
    for (&d, &(got, [lo, hi])) in report.compute_stall_s.iter().zip(&report.compute_stall) {
        let want = stall_at(&table, d);
        assert!((got - want).abs() < 1e-9, "after {d} s: {got} vs {want}");
        assert!(lo <= got && got <= hi);
    }
    // On a platform without the table it reads 0, and writes its points at its p.
    let report =
        hetscale_probe::p2p_probe::probe_p2p(&backend, &plain.all().unwrap(), &options).unwrap();
    assert!(
        report.compute_stall.iter().all(|&(s, _)| s < 1e-9),
        "{report:?}"
    );
    let mut target = stalled.clone();
    report
        .apply_to(&mut target, &|_: Option<&str>| "probe: test".into())
        .unwrap();
    let written = &target.machine.as_ref().unwrap().compute_stall;
    assert_eq!(written.len(), 4);
    assert!(written.iter().all(|d| d.p == 3 && d.stall_s < 1e-9));
    assert!(
        written[0]
            .source
            .as_deref()
            .unwrap()
            .starts_with("probe: test; supersteps")
    );
}
