//! # user-kernel
//!
//! How to put your own HBSP program into every `hetscale` command and study: implement
//! [`Kernel`] and register it. The kernel here, `dot`, is the heterogeneous distributed dot
//! product `x . y` of an iterative solver: the vectors already live on the nodes in blocks
//! proportional to their marked speeds (between iterations nothing moves them), each node
//! multiplies its block, and the root (the fastest node) sums the partial sums.
//!
//! ```
//! use hbsp::{Backend, Platform};
//! use hetscale_kernels::Kernel;
//! use user_kernel::DotKernel;
//!
//! let machine = Platform::load("sunwulf")?.select(&"server:1,sunblade:2".parse()?)?;
//! let inputs = DotKernel.generate(10_000, 7)?;
//! let run = DotKernel.run(&inputs, &Backend::threads(), &machine)?;
//! assert!(run.verification.passed);
//! assert_eq!(run.work, 19_999.0);
//! // The registry every hetscale command accepts, `dot` added.
//! assert!(user_kernel::registry()?.names().contains(&"dot".to_string()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - Work: `W(N) = 2N - 1` (N products, N - 1 additions), exactly what the nodes declare:
//!   `2 n_j - 1` on each node with `n_j > 0` elements, and `k - 1` on the root to add the
//!   `k` partial sums.
//! - Overhead model: the program's one superstep and its end, costed as the `sim` backend
//!   costs them on the machine's HBSP^1 parameters: the slowest node's block, each partial
//!   sum (8 bytes) sent to the root (`g max_j r_j h_j + o m + L`), then the root's additions.
//!   `T_o` is that total less `W / C`: communication, barrier, integer-share imbalance and
//!   the root's additions.

use hbsp::{Backend, Ctx, Machine};
use hetscale_kernels::partition::block_counts;
use hetscale_kernels::{
    Array, Kernel, KernelError, KernelRegistry, KernelRun, Overhead, Result, Verification,
    flops_per_unit, root_result, speeds, timed_run,
};
use hetscale_model::hbsp::Traffic;

/// Bytes of one partial sum.
const F64: f64 = 8.0;

/// The distributed dot product `x . y` of two vectors of length `N`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DotKernel;

/// The kernels of `hetscale` with `dot` added: hand it to `hetscale::main_with`, or to
/// `hetscale_study`'s `*_with` functions.
pub fn registry() -> Result<KernelRegistry> {
    KernelRegistry::builtin().with("dot", |_options| Ok(Box::new(DotKernel)))
}

/// `W(N) = 2N - 1`.
pub fn work(n: usize) -> f64 {
    2.0 * n as f64 - 1.0
}

/// Operations of a partial dot product of `m` elements.
fn partial_ops(m: usize) -> f64 {
    if m == 0 { 0.0 } else { 2.0 * m as f64 - 1.0 }
}

