//! The coroutine engine of the `sim` backend, its default ([`super::sim::SimEngine`]).
//!
//! Every node is a stackful coroutine ([`corosensei`]). The nodes are split into lanes of
//! contiguous pids, one OS thread each ([`lanes`]: one unless `SimOptions::lanes` says
//! more), and a lane runs its nodes in turn, in pid order: a node runs until its superstep
//! boundary (`sync`, a collective's superstep, the end of its program), where it leaves its
//! messages in the receivers' mailboxes and yields; the next node runs. Once every lane has
//! run all its nodes (a round), one of them charges the superstep on the virtual clock and
//! checks that every node made the same call; then every node resumes in turn with its
//! messages. Virtual times, results, traces and the error that ends a failed run are those
//! of the thread-per-node engine, bit for bit when work is declared, whatever the lanes.
//!
//! Why it is fast at tens of thousands of nodes: a suspended node's stack has left the
//! caches by its next turn, so the scheduler prefetches the stack of the node two turns
//! ahead (see [`stack_pool::prefetch`]); nodes are walked in memory order.
//!
//! What this asks of programs:
//! - A node must not block outside [`crate::Ctx`]: waiting on its own channel, lock or
//!   condition variable for another node would wait forever, since that node runs only when
//!   this one yields at its boundary. Such programs are not supported on sim (use threads).
//! - Compute inside [`crate::Ctx::compute`] still runs for real, one node at a time (skip it
//!   with `SimOptions::skip_compute`).
//! - A node's stack is [`NODE_STACK_BYTES`] (256 KiB) of address space above a guard page;
//!   only the pages a node touches take memory, typically 8 to 16 KiB. A node that
//!   overflows its stack hits the guard page: the process ends with a segmentation fault
//!   (never undefined behaviour). Large arrays belong in `Vec`s, not on the stack.
//! - All the stacks sit in one memory mapping ([`super::stack_pool`]). On Linux >= 6.13 it
//!   stays one mapping; on older kernels each guard page splits it, so a run needs two of
//!   the process's mappings per node (`vm.max_map_count`, often 65530): see [`max_nodes`].

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Condvar, Mutex, MutexGuard, PoisonError};

use corosensei::{CoroutineResult, ScopedCoroutine, ScopedCoroutineRef, Yielder};

use super::node::{SuperstepWork, panic_message, run_program};
use super::sim::{SimOptions, VirtualClock};
use super::stack_pool::{self, Guards, PooledStack, StackPool};
use super::{ByteTarget, Call, Native, Outbox, Transport};
use crate::RunOutput;
use crate::ctx::{Ctx, MachineFacts};
use crate::error::{HbspError, Result};
use crate::message::{Envelope, ReturnDesk};
use crate::trace::NodeTrace;
use hetscale_machine::platform::Machine;

/// Address space reserved for each node's stack, above its guard page.
pub const NODE_STACK_BYTES: usize = 256 * 1024;

/// Mappings left to the rest of the process (heap arenas, libraries, threads).
const MAPPINGS_KEPT: usize = 1024;

/// Stack of the engine thread per node: opening the nodes' scopes nests one call per node.
const ENGINE_STACK_PER_NODE: usize = 2 * 1024;

/// What the scheduler prefetches of a suspended node's stack, around the address where it
/// suspended: the frames it returns through first. More lines than this per node (a whole
/// suspended stack is about 2 KiB) measured slower: the prefetches queue behind each other.
const WARM_BELOW: usize = 256;
const WARM_BYTES: usize = 1024;

/// How many nodes ahead of the one resuming the scheduler prefetches: far enough for the
/// memory to arrive while the nodes in between run.
const WARM_AHEAD: usize = 2;

/// The most nodes this process can run on the coroutine engine where each node's guard page
/// takes memory mappings (kernels before 6.13): the process's mapping limit
/// (`/proc/sys/vm/max_map_count`) after a reserve; `None` where nodes take no mappings or the
/// system does not say.
pub fn max_nodes() -> Option<usize> {
    let per_node = Guards::available().mappings_per_node();
    if per_node == 0 {
        return None;
    }
    let limit: usize = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(limit.saturating_sub(MAPPINGS_KEPT) / per_node)
}

/// The arrivals of one lane's nodes at the current boundary.
#[derive(Default)]
struct Arrivals {
    count: usize,
    /// The first arriver's call and whether every later one made the same.
    first: Option<(u64, Call)>,
    agreed: bool,
    /// One call of each other signature, for the error message of a mismatch.
    others: Vec<(u64, Call)>,
}

