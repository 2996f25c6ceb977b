//! The `mpi` backend: one MPI rank per node, real time.
//!
//! Every process of an `mpirun -np P` job calls [`crate::run`] with the same machine of `P`
//! nodes; rank `j` runs node `j`'s program. A superstep boundary starts with the ranks'
//! agreement (see `Agreement`): one 8-byte word per rank (a fold of the call's signature, its
//! complement and whether the rank sends), combined by OR. When all ranks share one machine
//! they combine it through a shared-memory window (`mpi_shared`), faster than
//! `MPI_Barrier`; otherwise in `ceil(log2 P)` rounds of `MPI_Sendrecv`, the pattern of
//! `MPI_Barrier` itself. Either way an empty superstep costs about a barrier. It checks that
//! all nodes made the same call; when anybody sends, an `MPI_Alltoall` of per-destination
//! byte counts and one `MPI_Alltoallv` of the messages follow. BSP needs exactly this: every
//! node learns what it receives at the sync, and the barrier comes with the exchange. A
//! scatter (equal pieces or not) sends every piece from the root's data while the root
//! copies its own; a broadcast does the same on one machine or between two ranks (across
//! more machines it is its algorithm's supersteps, like any messages); both run after the
//! agreement, which carries the root's byte count, into a vector of the node's pool (see
//! `collectives`).
//!
//! When the program returns, the nodes' traces and results travel to every rank (one
//! `MPI_Allgatherv`), so the [`crate::RunOutput`] is the same everywhere and equals what the
//! threads backend returns for the same program.
//!
//! Failures end the job: an abort, a panic, an error returned by a node or a misuse calls
//! `MPI_Abort` after printing one line that names the rank, so `mpirun` stops every process
//! and exits non-zero within seconds. Only a mismatch of calls, which every rank detects at
//! once, is returned as an error on all ranks.

use std::cell::RefCell;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::Arc;

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::mpi_bytes::{
    all_gather_bytes, exchange_bytes, scatter_bytes, too_many_bytes, type_mismatch,
};
use super::mpi_shared::SharedAgreement;
use super::{ByteTarget, Call, MpiOptions, Native, Outbox, Transport, mismatch};
use crate::RunOutput;
use crate::ctx::{Ctx, MachineFacts};
use crate::error::{HbspError, Result};
use crate::message::{Envelope, Payload, ReturnDesk};
use crate::trace::{NodeTrace, Trace};
use hetscale_machine::platform::{Machine, Node, Platform};

/// MPI for this process: `MPI_Init` when created, `MPI_Finalize` when dropped.
///
/// Create one at the start of `main`, before any [`crate::run`] on the mpi backend, and keep
/// it until the end: MPI can be initialised only once per process, and OpenMPI treats a
/// process that exits without finalising as failed. Creating it also installs a panic hook
/// that names the rank and calls `MPI_Abort`, so a panic anywhere in the process ends the
/// whole job instead of leaving the other ranks waiting.
pub struct MpiSession {
    _universe: mpi::environment::Universe,
}

impl MpiSession {
    /// Initialises MPI.
    pub fn init() -> Result<Self> {
        let universe = mpi::initialize().ok_or_else(|| {
            HbspError::InvalidBackend(
                "MPI is already initialised in this process: create one hbsp MpiSession per process"
                    .into(),
            )
        })?;
        install_abort_on_panic();
        Ok(Self {
            _universe: universe,
        })
    }

    /// This process's rank in `MPI_COMM_WORLD`.
    pub fn rank(&self) -> usize {
        SimpleCommunicator::world().rank() as usize
    }

    /// Number of processes in `MPI_COMM_WORLD`.
    pub fn size(&self) -> usize {
        SimpleCommunicator::world().size() as usize
    }

    /// Every rank's host name, by rank; a collective call. In a Slurm job step it is the
    /// rank's Slurm node name (see [`host_name`]), otherwise its MPI processor name.
    pub fn host_names(&self) -> Result<Vec<String>> {
        let processor = mpi::environment::processor_name().map_err(|err| {
            HbspError::InvalidBackend(format!("MPI processor name is not UTF-8: {err}"))
        })?;
        let name = host_name(&processor, std::env::var("SLURMD_NODENAME").ok().as_deref());
        let parts = all_gather_bytes(&SimpleCommunicator::world(), name.as_bytes())?;
        Ok(parts
            .into_iter()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .collect())
    }

