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
