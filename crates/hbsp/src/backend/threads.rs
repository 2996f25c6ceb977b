//! The node runtime of the `threads` and `sim` backends: one OS thread per node, with a wall
//! clock (`threads`) or the virtual clock of [`super::sim`].
//!
//! Messages travel through one mailbox per destination, double-buffered by superstep parity:
//! senders fill the mailboxes of superstep `s` before the barrier that ends `s`, each receiver
//! empties its own right after it, and nobody touches the same parity again before the next
//! barrier, which the receiver must reach first.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::barrier::{Arrival, Barrier};
use super::sim::{SimOptions, VirtualClock, WorkCharge};
use super::{Call, Outbox, ThreadsOptions, Transport};
use crate::RunOutput;
use crate::ctx::Ctx;
use crate::error::{HbspError, Result};
use crate::message::{Envelope, Payload};
use crate::platform::Machine;
use crate::trace::{NodeTrace, Trace};

struct Shared<'m> {
    machine: &'m Machine,
    barrier: Barrier,
    /// `mail[parity][destination]`.
    mail: [Vec<Mutex<Vec<Envelope>>>; 2],
    /// `calls[parity][pid]`: a node's last call other than a plain sync, for error messages.
    calls: [Vec<Mutex<Option<Call>>>; 2],
    /// `returned[pid]`: recycled vectors on their way back to node `pid`, which sent them.
    returned: Vec<Returned>,
    /// `C_max / C_j` per node under speed emulation, else 1.
    stretch: Vec<f64>,
    start: Instant,
    /// Present on the sim backend: time is charged, not measured.
    clock: Option<VirtualClock>,
    skip_compute: bool,
}

/// Vectors recycled by receivers, waiting for the node that sent them.
#[derive(Default)]
struct Returned {
    /// Set after every deposit, so the owner's sends skip the lock when nothing came back.
    any: AtomicBool,
    buffers: Mutex<Vec<Box<dyn Payload>>>,
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<'m> Shared<'m> {
    fn wall(machine: &'m Machine, options: &ThreadsOptions) -> Self {
        let stretch = (0..machine.p())
            .map(|pid| {
                if options.emulate_speeds {
                    super::emulation_stretch(machine, pid)
                } else {
                    1.0
                }
            })
            .collect();
        Self::new(machine, stretch, None, false)
    }

    fn virtual_time(machine: &'m Machine, options: &SimOptions) -> Result<Self> {
        let clock = VirtualClock::new(machine, options)?;
        Ok(Self::new(
            machine,
            vec![1.0; machine.p()],
            Some(clock),
            options.skip_compute,
        ))
    }

    fn new(
        machine: &'m Machine,
        stretch: Vec<f64>,
        clock: Option<VirtualClock>,
        skip_compute: bool,
    ) -> Self {
        let p = machine.p();
        let slots = |_| (0..p).map(|_| Mutex::new(Vec::new())).collect();
        let calls = |_| (0..p).map(|_| Mutex::new(None)).collect();
        Self {
            machine,
            barrier: Barrier::new(p, crate::presets::cores()),
            mail: [0, 1].map(slots),
            calls: [0, 1].map(calls),
            returned: (0..p).map(|_| Returned::default()).collect(),
            stretch,
            start: Instant::now(),
            clock,
            skip_compute,
        }
    }

    fn mismatch(&self, parity: usize, superstep: u64) -> HbspError {
        let calls = self.calls[parity]
            .iter()
            .map(|slot| relock(slot).clone().unwrap_or(Call::Sync).to_string());
        super::mismatch(self.machine, superstep, calls)
    }
}

struct ThreadTransport<'s, 'm> {
    pid: usize,
    shared: &'s Shared<'m>,
    superstep: u64,
    published: [bool; 2],
    /// Sim: seconds of declared work in this superstep, and whether any was declared.
    declared_s: f64,
    declared_any: bool,
    /// Sim: this thread's CPU time when the superstep began.
    cpu_mark: Duration,
}

impl<'s, 'm> ThreadTransport<'s, 'm> {
    fn new(pid: usize, shared: &'s Shared<'m>) -> Self {
        Self {
            pid,
            shared,
            superstep: 0,
            published: [false; 2],
            declared_s: 0.0,
            declared_any: false,
            cpu_mark: thread_cpu_time(),
        }
    }

