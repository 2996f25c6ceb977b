//! Every coroutine node's stack in one memory mapping, each below a guard page.
//!
//! Why not one mapping per stack (corosensei's `DefaultStack`): a guard page made with
//! `mprotect` splits its mapping, so each node costs the process two mappings, and Linux
//! caps a process at `vm.max_map_count` (65,530 by default), about 32,000 nodes. Since
//! Linux 6.13, `madvise(MADV_GUARD_INSTALL)` makes pages fault on access without splitting
//! the mapping: the whole pool is then one mapping, whatever the node count. On older
//! kernels the pool falls back to `mprotect` guards (two mappings per node, as before).
//!
//! Either way each stack sits above a page that faults on access, which is what corosensei
//! requires of a [`Stack`] for memory safety: a node that overflows its stack ends the
//! process with a segmentation fault, never undefined behaviour.
//!
//! This is the one place hbsp uses `unsafe`: corosensei's `Stack` is an unsafe trait (the
//! implementer promises the guard page), and mapping memory is a system call.
#![allow(unsafe_code)]

use std::io::Error;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::OnceLock;

use corosensei::stack::{STACK_ALIGNMENT, Stack, StackPointer};

/// `MADV_GUARD_INSTALL` (Linux 6.13, `include/uapi/asm-generic/mman-common.h`); the `libc`
/// crate does not name it yet.
const MADV_GUARD_INSTALL: libc::c_int = 102;

/// How the guard pages of a pool are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guards {
    /// `MADV_GUARD_INSTALL`: the pool stays one mapping.
    Madvise,
    /// `mprotect(PROT_NONE)`: every guard splits the mapping (two mappings per node).
    Mprotect,
}

impl Guards {
    /// The guards this kernel supports, probed once per process on a scratch mapping.
    pub fn available() -> Guards {
        static PROBED: OnceLock<Guards> = OnceLock::new();
        *PROBED.get_or_init(|| {
            let page = page_size();
            match Mapping::new(page) {
                Ok(scratch) if scratch.guard(0, page, Guards::Madvise).is_ok() => Guards::Madvise,
                _ => Guards::Mprotect,
            }
        })
    }

    /// Memory mappings each node adds to the process.
    pub fn mappings_per_node(self) -> usize {
        match self {
            Guards::Madvise => 0,
            Guards::Mprotect => 2,
        }
    }
}

/// One anonymous, private, read-write mapping, unmapped on drop.
struct Mapping {
    start: NonNull<u8>,
    len: usize,
}

impl Mapping {
    /// Reserves `len` bytes of address space; pages take memory only once touched
    /// (`MAP_NORESERVE`: a 65,536-node pool reserves 17 GB of address space, not memory).
    fn new(len: usize) -> std::io::Result<Mapping> {
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
        let protection = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: a fresh anonymous mapping aliases nothing; the result is checked.
        let start = unsafe { libc::mmap(std::ptr::null_mut(), len, protection, flags, -1, 0) };
        if start == libc::MAP_FAILED {
            return Err(Error::last_os_error());
        }
        let start = NonNull::new(start.cast::<u8>()).ok_or_else(Error::last_os_error)?;
        Ok(Mapping { start, len })
    }

