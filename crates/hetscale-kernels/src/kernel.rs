//! The common interface of the kernels, so the CLI and studies treat them alike.
//!
//! A [`Kernel`] is a configured algorithm (GE with or without pivoting, SUMMA with a strategy,
//! Burg with an order, ...), independent of any particular input. It knows its work `W(N)`,
//! the exact operation count of this implementation, the memory each node needs, an overhead
//! model for prediction, how to make a seeded input, and how to run on a backend. A run
//! returns a [`KernelRun`]: time, work, the numerical result and its verification.

use hbsp::{Backend, Ctx, Machine, Trace};
use serde::Serialize;

use crate::array::Array;
use crate::error::{KernelError, Result};

/// A configured parallel algorithm.
pub trait Kernel: Send + Sync {
    /// Short name, as the command line spells it (`mm`, `ge`, `conv2d`, `summa`, `burg`,
    /// `slalom`).
    fn name(&self) -> &'static str;

    /// Work `W(N)`: the operation count of the conventional sequential algorithm as the
    /// papers define it (the published formula where one exists). This is the `W` of
    /// `S = W / T` and `E_s = W / (T C)`.
    fn work(&self, n: usize) -> f64;

    /// The operations a one-node run declares to `ctx.compute` in all. Every built-in kernel
    /// declares exactly [`Kernel::work`] (one `W`, declared and reported alike, so the `sim`
    /// backend's `E_s` never exceeds 1): where the implementation's own flop count differs
    /// from the published formula (`ge`, `conv2d`), each block declares its flops times
    /// `W / flops`. A kernel that declares more than `W` (repeated work) returns its count.
    fn counted_ops(&self, n: usize) -> f64;

    /// Bytes of kernel data each node holds at its peak, by pid (the root's input and result
    /// copies included).
    fn memory_per_node(&self, n: usize, machine: &Machine) -> Result<Vec<f64>>;

    /// Bytes of the input arrays [`Kernel::generate`] makes at size `n`, which the caller
    /// holds while the kernel runs (default 0: not known). With
    /// [`Kernel::memory_per_node`] and [`Kernel::verification_bytes`] it lets
    /// [`crate::memory::check_run_fits`] refuse a run that cannot fit before anything is
    /// allocated.
    fn input_bytes(&self, n: usize) -> f64 {
        let _ = n;
        0.0
    }

    /// Bytes the check of a result against its sequential reference takes beyond the result
    /// (default 0).
    fn verification_bytes(&self, n: usize) -> f64 {
        let _ = n;
        0.0
    }

    /// Overhead model for prediction (approach 3): communication and synchronisation time
    /// `T_o(N, p, platform)` on the machine's HBSP^1 parameters, and the sequential fraction.
    fn overhead(&self, n: usize, machine: &Machine) -> Result<Overhead>;

    /// Bytes [`Kernel::overhead`] takes at its peak at size `n` on `machine`, so a prediction
    /// at an absurd size or node count is refused before it runs (default: a few vectors per
    /// node, what replaying supersteps on per-node traffic takes).
    fn overhead_bytes(&self, n: usize, machine: &Machine) -> Result<f64> {
        let _ = n;
        Ok(OVERHEAD_BYTES_PER_NODE * machine.p() as f64)
    }

    /// Bytes of the per-superstep trace of a run at size `n` on `machine`, counted only when
    /// the backend records one (default: a few supersteps, see [`few_supersteps_trace_bytes`]).
    fn trace_bytes(&self, n: usize, machine: &Machine) -> Result<f64> {
        let _ = n;
        Ok(few_supersteps_trace_bytes(5.0, machine))
    }

    /// A seeded input of problem size `n` (the same seed gives the same arrays everywhere).
    fn generate(&self, n: usize, seed: u64) -> Result<Vec<Array>>;

    /// The input of a skeleton run (sim with the compute blocks skipped) at size `n`: by
    /// default [`Kernel::generate`]'s. A kernel whose skeleton reads no value returns
    /// [`size_only`]`(n)`, so nothing of the problem's size is made.
    fn skeleton_inputs(&self, n: usize, seed: u64) -> Result<Vec<Array>> {
        self.generate(n, seed)
    }