    /// Every rank's value of `local`, by rank; a collective call.
    pub fn all_gather_f64(&self, local: f64) -> Vec<f64> {
        let world = SimpleCommunicator::world();
        let mut all = vec![0.0; world.size() as usize];
        world.all_gather_into(&local, &mut all[..]);
        all
    }

    /// The machine of this job keyed by host name: rank `j` is the node of `platform` named
    /// like rank `j`'s host (a collective call). Several ranks on one host get copies of its
    /// node named `host.k`; a host the platform lacks is an error naming it.
    pub fn machine_by_host(&self, platform: &Platform) -> Result<Machine> {
        let hosts = self.host_names()?;
        let nodes = hosts
            .iter()
            .map(|host| {
                let short = host.split('.').next().unwrap_or(host);
                platform
                    .nodes
                    .iter()
                    .find(|n| n.name == *host || n.name == short)
                    .cloned()
                    .ok_or_else(|| {
                        HbspError::InvalidNodeSet(format!(
                            "MPI host \"{host}\" is not a node of platform \"{}\": add a [[node]] named \"{short}\", or measure speeds at start-up",
                            platform.name
                        ))
                    })
            })
            .collect::<Result<Vec<Node>>>()?;
        job_machine(platform, nodes)
    }

    /// The machine of this job with each rank's `marked_speed` in Mflop/s as measured on it (a
    /// collective call: every rank passes its own measurement); the network comes from
    /// `platform`.
    pub fn machine_measured(&self, platform: &Platform, marked_speed: f64) -> Result<Machine> {
        if !(marked_speed.is_finite() && marked_speed > 0.0) {
            abort_job(&format!(
                "measured marked_speed {marked_speed} is not a positive speed"
            ));
        }
        let speeds = self.all_gather_f64(marked_speed);
        let nodes = self
            .host_names()?
            .iter()
            .zip(speeds)
            .map(|(host, speed)| Node::new(host.split('.').next().unwrap_or(host), speed))
            .collect();
        let platform = Platform {
            speed_unit: "Mflop/s".into(),
            ..platform.clone()
        };
        job_machine(&platform, nodes)
    }

    /// Ends the job: prints `message` naming this rank and calls `MPI_Abort`.
    pub fn abort(&self, message: &str) -> ! {
        abort_job(message)
    }
}

/// The name a rank's host goes by: `slurm_node` (`SLURMD_NODENAME`, which slurmd sets in every
/// task it starts, also in `mpirun`'s daemons inside an allocation) when it is set, else the
/// MPI processor name. A Slurm node name may differ from the host name (`NodeHostname` in
/// slurm.conf), and it is the name `srun --nodelist` and a study's configurations take.
pub fn host_name(processor: &str, slurm_node: Option<&str>) -> String {
    match slurm_node.map(str::trim) {
        Some(node) if !node.is_empty() => node.to_owned(),
        _ => processor.to_owned(),
    }
}

/// A machine of `platform`'s network over `nodes`, one per rank; repeated names get `.k`.
fn job_machine(platform: &Platform, mut nodes: Vec<Node>) -> Result<Machine> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let repeated: Vec<bool> = nodes
        .iter()
        .map(|n| nodes.iter().filter(|m| m.name == n.name).count() > 1)
        .collect();
    for (node, repeated) in nodes.iter_mut().zip(repeated) {
        if repeated {
            let k = seen.entry(node.name.clone()).or_default();
            node.name = format!("{}.{k}", node.name);
            *k += 1;
        }
        node.kind = None;
    }
    let job = Platform {
        nodes,
        ..platform.clone()
    };
    job.validate()?;
    Ok(job.all()?)
}

fn install_abort_on_panic() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-string payload".into());
            let place = info
                .location()
                .map_or(String::new(), |l| format!(" at {}:{}", l.file(), l.line()));
            abort_job(&format!("panicked{place}: {message}"));
        }
    }));
}

/// Prints `message` with this rank and aborts every process of the job.
fn abort_job(message: &str) -> ! {
    let world = SimpleCommunicator::world();
    let line = format!(
        "hbsp: MPI rank {} of {}: {message}; aborting the job\n",
        world.rank(),
        world.size()
    );
    // One write: `eprintln!` writes its pieces one by one, and mpirun forwards each as it comes,
    // so its abort banner could land in the middle of the line.
    let _ = std::io::stderr().write_all(line.as_bytes());
    world.abort(1)
}

/// Bytes of a message header: tag (u32), internal flag (u32), meta (u64), length (u64).
const HEADER: usize = 24;

