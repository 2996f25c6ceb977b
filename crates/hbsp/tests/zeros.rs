//! `Ctx::send_zeros`: a message of a given size without a payload to build, which a skeleton
//! run sends instead of its data, costs on every backend exactly what the data would.

use hbsp::{Backend, HbspError, Platform};

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
        Ok::<_, HbspError>(ctx.recv::<f64>()?.map(|m| m.data))
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
    let err = hbsp::run(&Backend::threads(), &machine, |ctx| {
        ctx.send_zeros(0, 0, usize::MAX)?;
        Ok::<_, HbspError>(())
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("send less") && !err.contains('\n'), "{err}");
}
