//! The threads backend: one OS thread per node, real time.
//!
//! Messages travel through one mailbox per destination, double-buffered by superstep parity:
//! senders fill the mailboxes of superstep `s` before the barrier that ends `s`, each receiver
//! empties its own right after it, and nobody touches the same parity again before the next
//! barrier, which the receiver must reach first.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::barrier::{Arrival, Barrier};
use super::{Call, Outbox, ThreadsOptions, Transport};
use crate::RunOutput;
use crate::ctx::Ctx;
use crate::error::{HbspError, Result};
use crate::message::Envelope;
use crate::platform::Machine;
use crate::trace::{NodeTrace, Trace};

struct Shared<'m> {
    machine: &'m Machine,
    barrier: Barrier,
    /// `mail[parity][destination]`.
    mail: [Vec<Mutex<Vec<Envelope>>>; 2],
    /// `calls[parity][pid]`: a node's last call other than a plain sync, for error messages.
    calls: [Vec<Mutex<Option<Call>>>; 2],
    /// `C_max / C_j` per node under speed emulation, else 1.
    stretch: Vec<f64>,
    start: Instant,
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<'m> Shared<'m> {
    fn new(machine: &'m Machine, options: &ThreadsOptions) -> Self {
        let p = machine.p();
        let slots = |_| (0..p).map(|_| Mutex::new(Vec::new())).collect();
        let calls = |_| (0..p).map(|_| Mutex::new(None)).collect();
        let fastest = machine
            .nodes()
            .iter()
            .map(|n| n.marked_speed)
            .fold(0.0, f64::max);
        let stretch = machine
            .nodes()
            .iter()
            .map(|n| {
                if options.emulate_speeds {
                    fastest / n.marked_speed
                } else {
                    1.0
                }
            })
            .collect();
        Self {
            machine,
            barrier: Barrier::new(p, crate::presets::cores()),
            mail: [0, 1].map(slots),
            calls: [0, 1].map(calls),
            stretch,
            start: Instant::now(),
        }
    }

    fn mismatch(&self, parity: usize, superstep: u64) -> HbspError {
        let mut groups: Vec<(Call, Vec<usize>)> = Vec::new();
        for (pid, slot) in self.calls[parity].iter().enumerate() {
            let call = relock(slot).clone().unwrap_or(Call::Sync);
            match groups.iter_mut().find(|(c, _)| *c == call) {
                Some((_, pids)) => pids.push(pid),
                None => groups.push((call, vec![pid])),
            }
        }
        let detail: Vec<String> = groups
            .iter()
            .map(|(call, pids)| match pids.as_slice() {
                [pid] => format!("node {pid} ({}) {call}", self.machine.nodes()[*pid].name),
                _ => format!("nodes {pids:?} {call}"),
            })
            .collect();
        HbspError::Mismatch {
            superstep,
            detail: detail.join("; "),
        }
    }
}

struct ThreadTransport<'s, 'm> {
    pid: usize,
    shared: &'s Shared<'m>,
    superstep: u64,
    published: [bool; 2],
}

impl ThreadTransport<'_, '_> {
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
        self.shared.start.elapsed().as_secs_f64()
    }

    fn exchange(&mut self, outbox: &mut Outbox, call: &Call) -> Result<Vec<Envelope>> {
        let shared = self.shared;
        let parity = (self.superstep & 1) as usize;
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
        if shared.barrier.wait(call.signature())? == Arrival::Disagreed {
            return Err(shared
                .barrier
                .poison(shared.mismatch(parity, self.superstep)));
        }
        let mut delivered = std::mem::take(&mut *relock(&shared.mail[parity][self.pid]));
        // Senders deposit whole batches in arrival order; a stable sort by source gives
        // (source pid, send order).
        delivered.sort_by_key(|e| e.source);
        self.superstep += 1;
        Ok(delivered)
    }

    fn fail(&self, cause: HbspError) -> HbspError {
        self.shared.barrier.poison(cause)
    }

    fn check(&self) -> Result<()> {
        self.shared.barrier.check()
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

/// Runs `program` on one thread per node of `machine`.
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
    let shared = Shared::new(machine, options);
    let outcomes: Vec<Option<(T, NodeTrace)>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(machine.p());
        for pid in 0..machine.p() {
            let shared = &shared;
            let spawned = std::thread::Builder::new()
                .name(format!("hbsp-node-{pid}"))
                .spawn_scoped(scope, move || run_node(pid, shared, options, program));
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
    let elapsed_s = shared.start.elapsed().as_secs_f64();
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
    })
}

fn run_node<T, E, F>(
    pid: usize,
    shared: &Shared<'_>,
    options: &ThreadsOptions,
    program: &F,
) -> Option<(T, NodeTrace)>
where
    F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E>,
    E: std::fmt::Display,
{
    let transport = ThreadTransport {
        pid,
        shared,
        superstep: 0,
        published: [false; 2],
    };
    let mut ctx = Ctx::new(pid, shared.machine, Box::new(transport), options.trace);
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
