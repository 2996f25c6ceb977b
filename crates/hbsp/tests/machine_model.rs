//! `sim` on a platform with a machine model, against the model's closed forms
//! (see `hetscale_machine::machine_model`).

mod common;

use common::model::{L, LATENCY, LINK, close, model, platform, two_segments};

use hbsp::collectives::{self, BroadcastAlgorithm, Root};
use hbsp::{Backend, BarrierCost, HbspError, Machine, Platform};
use hetscale_machine::machine_model::{
    Barrier, CollectiveCost, ComputeRate, MachineModel, Topology,
};

fn machine(model: MachineModel, kernel: &str) -> Machine {
    platform(model).all().unwrap().for_workload(kernel)
}

/// One superstep: node `j` computes `ops[j]` and node 0 sends `bytes` to node 1.
fn one_superstep(m: &Machine, ops: [f64; 2], bytes: usize) -> f64 {
    common::sim_elapsed(m, |ctx| {
        ctx.charge_work(ops[ctx.pid()])?;
        if ctx.pid() == 0 && bytes > 0 {
            ctx.send(1, 0, &vec![0u8; bytes])?;
        }
        ctx.sync()
    })
}

#[test]
fn compute_runs_at_the_hockney_rate_of_the_kernel_and_kind() {
    let mut m = model();
    m.compute = vec![
        ComputeRate {
            kernel: "mm".into(),
            rate_fraction: 0.5,
            half_work: 1e5,
            ..ComputeRate::default()
        },
        ComputeRate {
            kernel: "mm".into(),
            kind: "slow".into(),
            rate_fraction: 0.25,
            ..ComputeRate::default()
        },
    ];
    let fast: f64 = (1e6 + 1e5) / (0.5 * 4e6);
    let slow = 1e5 / (0.25 * 1e6);
    let t = one_superstep(&machine(m.clone(), "mm"), [1e6, 1e5], 0);
    assert!(close(t, fast.max(slow) + L), "{t}");
    // Another kernel has no entry: marked speed.
    let t = one_superstep(&machine(m, "ge"), [1e6, 1e5], 0);
    assert!(close(t, 1e6 / 4e6 + L), "{t}");
}

#[test]
fn a_message_costs_the_link_and_the_latency_not_g() {
    let t = one_superstep(&machine(model(), "mm"), [0.0, 0.0], 50_000);
    // Node 1 (r = 1.1) receives 50 kB: r h / link + one message's latency.
    let expected = 1.1 * 50_000.0 / LINK + LATENCY + L;
    assert!(close(t, expected), "{t} vs {expected}");
    let hbsp = one_superstep(&machine(model(), "mm").without_model(), [0.0, 0.0], 50_000);
    assert!(close(hbsp, 1e-9 * 1.1 * 50_000.0 + L), "{hbsp}");
}

#[test]
fn a_measured_stall_is_charged_on_supersteps_that_move_messages_only() {
    use hbsp::BarrierPoint;
    let stall = 3e-4;
    let mut p = platform(model());
    p.network.l = BarrierCost::Table(vec![BarrierPoint {
        p: 2,
        l_s: L,
        message_stall_s: stall,
        message_stall_all_s: None,
    }]);
    let m = p.all().unwrap().for_workload("mm");
    let without = machine(model(), "mm");
    // Its transfer, its barrier and the stall; an empty superstep only its barrier.
    let moved = one_superstep(&m, [0.0, 0.0], 50_000);
    let expected = one_superstep(&without, [0.0, 0.0], 50_000) + stall;
    assert!(close(moved, expected), "{moved} vs {expected}");
    assert!(close(one_superstep(&m, [0.0, 0.0], 0), L));
    // The HBSP^1 charge (no machine model) adds it alike.
    let hbsp = one_superstep(&m.without_model(), [0.0, 0.0], 50_000);
    assert!(close(hbsp, 1e-9 * 1.1 * 50_000.0 + L + stall), "{hbsp}");
    let text = toml::to_string(&p).unwrap();
    assert!(text.contains("message_stall_s"), "{text}");
    assert_eq!(
        Platform::from_toml_str(&text).unwrap().network.l,
        p.network.l
    );
    let negative = text.replace("message_stall_s = 0.0003", "message_stall_s = -0.0003");
    let err = Platform::from_toml_str(&negative).unwrap_err().to_string();
    assert!(err.contains("message_stall_s must be >= 0"), "{err}");
}

