//! Results dumped as `.npy` checked by numpy's own implementations: `A @ B`, `np.linalg.solve`,
//! `ifft2(fft2 X * fft2 Y)` and a vectorised Burg. Without numpy the test is skipped, saying so
//! (a failure under `HETSCALE_STRICT_TESTS=1`).

mod common;

use common::*;
use hetscale_kernels::burg::BurgKernel;
use hetscale_kernels::conv2d::Conv2dKernel;
use hetscale_kernels::ge::GeKernel;
use hetscale_kernels::mm::MmKernel;
use hetscale_kernels::summa::{Strategy, SummaKernel};
use hetscale_kernels::{Kernel, write_npy};
use hetscale_testkit::{Need, require};

const CHECKS: &str = r#"
import sys, numpy as np
kind, d = sys.argv[1], sys.argv[2]
load = lambda name: np.load(f"{d}/{name}.npy")
out = load("out")
if kind in ("mm", "summa"):
    ref = load("in0") @ load("in1")
elif kind == "ge":
    ref = np.linalg.solve(load("in0"), load("in1"))
elif kind == "conv2d":
    ref = np.fft.ifft2(np.fft.fft2(load("in0")) * np.fft.fft2(load("in1")))
elif kind == "burg":
    x = load("in0"); f = x.copy(); b = x.copy(); a = np.zeros(0)
    for m in range(1, int(sys.argv[3]) + 1):
        ff, bb = f[m:].copy(), b[m - 1:-1].copy()
        k = -2 * ff.dot(bb) / (ff.dot(ff) + bb.dot(bb))
        a = np.concatenate([a + k * a[::-1], [k]])
        f[m:], b[m:] = ff + k * bb, bb + k * ff
    ref = -a
assert out.shape == ref.shape and out.dtype == ref.dtype, (out.shape, ref.shape, out.dtype, ref.dtype)
print(np.abs(out - ref).max() / np.abs(ref).max())
"#;

#[test]
fn dumped_results_match_numpy() {
    if !require(Need::Numpy) {
        return;
    }
    let machine = machine(&[3.0, 1.0, 0.001]);
    let order = 6;
    let kernels: Vec<(&str, Box<dyn Kernel>, usize)> = vec![
        ("mm", Box::new(MmKernel), 31),
        (
            "summa",
            Box::new(SummaKernel {
                strategy: Strategy::HoHe1,
                grid: Some((3, 1)),
                nb: 4,
            }),
            29,
        ),
        ("ge", Box::new(GeKernel::default()), 27),
        ("conv2d", Box::new(Conv2dKernel), 12),
        ("burg", Box::new(BurgKernel { order }), 101),
    ];
    let dir = temp_dir("numpy");
    for (name, kernel, n) in kernels {
        let inputs = kernel.generate(n, 42).unwrap();
        let run = kernel.run(&inputs, &threads(), &machine).unwrap();
        for (i, input) in inputs.iter().enumerate() {
            write_npy(dir.join(format!("in{i}.npy")), input).unwrap();
        }
        write_npy(dir.join("out.npy"), &run.result).unwrap();
        let script = CHECKS
            .replace(
                "sys.argv[1], sys.argv[2]",
                &format!("{name:?}, {:?}", dir.display().to_string()),
            )
            .replace("int(sys.argv[3])", &order.to_string());
        let stdout = numpy(&script);
        let error: f64 = stdout.trim().parse().unwrap();
        assert!(
            error < 1e-10,
            "{name}: relative error {error} against numpy"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}