    /// Bytes a skeleton run at size `n` on `machine` takes in all, inputs included, where
    /// that is less than [`Kernel::input_bytes`] and [`Kernel::memory_per_node`] say
    /// (default `None`: the same as a run that computes, without its verification).
    fn skeleton_bytes(&self, n: usize, machine: &Machine) -> Result<Option<f64>> {
        let _ = (n, machine);
        Ok(None)
    }

    /// Runs on `backend` over `machine` with `inputs` (as [`Kernel::generate`] makes them),
    /// verifies the result against a sequential reference and reports.
    fn run(&self, inputs: &[Array], backend: &Backend, machine: &Machine) -> Result<KernelRun>;
}

/// Bytes of the trace of `supersteps` supersteps on `machine`: a few hundred per node and
/// superstep, with a flow to every node in a collective's superstep.
pub fn few_supersteps_trace_bytes(supersteps: f64, machine: &Machine) -> f64 {
    let p = machine.p() as f64;
    supersteps * p * (512.0 + 24.0 * p)
}

/// Bytes per node an overhead model replaying supersteps takes: a few per-node vectors of the
/// traffic and the compute of a superstep.
pub const OVERHEAD_BYTES_PER_NODE: f64 = 256.0;

/// A kernel's time model at one problem size and machine:
/// `T = r [(1 - alpha) W / C + alpha W / C_root] + T_o`.
///
/// `r W` are the operations the implementation performs for the work `W` (`r = 1` where `W`
/// is its exact count), `alpha` the fraction of them the root does while the others wait,
/// and `T_o` everything the balanced compute leaves out, as the implementation's supersteps
/// cost it on the machine's HBSP^1 parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Overhead {
    /// Overhead time `T_o`, s: the HBSP^1 communication, per-message and barrier costs
    /// (`g h + o m + L`) summed over the supersteps the implementation makes, plus the compute
    /// the balanced term misses: idle time from integer shares and operations done beyond
    /// `r W` (work repeated on every node, combining partial sums).
    pub overhead_s: f64,
    /// The replayed supersteps' compute at the marked speeds, s (each superstep paced by its
    /// slowest node): the balanced term plus the compute part of `T_o`. A calibrated compute
    /// rate scales all of it, not only the balanced term. 0 when speeds are not flop rates or the
    /// model does not replay its compute: the balanced term is then the compute.
    pub compute_s: f64,
    /// Fraction `alpha` of the operations done by one node (the root) while the others wait.
    pub sequential_fraction: f64,
    /// Operations the implementation declares per unit of work `W`, `counted_ops / W`: 1 for
    /// the built-in kernels, which declare exactly `W`.
    pub ops_per_work: f64,
}

impl Overhead {
    /// Predicted run time `T = r [(1 - alpha) W / C + alpha W / C_root] + T_o`, with speeds
    /// in flop/s.
    pub fn predicted_time_s(&self, work: f64, cluster_speed: f64, root_speed: f64) -> f64 {
        let alpha = self.sequential_fraction;
        self.ops_per_work * ((1.0 - alpha) * work / cluster_speed + alpha * work / root_speed)
            + self.overhead_s
    }
}

/// How a result was checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verification {
    /// What was compared, e.g. "normwise backward error ||Ax - b|| / (||A|| ||x|| + ||b||)".
    pub method: String,
    /// The error measured.
    pub error: f64,
    /// The largest error accepted.
    pub tolerance: f64,
    /// `error <= tolerance`.
    pub passed: bool,
    /// No check was possible: the compute blocks were skipped (sim skeleton execution), so
    /// the result is not the answer.
    pub skipped: bool,
}

impl Verification {
    /// A check of `error` against `tolerance`.
    pub fn new(method: impl Into<String>, error: f64, tolerance: f64) -> Self {
        Self {
            method: method.into(),
            error,
            tolerance,
            passed: error <= tolerance,
            skipped: false,
        }
    }

