//! Throughput of an h-relation on two nodes (each sends one message of the given size to
//! the other, syncs and receives it) next to the memcpy bandwidth of the same sizes, measured
//! in the same run.
//!
//! `cargo bench -p hbsp --bench h_relation -- --measurement-time 2 --warm-up-time 1`
//!
//! Throughput is bytes per node per superstep: a node's h-relation of `h` bytes against
//! copying `h` bytes once. `p2` sends with `send` (one copy into a new vector) and drops what
//! it receives; `p2_recycle` hands each received message back with `Ctx::recycle`, so `send`
//! copies into memory the node filled before and nothing is allocated once the run is going.
//! Two more cases tell where the time goes:
//!
//! - `p2_send_vec`: each node copies its payload into the vector it received in the previous
//!   superstep and moves that with `send_vec`, so no superstep allocates. While the payload
//!   fits in cache it is slower than `p2`, not faster: the vector's cache lines were last
//!   written on the other core.
//! - `p2_local_copy`: each node copies `h` bytes into a buffer of its own and syncs, with no
//!   message: the floor of an h-relation with one copy per message on this host. Both nodes
//!   copy at once, so it is below the one-thread `memcpy` once `h` outgrows the private cache,
//!   and far below it when other work takes the cores (a superstep ends only when both node
//!   threads have run).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use hbsp::{Backend, Ctx, HbspError, Machine, Message, ThreadsOptions};

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
    hetscale_machine::presets::local(2)
        .all()
        .expect("local preset is valid")
}

/// How a node moves its `h` bytes in each superstep.
#[derive(Debug, Clone, Copy)]
enum Exchange {
    /// `send(&payload)` (one copy), `recv` moves the vector out.
    Send,
    /// As `Send`, then `recycle` the received message.
    Recycle,
    /// Copy into the last received vector and move it back with `send_vec`.
    SendVec,
    /// Copy into a buffer of its own; no message.
    LocalCopy,
}

/// Untimed supersteps before the clock starts, so that each measurement sees the steady
/// state (allocator and recycled vectors warm) rather than the start of a run: Criterion
/// starts a new run for every sample, of only a few supersteps at the larger sizes.
const WARM_UP: u64 = 3;

/// Time of `iters` supersteps of `exchange` with `bytes` per node, as node 0 sees it.
fn supersteps(machine: &Machine, exchange: Exchange, bytes: usize, iters: u64) -> Duration {
    let output = hbsp::run(&backend(), machine, |ctx: &mut Ctx<'_>| {
        let payload = vec![1u8; bytes];
        let mut buffer = vec![0u8; bytes];
        let other = 1 - ctx.pid();
        let mut start = Instant::now();
        for step in 0..WARM_UP + iters {
            if step == WARM_UP {
                ctx.sync()?;
                start = Instant::now();
            }
            match exchange {
                Exchange::Send => {
                    ctx.send(other, 0, &payload)?;
                    ctx.sync()?;
                    black_box(ctx.recv::<u8>()?);
                }
                Exchange::Recycle => {
                    ctx.send(other, 0, &payload)?;
                    ctx.sync()?;
                    if let Some(message) = ctx.recv::<u8>()? {
                        black_box(&message);
                        ctx.recycle(message);
                    }
                }
                Exchange::SendVec => {
                    buffer.copy_from_slice(&payload);
                    ctx.send_vec(other, 0, std::mem::take(&mut buffer))?;
                    ctx.sync()?;
                    buffer = ctx
                        .recv::<u8>()?
                        .map(Message::into_data)
                        .unwrap_or_default();
                    black_box(&buffer);
                }
                Exchange::LocalCopy => {
                    buffer.copy_from_slice(black_box(&payload));
                    black_box(&mut buffer);
                    ctx.sync()?;
                }
            }
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
        for (name, exchange) in [
            ("p2", Exchange::Send),
            ("p2_recycle", Exchange::Recycle),
            ("p2_send_vec", Exchange::SendVec),
            ("p2_local_copy", Exchange::LocalCopy),
        ] {
            group.bench_with_input(BenchmarkId::new(name, bytes), &bytes, |b, &bytes| {
                b.iter_custom(|iters| supersteps(&machine, exchange, bytes, iters))
            });
        }
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
