//! Whether a run fits this machine, decided before it starts: a run too large is refused
//! with a one-line [`HbspError::DoesNotFit`] (the estimate, the limit, what to change)
//! instead of being killed by the operating system halfway through.
//!
//! [`check_sim_fits`] covers what hbsp itself takes for a sim run: every node's stack and
//! state ([`sim_node_bytes`]) and, on the coroutine engine, the memory mappings of its
//! stacks. The data a program allocates is its own to estimate (hetscale's kernels do, in
//! `hetscale_kernels::memory`).

use std::path::{Path, PathBuf};

use crate::backend::coroutines;
use crate::backend::stack_pool::Guards;
use crate::backend::{Backend, SimEngine, SimOptions};
use crate::error::{HbspError, Result};
use crate::platform::Machine;
// Formatting lives below `ctx`, which names sizes in its errors too; re-exported here.
pub use crate::units::human_bytes;

/// Bytes a coroutine node takes at its peak besides its program's data: its stack's resident
/// pages, its `Ctx`, mailboxes and share of the clock (measured: about 6 KiB at 32,000
/// nodes with the `sim_scale` bench's program; more for programs with deeper calls).
pub const COROUTINE_NODE_BYTES: f64 = 16.0 * 1024.0;

/// Bytes a thread-per-node sim node takes: its thread's stack pages and the kernel's
/// structures for the thread, besides what a coroutine node takes.
pub const THREAD_NODE_BYTES: f64 = 64.0 * 1024.0;

/// Bytes one node of a sim run takes besides its program's data, by engine.
pub fn sim_node_bytes(options: &SimOptions) -> f64 {
    match options.engine {
        SimEngine::Coroutines => COROUTINE_NODE_BYTES,
        SimEngine::Threads => THREAD_NODE_BYTES,
    }
}

/// Bytes a run of `p` nodes on `backend` takes in this process besides its program's data:
/// every node's stack and state on sim, every node's thread on threads; an MPI rank holds
/// its own node only.
pub fn run_bytes(backend: &Backend, p: usize) -> f64 {
    match backend {
        Backend::Sim(options) => p as f64 * sim_node_bytes(options),
        Backend::Threads(_) => p as f64 * THREAD_NODE_BYTES,
        Backend::Mpi(_) => 0.0,
    }
}

/// Bytes one queued message takes on `backend` besides its payload: its envelope, the boxed
/// vector and the allocator's headers, and its place in the receiver's queue. Measured as the
/// peak of an all-to-all of one small vector per pair of nodes: about 445 B per pair on
/// threads (`run mm --n 64`, 2,048 and 4,096 nodes) and 248 on sim (a quick probe's
/// allgather, 1,000 nodes); 0 on mpi, whose messages are MPI's.
pub fn message_bytes(backend: &Backend) -> f64 {
    match backend {
        Backend::Threads(_) => 512.0,
        Backend::Sim(_) => 320.0,
        Backend::Mpi(_) => 0.0,
    }
}

/// Refuses a sim run on `machine` whose nodes would not fit: more nodes than this process
/// may map stacks for, or more node memory than is available.
pub fn check_sim_fits(machine: &Machine, options: &SimOptions) -> Result<()> {
    let p = machine.p();
    if let Some(most) = coroutines::max_nodes().filter(|&most| p > most) {
        return Err(HbspError::DoesNotFit(format!(
            "sim on {p} nodes needs {} memory mappings for their stacks but this machine allows \
             {most} nodes (vm.max_map_count): use at most {most} nodes",
            p * Guards::available().mappings_per_node()
        )));
    }
    check_fits(
        &format!("sim on {p} nodes"),
        p as f64 * sim_node_bytes(options),
        "use fewer nodes",
    )
}

/// Refuses, in one line, `what` needing `needed` bytes when less memory is available:
/// "`what` would need about X of memory but Y are available: `advice`". A NaN estimate is
/// refused too: nothing is known to fit. Where the system does not say how much memory is
/// available, nothing is refused.
pub fn check_fits(what: &str, needed: f64, advice: &str) -> Result<()> {
    match available_memory() {
        Some(available) if needed > available || needed.is_nan() => {
            Err(HbspError::DoesNotFit(format!(
                "{what} would need about {} of memory but {} are available: {advice}",
                human_bytes(needed),
                human_bytes(available)
            )))
        }
        _ => Ok(()),
    }
}