/// Received bytes shared by the messages cut from them, so decoding copies nothing.
struct Received {
    buffer: Arc<Vec<u8>>,
    range: std::ops::Range<usize>,
}

impl Payload for Received {
    fn bytes(&self) -> &[u8] {
        &self.buffer[self.range.clone()]
    }

    fn capacity_bytes(&self) -> usize {
        // Not a vector `send` can reuse.
        0
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

struct MpiTransport<'m> {
    world: SimpleCommunicator,
    /// An error every rank detected at once (a mismatch of calls): `run` returns it on every
    /// rank instead of aborting the job.
    agreed: Rc<RefCell<Option<HbspError>>>,
    pid: usize,
    machine: &'m Machine,
    start: f64,
    stretch: f64,
    superstep: u64,
    /// Reused between supersteps (see `encode`), like the byte counts per rank: a superstep
    /// allocates nothing once these have grown.
    send_buffer: Vec<u8>,
    received: Arc<Vec<u8>>,
    counts: Vec<i32>,
    incoming: Vec<i32>,
    /// The agreement's lines in shared memory, when all ranks are on one machine.
    shared: Option<SharedAgreement>,
}

impl MpiTransport<'_> {
    fn p(&self) -> usize {
        self.machine.p()
    }

    /// Lays out every message to another rank as header + payload, grouped by destination.
    /// Counts per destination go to `self.counts`.
    fn encode(&mut self, outbox: &mut Outbox) -> (Vec<u8>, Vec<Envelope>) {
        let p = self.p();
        let mut counts = std::mem::take(&mut self.counts);
        counts.clear();
        counts.resize(p, 0);
        let mut own = Vec::new();
        let total: usize = outbox
            .batches()
            .filter(|(to, _)| *to != self.pid)
            .flat_map(|(_, batch)| batch)
            .map(|e| HEADER + e.payload.bytes().len())
            .sum();
        // Reused: a fresh megabyte every superstep costs page faults. Never without an
        // allocation: OpenMPI rejects a send buffer at the address of the receive buffer, and
        // two empty vectors share one dangling address.
        let mut buffer = std::mem::take(&mut self.send_buffer);
        buffer.clear();
        buffer.reserve(total.max(1));
        let mut batches: Vec<(usize, Vec<Envelope>)> = outbox.drain().collect();
        batches.sort_unstable_by_key(|(to, _)| *to);
        for (to, batch) in batches {
            if to == self.pid {
                own = batch;
                continue;
            }
            let before = buffer.len();
            for envelope in batch {
                let bytes = envelope.payload.bytes();
                buffer.extend_from_slice(&envelope.tag.to_le_bytes());
                buffer.extend_from_slice(&u32::from(envelope.internal).to_le_bytes());
                buffer.extend_from_slice(&envelope.meta.to_le_bytes());
                buffer.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
                buffer.extend_from_slice(bytes);
            }
            counts[to] = (buffer.len() - before) as i32;
        }
        self.counts = counts;
        (buffer, own)
    }

    /// The messages in `buffer` from `source`, in send order.
    fn decode(
        buffer: &Arc<Vec<u8>>,
        range: std::ops::Range<usize>,
        source: usize,
    ) -> Vec<Envelope> {
        let mut envelopes = Vec::new();
        let mut at = range.start;
        let word = |at: usize, n: usize| -> u64 {
            let mut bytes = [0u8; 8];
            bytes[..n].copy_from_slice(&buffer[at..at + n]);
            u64::from_le_bytes(bytes)
        };
        while at < range.end {
            let tag = word(at, 4) as u32;
            let internal = word(at + 4, 4) != 0;
            let meta = word(at + 8, 8);
            let len = word(at + 16, 8) as usize;
            let body = at + HEADER..at + HEADER + len;
            at = body.end;
            envelopes.push(Envelope {
                source,
                tag,
                internal,
                meta,
                payload: Box::new(Received {
                    buffer: Arc::clone(buffer),
                    range: body,
                }),
            });
        }
        envelopes
    }