    /// The verdict of a run whose compute blocks were skipped.
    pub fn skipped() -> Self {
        Self {
            method: "none: compute blocks were skipped (sim skeleton execution)".into(),
            error: f64::NAN,
            tolerance: f64::NAN,
            passed: false,
            skipped: true,
        }
    }

    /// `check()` unless the run skipped its compute blocks.
    pub fn unless_skipped(skipped: bool, check: impl FnOnce() -> Self) -> Self {
        if skipped { Self::skipped() } else { check() }
    }
}

/// What one kernel run did.
#[derive(Debug, Clone)]
pub struct KernelRun {
    /// Kernel name.
    pub kernel: &'static str,
    /// Problem size `N`.
    pub n: usize,
    /// Number of nodes `p`.
    pub p: usize,
    /// Work `W(N)` (see [`Kernel::work`]).
    pub work: f64,
    /// Run time `T`, s: from the barrier that starts the program to the last node's end,
    /// distribution of the input and collection of the result included.
    pub time_s: f64,
    /// `C = sum_j C_j` in the platform's unit.
    pub cluster_speed: f64,
    /// The unit of `cluster_speed`, e.g. `Mflop/s`.
    pub speed_unit: String,
    /// The numerical result.
    pub result: Array,
    /// Its check against a sequential reference.
    pub verification: Verification,
    /// Kernel-specific facts (strategy, grid, residual, ...), as name and value.
    pub details: Vec<(String, String)>,
    /// What each node did in each superstep.
    pub trace: Trace,
}

impl KernelRun {
    /// Achieved speed `S = W / T` in flop/s.
    pub fn speed(&self) -> f64 {
        self.work / self.time_s
    }

    /// `C` in flop/s, if the platform's speed unit is a flop rate.
    pub fn cluster_speed_flops(&self) -> Option<f64> {
        flops_per_unit(&self.speed_unit).map(|f| f * self.cluster_speed)
    }

    /// Speed-efficiency `E_s = W / (T C)`, if `C` is a flop rate.
    pub fn speed_efficiency(&self) -> Option<f64> {
        self.cluster_speed_flops().map(|c| self.speed() / c)
    }

    /// Operations all nodes declared to `ctx.compute` (redundant work included).
    pub fn declared_ops(&self) -> f64 {
        self.trace
            .nodes
            .iter()
            .flat_map(|n| &n.supersteps)
            .map(|s| s.work_ops)
            .sum()
    }
}

/// Flop/s per unit of a speed unit such as `Mflop/s`; `None` for units that are not flop
/// rates (e.g. the BYTEmark indices of the UCF cluster).
pub fn flops_per_unit(unit: &str) -> Option<f64> {
    match unit.trim().to_ascii_lowercase().as_str() {
        "flop/s" | "flops" => Some(1.0),
        "kflop/s" | "kflops" => Some(1e3),
        "mflop/s" | "mflops" => Some(1e6),
        "gflop/s" | "gflops" => Some(1e9),
        "tflop/s" | "tflops" => Some(1e12),
        _ => None,
    }
}

/// Marked speeds of the machine's nodes, by pid (in the platform's unit), e.g. to split data
/// in proportion to them with [`crate::partition::block_counts`].
pub fn speeds(machine: &Machine) -> Vec<f64> {
    machine.nodes().iter().map(|n| n.marked_speed).collect()
}

/// What [`timed_run`] hands back.
#[derive(Debug)]
pub struct Timed<R> {
    /// Run time `T`, s: from the starting barrier to the last node's end (virtual on `sim`).
    pub time_s: f64,
    /// Whether the backend skipped the compute blocks (sim skeleton execution): the results
    /// are then not the answer and must not be checked.
    pub compute_skipped: bool,
    /// What each node's program returned, by pid.
    pub results: Vec<R>,
    /// What each node did in each superstep.
    pub trace: Trace,
}

