//! `Ctx`: what a node's program sees of the run.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytemuck::Pod;
use hetscale_model::hbsp::HbspMachine;

use crate::backend::transport::{ByteTarget, Call, ComputeSpan, Native, Outbox, Transport};
use crate::error::{HbspError, Result};
use crate::message::{Envelope, MAX_ZEROS, Message, MessageInfo, Payload, Pool, Zeros};
use crate::trace::{NodeTrace, Recorder};
use hetscale_machine::platform::Machine;

/// A node's handle on the run: its identity, the machine, messages, supersteps and tracing.
///
/// One `Ctx` exists per node; [`crate::run`] passes it to the program. Every method that can
/// fail returns [`HbspError`]; an error caused by misuse (a bad destination, a payload of the
/// wrong size, a mismatched collective) ends the whole run, so propagate it with `?`.
pub struct Ctx<'a> {
    pid: usize,
    machine: &'a Machine,
    transport: Box<dyn Transport + 'a>,
    outbox: Outbox,
    queue: VecDeque<Envelope>,
    internal: VecDeque<Envelope>,
    pool: Pool,
    recorder: Recorder,
    facts: &'a MachineFacts,
    superstep: u64,
}

/// What nodes ask of the machine, derived once per run and shared by its nodes: each is
/// O(p), so a copy per node would make a run's memory O(p^2).
pub(crate) struct MachineFacts {
    /// Pids by speed rank, fastest first.
    ranking: Vec<usize>,
    cost_model: HbspMachine,
    /// The last balanced split asked for, `(n, counts)`, and the last collective cost, by
    /// its arguments: every node of a superstep asks the same, and each takes O(p) to find,
    /// which p nodes would make O(p^2) per superstep.
    last_counts: Mutex<Option<(usize, Arc<Split>)>>,
    /// The last few costs: a collective asks for more than one (a broadcast compares its two
    /// algorithms), and with one entry each node would recompute them all.
    last_costs: Mutex<VecDeque<(CostKey, f64)>>,
}

/// Costs [`MachineFacts`] remembers.
const REMEMBERED_COSTS: usize = 8;

/// `n` items split in proportion to marked speed, with what collectives derive from it,
/// found once per superstep instead of once per node.
pub(crate) struct Split {
    /// Node `j`'s share.
    pub counts: Vec<usize>,
    /// Where node `j`'s share starts (exclusive prefix sums of `counts`).
    pub starts: Vec<usize>,
    /// The nodes whose share is not empty, ascending: fewer than `p` when `n < p`.
    pub holders: Vec<usize>,
}

impl Split {
    fn new(counts: Vec<usize>) -> Self {
        Self {
            starts: offsets(&counts),
            holders: (0..counts.len()).filter(|&j| counts[j] > 0).collect(),
            counts,
        }
    }
}

impl std::ops::Deref for Split {
    type Target = [usize];

    fn deref(&self) -> &[usize] {
        &self.counts
    }
}

/// The arguments that determine a collective's predicted cost on a machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CostKey {
    pub collective: &'static str,
    pub variant: u32,
    pub root: usize,
    pub items: usize,
    pub item_bytes: usize,
}