impl Arrivals {
    /// Counts an arrival with `call` (of `signature`).
    fn arrive(&mut self, call: &Call, signature: u64) {
        match &self.first {
            None => {
                self.first = Some((signature, call.clone()));
                self.agreed = true;
            }
            Some((first, _)) if *first != signature => {
                self.agreed = false;
                if self.others.iter().all(|(s, _)| *s != signature) {
                    self.others.push((signature, call.clone()));
                }
            }
            Some(_) => {}
        }
        self.count += 1;
    }

    /// Every distinct call of the lane's nodes, with its signature.
    fn calls(&self) -> impl Iterator<Item = &(u64, Call)> {
        self.first.iter().chain(&self.others)
    }
}

/// The error that ends a run, decided the same way whatever the lanes' timing: nodes learn
/// of a failure only at the next boundary, and among the failures of one round the one of
/// the earliest superstep, then the lowest pid, wins (what running the nodes one by one in
/// pid order gives).
#[derive(Default)]
struct Failure {
    /// The cause every node sees from the next boundary on.
    published: Mutex<Option<HbspError>>,
    failed: AtomicBool,
    /// Failures in the current round, by `(superstep, pid)`: the least is kept.
    pending: Mutex<Option<((u64, usize), HbspError)>>,
}

impl Failure {
    fn record(&self, at: (u64, usize), cause: HbspError) -> HbspError {
        if let Some(published) = self.published() {
            return published;
        }
        let mut pending = relock(&self.pending);
        if pending.as_ref().is_none_or(|(first, _)| at < *first) {
            *pending = Some((at, cause.clone()));
        }
        cause
    }

    fn published(&self) -> Option<HbspError> {
        if !self.failed.load(Ordering::Acquire) {
            return None;
        }
        relock(&self.published).clone()
    }

    /// At the end of a round: the round's failure, if any, becomes the run's.
    fn publish(&self) {
        if let Some((_, cause)) = relock(&self.pending).take() {
            relock(&self.published).get_or_insert(cause);
            self.failed.store(true, Ordering::Release);
        }
    }

