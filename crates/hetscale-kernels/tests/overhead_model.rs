//! Every kernel's time model (compute at marked speed plus its HBSP^1 overhead model, the
//! basis of approach 3) against the simulator, which charges the same HBSP^1 costs per
//! superstep: they must agree closely, or predicted sizes would drift from measured ones.
//!
//! Two machine families: Sunwulf selections (all `r_j = 1`, per-message overhead `o` and
//! `L = 0.39 ms x p`), and the UCF cluster of Williams & Parsons with its unequal injection
//! slowness `r_j` (up to 4.08), so a model that forgot `r_j` on any message would show.

use hbsp::{
    Backend, BarrierCost, BarrierPoint, Machine, Network, Node, Platform, SimOptions, WorkCharge,
};
use hetscale_kernels::{KernelOptions, flops_per_unit, kernel_by_name};
use hetscale_machine::paper_machines::UCF_NODES;

/// The simulator charging declared work; `skip_compute` skips the compute blocks (skeleton
/// execution: GE then pivots in natural order).
fn sim(skip_compute: bool) -> Backend {
    Backend::Sim(SimOptions {
        work: WorkCharge::Declared,
        skip_compute,
        ..SimOptions::default()
    })
}

/// Sunwulf selections: two nodes, a mixed eight and a 16-node machine of 15 SunBlades.
fn sunwulf() -> Vec<(String, Machine)> {
    let platform = Platform::load("sunwulf").unwrap();
    [
        "server:1,sunfire:1",
        "server:1,sunblade:3,sunfire:4",
        "server*2:1,sunblade:15",
    ]
    .iter()
    .map(|nodes| {
        // The HBSP^1 closed forms hold on sim without the machine model.
        let machine = platform
            .select(&nodes.parse().unwrap())
            .unwrap()
            .without_model();
        (format!("sunwulf {nodes}"), machine)
    })
    .collect()
}

/// The first `p` UCF workstations with their published `r_j`, `g` and `L(p)`, but with the
/// BYTEmark indices read as Mflop/s so the simulator can charge declared work, and with
/// Sunwulf's per-message overhead so `o` meets unequal `r_j` too.
fn ucf() -> Vec<(String, Machine)> {
    let mut platform = Platform::load("ucf-cluster").unwrap();
    platform.speed_unit = "Mflop/s".into();
    platform.network.o_s = 0.08e-3;
    [2, 4, 10]
        .into_iter()
        .map(|p| {
            let mut some = platform.clone();
            some.nodes.truncate(p);
            assert!(some.nodes.iter().zip(UCF_NODES).all(|(n, u)| n.r == u.r));
            (format!("ucf p = {p}"), some.all().unwrap())
        })
        .collect()
}

/// Four UCF workstations and a fifth node 50 times slower than the slowest of them (with
/// chromus' `r = 4.08`): its integer share of a small problem is zero, so the models must
/// count the empty messages the collectives still send and skip the ones they do not.
fn ucf_with_a_straggler() -> (String, Machine) {
    let mut platform = Platform::load("ucf-cluster").unwrap();
    platform.speed_unit = "Mflop/s".into();
    platform.network.o_s = 0.08e-3;
    platform.nodes.truncate(4);
    let straggler =
        Node::new("straggler", UCF_NODES[1].integer_index / 50.0).with_r(UCF_NODES[1].r);
    platform.nodes.push(straggler);
    ("ucf p = 4 + straggler".into(), platform.all().unwrap())
}

/// Eight nodes on a slow network with nearly free barriers, where GE's broadcasts go
/// two-phase (`BroadcastAlgorithm::Auto` picks by predicted cost); the last node's share of
/// a small problem is zero.
fn bandwidth_bound() -> (String, Machine) {
    let nodes = [
        (50.0, 1.0),
        (40.0, 1.5),
        (40.0, 1.0),
        (30.0, 2.0),
        (30.0, 1.0),
        (20.0, 3.0),
    ]
    .into_iter()
    .chain([(10.0, 1.2), (0.2, 4.0)])
    .enumerate()
    .map(|(i, (speed, r))| Node::new(format!("n{i}"), speed).with_r(r))
    .collect();
    let mut network = Network::new(1e-6, BarrierCost::constant(1e-6));
    network.o_s = 1e-6;
    let platform = Platform {
        name: "bandwidth-bound".into(),
        description: String::new(),
        speed_unit: "Mflop/s".into(),
        nodes,
        network,
        machine: None,
    };
    ("bandwidth-bound p = 8".into(), platform.all().unwrap())
}

