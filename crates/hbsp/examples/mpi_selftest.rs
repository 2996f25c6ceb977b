//! Checks the mpi backend against the threads backend; run under `mpirun -np P` (P >= 1).
//!
//! `mpi_selftest check`: programs covering messages and every collective run on the mpi
//! backend and, inside each rank, on the threads backend over the same machine; results,
//! predicted costs and the traces' byte and message counts must be identical.
//! `mpi_selftest mismatch`: nodes make different calls; every rank must get the error.
//! `mpi_selftest panic|abort|error RANK`: node RANK fails in its second superstep while the
//! others wait; the job must end with the failure named and a non-zero exit.
//! `mpi_selftest empty N`: N empty supersteps, for counting the MPI calls they make.
//!
//! With `--rounds` anywhere among the arguments the ranks agree by `MPI_Sendrecv` rounds, as
//! across machines, instead of through shared memory.

use hbsp::collectives::{self, BroadcastAlgorithm, Root};
use hbsp::{
    Backend, Ctx, HbspError, Machine, Message, MpiOptions, MpiSession, Network, Node, Platform,
    RunOutput,
};

type Outcome = Result<(), String>;

fn main() {
    let session = match MpiSession::init() {
        Ok(session) => session,
        Err(err) => {
            eprintln!("mpi_selftest: {err}");
            std::process::exit(2);
        }
    };
    let (flags, args): (Vec<String>, Vec<String>) =
        std::env::args().skip(1).partition(|a| a.starts_with("--"));
    let mpi = Backend::Mpi(MpiOptions {
        shared_memory: !flags.iter().any(|f| f == "--rounds"),
        ..MpiOptions::default()
    });
    let machine = machine(session.size());
    let outcome = match args.first().map(String::as_str).unwrap_or("check") {
        // Even speeds too: there equal pieces move by MPI's own collectives.
        "check" => check(&mpi, &machine).and_then(|()| check(&mpi, &even_machine(session.size()))),
        "mismatch" => mismatch(&mpi, &machine),
        "empty" => {
            let supersteps = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(100);
            empty(&mpi, &even_machine(session.size()), supersteps)
        }
        mode @ ("panic" | "abort" | "error") => {
            let rank = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(0);
            fail(&mpi, &machine, mode, rank)
        }
        other => Err(format!(
            "unknown mode {other}: use check, mismatch, empty, panic, abort or error"
        )),
    };
    let rank = session.rank();
    match outcome {
        Ok(()) if rank == 0 => println!("mpi_selftest: ok on {} ranks", session.size()),
        Ok(()) => {}
        Err(message) => {
            eprintln!("mpi_selftest: rank {rank}: {message}");
            drop(session);
            std::process::exit(1);
        }
    }
}

/// `p` nodes of uneven speeds and injection slowness.
fn machine(p: usize) -> Machine {
    let nodes = (0..p)
        .map(|j| {
            Node::new(format!("n{j}"), 100.0 + 37.0 * ((j * 5) % 7) as f64)
                .with_r(1.0 + j as f64 / 4.0)
        })
        .collect();
    let platform = Platform {
        name: "selftest".into(),
        description: String::new(),
        speed_unit: "Mflop/s".into(),
        nodes,
        network: Network::new(1e-8, hbsp::BarrierCost::constant(1e-4)),
        machine: None,
    };
    platform.all().expect("a valid machine")
}

/// `p` nodes of one speed.
fn even_machine(p: usize) -> Machine {
    let nodes = (0..p).map(|j| Node::new(format!("e{j}"), 100.0)).collect();
    Platform {
        name: "selftest-even".into(),
        description: String::new(),
        speed_unit: "Mflop/s".into(),
        nodes,
        network: Network::new(1e-8, hbsp::BarrierCost::constant(1e-4)),
        machine: None,
    }
    .all()
    .expect("a valid machine")
}

