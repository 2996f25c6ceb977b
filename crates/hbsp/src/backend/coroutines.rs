//! The coroutine engine of the `sim` backend, its default ([`super::sim::SimEngine`]).
//!
//! Every node is a stackful coroutine ([`corosensei`]) and one OS thread runs them in turn,
//! in pid order: a node runs until its superstep boundary (`sync`, a collective's superstep,
//! the end of its program), where it leaves its messages in the receivers' mailboxes and
//! yields; the next node runs. The last node to arrive charges the superstep on the virtual
//! clock and checks that every node made the same call, once; then every node resumes in
//! turn with its messages. Virtual times, results and traces are those of the thread-per-node
//! engine, bit for bit when work is declared.
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

use std::cell::RefCell;

use corosensei::{CoroutineResult, ScopedCoroutine, ScopedCoroutineRef, Yielder};

use super::node::{SuperstepWork, panic_message, run_program};
use super::sim::{SimOptions, VirtualClock};
use super::stack_pool::{Guards, PooledStack, StackPool};
use super::{ByteTarget, Call, Native, Outbox, Transport};
use crate::RunOutput;
use crate::ctx::{Ctx, MachineFacts};
use crate::error::{HbspError, Result};
use crate::message::{Envelope, Payload};
use crate::platform::Machine;
use crate::trace::NodeTrace;

/// Address space reserved for each node's stack, above its guard page.
pub const NODE_STACK_BYTES: usize = 256 * 1024;

/// Mappings left to the rest of the process (heap arenas, libraries, threads).
const MAPPINGS_KEPT: usize = 1024;

/// Stack of the engine thread per node: opening the nodes' scopes nests one call per node.
const ENGINE_STACK_PER_NODE: usize = 2 * 1024;

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

/// What the nodes share besides the clock; borrowed, never across a node's yield.
struct State {
    /// `mail[parity][destination]`: messages of the supersteps of that parity. The parity
    /// alternates so a node resuming early cannot mix its new messages into a mailbox its
    /// receiver has not emptied yet.
    mail: [Vec<Vec<Envelope>>; 2],
    /// `calls[pid]`: the node's call at this boundary, unless a plain sync (error messages).
    calls: Vec<Option<Call>>,
    /// `returned[pid]`: recycled vectors on their way back to node `pid`, which sent them.
    returned: Vec<Vec<Box<dyn Payload>>>,
    /// Nodes arrived at this boundary, and the signature of the first one's call.
    arrived: usize,
    signature: u64,
    agreed: bool,
    /// The error that ended the run.
    cause: Option<HbspError>,
    /// `broadcast[parity]`: the data a native broadcast's root published in the superstep
    /// of that parity (parity as for `mail`).
    broadcast: [Vec<u8>; 2],
}

impl State {
    fn new(p: usize) -> Self {
        let empty = |_| (0..p).map(|_| Vec::new()).collect();
        Self {
            mail: [0, 1].map(empty),
            calls: vec![None; p],
            returned: (0..p).map(|_| Vec::new()).collect(),
            arrived: 0,
            signature: 0,
            agreed: true,
            cause: None,
            broadcast: [Vec::new(), Vec::new()],
        }
    }

    /// Counts node `pid`'s arrival with `call`; whether it is the last.
    fn arrive(&mut self, pid: usize, call: &Call) -> bool {
        let signature = call.signature();
        if self.arrived == 0 {
            self.signature = signature;
            self.agreed = true;
        } else if signature != self.signature {
            self.agreed = false;
        }
        self.calls[pid] = (*call != Call::Sync).then(|| call.clone());
        self.arrived += 1;
        self.arrived == self.calls.len()
    }

    fn fail(&mut self, cause: HbspError) -> HbspError {
        self.cause.get_or_insert(cause).clone()
    }
}

struct Shared<'m> {
    machine: &'m Machine,
    facts: MachineFacts,
    clock: VirtualClock,
    skip_compute: bool,
    state: RefCell<State>,
}

impl Shared<'_> {
    /// The last arriver's work at the boundary ending superstep `index`: charges it and
    /// checks that every node made the same call.
    fn close(&self, parity: usize, index: u64, call: &Call) {
        self.clock.close_superstep(parity, index, call);
        let mut state = self.state.borrow_mut();
        state.arrived = 0;
        if !state.agreed {
            let calls = state
                .calls
                .iter()
                .map(|c| c.clone().unwrap_or(Call::Sync).to_string());
            let mismatch = super::mismatch(self.machine, index, calls);
            state.fail(mismatch);
        }
    }
}

