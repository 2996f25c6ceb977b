//! Shared helpers of the integration tests: machines, naive references.
#![allow(dead_code)]

use hbsp::{Backend, BarrierCost, Machine, Network, Node, Platform};
use hetscale_kernels::{Array, ArrayData, KernelRun};

/// A machine whose node `j` has marked speed `speeds[j]` Mflop/s.
pub fn machine(speeds: &[f64]) -> Machine {
    Platform {
        name: "test".into(),
        description: String::new(),
        speed_unit: "Mflop/s".into(),
        nodes: speeds
            .iter()
            .enumerate()
            .map(|(i, &s)| Node::new(format!("n{i}"), s))
            .collect(),
        network: Network::new(1e-9, BarrierCost::constant(1e-5)),
        machine: None,
    }
    .all()
    .unwrap()
}

/// For p = 1..=8: heterogeneous speeds, the last node 1000 times slower than the others so
/// its share of a small problem rounds to zero.
pub fn machines() -> Vec<Machine> {
    (1..=8)
        .map(|p| {
            let mut speeds: Vec<f64> = (0..p).map(|j| 1.0 + ((j * 7) % 5) as f64).collect();
            if p >= 3 {
                speeds[p - 1] = 0.002;
            }
            machine(&speeds)
        })
        .collect()
}

pub fn threads() -> Backend {
    Backend::threads()
}

pub fn real(array: &Array) -> &[f64] {
    match &array.data {
        ArrayData::Real(v) => v,
        ArrayData::Complex(_) => panic!("expected a real array"),
    }
}

/// `C = A B` by the triple loop.
pub fn naive_matmul(a: &[f64], b: &[f64], n: usize) -> Vec<f64> {
    let mut c = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            c[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
        }
    }
    c
}

pub fn max_abs_diff(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len());
    x.iter()
        .zip(y)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

/// Sum of the operations every node declared, by superstep.
pub fn declared(run: &KernelRun) -> f64 {
    run.declared_ops()
}

/// `python3 -c SCRIPT` with numpy. Without numpy it fails, unless [`SKIP_NUMPY`] is `1`: then
/// `None` and a printed note.
pub fn numpy(script: &str) -> Option<String> {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import numpy"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        // A missing numpy must not pass silently (CI installs it); skipping is an explicit choice.
        assert!(
            numpy_may_be_skipped(),
            "python3 with numpy is needed for the numpy cross-check: `python3 -m pip install numpy`, \
             or set {SKIP_NUMPY}=1 to skip it"
        );
        eprintln!("note: {SKIP_NUMPY}=1 and no numpy: skipping the numpy cross-check");
        return None;
    }
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "numpy check failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

/// The environment variable that lets a machine without numpy skip the cross-check.
pub const SKIP_NUMPY: &str = "HETSCALE_SKIP_NUMPY";

fn numpy_may_be_skipped() -> bool {
    std::env::var(SKIP_NUMPY).is_ok_and(|v| v == "1")
}

/// A fresh temporary directory for this test.
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hetscale-kernels-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
