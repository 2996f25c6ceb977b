//! A skeleton run on the size alone allocates nothing of the data's size: at N = 2048 (an
//! N x N matrix of f64 is 32 MiB) the bytes a kernel's skeleton run allocates at its peak,
//! inputs included, are a small fraction of one such matrix (burg: of one series of N
//! values), where a run on the data holds several.
//!
//! The peak is measured by a counting global allocator, so this file is its own test binary
//! and its tests take turns. Coroutine stacks are mapped outside the allocator and are not
//! counted; the trace is off (it grows with the supersteps, not with the data).

// A global allocator is an unsafe trait: this file's counting one forwards every call to the
// system allocator (each block with its SAFETY).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use hbsp::backend::{SimOptions, WorkCharge};
use hbsp::{Backend, Platform};
use hetscale_kernels::Kernel;
use hetscale_kernels::burg::BurgKernel;
use hetscale_kernels::conv2d::Conv2dKernel;
use hetscale_kernels::ge::{GeKernel, Pivoting};
use hetscale_kernels::mm::MmKernel;

/// The system allocator, counting the bytes allocated now and at the peak since the last
/// [`Counting::reset_peak`]. (A profiling allocator such as dhat records a backtrace per
/// allocation, far too slow for runs of thousands of supersteps.)
struct Counting {
    now: AtomicUsize,
    peak: AtomicUsize,
}

impl Counting {
    fn reset_peak(&self) -> usize {
        let now = self.now.load(Ordering::SeqCst);
        self.peak.store(now, Ordering::SeqCst);
        now
    }

    fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = self.now.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        self.peak.fetch_max(now, Ordering::SeqCst);
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let now = self.now.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        self.peak.fetch_max(now, Ordering::SeqCst);
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.now.fetch_sub(layout.size(), Ordering::SeqCst);
        // SAFETY: the caller's contract is System's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let grown = new_size - layout.size();
            let now = self.now.fetch_add(grown, Ordering::SeqCst) + grown;
            self.peak.fetch_max(now, Ordering::SeqCst);
        } else {
            self.now
                .fetch_sub(layout.size() - new_size, Ordering::SeqCst);
        }
        // SAFETY: the caller's contract is System's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATED: Counting = Counting {
    now: AtomicUsize::new(0),
    peak: AtomicUsize::new(0),
};

/// The tests of this binary take turns: the counter is the process's.
static TURN: Mutex<()> = Mutex::new(());

/// Bytes a skeleton run of `kernel` at size `n` on eight Sunwulf nodes allocates at its peak
/// beyond what was allocated before, its inputs included.
fn skeleton_peak_bytes(kernel: &dyn Kernel, n: usize) -> usize {
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let machine = Platform::load("sunwulf")
        .unwrap()
        .select(&"server:1,sunblade:4,sunfire:3".parse().unwrap())
        .unwrap();
    let backend = Backend::Sim(SimOptions {
        work: WorkCharge::Declared,
        skip_compute: true,
        no_trace: true,
        ..SimOptions::default()
    });
    let before = ALLOCATED.reset_peak();
    let inputs = kernel.skeleton_inputs(n, 1).unwrap();
    let run = kernel.run(&inputs, &backend, &machine).unwrap();
    let peak = ALLOCATED.peak() - before;
    assert!(run.time_s > 0.0 && run.verification.skipped);
    peak
}

/// Asserts that a skeleton run of `kernel` allocates at its peak less than a twentieth of
/// the `data_bytes(N)` of a run with data at N = 2048, and at most linearly more as `N` grows
/// (a per-superstep record grows with GE's steps): from N = 1024 to 4096 less than 6 times
/// as much, where the data grow 16 times.
fn assert_no_data_of_size_n2(kernel: &dyn Kernel, data_bytes: impl Fn(usize) -> usize) {
    let peak = skeleton_peak_bytes(kernel, 2048);
    assert!(
        peak * 20 < data_bytes(2048),
        "{} at N = 2048: the skeleton allocated {peak} bytes at its peak, the data take {}",
        kernel.name(),
        data_bytes(2048)
    );
    let (small, large) = (
        skeleton_peak_bytes(kernel, 1024),
        skeleton_peak_bytes(kernel, 4096),
    );
    assert!(
        large < 6 * small.max(1 << 16),
        "{}: {small} bytes at its peak at N = 1024, {large} at N = 4096",
        kernel.name()
    );
}

/// Bytes of `matrices` `N x N` matrices of `item_bytes` values.
fn matrices(matrices: usize, item_bytes: usize) -> impl Fn(usize) -> usize {
    move |n| matrices * n * n * item_bytes
}

#[test]
fn an_mm_skeleton_allocates_no_matrix() {
    assert_no_data_of_size_n2(&MmKernel, matrices(2, 8));
}

#[test]
fn a_ge_skeleton_allocates_no_row_of_the_matrix_with_or_without_pivoting() {
    for pivoting in [Pivoting::Partial, Pivoting::None] {
        assert_no_data_of_size_n2(
            &GeKernel {
                pivoting,
                ..GeKernel::default()
            },
            matrices(1, 8),
        );
    }
}

#[test]
fn a_blocked_ge_skeleton_allocates_no_row_of_the_matrix() {
    let kernel = GeKernel {
        pivoting: Pivoting::None,
        block: 16,
    };
    assert_no_data_of_size_n2(&kernel, matrices(1, 8));
}

#[test]
fn a_conv2d_skeleton_allocates_no_image() {
    assert_no_data_of_size_n2(&Conv2dKernel, matrices(2, 16));
}

#[test]
fn a_burg_skeleton_allocates_no_series() {
    let n = 1 << 20;
    let peak = skeleton_peak_bytes(&BurgKernel::default(), n);
    assert!(
        peak * 10 < n * 8,
        "burg at N = {n}: {peak} bytes at its peak"
    );
}
