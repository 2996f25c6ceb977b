//! Supersteps, messages, failures and traces on the threads backend (and, for messages and
//! failures, on both engines of sim).

mod common;

use common::{machine, uneven, within_5s};
use hbsp::{Backend, Ctx, HbspError, Message, ThreadsOptions};

fn threads() -> Backend {
    Backend::threads()
}

/// Threads and sim's two engines: the backends that run every node in this process.
fn in_process() -> Vec<Backend> {
    let mut backends = vec![threads()];
    backends.extend(common::sim());
    backends
}

#[test]
fn messages_arrive_after_sync_in_source_then_send_order() {
    for backend in in_process() {
        let output = within_5s(move || {
            hbsp::run(&backend, &machine(&uneven(5)), |ctx| {
                let p = ctx.nprocs();
                // Send in reverse destination order, two messages each, to check the ordering.
                for to in (0..p).rev() {
                    ctx.send(to, 10 + ctx.pid() as u32, &[ctx.pid() as u32, 0])?;
                    ctx.send(to, 20 + ctx.pid() as u32, &[ctx.pid() as u32, 1])?;
                }
                if ctx.queue_len() != 0 {
                    return Err(ctx.abort("a message arrived before sync"));
                }
                ctx.sync()?;
                let first = ctx.peek().expect("messages arrived");
                let bytes = ctx.queue_bytes();
                let got: Vec<(usize, u32, Vec<u32>)> = ctx
                    .recv_all::<u32>()?
                    .into_iter()
                    .map(Message::into_parts)
                    .collect();
                Ok::<_, HbspError>((first, bytes, got))
            })
        })
        .unwrap();
        for (first, bytes, got) in output.results {
            assert_eq!((first.source, first.tag, first.bytes), (0, 10, 8));
            assert_eq!(bytes, 5 * 2 * 8);
            let expect: Vec<(usize, u32, Vec<u32>)> = (0..5)
                .flat_map(|s| {
                    [
                        (s, 10 + s as u32, vec![s as u32, 0]),
                        (s, 20 + s as u32, vec![s as u32, 1]),
                    ]
                })
                .collect();
            assert_eq!(got, expect);
        }
    }
}

#[test]
fn unread_messages_stay_queued_across_supersteps() {
    let output = hbsp::run(&threads(), &machine(&[1.0, 1.0]), |ctx| {
        let other = 1 - ctx.pid();
        ctx.send(other, 1, &[1u8])?;
        ctx.sync()?;
        ctx.send(other, 2, &[2u8, 2])?;
        ctx.sync()?;
        let tags: Vec<u32> = ctx.recv_all::<u8>()?.iter().map(|m| m.tag).collect();
        Ok::<_, HbspError>(tags)
    })
    .unwrap();
    assert_eq!(output.results, vec![vec![1, 2], vec![1, 2]]);
}

#[test]
fn payloads_convert_between_pod_types() {
    let output = hbsp::run(&threads(), &machine(&[1.0, 1.0]), |ctx| {
        ctx.send(1 - ctx.pid(), 0, &[1.5f64, -2.0])?;
        ctx.sync()?;
        let bytes = ctx.recv::<u8>()?.unwrap().into_data();
        Ok::<_, HbspError>(bytemuck::pod_collect_to_vec::<u8, f64>(&bytes))
    })
    .unwrap();
    assert_eq!(output.results[0], vec![1.5, -2.0]);
}

/// Node 1 sends a new payload to node 0 every other superstep; node 0 checks it, grows its
/// vector to a capacity no fresh send would have, and recycles it. Returns the payloads and
/// capacities node 0 saw.
fn recycling_exchange(backend: &Backend, rounds: u64) -> (Vec<Vec<u64>>, Vec<usize>) {
    let output = within_5s({
        let backend = backend.clone();
        move || {
            hbsp::run(&backend, &machine(&[1.0, 1.0]), move |ctx| {
                let (mut seen, mut capacities) = (Vec::new(), Vec::new());
                for round in 0..rounds {
                    if ctx.pid() == 1 {
                        ctx.send(0, 0, &vec![round; 1000])?;
                    }
                    ctx.sync()?;
                    if let Some(mut message) = ctx.recv::<u64>()? {
                        seen.push(message.data.clone());
                        capacities.push(message.data.capacity());
                        message.data.reserve(5000);
                        ctx.recycle(message);
                    }
                    ctx.sync()?;
                }
                Ok::<_, HbspError>((seen, capacities))
            })
        }
    })
    .unwrap();
    output.results.into_iter().next().unwrap()
}

