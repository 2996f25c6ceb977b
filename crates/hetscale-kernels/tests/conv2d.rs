//! `conv2d` against the direct O(N^4) circular convolution, on p = 1..8 heterogeneous nodes.

mod common;

use common::*;
use hetscale_kernels::conv2d::{self, Conv2dKernel};
use hetscale_kernels::{ArrayData, Kernel};
use num_complex::Complex64;

fn complex(array: &hetscale_kernels::Array) -> &[Complex64] {
    match &array.data {
        ArrayData::Complex(v) => v,
        ArrayData::Real(_) => panic!("expected a complex array"),
    }
}

fn direct(x: &[Complex64], y: &[Complex64], n: usize) -> Vec<Complex64> {
    let mut d = vec![Complex64::default(); n * n];
    for u in 0..n {
        for v in 0..n {
            for a in 0..n {
                for b in 0..n {
                    d[u * n + v] += x[a * n + b] * y[((u + n - a) % n) * n + (v + n - b) % n];
                }
            }
        }
    }
    d
}

#[test]
fn matches_direct_circular_convolution_for_every_p_and_awkward_n() {
    for machine in machines() {
        for n in [1, 2, 3, 6, 8] {
            let inputs = Conv2dKernel.generate(n, 5).unwrap();
            let run = Conv2dKernel.run(&inputs, &threads(), &machine).unwrap();
            let expected = direct(complex(&inputs[0]), complex(&inputs[1]), n);
            let err = complex(&run.result)
                .iter()
                .zip(&expected)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            assert!(err < 1e-11, "p = {} n = {n}: {err}", machine.p());
            assert!(run.verification.passed);
            assert!(
                (declared(&run) - conv2d::work(n)).abs() <= 1e-12 * conv2d::work(n),
                "p = {} n = {n}: declared {} is not W = {}",
                machine.p(),
                declared(&run),
                conv2d::work(n)
            );
        }
    }
}

#[test]
fn work_is_the_published_formula() {
    assert_eq!(conv2d::work(145).round(), 10_492_177.0); // JPDC Table 10
    assert_eq!(conv2d::flops(8), 30.0 * 64.0 * 3.0 + 8.0 * 64.0);
}

#[test]
fn real_images_and_mismatched_sizes_are_one_line_errors() {
    let machine = machine(&[1.0]);
    let real_inputs = hetscale_kernels::mm::MmKernel.generate(4, 1).unwrap();
    let err = Conv2dKernel
        .run(&real_inputs, &threads(), &machine)
        .unwrap_err()
        .to_string();
    assert!(err.contains("complex128") && !err.contains('\n'), "{err}");
    let mut mixed = Conv2dKernel.generate(4, 1).unwrap();
    mixed[1] = Conv2dKernel.generate(3, 1).unwrap().remove(1);
    let err = Conv2dKernel
        .run(&mixed, &threads(), &machine)
        .unwrap_err()
        .to_string();
    assert!(err.contains("same size"), "{err}");
}