/// A node's view of a program run, comparable across backends.
type Seen = Vec<(String, Vec<u64>, u64)>;

fn check(mpi: &Backend, machine: &Machine) -> Outcome {
    for (name, program) in programs() {
        let on_mpi = hbsp::run(mpi, machine, program).map_err(|e| e.to_string())?;
        let on_threads =
            hbsp::run(&Backend::threads(), machine, program).map_err(|e| e.to_string())?;
        if on_mpi.results != on_threads.results {
            return Err(format!("{name}: results differ from the threads backend"));
        }
        if counts(&on_mpi) != counts(&on_threads) {
            return Err(format!(
                "{name}: trace counts differ from the threads backend"
            ));
        }
    }
    Ok(())
}

/// Bytes and messages in and out, per node and superstep.
fn counts(output: &RunOutput<Seen>) -> Vec<[u64; 4]> {
    let nodes = &output.trace.nodes;
    nodes
        .iter()
        .flat_map(|n| &n.supersteps)
        .map(|s| [s.bytes_out, s.bytes_in, s.messages_out, s.messages_in])
        .collect()
}

type Program = fn(&mut Ctx<'_>) -> hbsp::Result<Seen>;

fn programs() -> Vec<(&'static str, Program)> {
    vec![
        ("messages", messages),
        ("scatter and gather", scatter_gather),
        ("broadcasts", broadcasts),
        ("reductions", reductions),
        ("all-to-all", all_to_all),
    ]
}

/// Every node sends two tagged messages of pid-dependent sizes to every node, itself
/// included, in reverse pid order, over three supersteps; receivers record what arrives.
fn messages(ctx: &mut Ctx<'_>) -> hbsp::Result<Seen> {
    let (pid, p) = (ctx.pid(), ctx.nprocs());
    let mut seen = Vec::new();
    for step in 0..3u64 {
        for to in (0..p).rev() {
            let len = (pid * 31 + to * 7 + step as usize * 1000) % 2000;
            let data: Vec<u64> = (0..len as u64).map(|i| i ^ (pid as u64) << 32).collect();
            ctx.send(to, step as u32, &data)?;
            ctx.send(to, 100 + step as u32, &[pid as u8, to as u8, 7])?;
        }
        ctx.sync()?;
        while let Some(info) = ctx.peek() {
            let message = if info.bytes % 8 == 0 && info.tag < 100 {
                ctx.recv::<u64>()?.map(Message::into_parts)
            } else {
                ctx.recv::<u8>()?.map(|m| {
                    let (source, tag, data) = m.into_parts();
                    (source, tag, data.into_iter().map(u64::from).collect())
                })
            };
            if let Some((source, tag, data)) = message {
                seen.push((format!("step {step} from {source} tag {tag}"), data, 0));
            }
        }
    }
    Ok(seen)
}

fn values(n: usize, salt: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|i| i.wrapping_mul(2654435761) ^ salt)
        .collect()
}

fn scatter_gather(ctx: &mut Ctx<'_>) -> hbsp::Result<Seen> {
    let mut seen = Vec::new();
    for (n, root) in [
        (0, Root::Fastest),
        (1, Root::Slowest),
        (1001, Root::Fastest),
        (777, Root::Pid(0)),
    ] {
        let data = values(n, 1);
        let piece = collectives::scatter(ctx, root, &data)?;
        let back = collectives::gather(ctx, root, &piece.value, n)?;
        seen.push(("scatter".into(), piece.value, piece.predicted_s.to_bits()));
        seen.push((
            "gather".into(),
            back.value.unwrap_or_default(),
            back.predicted_s.to_bits(),
        ));
    }
    let p = ctx.nprocs();
    for counts in [vec![3; p], (0..p).map(|j| j * 2).collect()] {
        let data = values(counts.iter().sum(), 3);
        let piece = collectives::scatterv(ctx, Root::Slowest, &data, &counts)?;
        seen.push(("scatterv".into(), piece.value, piece.predicted_s.to_bits()));
    }
    Ok(seen)
}