    /// Ends the superstep: the four words (see the module docs), then `native`'s collective,
    /// then the messages. Returns them and the bytes `native`'s root announced.
    fn exchange_and(
        &mut self,
        outbox: &mut Outbox,
        call: &Call,
        mut native: Option<(Native<'_>, &mut dyn ByteTarget)>,
    ) -> Result<(Vec<Envelope>, usize)> {
        let (buffer, own) = self.encode(outbox);
        if buffer.len() > i32::MAX as usize {
            return Err(self.fail(too_many_bytes(self.pid, "sent", buffer.len() as u64)));
        }
        let announce = match &native {
            Some((
                Native::Broadcast { root, source, .. } | Native::Scatter { root, source, .. },
                _,
            )) if *root == self.pid => source.len(),
            Some((Native::BroadcastLength { root, bytes, .. }, _)) if *root == self.pid => *bytes,
            _ => 0,
        };
        let signature = call.signature();
        let mut agreement = Agreement::new(signature, !buffer.is_empty(), announce as u64);
        match &mut self.shared {
            Some(shared) => agreement.combine_through(shared),
            None => agreement.combine_over_ranks(&self.world, self.pid, self.p()),
        }
        if !agreement.same_call(signature) {
            let mismatch = self.mismatch(call);
            *self.agreed.borrow_mut() = Some(mismatch.clone());
            return Err(mismatch);
        }
        let announced = agreement.announce as usize;
        if let Some((native, target)) = native.take() {
            self.run_native(native, target, announced)?;
        }
        self.superstep += 1;
        if !agreement.anybody_sends() {
            self.send_buffer = buffer;
            return Ok((own, announced));
        }
        let delivered = self.exchange_messages(&buffer, own);
        self.send_buffer = buffer;
        Ok((delivered?, announced))
    }

    /// Moves the encoded messages in `buffer` (counts in `self.counts`) and returns what this
    /// rank receives, `own` (its messages to itself) in its place among the sources.
    fn exchange_messages(&mut self, buffer: &[u8], own: Vec<Envelope>) -> Result<Vec<Envelope>> {
        let p = self.p();
        self.incoming.resize(p, 0);
        self.world
            .all_to_all_into(&self.counts[..], &mut self.incoming[..]);
        let incoming_total: u64 = self.incoming.iter().map(|&c| c as u64).sum();
        if incoming_total > i32::MAX as u64 {
            return Err(self.fail(too_many_bytes(self.pid, "arrive", incoming_total)));
        }
        // The last superstep's buffer, unless a message cut from it is still queued.
        let mut into = Arc::get_mut(&mut self.received)
            .map(std::mem::take)
            .unwrap_or_default();
        exchange_bytes(&self.world, buffer, &self.counts, &self.incoming, &mut into);
        let received = Arc::new(into);
        self.received = Arc::clone(&received);
        let mut delivered = Vec::new();
        let mut own = Some(own);
        let mut at = 0;
        for (source, &count) in self.incoming.iter().enumerate() {
            if source == self.pid {
                delivered.extend(own.take().unwrap_or_default());
            }
            let range = at..at + count as usize;
            at = range.end;
            delivered.extend(Self::decode(&received, range, source));
        }
        Ok(delivered)
    }

    /// Moves a native collective's data into `target`; every rank knows the `announced`
    /// bytes.
    fn run_native(
        &self,
        native: Native<'_>,
        target: &mut dyn ByteTarget,
        announced: usize,
    ) -> Result<()> {
        if announced > i32::MAX as usize {
            return Err(self.fail(too_many_bytes(
                self.pid,
                "broadcast or scattered",
                announced as u64,
            )));
        }
        match native {
            Native::Broadcast { root, source, .. } => {
                if !self.broadcast_bytes(root, source, announced, target) {
                    return Err(self.fail(type_mismatch("broadcast", announced)));
                }
            }
            // Every rank knows the announced length: nothing else moves.
            Native::BroadcastLength { .. } => {}
            Native::Scatter {
                root,
                source,
                counts,
            } => {
                let counts = counts(announced);
                let mine = counts[self.pid];
                let Some(buffer) = target.overwrite(mine) else {
                    return Err(self.fail(type_mismatch("scatter", mine)));
                };
                // Zero bytes everywhere: nothing to move, and OpenMPI rejects two empty
                // buffers that share one dangling address.
                if announced > 0 {
                    scatter_bytes(&self.world, root, self.pid == root, source, &counts, buffer);
                }
            }
        }
        Ok(())
    }

    /// The root's `source`, `len` bytes, into every rank's `target`; `false` when they are
    /// not a whole number of this rank's items.
    ///
    /// Between two ranks, or when all ranks share one machine, the root sends to every rank
    /// straight from `source` and makes its own copy while they read (over shared memory
    /// OpenMPI lets the receiver copy, so the readers pull in parallel). `MPI_Bcast` would
    /// want the root's buffer writable, so the root's copy would come first and the readers
    /// would wait for it (`bash crates/hbsp/benches/side_by_side.sh` times this against
    /// `MPI_Bcast`, docs/validation.md, "The hbsp library"). Across machines only two ranks
    /// broadcast natively (see `has_native_broadcast`).
    fn broadcast_bytes(
        &self,
        root: usize,
        source: &[u8],
        len: usize,
        target: &mut dyn ByteTarget,
    ) -> bool {
        let is_root = self.pid == root;
        // Zero bytes: nothing to move, and OpenMPI rejects an empty buffer's dangling address.
        if len == 0 || self.p() == 1 {
            return if is_root {
                target.copy_of(source)
            } else {
                target.overwrite(len)
            }
            .is_some();
        }
        let from_root = self.world.process_at_rank(root as i32);
        if !is_root {
            let Some(buffer) = target.overwrite(len) else {
                return false;
            };
            from_root.receive_into_with_tag(buffer, BROADCAST_TAG);
            return true;
        }
        mpi::request::scope(|scope| {
            let sending: Vec<_> = (0..self.p())
                .filter(|&rank| rank != root)
                .map(|rank| {
                    self.world
                        .process_at_rank(rank as i32)
                        .immediate_send_with_tag(scope, source, BROADCAST_TAG)
                })
                .collect();
            let copied = target.copy_of(source).is_some();
            for request in sending {
                request.wait();
            }
            copied
        })
    }

    /// What every rank called, gathered once a mismatch shows, for the error message.
    fn mismatch(&self, call: &Call) -> HbspError {
        let text = call.to_string();
        let calls = all_gather_bytes(&self.world, text.as_bytes()).unwrap_or_default();
        let calls = calls
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        mismatch(self.machine, self.superstep, calls)
    }
}

impl Transport for MpiTransport<'_> {
    fn now(&self) -> f64 {
        mpi::time() - self.start
    }