#[test]
fn recycled_vectors_carry_the_senders_next_messages() {
    for backend in in_process() {
        let (seen, capacities) = recycling_exchange(&backend, 20);
        let expect: Vec<Vec<u64>> = (0..20).map(|round| vec![round; 1000]).collect();
        assert_eq!(seen, expect, "{backend}: every payload intact");
        // The vector given back before a sync is the one the sender fills next.
        assert!(capacities[0] < 6000, "{backend}: {capacities:?}");
        assert!(
            capacities[1..].iter().all(|&c| c >= 6000),
            "{backend}: later sends reuse the recycled vector: {capacities:?}"
        );
    }
}

/// Capacities of the messages node 0 receives from node 1, one per round, when node 0
/// grows each received vector's capacity and then lets it go as `release` says.
fn released_capacities(backend: &Backend, items: usize, release: fn(Message<u64>)) -> Vec<usize> {
    let output = within_5s({
        let backend = backend.clone();
        move || {
            hbsp::run(&backend, &machine(&[1.0, 1.0]), move |ctx| {
                let mut capacities = Vec::new();
                for round in 0..4u64 {
                    if ctx.pid() == 1 {
                        ctx.send(0, 0, &vec![round; items])?;
                    }
                    ctx.sync()?;
                    if let Some(mut message) = ctx.recv::<u64>()? {
                        if message.data != vec![round; items] {
                            return Err(ctx.abort("payload changed"));
                        }
                        capacities.push(message.data.capacity());
                        message.data.reserve(items);
                        release(message);
                    }
                    // The vector is home before the sender's next send.
                    ctx.sync()?;
                }
                Ok::<_, HbspError>(capacities)
            })
        }
    })
    .unwrap();
    output.results.into_iter().next().unwrap()
}

#[test]
fn a_dropped_large_message_carries_the_senders_next_one() {
    let large = 20_000; // 160 kB, above the threshold of 64 KiB
    for backend in in_process() {
        let dropped = released_capacities(&backend, large, drop);
        assert!(dropped[0] < 2 * large, "{backend}: {dropped:?}");
        assert!(
            dropped[1..].iter().all(|&c| c >= 2 * large),
            "{backend}: sends after the first reuse the dropped vector: {dropped:?}"
        );
        let kept = released_capacities(&backend, large, |m| drop(m.into_data()));
        assert!(
            kept.iter().all(|&c| c < 2 * large),
            "{backend}: a vector taken with into_data stays with the receiver: {kept:?}"
        );
        let small = released_capacities(&backend, 1000, drop);
        assert!(
            small.iter().all(|&c| c < 2000),
            "{backend}: small vectors go back to the allocator: {small:?}"
        );
    }
}

#[test]
fn a_recycled_result_carries_the_nodes_next_send_and_collective_result() {
    for backend in in_process() {
        let output = within_5s({
            let backend = backend.clone();
            move || {
                hbsp::run(&backend, &machine(&[1.0, 1.0]), |ctx| {
                    ctx.recycle_vec(Vec::<u64>::with_capacity(7000));
                    if ctx.pid() == 0 {
                        ctx.send(1, 0, &[1u64, 2, 3])?;
                    }
                    ctx.sync()?;
                    let message = ctx.recv::<u64>()?;
                    Ok::<_, HbspError>(message.map(|m| (m.data.clone(), m.data.capacity())))
                })
            }
        })
        .unwrap();
        assert_eq!(output.results[0], None);
        let (data, capacity) = output.results[1].clone().unwrap();
        assert_eq!(data, vec![1, 2, 3], "{backend}");
        assert!(
            capacity >= 7000,
            "{backend}: the send filled the recycled vector, not a new one of 3: {capacity}"
        );
    }
}

