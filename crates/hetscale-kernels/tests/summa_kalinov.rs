//! SUMMA's transfers as Kalinov's equations (4) and (10) time them, and skeleton runs that hold
//! no matrix.

mod common;

use common::*;
use hbsp::backend::{SimOptions, WorkCharge};
use hbsp::{Backend, Machine};
use hetscale_kernels::memory::run_memory;
use hetscale_kernels::summa::{Strategy, SummaKernel, partition};
use hetscale_kernels::{Kernel, KernelRun, size_only, speeds};

fn skeleton() -> Backend {
    Backend::Sim(SimOptions {
        work: WorkCharge::Declared,
        skip_compute: true,
        ..SimOptions::default()
    })
}

fn kernel(strategy: Strategy) -> SummaKernel {
    SummaKernel {
        strategy,
        grid: Some((3, 2)),
        nb: 4,
    }
}

/// Six nodes of unequal speeds: HoHe1 cuts the rows of its two grid columns differently.
fn six() -> Machine {
    machine(&[5.0, 1.0, 3.0, 2.0, 4.0, 1.5])
}

/// For each superstep of the multiply phase: the messages each node sends to a node of
/// another grid column (`A` hops, along grid rows) and of its own (`B` hops, down columns),
/// by the sender's grid column.
fn hops(run: &KernelRun, column_of: &[usize], columns: usize) -> Vec<(Vec<u64>, u64)> {
    multiply_supersteps(run)
        .map(|k| {
            let mut a = vec![0; columns];
            let mut b = 0;
            for (pid, node) in run.trace.nodes.iter().enumerate() {
                for flow in &node.supersteps[k].flows {
                    if column_of[flow.to] == column_of[pid] {
                        b += flow.messages;
                    } else {
                        a[column_of[pid]] += flow.messages;
                    }
                }
            }
            (a, b)
        })
        .collect()
}

/// The supersteps of the multiply phase: from the one in which the distribution ended (its
/// last act is to file what it received) to the one before the multiply phase ended.
fn multiply_supersteps(run: &KernelRun) -> std::ops::Range<usize> {
    let steps = &run.trace.nodes[0].supersteps;
    let ended = |name: &str| {
        steps
            .iter()
            .position(|s| s.phases.iter().any(|p| p.name == name))
            .unwrap()
    };
    ended("distribute")..ended("multiply")
}

#[test]
fn hohe1_passes_a_column_one_message_after_another_as_statement_2_has_it() {
    let machine = six();
    let summa = kernel(Strategy::HoHe1);
    let layout = partition(Strategy::HoHe1, 24, &speeds(&machine), summa.grid).unwrap();
    assert!(
        !layout.is_true_grid(),
        "the test needs rows cut differently"
    );
    let column_of: Vec<usize> = (0..machine.p())
        .map(|pid| {
            layout
                .position(layout.host.iter().position(|&h| h == pid).unwrap())
                .1
        })
        .collect();
    let inputs = summa.generate(24, 1).unwrap();
    let run = summa
        .run(&inputs, &Backend::sim_declared(), &machine)
        .unwrap();
    assert!(run.verification.passed);
    let hops = hops(&run, &column_of, 2);
    let most = hops
        .iter()
        .flat_map(|(a, _)| a.iter().copied())
        .max()
        .unwrap();
    assert_eq!(
        most, 1,
        "one A message per grid column pair and superstep: {hops:?}"
    );
    assert!(
        hops.iter()
            .all(|(a, b)| a.iter().sum::<u64>() == 0 || *b == 0),
        "A and B passes in different supersteps (eq. 4): {hops:?}"
    );
    // Some hop of a column needed several messages, so several supersteps.
    let a_supersteps = hops.iter().filter(|(a, _)| a[0] > 0 || a[1] > 0).count();
    let b_supersteps = hops.iter().filter(|(_, b)| *b > 0).count();
    assert!(a_supersteps > b_supersteps, "{hops:?}");
}

#[test]
fn every_strategy_passes_a_then_b_in_separate_supersteps() {
    let machine = machine(&[1.0; 6]);
    for strategy in [Strategy::HoHo, Strategy::HoHe2] {
        let summa = kernel(strategy);
        let layout = partition(strategy, 24, &speeds(&machine), summa.grid).unwrap();
        let column_of: Vec<usize> = (0..machine.p())
            .map(|pid| {
                layout
                    .position(layout.host.iter().position(|&h| h == pid).unwrap())
                    .1
            })
            .collect();
        let run = summa
            .run(
                &summa.generate(24, 1).unwrap(),
                &Backend::sim_declared(),
                &machine,
            )
            .unwrap();
        let hops = hops(&run, &column_of, 2);
        assert!(hops.iter().any(|(a, _)| a.iter().sum::<u64>() > 0));
        assert!(
            hops.iter()
                .all(|(a, b)| a.iter().sum::<u64>() == 0 || *b == 0),
            "{strategy:?}: {hops:?}"
        );
        // A true grid passes every row's A message at once: one superstep per hop.
        assert!(
            hops.iter().any(|(a, _)| a.iter().sum::<u64>() == 3),
            "{hops:?}"
        );
    }
}

#[test]
fn a_skeleton_runs_on_the_size_alone_as_on_the_matrices() {
    let machine = six();
    for strategy in Strategy::ALL {
        let summa = SummaKernel {
            grid: None,
            ..kernel(strategy)
        };
        let sized = summa.run(&[size_only(40)], &skeleton(), &machine).unwrap();
        let full = summa
            .run(&summa.generate(40, 2).unwrap(), &skeleton(), &machine)
            .unwrap();
        assert_eq!(sized.time_s, full.time_s, "{strategy:?}");
        assert!(sized.verification.skipped, "{strategy:?}");
        assert_eq!(summa.skeleton_inputs(40, 2).unwrap(), vec![size_only(40)]);
    }
    let Err(err) = kernel(Strategy::HoHo).run(&[size_only(40)], &threads(), &machine) else {
        panic!("a size alone cannot be multiplied");
    };
    assert!(err.to_string().contains("skeleton"), "{err}");
}

#[test]
fn a_skeleton_of_n_16000_on_256_nodes_is_estimated_under_a_gib() {
    let speeds: Vec<f64> = (0..256)
        .map(|j| if j % 2 == 0 { 4.0 } else { 1.0 })
        .collect();
    let machine = machine(&speeds);
    let summa = SummaKernel {
        strategy: Strategy::HoHe2,
        grid: None,
        nb: 128,
    };
    let bytes = run_memory(&summa, 16_000, &machine, &skeleton()).unwrap();
    assert!(bytes < f64::from(1u32 << 30), "{bytes:e} bytes");
    let computing = run_memory(&summa, 16_000, &machine, &Backend::sim_declared()).unwrap();
    assert!(
        computing > 4.0 * 16_000f64.powi(2) * 8.0,
        "{computing:e} bytes"
    );
}