    /// Makes `len` bytes at `offset` fault on any access.
    fn guard(&self, offset: usize, len: usize, guards: Guards) -> std::io::Result<()> {
        assert!(offset + len <= self.len, "guard outside its mapping");
        // SAFETY: the range lies inside this mapping (asserted), which nothing reads yet.
        let done = unsafe {
            let at = self.start.as_ptr().add(offset).cast::<libc::c_void>();
            match guards {
                Guards::Madvise => libc::madvise(at, len, MADV_GUARD_INSTALL),
                Guards::Mprotect => libc::mprotect(at, len, libc::PROT_NONE),
            }
        };
        if done == 0 {
            Ok(())
        } else {
            Err(Error::last_os_error())
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping is ours, and every stack borrowed from it is gone (the
        // `PooledStack` lifetime).
        unsafe {
            libc::munmap(self.start.as_ptr().cast(), self.len);
        }
    }
}

/// `count` stacks of the same size in one mapping, each above its own guard page.
pub struct StackPool {
    mapping: Mapping,
    /// Bytes from one stack's guard page to the next: a guard page and the stack.
    slot: usize,
    count: usize,
    guards: Guards,
}

impl StackPool {
    /// Maps `count` stacks of at least `stack_bytes` each, with the kernel's best guards.
    pub fn new(count: usize, stack_bytes: usize) -> std::io::Result<StackPool> {
        StackPool::with_guards(count, stack_bytes, Guards::available())
    }

    fn with_guards(count: usize, stack_bytes: usize, guards: Guards) -> std::io::Result<Self> {
        let page = page_size();
        let stack = stack_bytes
            .max(corosensei::stack::MIN_STACK_SIZE)
            .next_multiple_of(page);
        let slot = page + stack;
        let len = slot.checked_mul(count.max(1)).ok_or_else(|| {
            Error::other(format!(
                "{count} stacks of {stack} bytes overflow the address space"
            ))
        })?;
        let mapping = Mapping::new(len)?;
        for node in 0..count {
            mapping.guard(node * slot, page, guards)?;
        }
        Ok(StackPool {
            mapping,
            slot,
            count,
            guards,
        })
    }

    /// How this pool's guard pages are made.
    pub fn guards(&self) -> Guards {
        self.guards
    }

    /// Lends node `node`'s stack; the pool outlives it.
    pub fn stack(&self, node: usize) -> PooledStack<'_> {
        assert!(
            node < self.count,
            "stack {node} of a pool of {}",
            self.count
        );
        let guard = self.mapping.start.as_ptr() as usize + node * self.slot;
        let top = guard + self.slot;
        debug_assert_eq!(top % STACK_ALIGNMENT, 0);
        PooledStack {
            top: StackPointer::new(top).expect("a mapping is never at address 0"),
            guard: StackPointer::new(guard).expect("a mapping is never at address 0"),
            pool: PhantomData,
        }
    }
}

// SAFETY: the pool owns its mapping, which nothing ties to a thread: `stack` only computes
// addresses, and each stack is lent to one coroutine (on whichever thread runs it).
unsafe impl Send for StackPool {}
// SAFETY: as for `Send`; `&StackPool` allows nothing but `stack` and `guards`, which read
// fields that never change.
unsafe impl Sync for StackPool {}

/// One node's stack in a [`StackPool`]: from `top` down to its guard page at `guard`.
pub struct PooledStack<'pool> {
    top: StackPointer,
    guard: StackPointer,
    pool: PhantomData<&'pool StackPool>,
}

// SAFETY: the range [guard, guard + page) faults on access (installed by `StackPool` before
// any stack is lent), the stack above it has at least MIN_STACK_SIZE bytes, both ends are
// page-aligned, and the lifetime keeps the mapping alive while a coroutine runs on it. Each
// node's stack is lent to one coroutine only (`stack(node)` is called once per node).
unsafe impl Stack for PooledStack<'_> {
    fn base(&self) -> StackPointer {
        self.top
    }

    fn limit(&self) -> StackPointer {
        self.guard
    }
}

/// Bytes of a cache line (x86_64's and most ARM cores').
const CACHE_LINE: usize = 64;