impl Kernel for DotKernel {
    fn name(&self) -> &'static str {
        "dot"
    }

    fn work(&self, n: usize) -> f64 {
        work(n)
    }

    fn counted_ops(&self, n: usize) -> f64 {
        work(n)
    }

    fn memory_per_node(&self, n: usize, machine: &Machine) -> Result<Vec<f64>> {
        let counts = block_counts(n, &speeds(machine))?;
        Ok(counts.iter().map(|&m| 2.0 * m as f64 * F64).collect())
    }

    fn overhead(&self, n: usize, machine: &Machine) -> Result<Overhead> {
        let unit = flops_per_unit(machine.speed_unit()).ok_or_else(|| {
            KernelError::InvalidInput(format!(
                "dot: marked speeds in {} are not a flop rate: give them in Mflop/s",
                machine.speed_unit()
            ))
        })?;
        let flops: Vec<f64> = speeds(machine).iter().map(|s| s * unit).collect();
        let counts = block_counts(n, &speeds(machine))?;
        let root = machine.ranking()[0];
        let cost = machine.cost_model();
        let mut traffic = Traffic::idle(machine.p());
        for (j, _) in counts.iter().enumerate().filter(|(_, m)| **m > 0) {
            traffic.add(j, root, F64);
        }
        let slowest_block = counts
            .iter()
            .zip(&flops)
            .map(|(&m, c)| partial_ops(m) / c)
            .fold(0.0, f64::max);
        let superstep = slowest_block
            + cost.g() * cost.h_relation(&traffic.h())?
            + cost.o() * traffic.busiest_messages()
            + cost.l();
        let terms = counts.iter().filter(|m| **m > 0).count();
        let root_sum = (terms as f64 - 1.0) / flops[root];
        let balanced = work(n) / flops.iter().sum::<f64>();
        Ok(Overhead {
            overhead_s: superstep + root_sum - balanced,
            // Not split: a calibrated compute factor scales the balanced term only.
            compute_s: 0.0,
            sequential_fraction: 0.0,
            ops_per_work: 1.0,
        })
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Vec<Array>> {
        if n == 0 {
            return Err(KernelError::InvalidInput("dot: N = 0: use N >= 1".into()));
        }
        let mut state = seed;
        let mut vector = |name: &str| {
            let data = (0..n).map(|_| uniform(&mut state)).collect();
            Array::vector(name, data)
        };
        Ok(vec![vector("x"), vector("y")])
    }

    fn run(&self, inputs: &[Array], backend: &Backend, machine: &Machine) -> Result<KernelRun> {
        let [x, y] = inputs else {
            return Err(KernelError::InvalidInput(
                "dot needs two vectors, x and y".into(),
            ));
        };
        let (x, y) = (x.to_vector(1)?, y.to_vector(1)?);
        if x.len() != y.len() {
            return Err(KernelError::InvalidInput(format!(
                "dot: x has {} elements but y has {}: give vectors of one length",
                x.len(),
                y.len()
            )));
        }
        let n = x.len();
        let counts = block_counts(n, &speeds(machine))?;
        let timed = timed_run(backend, machine, |ctx| node_program(ctx, &x, &y, &counts))?;
        let sum = root_result(timed.results)?;
        let verification =
            Verification::unless_skipped(timed.compute_skipped, || check(&x, &y, sum));
        Ok(KernelRun {
            kernel: "dot",
            n,
            p: machine.p(),
            work: work(n),
            time_s: timed.time_s,
            cluster_speed: machine.cluster_speed(),
            speed_unit: machine.speed_unit().to_owned(),
            result: Array::vector("dot", vec![sum]),
            verification,
            details: vec![("elements per node".into(), format!("{counts:?}"))],
            trace: timed.trace,
        })
    }
}

/// One node's part: its block's partial sum to the root, which adds them.
fn node_program(ctx: &mut Ctx<'_>, x: &[f64], y: &[f64], counts: &[usize]) -> Result<Option<f64>> {
    let root = ctx.rank(1)?;
    let me = ctx.pid();
    let start: usize = counts[..me].iter().sum();
    let block = start..start + counts[me];
    let partial = ctx.compute(partial_ops(counts[me]), || {
        x[block.clone()]
            .iter()
            .zip(&y[block.clone()])
            .map(|(a, b)| a * b)
            .sum::<f64>()
    })?;
    if me != root && counts[me] > 0 {
        ctx.send(root, 0, &[partial])?;
    }
    ctx.sync()?;
    if me != root {
        return Ok(None);
    }
    let mut terms = vec![partial];
    terms.extend(ctx.recv_all::<f64>()?.iter().map(|m| m.data[0]));
    let additions = terms.len() as f64 - 1.0;
    Ok(Some(ctx.compute(additions, || terms.iter().sum())?))
}

/// The sum against a sequential one, within the usual `N eps sum |x_i y_i|` bound.
fn check(x: &[f64], y: &[f64], sum: f64) -> Verification {
    let reference: f64 = x.iter().zip(y).map(|(a, b)| a * b).sum();
    let magnitude: f64 = x.iter().zip(y).map(|(a, b)| (a * b).abs()).sum();
    Verification::new(
        "|dot - sequential dot| / sum |x_i y_i|",
        (sum - reference).abs() / magnitude.max(f64::MIN_POSITIVE),
        2.0 * x.len() as f64 * f64::EPSILON,
    )
}

/// A uniform number in [-1, 1) from SplitMix64 (seeded, the same on every machine).
fn uniform(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}
