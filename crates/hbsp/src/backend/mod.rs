//! Backends: where and how the nodes of a run execute.
//!
//! A program is written once against [`crate::Ctx`]; the [`Backend`] passed to [`crate::run`]
//! decides how it executes: `threads` (real time) or `sim` (virtual time on a modelled
//! platform). `mpi` runs one node per MPI rank (cargo feature `mpi`; see [`mpi`] for the session a
//! process needs). The enum is `#[non_exhaustive]`. Internally each
//! backend implements the crate-private `Transport` trait that `Ctx` calls at every superstep
//! boundary.

use std::collections::HashMap;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{HbspError, Result};
use crate::message::{Envelope, ReturnDesk};

pub(crate) mod barrier;
pub mod coroutines;
#[cfg(feature = "mpi")]
pub mod mpi;
#[cfg(feature = "mpi")]
mod mpi_shared;
pub(crate) mod node;
pub mod sim;
pub mod stack_pool;
pub(crate) mod threads;

pub use sim::{SimEngine, SimOptions, SuperstepCost, WorkCharge};

/// How a program is executed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Backend {
    /// Real execution: one OS thread per node, wall-clock time.
    Threads(ThreadsOptions),
    /// Simulated execution: the program runs, time is charged by the HBSP^1 cost model.
    Sim(SimOptions),
    /// Real execution on an MPI job: one rank per node, wall-clock time (cargo feature `mpi`).
    Mpi(MpiOptions),
}

/// Options of the mpi backend.
#[derive(Debug, Clone, PartialEq)]
pub struct MpiOptions {
    /// Stretch node `j`'s [`crate::Ctx::compute`] blocks to take `C_max / C_j` times as long,
    /// so heterogeneity-aware code can be tried on homogeneous ranks.
    pub emulate_speeds: bool,
    /// Record a per-superstep [`crate::Trace`] (on by default; benchmarks turn it off).
    pub trace: bool,
    /// Agree at superstep boundaries through shared memory when every rank runs on one
    /// machine (on by default); off, the ranks use the `MPI_Sendrecv` rounds a job spread
    /// over several machines uses.
    pub shared_memory: bool,
}

impl Default for MpiOptions {
    fn default() -> Self {
        Self {
            emulate_speeds: false,
            trace: true,
            shared_memory: true,
        }
    }
}

/// Options of the threads backend.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadsOptions {
    /// Stretch node `j`'s [`crate::Ctx::compute`] blocks to take `C_max / C_j` times as long,
    /// so heterogeneity-aware code can be tried on a homogeneous host.
    pub emulate_speeds: bool,
    /// Record a per-superstep [`crate::Trace`] (on by default; benchmarks turn it off).
    pub trace: bool,
}

impl Default for ThreadsOptions {
    fn default() -> Self {
        Self {
            emulate_speeds: false,
            trace: true,
        }
    }
}

impl Backend {
    /// Whether a run records its per-superstep [`crate::Trace`].
    pub fn records_trace(&self) -> bool {
        match self {
            Self::Threads(options) => options.trace,
            Self::Sim(options) => !options.no_trace,
            Self::Mpi(options) => options.trace,
        }
    }

    /// This backend recording no [`crate::Trace`], for runs whose trace nobody reads.
    pub fn untraced(&self) -> Self {
        let mut backend = self.clone();
        match &mut backend {
            Self::Threads(options) => options.trace = false,
            Self::Sim(options) => options.no_trace = true,
            Self::Mpi(options) => options.trace = false,
        }
        backend
    }

    /// The threads backend with default options.
    pub fn threads() -> Self {
        Self::Threads(ThreadsOptions::default())
    }

    /// The sim backend with default options.
    pub fn sim() -> Self {
        Self::Sim(SimOptions::default())
    }

    /// The sim backend charging declared work only: deterministic runs.
    pub fn sim_declared() -> Self {
        Self::Sim(SimOptions {
            work: WorkCharge::Declared,
            ..SimOptions::default()
        })
    }

    /// The mpi backend with default options.
    pub fn mpi() -> Self {
        Self::Mpi(MpiOptions::default())
    }

    /// Names accepted by [`Backend::from_str`].
    pub const NAMES: [&'static str; 3] = ["threads", "sim", "mpi"];

    /// Whether this build can run the backend (`mpi` needs the cargo feature `mpi`).
    pub fn is_available(&self) -> bool {
        !matches!(self, Self::Mpi(_)) || cfg!(feature = "mpi")
    }

    /// Whether this backend reports virtual rather than measured time.
    pub fn is_virtual(&self) -> bool {
        matches!(self, Self::Sim(_))
    }
}

impl Default for Backend {
    fn default() -> Self {
        Self::threads()
    }
}

impl FromStr for Backend {
    type Err = HbspError;