#[test]
fn recycling_mixes_types_and_self_sends_safely() {
    let output = within_5s(|| {
        hbsp::run(&threads(), &machine(&[1.0, 1.0, 1.0]), |ctx| {
            let (me, p) = (ctx.pid(), ctx.nprocs());
            let mut sums = Vec::new();
            for round in 0..10u32 {
                for to in 0..p {
                    if round % 2 == 0 {
                        ctx.send(to, 0, &vec![round + me as u32; 64])?;
                    } else {
                        ctx.send(to, 1, &vec![u64::from(round) * 7; 32])?;
                    }
                }
                ctx.sync()?;
                let mut sum = 0u64;
                // Receive as bytes half the time: the recycled vector is then a copy of
                // another type, which must still be safe to hand back.
                while let Some(info) = ctx.peek() {
                    if round % 3 == 0 {
                        let message = ctx.recv::<u8>()?.expect("queued");
                        sum += message.data.iter().map(|&b| u64::from(b)).sum::<u64>();
                        ctx.recycle(message);
                    } else if info.tag == 0 {
                        let message = ctx.recv::<u32>()?.expect("queued");
                        sum += message.data.iter().map(|&v| u64::from(v)).sum::<u64>();
                        ctx.recycle(message);
                    } else {
                        let message = ctx.recv::<u64>()?.expect("queued");
                        sum += message.data.iter().sum::<u64>();
                        ctx.recycle(message);
                    }
                }
                sums.push(sum);
            }
            Ok::<_, HbspError>(sums)
        })
    })
    .unwrap();
    let expect: Vec<u64> = (0..10u64)
        .map(|round| match (round % 2, round % 3) {
            // u32 values `round + source`, all below 256: as bytes they sum the same.
            (0, _) => (0..3).map(|s| 64 * (round + s)).sum(),
            // u64 values `7 round` read as bytes: only the low byte counts.
            (_, 0) => 3 * 32 * ((round * 7) % 256),
            _ => 3 * 32 * round * 7,
        })
        .collect();
    for sums in output.results {
        assert_eq!(sums, expect);
    }
}

#[test]
fn hbsplib_queries() {
    let m = machine(&[2.0, 5.0, 1.0, 5.0]);
    let output = hbsp::run(&threads(), &m, |ctx| {
        let ranks: Vec<usize> = (1..=4).map(|k| ctx.rank(k)).collect::<Result<_, _>>()?;
        Ok::<_, HbspError>((ranks, ctx.speed(1)?, ctx.cluster_speed(), ctx.time() >= 0.0))
    })
    .unwrap();
    assert_eq!(output.results[0], (vec![1, 3, 0, 2], 5.0, 13.0, true));
}

