//! What the backends, the context and the trace share: the call each node makes at a superstep
//! boundary ([`Call`]), compute spans and the thread CPU clock, outboxes of messages, the
//! [`Transport`] a backend delivers them with, a superstep's [`Load`], and native collectives.

use std::collections::HashMap;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use crate::error::{HbspError, Result};
use crate::message::{Envelope, ReturnDesk};

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
            cpu: emulating.then(thread_cpu_time),
        }
    }

    pub fn end(&self) -> ComputeTime {
        let wall = self.wall.elapsed();
        let cpu = self
            .cpu
            .map_or(wall, |start| thread_cpu_time().saturating_sub(start));
        ComputeTime { wall, cpu }
    }
}

/// CPU time consumed by the calling thread.
pub(crate) fn thread_cpu_time() -> Duration {
    cpu_time::ThreadTime::try_now()
        .map(|t| t.as_duration())
        .unwrap_or_default()
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
    pub(super) const SCANNED: usize = 16;

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
