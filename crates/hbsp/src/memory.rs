//! Whether a run fits this machine, decided before it starts: a run too large is refused
//! with a one-line [`HbspError::DoesNotFit`] (the estimate, the limit, what to change)
//! instead of being killed by the operating system halfway through.
//!
//! [`check_sim_fits`] covers what hbsp itself takes for a sim run: every node's stack and
//! state ([`sim_node_bytes`]) and, on the coroutine engine, the memory mappings of its
//! stacks. The data a program allocates is its own to estimate (hetscale's kernels do, in
//! `hetscale_kernels::memory`).

use crate::backend::coroutines;
use crate::backend::stack_pool::Guards;
use crate::backend::{SimEngine, SimOptions};
use crate::error::{HbspError, Result};
use crate::platform::Machine;

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
/// room left under a cgroup (v2) limit if the process runs under one; `None` where the system
/// does not say (then nothing is refused).
pub fn available_memory() -> Option<f64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let available = meminfo_kib(&meminfo, "MemAvailable:")? * 1024.0;
    Some(cgroup_room().map_or(available, |room| room.min(available)))
}

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

/// `memory.max - memory.current` of this process's cgroup (v2), if it is limited.
fn cgroup_room() -> Option<f64> {
    let read = |file: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{file}")).ok();
    let limit: f64 = read("memory.max")?.trim().parse().ok()?; // "max" = no limit
    let used: f64 = read("memory.current")?.trim().parse().ok()?;
    Some((limit - used).max(0.0))
}

/// Bytes as people read them: `512 B`, `3.2 MB`, `24.0 GB`, `2.4e7 TB`.
pub fn human_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    match unit {
        0 => format!("{value:.0} B"),
        _ if value >= 1e5 => format!("{value:.1e} {}", UNITS[unit]),
        _ => format!("{value:.1} {}", UNITS[unit]),
    }
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