    fn from_str(name: &str) -> Result<Self> {
        match name {
            "threads" => Ok(Self::threads()),
            "sim" => Ok(Self::sim()),
            "mpi" => Ok(Self::mpi()),
            _ => Err(HbspError::InvalidBackend(format!(
                "unknown backend \"{name}\": use --backend threads, sim or mpi"
            ))),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Threads(_) => write!(f, "threads"),
            Self::Sim(_) => write!(f, "sim"),
            Self::Mpi(_) => write!(f, "mpi"),
        }
    }
}

/// What a node does at a superstep boundary; every node must do the same.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Call {
    /// A plain `sync`.
    Sync,
    /// The implicit final barrier when a program returns.
    End,
    /// A superstep of a collective, with every argument all nodes must agree on.
    Collective {
        name: &'static str,
        root: Option<usize>,
        shape: Vec<usize>,
        /// Superstep of the collective, from 0: a measured cost is charged on phase 0 only.
        phase: u8,
    },
}

impl Call {
    /// The same collective's next superstep (a plain sync stays one).
    pub fn next_phase(&self) -> Self {
        match self {
            Self::Collective {
                name,
                root,
                shape,
                phase,
            } => Self::Collective {
                name,
                root: *root,
                shape: shape.clone(),
                phase: phase + 1,
            },
            other => other.clone(),
        }
    }

    /// A number equal on two nodes iff their calls agree (up to hash collisions).
    pub fn signature(&self) -> u64 {
        match self {
            Self::Sync => 0,
            Self::End => 1,
            Self::Collective { .. } => {
                let mut h = DefaultHasher::new();
                self.hash(&mut h);
                h.finish().max(2)
            }
        }
    }
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sync => write!(f, "called sync"),
            Self::End => write!(f, "returned from its program"),
            Self::Collective {
                name, root, shape, ..
            } => {
                write!(f, "called {name}(")?;
                if let Some(root) = root {
                    write!(f, "root {root}, ")?;
                }
                write!(f, "sizes {shape:?})")
            }
        }
    }
}

/// The time a compute block took: wall-clock, and (under speed emulation) the thread's CPU.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ComputeTime {
    pub wall: Duration,
    pub cpu: Duration,
}

/// A compute block being timed; CPU time is read only under speed emulation (the read is a
/// system call).
pub(crate) struct ComputeSpan {
    wall: std::time::Instant,
    cpu: Option<Duration>,
}

impl ComputeSpan {
    pub fn start(emulating: bool) -> Self {
        Self {
            wall: std::time::Instant::now(),
            cpu: emulating.then(node::thread_cpu_time),
        }
    }

    pub fn end(&self) -> ComputeTime {
        let wall = self.wall.elapsed();
        let cpu = self
            .cpu
            .map_or(wall, |start| node::thread_cpu_time().saturating_sub(start));
        ComputeTime { wall, cpu }
    }
}

/// The pause that makes a compute block of a node `stretch` times slower than this host's core
/// take `stretch` times its CPU time. Its CPU time, not its wall time: on an oversubscribed
/// host a block also waits for a core, and stretching that wait too would slow the node twice.
pub(crate) fn emulation_pause(stretch: f64, block: ComputeTime) -> Duration {
    if stretch <= 1.0 {
        return Duration::ZERO;
    }
    block.cpu.mul_f64(stretch).saturating_sub(block.wall)
}

/// How much longer node `pid`'s compute blocks take under speed emulation: `C_max / C_j`.
pub(crate) fn emulation_stretch(machine: &crate::Machine, pid: usize) -> f64 {
    let fastest = machine
        .nodes()
        .iter()
        .map(|n| n.marked_speed)
        .fold(0.0, f64::max);
    fastest / machine.marked_speed(pid)
}

/// The error for nodes that disagreed at the end of `superstep`, given each node's call by
/// pid; nodes that made the same call are named together.
pub(crate) fn mismatch(
    machine: &crate::Machine,
    superstep: u64,
    calls: impl IntoIterator<Item = String>,
) -> HbspError {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (pid, call) in calls.into_iter().enumerate() {
        match groups.iter_mut().find(|(c, _)| *c == call) {
            Some((_, pids)) => pids.push(pid),
            None => groups.push((call, vec![pid])),
        }
    }
    let detail: Vec<String> = groups
        .iter()
        .map(|(call, pids)| match pids.as_slice() {
            [pid] => format!("node {pid} ({}) {call}", machine.nodes()[*pid].name),
            _ => format!("nodes {pids:?} {call}"),
        })
        .collect();
    HbspError::Mismatch {
        superstep,
        detail: detail.join("; "),
    }
}

