//! A poisonable barrier that spins briefly and then parks.
//!
//! Spinning keeps an empty superstep well under a microsecond when every node has a core;
//! parking on a condition variable keeps oversubscribed runs (more nodes than cores) from
//! burning the time slices the late nodes need to arrive. Poisoning wakes every waiter with
//! the error that ended the run.
//!
//! Each arrival also contributes a signature of the call it made (plain sync, end of program,
//! which collective); the barrier reports whether all signatures agreed, so mismatched calls
//! are found at the boundary where they meet instead of hanging later.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::HbspError;

/// Result of a completed barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// Every node made the same call.
    Agreed,
    /// Some nodes made different calls.
    Disagreed,
}

/// Keeps a hot atomic on its own cache line, so waiters polling one do not slow arrivals
/// updating another.
#[repr(align(64))]
struct Padded<T>(T);

/// Arrivals are counted in the low half of `arrived`; arrivals with a non-zero signature
/// (anything but a plain sync) also in the high half, so a plain sync costs one atomic add.
const SPECIAL: u64 = 1 << 32;
const COUNT_MASK: u64 = SPECIAL - 1;

pub(crate) struct Barrier {
    p: u64,
    spin_for: Duration,
    yield_limit: u32,
    arrived: Padded<AtomicU64>,
    epoch: Padded<AtomicU64>,
    /// Min and max of the non-zero signatures and whether all arrivals agreed, double-buffered
    /// by epoch parity: a slot is reset by the barrier after the one that reads it.
    sig_min: [AtomicU64; 2],
    sig_max: [AtomicU64; 2],
    agreed: [AtomicBool; 2],
    sleepers: AtomicUsize,
    poisoned: AtomicBool,
    lock: Mutex<()>,
    wakeup: Condvar,
    cause: Mutex<Option<HbspError>>,
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Barrier {
    /// A barrier for `p` nodes on a host with `cores` cores.
    pub fn new(p: usize, cores: usize) -> Self {
        let oversubscribed = p > cores;
        Self {
            p: p as u64,
            // Spinning is bounded by time, not iterations: a PAUSE instruction takes from 10
            // to 150 cycles depending on the CPU. 20 us covers a balanced superstep's skew when
            // each node has a core; when oversubscribed the late node needs this core to
            // arrive at all, so spin almost not at all.
            spin_for: if oversubscribed {
                Duration::from_micros(1)
            } else {
                Duration::from_micros(20)
            },
            yield_limit: if oversubscribed { 4 } else { 16 },
            arrived: Padded(AtomicU64::new(0)),
            epoch: Padded(AtomicU64::new(0)),
            sig_min: [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)],
            sig_max: [AtomicU64::new(0), AtomicU64::new(0)],
            agreed: [AtomicBool::new(true), AtomicBool::new(true)],
            sleepers: AtomicUsize::new(0),
            poisoned: AtomicBool::new(false),
            lock: Mutex::new(()),
            wakeup: Condvar::new(),
            cause: Mutex::new(None),
        }
    }

    /// Waits until all `p` nodes have arrived, or the barrier is poisoned. The last node to
    /// arrive runs `on_last` before anyone is released: a place to combine what every node
    /// deposited for this superstep.
    pub fn wait_then(&self, signature: u64, on_last: impl FnOnce()) -> Result<Arrival, HbspError> {
        self.check()?;
        let epoch = self.epoch.0.load(Ordering::Acquire);
        let slot = (epoch & 1) as usize;
        let mut step = 1;
        if signature != 0 {
            self.sig_min[slot].fetch_min(signature, Ordering::AcqRel);
            self.sig_max[slot].fetch_max(signature, Ordering::AcqRel);
            step += SPECIAL;
        }
        let arrived = self.arrived.0.fetch_add(step, Ordering::AcqRel) + step;
        if arrived & COUNT_MASK == self.p {
            on_last();
            self.release(epoch, arrived / SPECIAL);
        } else {
            self.await_release(epoch)?;
        }
        self.check()?;
        Ok(if self.agreed[slot].load(Ordering::Acquire) {
            Arrival::Agreed
        } else {
            Arrival::Disagreed
        })
    }

