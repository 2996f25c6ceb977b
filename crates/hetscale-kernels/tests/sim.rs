//! Every kernel runs unchanged on the `sim` backend: verified, deterministic in virtual time,
//! and as skeletons (compute skipped) with the same virtual time where the communication does
//! not depend on the values.

mod common;

use common::*;
use hbsp::Backend;
use hbsp::backend::{SimOptions, WorkCharge};
use hetscale_kernels::burg::BurgKernel;
use hetscale_kernels::conv2d::Conv2dKernel;
use hetscale_kernels::ge::{GeKernel, Pivoting};
use hetscale_kernels::mm::MmKernel;
use hetscale_kernels::slalom::SlalomKernel;
use hetscale_kernels::summa::{Strategy, SummaKernel};
use hetscale_kernels::{Kernel, flops_per_unit};

fn kernels() -> Vec<(Box<dyn Kernel>, usize, bool)> {
    // (kernel, N, whether its communication is independent of the values)
    let mut all: Vec<(Box<dyn Kernel>, usize, bool)> = vec![
        (Box::new(MmKernel), 24, true),
        (Box::new(GeKernel::default()), 20, false),
        (
            Box::new(GeKernel {
                pivoting: Pivoting::None,
                ..GeKernel::default()
            }),
            20,
            true,
        ),
        (Box::new(Conv2dKernel), 16, true),
        (Box::new(BurgKernel { order: 5 }), 300, true),
        // Its pivots follow the values (partial pivoting), as ge's do.
        (Box::new(SlalomKernel::default()), 30, false),
    ];
    for strategy in Strategy::ALL {
        all.push((
            Box::new(SummaKernel {
                strategy,
                grid: None,
                nb: 4,
            }),
            21,
            true,
        ));
    }
    all
}

#[test]
fn kernels_run_verified_and_deterministic_on_sim_and_as_skeletons() {
    // Sunwulf-like speeds in Mflop/s, so compute dominates the virtual time.
    let machine = machine(&[20.88, 36.45, 20.29, 36.45]);
    let cluster = machine.cluster_speed() * flops_per_unit(machine.speed_unit()).unwrap();
    let skeleton = Backend::Sim(SimOptions {
        work: WorkCharge::Declared,
        skip_compute: true,
        ..SimOptions::default()
    });
    for (kernel, n, value_independent) in kernels() {
        let inputs = kernel.generate(n, 8).unwrap();
        let first = kernel
            .run(&inputs, &Backend::sim_declared(), &machine)
            .unwrap();
        let second = kernel
            .run(&inputs, &Backend::sim_declared(), &machine)
            .unwrap();
        let name = format!("{} {:?}", kernel.name(), first.details);
        assert!(first.verification.passed, "{name}");
        assert_eq!(
            first.time_s, second.time_s,
            "{name}: virtual time is deterministic"
        );
        assert!(first.time_s >= kernel.counted_ops(n) / cluster, "{name}");
        let bare = kernel.run(&inputs, &skeleton, &machine).unwrap();
        assert!(
            bare.verification.skipped && !bare.verification.passed,
            "{name}"
        );
        if value_independent {
            assert!(
                (bare.time_s - first.time_s).abs() <= 1e-12 * first.time_s,
                "{name}"
            );
        }
    }
}

#[test]
fn every_kernel_verifies_on_sim_for_p_1_to_8_with_zero_shares() {
    // machines(): p = 1..=8 with a node 1000 times slower, whose share rounds to zero rows.
    for machine in machines() {
        for (kernel, n, _) in kernels() {
            let inputs = kernel.generate(n + machine.p(), 3).unwrap();
            let run = kernel
                .run(&inputs, &Backend::sim_declared(), &machine)
                .unwrap();
            assert!(
                run.verification.passed,
                "{} p={} {:?}",
                kernel.name(),
                machine.p(),
                run.verification
            );
            assert!(run.time_s > 0.0);
        }
    }
}

#[test]
fn every_kernel_declares_w_so_e_s_is_at_most_1_on_sim() {
    // One W per kernel: what a run declares is what E_s = W / (T C) divides by, so the
    // simulator, which charges declared work at marked speed plus communication, can never
    // give E_s > 1 (conv2d used to declare 30 N^2 lg N of its 66 N^2 lg N: E_s = 2.2).
    let platform = hbsp::Platform::load("sunwulf").unwrap();
    for nodes in ["server:1", "sunfire:1", "server:1,sunblade:2,sunfire:1"] {
        let machine = platform.select(&nodes.parse().unwrap()).unwrap();
        for (kernel, _, _) in kernels() {
            for n in [7, 16, 45] {
                let inputs = kernel.generate(n, 2).unwrap();
                let run = kernel
                    .run(&inputs, &Backend::sim_declared(), &machine)
                    .unwrap();
                let what = format!("{} {:?} on {nodes}, N = {n}", kernel.name(), run.details);
                let e_s = run.speed_efficiency().unwrap();
                assert!(e_s <= 1.0, "{what}: E_s = {e_s}");
                assert_eq!(run.work, kernel.work(n), "{what}");
                if machine.p() == 1 {
                    let declared = declared(&run);
                    assert!(
                        (declared - run.work).abs() <= 1e-12 * run.work,
                        "{what}: declared {declared}, W = {}",
                        run.work
                    );
                    assert_eq!(kernel.counted_ops(n), kernel.work(n), "{what}");
                }
            }
        }
    }
    // The case: conv2d at N = 512 on Sunwulf's server alone.
    let server = platform.select(&"server:1".parse().unwrap()).unwrap();
    let kernel = Conv2dKernel;
    let run = kernel
        .run(
            &kernel.generate(512, 1).unwrap(),
            &Backend::sim_declared(),
            &server,
        )
        .unwrap();
    let e_s = run.speed_efficiency().unwrap();
    assert!(
        e_s <= 1.0 && e_s > 0.9,
        "conv2d N = 512 on one node: E_s = {e_s}"
    );
}
