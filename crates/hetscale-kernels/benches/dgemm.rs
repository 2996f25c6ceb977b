//! Local DGEMM at n = 1024 on one thread (faer, `Par::Seq`): the marked-speed benchmark of
//! the matrix kernels. Criterion reports the throughput in flop/s ("elem/s", 2 n^3 per
//! product). Compare with `benches/dgemm_numpy.py` (OpenBLAS, one thread).

#![allow(missing_docs)] // criterion_group! and criterion_main! generate undocumented items

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hetscale_kernels::local::gemm;

fn operand(n: usize, shift: usize) -> Vec<f64> {
    (0..n * n)
        .map(|i| ((i + shift) % 17) as f64 * 0.1 - 0.8)
        .collect()
}

fn dgemm(c: &mut Criterion) {
    let n = 1024;
    let (a, b) = (operand(n, 0), operand(n, 5));
    let mut out = vec![0.0; n * n];
    let mut group = c.benchmark_group("dgemm");
    group.throughput(Throughput::Elements(2 * (n as u64).pow(3)));
    group.sample_size(20);
    group.bench_function(BenchmarkId::new("faer_seq", n), |bench| {
        bench.iter(|| gemm((n, n, n), &a, &b, &mut out, false))
    });
    group.finish();
}

criterion_group!(benches, dgemm);
criterion_main!(benches);
