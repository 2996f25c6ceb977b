//! The superstep agreement through shared memory, when every rank of the job is on one
//! machine.
//!
//! Each rank owns one cache line per parity in an `MPI_Win_allocate_shared` window: it writes
//! its agreement there and then the superstep's number (release), and reads every other
//! rank's line once that number shows (acquire), ORing the words as the `MPI_Sendrecv` rounds
//! do. That is one cache-line transfer per pair where `MPI_Barrier` makes OpenMPI's
//! collective layer move flags of its own (`bash crates/hbsp/benches/side_by_side.sh` times
//! hbsp's sync against `MPI_Barrier`, docs/validation.md, "The hbsp library").
//!
//! Two parities suffice: a rank writes superstep `s + 2`'s line only after everybody
//! published `s + 1`, which each did only after reading all of `s`'s lines.
//!
//! Waiting spins with a pause while the machine has a core for every rank, and yields the
//! core at every look otherwise (`mpirun --oversubscribe`), where a spinning rank would keep
//! the very rank it waits for off the core.
//!
//! A rank that dies leaves the others waiting here, as in any MPI call: `mpirun` ends the job
//! (and hbsp's panic hook calls `MPI_Abort`).

// The window is memory MPI shares between processes: reaching it needs raw pointers. Every
// access goes through `Slot`'s atomics, within the window's lifetime (`Drop` frees it last).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// One rank's agreement of one parity, alone on its cache line.
#[repr(C, align(64))]
struct Slot {
    superstep: AtomicU64,
    word: AtomicU64,
    announce: AtomicU64,
}

/// The agreement's shared lines of all ranks, both parities.
pub(super) struct SharedAgreement {
    window: ffi::MPI_Win,
    /// Rank 0's segment: `2 p` slots, parity-major.
    slots: *const Slot,
    p: usize,
    rank: usize,
    superstep: u64,
    yield_at_every_look: bool,
}

impl SharedAgreement {
    /// Looks that spin before a waiting rank starts yielding its core (a few microseconds):
    /// a rank that waits longer waits for a slower program, not for the line to arrive.
    const SPINS_BEFORE_YIELDING: u32 = 1000;

    /// The shared lines for `world`'s ranks, or `None` when they are not all on one machine
    /// (or MPI cannot share memory between them).
    pub(super) fn new(world: &SimpleCommunicator) -> Option<Self> {
        let p = world.size() as usize;
        let node = world.split_shared(world.rank());
        if node.size() as usize != p || p < 2 {
            return None;
        }
        let rank = world.rank() as usize;
        // Rank 0 allocates all lines, contiguous, with room to align them to a cache line
        // (OpenMPI's segment starts 8 bytes past one).
        let bytes = if rank == 0 {
            (2 * p + 1) * std::mem::size_of::<Slot>()
        } else {
            0
        };
        let mut base: *mut Slot = std::ptr::null_mut();
        // SAFETY: reads a constant handle rsmpi's C shim exports.
        let mut window: ffi::MPI_Win = unsafe { ffi::RSMPI_WIN_NULL };
        // SAFETY: a collective call on `node`, whose ranks all run this line; MPI writes the
        // base pointer and the window handle into the two out-parameters.
        let allocated = unsafe {
            ffi::MPI_Win_allocate_shared(
                bytes as ffi::MPI_Aint,
                1,
                ffi::RSMPI_INFO_NULL,
                node.as_raw(),
                (&mut base as *mut *mut Slot).cast(),
                &mut window,
            )
        };
        if allocated != 0 {
            return None;
        }
        let mut size: ffi::MPI_Aint = 0;
        let mut unit = 0;
        let mut segment: *mut u8 = std::ptr::null_mut();
        // SAFETY: `window` is the window just allocated; rank 0's segment is queried.
        let queried = unsafe {
            ffi::MPI_Win_shared_query(
                window,
                0,
                &mut size,
                &mut unit,
                (&mut segment as *mut *mut u8).cast(),
            )
        };
        // The segment is mapped at a page boundary in every process, so each lands on the
        // same line.
        let skip = segment.align_offset(std::mem::align_of::<Slot>());
        let usable = queried == 0
            && !segment.is_null()
            && size as usize >= skip + 2 * p * std::mem::size_of::<Slot>();
        // SAFETY: `skip` < 64 bytes, inside rank 0's segment of at least 64 (or null and 0).
        let slots = unsafe { segment.add(skip) }.cast::<Slot>();
        let agreement = Self {
            window,
            slots,
            p,
            rank,
            superstep: 0,
            yield_at_every_look: p > online_cores(),
        };
        if rank == 0 && usable {
            for i in 0..2 * p {
                let slot = agreement.slot(i);
                slot.superstep.store(0, Ordering::Relaxed);
                slot.word.store(0, Ordering::Relaxed);
                slot.announce.store(0, Ordering::Relaxed);
            }
        }
        // Nobody reads a line before rank 0 has cleared it.
        world.barrier();
        // Every rank sees the same segment, so all agree on whether it is usable.
        usable.then_some(agreement)
    }

    fn slot(&self, i: usize) -> &Slot {
        debug_assert!(i < 2 * self.p);
        // SAFETY: `slots` points at `2 p` initialised-by-MPI, suitably aligned `Slot`s
        // (checked in `new`) that live until `Drop` frees the window, and `Slot` is only
        // accessed through atomics, so shared references across processes are sound.
        unsafe { &*self.slots.add(i) }
    }

    /// Publishes `(word, announce)` and returns the OR of every rank's.
    pub(super) fn combine(&mut self, word: u64, announce: u64) -> (u64, u64) {
        self.superstep += 1;
        let base = (self.superstep % 2) as usize * self.p;
        let mine = self.slot(base + self.rank);
        mine.word.store(word, Ordering::Relaxed);
        mine.announce.store(announce, Ordering::Relaxed);
        mine.superstep.store(self.superstep, Ordering::Release);
        let (mut words, mut announced) = (0, 0);
        for j in 0..self.p {
            let theirs = self.slot(base + j);
            self.wait_for(theirs);
            words |= theirs.word.load(Ordering::Relaxed);
            announced |= theirs.announce.load(Ordering::Relaxed);
        }
        (words, announced)
    }

    fn wait_for(&self, slot: &Slot) {
        let mut looks = 0u32;
        while slot.superstep.load(Ordering::Acquire) != self.superstep {
            looks = looks.saturating_add(1);
            if self.yield_at_every_look || looks > Self::SPINS_BEFORE_YIELDING {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// The machine's cores, not this process's share: `mpirun` binds each rank to one core when
/// there are enough, and then every rank still has a core of its own to spin on.
fn online_cores() -> usize {
    // SAFETY: `sysconf` only reads a system setting.
    let cores = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(cores).unwrap_or(1).max(1)
}

impl Drop for SharedAgreement {
    fn drop(&mut self) {
        // SAFETY: collective over the ranks, which all drop their transport at the same
        // point of `run`; no slot reference outlives `self`.
        unsafe {
            ffi::MPI_Win_free(&mut self.window);
        }
    }
}
