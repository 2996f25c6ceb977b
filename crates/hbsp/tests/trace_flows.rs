//! The trace records what each node sent to each destination, per superstep.

mod common;

use common::machine;
use hbsp::trace::Flow;
use hbsp::{Backend, HbspError};

#[test]
fn flows_sum_per_destination_in_order_of_first_send() {
    let output = hbsp::run(&Backend::threads(), &machine(&[1.0, 2.0, 3.0]), |ctx| {
        if ctx.pid() == 0 {
            ctx.send(2, 0, &[1u32, 2])?;
            ctx.send(1, 0, &[1u8])?;
            ctx.send(2, 0, &[3u32])?;
        }
        ctx.sync()?;
        Ok::<_, HbspError>(())
    })
    .unwrap();
    let step = &output.trace.nodes[0].supersteps[0];
    assert_eq!(
        step.flows,
        vec![
            Flow {
                to: 2,
                bytes: 12,
                messages: 2
            },
            Flow {
                to: 1,
                bytes: 1,
                messages: 1
            },
        ]
    );
    let total: u64 = step.flows.iter().map(|f| f.bytes).sum();
    assert_eq!(total, step.bytes_out);
    assert!(output.trace.nodes[0].supersteps[1].flows.is_empty());
}

#[test]
fn traces_without_flows_still_load() {
    let old = r#"{"index":0,"start_s":0.0,"compute_s":1.0,"wait_s":0.0,"bytes_out":0,
        "bytes_in":0,"messages_out":0,"messages_in":0,"work_ops":0.0,"phases":[]}"#;
    let step: hbsp::trace::SuperstepTrace = serde_json::from_str(old).unwrap();
    assert!(step.flows.is_empty());
}

/// Every node sends its pid's worth of bytes to the next node and 3 bytes to itself, and a
/// broadcast follows: the per-superstep totals of each node's trace, and its flows.
fn ring_and_broadcast(p: usize) -> hbsp::Trace {
    let speeds: Vec<f64> = (0..p).map(|j| 1.0 + (j % 3) as f64).collect();
    hbsp::run(&Backend::sim_declared(), &machine(&speeds), |ctx| {
        let next = (ctx.pid() + 1) % ctx.nprocs();
        ctx.send(next, 0, &vec![0u8; ctx.pid() + 1])?;
        ctx.send(ctx.pid(), 0, &[0u8; 3])?;
        ctx.sync()?;
        hbsp::collectives::broadcast(
            ctx,
            hbsp::collectives::Root::Pid(0),
            &[7u64; 4],
            hbsp::collectives::BroadcastAlgorithm::OnePhase,
        )?;
        Ok::<_, HbspError>(())
    })
    .unwrap()
    .trace
}

#[test]
fn beyond_flow_nodes_a_trace_keeps_the_totals_but_not_the_flows() {
    use hbsp::trace::FLOW_NODES;
    for p in [FLOW_NODES, FLOW_NODES + 1] {
        let trace = ring_and_broadcast(p);
        for node in &trace.nodes {
            let ring = &node.supersteps[0];
            assert_eq!(ring.bytes_out, node.pid as u64 + 1 + 3, "p = {p}");
            assert_eq!(ring.messages_in, 2, "p = {p}");
            let root = &trace.nodes[0].supersteps[1];
            assert_eq!(root.bytes_out, 32 * (p as u64 - 1), "p = {p}");
            // The flow to itself is kept either way: it tells the network's share of the totals.
            let own = Flow {
                to: node.pid,
                bytes: 3,
                messages: 1,
            };
            assert!(ring.flows.contains(&own), "p = {p}, node {}", node.pid);
            let to_others: usize = node
                .supersteps
                .iter()
                .map(|s| s.flows.iter().filter(|f| f.to != node.pid).count())
                .sum();
            if p > FLOW_NODES {
                assert_eq!(to_others, 0, "p = {p}, node {}", node.pid);
            } else {
                assert!(to_others >= 1, "p = {p}, node {}", node.pid);
            }
        }
    }
}
