//! hbsp on the mpi backend beside plain MPI, side by side in one run on the same ranks:
//! sync against `MPI_Barrier`, balanced scatter against `MPI_Scatterv` with the same counts,
//! and broadcast against `MPI_Bcast`, on homogeneous and on heterogeneous marked speeds.
//!
//! ```text
//! cargo build --release -p hbsp --features mpi --examples
//! mpirun --oversubscribe -np 4 target/release/examples/mpi_bench [REPETITIONS]
//! ```
//!
//! Each repetition times one hbsp operation and then the MPI one, alternating, so both see
//! the same machine load. Both reuse their memory: MPI receives into the same buffer every
//! time, hbsp's results go back with `Ctx::recycle_vec` for the next call to fill; an operation's time is the slowest rank's, and the table shows the
//! median over repetitions and the ratio hbsp / MPI.

use hbsp::collectives::{self, BroadcastAlgorithm, Root};
use hbsp::{Backend, BarrierCost, Ctx, Machine, MpiOptions, MpiSession, Network, Node, Platform};
use mpi::collective::{Root as _, SystemOperation};
use mpi::datatype::Partition;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// Items (f64) scattered or broadcast: 1 MiB.
const ITEMS: usize = 1 << 17;

fn main() {
    let session = MpiSession::init().unwrap_or_else(|e| panic!("{e}"));
    let repetitions: usize = std::env::args()
        .nth(1)
        .and_then(|r| r.parse().ok())
        .unwrap_or(200);
    let p = session.size();
    if session.rank() == 0 {
        println!(
            "# hbsp (mpi backend) vs MPI, {p} ranks, {repetitions} repetitions, median of the slowest rank"
        );
        println!(
            "{:<14} {:<28} {:>12} {:>12} {:>8}",
            "speeds", "operation", "hbsp us", "MPI us", "ratio"
        );
    }
    for (label, speeds) in [
        ("homogeneous", vec![100.0; p]),
        (
            "heterogeneous",
            (0..p).map(|j| 100.0 / (1 + j % 4) as f64).collect(),
        ),
    ] {
        let machine = machine(&speeds);
        let backend = Backend::Mpi(MpiOptions {
            emulate_speeds: true,
            trace: false,
            ..MpiOptions::default()
        });
        let rows = hbsp::run(&backend, &machine, |ctx| measure(ctx, repetitions))
            .unwrap_or_else(|e| panic!("{e}"));
        if session.rank() == 0 {
            for (operation, hbsp_s, mpi_s) in &rows.results[0] {
                println!(
                    "{label:<14} {operation:<28} {:>12.2} {:>12.2} {:>8.2}",
                    hbsp_s * 1e6,
                    mpi_s * 1e6,
                    hbsp_s / mpi_s
                );
            }
        }
    }
}

fn machine(speeds: &[f64]) -> Machine {
    let nodes = speeds
        .iter()
        .enumerate()
        .map(|(j, &s)| Node::new(format!("rank{j}"), s))
        .collect();
    Platform {
        name: "mpi-bench".into(),
        description: String::new(),
        speed_unit: "Mflop/s".into(),
        nodes,
        network: Network::new(1e-9, BarrierCost::constant(1e-5)),
        machine: None,
    }
    .all()
    .expect("a valid machine")
}

type Row = (String, f64, f64);

fn measure(ctx: &mut Ctx<'_>, repetitions: usize) -> hbsp::Result<Vec<Row>> {
    let world = SimpleCommunicator::world();
    let data: Vec<f64> = (0..ITEMS).map(|i| i as f64).collect();
    let root = ctx.rank(1)?;
    let counts = ctx.balanced_counts(ITEMS);
    let mut rows = Vec::new();

    let sync = side_by_side(&world, repetitions, || ctx.sync(), || world.barrier());
    rows.push(("sync / MPI_Barrier".to_string(), sync.0, sync.1));

    let mut share = vec![0.0; counts[ctx.pid()]];
    let scatter = side_by_side(
        &world,
        repetitions,
        || {
            let piece = collectives::scatter(ctx, Root::Fastest, &data)?.value;
            ctx.recycle_vec(piece);
            Ok(())
        },
        || mpi_scatterv(&world, root, &data, &counts, &mut share),
    );
    rows.push(("scatter 1 MiB / Scatterv".to_string(), scatter.0, scatter.1));

    let mut copy = data.clone();
    for (name, algorithm) in [
        ("one-phase", BroadcastAlgorithm::OnePhase),
        ("two-phase", BroadcastAlgorithm::TwoPhase),
    ] {
        let broadcast = side_by_side(
            &world,
            repetitions,
            || {
                let copy = collectives::broadcast(ctx, Root::Fastest, &data, algorithm)?.value;
                ctx.recycle_vec(copy);
                Ok(())
            },
            || {
                world
                    .process_at_rank(root as i32)
                    .broadcast_into(&mut copy[..])
            },
        );
        rows.push((
            format!("broadcast {name} 1 MiB / Bcast"),
            broadcast.0,
            broadcast.1,
        ));
    }
    Ok(rows)
}

fn mpi_scatterv(
    world: &SimpleCommunicator,
    root: usize,
    data: &[f64],
    counts: &[usize],
    share: &mut [f64],
) {
    let root_process = world.process_at_rank(root as i32);
    if world.rank() as usize == root {
        let counts: Vec<i32> = counts.iter().map(|&c| c as i32).collect();
        let displacements: Vec<i32> = counts
            .iter()
            .scan(0, |at, &c| {
                let here = *at;
                *at += c;
                Some(here)
            })
            .collect();
        let send = Partition::new(data, &counts[..], &displacements[..]);
        root_process.scatter_varcount_into_root(&send, share);
    } else {
        root_process.scatter_varcount_into(share);
    }
}

/// Median over `repetitions` of the slowest rank's time for `hbsp_op` and for `mpi_op`,
/// timed alternately after a barrier each.
fn side_by_side(
    world: &SimpleCommunicator,
    repetitions: usize,
    mut hbsp_op: impl FnMut() -> hbsp::Result<()>,
    mut mpi_op: impl FnMut(),
) -> (f64, f64) {
    let mut hbsp_times = Vec::with_capacity(repetitions);
    let mut mpi_times = Vec::with_capacity(repetitions);
    for _ in 0..repetitions {
        world.barrier();
        let start = mpi::time();
        hbsp_op().unwrap_or_else(|e| panic!("{e}"));
        hbsp_times.push(slowest(world, mpi::time() - start));
        world.barrier();
        let start = mpi::time();
        mpi_op();
        mpi_times.push(slowest(world, mpi::time() - start));
    }
    (median(&mut hbsp_times), median(&mut mpi_times))
}

fn slowest(world: &SimpleCommunicator, local: f64) -> f64 {
    let mut max = 0.0;
    world.all_reduce_into(&local, &mut max, SystemOperation::max());
    max
}

fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}