/// One superstep in which node `from` sends `bytes` to the other node.
fn one_transfer(m: &Machine, from: usize, bytes: usize) -> f64 {
    common::sim_elapsed(m, |ctx| {
        if ctx.pid() == from {
            ctx.send(1 - from, 0, &vec![0u8; bytes])?;
        }
        ctx.sync()
    })
}

#[test]
fn a_receiver_pays_its_receive_cost_at_its_own_r_j() {
    const RECEIVE: f64 = 2e-6;
    let mut m = model();
    m.receive_s_per_byte = RECEIVE;
    let machine = machine(m, "mm");
    // Node 1 (r = 1.1) receives 50 kB: its port, then 1.1 x 2 us a byte to take them in.
    let to_slow = one_transfer(&machine, 0, 50_000);
    let expected = 1.1 * 50_000.0 / LINK + 1.1 * RECEIVE * 50_000.0 + LATENCY + L;
    assert!(close(to_slow, expected), "{to_slow} vs {expected}");
    // Node 0 (r = 1) receives: its receive (0.1 s) outweighs node 1's port (0.055 s).
    let to_fast = one_transfer(&machine, 1, 50_000);
    let expected = 50_000.0 / LINK + RECEIVE * 50_000.0 + LATENCY + L;
    assert!(close(to_fast, expected), "{to_fast} vs {expected}");
    // Williams & Parsons' p = 2 scatter: the slow node sending beats the slow node receiving.
    assert!(to_fast < to_slow);
}

#[test]
fn the_receive_cost_is_off_by_default() {
    assert_eq!(MachineModel::with_link(LINK).receive_s_per_byte, 0.0);
    let text = platform(model()).to_toml_string().unwrap();
    assert!(!text.contains("receive_s_per_byte"), "{text}");
    let parsed = Platform::from_toml_str(&text).unwrap();
    assert_eq!(parsed.machine.unwrap().receive_s_per_byte, 0.0);
    for preset in hetscale_machine::presets::all() {
        let receive = preset.machine.map_or(0.0, |m| m.receive_s_per_byte);
        assert_eq!(receive, 0.0, "preset {}", preset.name);
    }
    // Without it a transfer costs the slower end's port whichever end sends.
    let machine = machine(model(), "mm");
    assert!(close(
        one_transfer(&machine, 0, 50_000),
        one_transfer(&machine, 1, 50_000)
    ));
}

