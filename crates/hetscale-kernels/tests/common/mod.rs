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

/// The standard output of `python3 -c SCRIPT`, which must succeed; the test asks for numpy
/// first (`hetscale_testkit::require(Need::Numpy)`).
pub fn numpy(script: &str) -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "numpy check failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A fresh temporary directory for this test.
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hetscale-kernels-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
