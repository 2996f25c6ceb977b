//! `ge` against a naive sequential solver with row swaps, on p = 1..8 heterogeneous nodes.

mod common;

use common::*;
use hetscale_kernels::ge::{self, GeKernel, Pivoting};
use hetscale_kernels::{Array, Kernel, Matrix};

/// Textbook Gaussian elimination with partial pivoting by row swaps.
fn naive_solve(a: &[f64], b: &[f64], n: usize) -> Vec<f64> {
    let mut m: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            a[i * n..(i + 1) * n]
                .iter()
                .copied()
                .chain([b[i]])
                .collect()
        })
        .collect();
    for col in 0..n {
        let best = (col..n)
            .max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))
            .unwrap();
        m.swap(col, best);
        let pivot = m[col].clone();
        for row in m.iter_mut().skip(col + 1) {
            let l = row[col] / pivot[col];
            row.iter_mut()
                .zip(&pivot)
                .skip(col)
                .for_each(|(x, p)| *x -= l * p);
        }
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|k| m[i][k] * x[k]).sum();
        x[i] = (m[i][n] - s) / m[i][i];
    }
    x
}

#[test]
fn both_variants_match_the_naive_solver_for_every_p_and_awkward_n() {
    for machine in machines() {
        for pivoting in [Pivoting::Partial, Pivoting::None] {
            for n in [1, 2, 5, 17] {
                let kernel = GeKernel {
                    pivoting,
                    ..GeKernel::default()
                };
                let inputs = kernel.generate(n, 11 + n as u64).unwrap();
                let run = kernel.run(&inputs, &threads(), &machine).unwrap();
                let expected = naive_solve(real(&inputs[0]), real(&inputs[1]), n);
                let what = format!("{pivoting:?} p = {} n = {n}", machine.p());
                assert!(max_abs_diff(real(&run.result), &expected) < 1e-10, "{what}");
                assert!(run.verification.passed, "{what}: {:?}", run.verification);
                let w = ge::work(n);
                assert!(
                    (declared(&run) - w).abs() <= 1e-12 * w,
                    "{what}: declared {}",
                    declared(&run)
                );
            }
        }
    }
}

#[test]
fn partial_pivoting_solves_systems_with_zero_diagonals() {
    // A permutation-like matrix: every diagonal entry is zero.
    let n = 6;
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        a[i * n + (i + 1) % n] = 1.0 + i as f64;
        a[i * n + (i + 3) % n] = 0.5;
    }
    let b: Vec<f64> = (0..n).map(|i| i as f64 - 2.0).collect();
    let inputs = [
        Array::matrix("A", Matrix::new(n, n, a.clone()).unwrap()),
        Array::vector("b", b.clone()),
    ];
    for machine in machines() {
        let run = GeKernel::default()
            .run(&inputs, &threads(), &machine)
            .unwrap();
        assert!(
            run.verification.passed,
            "p = {}: {:?}",
            machine.p(),
            run.verification
        );
        assert!(max_abs_diff(real(&run.result), &naive_solve(&a, &b, n)) < 1e-12);
    }
    let no_pivoting = GeKernel {
        pivoting: Pivoting::None,
        ..GeKernel::default()
    }
    .run(&inputs, &threads(), &machines()[2]);
    let err = no_pivoting.unwrap_err().to_string();
    assert!(err.contains("singular") && !err.contains('\n'), "{err}");
}

#[test]
fn singular_matrices_and_bad_shapes_are_one_line_errors() {
    let singular = [
        Array::matrix(
            "A",
            Matrix::new(3, 3, vec![1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 0.0, 1.0, 1.0]).unwrap(),
        ),
        Array::vector("b", vec![1.0, 2.0, 3.0]),
    ];
    let machine = machine(&[1.0, 2.0]);
    let err = GeKernel::default()
        .run(&singular, &threads(), &machine)
        .unwrap_err()
        .to_string();
    assert!(err.contains("singular"), "{err}");
    let short_b = [singular[0].clone(), Array::vector("b", vec![1.0])];
    let err = GeKernel::default()
        .run(&short_b, &threads(), &machine)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("b has 1 elements") && !err.contains('\n'),
        "{err}"
    );
    assert!("diagonal".parse::<Pivoting>().is_err());
}

#[test]
fn work_is_the_published_formula_and_the_count_is_exact() {
    assert_eq!(ge::work(100), 661_353.0); // JPDC Table 3
    // Small N by hand: step i updates N-1-i rows at 1 + 2(N - i) flops; back substitution N^2.
    for n in 1..12usize {
        let by_hand: usize = (0..n.saturating_sub(1))
            .map(|i| (n - 1 - i) * (1 + 2 * (n - i)))
            .sum::<usize>()
            + n * n;
        assert_eq!(ge::flops(n).round() as usize, by_hand, "n = {n}");
    }
    let over = GeKernel::default()
        .overhead(50, &machine(&[2.0, 1.0]))
        .unwrap();
    assert!(
        over.overhead_s > 0.0 && over.sequential_fraction > 0.0 && over.sequential_fraction < 0.1
    );
}

