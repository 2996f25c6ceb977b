//! `Ctx::send_zeros`: a message of a given size without a payload to build, which a skeleton
//! run sends instead of its data, costs on every backend exactly what the data would.

mod common;

use hbsp::collectives::{self, BroadcastAlgorithm, Root};
use hbsp::{Backend, HbspError, Message, Platform};

/// Node 0 sends node 1 `bytes` bytes, as zeros or as data, and node 1 takes what it got:
/// `(virtual time, bytes node 0 sent by the trace, what node 1 received)`.
fn exchange(backend: &Backend, bytes: usize, zeros: bool) -> (f64, u64, Vec<(usize, u32)>) {
    let machine = Platform::load("ucf-cluster")
        .unwrap()
        .select(&"2".parse().unwrap())
        .unwrap();
    let out = hbsp::run(backend, &machine, |ctx| {
        if ctx.pid() == 0 {
            if zeros {
                ctx.send_zeros(1, 7, bytes)?;
            } else {
                ctx.send(1, 7, &vec![1u8; bytes])?;
            }
        }
        ctx.sync()?;
        let got = ctx
            .discard_all()
            .into_iter()
            .map(|m| (m.bytes, m.tag))
            .collect::<Vec<_>>();
        Ok::<_, HbspError>(got)
    })
    .unwrap();
    let sent = out.trace.nodes[0]
        .supersteps
        .iter()
        .map(|s| s.bytes_out)
        .sum();
    (out.elapsed_s, sent, out.results[1].clone())
}

#[test]
fn zeros_cost_what_the_data_costs_on_sim_and_arrive_with_their_size() {
    let bytes = 3 << 20;
    let data = exchange(&Backend::sim_declared(), bytes, false);
    let zeros = exchange(&Backend::sim_declared(), bytes, true);
    assert_eq!(zeros, data);
    assert_eq!(zeros.1, bytes as u64);
    assert_eq!(zeros.2, vec![(bytes, 7)]);
    assert!(zeros.0 > 0.0);
}

#[test]
fn zeros_read_as_zeros_on_threads() {
    let machine = Platform::load("ucf-cluster")
        .unwrap()
        .select(&"2".parse().unwrap())
        .unwrap();
    let out = hbsp::run(&Backend::threads(), &machine, |ctx| {
        ctx.send_zeros(1 - ctx.pid(), 0, 24)?;
        ctx.sync()?;
        Ok::<_, HbspError>(ctx.recv::<f64>()?.map(Message::into_data))
    })
    .unwrap();
    assert_eq!(out.results, vec![Some(vec![0.0; 3]); 2]);
}

#[test]
fn a_zeros_message_beyond_the_address_space_is_a_one_line_error() {
    let machine = Platform::load("ucf-cluster")
        .unwrap()
        .select(&"2".parse().unwrap())
        .unwrap();
    let send = |bytes: usize| {
        hbsp::run(&Backend::threads(), &machine, move |ctx| {
            // One sender: with two, which node's error is reported first is a race.
            if ctx.pid() == 0 {
                ctx.send_zeros(0, 0, bytes)?;
            }
            Ok::<_, HbspError>(())
        })
        .unwrap_err()
        .to_string()
    };
    // What the user of a skeleton run can change, in their terms.
    assert_eq!(
        send(usize::MAX),
        "node 0: the run would send a message of more bytes than a 64-bit count holds, more \
         than the 1.1 TB one simulated message may carry: use a smaller problem size or more \
         nodes"
    );
    assert!(
        send(794_226_400_000_000).contains("a message of 794.2 TB, more than the 1.1 TB"),
        "{}",
        send(794_226_400_000_000)
    );
}