fn broadcasts(ctx: &mut Ctx<'_>) -> hbsp::Result<Seen> {
    let mut seen = Vec::new();
    for algorithm in [
        BroadcastAlgorithm::OnePhase,
        BroadcastAlgorithm::TwoPhase,
        BroadcastAlgorithm::Auto,
    ] {
        for n in [0, 5, 4096] {
            let data = values(n, 2);
            let got = collectives::broadcast(ctx, Root::Slowest, &data, algorithm)?;
            seen.push((
                format!("broadcast {algorithm:?}"),
                got.value,
                got.predicted_s.to_bits(),
            ));
        }
    }
    Ok(seen)
}

fn reductions(ctx: &mut Ctx<'_>) -> hbsp::Result<Seen> {
    let local = values(64, ctx.pid() as u64);
    let sum = collectives::allreduce(ctx, &local, u64::wrapping_add)?;
    let max = collectives::reduce(ctx, Root::Fastest, &local, u64::max)?;
    let all = collectives::allgather(ctx, &local[..ctx.pid() + 1])?;
    Ok(vec![
        ("allreduce".into(), sum.value, sum.predicted_s.to_bits()),
        (
            "reduce".into(),
            max.value.unwrap_or_default(),
            max.predicted_s.to_bits(),
        ),
        (
            "allgather".into(),
            all.value.concat(),
            all.predicted_s.to_bits(),
        ),
    ])
}

fn all_to_all(ctx: &mut Ctx<'_>) -> hbsp::Result<Seen> {
    let p = ctx.nprocs();
    let blocks: Vec<Vec<u64>> = (0..p)
        .map(|to| values(13, (ctx.pid() * p + to) as u64))
        .collect();
    let got = collectives::alltoall(ctx, &blocks)?;
    Ok(vec![(
        "alltoall".into(),
        got.value.concat(),
        got.predicted_s.to_bits(),
    )])
}

/// Node 0 calls a broadcast where the others sync: every rank must see the mismatch.
fn mismatch(mpi: &Backend, machine: &Machine) -> Outcome {
    let outcome = hbsp::run(mpi, machine, |ctx| {
        if ctx.pid() == 0 {
            collectives::broadcast(ctx, Root::Pid(0), &[1u32], BroadcastAlgorithm::OnePhase)?;
        } else {
            ctx.sync()?;
        }
        Ok::<_, HbspError>(())
    });
    match outcome {
        Err(err @ HbspError::Mismatch { .. }) if machine.p() > 1 => {
            println!("mismatch reported: {err}");
            Ok(())
        }
        Ok(_) if machine.p() == 1 => Ok(()),
        other => Err(format!("expected a mismatch, got {other:?}")),
    }
}

/// `supersteps` empty supersteps.
fn empty(mpi: &Backend, machine: &Machine, supersteps: usize) -> Outcome {
    hbsp::run(mpi, machine, |ctx| {
        for _ in 0..supersteps {
            ctx.sync()?;
        }
        Ok::<_, HbspError>(())
    })
    .map(|_| ())
    .map_err(|e| e.to_string())
}

/// Node `rank` panics, aborts or returns an error in its second superstep.
fn fail(mpi: &Backend, machine: &Machine, mode: &str, rank: usize) -> Outcome {
    let outcome = hbsp::run(mpi, machine, |ctx| {
        ctx.sync().map_err(|e| e.to_string())?;
        if ctx.pid() == rank {
            match mode {
                "panic" => panic!("selftest panic on purpose"),
                "abort" => return Err(ctx.abort("selftest abort on purpose").to_string()),
                _ => return Err("selftest error on purpose".to_string()),
            }
        }
        ctx.sync().map_err(|e| e.to_string())?;
        Ok(())
    });
    Err(format!(
        "the job survived a {mode} of node {rank}: {outcome:?}"
    ))
}
