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
            }),
            20,
            true,
        ),
        (Box::new(Conv2dKernel), 16, true),
        (Box::new(BurgKernel { order: 5 }), 300, true),
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
