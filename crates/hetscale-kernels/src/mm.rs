//! `mm`: dense matrix multiplication `C = A B` with the row-based heterogeneous block
//! distribution of JPDC section 4.1.2.
//!
//! The root (the fastest node) sends each node its block of `N C_j / C` rows of `A`
//! (largest remainder, so a slow node may get none) and all of `B` in one superstep (the
//! paper's scatter and broadcast), every node multiplies its rows with faer, and the root
//! gathers `C`. There is no communication during the computation.
//!
//! - Work: `W(N) = 2 N^3` (every multiply-add counted as two operations); the implementation
//!   declares exactly `2 n_j N^2` on node `j`.
//! - Memory: node `j` holds `n_j N` of `A`, all of `B` and `n_j N` of `C`; the root holds the
//!   full `A`, `B` and `C` and multiplies in place.
//! - Overhead model: the exact HBSP^1 cost of the distribution superstep (the root injects
//!   every other node's rows and `B`) and of the compute-and-gather superstep, with the idle
//!   time of integer row counts; no sequential part.

use hbsp::{Backend, Ctx, Machine};
use hetscale_model::hbsp::Traffic;

use crate::array::{Array, square_operands};
use crate::charges::{Charges, IDLE};
use crate::error::Result;
use crate::input::product_operands;
use crate::kernel::{Kernel, KernelRun, Overhead, Verification, root_result, speeds, timed_run};
use crate::local::gemm;
use crate::matrix::Matrix;
use crate::partition::{block_counts, efficiency_detail, offsets};
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
                // The root works in place in its full A, B and C.
                let elements = if j == root {
                    3.0 * nf * nf
                } else {
                    2.0 * rows as f64 * nf + nf * nf
                };
                elements * F64
            })
            .collect())
    }

    /// Replays the program's supersteps (after the starting barrier): (1) the root sends
    /// every other node with rows its rows of `A` and all of `B`, two messages each; (2)
    /// every node multiplies its rows and sends them to the root (a node's integer row count
    /// makes its time differ from the balanced `W / C`); the root's unpacking at the end
    /// costs nothing. No sequential part.
    fn overhead(&self, n: usize, machine: &Machine) -> Result<Overhead> {
        let root = machine.ranking()[0];
        let counts = block_counts(n, &speeds(machine))?;
        let (mut distribute, mut collect) =
            (Traffic::idle(machine.p()), Traffic::idle(machine.p()));
        for (j, &rows) in counts.iter().enumerate().filter(|(_, r)| **r > 0) {
            let piece = rows as f64 * n as f64 * F64;
            distribute.add(root, j, piece);
            distribute.add(root, j, square(n) * F64);
            collect.add(j, root, piece);
        }
        let ops: Vec<f64> = counts.iter().map(|&r| 2.0 * r as f64 * square(n)).collect();
        let mut replay = Charges::new(machine);
        replay.superstep(IDLE, &distribute)?;
        replay.superstep(&ops, &collect)?;
        Ok(replay.overhead(work(n), work(n), 0.0))
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Vec<Array>> {
        crate::memory::check_inputs_fit(self, n)?;
        product_operands(n, seed)
    }

    fn run(&self, inputs: &[Array], backend: &Backend, machine: &Machine) -> Result<KernelRun> {
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

/// Runs `C = A B` on `machine` and verifies `C`.
pub fn multiply(a: &Matrix, b: &Matrix, backend: &Backend, machine: &Machine) -> Result<KernelRun> {
    let n = check_operands(a, b)?;
    let timed = timed_run(backend, machine, |ctx| node_program(ctx, a, b, n))?;
    let c = Matrix::new(n, n, root_result(timed.results)?)?;
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

const TAG_A: u32 = 0;
const TAG_B: u32 = 1;
const TAG_C: u32 = 2;

/// One node's part. Messages are moved, not copied, wherever the API allows: the root
/// multiplies straight from its input and into the full `C`, so the only copies are the
/// pieces it sends (the scatter and broadcast of JPDC 4.1.2, in one superstep).
fn node_program(ctx: &mut Ctx<'_>, a: &Matrix, b: &Matrix, n: usize) -> Result<Option<Vec<f64>>> {
    let root = ctx.rank(1)?;
    let counts = ctx.balanced_counts(n);
    let starts = offsets(&counts);
    let (me, rows) = (ctx.pid(), counts[ctx.pid()]);
    ctx.phase("distribute", |ctx| {
        if me == root {
            for j in (0..ctx.nprocs()).filter(|&j| j != root && counts[j] > 0) {
                ctx.send(
                    j,
                    TAG_A,
                    &a.as_slice()[starts[j] * n..(starts[j] + counts[j]) * n],
                )?;
                ctx.send(j, TAG_B, b.as_slice())?;
            }
        }
        ctx.sync()
    })?;
    let ops = 2.0 * rows as f64 * square(n);
    if me != root {
        let mut received = ctx.recv_all::<f64>()?.into_iter();
        let (a_rows, b_full) = match (received.next(), received.next()) {
            (Some(a), Some(b)) if a.tag == TAG_A && b.tag == TAG_B => (a.data, b.data),
            _ if rows == 0 => (Vec::new(), Vec::new()),
            _ => {
                return Err(crate::error::invalid(
                    "mm: the rows of A or B did not arrive",
                ));
            }
        };
        let mut c_rows = vec![0.0; rows * n];
        ctx.compute(ops, || {
            gemm((rows, n, n), &a_rows, &b_full, &mut c_rows, false)
        })?;
        ctx.phase("collect", |ctx| {
            if rows > 0 {
                ctx.send_vec(root, TAG_C, c_rows)?;
            }
            ctx.sync()
        })?;
        return Ok(None);
    }
    let mut c = vec![0.0; n * n];
    let own = starts[root] * n..(starts[root] + rows) * n;
    ctx.compute(ops, || {
        gemm(
            (rows, n, n),
            &a.as_slice()[own.clone()],
            b.as_slice(),
            &mut c[own.clone()],
            false,
        )
    })?;
    ctx.phase("collect", |ctx| ctx.sync())?;
    for message in ctx.recv_all::<f64>()? {
        let at = starts[message.source] * n;
        c[at..at + message.data.len()].copy_from_slice(&message.data);
    }
    Ok(Some(c))
}
