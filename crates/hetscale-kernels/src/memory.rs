//! Whether a run fits this machine's memory, decided before anything is allocated: a run too
//! large for the machine is refused with its estimate and what to change, instead of being
//! killed by the operating system (or aborting on a failed allocation) halfway through.
//!
//! The estimate of a run at size `N` on a machine adds the input arrays the caller holds
//! ([`Kernel::input_bytes`]), every node's data at its peak ([`Kernel::memory_per_node`]; the
//! `threads` and `sim` backends run all nodes in this one process, an `mpi` rank only its own)
//! and, unless the compute blocks are skipped, the verification's sequential reference
//! ([`Kernel::verification_bytes`]). A kernel whose skeleton runs hold less says so with
//! [`Kernel::skeleton_bytes`].

use hbsp::{Backend, Machine};

use crate::error::{Result, invalid};
use crate::kernel::{Kernel, skeleton};

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

/// Refuses, in one line, a size whose input arrays alone exceed the memory available, so
/// [`Kernel::generate`] never aborts on a failed allocation (or wraps a size overflow).
pub(crate) fn check_inputs_fit(kernel: &dyn Kernel, n: usize) -> Result<()> {
    check_fits(
        &format!("the inputs of {} at N = {n}", kernel.name()),
        kernel.input_bytes(n),
        "use a smaller N",
    )
}

/// Peak bytes a run of `kernel` at size `n` on `machine` takes in this process (see the
/// module docs); skeleton runs (compute skipped) leave out the verification.
pub fn run_memory(
    kernel: &dyn Kernel,
    n: usize,
    machine: &Machine,
    backend: &Backend,
) -> Result<f64> {
    if skeleton(backend) {
        if let Some(bytes) = kernel.skeleton_bytes(n, machine)? {
            return Ok(bytes);
        }
    }
    let per_node = kernel.memory_per_node(n, machine)?;
    let nodes: f64 = match backend {
        // One rank per node; every rank holds the inputs, the root the largest share.
        Backend::Mpi(_) => per_node.iter().copied().fold(0.0, f64::max),
        _ => per_node.iter().sum(),
    };
    let verification = if skeleton(backend) {
        0.0
    } else {
        kernel.verification_bytes(n)
    };
    Ok(kernel.input_bytes(n) + nodes + verification)
}

/// Refuses, in one line, a run that would need more memory than this machine has available:
/// the message gives the estimate and what to change (a smaller `N`, fewer nodes, or a
/// skeleton run when that would fit).
pub fn check_run_fits(
    kernel: &dyn Kernel,
    n: usize,
    machine: &Machine,
    backend: &Backend,
) -> Result<()> {
    let needed = run_memory(kernel, n, machine, backend)?;
    let mut advice = "use a smaller N or fewer nodes".to_string();
    if let Backend::Sim(options) = backend {
        if !options.skip_compute {
            let skipping = Backend::Sim(hbsp::SimOptions {
                skip_compute: true,
                ..options.clone()
            });
            let bytes = run_memory(kernel, n, machine, &skipping)?;
            if available_memory().is_some_and(|available| bytes <= available) {
                advice.push_str(&format!(
                    ", or skip the compute blocks (--skip-compute; skeleton = true in a study), which needs {}",
                    human_bytes(bytes)
                ));
            }
        }
    }
    let what = format!("{} at N = {n} on {} nodes", kernel.name(), machine.p());
    check_fits(&what, needed, &advice)
}