    fn exchange(&mut self, outbox: &mut Outbox, call: &Call) -> Result<Vec<Envelope>> {
        Ok(self.exchange_and(outbox, call, None)?.0)
    }

    fn has_native_collectives(&self) -> bool {
        true
    }

    /// Across machines with more than two ranks a broadcast is the superstep(s) its algorithm
    /// names, exchanged like any other messages: the root's direct sends (one-phase) or its
    /// scatter and the pieces' all-gather (two-phase), which is what the cost model charges.
    /// `MPI_Bcast`'s tree does neither: its rounds relay the whole data through the ranks it
    /// has reached, which on slow links takes longer than the two-phase algorithm and is not
    /// what the model charges, and each round adds a start-up where the root's direct sends
    /// overlap theirs (the testbed's times of MM either way,
    /// `mpirun -np 4 hetscale run mm --backend mpi --nodes 4`, are in docs/hbsp.md, "The mpi
    /// backend").
    fn has_native_broadcast(&self) -> bool {
        self.shared.is_some() || self.p() <= 2
    }

    fn exchange_with(
        &mut self,
        outbox: &mut Outbox,
        call: &Call,
        native: Native<'_>,
        target: &mut dyn ByteTarget,
    ) -> Result<(Vec<Envelope>, usize)> {
        self.exchange_and(outbox, call, Some((native, target)))
    }

    fn fail(&self, cause: HbspError) -> HbspError {
        abort_job(&cause.to_string())
    }

    fn check(&self) -> Result<()> {
        Ok(())
    }

    fn charge(&mut self, _ops: f64) -> Result<()> {
        Ok(())
    }

    fn skips_compute(&self) -> bool {
        false
    }

    fn emulation_stretch(&self) -> f64 {
        self.stretch
    }

    fn after_compute(&mut self, block: super::ComputeTime) -> Result<()> {
        std::thread::sleep(super::emulation_pause(self.stretch, block));
        Ok(())
    }

    fn return_desk(&self) -> Option<&Arc<ReturnDesk>> {
        // Another process's memory: nothing to hand back.
        None
    }
}

/// What the ranks agree on at a superstep boundary, combined by bitwise OR over the ranks.
///
/// `word` packs a 31-bit fold of the call's signature, its complement and a "this rank sends"
/// bit: the OR of the signatures and of their complements equals a rank's own pair only if
/// every rank made the same call. `announce`, the bytes a native collective's root announces
/// (0 on every other rank, so the OR is the root's), travels only when non-zero: OpenMPI's
/// shared-memory path moves one 8-byte word as fast as `MPI_Barrier`'s empty message, and a
/// second word costs more (`bash crates/hbsp/benches/side_by_side.sh` times hbsp's sync
/// against `MPI_Barrier`).
struct Agreement {
    word: u64,
    announce: u64,
}