#[test]
fn nan_and_overflow_are_one_line_errors_not_panics() {
    // A NaN column: no node has a candidate pivot at step 0 (this used to panic).
    let n = 5;
    let mut nan_column: Vec<f64> = (0..n * n).map(|k| 1.0 + (k % 3) as f64).collect();
    (0..n).for_each(|i| nan_column[i * n] = f64::NAN);
    let nan_column = Matrix::new(n, n, nan_column).unwrap();
    // Finite entries near f64::MAX: the first elimination step overflows to Inf.
    let mut huge = vec![1e308; n * n];
    (0..n).for_each(|i| huge[i * n + i] = -1e308);
    let huge = Matrix::new(n, n, huge).unwrap();
    let b = vec![1.0; n];
    for machine in machines() {
        for (a, what) in [(&nan_column, "NaN column"), (&huge, "overflow")] {
            let err = ge::solve(a, &b, Pivoting::Partial, &threads(), &machine)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("no finite pivot") && !err.contains('\n'),
                "{what}, p = {}: {err}",
                machine.p()
            );
        }
    }
    // Through the kernel's input arrays, a NaN is refused before anything runs.
    let inputs = [Array::matrix("A", nan_column), Array::vector("b", b)];
    let err = GeKernel::default()
        .run(&inputs, &threads(), &machines()[1])
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "A holds a NaN or infinite value at index (0, 0): give finite numbers"
    );
}

/// What one node sent in one superstep of a run's trace: (payload bytes, messages).
/// `kernel` on sim at size `n` (seed 5), its result verified.
fn verified_sim_run(
    kernel: &GeKernel,
    n: usize,
    machine: &hbsp::Machine,
) -> hetscale_kernels::KernelRun {
    let run = kernel
        .run(
            &kernel.generate(n, 5).unwrap(),
            &hbsp::Backend::sim_declared(),
            machine,
        )
        .unwrap();
    assert!(run.verification.passed, "{:?}", run.verification);
    run
}

fn sent(run: &hetscale_kernels::KernelRun, pid: usize, superstep: usize) -> (u64, u64) {
    let s = &run.trace.nodes[pid].supersteps[superstep];
    (s.bytes_out, s.messages_out)
}

#[test]
fn without_pivoting_each_step_is_two_broadcasts_and_a_barrier_as_jpdc_counts_it() {
    // JPDC 4.5: T_o = N (2 T_broadcast + T_barrier). On this machine every broadcast is
    // one-phase (g n p < L), so step i is three supersteps: the pivot row's A part
    // (N - i values), its b value, then the elimination ended by a plain barrier.
    let (n, speeds) = (12, [2.0, 1.0, 3.0]);
    let machine = machine(&speeds);
    let kernel = GeKernel {
        pivoting: Pivoting::None,
        ..GeKernel::default()
    };
    let run = verified_sim_run(&kernel, n, &machine);
    let owners = hetscale_kernels::partition::cyclic_owners(n, &speeds).unwrap();
    let others = (speeds.len() - 1) as u64;
    let first = (0..run.trace.supersteps())
        .find(|&s| sent(&run, owners[0], s) == (n as u64 * 8 * others, others))
        .expect("step 0 broadcasts row 0's A part");
    for (i, &owner) in owners.iter().enumerate().take(n - 1) {
        let s = first + 3 * i;
        let a_part = (n - i) as u64 * 8 * others;
        assert_eq!(sent(&run, owner, s), (a_part, others), "step {i}: A part");
        assert_eq!(
            sent(&run, owner, s + 1),
            (8 * others, others),
            "step {i}: b"
        );
        let eliminated: f64 = run
            .trace
            .nodes
            .iter()
            .map(|t| t.supersteps[s + 2].work_ops)
            .sum();
        let per_row = (1.0 + 2.0 * (n - i) as f64) * ge::work_per_flop(n);
        assert!(
            (eliminated - (n - 1 - i) as f64 * per_row).abs() <= 1e-9 * eliminated,
            "step {i}: the elimination ends with its own barrier, got {eliminated} ops"
        );
        for pid in 0..speeds.len() {
            assert_eq!(
                sent(&run, pid, s + 2),
                (0, 0),
                "step {i}: the barrier moves nothing"
            );
        }
    }
    // After the last step only the gather and the root's back substitution remain.
    assert_eq!(run.trace.supersteps(), first + 3 * (n - 1) + 2);
}

/// Machines of p = 1, 3 and 4 heterogeneous nodes (at p = 4 one so slow its share of the
/// blocks may round to zero).
fn blocked_machines() -> Vec<hbsp::Machine> {
    [&[2.0][..], &[2.0, 1.0, 3.0], &[3.0, 1.5, 2.5, 0.02]]
        .into_iter()
        .map(machine)
        .collect()
}

