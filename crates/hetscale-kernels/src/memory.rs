//! Whether a run fits this machine's memory, decided before anything is allocated: a run too
//! large for the machine is refused with its estimate and what to change, instead of being
//! killed by the operating system (or aborting on a failed allocation) halfway through.
//!
//! The estimate of a run at size `N` on a machine adds the input arrays the caller holds
//! ([`Kernel::input_bytes`]), every node's data at its peak ([`Kernel::memory_per_node`]; the
//! `threads` and `sim` backends run all nodes in this one process, an `mpi` rank only its own)
//! and, unless the compute blocks are skipped, the verification's sequential reference
//! ([`Kernel::verification_bytes`]); on `sim`, every node's stack and state too
//! ([`hbsp::memory::sim_node_bytes`]); what grows with every pair of nodes in the processes
//! that run all nodes ([`pair_bytes`]); and the run's trace ([`Kernel::trace_bytes`]) where
//! the backend records one. A kernel whose skeleton runs hold less says so with
//! [`Kernel::skeleton_bytes`].

use hbsp::{Backend, Machine};

use crate::error::Result;
use crate::kernel::{Kernel, skeleton};

pub use hetscale_machine::room::available_memory;
pub use hetscale_model::numbers::human_bytes;

/// Refuses, in one line, a size whose input arrays alone exceed the memory available, so
/// [`Kernel::generate`] never aborts on a failed allocation (or wraps a size overflow).
pub(crate) fn check_inputs_fit(kernel: &dyn Kernel, n: usize) -> Result<()> {
    check_fits(
        &format!("the inputs of {} at N = {n}", kernel.name()),
        kernel.input_bytes(n),
        "use a smaller N",
    )
}

/// Bytes per pair of nodes a run of a kernel holds at its peak besides its data, on `backend`:
/// what grows as `p^2`, most of a run's memory on thousands of nodes.
///
/// - sim: every node keeps a few vectors of one count per node across its collectives'
///   boundaries (its share of the rows, the counts it passes to `scatterv`/`gatherv` and
///   the collective's call that holds them). The peak RSS of
///   `hetscale run mm --backend sim --skip-compute --n 64 --nodes P` gives 24 B per pair at
///   P = 8,000 and 16,000; ge and slalom less; the margin covers the rest.
/// - threads: an all-to-all superstep (the second phase of a two-phase broadcast) queues a
///   message per pair ([`hbsp::memory::message_bytes`]). The peak RSS of
///   `hetscale run mm --backend threads --n 64 --nodes P` gives about 440 B per pair at
///   P = 2,048 and 4,096.
/// - mpi: a rank holds its own node only.
pub fn pair_bytes(backend: &Backend) -> f64 {
    match backend {
        Backend::Sim(_) => SIM_PAIR_BYTES,
        Backend::Threads(_) => hbsp::memory::message_bytes(backend),
        _ => 0.0,
    }
}

/// Bytes per pair of nodes of a sim run (see [`pair_bytes`]).
pub const SIM_PAIR_BYTES: f64 = 32.0;