impl Agreement {
    const SENDS: u64 = 1 << 31;

    fn new(signature: u64, sends: bool, announce: u64) -> Self {
        let sends = if sends { Self::SENDS } else { 0 };
        Self {
            word: Self::signature_bits(signature) | sends,
            announce,
        }
    }

    /// The fold of `signature` in bits 32-62 and its complement in bits 0-30. A plain sync
    /// (0) and a program's end (1) keep their values; a collective's hash lands on 2 or more.
    fn signature_bits(signature: u64) -> u64 {
        const MASK: u64 = (1 << 31) - 1;
        let folded = if signature < 2 {
            signature
        } else {
            2 + signature % (MASK - 1)
        };
        (folded << 32) | (!folded & MASK)
    }

    fn same_call(&self, signature: u64) -> bool {
        self.word & !Self::SENDS == Self::signature_bits(signature)
    }

    fn anybody_sends(&self) -> bool {
        self.word & Self::SENDS != 0
    }

    /// Leaves every rank holding the OR over all ranks, through their shared lines.
    fn combine_through(&mut self, shared: &mut SharedAgreement) {
        (self.word, self.announce) = shared.combine(self.word, self.announce);
    }

    /// Leaves every rank holding the OR over all ranks, in `ceil(log2 p)` rounds of
    /// `MPI_Sendrecv`.
    ///
    /// Hand-rolled rather than `MPI_Allreduce`: on OpenMPI's shared-memory transport that is
    /// slower than an `MPI_Barrier`, while these rounds are the barrier's own pattern
    /// (`bash crates/hbsp/benches/side_by_side.sh` times hbsp's sync against `MPI_Barrier`).
    /// Pairs exchange (`rank ^ step`) when `p` is a power of two, so two ranks sharing a core
    /// wake each other; otherwise each rank sends `step` ahead and hears from `step` behind
    /// (dissemination, exact because an OR does not mind hearing a rank twice).
    fn combine_over_ranks(&mut self, world: &SimpleCommunicator, rank: usize, p: usize) {
        let mut heard = [0u64; 2];
        let mut step = 1;
        while step < p {
            let (to, from) = if p.is_power_of_two() {
                (rank ^ step, rank ^ step)
            } else {
                ((rank + step) % p, (rank + p - step) % p)
            };
            let mine = [self.word, self.announce];
            let words = if self.announce == 0 { 1 } else { 2 };
            let status = mpi::point_to_point::send_receive_into_with_tags(
                &mine[..words],
                &world.process_at_rank(to as i32),
                AGREEMENT_TAG,
                &mut heard[..],
                &world.process_at_rank(from as i32),
                AGREEMENT_TAG,
            );
            self.word |= heard[0];
            if status.count(u64::equivalent_datatype()) == 2 {
                self.announce |= heard[1];
            }
            step *= 2;
        }
    }
}

/// Tags of hbsp's point-to-point messages on its own communicator.
const AGREEMENT_TAG: i32 = 0;
const BROADCAST_TAG: i32 = 1;

/// A number equal on two ranks iff they hold the same machine (names, speeds, network).
fn machine_fingerprint(machine: &Machine) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    machine.platform().hash(&mut h);
    for node in machine.nodes() {
        node.name.hash(&mut h);
        node.marked_speed.to_bits().hash(&mut h);
        node.r.to_bits().hash(&mut h);
    }
    machine.l_s().to_bits().hash(&mut h);
    h.finish()
}

/// Checks that this job has one rank per node and that every rank holds the same machine.
fn check_job(world: &SimpleCommunicator, machine: &Machine) -> Result<()> {
    let size = world.size() as usize;
    if size != machine.p() {
        return Err(HbspError::InvalidBackend(format!(
            "the machine has {} nodes but the MPI job has {size} ranks: launch with mpirun -np {} or select {size} nodes",
            machine.p(),
            machine.p()
        )));
    }
    let mine = machine_fingerprint(machine);
    let mut all = vec![0u64; size];
    world.all_gather_into(&mine, &mut all[..]);
    if let Some(rank) = all.iter().position(|&f| f != mine) {
        return Err(HbspError::InvalidBackend(format!(
            "MPI rank {rank} runs on a different machine than rank {}: give every rank the same platform and nodes",
            world.rank()
        )));
    }
    Ok(())
}