    /// Called by the last arrival; `special` arrivals made a call other than a plain sync.
    fn release(&self, epoch: u64, special: u64) {
        let (slot, next) = ((epoch & 1) as usize, 1 - (epoch & 1) as usize);
        let same = self.sig_min[slot].load(Ordering::Acquire)
            == self.sig_max[slot].load(Ordering::Acquire);
        self.agreed[slot].store(
            special == 0 || (special == self.p && same),
            Ordering::Relaxed,
        );
        self.arrived.0.store(0, Ordering::Relaxed);
        self.sig_min[next].store(u64::MAX, Ordering::Relaxed);
        self.sig_max[next].store(0, Ordering::Relaxed);
        // SeqCst pairs with the waiter's sleepers increment: one of the two sees the other.
        self.epoch.0.store(epoch + 1, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = relock(&self.lock);
            self.wakeup.notify_all();
        }
    }

    fn await_release(&self, epoch: u64) -> Result<(), HbspError> {
        let released = || {
            self.epoch.0.load(Ordering::Acquire) != epoch || self.poisoned.load(Ordering::Acquire)
        };
        let start = Instant::now();
        'spin: loop {
            for _ in 0..64 {
                if released() {
                    return Ok(());
                }
                std::hint::spin_loop();
            }
            if start.elapsed() > self.spin_for {
                break 'spin;
            }
        }
        for _ in 0..self.yield_limit {
            if released() {
                return Ok(());
            }
            std::thread::yield_now();
        }
        let mut guard = relock(&self.lock);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while self.epoch.0.load(Ordering::SeqCst) == epoch && !self.poisoned.load(Ordering::SeqCst)
        {
            guard = self
                .wakeup
                .wait(guard)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        Ok(())
    }

    /// Ends the run: records `cause` unless an earlier cause is recorded, wakes every waiter,
    /// and returns the cause in force.
    pub fn poison(&self, cause: HbspError) -> HbspError {
        let in_force = relock(&self.cause).get_or_insert(cause).clone();
        self.poisoned.store(true, Ordering::SeqCst);
        let _guard = relock(&self.lock);
        self.wakeup.notify_all();
        in_force
    }

    /// The error that ended the run, if one did.
    pub fn cause(&self) -> Option<HbspError> {
        if self.poisoned.load(Ordering::Acquire) {
            relock(&self.cause).clone()
        } else {
            None
        }
    }

    /// `Err` with the cause once the run has ended.
    pub fn check(&self) -> Result<(), HbspError> {
        self.cause().map_or(Ok(()), Err)
    }

    /// Sleeps up to `duration`, waking early if the barrier is poisoned.
    pub fn sleep(&self, duration: Duration) -> Result<(), HbspError> {
        let guard = relock(&self.lock);
        if !self.poisoned.load(Ordering::SeqCst) {
            let _ = self.wakeup.wait_timeout(guard, duration);
        }
        self.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn many_rounds_agree_and_disagree() {
        for (p, cores) in [(1, 1), (3, 8), (6, 2)] {
            let barrier = Arc::new(Barrier::new(p, cores));
            let results: Vec<Vec<Arrival>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..p)
                    .map(|pid| {
                        let b = Arc::clone(&barrier);
                        s.spawn(move || {
                            (0..200u64)
                                .map(|round| {
                                    let sig = if round % 50 == 7 && pid == 0 {
                                        9
                                    } else {
                                        round % 3
                                    };
                                    b.wait_then(sig, || {}).unwrap()
                                })
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for per_node in results {
                for (round, arrival) in per_node.iter().enumerate() {
                    let expect = if round % 50 == 7 && p > 1 {
                        Arrival::Disagreed
                    } else {
                        Arrival::Agreed
                    };
                    assert_eq!(*arrival, expect, "p = {p}, round {round}");
                }
            }
        }
    }

    #[test]
    fn poison_wakes_waiters_with_first_cause() {
        let barrier = Barrier::new(3, 1);
        let first = HbspError::Model("first".into());
        std::thread::scope(|s| {
            let waiter = s.spawn(|| barrier.wait_then(0, || {}));
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(barrier.poison(first.clone()), first);
            assert_eq!(barrier.poison(HbspError::Model("second".into())), first);
            assert_eq!(waiter.join().unwrap(), Err(first.clone()));
        });
        assert_eq!(barrier.wait_then(0, || {}), Err(first));
    }
}
