//! `mm`: dense matrix multiplication `C = A B` with the row-based heterogeneous block
//! distribution of JPDC section 4.1.2.
//!
//! Process 0 (here the fastest node) scatters blocks of `N C_j / C` rows of `A` (largest
//! remainder, so a slow node may get none) with `scatterv`, distributes all of `B` with one
//! `broadcast`, every node multiplies its rows with faer, and process 0 collects `C` with
//! `gatherv`. There is no communication during the computation.
//!
//! - Work: `W(N) = 2 N^3` (every multiply-add counted as two operations); the implementation
//!   declares exactly `2 n_j N^2` on node `j`.
//! - Memory: node `j` holds `n_j N` of `A`, all of `B` and `n_j N` of `C`; the root also
//!   holds the full `A`, `B` and `C`, and its own copy of `B` from the broadcast.
//! - Overhead model: the exact HBSP^1 cost of the scatter, of the broadcast (one or two
//!   supersteps, as `BroadcastAlgorithm::Auto` chooses on the machine) and of the
//!   compute-and-gather superstep, with the idle time of integer row counts; no sequential
//!   part.
//!
//! Skeleton runs (sim with the compute blocks skipped) hold no matrix: the collectives move
//! sizes only (`hbsp`'s `*_zeros` collectives, charged like the data) and
//! [`MmKernel::skeleton_inputs`] gives the size alone, so their memory does not grow with
//! `N^2`.

use hbsp::collectives::{
    BroadcastAlgorithm, Root, broadcast_in_place, broadcast_zeros, gatherv, gatherv_zeros,
    scatterv_in_place, scatterv_zeros,
};
use hbsp::{Backend, Ctx, Machine};

use crate::array::{Array, square_operands};
use crate::charges::{self, Charges, IDLE};
use crate::error::{KernelError, Result};
use crate::input::product_operands;
use crate::kernel::{
    Kernel, KernelRun, Overhead, Verification, root_result, size_only, skeleton, skeleton_size,
    speeds, timed_run,
};
use crate::local::gemm;
use crate::matrix::Matrix;
use crate::partition::{block_counts, efficiency_detail};
use crate::verify::product_check;

const F64: f64 = 8.0;

/// Matrix multiplication with the row-based heterogeneous block distribution.
#[derive(Debug, Clone, Copy, Default)]
pub struct MmKernel;