/// Scatterv, broadcasts (both algorithms, three roots), an all-to-all and a gatherv of
/// uneven counts, zero shares included, as values or as their `*_zeros` namesakes. Each node
/// returns the item counts it got, in order.
fn collectives(ctx: &mut hbsp::Ctx<'_>, zeros: bool) -> Result<Vec<usize>, HbspError> {
    let (p, me) = (ctx.nprocs(), ctx.pid());
    let counts: Vec<usize> = (0..p).map(|j| (j * 37) % 11 * 13).collect();
    let values = |n: usize| vec![1.5f64; n];
    let mut got = Vec::new();
    let root = Root::Pid(2);
    got.push(if zeros {
        collectives::scatterv_zeros::<f64>(ctx, root, &counts)?.value
    } else {
        let data = if me == 2 {
            values(counts.iter().sum())
        } else {
            Vec::new()
        };
        collectives::scatterv(ctx, root, &data, &counts)?
            .value
            .len()
    });
    for (root, algorithm, n) in [
        (3, BroadcastAlgorithm::OnePhase, 1001),
        (7, BroadcastAlgorithm::TwoPhase, 1001),
        (9, BroadcastAlgorithm::Auto, 5),
        (0, BroadcastAlgorithm::Auto, 50_000),
    ] {
        let root = Root::Pid(root);
        got.push(if zeros {
            let n = if Root::Pid(me) == root { n } else { 0 };
            collectives::broadcast_zeros::<f64>(ctx, root, n, algorithm)?.value
        } else {
            let data = if Root::Pid(me) == root {
                values(n)
            } else {
                Vec::new()
            };
            collectives::broadcast(ctx, root, &data, algorithm)?
                .value
                .len()
        });
    }
    let matrix: Vec<Vec<usize>> = (0..p)
        .map(|i| (0..p).map(|k| (i + 2 * k) % 4 * 10).collect())
        .collect();
    got.extend(if zeros {
        collectives::alltoallv_zeros::<f64>(ctx, &matrix)?.value
    } else {
        let blocks: Vec<Vec<f64>> = matrix[me].iter().map(|&c| values(c)).collect();
        let received = collectives::alltoallv(ctx, &blocks, &matrix)?.value;
        received.iter().map(Vec::len).collect()
    });
    let root = Root::Pid(4);
    got.push(if zeros {
        collectives::gatherv_zeros::<f64>(ctx, root, &counts)?
            .value
            .unwrap_or(0)
    } else {
        let gathered = collectives::gatherv(ctx, root, &values(counts[me]), &counts)?;
        gathered.value.map_or(0, |v| v.len())
    });
    Ok(got)
}

/// The `*_zeros` collectives move no values, yet every sim engine charges and traces them
/// exactly as their namesakes moving the data, with the trace on and off, on the HBSP^1
/// model and on a machine model of measured collectives; each node learns the counts the
/// data would have had.
#[test]
fn zeros_collectives_cost_and_trace_what_their_namesakes_do_bit_for_bit() {
    let uneven = common::machine(&common::uneven(10));
    let sunwulf = Platform::load("sunwulf")
        .unwrap()
        .select(&"server:1,sunblade:5,sunfire:4".parse().unwrap())
        .unwrap();
    for machine in [&uneven, &sunwulf] {
        for no_trace in [false, true] {
            let options = hbsp::SimOptions {
                work: hbsp::WorkCharge::Declared,
                no_trace,
                ..hbsp::SimOptions::default()
            };
            for backend in common::sim_engines(options) {
                let run = |zeros| hbsp::run(&backend, machine, |ctx| collectives(ctx, zeros));
                let (data, sizes) = (run(false).unwrap(), run(true).unwrap());
                let what = format!("{} nodes, no_trace {no_trace}, {backend}", machine.p());
                assert_eq!(
                    sizes.elapsed_s.to_bits(),
                    data.elapsed_s.to_bits(),
                    "{what}"
                );
                assert_eq!(sizes.costs, data.costs, "{what}");
                assert_eq!(sizes.trace, data.trace, "{what}");
                assert_eq!(sizes.results, data.results, "{what}");
                assert!(data.elapsed_s > 0.0 && data.costs.len() >= 8, "{what}");
            }
        }
    }
}
