//! `mm`: dense matrix multiplication `C = A B` with the row-based heterogeneous block
//! distribution of JPDC section 4.1.2.
//!
//! The root (the fastest node) scatters `A` in blocks of `N C_j / C` rows (largest remainder,
//! so a slow node may get none), broadcasts `B`, every node multiplies its rows with faer, and
//! the root gathers `C`. There is no communication during the computation.
//!
//! - Work: `W(N) = 2 N^3` (every multiply-add counted as two operations); the implementation
//!   declares exactly `2 n_j N^2` on node `j`.
//! - Memory: node `j` holds `n_j N` of `A`, all of `B` and `n_j N` of `C`; the root also holds
//!   the full `A`, `B` and `C`.
//! - Overhead model: scatter + broadcast (the cheaper of one- and two-phase) + gather on the
//!   machine's HBSP^1 parameters, plus the starting barrier; no sequential part.

use hbsp::collectives::{BroadcastAlgorithm, Root, broadcast, gatherv, scatterv};
use hbsp::{Backend, Ctx, Machine};
use hetscale_model::hbsp as cost;

use crate::array::{Array, expect_arrays};
use crate::error::Result;
use crate::input::{Stream, matrix};
use crate::kernel::{
    Kernel, KernelRun, Overhead, Verification, barriers_s, root_result, speeds, timed_run,
};
use crate::local::gemm;
use crate::matrix::Matrix;
use crate::partition::{block_counts, efficiency_detail};
use crate::verify::product_check;

const F64: f64 = 8.0;

/// Matrix multiplication with the row-based heterogeneous block distribution.
#[derive(Debug, Clone, Copy, Default)]
pub struct MmKernel;

/// `W(N) = 2 N^3` (JPDC 4.1.2).
pub fn work(n: usize) -> f64 {
    2.0 * (n as f64).powi(3)
}

impl Kernel for MmKernel {
    fn name(&self) -> &'static str {
        "mm"
    }

    fn work(&self, n: usize) -> f64 {
        work(n)
    }

    fn counted_ops(&self, n: usize) -> f64 {
        work(n)
    }

    fn memory_per_node(&self, n: usize, machine: &Machine) -> Result<Vec<f64>> {
        let counts = block_counts(n, &speeds(machine))?;
        let root = machine.ranking()[0];
        let nf = n as f64;
        Ok(counts
            .iter()
            .enumerate()
            .map(|(j, &rows)| {
                let own = 2.0 * rows as f64 * nf + nf * nf;
                let inputs = if j == root { 3.0 * nf * nf } else { 0.0 };
                (own + inputs) * F64
            })
            .collect())
    }

    fn overhead(&self, n: usize, machine: &Machine) -> Result<Overhead> {
        let m = machine.cost_model();
        let root = machine.ranking()[0];
        let bytes: Vec<f64> = block_counts(n, &speeds(machine))?
            .iter()
            .map(|&rows| rows as f64 * n as f64 * F64)
            .collect();
        let matrix_bytes = (n * n) as f64 * F64;
        let pieces: Vec<f64> = machine.shares().iter().map(|c| c * matrix_bytes).collect();
        let bcast = cost::one_phase_broadcast_cost(&m, root, matrix_bytes)?
            .min(cost::two_phase_broadcast_cost(&m, root, &pieces)?);
        Ok(Overhead {
            overhead_s: cost::scatter_cost(&m, root, &bytes)?
                + bcast
                + cost::gather_cost(&m, root, &bytes)?
                + barriers_s(machine, 1.0),
            sequential_fraction: 0.0,
        })
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Vec<Array>> {
        crate::error::check_size("N", n, 1)?;
        Ok(vec![
            Array::matrix("A", matrix(n, n, seed, Stream::A)),
            Array::matrix("B", matrix(n, n, seed, Stream::B)),
        ])
    }

    fn run(&self, inputs: &[Array], backend: &Backend, machine: &Machine) -> Result<KernelRun> {
        let [a, b] = expect_arrays("mm", inputs, &["A", "B"])? else {
            unreachable!("expect_arrays checked the count")
        };
        multiply(
            &a.to_square_matrix()?,
            &b.to_square_matrix()?,
            backend,
            machine,
        )
    }
}

/// Checks that `A` and `B` are square of the same size; returns `N`.
pub(crate) fn check_operands(a: &Matrix, b: &Matrix) -> Result<usize> {
    let n = a.check_square("A")?;
    if b.check_square("B")? != n {
        return Err(crate::error::invalid(format!(
            "A is {n} x {n} but B is {} x {}: give matrices of the same size",
            b.rows(),
            b.cols()
        )));
    }
    Ok(n)
}

/// Runs `C = A B` on `machine` and verifies `C`.
pub fn multiply(a: &Matrix, b: &Matrix, backend: &Backend, machine: &Machine) -> Result<KernelRun> {
    let n = check_operands(a, b)?;
    let timed = timed_run(backend, machine, |ctx| node_program(ctx, a, b, n))?;
    let c = Matrix::new(n, n, root_result(timed.results))?;
    let verification =
        Verification::unless_skipped(timed.compute_skipped, || product_check(a, b, &c, 0x5eed));
    Ok(KernelRun {
        kernel: "mm",
        n,
        p: machine.p(),
        work: work(n),
        time_s: timed.time_s,
        cluster_speed: machine.cluster_speed(),
        speed_unit: machine.speed_unit().to_owned(),
        result: Array::matrix("C", c),
        verification,
        details: vec![efficiency_detail(
            &block_counts(n, &speeds(machine))?,
            &speeds(machine),
        )],
        trace: timed.trace,
    })
}

fn node_program(ctx: &mut Ctx<'_>, a: &Matrix, b: &Matrix, n: usize) -> Result<Option<Vec<f64>>> {
    let root = Root::Fastest;
    let is_root = ctx.pid() == ctx.rank(1)?;
    let elements: Vec<usize> = ctx.balanced_counts(n).iter().map(|r| r * n).collect();
    let (a_all, b_all) = if is_root {
        (a.as_slice(), b.as_slice())
    } else {
        (&[][..], &[][..])
    };
    let (a_rows, b_full) = ctx.phase("distribute", |ctx| {
        let a_rows = scatterv(ctx, root, a_all, &elements)?.value;
        let b_full = broadcast(ctx, root, b_all, BroadcastAlgorithm::Auto)?.value;
        Ok::<_, hbsp::HbspError>((a_rows, b_full))
    })?;
    let rows = a_rows.len() / n;
    let mut c_rows = vec![0.0; rows * n];
    ctx.compute(2.0 * (rows * n * n) as f64, || {
        gemm((rows, n, n), &a_rows, &b_full, &mut c_rows, false)
    })?;
    let c = ctx.phase("collect", |ctx| gatherv(ctx, root, &c_rows, &elements))?;
    Ok(c.value)
}
