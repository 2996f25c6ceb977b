//! `mm` and `summa` against the naive triple loop, on p = 1..8 heterogeneous nodes.

mod common;

use common::*;
use hetscale_kernels::summa::{Strategy, SummaKernel};
use hetscale_kernels::{Kernel, mm::MmKernel};

#[test]
fn mm_matches_the_triple_loop_for_every_p_and_awkward_n() {
    for machine in machines() {
        for n in [1, 2, 7, 23] {
            let inputs = MmKernel.generate(n, n as u64).unwrap();
            let run = MmKernel.run(&inputs, &threads(), &machine).unwrap();
            let expected = naive_matmul(real(&inputs[0]), real(&inputs[1]), n);
            assert!(
                max_abs_diff(real(&run.result), &expected) < 1e-12 * n as f64,
                "p = {} n = {n}",
                machine.p()
            );
            assert!(run.verification.passed, "{:?}", run.verification);
            assert_eq!(declared(&run), MmKernel.counted_ops(n));
        }
    }
}

#[test]
fn summa_matches_the_triple_loop_for_every_strategy_p_n_and_nb() {
    for machine in machines() {
        for strategy in Strategy::ALL {
            // HeHo runs C_l / C_min processes per node: keep the machines moderately heterogeneous.
            let machine = if strategy == Strategy::HeHo {
                moderate(&machine)
            } else {
                machine.clone()
            };
            for (n, nb) in [(1, 1), (5, 2), (19, 4), (33, 64)] {
                let kernel = SummaKernel {
                    strategy,
                    grid: None,
                    nb,
                };
                let inputs = kernel.generate(n, 3).unwrap();
                let run = kernel.run(&inputs, &threads(), &machine).unwrap();
                let expected = naive_matmul(real(&inputs[0]), real(&inputs[1]), n);
                let what = format!("{} p = {} n = {n} nb = {nb}", strategy.name(), machine.p());
                assert!(
                    max_abs_diff(real(&run.result), &expected) < 1e-12 * n as f64,
                    "{what}"
                );
                assert!(run.verification.passed, "{what}");
                assert_eq!(declared(&run), kernel.counted_ops(n), "{what}");
            }
        }
    }
}

fn moderate(machine: &hbsp::Machine) -> hbsp::Machine {
    let speeds: Vec<f64> = (0..machine.p()).map(|j| 1.0 + (j % 3) as f64).collect();
    common::machine(&speeds)
}

#[test]
fn summa_runs_on_explicit_grids_including_one_row_and_one_column() {
    let machine = machine(&[4.0, 1.0, 2.0, 3.0, 1.0, 2.0]);
    for strategy in [Strategy::HoHo, Strategy::HoHe1, Strategy::HoHe2] {
        for grid in [(1, 6), (6, 1), (2, 3), (3, 2)] {
            let kernel = SummaKernel {
                strategy,
                grid: Some(grid),
                nb: 3,
            };
            let inputs = kernel.generate(17, 9).unwrap();
            let run = kernel.run(&inputs, &threads(), &machine).unwrap();
            let expected = naive_matmul(real(&inputs[0]), real(&inputs[1]), 17);
            assert!(
                max_abs_diff(real(&run.result), &expected) < 1e-11,
                "{strategy:?} {grid:?}"
            );
            let grid_text = format!("{}x{}", grid.0, grid.1);
            assert!(
                run.details
                    .iter()
                    .any(|(k, v)| k == "grid" && *v == grid_text)
            );
        }
    }
}

#[test]
fn heho_places_several_processes_on_fast_nodes() {
    let machine = machine(&[3.0, 1.0, 2.0]);
    let kernel = SummaKernel {
        strategy: Strategy::HeHo,
        grid: Some((2, 3)),
        nb: 2,
    };
    let inputs = kernel.generate(12, 1).unwrap();
    let run = kernel.run(&inputs, &threads(), &machine).unwrap();
    assert!(run.verification.passed);
    assert!(
        run.details
            .iter()
            .any(|(k, v)| k == "processes" && v == "6")
    );
}

#[test]
fn bad_inputs_are_one_line_errors() {
    let machine = machine(&[1.0, 1.0, 1.0, 1.0]);
    let bad_grid = SummaKernel {
        strategy: Strategy::HoHo,
        grid: Some((3, 3)),
        nb: 4,
    };
    let inputs = bad_grid.generate(8, 1).unwrap();
    let errors = [
        bad_grid.run(&inputs, &threads(), &machine).unwrap_err(),
        SummaKernel {
            nb: 0,
            ..SummaKernel::default()
        }
        .run(&inputs, &threads(), &machine)
        .unwrap_err(),
        MmKernel
            .run(&inputs[..1], &threads(), &machine)
            .unwrap_err(),
        MmKernel
            .run(
                &[
                    inputs[0].clone(),
                    MmKernel.generate(3, 1).unwrap()[0].clone(),
                ],
                &threads(),
                &machine,
            )
            .unwrap_err(),
        MmKernel.generate(0, 1).unwrap_err(),
    ];
    for err in errors {
        let text = err.to_string();
        assert!(!text.is_empty() && !text.contains('\n'), "{text}");
    }
}

#[test]
fn overhead_and_memory_models_are_sane() {
    let machine = machine(&[2.0, 1.0, 1.0]);
    for kernel in [&MmKernel as &dyn Kernel, &SummaKernel::default()] {
        let small = kernel.overhead(64, &machine).unwrap();
        let large = kernel.overhead(256, &machine).unwrap();
        assert!(small.overhead_s > 0.0 && large.overhead_s > small.overhead_s);
        assert_eq!(small.sequential_fraction, 0.0);
        let memory = kernel.memory_per_node(64, &machine).unwrap();
        assert_eq!(memory.len(), 3);
        assert!(
            memory[0] >= 3.0 * 64.0 * 64.0 * 8.0,
            "the root holds A, B and C"
        );
    }
}