/// Runs `program` on every node between a starting barrier and the end of the slowest node;
/// `T` is measured on the backend's clock (on `sim`, the virtual duration of the run, whose
/// clock charges the last superstep only when the run ends).
///
/// This is how a [`Kernel::run`] times its HBSP program: the built-in kernels and user kernels
/// alike (see the `user-kernel` example of the workspace). Non-positive marked speeds are
/// refused before anything runs.
pub fn timed_run<R, F>(backend: &Backend, machine: &Machine, program: F) -> Result<Timed<R>>
where
    R: hbsp::NodeResult,
    F: Fn(&mut Ctx<'_>) -> Result<R> + Sync,
{
    crate::partition::check_speeds(&speeds(machine))?;
    let output = hbsp::run(backend, machine, |ctx| {
        ctx.sync()?;
        let start = ctx.time();
        let result = program(ctx)?;
        Ok::<_, KernelError>((start, ctx.time(), result))
    })?;
    let start = output
        .results
        .iter()
        .map(|r| r.0)
        .fold(f64::INFINITY, f64::min);
    let end = if output.virtual_time {
        output.elapsed_s
    } else {
        output.results.iter().map(|r| r.1).fold(0.0, f64::max)
    };
    Ok(Timed {
        time_s: end - start,
        compute_skipped: output.compute_skipped,
        results: output.results.into_iter().map(|r| r.2).collect(),
        trace: output.trace,
    })
}

/// The name of a [`size_only`] input.
const SIZE_ONLY: &str = "N";

/// The input of a skeleton run that needs only the problem size: one array `N` holding `n`.
pub fn size_only(n: usize) -> Array {
    Array::vector(SIZE_ONLY, vec![n as f64])
}

/// `n`, if `inputs` is [`size_only`]`(n)`.
pub fn size_only_n(inputs: &[Array]) -> Option<usize> {
    match inputs {
        [input] if input.name == SIZE_ONLY && input.shape == [1] => match &input.data {
            crate::array::ArrayData::Real(v) if v[0] >= 1.0 && v[0].fract() == 0.0 => {
                Some(v[0] as usize)
            }
            _ => None,
        },
        _ => None,
    }
}

/// `Some(n)` when `inputs` is [`size_only`]`(n)` and `backend` runs skeletons, which need no
/// values; `None` for other inputs. The size alone on a backend that computes is an error
/// naming the `arrays` `kernel` needs.
pub fn skeleton_size(
    kernel: &str,
    inputs: &[Array],
    backend: &Backend,
    arrays: &str,
) -> Result<Option<usize>> {
    match size_only_n(inputs) {
        Some(n) if skeleton(backend) => Ok(Some(n)),
        Some(_) => Err(crate::error::invalid(format!(
            "{kernel} was given only the size N, which is enough for a skeleton run (sim with the compute blocks skipped) only: give {arrays}"
        ))),
        None => Ok(None),
    }
}

/// The inputs of a run of `kernel` at size `n` on `backend`: [`Kernel::skeleton_inputs`] when
/// the backend skips the compute blocks, else [`Kernel::generate`]'s.
pub fn inputs_for(
    kernel: &dyn Kernel,
    n: usize,
    seed: u64,
    backend: &Backend,
) -> Result<Vec<Array>> {
    if skeleton(backend) {
        kernel.skeleton_inputs(n, seed)
    } else {
        kernel.generate(n, seed)
    }
}

/// Whether `backend` skips compute blocks (sim skeleton execution): numerical checks on
/// values the blocks would have produced must then be skipped too.
pub fn skeleton(backend: &Backend) -> bool {
    matches!(backend, Backend::Sim(options) if options.skip_compute)
}

/// The one result the root returned (every other node returns `None`); an error if no node
/// returned one (a program that forgot to return its result on the root).
pub fn root_result<R>(results: Vec<Option<R>>) -> Result<R> {
    results.into_iter().flatten().next().ok_or_else(|| {
        crate::error::invalid(
            "no node returned the result: the root's program must return Some(result)",
        )
    })
}
