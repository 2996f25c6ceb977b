//! Whether a run fits this machine, decided before it starts: a run too large is refused
//! with a one-line [`HbspError::DoesNotFit`] (the estimate, the limit, what to change)
//! instead of being killed by the operating system halfway through.
//!
//! [`check_sim_fits`] covers what hbsp itself takes for a sim run: every node's stack and
//! state ([`sim_node_bytes`]) and, on the coroutine engine, the memory mappings of its
//! stacks. The data a program allocates is its own to estimate (hetscale's kernels do, in
//! `hetscale_kernels::memory`).

use crate::Machine;
use crate::backend::coroutines;
use crate::backend::stack_pool::Guards;
use crate::backend::{Backend, SimEngine, SimOptions};
use crate::error::{HbspError, Result};
use hetscale_machine::room::check_fits;

/// Bytes a coroutine node takes at its peak besides its program's data: its stack's resident
/// pages, its `Ctx`, mailboxes and share of the clock (about 6 KiB at 32,000 nodes with the
/// program of `cargo bench -p hbsp --bench sim_scale`; more for programs with deeper calls).
pub const COROUTINE_NODE_BYTES: f64 = 16.0 * 1024.0;

/// Bytes a thread-per-node sim node takes: its thread's stack pages and the kernel's
/// structures for the thread, besides what a coroutine node takes.
pub const THREAD_NODE_BYTES: f64 = 64.0 * 1024.0;

/// Bytes one node of a sim run takes besides its program's data, by engine.
pub fn sim_node_bytes(options: &SimOptions) -> f64 {
    match options.engine {
        SimEngine::Coroutines => COROUTINE_NODE_BYTES,
        SimEngine::Threads => THREAD_NODE_BYTES,
    }
}

/// Bytes a run of `p` nodes on `backend` takes in this process besides its program's data:
/// every node's stack and state on sim, every node's thread on threads; an MPI rank holds
/// its own node only.
pub fn run_bytes(backend: &Backend, p: usize) -> f64 {
    match backend {
        Backend::Sim(options) => p as f64 * sim_node_bytes(options),
        Backend::Threads(_) => p as f64 * THREAD_NODE_BYTES,
        Backend::Mpi(_) => 0.0,
    }
}

/// Bytes one queued message takes on `backend` besides its payload: its envelope, the boxed
/// vector and the allocator's headers, and its place in the receiver's queue. Measured as the
/// peak of an all-to-all of one small vector per pair of nodes: about 445 B per pair on
/// threads (`run mm --n 64`, 2,048 and 4,096 nodes) and 248 on sim (a quick probe's
/// allgather, 1,000 nodes); 0 on mpi, whose messages are MPI's.
pub fn message_bytes(backend: &Backend) -> f64 {
    match backend {
        Backend::Threads(_) => 512.0,
        Backend::Sim(_) => 320.0,
        Backend::Mpi(_) => 0.0,
    }
}

/// Refuses a sim run on `machine` whose nodes would not fit: more nodes than this process
/// may map stacks for, or more node memory than is available.
pub fn check_sim_fits(machine: &Machine, options: &SimOptions) -> Result<()> {
    let p = machine.p();
    if let Some(most) = coroutines::max_nodes().filter(|&most| p > most) {
        return Err(HbspError::DoesNotFit(format!(
            "sim on {p} nodes needs {} memory mappings for their stacks but this machine allows \
             {most} nodes (vm.max_map_count): use at most {most} nodes",
            p * Guards::available().mappings_per_node()
        )));
    }
    Ok(check_fits(
        &format!("sim on {p} nodes"),
        p as f64 * sim_node_bytes(options),
        "use fewer nodes",
    )?)
}