/// `N^2` without overflowing (models and estimates run at any `N`).
fn square(n: usize) -> f64 {
    (n as f64).powi(2)
}

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

    /// `A` and `B`.
    fn input_bytes(&self, n: usize) -> f64 {
        2.0 * square(n) * F64
    }

    /// Freivalds' check: a handful of vectors of length `N`.
    fn verification_bytes(&self, n: usize) -> f64 {
        8.0 * n as f64 * F64
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
                // The root also keeps the full A, B and the assembled C.
                let full = if j == root { 3.0 * nf * nf } else { 0.0 };
                (own + full) * F64
            })
            .collect())
    }

    /// Replays the program's supersteps (after the starting barrier): (1) the scatter of
    /// `A`'s rows, (2) the broadcast of `B` (one or two supersteps), (3) every node
    /// multiplies its rows and the gather brings them to the root (a node's integer row
    /// count makes its time differ from the balanced `W / C`). No sequential part.
    fn overhead(&self, n: usize, machine: &Machine) -> Result<Overhead> {
        let root = machine.ranking()[0];
        let counts = block_counts(n, &speeds(machine))?;
        let pieces: Vec<f64> = counts.iter().map(|&r| (r * n) as f64 * F64).collect();
        let ops: Vec<f64> = counts.iter().map(|&r| 2.0 * r as f64 * square(n)).collect();
        let mut replay = Charges::new(machine);
        replay.collective("scatterv", 0, IDLE, &charges::scatterv(root, &pieces))?;
        let b_items = n
            .checked_mul(n)
            .ok_or_else(|| crate::error::invalid(format!("mm: N = {n} is too large to model")))?;
        for (k, phase) in charges::broadcast(machine, root, b_items, F64)?
            .iter()
            .enumerate()
        {
            replay.collective("broadcast", k, IDLE, phase)?;
        }
        replay.collective("gatherv", 0, &ops, &charges::gatherv(root, &pieces))?;
        Ok(replay.overhead(work(n), work(n), 0.0))
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Vec<Array>> {
        crate::memory::check_inputs_fit(self, n)?;
        product_operands(n, seed)
    }

    /// The size alone: a skeleton run moves sizes and reads no value.
    fn skeleton_inputs(&self, n: usize, _seed: u64) -> Result<Vec<Array>> {
        crate::error::check_size("N", n, 1)?;
        Ok(vec![size_only(n)])
    }

    /// Per node its row counts: nothing of size `N^2`.
    fn skeleton_bytes(&self, n: usize, machine: &Machine) -> Result<Option<f64>> {
        Ok(Some(self.overhead_bytes(n, machine)?))
    }

    fn run(&self, inputs: &[Array], backend: &Backend, machine: &Machine) -> Result<KernelRun> {
        if let Some(n) = skeleton_size("mm", inputs, backend, "A and B")? {
            return execute(None, n, backend, machine);
        }
        let (a, b) = square_operands("mm", inputs)?;
        multiply(&a, &b, backend, machine)
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

/// Runs `C = A B` on `machine` and verifies `C` (a skeleton run moves sizes only).
pub fn multiply(a: &Matrix, b: &Matrix, backend: &Backend, machine: &Machine) -> Result<KernelRun> {
    let n = check_operands(a, b)?;
    execute(Some((a, b)), n, backend, machine)
}

/// Runs `C = A B` at size `n`: on `operands` (then `C` is verified), or in a skeleton run on
/// sizes alone.
fn execute(
    operands: Option<(&Matrix, &Matrix)>,
    n: usize,
    backend: &Backend,
    machine: &Machine,
) -> Result<KernelRun> {
    let (c, verification, trace, time_s) = match operands.filter(|_| !skeleton(backend)) {
        Some((a, b)) => {
            let timed = timed_run(backend, machine, |ctx| node_program(ctx, a, b, n))?;
            let c = Matrix::new(n, n, root_result(timed.results)?)?;
            let verification = Verification::unless_skipped(timed.compute_skipped, || {
                product_check(a, b, &c, 0x5eed)
            });
            (c, verification, timed.trace, timed.time_s)
        }
        None => {
            let timed = timed_run(backend, machine, |ctx| skeleton_program(ctx, n))?;
            // No C of N^2 values.
            let c = Matrix::new(0, 0, Vec::new())?;
            (c, Verification::skipped(), timed.trace, timed.time_s)
        }
    };
    Ok(KernelRun {
        kernel: "mm",
        n,
        p: machine.p(),
        work: work(n),
        time_s,
        cluster_speed: machine.cluster_speed(),
        speed_unit: machine.speed_unit().to_owned(),
        result: Array::matrix("C", c),
        verification,
        details: vec![efficiency_detail(
            &block_counts(n, &speeds(machine))?,
            &speeds(machine),
        )],
        trace,
    })
}

/// One node's part, as JPDC 4.1.2 describes it: process 0 (here the fastest node)
/// scatters the rows of `A`, distributes `B` to every node with one broadcast, every node
/// multiplies its rows, and process 0 collects `C` with a gather. As MPI codes do, the
/// program calls collectives, so a machine model with measured collectives (section 4.5's
/// `T_broadcast`, `T_send`, `T_recv`) charges them as the paper's machine ran them.
fn node_program(ctx: &mut Ctx<'_>, a: &Matrix, b: &Matrix, n: usize) -> Result<Option<Vec<f64>>> {
    let root = ctx.rank(1)?;
    let rows = ctx.balanced_counts(n);
    let elements: Vec<usize> = rows.iter().map(|&r| r * n).collect();
    // In place: the root multiplies straight from A and B, as an MPI code would with
    // MPI_IN_PLACE, instead of copying megabytes into fresh vectors first.
    let (a_rows, b_full) = ctx.phase("distribute", |ctx| {
        let a_rows = scatterv_in_place(ctx, Root::Pid(root), a.as_slice(), &elements)?.value;
        let b_full =
            broadcast_in_place(ctx, Root::Pid(root), b.as_slice(), BroadcastAlgorithm::Auto)?.value;
        Ok::<_, KernelError>((a_rows, b_full))
    })?;
    let mine = rows[ctx.pid()];
    let mut c_rows = vec![0.0; mine * n];
    ctx.compute(2.0 * mine as f64 * square(n), || {
        gemm((mine, n, n), &a_rows, &b_full, &mut c_rows, false)
    })?;
    let c = ctx.phase("collect", |ctx| {
        gatherv(ctx, Root::Pid(root), &c_rows, &elements)
    })?;
    Ok(c.value)
}

/// [`node_program`] on sizes alone: the same collectives and declared work, no matrix.
fn skeleton_program(ctx: &mut Ctx<'_>, n: usize) -> Result<()> {
    let root = Root::Pid(ctx.rank(1)?);
    let rows = ctx.balanced_counts(n);
    // Saturated sizes (an absurd N) are refused by the collectives, in one line.
    let elements: Vec<usize> = rows.iter().map(|&r| r.saturating_mul(n)).collect();
    ctx.phase("distribute", |ctx| {
        scatterv_zeros::<f64>(ctx, root, &elements)?;
        let b = n.saturating_mul(n);
        broadcast_zeros::<f64>(ctx, root, b, BroadcastAlgorithm::Auto)?;
        Ok::<_, KernelError>(())
    })?;
    ctx.charge_work(2.0 * rows[ctx.pid()] as f64 * square(n))?;
    ctx.phase("collect", |ctx| gatherv_zeros::<f64>(ctx, root, &elements))?;
    Ok(())
}