    fn into_cause(self) -> Option<HbspError> {
        self.publish();
        self.published
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// A value alone on its cache lines (two: x86 prefetches lines in pairs), so that lanes
/// writing neighbouring values do not take the line from each other.
#[derive(Default)]
#[repr(align(128))]
struct Padded<T>(T);

/// `p` empty slots, one per node.
fn slots<T: Default>(p: usize) -> Vec<Mutex<T>> {
    (0..p).map(|_| Mutex::default()).collect()
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the nodes of all lanes share besides the clock. Each lock is held for a moment,
/// never across a yield; a lane's nodes take their own slots, so the lanes seldom meet.
struct Shared<'m> {
    machine: &'m Machine,
    facts: MachineFacts,
    clock: VirtualClock,
    skip_compute: bool,
    /// `mail[parity][destination]`: messages of the supersteps of that parity. The parity
    /// alternates so a node resuming early cannot mix its new messages into a mailbox its
    /// receiver has not emptied yet.
    mail: [Vec<Mutex<Vec<Envelope>>>; 2],
    /// `signatures[pid]`: the signature of the node's call at this boundary, for the error
    /// message of a mismatch (the calls themselves are kept once per lane in [`Arrivals`]: a
    /// collective's call holds a count per node, and a copy per node took `p^2` memory).
    signatures: Vec<AtomicU64>,
    /// Recycled and dropped messages' vectors on their way back to their senders.
    returned: Arc<ReturnDesk>,
    /// `arrivals[lane]`, each on cache lines of its own: every arrival writes it.
    arrivals: Vec<Padded<Mutex<Arrivals>>>,
    failure: Failure,
    /// `broadcast[parity]`: what a native broadcast's root published in the superstep of
    /// that parity (parity as for `mail`).
    broadcast: [Mutex<Published>; 2],
    /// `suspended_at[pid]`: an address in node `pid`'s stack frame where it last suspended,
    /// for its lane to prefetch (0 before it first suspends).
    suspended_at: Vec<AtomicUsize>,
}

impl<'m> Shared<'m> {
    fn new(machine: &'m Machine, options: &SimOptions, lanes: usize) -> Result<Self> {
        let p = machine.p();
        Ok(Self {
            machine,
            facts: MachineFacts::new(machine),
            clock: VirtualClock::new(machine, options)?,
            skip_compute: options.skip_compute,
            mail: [slots(p), slots(p)],
            signatures: (0..p)
                .map(|_| AtomicU64::new(Call::Sync.signature()))
                .collect(),
            returned: ReturnDesk::new(p),
            arrivals: (0..lanes).map(|_| Padded::default()).collect(),
            failure: Failure::default(),
            broadcast: Default::default(),
            suspended_at: (0..p).map(|_| AtomicUsize::new(0)).collect(),
        })
    }

    /// Between rounds, once every lane has run its nodes: ends superstep `index` if every
    /// node arrived at its boundary (charges it, checks that all made the same call), and
    /// publishes the round's failure.
    fn end_round(&self, index: u64) {
        let arrivals: Vec<Arrivals> = self
            .arrivals
            .iter()
            .map(|lane| std::mem::take(&mut *relock(&lane.0)))
            .collect();
        let count: usize = arrivals.iter().map(|a| a.count).sum();
        if count == self.machine.p() && self.failure.published().is_none() {
            self.close(index, &arrivals);
        }
        self.failure.publish();
    }

    fn close(&self, index: u64, arrivals: &[Arrivals]) {
        let mut firsts = arrivals.iter().filter_map(|a| a.first.as_ref());
        let Some((signature, call)) = firsts.next() else {
            return;
        };
        let agreed = arrivals.iter().all(|a| a.count == 0 || a.agreed)
            && firsts.all(|(other, _)| other == signature);
        self.clock
            .close_superstep((index & 1) as usize, index, call);
        if !agreed {
            let known: Vec<&(u64, Call)> = arrivals.iter().flat_map(Arrivals::calls).collect();
            let calls = self.signatures.iter().map(|signature| {
                let signature = signature.load(Ordering::Relaxed);
                known
                    .iter()
                    .find(|(s, _)| *s == signature)
                    .map_or_else(|| Call::Sync.to_string(), |(_, call)| call.to_string())
            });
            let mismatch = super::mismatch(self.machine, index, calls);
            self.failure.record((index, self.machine.p()), mismatch);
        }
    }
}

struct CoroutineTransport<'s, 'm> {
    pid: usize,
    lane: usize,
    shared: &'s Shared<'m>,
    yielder: &'s Yielder<(), ()>,
    superstep: u64,
    work: SuperstepWork,
    /// Whether this node's slot in `Shared::signatures` holds a call other than a plain sync
    /// (a run of plain syncs leaves it alone).
    recorded_call: bool,
}

impl Transport for CoroutineTransport<'_, '_> {
    fn now(&self) -> f64 {
        let clock = &self.shared.clock;
        clock.superstep_start() + self.work.seconds(clock, self.pid)
    }

    fn exchange(&mut self, outbox: &mut Outbox, call: &Call) -> Result<Vec<Envelope>> {
        self.check()?;
        let (shared, pid) = (self.shared, self.pid);
        let parity = (self.superstep & 1) as usize;
        let work_s = self.work.seconds(&shared.clock, pid);
        shared
            .clock
            .deposit(parity, pid, work_s, outbox.sent_by(pid));
        for (to, batch) in outbox.drain() {
            let mut slot = relock(&shared.mail[parity][to]);
            if slot.is_empty() {
                *slot = batch;
            } else {
                slot.extend(batch);
            }
        }
        let signature = call.signature();
        if *call != Call::Sync || self.recorded_call {
            shared.signatures[pid].store(signature, Ordering::Relaxed);
            self.recorded_call = *call != Call::Sync;
        }
        relock(&shared.arrivals[self.lane].0).arrive(call, signature);
        shared.suspended_at[pid].store(std::ptr::addr_of!(parity) as usize, Ordering::Relaxed);
        self.yielder.suspend(());
        self.check()?;
        let mut delivered = std::mem::take(&mut *relock(&shared.mail[parity][pid]));
        // Senders deposit in any order across lanes; one sender's batch is in send order.
        delivered.sort_by_key(|e| e.source);
        self.superstep += 1;
        self.work = SuperstepWork::start(shared.clock.work_charge());
        Ok(delivered)
    }

    fn has_native_broadcast(&self) -> bool {
        true
    }

    /// A broadcast in one copy: the root publishes its data and charges every node's load
    /// as the broadcast's messages would be charged; after the boundary each node copies the
    /// data. Delivering it as messages would take p (p - 1) of them in a two-phase broadcast.
    fn exchange_with(
        &mut self,
        outbox: &mut Outbox,
        call: &Call,
        native: Native<'_>,
        target: &mut dyn ByteTarget,
    ) -> Result<(Vec<Envelope>, usize)> {
        let (root, source, bytes, loads) = match native {
            Native::Broadcast {
                root,
                source,
                loads,
            } => (root, Some(source), source.len(), loads),
            Native::BroadcastLength { root, bytes, loads } => (root, None, bytes, loads),
            Native::Scatter { .. } => {
                return Err(self.fail(HbspError::InvalidBackend(
                    "sim moves only broadcasts natively".into(),
                )));
            }
        };
        let parity = (self.superstep & 1) as usize;
        if self.pid == root {
            self.publish(parity, source, bytes, loads);
        }
        let delivered = self.exchange(outbox, call)?;
        let published = relock(&self.shared.broadcast[parity]);
        let data = match &*published {
            Published::Zeros(bytes) => return Ok((delivered, *bytes)),
            Published::Bytes(data) => data,
        };
        if target.copy_of(data).is_none() {
            let bytes = data.len();
            drop(published);
            return Err(self.fail(type_mismatch(bytes)));
        }
        Ok((delivered, data.len()))
    }

    fn fail(&self, cause: HbspError) -> HbspError {
        self.shared
            .failure
            .record((self.superstep, self.pid), cause)
    }

    fn check(&self) -> Result<()> {
        match self.shared.failure.published() {
            Some(cause) => Err(cause),
            None => Ok(()),
        }
    }

    fn charge(&mut self, ops: f64) -> Result<()> {
        let declared = self.work.declare(&self.shared.clock, self.pid, ops);
        declared.map_err(|err| self.fail(err))
    }

    fn skips_compute(&self) -> bool {
        self.shared.skip_compute
    }

    fn after_compute(&mut self, _block: super::ComputeTime) -> Result<()> {
        self.check()
    }

    fn return_desk(&self) -> Option<&Arc<ReturnDesk>> {
        Some(&self.shared.returned)
    }
}

impl CoroutineTransport<'_, '_> {
    /// The root's side of a native broadcast in the superstep of `parity`: its data for the
    /// nodes to copy (`None`: a broadcast of `bytes` zeros, whose length alone is published),
    /// and the loads of the broadcast's supersteps (this one and, two-phase,
    /// the next, whose tally was emptied when the previous superstep closed).
    fn publish(
        &self,
        parity: usize,
        source: Option<&[u8]>,
        bytes: usize,
        loads: &[Vec<super::Load>],
    ) {
        let mut published = relock(&self.shared.broadcast[parity]);
        match (source, &mut *published) {
            (Some(source), Published::Bytes(data)) => {
                data.clear();
                data.extend_from_slice(source);
            }
            (Some(source), other) => *other = Published::Bytes(source.to_vec()),
            (None, other) => *other = Published::Zeros(bytes),
        }
        for (step, loads) in loads.iter().enumerate().take(2) {
            self.shared.clock.deposit_loads(parity ^ (step & 1), loads);
        }
    }
}

/// What a native broadcast's root publishes for every node to take.
enum Published {
    /// Its data, which every node copies.
    Bytes(Vec<u8>),
    /// The length of a broadcast of zeros that no node reads: nothing to copy.
    Zeros(usize),
}

impl Default for Published {
    fn default() -> Self {
        Self::Bytes(Vec::new())
    }
}

/// The error for a broadcast whose nodes disagree on the item type.
fn type_mismatch(bytes: usize) -> HbspError {
    HbspError::InvalidBackend(format!(
        "broadcast: {bytes} bytes are not a whole number of this node's items: call it with the same item type on every node"
    ))
}

type Outcome<T> = Option<(T, NodeTrace)>;
/// A node borrowing for `'a`, on a stack of a pool that lives for `'s`.
type Node<'a, 's, T> = ScopedCoroutine<'a, (), (), Outcome<T>, PooledStack<'s>>;
type NodeRef<'r, 's, T> = ScopedCoroutineRef<'r, (), (), Outcome<T>, PooledStack<'s>>;

/// Runs `program` on every node of `machine` as coroutines, in virtual time, on
/// [`lanes`] OS threads.
pub(crate) fn run<T, E, F>(
    options: &SimOptions,
    machine: &Machine,
    program: &F,
) -> Result<RunOutput<T>>
where
    F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E> + Sync,
    T: Send,
    E: std::fmt::Display,
{
    let (p, lanes) = (machine.p(), lanes(options, machine.p()));
    let shared = Shared::new(machine, options, lanes)?;
    let stacks = StackPool::new(p, NODE_STACK_BYTES).map_err(|err| stack_error(p, &err))?;
    let (round_ends, gate) = (RoundEnds::new(lanes), Gate::default());
    let outcomes = std::thread::scope(|scope| {
        let started: Vec<_> = lane_ranges(p, lanes)
            .enumerate()
            .map(|(lane, pids)| {
                // The nodes' nested scopes need a stack that grows with the lane's nodes.
                let stack = 8 * 1024 * 1024 + pids.len() * ENGINE_STACK_PER_NODE;
                let lane_run = LaneRun {
                    lane,
                    shared: &shared,
                    stacks: &stacks,
                    round_ends: &round_ends,
                    trace: !options.no_trace,
                };
                let gate = &gate;
                std::thread::Builder::new()
                    .name(format!("hbsp-sim-{lane}"))
                    .stack_size(stack)
                    .spawn_scoped(scope, move || {
                        gate.wait().then(|| lane_run.run(pids, program))
                    })
                    .map_err(|err| {
                        HbspError::InvalidBackend(format!("sim could not start a thread: {err}"))
                    })
            })
            .collect();
        gate.open(started.iter().all(std::result::Result::is_ok));
        let mut outcomes = Vec::with_capacity(p);
        for lane in started {
            let joined = lane?.join().map_err(|panic| {
                HbspError::InvalidBackend(format!(
                    "the sim engine panicked: {}",
                    panic_message(panic.as_ref())
                ))
            })?;
            outcomes.extend(joined.into_iter().flatten());
        }
        Ok::<_, HbspError>(outcomes)
    })?;
    // Messages outliving the run free their vectors instead of leaving them in the desk.
    shared.returned.close();
    let Shared { clock, failure, .. } = shared;
    super::node::output(
        machine,
        failure.into_cause(),
        outcomes,
        0.0,
        Some(&clock),
        options.skip_compute,
    )
}

/// Holds the lanes until every one has started, so that none waits for a lane that could
/// not start.
#[derive(Default)]
struct Gate {
    open: Mutex<Option<bool>>,
    decided: Condvar,
}

impl Gate {
    /// Lets the lanes run (`go`) or return at once.
    fn open(&self, go: bool) {
        *relock(&self.open) = Some(go);
        self.decided.notify_all();
    }

    /// Whether to run, once decided.
    fn wait(&self) -> bool {
        let mut open = relock(&self.open);
        loop {
            match *open {
                Some(go) => return go,
                None => {
                    open = self
                        .decided
                        .wait(open)
                        .unwrap_or_else(PoisonError::into_inner)
                }
            }
        }
    }
}

/// The OS threads a run's nodes are spread over: `SimOptions::lanes`, one by default (two
/// lanes gave no wall-time gain at 65,536 nodes on a 2-core host and took more CPU,
/// `cargo bench -p hbsp --bench sim_scale`, docs/validation.md, "The simulator at scale");
/// at most one per node.
pub fn lanes(options: &SimOptions, p: usize) -> usize {
    options.lanes.unwrap_or(1).clamp(1, p.max(1))
}

/// The pids of each lane: `lanes` contiguous ranges of nearly equal length.
fn lane_ranges(p: usize, lanes: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..lanes).map(move |lane| lane * p / lanes..(lane + 1) * p / lanes)
}

/// Where the lanes meet at the end of every round: all have run their nodes, one ends the
/// round (closes the superstep), then all go on, or stop once no lane has a node left.
struct RoundEnds {
    barrier: Barrier,
    /// `running[round parity][lane]`: the lane's unfinished nodes after that round. By
    /// parity so that a lane already in the next round cannot overwrite a count another
    /// lane has yet to read.
    running: [Vec<AtomicUsize>; 2],
}

impl RoundEnds {
    fn new(lanes: usize) -> Self {
        let counts = || (0..lanes).map(|_| AtomicUsize::new(0)).collect();
        Self {
            barrier: Barrier::new(lanes),
            running: [counts(), counts()],
        }
    }

