//! Latency of an empty superstep at p = 1, 2, 4, 8, 16 on the threads backend.
//!
//! `cargo bench -p hbsp --bench sync_latency -- --measurement-time 2 --warm-up-time 1`
//!
//! Criterion times batches of supersteps inside one run (thread start-up excluded). Before
//! the Criterion groups, a tail pass times 20,000 single supersteps per `p` and prints the
//! median, 99th percentile and maximum, because "no superstep slower than 10 ms" is a claim
//! about the maximum, which Criterion's per-batch means hide.

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use hbsp::{Backend, HbspError, Machine, ThreadsOptions};

const PS: [usize; 5] = [1, 2, 4, 8, 16];

fn backend() -> Backend {
    Backend::Threads(ThreadsOptions {
        trace: false,
        ..ThreadsOptions::default()
    })
}

fn machine(p: usize) -> Machine {
    hetscale_machine::presets::local(p)
        .all()
        .expect("local preset is valid")
}

/// Time of `iters` empty supersteps, as node 0 sees it.
fn empty_supersteps(machine: &Machine, iters: u64) -> Duration {
    let output = hbsp::run(&backend(), machine, |ctx| {
        ctx.sync()?;
        let start = Instant::now();
        for _ in 0..iters {
            ctx.sync()?;
        }
        Ok::<_, HbspError>(start.elapsed())
    })
    .expect("benchmark run");
    output.results[0]
}

fn sync_latency(c: &mut Criterion) {
    let mut group = c.benchmark_group("sync_latency");
    for p in PS {
        let machine = machine(p);
        group.bench_with_input(BenchmarkId::new("p", p), &p, |b, _| {
            b.iter_custom(|iters| empty_supersteps(&machine, iters))
        });
    }
    group.finish();
}

/// Per-superstep times (one per `sync`) on node 0.
fn superstep_times(p: usize, count: usize) -> Vec<Duration> {
    let output = hbsp::run(&backend(), &machine(p), |ctx| {
        let mut times = Vec::with_capacity(count);
        ctx.sync()?;
        for _ in 0..count {
            let start = Instant::now();
            ctx.sync()?;
            times.push(start.elapsed());
        }
        Ok::<_, HbspError>(times)
    })
    .expect("benchmark run");
    output.results.into_iter().next().unwrap_or_default()
}

fn tail_latency() {
    println!("sync_latency tail: 20000 single empty supersteps per p (node 0's view)");
    for p in PS {
        let mut times = superstep_times(p, 20_000);
        times.sort();
        let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
        println!(
            "sync_latency tail p={p:<2}  median {:>10.3?}  p99 {:>10.3?}  max {:>10.3?}",
            at(0.5),
            at(0.99),
            times[times.len() - 1]
        );
    }
}

fn main() {
    // Under `cargo test --benches` Criterion runs each benchmark once; skip the tail pass there.
    if std::env::args().any(|a| a == "--bench") {
        tail_latency();
    }
    let mut criterion = Criterion::default().configure_from_args();
    sync_latency(&mut criterion);
    criterion.final_summary();
}