/// Peak bytes a run of `kernel` at size `n` on `machine` takes in this process (see the
/// module docs); skeleton runs (compute skipped) leave out the verification.
pub fn run_memory(
    kernel: &dyn Kernel,
    n: usize,
    machine: &Machine,
    backend: &Backend,
) -> Result<f64> {
    let p = machine.p() as f64;
    let mut runtime = p * p * pair_bytes(backend);
    if let Backend::Sim(options) = backend {
        runtime += p * hbsp::memory::sim_node_bytes(options);
    }
    if backend.records_trace() {
        runtime += kernel.trace_bytes(n, machine)?;
    }
    if skeleton(backend) {
        if let Some(bytes) = kernel.skeleton_bytes(n, machine)? {
            return Ok(bytes + runtime);
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
    Ok(kernel.input_bytes(n) + nodes + runtime + verification)
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
    if let Backend::Sim(options) = backend {
        hbsp::memory::check_sim_fits(machine, options)?;
    }
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

/// Refuses, in one line, `what` needing `needed` bytes when less memory is available (see
/// [`hetscale_machine::room::check_fits`]).
pub fn check_fits(what: &str, needed: f64, advice: &str) -> Result<()> {
    Ok(hetscale_machine::room::check_fits(what, needed, advice)?)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_run_without_a_trace_is_not_charged_for_one() {
        // GE's trace at 1024 nodes keeps totals only (beyond hbsp's FLOW_NODES), O(N p): still
        // a gigabyte, most of a traced skeleton run.
        let sim = |no_trace| {
            Backend::Sim(hbsp::SimOptions {
                skip_compute: true,
                no_trace,
                ..Default::default()
            })
        };
        let (ge, m) = (GeKernel::default(), machine(1024));
        let traced = run_memory(&ge, 1024, &m, &sim(false)).unwrap();
        let untraced = run_memory(&ge, 1024, &m, &sim(true)).unwrap();
        let trace = ge.trace_bytes(1024, &m).unwrap();
        assert!(trace > 1e9, "{trace}");
        // With flows (up to FLOW_NODES) a node-step costs more.
        let flows = |p: usize| ge.trace_bytes(1024, &machine(p)).unwrap() / p as f64;
        assert!(flows(hbsp::trace::FLOW_NODES) > flows(hbsp::trace::FLOW_NODES + 1));
        assert_eq!(traced, untraced + trace);
        for kernel in kernels() {
            let m = machine(64);
            let with = run_memory(kernel.as_ref(), 256, &m, &sim(false)).unwrap();
            let without = run_memory(kernel.as_ref(), 256, &m, &sim(true)).unwrap();
            assert!(without < with, "{}: {without} vs {with}", kernel.name());
        }
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
            // Every backend records a trace by default.
            let trace = kernel.trace_bytes(n, &four).unwrap();
            let estimate =
                |backend: &Backend| run_memory(kernel.as_ref(), n, &four, backend).unwrap();
            let pairs = 16.0 * hbsp::memory::message_bytes(&Backend::threads());
            assert_eq!(
                estimate(&Backend::threads()),
                inputs + all + check + pairs + trace
            );
            // Sim adds every node's stack and state; a kernel whose skeleton holds less
            // (sizes only) says how much: less than a run with the data, and at a large N
            // (where the data outweigh the trace) a small part of the inputs alone.
            let runtime = 4.0 * hbsp::memory::COROUTINE_NODE_BYTES + 16.0 * SIM_PAIR_BYTES + trace;
            match kernel.skeleton_bytes(n, &four).unwrap() {
                Some(bytes) => {
                    assert_eq!(estimate(&skeleton), bytes + runtime);
                    assert!(bytes < inputs + all, "{}: {bytes}", kernel.name());
                    let large = 1_000_000;
                    let bytes = kernel.skeleton_bytes(large, &four).unwrap().unwrap();
                    assert!(
                        10.0 * bytes < kernel.input_bytes(large),
                        "{}: {bytes}",
                        kernel.name()
                    );
                }
                None => assert_eq!(estimate(&skeleton), inputs + all + runtime),
            }
            assert_eq!(
                estimate(&Backend::Mpi(Default::default())),
                inputs + largest + check + trace
            );
            assert!(inputs > 0.0 && check > 0.0, "{}", kernel.name());
        }
        // The estimate never builds an N-sized structure (GE used to list the owner of
        // every row): an absurd N is answered at once.
        let absurd = run_memory(&GeKernel::default(), 1 << 40, &four, &Backend::threads()).unwrap();
        assert!(absurd > 1e25, "{absurd}");
    }

    /// The state that grows as p^2 is counted: `hetscale run mm --backend sim --skip-compute
    /// --n 64` on 20,000 nodes peaks above 12 GB, far beyond 16 KiB per node; on threads a
    /// run of thousands of nodes queues a message per pair.
    #[test]
    fn the_estimate_counts_what_grows_with_every_pair_of_nodes() {
        let skeleton = Backend::Sim(hbsp::SimOptions {
            skip_compute: true,
            no_trace: true,
            ..Default::default()
        });
        let sim = run_memory(&MmKernel, 64, &machine(20_000), &skeleton).unwrap();
        assert!(sim > 12e9, "{sim:e}");
        let threads = Backend::Threads(hbsp::ThreadsOptions {
            trace: false,
            ..Default::default()
        });
        // The peak RSS of `hetscale run mm --backend threads --n 64` on 2,048 nodes.
        let threads = run_memory(&MmKernel, 64, &machine(2048), &threads).unwrap();
        assert!(threads > 1.9e9, "{threads:e}");
        // An MPI rank holds its own node only.
        let mpi = Backend::Mpi(hbsp::MpiOptions {
            trace: false,
            ..Default::default()
        });
        let mpi = run_memory(&MmKernel, 64, &machine(20_000), &mpi).unwrap();
        assert!(mpi < 1e8, "{mpi:e}");
    }

    #[test]
    fn bytes_read_as_people_read_them() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes(3.2e6), "3.2 MB");
        assert_eq!(human_bytes(2.4e19), "2.4e7 TB");
    }
}