/// Messages queued by one node during a superstep, in batches by destination.
///
/// Sparse: its size follows the messages sent, not `p`, so `p` nodes' outboxes take O(p)
/// memory however many nodes a run has.
#[derive(Default)]
pub(crate) struct Outbox {
    /// One batch per destination, in first-send order of the destinations.
    batches: Vec<(usize, Vec<Envelope>)>,
    /// `totals[i]`: messages and payload bytes of `batches[i]`, counted as they are queued
    /// (when the payload is still in cache) for the clock to charge.
    totals: Vec<(u64, u64)>,
    /// Index in `batches` of each destination's batch, once there are more than
    /// [`Outbox::SCANNED`] (fewer are found faster by a scan, without hashing).
    index: HashMap<usize, usize>,
}

impl Outbox {
    /// Batches found by a scan rather than through `index`.
    const SCANNED: usize = 16;

    pub fn push(&mut self, to: usize, envelope: Envelope) {
        let bytes = envelope.payload.len() as u64;
        let slot = self.slot(to);
        self.batches[slot].1.push(envelope);
        let totals = &mut self.totals[slot];
        totals.0 += 1;
        totals.1 += bytes;
    }

    /// The index of `to`'s batch, a new one if it has none.
    fn slot(&mut self, to: usize) -> usize {
        let next = self.batches.len();
        // Consecutive sends to one destination are common: the last batch first.
        if next > 0 && self.batches[next - 1].0 == to {
            return next - 1;
        }
        let found = if next <= Self::SCANNED {
            self.batches.iter().position(|(d, _)| *d == to)
        } else {
            self.index.get(&to).copied()
        };
        if let Some(slot) = found {
            return slot;
        }
        self.batches.push((to, Vec::new()));
        self.totals.push((0, 0));
        if next == Self::SCANNED {
            self.index = self
                .batches
                .iter()
                .enumerate()
                .map(|(i, (d, _))| (*d, i))
                .collect();
        } else if next > Self::SCANNED {
            self.index.insert(to, next);
        }
        next
    }

    /// The queued batches, `(destination, messages in send order)`.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub fn batches(&self) -> impl Iterator<Item = (usize, &[Envelope])> {
        self.batches
            .iter()
            .map(|(to, batch)| (*to, batch.as_slice()))
    }

    /// `(destination, messages, payload bytes)` of the queued messages to each node other
    /// than `pid`.
    pub fn sent_by(&self, pid: usize) -> impl Iterator<Item = (usize, u64, u64)> + '_ {
        self.batches
            .iter()
            .zip(&self.totals)
            .filter(move |((to, _), _)| *to != pid)
            .map(|((to, _), &(messages, bytes))| (*to, messages, bytes))
    }

    /// Empties the outbox, yielding its batches.
    pub fn drain(&mut self) -> impl Iterator<Item = (usize, Vec<Envelope>)> + '_ {
        self.index.clear();
        self.totals.clear();
        self.batches.drain(..)
    }
}

/// The backend side of a node: everything `Ctx` cannot do alone.
pub(crate) trait Transport {
    /// Seconds since the run began, on this backend's clock.
    fn now(&self) -> f64;
    /// Ends the superstep: delivers `outbox`, waits for every node and returns the messages
    /// for this node in (source pid, send order).
    fn exchange(&mut self, outbox: &mut Outbox, call: &Call) -> Result<Vec<Envelope>>;
    /// Ends the run with `cause` (unless an earlier cause ended it) and returns the cause
    /// in force.
    fn fail(&self, cause: HbspError) -> HbspError;
    /// `Err` with the cause once the run has ended.
    fn check(&self) -> Result<()>;
    /// Declares `ops` operations of work (sim charges `ops / C_j`).
    fn charge(&mut self, ops: f64) -> Result<()>;
    /// Whether compute blocks are skipped (sim skeleton execution).
    fn skips_compute(&self) -> bool;
    /// How much longer than its CPU time a compute block must take (`C_max / C_j` under
    /// speed emulation, else 1).
    fn emulation_stretch(&self) -> f64 {
        1.0
    }
    /// Called after a compute block, with the time it took.
    fn after_compute(&mut self, block: ComputeTime) -> Result<()>;
    /// Where received vectors go back to the nodes that sent them, for their later sends to
    /// reuse; `None` where the sender's memory is another process's.
    fn return_desk(&self) -> Option<&Arc<ReturnDesk>>;
    /// Whether [`Transport::exchange_with`] runs collectives with the backend's own (MPI's).
    fn has_native_collectives(&self) -> bool {
        false
    }
    /// Whether [`Transport::exchange_with`] runs broadcasts natively (sim's coroutine engine
    /// does: it hands every node the root's data instead of delivering p^2 messages).
    fn has_native_broadcast(&self) -> bool {
        self.has_native_collectives()
    }
    /// Ends the superstep like [`Transport::exchange`] and moves `native`'s data with the
    /// backend's own collective in the same boundary, into `target`; also returns the bytes
    /// the root announced. Only called when [`Transport::has_native_collectives`] says so.
    fn exchange_with(
        &mut self,
        outbox: &mut Outbox,
        call: &Call,
        native: Native<'_>,
        target: &mut dyn ByteTarget,
    ) -> Result<(Vec<Envelope>, usize)> {
        let _ = (native, target);
        Ok((self.exchange(outbox, call)?, 0))
    }
}

