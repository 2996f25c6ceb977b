//! # hbsp
//!
//! The HBSP^1 library (Williams & Parsons 2001): bulk-synchronous parallel programs for
//! heterogeneous clusters, whose nodes differ in marked speed `C_j` and injection slowness
//! `r_j`. Each node sends pid-addressed messages during a superstep; `sync` delivers them
//! and waits for every node.
//!
//! ```
//! use hbsp::{Backend, Platform};
//!
//! // Four nodes of the UCF cluster; each sends its pid to node 0, which sums them.
//! let machine = Platform::load("ucf-cluster")?.select(&"4".parse()?)?;
//! let output = hbsp::run(&Backend::threads(), &machine, |ctx| {
//!     ctx.send(0, 0, &[ctx.pid() as u64])?;
//!     ctx.sync()?;
//!     let mut sum = 0;
//!     while let Some(message) = ctx.recv::<u64>()? {
//!         sum += message.data[0];
//!     }
//!     Ok::<_, hbsp::HbspError>(sum)
//! })?;
//! assert_eq!(output.results[0], 0 + 1 + 2 + 3);
//! assert_eq!(output.trace.nodes[0].supersteps[0].messages_in, 4);
//! # Ok::<(), hbsp::HbspError>(())
//! ```
//!
//! ## HBSPlib in Rust
//!
//! | HBSPlib (Table 1) | hbsp |
//! |---|---|
//! | `hbsp_begin`, `hbsp_end` | [`run`]`(&backend, &machine, program)`: starts `p` nodes, each runs `program(&mut ctx)`; returning ends the node (on `mpi`, each rank runs its own node; create one `MpiSession` per process first) |
//! | `hbsp_abort` | [`Ctx::abort`]`(reason)`; a panic or an `Err` returned by a node ends the run too |
//! | `hbsp_pid` | [`Ctx::pid`] |
//! | `hbsp_time` | [`Ctx::time`] |
//! | `hbsp_nprocs` | [`Ctx::nprocs`] |
//! | `hbsp_sync` | [`Ctx::sync`] |
//! | `hbsp_send` | [`Ctx::send`]`(to, tag, &[T])` for any `T: bytemuck::Pod` ([`Ctx::send_vec`] moves a `Vec`; [`Ctx::recycle`] hands a received vector back for `send` to reuse) |
//! | `hbsp_get_tag` | [`Ctx::peek`]: source, tag and size of the first queued message |
//! | `hbsp_qsize` | [`Ctx::queue_len`] (and [`Ctx::queue_bytes`]) |
//! | `hbsp_move` | [`Ctx::recv`]`::<T>()` (and [`Ctx::recv_all`]); dropping a large [`Message`] hands its vector back like [`Ctx::recycle`], [`Message::into_data`] keeps it |
//! | `hbsp_get_rank(k)` | [`Ctx::rank`]`(k)`: pid of speed rank `k`, 1 = fastest |
//! | `hbsp_get_speed(j)` | [`Ctx::speed`]`(j)`: marked speed `C_j` |
//! | `hbsp_cluster_speed` | [`Ctx::cluster_speed`]: `C = sum_j C_j` |
//!
//! Beyond Table 1: [`Ctx::compute`] and [`Ctx::charge_work`] declare work (speed emulation on
//! threads and mpi, virtual time on `sim`), [`Ctx::phase`] names a phase in the
//! [`Trace`], and [`collectives`] offers scatter, gather, broadcast, reduce, allreduce,
//! allgather and alltoall, each with its predicted HBSP^1 cost.
//!
//! ## Semantics
//!
//! - A message sent in superstep `s` can be received after the `sync` that ends `s`. Messages
//!   stay queued until received, ordered by superstep, then source pid, then send order.
//! - Every node must make the same sequence of `sync` and collective calls; a node that
//!   returns from its program takes part in one final barrier. A disagreement is reported as
//!   [`HbspError::Mismatch`] instead of hanging.
//! - If a node aborts, panics, returns an error or misuses the API, every node's next `hbsp`
//!   call (or its wait in `sync`) returns that error and [`run`] returns it; all threads are
//!   joined before `run` returns. On `mpi` the failing rank prints the error and calls
//!   `MPI_Abort`, which ends the whole job (a mismatch is returned on every rank instead).
//! - A node's result is a [`NodeResult`] (serde), because on `mpi` it travels to every rank.
//!
//! ## Machines
//!
//! A [`Platform`] (TOML file or [`presets`]) lists nodes and the network (`g`, `L(p)`, `o`); a
//! [`NodeSet`] (`"4"`, `"gromit,chromus"`, `"sunblade:3,server*2:1"`) selects the [`Machine`] a
//! run uses. [`probe`] measures `g`, `r_j`, `L` and `o` of a backend; [`probe_platform`] writes
//! what a probe measured into a platform file.