/// The UCF cluster's first four nodes with a measured `L` table whose points carry stalls
/// of message supersteps (`message_stall_s` and `message_stall_all_s`, as `probe --p2p`
/// writes them): charged on every superstep that moves a message and on no other, more the
/// more nodes take part, which a model must count alike.
fn ucf_with_a_message_stall() -> (String, Machine) {
    let mut platform = Platform::load("ucf-cluster").unwrap();
    platform.speed_unit = "Mflop/s".into();
    platform.nodes.truncate(4);
    let point = |p, l_s, message_stall_s, message_stall_all_s| BarrierPoint {
        p,
        l_s,
        message_stall_s,
        message_stall_all_s,
    };
    platform.network.l = BarrierCost::Table(vec![
        point(2, 1e-4, 2e-4, None),
        point(8, 4e-4, 2e-3, Some(6e-3)),
    ]);
    (
        "ucf p = 4 with a message stall".into(),
        platform.all().unwrap(),
    )
}

fn machines() -> Vec<(String, Machine)> {
    let mut all = sunwulf();
    all.extend(ucf());
    all.push(ucf_with_a_straggler());
    all.push(bandwidth_bound());
    all.push(ucf_with_a_message_stall());
    all
}

/// Relative error of the model's time against the simulated time.
fn model_error(
    kernel: &str,
    options: &KernelOptions,
    (name, machine): &(String, Machine),
    n: usize,
    backend: &Backend,
) -> f64 {
    let k = kernel_by_name(kernel, options).unwrap();
    let run = k.run(&k.generate(n, 1).unwrap(), backend, machine).unwrap();
    let overhead = k.overhead(n, machine).unwrap();
    let unit = flops_per_unit(machine.speed_unit()).unwrap();
    let root = machine.marked_speed(machine.ranking()[0]) * unit;
    let model = overhead.predicted_time_s(run.work, machine.cluster_speed() * unit, root);
    let error = (model - run.time_s) / run.time_s;
    eprintln!(
        "{kernel} {name} N = {n}: sim {:.6e} s, model {model:.6e} s, error {error:+.1e}",
        run.time_s
    );
    error
}

/// The largest relative error of the model against `backend` over every machine and size.
fn worst_error(kernel: &str, options: &KernelOptions, sizes: &[usize], backend: &Backend) -> f64 {
    let worst = machines()
        .iter()
        .flat_map(|machine| {
            sizes
                .iter()
                .map(move |&n| model_error(kernel, options, machine, n, backend).abs())
        })
        .fold(0.0, f64::max);
    eprintln!("{kernel}: worst error {worst:.1e}");
    worst
}

/// Asserts the model reproduces the simulator's skeleton runs on every machine and size.
/// The models replay the programs' supersteps, so they agree up to floating-point rounding.
fn check(kernel: &str, options: &KernelOptions, sizes: &[usize]) {
    let worst = worst_error(kernel, options, sizes, &sim(true));
    assert!(
        worst < 1e-9,
        "{kernel}: the model is {worst:.1e} off the simulator"
    );
}

#[test]
fn mm_model_matches_the_simulator() {
    check("mm", &KernelOptions::default(), &[24, 100, 300]);
}

#[test]
fn ge_model_matches_the_simulator() {
    let options = KernelOptions {
        pivoting: "none".into(),
        ..KernelOptions::default()
    };
    check("ge", &options, &[32, 128, 400]);
}

#[test]
fn ge_in_blocks_model_matches_the_simulator() {
    // Blocks of 7 rows, N not a multiple of 7 (a short last block); at N = 401 some
    // broadcasts of the bandwidth-bound machine are two-phase.
    let options = KernelOptions {
        pivoting: "none".into(),
        block: 7,
        ..KernelOptions::default()
    };
    check("ge", &options, &[32, 128, 401]);
    // Without pivoting a run with data takes the same steps as a skeleton.
    let worst = worst_error("ge", &options, &[61], &sim(false));
    assert!(worst < 1e-9, "ge in blocks on data: {worst:.1e}");
}

