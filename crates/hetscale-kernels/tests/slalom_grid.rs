//! `slalom --layout grid`: the nCUBE 2 program's square process grid, verified against the
//! sequential reference on threads and sim for p = 1, 4, 9, 16, with the same radiosities
//! as the row layout, exactly `W` declared, a skeleton that moves the same sizes, and a
//! one-line error for a machine that is not square.

mod common;

use common::*;
use hbsp::{Backend, Platform, SimOptions, WorkCharge};
use hetscale_kernels::slalom::{self, Layout, SlalomKernel};
use hetscale_kernels::{Kernel, KernelOptions, kernel_by_name};

const GRID: SlalomKernel = SlalomKernel {
    layout: Layout::Grid,
};

fn sim(skip_compute: bool) -> Backend {
    Backend::Sim(SimOptions {
        work: WorkCharge::Declared,
        skip_compute,
        ..SimOptions::default()
    })
}

#[test]
fn the_grid_verifies_on_threads_and_sim_for_square_p_and_matches_the_rows() {
    for p in [1usize, 4, 9, 16] {
        let machine = machine(&vec![1.0; p]);
        let n = 41 + p;
        let inputs = GRID.generate(n, 5).unwrap();
        let rows = SlalomKernel::default()
            .run(&inputs, &threads(), &machine)
            .unwrap();
        for backend in [threads(), sim(false)] {
            let run = GRID.run(&inputs, &backend, &machine).unwrap();
            let what = format!("{backend} p = {p} N = {n}");
            assert!(run.verification.passed, "{what}: {:?}", run.verification);
            assert!(
                max_abs_diff(real(&run.result), real(&rows.result)) < 1e-12,
                "{what}"
            );
            let declared = declared(&run);
            assert!(
                (declared - slalom::work(n).unwrap()).abs() <= 1e-9 * run.work,
                "{what}: declared {declared}, W {}",
                run.work
            );
            assert!(
                run.details
                    .iter()
                    .any(|(k, v)| k == "layout" && v == "grid"),
                "{what}"
            );
        }
    }
}

#[test]
fn a_skeleton_grid_run_takes_the_full_runs_time_on_the_ncube() {
    // SLALOM's matrix is diagonally dominant, so partial pivoting picks the natural order,
    // which is what a skeleton assumes: the same supersteps, the same sizes.
    let machine = Platform::load("ncube2")
        .unwrap()
        .select(&"ncube:16".parse().unwrap())
        .unwrap();
    let n = 70;
    let full = GRID
        .run(&GRID.generate(n, 2).unwrap(), &sim(false), &machine)
        .unwrap();
    let skeleton = GRID
        .run(&GRID.skeleton_inputs(n, 2).unwrap(), &sim(true), &machine)
        .unwrap();
    assert!(!skeleton.verification.passed || skeleton.verification.error.is_nan());
    assert!(
        (full.time_s - skeleton.time_s).abs() <= 1e-9 * full.time_s,
        "full {} s, skeleton {} s",
        full.time_s,
        skeleton.time_s
    );
}

#[test]
fn the_grid_needs_a_square_machine_and_the_layout_option_names_its_values() {
    let machine = machine(&[1.0; 6]);
    let inputs = GRID.generate(30, 1).unwrap();
    let err = GRID
        .run(&inputs, &threads(), &machine)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("square number of nodes") && err.contains("p = 6") && !err.contains('\n'),
        "{err}"
    );
    let err = GRID.overhead(30, &machine).unwrap_err().to_string();
    assert!(err.contains("p = 6"), "{err}");
    let options = |layout: &str| KernelOptions {
        layout: layout.into(),
        ..KernelOptions::default()
    };
    assert!(kernel_by_name("slalom", &options("grid")).is_ok());
    let Err(err) = kernel_by_name("slalom", &options("cols")) else {
        panic!("layout cols accepted");
    };
    let err = err.to_string();
    assert_eq!(err, "unknown slalom layout \"cols\": use rows or grid");
}

#[test]
fn the_grid_overhead_model_matches_the_simulator_without_a_machine_model() {
    // Pure HBSP^1 on the nCUBE 2's network: the replay charges what sim charges.
    for p in [4, 16] {
        let machine = Platform::load("ncube2")
            .unwrap()
            .select(&format!("ncube:{p}").parse().unwrap())
            .unwrap()
            .without_model();
        let n = 60;
        let run = GRID
            .run(&GRID.generate(n, 3).unwrap(), &sim(false), &machine)
            .unwrap();
        let overhead = GRID.overhead(n, &machine).unwrap();
        let unit = 1e6;
        let predicted = overhead.predicted_time_s(
            run.work,
            machine.cluster_speed() * unit,
            machine.marked_speed(0) * unit,
        );
        assert!(
            (predicted - run.time_s).abs() <= 0.01 * run.time_s,
            "p = {p}: model {predicted} s, sim {} s",
            run.time_s
        );
    }
}
