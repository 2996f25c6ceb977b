//! Backends: where and how the nodes of a run execute.
//!
//! A program is written once against [`crate::Ctx`]; the [`Backend`] passed to [`crate::run`]
//! decides how it executes: `threads` (real time) or `sim` (virtual time on a modelled
//! platform). `mpi` runs one node per MPI rank (cargo feature `mpi`; see `backend::mpi` for the session a
//! process needs). The enum is `#[non_exhaustive]`. Internally each
//! backend implements the crate-private `Transport` trait that `Ctx` calls at every superstep
//! boundary.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::error::{HbspError, Result};
#[cfg(test)]
use crate::message::Envelope;

pub(crate) mod barrier;
pub mod coroutines;
#[cfg(feature = "mpi")]
pub mod mpi;
#[cfg(feature = "mpi")]
mod mpi_bytes;
#[cfg(feature = "mpi")]
mod mpi_shared;
pub(crate) mod node;
pub mod sim;
pub mod stack_pool;
pub(crate) mod threads;
pub(crate) mod transport;

pub(crate) use transport::{ByteTarget, Call, ComputeTime, Load, Native, Outbox, Transport};

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