    /// Lane `lane`'s end of round `round` with `running` nodes left: whether any lane has
    /// nodes left.
    fn meet(&self, lane: usize, round: u64, running: usize, shared: &Shared<'_>) -> bool {
        let counts = &self.running[(round & 1) as usize];
        counts[lane].store(running, Ordering::Release);
        if self.barrier.wait().is_leader() {
            shared.end_round(round);
        }
        self.barrier.wait();
        counts.iter().any(|c| c.load(Ordering::Acquire) > 0)
    }
}

/// What a lane needs besides its nodes' pids and the program.
struct LaneRun<'a, 'm> {
    lane: usize,
    shared: &'a Shared<'m>,
    stacks: &'a StackPool,
    round_ends: &'a RoundEnds,
    trace: bool,
}

impl LaneRun<'_, '_> {
    /// Runs the nodes `pids` as coroutines on this thread, round after round; their
    /// outcomes in pid order.
    fn run<T, E, F>(&self, pids: std::ops::Range<usize>, program: &F) -> Vec<Outcome<T>>
    where
        F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E>,
        E: std::fmt::Display,
    {
        let (shared, lane, trace) = (self.shared, self.lane, self.trace);
        let machine = shared.machine;
        let first = pids.start;
        let mut nodes: Vec<Node<'_, '_, T>> = Vec::with_capacity(pids.len());
        for pid in pids {
            nodes.push(ScopedCoroutine::with_stack(
                self.stacks.stack(pid),
                move |yielder: &Yielder<(), ()>, ()| {
                    let transport = CoroutineTransport {
                        pid,
                        lane,
                        shared,
                        yielder,
                        superstep: 0,
                        work: SuperstepWork::start(shared.clock.work_charge()),
                        recorded_call: false,
                    };
                    let ctx = Ctx::new(pid, machine, &shared.facts, Box::new(transport), trace);
                    run_program(ctx, program)
                },
            ));
        }
        nodes.reverse();
        within_scopes(nodes, Vec::new(), |nodes| {
            schedule(nodes, first, shared, |round, running| {
                self.round_ends.meet(lane, round, running, shared)
            })
        })
    }
}

fn stack_error(p: usize, err: &std::io::Error) -> HbspError {
    let limit = max_nodes().map_or(String::new(), |n| {
        format!(" (this machine's vm.max_map_count allows about {n} nodes)")
    });
    HbspError::InvalidBackend(format!(
        "sim could not map the stacks of its {p} nodes: {err}{limit}; run fewer nodes"
    ))
}

/// Runs `body` with every node's coroutine in scope, in pid order (`nodes` holds them in
/// reverse). corosensei's safe API lends a coroutine that borrows (here the program and the
/// shared state) only inside a scope, so the scopes nest, one call per node.
fn within_scopes<'s, T, R>(
    mut nodes: Vec<Node<'_, 's, T>>,
    opened: Vec<NodeRef<'_, 's, T>>,
    body: impl for<'r> FnOnce(Vec<NodeRef<'r, 's, T>>) -> R,
) -> R {
    match nodes.pop() {
        None => body(opened),
        Some(node) => node.scope(move |node| {
            let mut opened = opened;
            opened.push(node);
            within_scopes(nodes, opened, body)
        }),
    }
}

