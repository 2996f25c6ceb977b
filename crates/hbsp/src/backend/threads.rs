//! The node runtime of the `threads` and `sim` backends: one OS thread per node, with a wall
//! clock (`threads`) or the virtual clock of [`super::sim`].
//!
//! Messages travel through one mailbox per destination, double-buffered by superstep parity:
//! senders fill the mailboxes of superstep `s` before the barrier that ends `s`, each receiver
//! empties its own right after it, and nobody touches the same parity again before the next
//! barrier, which the receiver must reach first.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::barrier::{Arrival, Barrier};
use super::node::{SuperstepWork, run_program};
use super::sim::{SimOptions, VirtualClock, WorkCharge};
use super::{Call, ComputeTime, Outbox, ThreadsOptions, Transport, emulation_pause};
use crate::RunOutput;
use crate::ctx::{Ctx, MachineFacts};
use crate::error::{HbspError, Result};
use crate::message::{Envelope, ReturnDesk};
use crate::trace::NodeTrace;
use hetscale_machine::platform::Machine;

struct Shared<'m> {
    machine: &'m Machine,
    facts: MachineFacts,
    barrier: Barrier,
    /// `mail[parity][destination]`.
    mail: [Vec<Mutex<Vec<Envelope>>>; 2],
    /// `calls[parity][pid]`: a node's last call other than a plain sync, for error messages.
    calls: [Vec<Mutex<Option<Call>>>; 2],
    /// Recycled and dropped messages' vectors on their way back to their senders.
    returned: Arc<ReturnDesk>,
    /// `C_max / C_j` per node under speed emulation, else 1.
    stretch: Vec<f64>,
    start: Instant,
    /// Present on the sim backend: time is charged, not measured.
    clock: Option<VirtualClock>,
    skip_compute: bool,
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Messages outliving the run free their vectors instead of leaving them in the desk.
impl Drop for Shared<'_> {
    fn drop(&mut self) {
        self.returned.close();
    }
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
            facts: MachineFacts::new(machine),
            barrier: Barrier::new(p, hetscale_machine::presets::cores()),
            mail: [0, 1].map(slots),
            calls: [0, 1].map(calls),
            returned: ReturnDesk::new(p),
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

/// How sim charges compute (wall-clock runs charge none).
fn work_charge(shared: &Shared<'_>) -> WorkCharge {
    shared
        .clock
        .as_ref()
        .map_or(WorkCharge::Declared, VirtualClock::work_charge)
}

struct ThreadTransport<'s, 'm> {
    pid: usize,
    shared: &'s Shared<'m>,
    superstep: u64,
    published: [bool; 2],
    /// Sim: this node's compute in the superstep.
    work: SuperstepWork,
}

impl<'s, 'm> ThreadTransport<'s, 'm> {
    fn new(pid: usize, shared: &'s Shared<'m>) -> Self {
        Self {
            pid,
            shared,
            superstep: 0,
            published: [false; 2],
            work: SuperstepWork::start(work_charge(shared)),
        }
    }

    fn deposit_tally(&self, parity: usize, outbox: &Outbox) {
        if let Some(clock) = &self.shared.clock {
            let work_s = self.work.seconds(clock, self.pid);
            clock.deposit(parity, self.pid, work_s, outbox.sent_by(self.pid));
        }
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
            Some(clock) => clock.superstep_start() + self.work.seconds(clock, self.pid),
            None => self.shared.start.elapsed().as_secs_f64(),
        }
    }

    fn exchange(&mut self, outbox: &mut Outbox, call: &Call) -> Result<Vec<Envelope>> {
        let shared = self.shared;
        let parity = (self.superstep & 1) as usize;
        self.deposit_tally(parity, outbox);
        for (to, batch) in outbox.drain() {
            let mut slot = relock(&shared.mail[parity][to]);
            if slot.is_empty() {
                *slot = batch;
            } else {
                slot.extend(batch);
            }
        }
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
        if shared.clock.is_some() {
            self.work = SuperstepWork::start(work_charge(shared));
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
            let declared = self.work.declare(clock, self.pid, ops);
            declared.map_err(|err| self.fail(err))?;
        }
        Ok(())
    }

    fn skips_compute(&self) -> bool {
        self.shared.skip_compute
    }

    fn return_desk(&self) -> Option<&Arc<ReturnDesk>> {
        Some(&self.shared.returned)
    }

    fn emulation_stretch(&self) -> f64 {
        self.shared.stretch[self.pid]
    }

    fn after_compute(&mut self, block: ComputeTime) -> Result<()> {
        let pause = emulation_pause(self.shared.stretch[self.pid], block);
        if !pause.is_zero() {
            self.wait_until(Instant::now() + pause)?;
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
    super::node::output(
        machine,
        shared.barrier.cause(),
        outcomes,
        shared.start.elapsed().as_secs_f64(),
        shared.clock.as_ref(),
        shared.skip_compute,
    )
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
    let ctx = Ctx::new(
        pid,
        shared.machine,
        &shared.facts,
        Box::new(transport),
        trace,
    );
    run_program(ctx, program)
}