    /// Sim: this node's compute time so far in the superstep, as [`WorkCharge`] says.
    fn local_work(&self, clock: &VirtualClock) -> f64 {
        let cpu = || {
            clock.cpu_time(
                self.pid,
                thread_cpu_time()
                    .saturating_sub(self.cpu_mark)
                    .as_secs_f64(),
            )
        };
        match clock.work_charge() {
            WorkCharge::Declared => self.declared_s,
            WorkCharge::CpuTime => cpu(),
            WorkCharge::Auto if self.declared_any => self.declared_s,
            WorkCharge::Auto => cpu(),
        }
    }

    fn deposit_tally(&self, parity: usize, outbox: &Outbox) {
        let Some(clock) = &self.shared.clock else {
            return;
        };
        let pid = self.pid;
        let sent = outbox
            .destinations
            .iter()
            .filter(|&&to| to != pid)
            .flat_map(|&to| {
                outbox.by_destination[to]
                    .iter()
                    .map(move |e| (to, e.payload.bytes().len() as u64))
            });
        clock.deposit(parity, pid, self.local_work(clock), sent);
    }

    fn publish(&mut self, parity: usize, call: &Call) {
        let is_sync = *call == Call::Sync;
        if !is_sync || self.published[parity] {
            *relock(&self.shared.calls[parity][self.pid]) = (!is_sync).then(|| call.clone());
            self.published[parity] = !is_sync;
        }
    }