#[test]
fn ge_in_blocks_sampled_at_scale_stays_within_a_thousandth() {
    // 384 nodes of the UCF workstations' speeds and unequal r_j, over 100,000 node-steps:
    // the model samples the broadcasts (every step's compute stays exact).
    let mut platform = Platform::load("ucf-cluster").unwrap();
    platform.speed_unit = "Mflop/s".into();
    platform.network.o_s = 0.08e-3;
    let kinds = platform.nodes.clone();
    platform.nodes = (0..384)
        .map(|j| {
            let kind = &kinds[j % kinds.len()];
            Node::new(format!("n{j}"), kind.marked_speed).with_r(kind.r)
        })
        .collect();
    let machine = ("ucf x 384".to_string(), platform.all().unwrap());
    let options = KernelOptions {
        pivoting: "none".into(),
        block: 3,
        ..KernelOptions::default()
    };
    let error = model_error("ge", &options, &machine, 2001, &sim(true));
    assert!(error.abs() < 1e-3, "ge in blocks at p = 384: {error:.1e}");
}

#[test]
fn ge_with_partial_pivoting_model_matches_the_simulator() {
    // Skeleton runs pivot in natural order, the order the model assumes.
    check("ge", &KernelOptions::default(), &[32, 128]);
}

#[test]
fn ge_with_partial_pivoting_on_real_data_stays_close() {
    // Real pivots move the pivot rows' owners (who broadcasts, whose remaining rows shrink),
    // which the model cannot know; on these seeded inputs that costs it about 1%.
    let worst = worst_error("ge", &KernelOptions::default(), &[32, 128], &sim(false));
    assert!(
        worst < 0.02,
        "ge: the model is {worst:.1e} off the simulator"
    );
}

#[test]
fn conv2d_model_matches_the_simulator() {
    check("conv2d", &KernelOptions::default(), &[32, 128]);
}

#[test]
fn burg_model_matches_the_simulator() {
    check("burg", &KernelOptions::default(), &[1000, 20000]);
}

#[test]
fn slalom_model_matches_the_simulator() {
    check("slalom", &KernelOptions::default(), &[24, 90]);
}

/// SUMMA with `strategy` and panel width 16, so even N = 64 pipelines several panels.
fn summa(strategy: &str) {
    let options = KernelOptions {
        strategy: strategy.into(),
        nb: 16,
        ..KernelOptions::default()
    };
    check("summa", &options, &[64, 192]);
}

#[test]
fn summa_hoho_model_matches_the_simulator() {
    summa("hoho");
}

#[test]
fn summa_heho_model_matches_the_simulator() {
    summa("heho");
}

#[test]
fn summa_hohe1_model_matches_the_simulator() {
    summa("hohe1");
}

#[test]
fn summa_hohe2_model_matches_the_simulator() {
    summa("hohe2");
}

/// Sunwulf whose collectives are all measured (section 4.5's broadcast, `T_send`-based
/// scatter and gather, and made-up all-gather and all-to-all terms), listed both in the
/// machine model `sim` charges and in the network the models read (as `hetscale probe
/// --collectives` writes it): kernels made of collectives only are then charged alike.
fn sunwulf_with_measured_collectives() -> Vec<(String, Machine)> {
    let mut platform = Platform::load("sunwulf").unwrap();
    let model = platform.machine.as_mut().unwrap();
    for (name, per_byte_s) in [("allgather", 4e-9), ("alltoallv", 6e-9)] {
        model
            .collectives
            .push(hetscale_machine::machine_model::CollectiveCost {
                name: name.into(),
                base_s: 0.1e-3,
                per_node_s: 0.05e-3,
                per_byte_s,
                ..Default::default()
            });
    }
    platform.network.collectives = model.collectives.clone();
    ["server:1,sunfire:1", "server:1,sunblade:3,sunfire:4"]
        .iter()
        .map(|nodes| {
            let machine = platform.select(&nodes.parse().unwrap()).unwrap();
            (format!("sunwulf {nodes}, measured collectives"), machine)
        })
        .collect()
}

#[test]
fn measured_collectives_are_charged_as_sim_charges_them() {
    for kernel in ["mm", "conv2d"] {
        for machine in sunwulf_with_measured_collectives() {
            for n in [32, 128] {
                let error = model_error(kernel, &KernelOptions::default(), &machine, n, &sim(true));
                assert!(error.abs() < 1e-9, "{kernel} on {}: {error:.1e}", machine.0);
            }
        }
    }
}

