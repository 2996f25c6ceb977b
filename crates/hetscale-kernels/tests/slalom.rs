//! `slalom`: SLALOM's radiosity problem (setup, GE solve, answer) verified against a
//! sequential solve of the same system on threads and sim for p = 1..8, with its exact work.

mod common;

use common::*;
use hbsp::Backend;
use hetscale_kernels::slalom::{self, SlalomKernel};
use hetscale_kernels::{Array, Kernel, kernel_by_name};

#[test]
fn verifies_on_threads_and_sim_for_p_1_to_8_and_declares_exactly_w() {
    for machine in machines() {
        for backend in [threads(), Backend::sim_declared()] {
            let n = 37 + machine.p();
            let inputs = SlalomKernel::default().generate(n, 3).unwrap();
            let run = SlalomKernel::default()
                .run(&inputs, &backend, &machine)
                .unwrap();
            let what = format!("{backend} p = {} N = {n}", machine.p());
            assert!(run.verification.passed, "{what}: {:?}", run.verification);
            assert_eq!(run.work, slalom::work(n).unwrap(), "{what}");
            // Nothing is repeated: setup rows, elimination and the answer are each done once.
            let declared = declared(&run);
            assert!(
                (declared - run.work).abs() <= 1e-12 * run.work,
                "{what}: {declared}"
            );
        }
    }
}

#[test]
fn radiosities_are_at_least_the_emission_and_the_same_on_any_machine() {
    // B = E + diag(rho) F B with rho F >= 0: every patch gives off at least what it emits,
    // and the lit ceiling more than it emits (its light comes back from the walls).
    let n = 120;
    let inputs = SlalomKernel::default().generate(n, 9).unwrap();
    let one = SlalomKernel::default()
        .run(&inputs, &threads(), &machine(&[1.0]))
        .unwrap();
    let many = SlalomKernel::default()
        .run(&inputs, &threads(), &machine(&[3.0, 1.0, 2.0, 0.5, 2.5]))
        .unwrap();
    let (x, e) = (real(&one.result), real(&inputs[1]));
    assert!(x.iter().zip(e).all(|(x, e)| x >= e), "{x:?}");
    assert!(x.iter().zip(e).any(|(x, e)| *e > 0.0 && x > e));
    assert!(x.iter().zip(e).any(|(x, e)| *e == 0.0 && *x > 0.0));
    assert!(max_abs_diff(x, real(&many.result)) < 1e-12);
}

#[test]
fn work_is_the_documented_exact_count() {
    // N = 6: one patch per face, 30 couplings of 18 flops, ge's 191 flops, the answer's 12.
    assert_eq!(slalom::work(6).unwrap(), 30.0 * 18.0 + 191.0 + 12.0);
    assert_eq!(
        SlalomKernel::default().work(6),
        SlalomKernel::default().counted_ops(6)
    );
}

#[test]
fn the_registry_builds_it_by_name() {
    let kernel = kernel_by_name("slalom", &Default::default()).unwrap();
    assert_eq!(kernel.name(), "slalom");
    assert_eq!(kernel.work(200), slalom::work(200).unwrap());
}

#[test]
fn bad_inputs_are_one_line_errors() {
    let machine = machine(&[1.0, 2.0]);
    let cases = [
        (vec![0.5; 4], vec![1.0; 3], "one emittance per patch"),
        (vec![0.5, 1.0, 0.2], vec![1.0; 3], "[0, 1)"),
        (vec![0.5, f64::NAN, 0.2], vec![1.0; 3], "NaN"),
        (vec![0.5; 3], vec![1.0, -1.0, 0.0], "emittances must be"),
        (vec![0.5], vec![1.0], "2"),
    ];
    for (rho, e, expected) in cases {
        let inputs = [Array::vector("rho", rho), Array::vector("E", e)];
        let Err(err) = SlalomKernel::default().run(&inputs, &threads(), &machine) else {
            panic!("{expected}: accepted");
        };
        let err = err.to_string();
        assert!(err.contains(expected) && !err.contains('\n'), "{err}");
    }
    let err = SlalomKernel::default()
        .generate(1, 1)
        .unwrap_err()
        .to_string();
    assert!(err.contains(">= 2"), "{err}");
}