    fn wait_until(&self, deadline: Instant) -> Result<()> {
        const SLEEP_SLACK: Duration = Duration::from_micros(100);
        const SLICE: Duration = Duration::from_millis(10);
        loop {
            let now = Instant::now();
            if now >= deadline {
                return self.shared.barrier.check();
            }
            let left = deadline - now;
            if left > 2 * SLEEP_SLACK {
                self.shared.barrier.sleep((left - SLEEP_SLACK).min(SLICE))?;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

impl Transport for ThreadTransport<'_, '_> {
    fn now(&self) -> f64 {
        match &self.shared.clock {
            Some(clock) => clock.superstep_start() + self.local_work(clock),
            None => self.shared.start.elapsed().as_secs_f64(),
        }
    }

    fn exchange(&mut self, outbox: &mut Outbox, call: &Call) -> Result<Vec<Envelope>> {
        let shared = self.shared;
        let parity = (self.superstep & 1) as usize;
        self.deposit_tally(parity, outbox);
        for &to in &outbox.destinations {
            let batch = std::mem::take(&mut outbox.by_destination[to]);
            let mut slot = relock(&shared.mail[parity][to]);
            if slot.is_empty() {
                *slot = batch;
            } else {
                slot.extend(batch);
            }
        }
        outbox.destinations.clear();
        self.publish(parity, call);
        let superstep = self.superstep;
        let close = || {
            if let Some(clock) = &shared.clock {
                clock.close_superstep(parity, superstep, call);
            }
        };
        if shared.barrier.wait_then(call.signature(), close)? == Arrival::Disagreed {
            return Err(shared
                .barrier
                .poison(shared.mismatch(parity, self.superstep)));
        }
        let mut delivered = std::mem::take(&mut *relock(&shared.mail[parity][self.pid]));
        // Senders deposit whole batches in arrival order; a stable sort by source gives
        // (source pid, send order).
        delivered.sort_by_key(|e| e.source);
        self.superstep += 1;
        self.declared_s = 0.0;
        self.declared_any = false;
        if shared.clock.is_some() {
            self.cpu_mark = thread_cpu_time();
        }
        Ok(delivered)
    }

    fn fail(&self, cause: HbspError) -> HbspError {
        self.shared.barrier.poison(cause)
    }

    fn check(&self) -> Result<()> {
        self.shared.barrier.check()
    }

    fn charge(&mut self, ops: f64) -> Result<()> {
        if let Some(clock) = &self.shared.clock {
            match clock.work_time(self.pid, ops) {
                Ok(s) => {
                    self.declared_s += s;
                    self.declared_any = true;
                }
                Err(err) => return Err(self.fail(err)),
            }
        }
        Ok(())
    }

    fn skips_compute(&self) -> bool {
        self.shared.skip_compute
    }

    fn give_back(&self, owner: usize, buffer: Box<dyn Payload>) {
        if let Some(slot) = self.shared.returned.get(owner) {
            relock(&slot.buffers).push(buffer);
            slot.any.store(true, Ordering::Release);
        }
    }

    fn take_back(&self) -> Vec<Box<dyn Payload>> {
        let slot = &self.shared.returned[self.pid];
        // A plain load first: every sync comes here, and a read leaves the cache line shared
        // with the neighbouring nodes' flags instead of taking it from them.
        if !slot.any.load(Ordering::Relaxed) || !slot.any.swap(false, Ordering::Acquire) {
            return Vec::new();
        }
        std::mem::take(&mut *relock(&slot.buffers))
    }

    fn after_compute(&mut self, elapsed_s: f64) -> Result<()> {
        let factor = self.shared.stretch[self.pid];
        if factor > 1.0 {
            let extra = Duration::from_secs_f64(elapsed_s * (factor - 1.0));
            self.wait_until(Instant::now() + extra)?;
        }
        self.shared.barrier.check()
    }
}

/// Runs `program` on one thread per node of `machine`, in real time.
pub(crate) fn run<T, E, F>(
    options: &ThreadsOptions,
    machine: &Machine,
    program: &F,
) -> Result<RunOutput<T>>
where
    F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E> + Sync,
    T: Send,
    E: std::fmt::Display,
{
    run_nodes(Shared::wall(machine, options), options.trace, program)
}

/// Runs `program` on one thread per node of `machine`, in virtual time.
pub(crate) fn run_sim<T, E, F>(
    options: &SimOptions,
    machine: &Machine,
    program: &F,
) -> Result<RunOutput<T>>
where
    F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E> + Sync,
    T: Send,
    E: std::fmt::Display,
{
    run_nodes(
        Shared::virtual_time(machine, options)?,
        !options.no_trace,
        program,
    )
}

fn run_nodes<T, E, F>(shared: Shared<'_>, trace: bool, program: &F) -> Result<RunOutput<T>>
where
    F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E> + Sync,
    T: Send,
    E: std::fmt::Display,
{
    let machine = shared.machine;
    let outcomes: Vec<Option<(T, NodeTrace)>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(machine.p());
        for pid in 0..machine.p() {
            let shared = &shared;
            let spawned = std::thread::Builder::new()
                .name(format!("hbsp-node-{pid}"))
                .spawn_scoped(scope, move || run_node(pid, shared, trace, program));
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(err) => {
                    let name = machine.nodes()[pid].name.clone();
                    let reason = format!("could not start its thread: {err}");
                    shared
                        .barrier
                        .poison(HbspError::NodeFailed { pid, name, reason });
                    break;
                }
            }
        }
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    });
    if let Some(cause) = shared.barrier.cause() {
        return Err(cause);
    }
    let (elapsed_s, costs) = match &shared.clock {
        Some(clock) => (clock.superstep_start(), clock.costs()),
        None => (shared.start.elapsed().as_secs_f64(), Vec::new()),
    };
    let (results, nodes): (Vec<T>, Vec<NodeTrace>) = outcomes.into_iter().flatten().unzip();
    let trace = Trace {
        platform: machine.platform().to_owned(),
        p: machine.p(),
        nodes,
    };
    Ok(RunOutput {
        results,
        trace,
        elapsed_s,
        virtual_time: shared.clock.is_some(),
        compute_skipped: shared.skip_compute,
        costs,
    })
}

/// CPU time consumed by the calling thread.
fn thread_cpu_time() -> Duration {
    cpu_time::ThreadTime::try_now()
        .map(|t| t.as_duration())
        .unwrap_or_default()
}

fn run_node<T, E, F>(
    pid: usize,
    shared: &Shared<'_>,
    trace: bool,
    program: &F,
) -> Option<(T, NodeTrace)>
where
    F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E>,
    E: std::fmt::Display,
{
    let transport = ThreadTransport::new(pid, shared);
    let mut ctx = Ctx::new(pid, shared.machine, Box::new(transport), trace);
    let name = shared.machine.nodes()[pid].name.clone();
    match catch_unwind(AssertUnwindSafe(|| program(&mut ctx))) {
        Ok(Ok(value)) => ctx.finish().ok().map(|trace| (value, trace)),
        Ok(Err(err)) => {
            shared.barrier.poison(HbspError::NodeFailed {
                pid,
                name,
                reason: err.to_string(),
            });
            None
        }
        Err(panic) => {
            shared.barrier.poison(HbspError::Panicked {
                pid,
                name,
                message: panic_message(panic.as_ref()),
            });
            None
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".to_owned())
}