/// The UCF cluster's first four nodes, a thousand times faster and with a barrier of 10 us
/// (so that the transfers weigh), with `[[machine.p2p]]` segments measured on 2 and on 4
/// nodes (start-ups of 0.3 and 0.6 ms to 16 KiB, then 80 ns/byte less a 1 ms burst), as
/// `probe --p2p` writes them, `[[machine.duplex]]` penalties and `[[machine.compute_stall]]`
/// points; the machine model `sim` charges holds them, and approach 3 reads them.
fn ucf_with_p2p() -> (String, Machine) {
    use hetscale_machine::duplex::DuplexPoint;
    use hetscale_machine::machine_model::{MachineModel, P2pSegment};
    let mut platform = Platform::load("ucf-cluster").unwrap();
    platform.speed_unit = "Mflop/s".into();
    platform.nodes.truncate(4);
    platform
        .nodes
        .iter_mut()
        .for_each(|n| n.marked_speed *= 1e3);
    platform.network.l = BarrierCost::constant(1e-5);
    let at = |p: usize, max_bytes: u64, latency_s: f64, s_per_byte: f64| P2pSegment {
        p: Some(p),
        ..P2pSegment::new(max_bytes, latency_s, s_per_byte)
    };
    let mut model = MachineModel::from_network(&platform.network);
    model.p2p = vec![
        at(2, 16 << 10, 0.3e-3, 1e-9),
        at(2, 16 << 20, -1e-3, 80e-9),
        at(4, 16 << 10, 0.6e-3, 1e-9),
        at(4, 16 << 20, -1e-3, 80e-9),
    ];
    // Links that carry both directions at full rate to 16 KiB and, from 1 MiB, one at a time
    // (on 2 nodes) or at half the rate each (on 4): a node that sends and receives pays part
    // of its smaller side's bytes again.
    let duplex = |p: usize, bytes: u64, penalty: f64| DuplexPoint {
        p: Some(p),
        bytes,
        penalty,
        source: None,
    };
    model.duplex = vec![
        duplex(2, 16 << 10, 0.0),
        duplex(2, 1 << 20, 1.0),
        duplex(4, 16 << 10, 0.0),
        duplex(4, 1 << 20, 0.5),
    ];
    // Supersteps after compute that wait longer for their last node, as on hosts under CPU
    // quotas: what `probe --p2p` writes as the stall after 0.1 and 1 ms of compute.
    let stall = |compute_s: f64, stall_s: f64| hetscale_machine::compute_stall::ComputeStallPoint {
        p: 4,
        compute_s,
        stall_s,
        source: None,
    };
    model.compute_stall = vec![stall(1e-4, 0.2e-3), stall(1e-3, 0.5e-3)];
    platform.machine = Some(model);
    (
        "ucf p = 4 with p2p segments".into(),
        platform.all().unwrap(),
    )
}

#[test]
fn with_p2p_segments_the_model_charges_the_ports_sim_charges() {
    let machine = ucf_with_p2p();
    let ge = KernelOptions {
        pivoting: "none".into(),
        ..KernelOptions::default()
    };
    for (kernel, options) in [
        ("mm", KernelOptions::default()),
        ("ge", ge),
        ("conv2d", KernelOptions::default()),
    ] {
        for n in [64, 256] {
            let error = model_error(kernel, &options, &machine, n, &sim(true));
            // The HBSP^1 charges of the same network (`g`, `o`) miss the segments' start-ups.
            let hbsp = (machine.0.clone(), machine.1.without_model());
            let k = kernel_by_name(kernel, &options).unwrap();
            let run = k
                .run(&k.generate(n, 1).unwrap(), &sim(true), &machine.1)
                .unwrap();
            let unit = flops_per_unit(machine.1.speed_unit()).unwrap();
            let root = machine.1.marked_speed(machine.1.ranking()[0]) * unit;
            let model = k.overhead(n, &hbsp.1).unwrap().predicted_time_s(
                run.work,
                machine.1.cluster_speed() * unit,
                root,
            );
            let missed = (model - run.time_s) / run.time_s;
            // Transfers taken at their mean size on each node's own segments, where `sim`
            // sizes each one: equal where a node's transfers in a superstep are alike; conv2d
            // at N = 64 moves unequal pieces of a few KiB, near the 16 KiB break, and the
            // mean misses by a third (HBSP^1's charges: more than twice).
            let unequal_small = kernel == "conv2d" && n == 64;
            let bound = if unequal_small { 0.35 } else { 1e-4 };
            assert!(error.abs() < bound, "{kernel} N = {n}: {error:+.1e}");
            assert!(
                missed.abs() > 5.0 * error.abs() && missed.abs() > 0.05,
                "{kernel} N = {n}: HBSP^1 {missed:+.3}, segments {error:+.3}"
            );
        }
    }
}