/// Bytes of memory a new allocation can take now: the kernel's `MemAvailable`, lowered to the
/// room left under the memory limits of this process's own cgroup and its ancestors (v1 or
/// v2, see [`cgroup_room`]); `None` where the system does not say (then nothing is refused).
pub fn available_memory() -> Option<f64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let available = meminfo_kib(&meminfo, "MemAvailable:")? * 1024.0;
    let membership = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let room = cgroup_room(Path::new(CGROUP_ROOT), &membership);
    Some(room.map_or(available, |room| room.min(available)))
}

/// Where the cgroup file systems are mounted.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// The value of `field` (in kB) of `/proc/meminfo`.
fn meminfo_kib(meminfo: &str, field: &str) -> Option<f64> {
    meminfo
        .lines()
        .find_map(|line| line.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Bytes left under the tightest memory limit of the cgroups a process belongs to, `None`
/// if none is limited. `membership` is the process's `/proc/self/cgroup`; `root` is where
/// the cgroup file systems are mounted (`/sys/fs/cgroup`). Each limited cgroup leaves its
/// limit minus its usage, and a cgroup's ancestors limit it too:
///
/// - v2 (`0::/path`): `memory.max` (`max` = no limit) minus `memory.current`, of `path` and
///   its ancestors, in `root` (a v2-only host) or `root/unified` (a hybrid one);
/// - v1 (`N:...memory...:/path`): `memory.limit_in_bytes` minus `memory.usage_in_bytes`, of
///   `path` and its ancestors in `root/memory` (the kernel's "no limit" is a huge value).
pub fn cgroup_room(root: &Path, membership: &str) -> Option<f64> {
    let mut rooms = Vec::new();
    for member in crate::cgroup::memberships(membership) {
        if member.is_v2() {
            rooms.extend(limited_rooms(&v2_mount(root), member.path, &V2_FILES));
        } else if member.holds("memory") {
            rooms.extend(limited_rooms(&root.join("memory"), member.path, &V1_FILES));
        }
    }
    rooms.into_iter().reduce(f64::min)
}

/// The files that give a cgroup's memory limit and its usage.
struct LimitFiles {
    limit: &'static str,
    usage: &'static str,
}

const V2_FILES: LimitFiles = LimitFiles {
    limit: "memory.max",
    usage: "memory.current",
};

const V1_FILES: LimitFiles = LimitFiles {
    limit: "memory.limit_in_bytes",
    usage: "memory.usage_in_bytes",
};

/// Limits at or above this many bytes mean none: cgroup v1 writes "no limit" as the largest
/// page-aligned `i64` (about 9.2e18).
const NO_LIMIT_BYTES: f64 = (1u64 << 62) as f64;

/// Where the v2 hierarchy is: `root` itself on a v2-only host, `root/unified` on a hybrid one.
fn v2_mount(root: &Path) -> PathBuf {
    if root.join("cgroup.controllers").exists() {
        root.to_path_buf()
    } else {
        root.join("unified")
    }
}

/// The room (limit minus usage) of cgroup `path` under `mount` and of each of its ancestors
/// that has a limit.
fn limited_rooms(mount: &Path, path: &str, files: &LimitFiles) -> Vec<f64> {
    let mut dir = mount.join(path.trim_start_matches('/'));
    let mut rooms = Vec::new();
    loop {
        rooms.extend(room_in(&dir, files));
        if dir == mount || !dir.pop() || !dir.starts_with(mount) {
            return rooms;
        }
    }
}

/// Limit minus usage of the cgroup in `dir`, if it has a limit.
fn room_in(dir: &Path, files: &LimitFiles) -> Option<f64> {
    let read = |file: &str| -> Option<f64> {
        // "max" (v2's "no limit") does not parse: no limit.
        std::fs::read_to_string(dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let limit = read(files.limit).filter(|&limit| limit < NO_LIMIT_BYTES)?;
    Some((limit - read(files.usage).unwrap_or(0.0)).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields_parse_in_kib() {
        let meminfo = "MemTotal:       24000000 kB\nMemAvailable:   23053308 kB\n";
        assert_eq!(meminfo_kib(meminfo, "MemAvailable:"), Some(23_053_308.0));
        assert_eq!(meminfo_kib(meminfo, "SwapFree:"), None);
        assert!(available_memory().is_some_and(|b| b > 0.0), "Linux says");
    }

    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes(3.2e6), "3.2 MB");
        assert_eq!(human_bytes(2.4e19), "2.4e7 TB");
    }
}
