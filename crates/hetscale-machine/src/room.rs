//! How much memory this host has room for: the kernel's `MemAvailable`, lowered to the room
//! left under the memory limits of this process's cgroups, and the one-line refusal of a run
//! that would not fit ([`check_fits`]). What a run itself takes is its runtime's to estimate
//! (`hbsp::memory`, `hetscale_kernels::memory`).

use std::path::{Path, PathBuf};

use crate::error::{MachineError, Result};
use hetscale_model::numbers::human_bytes;

/// Refuses, in one line, `what` needing `needed` bytes when less memory is available:
/// "`what` would need about X of memory but Y are available: `advice`". A NaN estimate is
/// refused too: nothing is known to fit. Where the system does not say how much memory is
/// available, nothing is refused.
pub fn check_fits(what: &str, needed: f64, advice: &str) -> Result<()> {
    match available_memory() {
        Some(available) if needed > available || needed.is_nan() => {
            Err(MachineError::DoesNotFit(format!(
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
}