/// What one node moves in one superstep, in totals: all that sim's clock charges of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Load {
    pub bytes_out: u64,
    pub messages_out: u64,
    pub bytes_in: u64,
    pub messages_in: u64,
}

/// A collective's data moved by the backend's own collective instead of as messages.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) enum Native<'a> {
    /// `root`'s `source` reaches every node (the root's too).
    Broadcast {
        root: usize,
        /// The data, as bytes, on the root; empty elsewhere.
        source: &'a [u8],
        /// On the root, every node's load in each superstep of the collective's HBSP^1
        /// algorithm (at most two), which sim charges; empty elsewhere.
        loads: &'a [Vec<Load>],
    },
    /// A broadcast of `bytes` zero bytes that no node reads (a sim skeleton run): only the
    /// length travels, charged as [`Native::Broadcast`] of that many bytes would be.
    BroadcastLength {
        root: usize,
        /// The length, on the root; 0 elsewhere.
        bytes: usize,
        /// As for [`Native::Broadcast`].
        loads: &'a [Vec<Load>],
    },
    /// Node `j` receives `counts(n)[j]` bytes of the root's `source` (in pid order), where
    /// `n` is the total the root announces.
    Scatter {
        root: usize,
        source: &'a [u8],
        counts: &'a dyn Fn(usize) -> Vec<usize>,
    },
}

/// Where a native collective writes what a node receives: a typed vector seen as bytes.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) trait ByteTarget {
    /// Bytes of one item.
    fn item_bytes(&self) -> usize;
    /// The target made `bytes` long for the collective to overwrite in full, its content
    /// left as found (a recycled vector is not zeroed first); `None` when `bytes` is not a
    /// whole number of items (the nodes disagree on the item type).
    fn overwrite(&mut self, bytes: usize) -> Option<&mut [u8]>;
    /// The target made a copy of `bytes`; `None` as for [`ByteTarget::overwrite`].
    fn copy_of(&mut self, bytes: &[u8]) -> Option<&mut [u8]>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulation_pauses_a_block_to_its_stretched_cpu_time_not_its_wall_time() {
        let block = |cpu_ms: u64, wall_ms: u64| ComputeTime {
            wall: Duration::from_millis(wall_ms),
            cpu: Duration::from_millis(cpu_ms),
        };
        let ms = Duration::from_millis;
        // A half-speed node on an idle core: its block takes twice its CPU time.
        assert_eq!(emulation_pause(2.0, block(10, 10)), ms(10));
        // It waited 5 ms for a core: that wait counts towards the 20 ms.
        assert_eq!(emulation_pause(2.0, block(10, 15)), ms(5));
        // It waited longer than the emulation would have made it: no pause.
        assert_eq!(emulation_pause(2.0, block(10, 30)), Duration::ZERO);
        // The fastest node never pauses.
        assert_eq!(emulation_pause(1.0, block(10, 10)), Duration::ZERO);
    }

    fn envelope(source: usize, bytes: usize) -> Envelope {
        Envelope {
            source,
            tag: 0,
            internal: false,
            meta: 0,
            payload: Box::new(vec![0u8; bytes]),
        }
    }

    /// Past [`Outbox::SCANNED`] destinations the batches are found through the index: the
    /// batches and their totals must be the same as a scan's.
    #[test]
    fn an_outbox_counts_each_destination_s_messages_and_bytes_past_the_scanned_few() {
        let mut outbox = Outbox::default();
        let destinations = 3 * Outbox::SCANNED;
        for round in 0..3 {
            for to in (0..destinations).rev() {
                outbox.push(to, envelope(7, to + round));
            }
        }
        let sent: Vec<(usize, u64, u64)> = outbox.sent_by(7).collect();
        assert_eq!(sent.len(), destinations - 1, "none to itself");
        for (i, &(to, messages, bytes)) in sent.iter().enumerate() {
            let expected_to = destinations - 1 - i - usize::from(destinations - 1 - i <= 7);
            assert_eq!(to, expected_to, "first-send order");
            assert_eq!((messages, bytes), (3, 3 * to as u64 + 3), "to {to}");
        }
        let drained: Vec<(usize, usize)> = outbox.drain().map(|(to, b)| (to, b.len())).collect();
        assert_eq!(drained.len(), destinations);
        assert!(drained.iter().all(|&(_, n)| n == 3));
        outbox.push(5, envelope(7, 10));
        assert_eq!(outbox.sent_by(7).collect::<Vec<_>>(), vec![(5, 1, 10)]);
    }
}