struct CoroutineTransport<'s, 'm> {
    pid: usize,
    shared: &'s Shared<'m>,
    yielder: &'s Yielder<(), ()>,
    superstep: u64,
    work: SuperstepWork,
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
        let last = {
            let mut state = shared.state.borrow_mut();
            for (to, batch) in outbox.drain() {
                let slot = &mut state.mail[parity][to];
                if slot.is_empty() {
                    *slot = batch;
                } else {
                    slot.extend(batch);
                }
            }
            state.arrive(pid, call)
        };
        if last {
            shared.close(parity, self.superstep, call);
        }
        self.yielder.suspend(());
        self.check()?;
        let mut delivered = std::mem::take(&mut shared.state.borrow_mut().mail[parity][pid]);
        // Senders ran in pid order, so this stable sort only confirms (source, send order).
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
        let Native::Broadcast {
            root,
            source,
            loads,
        } = native
        else {
            return Err(self.fail(HbspError::InvalidBackend(
                "sim moves only broadcasts natively".into(),
            )));
        };
        let parity = (self.superstep & 1) as usize;
        if self.pid == root {
            self.publish(parity, source, loads);
        }
        let delivered = self.exchange(outbox, call)?;
        let state = self.shared.state.borrow();
        let data = &state.broadcast[parity];
        if target.copy_of(data).is_none() {
            let bytes = data.len();
            drop(state);
            return Err(self.fail(type_mismatch(bytes)));
        }
        Ok((delivered, data.len()))
    }

    fn fail(&self, cause: HbspError) -> HbspError {
        self.shared.state.borrow_mut().fail(cause)
    }

    fn check(&self) -> Result<()> {
        match &self.shared.state.borrow().cause {
            Some(cause) => Err(cause.clone()),
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

    fn after_compute(&mut self, _elapsed_s: f64) -> Result<()> {
        self.check()
    }

    fn give_back(&self, owner: usize, buffer: Box<dyn Payload>) {
        if let Some(slot) = self.shared.state.borrow_mut().returned.get_mut(owner) {
            slot.push(buffer);
        }
    }

    fn take_back(&self) -> Vec<Box<dyn Payload>> {
        std::mem::take(&mut self.shared.state.borrow_mut().returned[self.pid])
    }
}

impl CoroutineTransport<'_, '_> {
    /// The root's side of a native broadcast in the superstep of `parity`: its data for the
    /// nodes to copy, and the loads of the broadcast's supersteps (this one and, two-phase,
    /// the next, whose tally was emptied when the previous superstep closed).
    fn publish(&self, parity: usize, source: &[u8], loads: &[Vec<super::Load>]) {
        let mut state = self.shared.state.borrow_mut();
        let published = &mut state.broadcast[parity];
        published.clear();
        published.extend_from_slice(source);
        for (step, loads) in loads.iter().enumerate().take(2) {
            self.shared.clock.deposit_loads(parity ^ (step & 1), loads);
        }
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

/// Runs `program` on every node of `machine` as coroutines, in virtual time.
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
    // A thread of its own: the nodes' nested scopes need a stack that grows with p.
    let stack = 8 * 1024 * 1024 + machine.p() * ENGINE_STACK_PER_NODE;
    std::thread::scope(|scope| {
        let engine = std::thread::Builder::new()
            .name("hbsp-sim".into())
            .stack_size(stack)
            .spawn_scoped(scope, || run_here(options, machine, program))
            .map_err(|err| {
                HbspError::InvalidBackend(format!("sim could not start its thread: {err}"))
            })?;
        engine.join().unwrap_or_else(|panic| {
            Err(HbspError::InvalidBackend(format!(
                "the sim engine panicked: {}",
                panic_message(panic.as_ref())
            )))
        })
    })
}

fn run_here<T, E, F>(options: &SimOptions, machine: &Machine, program: &F) -> Result<RunOutput<T>>
where
    F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E>,
    E: std::fmt::Display,
{
    let p = machine.p();
    let shared = Shared {
        machine,
        facts: MachineFacts::new(machine),
        clock: VirtualClock::new(machine, options)?,
        skip_compute: options.skip_compute,
        state: RefCell::new(State::new(p)),
    };
    let trace = !options.no_trace;
    let stacks = StackPool::new(p, NODE_STACK_BYTES).map_err(|err| stack_error(p, &err))?;
    let mut nodes: Vec<Node<'_, '_, T>> = Vec::with_capacity(p);
    for pid in 0..p {
        let shared = &shared;
        nodes.push(ScopedCoroutine::with_stack(
            stacks.stack(pid),
            move |yielder: &Yielder<(), ()>, ()| {
                let transport = CoroutineTransport {
                    pid,
                    shared,
                    yielder,
                    superstep: 0,
                    work: SuperstepWork::start(shared.clock.work_charge()),
                };
                let ctx = Ctx::new(pid, machine, &shared.facts, Box::new(transport), trace);
                run_program(ctx, program)
            },
        ));
    }
    nodes.reverse();
    let outcomes = within_scopes(nodes, Vec::new(), schedule);
    let cause = shared.state.borrow_mut().cause.take();
    super::node::output(
        machine,
        cause,
        outcomes,
        0.0,
        Some(&shared.clock),
        shared.skip_compute,
    )
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

/// Resumes every unfinished node in pid order, round after round (one superstep each), until
/// all have returned; their outcomes by pid.
fn schedule<T>(mut nodes: Vec<NodeRef<'_, '_, T>>) -> Vec<Outcome<T>> {
    let mut outcomes: Vec<Outcome<T>> = (0..nodes.len()).map(|_| None).collect();
    let mut running: Vec<usize> = (0..nodes.len()).collect();
    while !running.is_empty() {
        running.retain(|&pid| match nodes[pid].resume(()) {
            CoroutineResult::Yield(()) => true,
            CoroutineResult::Return(outcome) => {
                outcomes[pid] = outcome;
                false
            }
        });
    }
    outcomes
}
