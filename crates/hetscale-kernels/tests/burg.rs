//! `burg` against an independent sequential Burg (Numerical Recipes' `memcof` formulation) and
//! against the true coefficients of a long AR(2) series.

mod common;

use common::*;
use hetscale_kernels::burg::{self, BurgKernel};
use hetscale_kernels::{Array, Kernel};

/// Burg's method as Numerical Recipes (2nd ed., section 13.6) writes it: `d` with
/// `x[t] ~ sum_j d_j x[t-j]`.
fn memcof(data: &[f64], m: usize) -> Vec<f64> {
    let n = data.len();
    let mut wk1 = data[..n - 1].to_vec();
    let mut wk2 = data[1..].to_vec();
    let (mut d, mut wkm) = (vec![0.0; m], vec![0.0; m]);
    for k in 0..m {
        let (mut num, mut denom) = (0.0, 0.0);
        for j in 0..n - k - 1 {
            num += wk1[j] * wk2[j];
            denom += wk1[j] * wk1[j] + wk2[j] * wk2[j];
        }
        d[k] = 2.0 * num / denom;
        for i in 0..k {
            d[i] = wkm[i] - d[k] * wkm[k - 1 - i];
        }
        if k == m - 1 {
            break;
        }
        wkm[..=k].copy_from_slice(&d[..=k]);
        for j in 0..n - k - 2 {
            wk1[j] -= wkm[k] * wk2[j];
            wk2[j] = wk2[j + 1] - wkm[k] * wk1[j + 1];
        }
    }
    d
}

#[test]
fn matches_memcof_for_every_p_order_and_awkward_n() {
    for machine in machines() {
        for (n, order) in [(2, 1), (5, 4), (23, 3), (64, 10)] {
            let kernel = BurgKernel { order };
            let inputs = kernel.generate(n, 2).unwrap();
            let run = kernel.run(&inputs, &threads(), &machine).unwrap();
            let expected = memcof(real(&inputs[0]), order);
            let what = format!("p = {} n = {n} order = {order}", machine.p());
            assert!(max_abs_diff(real(&run.result), &expected) < 1e-10, "{what}");
            assert!(run.verification.passed, "{what}");
            // Every node but one repeats the Levinson steps (2 m at order m).
            let redundant =
                (machine.p() - 1) as f64 * (1..=order).map(|m| 2.0 * m as f64).sum::<f64>();
            assert_eq!(declared(&run), burg::work(n, order) + redundant, "{what}");
        }
    }
}

#[test]
fn recovers_the_ar2_process_it_was_fed() {
    let kernel = BurgKernel { order: 2 };
    let inputs = kernel.generate(20_000, 4).unwrap();
    let run = kernel
        .run(&inputs, &threads(), &machine(&[3.0, 1.0, 2.0]))
        .unwrap();
    let phi = real(&run.result);
    assert!(
        (phi[0] - 0.75).abs() < 0.03 && (phi[1] + 0.5).abs() < 0.03,
        "{phi:?}"
    );
}

#[test]
fn work_is_linear_in_n_per_order() {
    assert_eq!(burg::work(100, 1), 10.0 * 99.0 + 2.0);
    assert_eq!(burg::work(1000, 5) - burg::work(999, 5), 50.0);
}

#[test]
fn bad_orders_and_silent_series_are_one_line_errors() {
    let machine = machine(&[1.0, 1.0]);
    for (n, order) in [(10, 0), (10, 10), (1, 1)] {
        let err = BurgKernel { order }.generate(n, 1).unwrap_err().to_string();
        assert!(
            !err.contains('\n') && (err.contains("order") || err.contains("samples")),
            "{err}"
        );
    }
    let zeros = [Array::vector("x", vec![0.0; 16])];
    let err = BurgKernel { order: 2 }
        .run(&zeros, &threads(), &machine)
        .unwrap_err()
        .to_string();
    assert!(err.contains("vanish") && !err.contains('\n'), "{err}");
}

/// Bytes all nodes sent in a run, by its trace.
fn bytes_sent(run: &hetscale_kernels::KernelRun) -> u64 {
    run.trace
        .nodes
        .iter()
        .flat_map(|n| &n.supersteps)
        .map(|s| s.bytes_out)
        .sum()
}

#[test]
fn traffic_per_order_is_independent_of_n_as_in_sun_and_rover_eq_10() {
    // The series is already distributed: per order one boundary value (8 bytes) to the next
    // holder and one allreduce of the two partial sums (each node sends each sum's 8 bytes to
    // the node reducing it, which sends the sum back to every other node), nothing that grows
    // with N (the scatter from a root used to send N (1 - C_root / C) values).
    for machine in machines() {
        let p = machine.p() as u64;
        for (backend, name) in [
            (threads(), "threads"),
            (hbsp::Backend::sim_declared(), "sim"),
        ] {
            for n in [200, 5000] {
                let kernel = BurgKernel { order: 3 };
                let run = kernel
                    .run(&kernel.generate(n, 5).unwrap(), &backend, &machine)
                    .unwrap();
                let holders = hetscale_kernels::partition::block_counts(
                    n,
                    &hetscale_kernels::speeds(&machine),
                )
                .unwrap()
                .iter()
                .filter(|&&c| c > 0)
                .count() as u64;
                let per_order = 8 * (holders - 1) + 2 * 16 * (p - 1);
                assert_eq!(bytes_sent(&run), 3 * per_order, "{name} p = {p} n = {n}");
                assert!(run.verification.passed, "{name} p = {p} n = {n}");
            }
        }
    }
}