/// Resumes every unfinished node of a lane (pids from `first`) in pid order, round after
/// round (one superstep each), until `round_end(round, nodes left)` says every lane is done;
/// the lane's outcomes by pid. Before each resume it prefetches the stack of the node
/// [`WARM_AHEAD`] places on, which `shared.suspended_at` locates.
fn schedule<T>(
    mut nodes: Vec<NodeRef<'_, '_, T>>,
    first: usize,
    shared: &Shared<'_>,
    mut round_end: impl FnMut(u64, usize) -> bool,
) -> Vec<Outcome<T>> {
    let mut outcomes: Vec<Outcome<T>> = (0..nodes.len()).map(|_| None).collect();
    let mut running: Vec<usize> = (0..nodes.len()).collect();
    let mut round = 0;
    loop {
        let mut still = 0;
        for turn in 0..running.len() {
            if let Some(&ahead) = running.get(turn + WARM_AHEAD) {
                let at = shared.suspended_at[first + ahead].load(Ordering::Relaxed);
                if at != 0 {
                    stack_pool::prefetch(at.saturating_sub(WARM_BELOW), WARM_BYTES);
                }
            }
            let node = running[turn];
            match nodes[node].resume(()) {
                CoroutineResult::Yield(()) => {
                    running[still] = node;
                    still += 1;
                }
                CoroutineResult::Return(outcome) => outcomes[node] = outcome,
            }
        }
        running.truncate(still);
        if !round_end(round, running.len()) {
            return outcomes;
        }
        round += 1;
    }
}