/// Refuses, in one line, `what` needing `needed` bytes when less memory is available:
/// "`what` would need about X of memory but Y are available: `advice`".
pub fn check_fits(what: &str, needed: f64, advice: &str) -> Result<()> {
    match available_memory() {
        // A NaN estimate is refused too: nothing is known to fit.
        Some(available) if needed > available || needed.is_nan() => Err(invalid(format!(
            "{what} would need about {} of memory but {} are available: {advice}",
            human_bytes(needed),
            human_bytes(available)
        ))),
        _ => Ok(()),
    }
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

    use crate::burg::BurgKernel;
    use crate::conv2d::Conv2dKernel;
    use crate::ge::GeKernel;
    use crate::mm::MmKernel;
    use crate::summa::SummaKernel;
    use hbsp::{BarrierCost, Network, Node, Platform};

    fn machine(p: usize) -> Machine {
        Platform {
            name: "test".into(),
            description: String::new(),
            speed_unit: "Mflop/s".into(),
            nodes: (0..p)
                .map(|i| Node::new(format!("n{i}"), 1.0 + i as f64))
                .collect(),
            network: Network::new(1e-9, BarrierCost::constant(1e-5)),
            machine: None,
        }
        .all()
        .unwrap()
    }

    fn kernels() -> [Box<dyn Kernel>; 5] {
        [
            Box::new(MmKernel),
            Box::new(GeKernel::default()),
            Box::new(Conv2dKernel),
            Box::new(SummaKernel::default()),
            Box::new(BurgKernel::default()),
        ]
    }

    #[test]
    fn generate_refuses_sizes_whose_inputs_cannot_fit() {
        // These aborted (allocation failure, or "capacity overflow" for conv2d's 2 N^2).
        for kernel in kernels() {
            let n = if kernel.name() == "burg" {
                1 << 50
            } else {
                1_000_000_000
            };
            let Err(err) = kernel.generate(n, 1) else {
                panic!("{} generated N = {n}", kernel.name());
            };
            let err = err.to_string();
            assert!(
                err.starts_with(&format!(
                    "the inputs of {} at N = {n} would need about ",
                    kernel.name()
                )) && err.ends_with("are available: use a smaller N")
                    && !err.contains('\n'),
                "{err}"
            );
        }
    }

    #[test]
    fn runs_that_cannot_fit_are_refused_with_the_estimate_and_what_to_change() {
        let four = machine(4);
        for kernel in kernels() {
            let n = if kernel.name() == "burg" {
                1 << 50
            } else {
                1_000_000
            };
            for backend in [Backend::threads(), Backend::sim_declared()] {
                let err = check_run_fits(kernel.as_ref(), n, &four, &backend)
                    .unwrap_err()
                    .to_string();
                assert!(
                    err.starts_with(&format!(
                        "{} at N = {n} on 4 nodes would need about ",
                        kernel.name()
                    )) && err.contains("use a smaller N or fewer nodes")
                        && !err.contains('\n'),
                    "{err}"
                );
            }
            assert!(check_run_fits(kernel.as_ref(), 64, &four, &Backend::threads()).is_ok());
        }
    }

    #[test]
    fn the_estimate_counts_inputs_every_node_and_the_check_unless_skipped() {
        let four = machine(4);
        let skeleton = Backend::Sim(hbsp::SimOptions {
            skip_compute: true,
            ..hbsp::SimOptions::default()
        });
        for kernel in kernels() {
            let n = 200;
            let nodes = kernel.memory_per_node(n, &four).unwrap();
            let inputs = kernel.input_bytes(n);
            let check = kernel.verification_bytes(n);
            let all: f64 = nodes.iter().sum();
            let largest = nodes.iter().copied().fold(0.0, f64::max);
            let estimate =
                |backend: &Backend| run_memory(kernel.as_ref(), n, &four, backend).unwrap();
            assert_eq!(estimate(&Backend::threads()), inputs + all + check);
            // A kernel whose skeleton holds less (summa: sizes only) says how much.
            match kernel.skeleton_bytes(n, &four).unwrap() {
                Some(bytes) => {
                    assert_eq!(estimate(&skeleton), bytes);
                    assert!(bytes < inputs, "{}: {bytes}", kernel.name());
                }
                None => assert_eq!(estimate(&skeleton), inputs + all),
            }
            assert_eq!(
                estimate(&Backend::Mpi(Default::default())),
                inputs + largest + check
            );
            assert!(inputs > 0.0 && check > 0.0, "{}", kernel.name());
        }
        // The estimate never builds an N-sized structure (GE used to list the owner of
        // every row): an absurd N is answered at once.
        let absurd = run_memory(&GeKernel::default(), 1 << 40, &four, &Backend::threads()).unwrap();
        assert!(absurd > 1e25, "{absurd}");
    }

    #[test]
    fn bytes_read_as_people_read_them() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes(3.2e6), "3.2 MB");
        assert_eq!(human_bytes(2.4e19), "2.4e7 TB");
    }
}
