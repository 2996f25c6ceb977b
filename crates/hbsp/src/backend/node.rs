//! What the in-process engines (threads, and both engines of sim) share about running a
//! node: its program's outcome, the compute time it is charged on sim, and the run's output.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use super::sim::{VirtualClock, WorkCharge};
use super::transport::thread_cpu_time;
use crate::RunOutput;
use crate::ctx::Ctx;
use crate::error::{HbspError, Result};
use crate::trace::{NodeTrace, Trace};
use hetscale_machine::platform::Machine;

/// Runs node `ctx`'s program and its final barrier. A failure (an `Err`, a panic) ends the
/// run with an error naming the node; `None` then, or when another node ended the run.
pub(crate) fn run_program<T, E, F>(mut ctx: Ctx<'_>, program: &F) -> Option<(T, NodeTrace)>
where
    F: Fn(&mut Ctx<'_>) -> std::result::Result<T, E>,
    E: std::fmt::Display,
{
    let pid = ctx.pid();
    let name = ctx.machine().nodes()[pid].name.clone();
    match catch_unwind(AssertUnwindSafe(|| program(&mut ctx))) {
        Ok(Ok(value)) => ctx.finish().ok().map(|trace| (value, trace)),
        Ok(Err(err)) => {
            ctx.fail(HbspError::NodeFailed {
                pid,
                name,
                reason: err.to_string(),
            });
            None
        }
        Err(panic) => {
            ctx.fail(HbspError::Panicked {
                pid,
                name,
                message: panic_message(panic.as_ref()),
            });
            None
        }
    }
}

pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".to_owned())
}

/// A sim node's compute in the current superstep: what it declared, and the thread CPU time
/// at which the superstep began for it.
pub(crate) struct SuperstepWork {
    declared_s: f64,
    declared_any: bool,
    cpu_mark: Duration,
}

impl SuperstepWork {
    /// A superstep's start; CPU time is read only where `charge` may use it (the read is a
    /// system call, as long as a whole superstep of a small node).
    pub fn start(charge: WorkCharge) -> Self {
        Self {
            declared_s: 0.0,
            declared_any: false,
            cpu_mark: if charge == WorkCharge::Declared {
                Duration::ZERO
            } else {
                thread_cpu_time()
            },
        }
    }

    /// Node `pid`'s compute time so far in the superstep, as [`WorkCharge`] says.
    pub fn seconds(&self, clock: &VirtualClock, pid: usize) -> f64 {
        let cpu = || {
            let used = thread_cpu_time().saturating_sub(self.cpu_mark);
            clock.cpu_time(pid, used.as_secs_f64())
        };
        match clock.work_charge() {
            WorkCharge::Declared => self.declared_s,
            WorkCharge::CpuTime => cpu(),
            WorkCharge::Auto if self.declared_any => self.declared_s,
            WorkCharge::Auto => cpu(),
        }
    }

    /// Declares `ops` operations of node `pid`'s work.
    pub fn declare(&mut self, clock: &VirtualClock, pid: usize, ops: f64) -> Result<()> {
        self.declared_s += clock.work_time(pid, ops)?;
        self.declared_any = true;
        Ok(())
    }
}

/// The output of a run whose nodes ended with `outcomes` (by pid), or the error that ended it.
pub(crate) fn output<T>(
    machine: &Machine,
    cause: Option<HbspError>,
    outcomes: Vec<Option<(T, NodeTrace)>>,
    elapsed_s: f64,
    clock: Option<&VirtualClock>,
    compute_skipped: bool,
) -> Result<RunOutput<T>> {
    if let Some(cause) = cause {
        return Err(cause);
    }
    let (results, nodes): (Vec<T>, Vec<NodeTrace>) = outcomes.into_iter().flatten().unzip();
    Ok(RunOutput {
        results,
        trace: Trace {
            platform: machine.platform().to_owned(),
            p: machine.p(),
            nodes,
        },
        elapsed_s: clock.map_or(elapsed_s, VirtualClock::superstep_start),
        virtual_time: clock.is_some(),
        compute_skipped,
        costs: clock.map(VirtualClock::costs).unwrap_or_default(),
    })
}