/// Runs node `rank`'s share of `program` on this process (see the module docs).
pub(crate) fn run<T, E, F>(
    options: &MpiOptions,
    machine: &Machine,
    program: &F,
) -> Result<RunOutput<T>>
where
    F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E>,
    T: Send + Serialize + DeserializeOwned,
    E: std::fmt::Display,
{
    run_on(SimpleCommunicator::world(), options, machine, program)
}

/// Tag of the message that carries a sub-machine's outcome to the ranks outside it.
const OUTCOME_TAG: i32 = 0x4853;

/// Runs `program` on the first `machine.p()` ranks of the job, through a communicator of
/// their own (`MPI_Comm_split`), while the other ranks wait; all ranks return rank 0's
/// output. This lets one job measure machines of several sizes, as the collectives' probe
/// does on the first 2, 4, 8, ... ranks. The waiting ranks poll for the outcome with short
/// sleeps, so they leave their cores to the ranks being measured.
pub fn run_on_first_ranks<T, E, F>(
    options: &MpiOptions,
    machine: &Machine,
    program: &F,
) -> Result<RunOutput<T>>
where
    F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E>,
    T: Send + Serialize + DeserializeOwned,
    E: std::fmt::Display,
{
    check_initialized()?;
    let world = SimpleCommunicator::world();
    let (rank, size, p) = (world.rank() as usize, world.size() as usize, machine.p());
    if p > size {
        return Err(HbspError::InvalidBackend(format!(
            "the machine has {p} nodes but the MPI job only {size} ranks: launch with mpirun -np {p} or more"
        )));
    }
    if p == size {
        return run_on(world, options, machine, program);
    }
    let channel = world.duplicate();
    let color = if rank < p {
        mpi::topology::Color::with_value(0)
    } else {
        mpi::topology::Color::undefined()
    };
    match world.split_by_color(color) {
        Some(sub) => {
            let outcome = run_on(sub, options, machine, program);
            if rank == 0 {
                send_outcome(&channel, &outcome, p..size);
            }
            outcome
        }
        None => receive_outcome(&channel, machine),
    }
}

/// A sub-machine's outcome as it travels to the ranks outside it.
type SharedOutcome<T> = std::result::Result<(Vec<T>, Vec<NodeTrace>, f64), String>;

fn outcome_encoding(err: postcard::Error) -> HbspError {
    HbspError::InvalidBackend(format!(
        "a sub-machine's outcome could not be shared between MPI ranks: {err}"
    ))
}

/// Rank 0 of a sub-machine sends its `outcome` to the `waiting` ranks of `channel`.
fn send_outcome<T: Serialize>(
    channel: &SimpleCommunicator,
    outcome: &Result<RunOutput<T>>,
    waiting: std::ops::Range<usize>,
) {
    let shared: std::result::Result<(&[T], &[NodeTrace], f64), String> = match outcome {
        Ok(out) => Ok((&out.results, &out.trace.nodes, out.elapsed_s)),
        Err(err) => Err(err.to_string()),
    };
    let bytes = postcard::to_allocvec(&shared)
        .unwrap_or_else(|err| abort_job(&outcome_encoding(err).to_string()));
    for rank in waiting {
        channel
            .process_at_rank(rank as i32)
            .send_with_tag(&bytes[..], OUTCOME_TAG);
    }
}

