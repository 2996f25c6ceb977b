//! What hbsp counts before a run starts: the per-node state of a run.

/// The coroutine engine keeps each distinct call of a boundary once per lane and a signature
/// per node (a copy of every node's call, each with a count per node, took `p^2` memory):
/// a mismatch still names what every node called, a plain sync included.
#[test]
fn a_mismatch_on_the_coroutine_engine_still_names_every_node_s_call() {
    use hbsp::collectives::{self, BroadcastAlgorithm, Root};
    let machine = hbsp::Platform::load("ucf-cluster")
        .unwrap()
        .select(&"4".parse().unwrap())
        .unwrap();
    let err = hbsp::run(&hbsp::Backend::sim_declared(), &machine, |ctx| {
        match ctx.pid() {
            0 => ctx.sync()?,
            1 => {
                collectives::allgather(ctx, &[1u8])?;
            }
            _ => {
                let root = Root::Pid(0);
                collectives::broadcast(ctx, root, &[1u8], BroadcastAlgorithm::OnePhase)?;
            }
        }
        Ok::<_, hbsp::HbspError>(())
    })
    .unwrap_err();
    let err = err.to_string();
    let names: Vec<&str> = machine.nodes().iter().map(|n| n.name.as_str()).collect();
    assert!(
        err.contains(&format!("node 0 ({}) called sync", names[0]))
            && err.contains(&format!("node 1 ({}) called allgather", names[1]))
            && err.contains("nodes [2, 3] called broadcast(root 0"),
        "{err}"
    );
}
