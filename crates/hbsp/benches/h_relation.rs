//! Throughput of an h-relation on two nodes (each sends one message of the given size to
//! the other, syncs and receives it) next to the memcpy bandwidth of the same sizes.
//!
//! `cargo bench -p hbsp --bench h_relation -- --measurement-time 2 --warm-up-time 1`
//!
//! Throughput is bytes per node per superstep: a node's h-relation of `h` bytes against
//! copying `h` bytes once.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use hbsp::{Backend, HbspError, Machine, ThreadsOptions};

const SIZES: [usize; 8] = [
    1 << 10,
    4 << 10,
    16 << 10,
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
    16 << 20,
];

fn backend() -> Backend {
    Backend::Threads(ThreadsOptions {
        trace: false,
        ..ThreadsOptions::default()
    })
}

fn pair() -> Machine {
    hbsp::presets::local(2)
        .all()
        .expect("local preset is valid")
}

/// Time of `iters` supersteps in which each node sends `bytes` to the other and receives.
fn exchanges(machine: &Machine, bytes: usize, iters: u64) -> Duration {
    let output = hbsp::run(&backend(), machine, |ctx| {
        let payload = vec![1u8; bytes];
        let other = 1 - ctx.pid();
        ctx.sync()?;
        let start = Instant::now();
        for _ in 0..iters {
            ctx.send(other, 0, &payload)?;
            ctx.sync()?;
            let message = ctx.recv::<u8>()?;
            black_box(message);
        }
        Ok::<_, HbspError>(start.elapsed())
    })
    .expect("benchmark run");
    output.results[0]
}

fn h_relation(c: &mut Criterion) {
    let machine = pair();
    let mut group = c.benchmark_group("h_relation");
    for bytes in SIZES {
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_with_input(BenchmarkId::new("p2", bytes), &bytes, |b, &bytes| {
            b.iter_custom(|iters| exchanges(&machine, bytes, iters))
        });
    }
    group.finish();
}

fn memcpy(c: &mut Criterion) {
    let mut group = c.benchmark_group("memcpy");
    for bytes in SIZES {
        let source = vec![1u8; bytes];
        let mut target = vec![0u8; bytes];
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_with_input(BenchmarkId::new("copy", bytes), &bytes, |b, _| {
            b.iter(|| {
                target.copy_from_slice(black_box(&source));
                black_box(&mut target);
            })
        });
    }
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    h_relation(&mut criterion);
    memcpy(&mut criterion);
    criterion.final_summary();
}