/// The error ending a run of `program` on 4 nodes, the same on every in-process backend.
fn failing_run(
    program: impl Fn(&mut Ctx<'_>) -> Result<(), String> + Send + Sync + 'static,
) -> HbspError {
    let program = std::sync::Arc::new(program);
    let errors: Vec<(Backend, HbspError)> = in_process()
        .into_iter()
        .map(|backend| {
            let program = std::sync::Arc::clone(&program);
            let run = backend.clone();
            let err = within_5s(move || {
                hbsp::run(&run, &machine(&uneven(4)), |ctx| program(ctx)).unwrap_err()
            });
            (backend, err)
        })
        .collect();
    for (backend, err) in &errors[1..] {
        assert_eq!(*err, errors[0].1, "{backend:?}");
    }
    errors[0].1.clone()
}

#[test]
fn abort_ends_every_node_and_names_the_node() {
    let err = failing_run(|ctx| {
        if ctx.pid() == 2 {
            return Err(ctx.abort("bad input").to_string());
        }
        loop {
            ctx.sync().map_err(|e| e.to_string())?;
        }
    });
    assert_eq!(
        err,
        HbspError::Aborted {
            pid: 2,
            name: "n2".into(),
            reason: "bad input".into()
        }
    );
    assert_eq!(err.to_string(), "node 2 (n2) aborted the run: bad input");
}

#[test]
fn panic_ends_every_node() {
    let err = failing_run(|ctx| {
        ctx.sync().map_err(|e| e.to_string())?;
        if ctx.pid() == 3 {
            panic!("index out of range");
        }
        ctx.sync().map_err(|e| e.to_string())
    });
    assert_eq!(
        err,
        HbspError::Panicked {
            pid: 3,
            name: "n3".into(),
            message: "index out of range".into()
        }
    );
}

#[test]
fn returned_error_ends_every_node() {
    let err = failing_run(|ctx| {
        if ctx.pid() == 1 {
            Err("no such file".into())
        } else {
            ctx.sync().map_err(|e| e.to_string())
        }
    });
    assert_eq!(err.to_string(), "node 1 (n1) failed: no such file");
}

#[test]
fn send_to_missing_pid_is_an_error() {
    let err = failing_run(|ctx| {
        if ctx.pid() == 0 {
            ctx.send(9, 0, &[1u8]).map_err(|e| e.to_string())?;
        }
        ctx.sync().map_err(|e| e.to_string())
    });
    assert_eq!(
        err,
        HbspError::BadDestination {
            pid: 0,
            to: 9,
            p: 4
        }
    );
}

#[test]
fn returning_early_while_others_sync_is_a_mismatch() {
    let err = failing_run(|ctx| {
        if ctx.pid() == 0 {
            Ok(())
        } else {
            ctx.sync().map_err(|e| e.to_string())
        }
    });
    let message = err.to_string();
    assert!(
        matches!(err, HbspError::Mismatch { superstep: 0, .. }),
        "{err:?}"
    );
    assert!(
        message.contains("node 0 (n0) returned from its program"),
        "{message}"
    );
    assert!(message.contains("nodes [1, 2, 3] called sync"), "{message}");
}

#[test]
fn wrong_payload_size_is_an_error() {
    let err = failing_run(|ctx| {
        ctx.send(0, 7, &[1u8, 2, 3]).map_err(|e| e.to_string())?;
        ctx.sync().map_err(|e| e.to_string())?;
        if ctx.pid() == 0 {
            ctx.recv::<u32>().map_err(|e| e.to_string())?;
        }
        ctx.sync().map_err(|e| e.to_string())
    });
    assert!(
        err.to_string()
            .contains("3 bytes, not a whole number of 4-byte u32"),
        "{err}"
    );
}

#[test]
fn oversubscribed_runs_complete() {
    let output = within_5s(|| {
        hbsp::run(&threads(), &machine(&[1.0; 24]), |ctx| {
            for _ in 0..200 {
                ctx.send((ctx.pid() + 1) % ctx.nprocs(), 0, &[1u8])?;
                ctx.sync()?;
            }
            Ok::<_, HbspError>(ctx.recv_all::<u8>()?.len())
        })
    })
    .unwrap();
    assert!(output.results.iter().all(|&n| n == 200));
}

#[test]
fn trace_records_supersteps_phases_and_work() {
    let output = hbsp::run(&threads(), &machine(&[1.0, 2.0]), |ctx| {
        ctx.phase("fill", |ctx| ctx.charge_work(100.0))?;
        let sum = ctx.compute(50.0, || (0..1000u64).sum::<u64>())?;
        ctx.send(0, 0, &[sum])?;
        ctx.sync()?;
        Ok::<_, HbspError>(())
    })
    .unwrap();
    let trace = &output.trace;
    assert_eq!((trace.p, trace.supersteps()), (2, 2));
    let node0 = &trace.nodes[0].supersteps;
    assert_eq!(
        (
            node0[0].work_ops,
            node0[0].bytes_out,
            node0[0].messages_in,
            node0[0].bytes_in
        ),
        (150.0, 8, 2, 16)
    );
    assert_eq!(node0[0].phases[0].name, "fill");
    assert!(
        node0[0].compute_s >= 0.0 && node0[0].wait_s >= 0.0 && node0[1].start_s >= node0[0].start_s
    );
    let json = serde_json::to_value(trace).unwrap();
    assert_eq!(json["nodes"][1]["supersteps"][0]["messages_out"], 1);
}

#[test]
fn speed_emulation_stretches_slow_nodes() {
    let backend = Backend::Threads(ThreadsOptions {
        emulate_speeds: true,
        ..ThreadsOptions::default()
    });
    let output = hbsp::run(&backend, &machine(&[4.0, 1.0]), |ctx| {
        let start = std::time::Instant::now();
        // 5 ms of CPU: emulation stretches CPU time (a sleeping block is no compute).
        ctx.compute(1.0, || {
            let cpu = cpu_time::ThreadTime::now();
            while cpu.elapsed() < std::time::Duration::from_millis(5) {
                std::hint::spin_loop();
            }
        })?;
        Ok::<_, HbspError>(start.elapsed().as_secs_f64())
    })
    .unwrap();
    // The slow node (4x slower) takes at least 20 ms; the fast one about 5 ms.
    assert!(output.results[1] > 3.0 * 0.005, "{:?}", output.results);
    assert!(
        output.results[0] < output.results[1],
        "{:?}",
        output.results
    );
}