pub mod backend;
mod barrier_cost;
pub mod cgroup;
pub mod collective_probe;
pub mod collectives;
pub mod compute_stall;
mod ctx;
pub mod duplex;
mod error;
pub mod file;
pub mod machine_model;
pub mod memory;
mod message;
pub mod nodeset;
pub mod p2p_probe;
pub mod paper_machines;
pub mod platform;
pub mod presets;
pub mod probe;
pub mod probe_platform;
pub mod trace;
mod units;

#[cfg(feature = "mpi")]
pub use backend::mpi::MpiSession;
pub use backend::{
    Backend, MpiOptions, SimEngine, SimOptions, SuperstepCost, ThreadsOptions, WorkCharge,
};
pub use ctx::Ctx;
pub use error::{HbspError, Result};
pub use machine_model::MachineModel;
pub use message::{Message, MessageInfo};
pub use nodeset::NodeSet;
pub use platform::{BarrierCost, BarrierPoint, Machine, MachineNode, Network, Node, Platform};
pub use trace::Trace;

/// What a successful run returns.
#[derive(Debug, Clone)]
pub struct RunOutput<T> {
    /// Each node's return value, by pid.
    pub results: Vec<T>,
    /// What each node did in each superstep.
    pub trace: Trace,
    /// Wall-clock (or, on `sim`, virtual) duration of the run, s.
    pub elapsed_s: f64,
    /// Whether `elapsed_s` and the trace are virtual time (the `sim` backend).
    pub virtual_time: bool,
    /// Whether compute blocks were skipped (sim skeleton execution): results are unverified.
    pub compute_skipped: bool,
    /// On `sim`, the cost of every superstep in order (empty on `threads`).
    pub costs: Vec<SuperstepCost>,
}

/// What a node's program may return: a value that can travel between processes, because on
/// the mpi backend every node's result is sent to every rank. Implemented for every
/// `Send + Serialize + DeserializeOwned` type (numbers, tuples, vectors, `Option`s and your
/// `#[derive(Serialize, Deserialize)]` structs).
pub trait NodeResult: Send + serde::Serialize + serde::de::DeserializeOwned {}

impl<T: Send + serde::Serialize + serde::de::DeserializeOwned> NodeResult for T {}

/// Runs `program` on every node of `machine` (HBSPlib `hbsp_begin` ... `hbsp_end`).
///
/// The program gets the node's [`Ctx`] and returns a value or an error; any error type that
/// implements `Display` works (`HbspError`, `anyhow::Error`, `String`, ...). The run fails with
/// the first error, panic or abort of any node, naming the node.
pub fn run<T, E, F>(backend: &Backend, machine: &Machine, program: F) -> Result<RunOutput<T>>
where
    F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E> + Sync,
    T: NodeResult,
    E: std::fmt::Display,
{
    if let Backend::Sim(options) = backend {
        memory::check_sim_fits(machine, options)?;
    }
    match backend {
        Backend::Threads(options) => backend::threads::run(options, machine, &program),
        Backend::Sim(options) => match options.engine {
            SimEngine::Coroutines => backend::coroutines::run(options, machine, &program),
            SimEngine::Threads => backend::threads::run_sim(options, machine, &program),
        },
        #[cfg(feature = "mpi")]
        Backend::Mpi(options) => backend::mpi::run(options, machine, &program),
        #[cfg(not(feature = "mpi"))]
        Backend::Mpi(_) => Err(HbspError::InvalidBackend(
            "this build has no MPI backend: rebuild with cargo feature \"mpi\" (needs OpenMPI)"
                .into(),
        )),
    }
}