/// A rank outside the sub-machine waits for rank 0's outcome, polling with short sleeps so
/// that it leaves its core to the ranks being measured.
fn receive_outcome<T: DeserializeOwned>(
    channel: &SimpleCommunicator,
    machine: &Machine,
) -> Result<RunOutput<T>> {
    let from_root = channel.process_at_rank(0);
    while from_root.immediate_probe_with_tag(OUTCOME_TAG).is_none() {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    let (bytes, _) = from_root.receive_vec_with_tag::<u8>(OUTCOME_TAG);
    let (results, nodes, elapsed_s) = postcard::from_bytes::<SharedOutcome<T>>(&bytes)
        .map_err(outcome_encoding)?
        .map_err(HbspError::InvalidBackend)?;
    Ok(measured_output(machine, results, nodes, elapsed_s))
}

fn check_initialized() -> Result<()> {
    if !mpi::environment::is_initialized() || mpi::environment::is_finalized() {
        return Err(HbspError::InvalidBackend(
            "the mpi backend needs MPI: create an hbsp MpiSession at the start of main and keep it alive"
                .into(),
        ));
    }
    Ok(())
}

/// [`run`] on the ranks of `world`, which may be a part of the job's.
fn run_on<T, E, F>(
    world: SimpleCommunicator,
    options: &MpiOptions,
    machine: &Machine,
    program: &F,
) -> Result<RunOutput<T>>
where
    F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E>,
    T: Send + Serialize + DeserializeOwned,
    E: std::fmt::Display,
{
    check_initialized()?;
    check_job(&world, machine)?;
    let pid = world.rank() as usize;
    let stretch = if options.emulate_speeds {
        super::emulation_stretch(machine, pid)
    } else {
        1.0
    };
    world.barrier();
    let agreed = Rc::new(RefCell::new(None));
    // A communicator of hbsp's own, so the point-to-point rounds of `Agreement` never match
    // a message the program sends on `MPI_COMM_WORLD` itself.
    let own = world.duplicate();
    let shared = options
        .shared_memory
        .then(|| SharedAgreement::new(&own))
        .flatten();
    let transport = MpiTransport {
        world: own,
        agreed: Rc::clone(&agreed),
        pid,
        machine,
        start: mpi::time(),
        stretch,
        superstep: 0,
        send_buffer: Vec::new(),
        received: Arc::default(),
        counts: Vec::new(),
        incoming: Vec::new(),
        shared,
    };
    let start = transport.start;
    let facts = MachineFacts::new(machine);
    let mut ctx = Ctx::new(pid, machine, &facts, Box::new(transport), options.trace);
    let name = &machine.nodes()[pid].name;
    let value = match catch_unwind(AssertUnwindSafe(|| program(&mut ctx))) {
        Ok(Ok(value)) => value,
        Ok(Err(err)) => match agreed.borrow_mut().take() {
            Some(cause) => return Err(cause),
            None => abort_job(&format!("node {pid} ({name}) failed: {err}")),
        },
        Err(_) => abort_job(&format!("node {pid} ({name}) panicked")),
    };
    let trace = match ctx.finish() {
        Ok(trace) => trace,
        Err(err) if agreed.borrow().is_some() => return Err(err),
        Err(err) => abort_job(&format!("node {pid} ({name}) failed: {err}")),
    };
    let elapsed = mpi::time() - start;
    let mut elapsed_s = 0.0;
    world.all_reduce_into(&elapsed, &mut elapsed_s, SystemOperation::max());
    let (results, nodes) = share_outcomes(&world, value, trace)?;
    Ok(measured_output(machine, results, nodes, elapsed_s))
}

/// Every node's result and trace, on every rank.
fn share_outcomes<T>(
    world: &SimpleCommunicator,
    value: T,
    trace: NodeTrace,
) -> Result<(Vec<T>, Vec<NodeTrace>)>
where
    T: Serialize + DeserializeOwned,
{
    let encoding = |err: postcard::Error| {
        HbspError::InvalidBackend(format!(
            "a node's result could not be shared between MPI ranks: {err}"
        ))
    };
    // A rank that cannot encode must not leave the others waiting in the gather.
    let local = postcard::to_allocvec(&(value, trace))
        .unwrap_or_else(|err| abort_job(&encoding(err).to_string()));
    all_gather_bytes(world, &local)?
        .iter()
        .map(|bytes| postcard::from_bytes::<(T, NodeTrace)>(bytes).map_err(encoding))
        .collect::<Result<Vec<_>>>()
        .map(|pairs| pairs.into_iter().unzip())
}

/// A real-time run's output on `machine`: every node's result and trace, and the slowest
/// rank's time.
fn measured_output<T>(
    machine: &Machine,
    results: Vec<T>,
    nodes: Vec<NodeTrace>,
    elapsed_s: f64,
) -> RunOutput<T> {
    RunOutput {
        results,
        trace: Trace {
            platform: machine.platform().to_owned(),
            p: machine.p(),
            nodes,
        },
        elapsed_s,
        virtual_time: false,
        compute_skipped: false,
        costs: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::host_name;

    #[test]
    fn a_rank_goes_by_its_slurm_node_name_when_slurm_started_it() {
        // srun (or mpirun's daemons in an allocation): Slurm's name, even where the host's differs.
        assert_eq!(host_name("compute-0-7", Some("node07")), "node07");
        assert_eq!(host_name("h1", Some("h1")), "h1");
        // Not under Slurm, or a blank variable: the MPI processor name.
        assert_eq!(host_name("h1.cluster.example", None), "h1.cluster.example");
        assert_eq!(host_name("h1", Some("")), "h1");
        assert_eq!(host_name("h1", Some("  ")), "h1");
    }
}
