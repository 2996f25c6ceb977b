//! Skeleton runs (sim with the compute blocks skipped) on the problem size alone: the virtual
//! clock, its per-superstep costs and the trace are those of a run with the data, bit for
//! bit, and the memory they allocate does not grow with the data (see `skeleton_memory.rs`).

mod common;

use hbsp::backend::{SimEngine, SimOptions, WorkCharge};
use hbsp::{Backend, Machine, Platform};
use hetscale_kernels::burg::BurgKernel;
use hetscale_kernels::conv2d::Conv2dKernel;
use hetscale_kernels::ge::{GeKernel, Pivoting};
use hetscale_kernels::mm::MmKernel;
use hetscale_kernels::{Kernel, size_only};

fn sim(engine: SimEngine, skip_compute: bool) -> Backend {
    Backend::Sim(SimOptions {
        work: WorkCharge::Declared,
        skip_compute,
        engine,
        ..SimOptions::default()
    })
}

/// A kernel, a size `N` and the kernel whose seeded inputs its run with data takes.
type Case = (Box<dyn Kernel>, usize, Box<dyn Kernel>);

/// GE's inputs are the diagonally dominant ones of `pivoting = none`, on which partial
/// pivoting too takes row `i` at step `i`, the order a skeleton assumes.
fn kernels() -> Vec<Case> {
    let dominant = || -> Box<dyn Kernel> {
        Box::new(GeKernel {
            pivoting: Pivoting::None,
            ..GeKernel::default()
        })
    };
    vec![
        (Box::new(MmKernel), 23, Box::new(MmKernel)),
        (Box::new(GeKernel::default()), 21, dominant()),
        (dominant(), 21, dominant()),
        // Blocks of 4 rows, the last one short.
        (Box::new(blocked()), 21, Box::new(blocked())),
        (Box::new(Conv2dKernel), 16, Box::new(Conv2dKernel)),
        (
            Box::new(BurgKernel { order: 5 }),
            301,
            Box::new(BurgKernel { order: 5 }),
        ),
    ]
}

/// GE in blocks of 4 rows (no pivoting).
fn blocked() -> GeKernel {
    GeKernel {
        pivoting: Pivoting::None,
        block: 4,
    }
}

fn sunwulf(nodes: &str) -> Machine {
    Platform::load("sunwulf")
        .unwrap()
        .select(&nodes.parse().unwrap())
        .unwrap()
}

#[test]
fn a_skeleton_on_the_size_alone_runs_on_the_clock_of_a_run_with_data_bit_for_bit() {
    // Uneven speeds with a node whose share of rows rounds to zero, and Sunwulf's machine
    // model of measured collectives.
    let machines = [
        common::machine(&[20.88, 36.45, 20.29, 0.01, 36.45]),
        sunwulf("server:1,sunblade:3,sunfire:2"),
    ];
    for machine in &machines {
        for engine in [SimEngine::Coroutines, SimEngine::Threads] {
            for (kernel, n, data_kernel) in kernels() {
                let inputs = data_kernel.generate(n, 5).unwrap();
                let data = kernel.run(&inputs, &sim(engine, false), machine).unwrap();
                let sized = kernel.skeleton_inputs(n, 5).unwrap();
                assert_eq!(sized, vec![size_only(n)], "{}", kernel.name());
                let skeleton = kernel.run(&sized, &sim(engine, true), machine).unwrap();
                let what = format!(
                    "{} {:?}, p = {}, {engine:?}",
                    kernel.name(),
                    data.details,
                    machine.p()
                );
                assert!(data.verification.passed, "{what}");
                assert!(skeleton.verification.skipped, "{what}");
                assert_eq!(skeleton.time_s.to_bits(), data.time_s.to_bits(), "{what}");
                assert_eq!(skeleton.trace, data.trace, "{what}");
                assert_eq!(skeleton.work, data.work, "{what}");
                // Given the data, a skeleton still moves sizes only, on the same clock.
                let given = kernel.run(&inputs, &sim(engine, true), machine).unwrap();
                assert_eq!(given.time_s.to_bits(), data.time_s.to_bits(), "{what}");
            }
        }
    }
}

#[test]
fn the_size_alone_is_refused_in_one_line_by_a_backend_that_computes() {
    let machine = common::machine(&[1.0, 2.0]);
    for (kernel, n, _) in kernels() {
        for backend in [Backend::threads(), sim(SimEngine::Coroutines, false)] {
            let err = kernel
                .run(&[size_only(n)], &backend, &machine)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("only the size N") && err.contains("skeleton") && !err.contains('\n'),
                "{}: {err}",
                kernel.name()
            );
        }
    }
}

#[test]
fn a_skeleton_whose_messages_overflow_is_a_one_line_error() {
    // N^2 values do not fit a usize: the sizes saturate and the first collective refuses
    // them, instead of overflowing (a panic in debug builds, wrong sizes in release ones).
    let machine = common::machine(&[1.0, 2.0]);
    let n = 5_000_000_000;
    for kernel in [&MmKernel as &dyn Kernel, &Conv2dKernel] {
        let err = kernel
            .run(&[size_only(n)], &sim(SimEngine::Coroutines, true), &machine)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a message of more bytes than a 64-bit count holds")
                && err.contains("use a smaller problem size or more nodes")
                && !err.contains('\n'),
            "{}: {err}",
            kernel.name()
        );
    }
}