#[test]
fn a_bad_receive_cost_is_named() {
    for bad in ["-1e-6", "nan"] {
        let text = platform(model()).to_toml_string().unwrap().replace(
            "[machine]\n",
            &format!("[machine]\nreceive_s_per_byte = {bad}\n"),
        );
        let err = Platform::from_toml_str(&text).unwrap_err().to_string();
        assert!(
            err.contains("receive_s_per_byte must be >= 0"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn a_shared_backplane_slows_concurrent_senders() {
    let mut m = model();
    m.latency_s = 0.0;
    m.backplane_bytes_per_s = 1.5e6;
    let machine = platform(m).all().unwrap();
    let t = common::sim_elapsed(&machine, |ctx| {
        ctx.send(1 - ctx.pid(), 0, &vec![0u8; 30_000])?;
        ctx.sync()
    });
    // Ports alone: 1.1 x 30 kB / 1 MB/s = 33 ms; the switch moves 60 kB at 1.5 MB/s: 40 ms.
    assert!(close(t, 60_000.0 / 1.5e6 + L), "{t}");
}

#[test]
fn a_measured_broadcast_replaces_its_communication_and_barrier() {
    let mut m = model();
    let broadcast = CollectiveCost {
        name: "broadcast".into(),
        base_s: 0.12e-3,
        per_node_s: 0.23e-3,
        per_log2_node_byte_s: 1e-7,
        ..CollectiveCost::default()
    };
    m.collectives = vec![broadcast.clone()];
    let machine = platform(m).all().unwrap();
    let t = common::sim_elapsed(&machine, |ctx| {
        let data = vec![1.0f64; 1000];
        collectives::broadcast(ctx, Root::Pid(0), &data, BroadcastAlgorithm::OnePhase)?;
        Ok::<_, HbspError>(())
    });
    let expected = broadcast.at(2, 8000.0);
    assert!(close(t, expected), "{t} vs {expected}");
}

#[test]
fn a_hypercube_charges_collectives_in_log2_p_steps_and_supersteps_without_a_barrier() {
    let mut m = model();
    m.topology = Topology::Hypercube;
    m.barrier = Barrier::None;
    let mut platform = common::platform(&[1.0; 8]);
    platform.machine = Some(m);
    let machine = platform.all().unwrap();
    let sim = Backend::sim_declared();
    let broadcast = hbsp::run(&sim, &machine, |ctx| {
        collectives::broadcast(ctx, Root::Pid(0), &[1.0f64], BroadcastAlgorithm::OnePhase)
            .map(|c| c.value)
    })
    .unwrap()
    .elapsed_s;
    // 3 dimensions, each one neighbour transfer alpha + beta S of the 8 B.
    assert!(
        close(broadcast, 3.0 * (LATENCY + 8.0 / LINK)),
        "{broadcast}"
    );
    let allgather = hbsp::run(&sim, &machine, |ctx| {
        collectives::allgather(ctx, &[1.0f64, 2.0]).map(|c| c.value)
    })
    .unwrap()
    .elapsed_s;
    // 3 latencies, and the 7 x 16 B every node receives.
    assert!(
        close(allgather, 3.0 * LATENCY + 7.0 * 16.0 / LINK),
        "{allgather}"
    );
    let shift = hbsp::run(&sim, &machine, |ctx| {
        if ctx.pid() == 0 {
            ctx.send(1, 0, &[0u8; 8])?;
        }
        ctx.sync()
    })
    .unwrap()
    .elapsed_s;
    // Node 1 (r = 1.1) receives 8 B in one message, and no L follows.
    assert!(close(shift, 1.1 * 8.0 / LINK + LATENCY), "{shift}");
}

#[test]
fn measured_collectives_count_processes_and_scale_with_the_kernels_collective_scale() {
    let broadcast = CollectiveCost {
        name: "broadcast".into(),
        base_s: 0.12e-3,
        per_node_s: 0.23e-3,
        ..CollectiveCost::default()
    };
    let mut m = model();
    m.collectives = vec![broadcast.clone()];
    m.compute = vec![ComputeRate {
        kernel: "ge".into(),
        collective_scale: 0.5,
        ..ComputeRate::default()
    }];
    let mut two_cpus = platform(m);
    two_cpus.nodes[0].cpus = 2;
    two_cpus.network.l = BarrierCost::Formula {
        base_s: 0.0,
        per_node_s: 1e-5,
        per_log2_node_s: 0.0,
    };
    let run = |machine: &Machine| {
        common::sim_elapsed(machine, |ctx| {
            collectives::broadcast(
                ctx,
                Root::Pid(0),
                &[1.0f64; 10],
                BroadcastAlgorithm::OnePhase,
            )?;
            ctx.sync()
        })
    };
    // `fast*2,slow`: two nodes, three processes (JPDC's T_broadcast counts processes).
    let machine = two_cpus.select(&"n0*2,n1".parse().unwrap()).unwrap();
    assert_eq!((machine.p(), machine.processes()), (2, 3));
    let barrier = machine.l_s();
    assert!(close(barrier, 3e-5), "{barrier}");
    let t = run(&machine);
    assert!(close(t, broadcast.at(3, 80.0) + barrier), "{t}");
    // GE's code pays half of both.
    let t = run(&machine.for_workload("ge"));
    assert!(close(t, 0.5 * (broadcast.at(3, 80.0) + barrier)), "{t}");
}

#[test]
fn a_run_pays_its_start_up_per_process_once() {
    let mut m = model();
    m.compute = vec![ComputeRate {
        kernel: "ge".into(),
        run_overhead_s: 0.5,
        process_overhead_s: 0.03,
        ..ComputeRate::default()
    }];
    let mut two_cpus = platform(m);
    two_cpus.nodes[0].cpus = 2;
    let machine = two_cpus
        .select(&"n0*2,n1".parse().unwrap())
        .unwrap()
        .for_workload("ge");
    let t = common::sim_elapsed(&machine, |ctx| ctx.sync());
    assert!(close(t, machine.l_s() + 0.5 + 3.0 * 0.03), "{t}");
}

#[test]
fn a_run_pays_its_kernels_start_up_once_and_supersteps_their_fixed_cost() {
    let mut m = model();
    m.superstep_s = 2e-3;
    m.compute = vec![ComputeRate {
        kernel: "ge".into(),
        run_overhead_s: 0.5,
        ..ComputeRate::default()
    }];
    let machine = machine(m, "ge");
    let t = common::sim_elapsed(&machine, |ctx| (0..3).try_for_each(|_| ctx.sync()));
    assert!(close(t, 3.0 * (L + 2e-3) + 0.5), "{t}");
}

#[test]
fn jitter_is_deterministic_and_moves_compute_only() {
    let mut m = model();
    m.jitter = 0.2;
    let a = one_superstep(&machine(m.clone(), "mm"), [1e6, 0.0], 0);
    let b = one_superstep(&machine(m.clone(), "mm"), [1e6, 0.0], 0);
    assert_eq!(a, b);
    let expected = 0.25 * m.jitter_factor(0) + L;
    assert!(close(a, expected), "{a} vs {expected}");
    assert!((a - (0.25 + L)).abs() > 1e-6, "jitter 0.2 changed nothing");
}

#[test]
fn a_machine_model_round_trips_through_toml() {
    let mut m = model();
    m.collectives = vec![CollectiveCost {
        name: "broadcast".into(),
        base_s: 1e-4,
        ..CollectiveCost::default()
    }];
    m.compute = vec![ComputeRate {
        kernel: "mm".into(),
        rate_fraction: 0.3,
        ..ComputeRate::default()
    }];
    m.topology = Topology::Torus;
    m.barrier = Barrier::None;
    let p = platform(m);
    let text = p.to_toml_string().unwrap();
    assert!(text.contains("topology = \"torus\""), "{text}");
    assert_eq!(Platform::from_toml_str(&text).unwrap(), p);
    let bad = text.replace("rate_fraction = 0.3", "rate_fraction = 0.0");
    let err = Platform::from_toml_str(&bad).unwrap_err().to_string();
    assert!(err.contains("rate_fraction must be > 0"), "{err}");
}

#[test]
fn a_measured_collective_of_two_supersteps_is_charged_once() {
    let mut m = model();
    let broadcast = CollectiveCost {
        name: "broadcast".into(),
        base_s: 1e-3,
        per_node_s: 1e-4,
        ..CollectiveCost::default()
    };
    m.collectives = vec![broadcast.clone()];
    let machine = platform(m).all().unwrap();
    let t = common::sim_elapsed(&machine, |ctx| {
        let data = vec![1.0f64; 1000];
        collectives::broadcast(ctx, Root::Pid(0), &data, BroadcastAlgorithm::TwoPhase)?;
        Ok::<_, HbspError>(())
    });
    assert!(close(t, broadcast.at(2, 8000.0)), "{t}");
    assert!(close(t, 1e-3 + 2e-4), "{t}");
}

#[test]
fn a_p2p_model_charges_each_transfer_by_its_segment() {
    let model = MachineModel {
        p2p: two_segments(),
        ..model()
    };
    let m = machine(model, "mm");
    // 1 MiB: the second segment; latency_s and the link no longer apply.
    let big = one_superstep(&m, [0.0, 0.0], 1 << 20);
    assert!(close(big, 5e-3 + (1 << 20) as f64 * 80e-9 + L), "{big}");
    // 1 KiB: the first.
    let small = one_superstep(&m, [0.0, 0.0], 1 << 10);
    assert!(close(small, 20e-6 + 1024.0 * 1e-9 + L), "{small}");
    // Beyond the last segment's max_bytes: the last segment, extrapolated.
    let huge = one_superstep(&m, [0.0, 0.0], 32 << 20);
    assert!(close(huge, 5e-3 + (32 << 20) as f64 * 80e-9 + L), "{huge}");
}

#[test]
fn a_nodes_transfers_overlap_their_start_ups_and_queue_their_bytes() {
    // As measured on the testbed (an MPI fan-out: one rank sending to 1, 2 or 3 others at
    // once, 100 Mbit/s links): 8 B to three hosts took as long as to one, 1 MiB to three
    // three times as long as to one.
    let model = MachineModel {
        p2p: two_segments(),
        ..model()
    };
    let mut p = common::platform(&[1.0, 1.0, 1.0]);
    p.network.l = BarrierCost::constant(L);
    p.machine = Some(model);
    let m = p.all().unwrap();
    let fan_out = |bytes: usize| {
        common::sim_elapsed(&m, move |ctx| {
            if ctx.pid() == 0 {
                ctx.send(1, 0, &vec![0u8; bytes])?;
                ctx.send(2, 0, &vec![0u8; bytes])?;
            }
            ctx.sync()
        })
    };
    // Two transfers of 1 KiB out of node 0: one start-up, both transfers' bytes.
    let t = fan_out(1024);
    assert!(close(t, 20e-6 + 2.0 * 1024.0 * 1e-9 + L), "{t}");
    // Two of 1 MiB: the second segment's start-up once, 2 MiB at 80 ns/byte.
    let t = fan_out(1 << 20);
    assert!(close(t, 5e-3 + 2.0 * (1 << 20) as f64 * 80e-9 + L), "{t}");
}

#[test]
fn a_burst_buckets_negative_start_up_is_charged_once_per_node() {
    use hetscale_machine::machine_model::P2pSegment;
    // A shaped link: 80 ns/byte beyond a 1 MiB burst, as `probe --p2p` fits it.
    let mut p2p = two_segments();
    p2p[1] = P2pSegment::new(16 << 20, -40e-3, 80e-9);
    p2p[0] = P2pSegment::new(1 << 19, 20e-6, 1e-9);
    let mut p = common::platform(&[1.0, 1.0, 1.0]);
    p.network.l = BarrierCost::constant(L);
    p.machine = Some(MachineModel { p2p, ..model() });
    let m = p.all().unwrap();
    let t = common::sim_elapsed(&m, |ctx| {
        if ctx.pid() == 0 {
            ctx.send(1, 0, &vec![0u8; 4 << 20])?;
            ctx.send(2, 0, &vec![0u8; 4 << 20])?;
        }
        ctx.sync()
    });
    let expected = -40e-3 + 2.0 * (4 << 20) as f64 * 80e-9 + L;
    assert!(close(t, expected), "{t} vs {expected}");
    // A start-up that makes a segment's first size cost less than nothing is refused.
    let mut bad = two_segments();
    bad[1] = P2pSegment::new(16 << 20, -1.0, 80e-9);
    let err = MachineModel {
        p2p: bad,
        ..model()
    }
    .validate()
    .unwrap_err();
    assert!(err.contains("negative cost"), "{err}");
    let refused = |p2p: Vec<P2pSegment>| MachineModel { p2p, ..model() }.validate().unwrap_err();
    let mut first = two_segments();
    first[0] = P2pSegment::new(1 << 10, -1e-3, 1e-9);
    let err = refused(first);
    assert!(err.ends_with("at least 0"), "{err}");
    let mut nan = two_segments();
    nan[1] = P2pSegment::new(16 << 20, f64::NAN, 80e-9);
    assert!(refused(nan).contains("not a number"));
}

#[test]
fn a_run_is_charged_the_segments_measured_on_its_machine_size() {
    use hetscale_machine::machine_model::P2pSegment;
    // Start-ups of 1 ms measured on 2 nodes, 3 ms on 4 (n1 on 4: 5 ms).
    let at = |p: usize, node: Option<&str>, latency: f64| P2pSegment {
        p: Some(p),
        node: node.map(str::to_owned),
        ..P2pSegment::new(16 << 20, latency, 0.0)
    };
    let p2p = vec![
        at(2, None, 1e-3),
        at(4, None, 3e-3),
        at(4, Some("n1"), 5e-3),
    ];
    let mut p = common::platform(&[1.0, 1.0, 1.0, 1.0, 1.0]);
    p.network.l = BarrierCost::constant(L);
    p.machine = Some(MachineModel { p2p, ..model() });
    let send_to_1 = |nodes: usize| {
        let m = p.select(&hbsp::NodeSet::First(nodes)).unwrap();
        common::sim_elapsed(&m, |ctx| {
            if ctx.pid() == 0 {
                ctx.send(1, 0, &[0u8; 64])?;
            }
            ctx.sync()
        })
    };
    // 2 and 3 nodes: the 2-node segments (the most nodes measured at most p); 4 and 5: the
    // 4-node ones, n1 (pid 1) its own.
    assert!(close(send_to_1(2), 1e-3 + L), "{}", send_to_1(2));
    assert!(close(send_to_1(3), 1e-3 + L), "{}", send_to_1(3));
    assert!(close(send_to_1(4), 5e-3 + L), "{}", send_to_1(4));
    assert!(close(send_to_1(5), 5e-3 + L), "{}", send_to_1(5));
    // Below every measured size: the fewest nodes measured.
    assert_eq!(
        hetscale_machine::machine_model::p2p_level(&p.machine.as_ref().unwrap().p2p, 1),
        Some(2)
    );
    // Sized and unsized segments together, a size of 0 and a size without the network's
    // segments are refused.
    let refused = |p2p: Vec<P2pSegment>| MachineModel { p2p, ..model() }.validate().unwrap_err();
    let err = refused(vec![at(2, None, 1e-3), P2pSegment::new(1 << 20, 1e-3, 0.0)]);
    assert!(err.contains("give every one its p"), "{err}");
    assert!(refused(vec![at(0, None, 1e-3)]).contains(">= 1"));
    let err = refused(vec![at(2, None, 1e-3), at(4, Some("n1"), 1e-3)]);
    assert!(
        err.contains("measured on 4 nodes only for named nodes"),
        "{err}"
    );
}

#[test]
fn a_platform_file_holds_the_compute_stall_and_refuses_a_negative_one() {
    let text = |stall: &str| {
        format!(
            "name = \"t\"\nspeed_unit = \"Mflop/s\"\n[[node]]\nname = \"a\"\nmarked_speed = 1.0\n[network]\ng_s_per_byte = 1e-9\nL = {{ base_s = 1e-5, per_node_s = 0.0, per_log2_node_s = 0.0 }}\n[machine]\nlink_bytes_per_s = 1e6\n[[machine.compute_stall]]\np = 2\ncompute_s = 0.001\nstall_s = {stall}\nsource = \"probe: test\"\n"
        )
    };
    let platform = Platform::from_toml_str(&text("0.0009")).unwrap();
    let points = &platform.machine.as_ref().unwrap().compute_stall;
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].stall_s, 0.0009);
    let again = Platform::from_toml_str(&platform.to_toml_string().unwrap()).unwrap();
    assert_eq!(again, platform);
    let err = Platform::from_toml_str(&text("-1.0"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("stall_s = -1"), "{err}");
}