fn blocked(block: usize) -> GeKernel {
    GeKernel {
        pivoting: Pivoting::None,
        block,
    }
}

#[test]
fn blocks_match_the_naive_solver_and_the_row_cyclic_program_bit_for_bit() {
    // N not a multiple of b (a short last block), and b = N (one block, no broadcast).
    let cases = [(17, 2), (17, 5), (23, 4), (23, 23)];
    for backend in [threads(), hbsp::Backend::sim_declared()] {
        for machine in blocked_machines() {
            for (n, b) in cases {
                let inputs = blocked(b).generate(n, 3 + n as u64).unwrap();
                let run = blocked(b).run(&inputs, &backend, &machine).unwrap();
                let row_cyclic = blocked(1).run(&inputs, &backend, &machine).unwrap();
                let expected = naive_solve(real(&inputs[0]), real(&inputs[1]), n);
                let what = format!("{backend:?} p = {} n = {n} b = {b}", machine.p());
                assert!(run.verification.passed, "{what}: {:?}", run.verification);
                assert!(max_abs_diff(real(&run.result), &expected) < 1e-10, "{what}");
                // The same operations on the same values in the same order.
                let bits = |r: &hetscale_kernels::KernelRun| -> Vec<u64> {
                    real(&r.result).iter().map(|x| x.to_bits()).collect()
                };
                assert_eq!(bits(&run), bits(&row_cyclic), "{what}");
                let w = ge::work(n);
                assert!(
                    (declared(&run) - w).abs() <= 1e-12 * w,
                    "{what}: declared {}",
                    declared(&run)
                );
                assert!(
                    run.details.contains(&("block".into(), b.to_string())),
                    "{what}: {:?}",
                    run.details
                );
            }
        }
    }
}

#[test]
fn each_block_step_is_one_broadcast_superstep_of_its_pivot_rows() {
    // On this machine every broadcast is one-phase: after the scatter, block step k < B - 1
    // is one superstep in which block k's owner sends its b rows' columns k b..=N to every
    // other node; then the gather and the root's back substitution.
    let (n, b, speeds) = (23, 4, [2.0, 1.0, 3.0]);
    let machine = machine(&speeds);
    let kernel = blocked(b);
    let run = verified_sim_run(&kernel, n, &machine);
    let owners = hetscale_kernels::partition::block_cyclic_owners(n, b, &speeds).unwrap();
    let blocks = n.div_ceil(b);
    let others = (speeds.len() - 1) as u64;
    // The starting barrier and the scatter come first.
    let first = 2;
    for k in 0..blocks - 1 {
        let (lo, hi) = (k * b, (k * b + b).min(n));
        let bytes = ((hi - lo) * (n + 1 - lo)) as u64 * 8 * others;
        assert_eq!(
            sent(&run, owners[lo], first + k),
            (bytes, others),
            "block step {k}"
        );
    }
    assert_eq!(run.trace.supersteps(), first + blocks - 1 + 2);
}

#[test]
fn bad_blocks_are_one_line_errors() {
    let machine = machine(&[1.0, 2.0]);
    let partial = GeKernel {
        pivoting: Pivoting::Partial,
        block: 4,
    };
    for (kernel, n, says) in [
        (blocked(0), 8, "block 0"),
        (blocked(9), 8, "block 9 exceeds N = 8"),
        (partial, 8, "partial pivoting needs block = 1"),
    ] {
        let err = kernel.generate(n, 1).unwrap_err().to_string();
        assert!(err.contains(says) && !err.contains('\n'), "{err}");
        let inputs = blocked(1).generate(n, 1).unwrap();
        let err = kernel
            .run(&inputs, &threads(), &machine)
            .unwrap_err()
            .to_string();
        assert!(err.contains(says) && !err.contains('\n'), "{err}");
        // The model of a block wider than N is that of one block (a search over N may
        // start below b); the others are refused.
        match kernel.block {
            9 => assert_eq!(
                kernel.overhead(n, &machine).unwrap(),
                blocked(n).overhead(n, &machine).unwrap()
            ),
            _ => {
                let err = kernel.overhead(n, &machine).unwrap_err().to_string();
                assert!(err.contains(says), "{err}");
            }
        }
    }
}

/// The model samples block steps past 100,000 node-steps (the bound is the unit test
/// `a_model_at_scale_replays_a_bounded_sample_of_its_steps`; no wall clock here: timings
/// belong in benchmarks), so a prediction at scale replays a few dozen steps of O(p) each.
#[test]
fn a_blocked_model_at_4096_nodes_and_n_100000_gives_a_finite_overhead() {
    let speeds: Vec<f64> = (0..4096)
        .map(|j| if j % 2 == 0 { 200.0 } else { 100.0 })
        .collect();
    let machine = machine(&speeds);
    let over = blocked(64).overhead(100_000, &machine).unwrap();
    assert!(
        over.overhead_s > 0.0 && over.overhead_s.is_finite(),
        "{over:?}"
    );
}