impl MachineFacts {
    pub fn new(machine: &Machine) -> Self {
        Self {
            ranking: machine.ranking(),
            cost_model: machine.cost_model(),
            last_counts: Mutex::new(None),
            last_costs: Mutex::new(VecDeque::with_capacity(REMEMBERED_COSTS)),
        }
    }
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        pid: usize,
        machine: &'a Machine,
        facts: &'a MachineFacts,
        transport: Box<dyn Transport + 'a>,
        trace: bool,
    ) -> Self {
        let node = &machine.nodes()[pid];
        let mut recorder = Recorder::new(
            trace,
            pid,
            machine.p(),
            node.name.clone(),
            node.marked_speed,
        );
        recorder.begin(transport.now());
        Self {
            pid,
            machine,
            transport,
            outbox: Outbox::default(),
            queue: VecDeque::new(),
            internal: VecDeque::new(),
            pool: Pool::default(),
            recorder,
            facts,
            superstep: 0,
        }
    }

    /// This node's id, `0..nprocs()` (HBSPlib `hbsp_pid`).
    pub fn pid(&self) -> usize {
        self.pid
    }

    /// Number of nodes `p` (HBSPlib `hbsp_nprocs`).
    pub fn nprocs(&self) -> usize {
        self.machine.p()
    }

    /// Seconds since the run began (HBSPlib `hbsp_time`); on threads, one clock for all nodes.
    pub fn time(&self) -> f64 {
        self.transport.now()
    }

    /// Number of the current superstep, from 0.
    pub fn superstep(&self) -> u64 {
        self.superstep
    }

    /// The machine this run executes on.
    pub fn machine(&self) -> &'a Machine {
        self.machine
    }

    /// The HBSP^1 cost model of the machine (`g`, `r_j`, `L(p)`).
    pub fn cost_model(&self) -> &HbspMachine {
        &self.facts.cost_model
    }

    /// Pid of the node of speed rank `k`, 1 = fastest, `p` = slowest (HBSPlib
    /// `hbsp_get_rank`); ties go to the lower pid.
    pub fn rank(&self, k: usize) -> Result<usize> {
        match k.checked_sub(1).and_then(|i| self.facts.ranking.get(i)) {
            Some(&pid) => Ok(pid),
            None => Err(self.misuse(format!(
                "rank {k} does not exist: ranks run from 1 (fastest) to {}",
                self.nprocs()
            ))),
        }
    }

    /// Marked speed `C_j` of node `pid` (HBSPlib `hbsp_get_speed`).
    pub fn speed(&self, pid: usize) -> Result<f64> {
        match self.machine.nodes().get(pid) {
            Some(node) => Ok(node.marked_speed),
            None => Err(self.misuse(format!(
                "speed of pid {pid} asked, but pids run from 0 to {}",
                self.nprocs() - 1
            ))),
        }
    }

    /// `C = sum_j C_j` (HBSPlib `hbsp_cluster_speed`).
    pub fn cluster_speed(&self) -> f64 {
        self.machine.cluster_speed()
    }

    /// `n` items split in proportion to marked speed: `counts[j]` is node `j`'s share
    /// (`c_j n` rounded by largest remainder, summing to `n`).
    pub fn balanced_counts(&self, n: usize) -> Vec<usize> {
        self.shared_counts(n).to_vec()
    }

    /// [`Ctx::balanced_counts`], shared with the other nodes asking for the same `n`.
    pub(crate) fn shared_counts(&self, n: usize) -> Arc<Split> {
        let mut last = relock(&self.facts.last_counts);
        match &*last {
            Some((m, split)) if *m == n => Arc::clone(split),
            _ => {
                let split = Arc::new(Split::new(self.machine.balanced_counts(n)));
                *last = Some((n, Arc::clone(&split)));
                split
            }
        }
    }

    /// The cost `key` describes, computed by `cost` unless it was the last one asked for.
    pub(crate) fn remembered_cost(
        &self,
        key: CostKey,
        cost: impl FnOnce() -> Result<f64>,
    ) -> Result<f64> {
        if let Some(&(_, value)) = relock(&self.facts.last_costs)
            .iter()
            .find(|(known, _)| *known == key)
        {
            return Ok(value);
        }
        let value = cost()?;
        let mut costs = relock(&self.facts.last_costs);
        if costs.len() == REMEMBERED_COSTS {
            costs.pop_front();
        }
        costs.push_back((key, value));
        Ok(value)
    }

    /// Queues `data` for node `to`, delivered by the `sync` that ends this superstep
    /// (HBSPlib `hbsp_send`). `tag` travels with it. `data` is copied once, into a vector
    /// recycled by [`Ctx::recycle`] if one of the same element type fits, else a new one.
    pub fn send<T: Pod + Send>(&mut self, to: usize, tag: u32, data: &[T]) -> Result<()> {
        let mut buffer = self.spare_vec::<T>(data.len());
        buffer.extend_from_slice(data);
        self.send_vec(to, tag, buffer)
    }

    /// Hands a received message's vector back for reuse: a later [`Ctx::send`] of the same
    /// element type on the node that sent it copies into this memory instead of allocating,
    /// so an exchange that recycles what it receives allocates nothing once it is going.
    /// The vector goes home to its sender because that node last wrote it, so its memory is
    /// still in that node's cache. A message this node sent itself stays here.
    pub fn recycle<T: Pod + Send>(&mut self, message: Message<T>) {
        let source = message.source;
        let buffer: Box<dyn Payload> = Box::new(message.into_data());
        match self.transport.return_desk() {
            Some(desk) if source != self.pid && source < self.nprocs() => {
                desk.deposit(source, buffer)
            }
            _ => self.pool.put(buffer),
        }
    }

    /// Hands a vector the program is done with (a collective's result, say) to this node's
    /// pool: a later [`Ctx::send`] or collective result of the same element type reuses its
    /// memory instead of allocating, which for large vectors means page faults.
    pub fn recycle_vec<T: Pod + Send>(&mut self, data: Vec<T>) {
        self.pool.put(Box::new(data));
    }

    /// An empty vector with room for `len` items, from the pool when one fits.
    fn spare_vec<T: Pod + Send>(&mut self, len: usize) -> Vec<T> {
        if len == 0 || std::mem::size_of::<T>() == 0 {
            return Vec::with_capacity(len);
        }
        if let Some(buffer) = self.pool.take(len) {
            return buffer;
        }
        // A receiver may have given a vector back since the last sync: fetch it now rather
        // than a superstep later, which would need a second buffer in rotation.
        self.collect_returned();
        self.pool
            .take(len)
            .unwrap_or_else(|| Vec::with_capacity(len))
    }

    /// Like [`Ctx::send`], taking ownership of the vector so it is not copied.
    pub fn send_vec<T: Pod + Send>(&mut self, to: usize, tag: u32, data: Vec<T>) -> Result<()> {
        self.post(to, tag, None, data)
    }

    /// Queues a message of `bytes` zero bytes for node `to` without building it: a program
    /// whose receivers never read the values (a sim skeleton run) sends the size of its data
    /// this way, in no memory. Every backend counts, charges and delivers it like a message
    /// of `bytes` bytes; received, it reads as zeros (or is dropped unread with
    /// [`Ctx::discard_all`]).
    pub fn send_zeros(&mut self, to: usize, tag: u32, bytes: usize) -> Result<()> {
        let zeros = self.zeros(bytes)?;
        self.post_payload(to, tag, None, zeros)
    }

    /// A payload of `bytes` zero bytes that owns no memory.
    fn zeros(&self, bytes: usize) -> Result<Box<dyn Payload>> {
        self.check_zeros(bytes)?;
        Ok(Box::new(Zeros(bytes)))
    }

    /// An error unless a message of `bytes` zero bytes can be sent (`usize::MAX` stands for
    /// a length that overflowed).
    pub(crate) fn check_zeros(&self, bytes: usize) -> Result<()> {
        if bytes > MAX_ZEROS {
            // Only a run that skips its compute (a sim skeleton run) sends such messages: what
            // its user can change is the problem's size or how many nodes share it.
            let size = match bytes {
                usize::MAX => "more bytes than a 64-bit count holds".to_owned(),
                _ => hetscale_model::numbers::human_bytes(bytes as f64),
            };
            return Err(self.misuse(format!(
                "the run would send a message of {size}, more than the {} one simulated \
                 message may carry: use a smaller problem size or more nodes",
                hetscale_model::numbers::human_bytes(MAX_ZEROS as f64)
            )));
        }
        Ok(())
    }

    fn post<T: Pod + Send>(
        &mut self,
        to: usize,
        tag: u32,
        meta: Option<u64>,
        data: Vec<T>,
    ) -> Result<()> {
        self.post_payload(to, tag, meta, Box::new(data))
    }

    fn post_payload(
        &mut self,
        to: usize,
        tag: u32,
        meta: Option<u64>,
        payload: Box<dyn Payload>,
    ) -> Result<()> {
        self.transport.check()?;
        let p = self.nprocs();
        if to >= p {
            return Err(self.transport.fail(HbspError::BadDestination {
                pid: self.pid,
                to,
                p,
            }));
        }
        self.recorder.sent(to, payload.len());
        let (internal, meta) = (meta.is_some(), meta.unwrap_or(0));
        let envelope = Envelope {
            source: self.pid,
            tag,
            internal,
            meta,
            payload,
        };
        self.outbox.push(to, envelope);
        Ok(())
    }

    /// Ends the superstep (HBSPlib `hbsp_sync`): messages sent in it are delivered, and every
    /// node waits for every other. Messages stay queued until received, in order of
    /// superstep, then source pid, then send order.
    pub fn sync(&mut self) -> Result<()> {
        self.sync_as(&Call::Sync)
    }

    pub(crate) fn sync_as(&mut self, call: &Call) -> Result<()> {
        let entered = self.stamp();
        let delivered = self.transport.exchange(&mut self.outbox, call)?;
        self.deliver(delivered, entered);
        Ok(())
    }

    /// Whether collectives may move their data with the backend's own collectives (MPI's).
    pub(crate) fn has_native_collectives(&self) -> bool {
        self.transport.has_native_collectives()
    }

    /// Whether broadcasts may move their data with the backend's own (MPI's, sim's).
    pub(crate) fn has_native_broadcast(&self) -> bool {
        self.transport.has_native_broadcast()
    }

    /// Whether this node records a full trace (per-destination flows), not only totals.
    pub(crate) fn tracing(&self) -> bool {
        self.recorder.records_flows()
    }

    /// Ends a collective's superstep in which `native` moves its data with the backend's own
    /// collective, and returns the bytes the root announced and what this node received, in
    /// a vector from its pool when one fits. The trace counts
    /// `traffic(self, announced)`: the messages the collective's HBSP^1 algorithm sends, so
    /// traces agree across backends.
    pub(crate) fn sync_native<T: Pod + Send>(
        &mut self,
        call: &Call,
        native: Native<'_>,
        traffic: impl FnOnce(&Self, usize) -> Result<Traffic>,
    ) -> Result<(usize, Vec<T>)> {
        let entered = self.stamp();
        let mut target = PooledVec {
            pool: &mut self.pool,
            vec: Vec::<T>::new(),
        };
        let (delivered, announced) =
            self.transport
                .exchange_with(&mut self.outbox, call, native, &mut target)?;
        let value = target.vec;
        let traffic = traffic(self, announced)?;
        self.count_traffic(&traffic);
        self.deliver(delivered, entered);
        Ok((announced, value))
    }

    /// Counts messages in this superstep's trace that a native collective moved.
    pub(crate) fn count_traffic(&mut self, traffic: &Traffic) {
        for &(to, bytes) in &traffic.sent {
            self.recorder.sent(to, bytes);
        }
        for &bytes in &traffic.received {
            self.recorder.received(bytes);
        }
        self.recorder.count(&traffic.totals);
    }

    fn stamp(&self) -> f64 {
        if self.recorder.enabled() {
            self.transport.now()
        } else {
            0.0
        }
    }

    /// Moves the vectors other nodes gave back into this node's pool (bounded by the pool,
    /// whatever they give).
    fn collect_returned(&mut self) {
        if let Some(desk) = self.transport.return_desk() {
            for buffer in desk.collect(self.pid) {
                self.pool.put(buffer);
            }
        }
    }

    /// Queues what a superstep delivered and closes it in the trace.
    fn deliver(&mut self, delivered: Vec<Envelope>, entered: f64) {
        self.collect_returned();
        for envelope in delivered {
            self.recorder.received(envelope.payload.len());
            if envelope.internal {
                self.internal.push_back(envelope);
            } else {
                self.queue.push_back(envelope);
            }
        }
        let left = self.stamp();
        self.recorder.close(entered, left);
        self.superstep += 1;
    }

    /// Source, tag and size of the first queued message (HBSPlib `hbsp_get_tag`).
    pub fn peek(&self) -> Option<MessageInfo> {
        self.queue.front().map(Envelope::info)
    }

    /// Number of queued messages (HBSPlib `hbsp_qsize`).
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Total payload bytes of the queued messages.
    pub fn queue_bytes(&self) -> usize {
        self.queue.iter().map(|e| e.payload.len()).sum()
    }

    /// Removes and returns the first queued message as a vector of `T` (HBSPlib
    /// `hbsp_move`); `None` when the queue is empty. A payload sent as `T` is moved, not
    /// copied. The payload length must be a multiple of `size_of::<T>()`. Dropping the
    /// message hands a large vector back to its sender, as [`Ctx::recycle`] does.
    pub fn recv<T: Pod + Send>(&mut self) -> Result<Option<Message<T>>> {
        let Some(front) = self.queue.front() else {
            return Ok(None);
        };
        self.check_payload::<T>(front)?;
        let envelope = self.queue.pop_front().expect("front exists");
        Ok(Some(self.open(envelope)))
    }

    /// Removes and returns every queued message.
    pub fn recv_all<T: Pod + Send>(&mut self) -> Result<Vec<Message<T>>> {
        let mut messages = Vec::with_capacity(self.queue.len());
        while let Some(message) = self.recv()? {
            messages.push(message);
        }
        Ok(messages)
    }

    /// Removes every queued message without reading it (no payload is copied) and returns
    /// what each was: how a program that never reads the values (a sim skeleton run) takes
    /// its messages.
    pub fn discard_all(&mut self) -> Vec<MessageInfo> {
        self.queue.drain(..).map(|e| e.info()).collect()
    }

    fn check_payload<T: Pod>(&self, envelope: &Envelope) -> Result<()> {
        let size = std::mem::size_of::<T>();
        let bytes = envelope.payload.len();
        if size == 0 || bytes % size == 0 {
            return Ok(());
        }
        Err(self.misuse(format!(
            "message from node {} with tag {} has {bytes} bytes, not a whole number of {size}-byte {}; receive it as u8",
            envelope.source,
            envelope.tag,
            std::any::type_name::<T>()
        )))
    }

    /// Ends the run for every node (HBSPlib `hbsp_abort`); `run` returns an error naming this
    /// node and `reason`. Return the value from the program: `return Err(ctx.abort("...").into())`.
    pub fn abort(&self, reason: impl Into<String>) -> HbspError {
        let name = self.machine.nodes()[self.pid].name.clone();
        self.transport.fail(HbspError::Aborted {
            pid: self.pid,
            name,
            reason: reason.into(),
        })
    }

    /// Runs a compute block of `ops` operations: records the work in the trace; under speed
    /// emulation (threads, mpi) stretches the block to take `C_max / C_j` times its CPU time
    /// (a wait for a core on a busy host counts towards it, not on top of it); on `sim`
    /// charges `ops / C_j` of virtual time, and with skeleton execution skips the block and
    /// returns `R::default()`.
    pub fn compute<R: Default>(&mut self, ops: f64, block: impl FnOnce() -> R) -> Result<R> {
        self.charge_work(ops)?;
        if self.transport.skips_compute() {
            return Ok(R::default());
        }
        let span = ComputeSpan::start(self.transport.emulation_stretch() > 1.0);
        let result = block();
        self.transport.after_compute(span.end())?;
        Ok(result)
    }

    /// Declares `ops` operations of work done in this superstep (recorded in the trace; the
    /// `sim` backend charges `ops / C_j` seconds for it). Negative or non-finite `ops` is an
    /// error.
    pub fn charge_work(&mut self, ops: f64) -> Result<()> {
        if !(ops.is_finite() && ops >= 0.0) {
            return Err(self.misuse(format!(
                "work must be a finite number of operations >= 0, got {ops}"
            )));
        }
        self.recorder.work(ops);
        self.transport.charge(ops)
    }

    /// Runs `body` as a named phase, recorded in the trace of the superstep it ends in.
    pub fn phase<R>(&mut self, name: &str, body: impl FnOnce(&mut Self) -> R) -> R {
        let start = self.transport.now();
        let result = body(self);
        let end = self.transport.now();
        self.recorder.phase(name, start, end - start);
        result
    }

    /// Ends the run with `cause` (unless an earlier cause ended it); returns the cause in force.
    pub(crate) fn fail(&self, cause: HbspError) -> HbspError {
        self.transport.fail(cause)
    }

    /// Ends the run with an `InvalidArgument` error from this node.
    pub(crate) fn misuse(&self, message: String) -> HbspError {
        self.transport.fail(HbspError::InvalidArgument {
            pid: self.pid,
            message,
        })
    }

    /// Sends a collective's message, kept apart from the user's queue; `meta` travels with it.
    pub(crate) fn send_internal<T: Pod + Send>(
        &mut self,
        to: usize,
        tag: u32,
        meta: u64,
        data: Vec<T>,
    ) -> Result<()> {
        self.post(to, tag, Some(meta), data)
    }

    /// Sends a collective's message of `bytes` zero bytes that owns no memory (see
    /// [`Ctx::send_zeros`]), kept apart from the user's queue; `meta` travels with it.
    pub(crate) fn send_internal_zeros(
        &mut self,
        to: usize,
        tag: u32,
        meta: u64,
        bytes: usize,
    ) -> Result<()> {
        let zeros = self.zeros(bytes)?;
        self.post_payload(to, tag, Some(meta), zeros)
    }

    /// Drops every message a collective received unread; returns what each was.
    pub(crate) fn discard_internal(&mut self) -> Vec<MessageInfo> {
        self.internal.drain(..).map(|e| e.info()).collect()
    }

    /// The meta of the first message a collective received.
    pub(crate) fn internal_meta(&self) -> Option<u64> {
        self.internal.front().map(|e| e.meta)
    }

    /// Takes every message a collective received, in (source, send order), with its `meta`.
    pub(crate) fn take_internal<T: Pod + Send>(&mut self) -> Result<Vec<(Message<T>, u64)>> {
        let envelopes: Vec<Envelope> = self.internal.drain(..).collect();
        for envelope in &envelopes {
            self.check_payload::<T>(envelope)?;
        }
        Ok(envelopes
            .into_iter()
            .map(|e| {
                let meta = e.meta;
                (self.open(e), meta)
            })
            .collect())
    }

    /// The message in `envelope`, its vector going back to its sender when dropped.
    fn open<T: Pod + Send>(&self, envelope: Envelope) -> Message<T> {
        let (source, tag) = (envelope.source, envelope.tag);
        let desk = self.transport.return_desk();
        Message::returning(source, tag, envelope.into_vec(), desk)
    }

    /// The final barrier when the program returns; hands back the trace.
    pub(crate) fn finish(mut self) -> Result<NodeTrace> {
        self.sync_as(&Call::End)?;
        Ok(self.recorder.finish())
    }
}