/// Asks the processor to bring the `bytes` of memory from `start` into its caches, ahead of
/// a resume that will touch them: at tens of thousands of nodes a suspended node's stack has
/// left every cache by its next turn, and waiting for it line by line costs more than the
/// node's work. A hint only (a no-op off x86_64): it reads nothing the program sees.
pub fn prefetch(start: usize, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    for line in (start & !(CACHE_LINE - 1)..start.saturating_add(bytes)).step_by(CACHE_LINE) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch never faults, whatever the address (a guard page, an unmapped
        // one), and neither reads nor writes memory as the program sees it.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, bytes);
}

fn page_size() -> usize {
    // SAFETY: sysconf reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mappings of this process inside `pool` (other tests map and unmap concurrently, so
    /// the process's total would not do).
    fn mappings(pool: &StackPool) -> usize {
        let start = pool.mapping.start.as_ptr() as usize;
        let end = start + pool.mapping.len;
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        maps.lines()
            .filter_map(|line| {
                let (low, high) = line.split_whitespace().next()?.split_once('-')?;
                let low = usize::from_str_radix(low, 16).ok()?;
                let high = usize::from_str_radix(high, 16).ok()?;
                Some(low < end && high > start)
            })
            .filter(|&inside| inside)
            .count()
    }

    #[test]
    fn stacks_are_disjoint_and_each_sits_above_its_guard() {
        let pool = StackPool::new(3, 10_000).unwrap();
        let page = page_size();
        let stacks: Vec<_> = (0..3).map(|node| pool.stack(node)).collect();
        for pair in stacks.windows(2) {
            assert_eq!(
                pair[0].base(),
                pair[1].limit(),
                "next guard starts at this top"
            );
        }
        let usable = stacks[0].base().get() - stacks[0].limit().get() - page;
        assert!(usable >= 10_000 && usable % page == 0, "usable {usable}");
    }

    #[test]
    fn madvise_guards_keep_the_pool_one_mapping() {
        if Guards::available() != Guards::Madvise {
            eprintln!("kernel without MADV_GUARD_INSTALL: nothing to check");
            return;
        }
        let pool = StackPool::new(2000, 64 * 1024).unwrap();
        assert_eq!(mappings(&pool), 1, "2000 madvise-guarded stacks");
    }

    /// Run in a child process (the parent below): touching a guard page must fault.
    #[test]
    fn touch_a_guard_page_when_asked() {
        let Ok(mode) = std::env::var("HBSP_TOUCH_GUARD") else {
            return;
        };
        let guards = if mode == "madvise" {
            Guards::Madvise
        } else {
            Guards::Mprotect
        };
        let pool = StackPool::with_guards(2, 16 * 1024, guards).unwrap();
        let guard = pool.stack(1).limit().get() as *mut u8;
        // SAFETY: none: this write must fault, ending the child process with SIGSEGV.
        unsafe { guard.write_volatile(1) };
        std::process::exit(0);
    }

    #[test]
    fn guard_pages_fault_on_access() {
        use std::os::unix::process::ExitStatusExt;
        let mut modes = vec!["mprotect"];
        if Guards::available() == Guards::Madvise {
            modes.push("madvise");
        }
        for mode in modes {
            let status = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "backend::stack_pool::tests::touch_a_guard_page_when_asked",
                ])
                .env("HBSP_TOUCH_GUARD", mode)
                .output()
                .unwrap()
                .status;
            assert_eq!(status.signal(), Some(libc::SIGSEGV), "{mode}: {status:?}");
        }
    }

    #[test]
    fn prefetching_guard_pages_and_unmapped_memory_does_not_fault() {
        let pool = StackPool::new(2, 16 * 1024).unwrap();
        let guard = pool.stack(1).limit().get();
        prefetch(guard, page_size());
        prefetch(0, 4096);
        prefetch(usize::MAX - 100, 4096);
        drop(pool);
        prefetch(guard, page_size());
        // Reaching this line is the test: a fault would have ended the process.
        assert!(guard > 0);
    }

    #[test]
    fn mprotect_guards_split_the_mapping() {
        let pool = StackPool::with_guards(100, 16 * 1024, Guards::Mprotect).unwrap();
        let inside = mappings(&pool);
        assert!(
            inside >= 200,
            "100 mprotect guards split the pool into only {inside} mappings"
        );
    }
}