/// A native collective's target: a vector of this node's pool when one fits, else new.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
struct PooledVec<'p, T> {
    pool: &'p mut Pool,
    vec: Vec<T>,
}

impl<T: Pod + Send> ByteTarget for PooledVec<'_, T> {
    fn item_bytes(&self) -> usize {
        std::mem::size_of::<T>()
    }

    fn overwrite(&mut self, bytes: usize) -> Option<&mut [u8]> {
        let items = self.items(bytes)?;
        // Zeroing the vector only for MPI to overwrite it would keep each receiver from the
        // collective while it writes every page once more (`side_by_side.sh` times the
        // scatter against MPI_Scatterv).
        self.vec = self
            .pool
            .take_to_overwrite(items)
            .unwrap_or_else(|| vec![T::zeroed(); items]);
        Some(bytemuck::cast_slice_mut(&mut self.vec))
    }

    fn copy_of(&mut self, bytes: &[u8]) -> Option<&mut [u8]> {
        let items = self.items(bytes.len())?;
        let mut vec = self
            .pool
            .take(items)
            .unwrap_or_else(|| Vec::with_capacity(items));
        match bytemuck::try_cast_slice::<u8, T>(bytes) {
            Ok(items) => vec.extend_from_slice(items),
            Err(_) => vec.extend(
                bytes
                    .chunks_exact(self.item_bytes())
                    .map(bytemuck::pod_read_unaligned::<T>),
            ),
        }
        self.vec = vec;
        Some(bytemuck::cast_slice_mut(&mut self.vec))
    }
}

impl<T: Pod + Send> PooledVec<'_, T> {
    /// Items in `bytes`; `None` unless a whole number.
    fn items(&self, bytes: usize) -> Option<usize> {
        let size = self.item_bytes();
        (size > 0 && bytes % size == 0).then(|| bytes / size)
    }
}

/// Messages of one node's superstep in a trace: `(destination, bytes)` sent, bytes of each
/// message received.
/// Or, where no flows are drawn, `totals` alone.
#[derive(Debug, Default)]
pub(crate) struct Traffic {
    pub sent: Vec<(usize, usize)>,
    pub received: Vec<usize>,
    pub totals: crate::backend::transport::Load,
}

impl Traffic {
    /// Totals without flows.
    pub fn totals(totals: crate::backend::transport::Load) -> Self {
        Self {
            totals,
            ..Self::default()
        }
    }
}

/// Start of each node's block in a buffer laid out by `counts` (exclusive prefix sums).
pub fn offsets(counts: &[usize]) -> Vec<usize> {
    counts
        .iter()
        .scan(0, |acc, &c| {
            let start = *acc;
            *acc += c;
            Some(start)
        })
        .collect()
}
