//! `ge`: Gaussian elimination solving `A x = b` with the row-based heterogeneous cyclic
//! distribution of JPDC section 4.1.1.
//!
//! The root (the fastest node) sends every node its rows of the augmented matrix `[A | b]`,
//! dealt by [`crate::partition::cyclic_owners`]. Step `i = 0..N-2`: the node owning the pivot
//! row broadcasts its columns `i..N`, and every node eliminates column `i` from its rows that
//! have not been pivot rows yet. The root then gathers the rows and back-substitutes.
//!
//! - [`Pivoting::Partial`] (the default): before each broadcast the nodes find the largest
//!   `|a_ji|` among all remaining rows (ties to the lower row) with an allreduce of each
//!   node's candidate `(|a_ji|, j)` under "max location", as `MPI_Allreduce` with
//!   `MPI_MAXLOC` does. That moves O(p) messages per step, where an allgather of the
//!   candidates moves p (p - 1): on thousands of nodes the simulated program would spend its
//!   time delivering them. Rows are not moved: the pivot order is recorded and back
//!   substitution follows it, so the cyclic distribution is kept. Three supersteps per step
//!   (the allreduce's two; the broadcast of columns `i..=N`, in which the previous step's
//!   elimination runs), four when the broadcast is two-phase.
//! - [`Pivoting::None`]: the paper's program; row `i` is the pivot of step `i`. Seeded inputs
//!   are made diagonally dominant so it is stable. The paper's code is not published, but
//!   its overhead is: JPDC 4.5 charges `T_o = N (2 T_broadcast + T_barrier)`, two broadcasts
//!   and a barrier per elimination step, and its step (2.2) is "Synchronize all processes".
//!   So each step broadcasts the pivot row's `A` part (columns `i..N-1`) from its owner, then
//!   its `b` value as a second broadcast, eliminates, and ends with a plain barrier
//!   (`ctx.sync()`): three supersteps per step when the broadcasts are one-phase. A program
//!   with one broadcast per step would be faster than the machine the paper measured, and its
//!   `T_o` would not be the one the paper fitted. The values and the arithmetic are those of
//!   one broadcast of columns `i..=N`, so the result is the same bit for bit.
//!
//! - **Blocks** ([`GeKernel::block`] `= b > 1`, [`Pivoting::None`] only; `b = 1`, the
//!   default, is the program above): the rows are dealt block-cyclically, blocks of `b`
//!   consecutive rows (the last one `N - (B - 1) b` rows when `b` does not divide `N`,
//!   `B = ceil(N / b)` blocks) over the heterogeneous cyclic distribution
//!   ([`crate::partition::block_cyclic_owners`]), so every prefix of blocks is split within
//!   one block of the speed proportions. Block step `k = 0..B-1` (rows `lo..hi = k b..k b + b`)
//!   is one superstep (two when the broadcast is two-phase): every node eliminates the
//!   columns of block `k - 1` (received in the previous step) from its rows of the blocks
//!   `>= k`; the owner of block `k`, whose rows now hold every earlier update, eliminates
//!   within the block (row `r` the columns `lo..r`); and it broadcasts the block's `b` pivot
//!   rows, columns `lo..=N` (`b (N + 1 - lo)` values, `b` included), in one broadcast. Both
//!   computations are one compute block. The last block is not broadcast: its compute lands
//!   in the gather's superstep, and the root checks its pivots when it back-substitutes. No
//!   barrier beyond the broadcast's is needed: a step's pivot rows arrive with the sync that
//!   ends its broadcast, and the next step's compute precedes the next broadcast. So about
//!   `N / b` supersteps instead of `3 N`. Each row meets the same operations on the same
//!   values in the same order as in the row-cyclic program, so `x` is the same bit for bit.
//!   BSP cost: `sum_k [max_j w_jk + g max_j r_j h_jk + L]` (a two-phase broadcast adds a
//!   superstep and its `L`), with `w_jk` node `j`'s rows of blocks `>= k` times
//!   [`columns_flops`] of block `k - 1`, plus [`within_block_flops`] `~ b^2 (N - lo)` on
//!   the owner, and `h_jk` the broadcast's `8 b (N + 1 - lo)` bytes (times `p - 1` at the
//!   root when one-phase). The owner's within-block elimination is work the others wait
//!   for: about `b N^2 / 2` operations on the critical path, `~ 3 b p / (4 N)` of the
//!   balanced compute time, the price of `b`-fold fewer supersteps (no look-ahead). With
//!   fewer blocks than nodes (`N / b < p`) some nodes own none and wait throughout.
//!
//! Work: `W(N) = 2/3 N^3 - 1/2 N^2 - 19/6 N + 3` as published (JPDC 4.1.1), and a run
//! declares exactly that. The implementation performs `2/3 N^3 + 3/2 N^2 - 7/6 N` flops
//! ([`flops`]): step `i` costs `1 + 2 (N - i)` per remaining row (one division for the
//! multiplier, a multiply and a subtraction for each of the columns `i+1..N-1` and `b`), back
//! substitution `N^2`. The published formula is smaller by `2 N^2 + 2 N - 3` (it gives
//! `W(2) = 0`), under 1% of `W` for `N >= 300`, so each compute block declares its flops
//! times `W(N) / flops(N)` ([`work_per_flop`]): one `W`, declared and reported alike, and
//! `E_s` on the simulator never exceeds 1. Pivot searches are comparisons and are not counted.
//!
//! Overhead model (JPDC 4.5 on HBSP^1, exact): scatter of the rows + per step (with pivoting,
//! the allreduce of the candidates and the broadcast of `N + 1 - i` values from the row's
//! owner; without, the broadcasts of `N - i` and of 1 value and the barrier ending the
//! elimination; with blocks, per block step the broadcast of the block's pivot rows with the
//! step's compute) + gather, each superstep with its barrier, plus the idle time of each
//! step's uneven remaining rows (and with blocks the owner's within-block elimination);
//! sequential fraction `N^2 / flops` (back substitution on the root). Below 100,000
//! node-steps (`N p`, or `B p` with blocks) the model replays every step and is exact
//! (equal to `sim`'s clock up to rounding). Past it, so a prediction at thousands of nodes
//! stays fast: the row-cyclic model replays every `stride`-th step for the `stride` it
//! stands for, from the distribution's prefix property; the blocked model keeps the exact
//! owners and every step's compute (`O(log p)` a step) and samples only the broadcasts, one
//! per `stride` steps. Against `sim` it stays within 2e-4 at `N = 100000`, `p = 4096`,
//! `b = 64` (`sim`'s time from
//! `cargo bench -p hetscale-kernels --bench ge_sim_scale -- 100000 4096 64 --only-largest`;
//! both in docs/validation.md, "The simulator at scale") and within 1e-3 on 384 nodes of
//! unequal `r_j` (`tests/overhead_model.rs`).
//!
//! Skeleton runs (sim with the compute blocks skipped) hold no row: the scatter, the pivot
//! rows' broadcasts and the gather move sizes only (`hbsp`'s `*_zeros` collectives, charged
//! like the data; with blocks, one `broadcast_zeros` of the block's size per step), pivots
//! are taken in natural order, and [`GeKernel::skeleton_inputs`] gives
//! the size alone, so their memory does not grow with `N^2`.

use hbsp::collectives::{Root, scatterv, scatterv_zeros};
use hbsp::{Backend, Ctx, Machine};

use crate::array::{Array, expect_arrays};
use crate::charges::{self, Charges, IDLE};
use crate::error::{Result, check_size, invalid};
use crate::input::{Stream, matrix, uniform};
use crate::kernel::{
    Kernel, KernelRun, Overhead, Verification, root_result, size_only, skeleton, skeleton_size,
    speeds, timed_run,
};
use crate::matrix::Matrix;
use crate::partition::{block_cyclic_owners, efficiency_detail};
use crate::verify::max_or_nan;

mod elimination;
mod model;
mod pivoting;

use elimination::owned_rows;
pub(crate) use elimination::{Elimination, LocalRows, max_location, not_finite, singular};
pub use elimination::{columns_flops, within_block_flops};
use model::flow_bytes;
#[cfg(test)]
use model::{EXACT_REPLAY_NODE_STEPS, replay_stride};
pub(crate) use model::{SolveModel, elimination_trace_bytes};
use pivoting::F64;
pub use pivoting::Pivoting;

/// Gaussian elimination with back substitution.
#[derive(Debug, Clone, Copy)]
pub struct GeKernel {
    /// Pivot choice.
    pub pivoting: Pivoting,
    /// Rows per block of the distribution: 1 (the default) is the paper's row-cyclic program;
    /// `b > 1` deals blocks of `b` consecutive rows and makes one broadcast per block (see the
    /// module docs; it needs [`Pivoting::None`]).
    pub block: usize,
}

impl Default for GeKernel {
    fn default() -> Self {
        Self {
            pivoting: Pivoting::default(),
            block: 1,
        }
    }
}

impl GeKernel {
    /// Checks the options that do not depend on `N`: a block of at least one row, and
    /// partial pivoting only with `block = 1`.
    pub fn check_options(&self) -> Result<()> {
        if self.block == 0 {
            return Err(invalid(
                "ge block 0: give a block of at least 1 row (1 is the paper's row-cyclic GE)",
            ));
        }
        if self.block > 1 && self.pivoting == Pivoting::Partial {
            return Err(invalid(format!(
                "partial pivoting needs block = 1: use pivoting none with block {}, or block 1",
                self.block
            )));
        }
        Ok(())
    }

    /// [`GeKernel::check_options`], and a block of at most `N` rows.
    fn check_block(&self, n: usize) -> Result<()> {
        self.check_options()?;
        if self.block > n {
            return Err(invalid(format!(
                "ge block {} exceeds N = {n}: give a block of at most N rows",
                self.block
            )));
        }
        Ok(())
    }
}

/// `W(N) = 2/3 N^3 - 1/2 N^2 - 19/6 N + 3`, as published (JPDC 4.1.1).
pub fn work(n: usize) -> f64 {
    let n = n as f64;
    (4.0 * n.powi(3) - 3.0 * n * n - 19.0 * n + 18.0) / 6.0
}

/// Flops this implementation performs: `2/3 N^3 + 3/2 N^2 - 7/6 N`.
pub fn flops(n: usize) -> f64 {
    let n = n as f64;
    (4.0 * n.powi(3) + 9.0 * n * n - 7.0 * n) / 6.0
}

/// Work each flop of the implementation declares, `W(N) / flops(N)`, so the blocks of a run
/// declare exactly `W(N)` between them (0 for `N <= 2`, where the published `W` vanishes).
pub fn work_per_flop(n: usize) -> f64 {
    if n == 0 { 0.0 } else { work(n) / flops(n) }
}

impl Kernel for GeKernel {
    fn name(&self) -> &'static str {
        "ge"
    }

    fn work(&self, n: usize) -> f64 {
        work(n)
    }

    fn counted_ops(&self, n: usize) -> f64 {
        work(n)
    }

    /// `A` and `b`.
    fn input_bytes(&self, n: usize) -> f64 {
        let n = n as f64;
        (n * n + n) * F64
    }

    /// The residual: vectors of length `N`.
    fn verification_bytes(&self, n: usize) -> f64 {
        2.0 * n as f64 * F64
    }

    /// A node's rows of `[A | b]` and the pivot row; the root also
    /// holds its copy of `A` and `b`, the packed rows it scatters, the gathered rows and `x`.
    /// Row counts are the cyclic distribution's totals, which the speeds' integer shares give
    /// within one row (the owners of all `N` rows are not built: `N` may be absurd here); with
    /// blocks, the shares of the blocks, `b` rows each.
    fn memory_per_node(&self, n: usize, machine: &Machine) -> Result<Vec<f64>> {
        let block = self.block.max(1);
        let shares: Vec<usize> =
            hetscale_model::hbsp::integer_shares(n.div_ceil(block), &speeds(machine))?
                .into_iter()
                .map(|blocks| blocks.saturating_mul(block).min(n))
                .collect();
        let root = machine.ranking()[0];
        let (nf, width) = (n as f64, n as f64 + 1.0);
        Ok(shares
            .iter()
            .enumerate()
            .map(|(j, &rows)| {
                let root_copy = if j == root {
                    nf * width + 2.0 * nf * width + nf
                } else {
                    0.0
                };
                ((rows as f64 + 1.0) * width + width + root_copy) * F64
            })
            .collect())
    }

    /// Replays the program's supersteps (after the starting barrier): the scatter of the
    /// rows, then the solve as `SolveModel::replay` does it (back substitution on the root
    /// is the sequential part). On real data partial pivoting changes which node broadcasts
    /// each step and whose rows remain, which the model cannot know (about 1% on seeded
    /// inputs).
    ///
    /// With blocks, at `N < b` (where a run is refused) the model is that of one block of
    /// `N` rows, so a search over `N` (approach 3) may start below `b`.
    fn overhead(&self, n: usize, machine: &Machine) -> Result<Overhead> {
        check_size("N", n, 1)?;
        self.check_options()?;
        let root = machine.ranking()[0];
        let solve = SolveModel {
            n,
            pivoting: self.pivoting,
            block: self.block.min(n),
            work_per_flop: work_per_flop(n),
        };
        let mut replay = Charges::new(machine);
        replay.collective(
            "scatterv",
            0,
            IDLE,
            &charges::scatterv(root, &solve.row_bytes(machine)?),
        )?;
        let sequential = solve.replay(&mut replay, machine, Vec::new(), 0.0)?;
        Ok(replay.overhead(work(n), work(n), sequential))
    }

    /// A few vectors per node; with blocks also the owner of every block and a heap of the
    /// nodes (see the overhead model in the module docs).
    fn overhead_bytes(&self, n: usize, machine: &Machine) -> Result<f64> {
        let p = machine.p() as f64;
        // The heap holds an entry per node and one per block step (stale ones stay).
        let blocks = if self.block > 1 {
            let count = n.div_ceil(self.block) as f64;
            F64 * count + 16.0 * (p + count)
        } else {
            0.0
        };
        Ok(crate::kernel::OVERHEAD_BYTES_PER_NODE * p + blocks)
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Vec<Array>> {
        check_size("N", n, 1)?;
        self.check_block(n)?;
        crate::memory::check_inputs_fit(self, n)?;
        let mut a = matrix(n, n, seed, Stream::A);
        if self.pivoting == Pivoting::None {
            make_diagonally_dominant(&mut a);
        }
        Ok(vec![
            Array::matrix("A", a),
            Array::vector("b", uniform(n, seed, Stream::Rhs)),
        ])
    }

    /// The size alone: a skeleton run moves sizes and reads no value.
    fn skeleton_inputs(&self, n: usize, _seed: u64) -> Result<Vec<Array>> {
        check_size("N", n, 1)?;
        self.check_block(n)?;
        Ok(vec![size_only(n)])
    }

    /// Per node its rows' indices and flags, the pivot order and its trace; the owners of
    /// the rows and `x`: nothing of size `N^2`. With blocks no node keeps a pivot order
    /// (the root makes the natural one): per node its rows and the `p` counts of the
    /// collectives.
    fn skeleton_bytes(&self, n: usize, machine: &Machine) -> Result<Option<f64>> {
        let (nf, p) = (n as f64, machine.p() as f64);
        let per_node = if self.block > 1 {
            F64 * (p + nf / p + 1.0)
        } else {
            2.0 * F64 * nf
        };
        let shared = 3.0 * F64 * nf;
        Ok(Some(
            p * per_node + shared + self.overhead_bytes(n, machine)?,
        ))
    }

    /// A few supersteps per elimination step (per block step with blocks), which on many
    /// nodes outweighs small matrices.
    fn trace_bytes(&self, n: usize, machine: &Machine) -> Result<f64> {
        if self.block > 1 {
            let p = machine.p() as f64;
            // Up to two supersteps per block step (a two-phase broadcast) and a flow to every
            // node in each, where flows are recorded.
            let steps = n.div_ceil(self.block) as f64;
            return Ok(steps * p * (2.0 * 256.0 + flow_bytes(2.0, machine.p())));
        }
        Ok(elimination_trace_bytes(n, self.pivoting, machine))
    }

    fn run(&self, inputs: &[Array], backend: &Backend, machine: &Machine) -> Result<KernelRun> {
        if let Some(n) = skeleton_size("ge", inputs, backend, "A and b")? {
            self.check_block(n)?;
            return execute(None, n, *self, backend, machine);
        }
        let [a, b] = expect_arrays("ge", inputs, &["A", "b"])? else {
            unreachable!("expect_arrays checked the count")
        };
        let a = a.to_square_matrix()?;
        let b = b.to_vector(1)?;
        let n = check_system(&a, &b)?;
        self.check_block(n)?;
        execute(Some((&a, &b)), n, *self, backend, machine)
    }
}
/// Adds `N` to each diagonal element, so `|a_ii| > sum_{j != i} |a_ij|` for entries in `[-1, 1)`.
fn make_diagonally_dominant(a: &mut Matrix) {
    let n = a.rows();
    for i in 0..n {
        a.as_mut_slice()[i * n + i] += n as f64;
    }
}

/// Solves `A x = b` on `machine` and verifies the residual (a skeleton run moves sizes
/// only).
pub fn solve(
    a: &Matrix,
    b: &[f64],
    pivoting: Pivoting,
    backend: &Backend,
    machine: &Machine,
) -> Result<KernelRun> {
    let n = check_system(a, b)?;
    let kernel = GeKernel { pivoting, block: 1 };
    execute(Some((a, b)), n, kernel, backend, machine)
}

/// `N`, when `A` is `N x N` and `b` has `N` elements.
fn check_system(a: &Matrix, b: &[f64]) -> Result<usize> {
    let n = a.check_square("A")?;
    if b.len() != n {
        return Err(invalid(format!(
            "A is {n} x {n} but b has {} elements: give b of length {n}",
            b.len()
        )));
    }
    Ok(n)
}

/// Solves at size `n`: `A x = b` for `system` (then the residual is checked), or in a
/// skeleton run on sizes alone.
fn execute(
    system: Option<(&Matrix, &[f64])>,
    n: usize,
    kernel: GeKernel,
    backend: &Backend,
    machine: &Machine,
) -> Result<KernelRun> {
    let GeKernel { pivoting, block } = kernel;
    let owners = block_cyclic_owners(n, block, &speeds(machine))?;
    let problem = Problem {
        system: system.filter(|_| !skeleton(backend)),
        elimination: Elimination {
            n,
            owners: &owners,
            pivoting,
            block,
            skeleton: skeleton(backend),
            work_per_flop: work_per_flop(n),
        },
    };
    let timed = timed_run(backend, machine, |ctx| problem.node_program(ctx))?;
    let x = root_result(timed.results)?;
    let (verification, residual) = match problem.system {
        Some((a, b)) if !timed.compute_skipped => residual_check(a, b, &x),
        _ => (Verification::skipped(), f64::NAN),
    };
    Ok(KernelRun {
        kernel: "ge",
        n,
        p: machine.p(),
        work: work(n),
        time_s: timed.time_s,
        cluster_speed: machine.cluster_speed(),
        speed_unit: machine.speed_unit().to_owned(),
        result: Array::vector("x", x),
        verification,
        details: vec![
            ("pivoting".into(), pivoting.name().into()),
            efficiency_detail(&owned_rows(&owners, machine.p()), &speeds(machine)),
        ]
        .into_iter()
        // The row-cyclic program's details stay as they were.
        .chain((block > 1).then(|| ("block".into(), block.to_string())))
        .chain(
            // A skeleton run computed no x to check.
            residual
                .is_finite()
                .then(|| ("residual ||Ax - b||_inf".into(), format!("{residual:.3e}"))),
        )
        .collect(),
        trace: timed.trace,
    })
}

/// Normwise backward error `||A x - b|| / (||A|| ||x|| + ||b||)` (infinity norms), which a
/// backward-stable solver keeps near `eps`; also returns `||A x - b||`.
pub(crate) fn residual_check(a: &Matrix, b: &[f64], x: &[f64]) -> (Verification, f64) {
    let n = a.rows();
    let inf = |v: &[f64]| max_or_nan(v.iter().map(|e| e.abs()));
    let residual: Vec<f64> = (0..n)
        .map(|i| a.row(i).iter().zip(x).map(|(a, x)| a * x).sum::<f64>() - b[i])
        .collect();
    let norm_a = max_or_nan((0..n).map(|i| a.row(i).iter().map(|e| e.abs()).sum::<f64>()));
    let r = inf(&residual);
    let denominator = norm_a * inf(x) + inf(b);
    // An infinite or NaN denominator (x or A not finite) must fail the check, not divide the
    // residual down to 0.
    let error = if !denominator.is_finite() {
        f64::NAN
    } else if denominator > 0.0 {
        r / denominator
    } else {
        r
    };
    let check = Verification::new(
        "normwise backward error ||Ax - b|| / (||A|| ||x|| + ||b||)",
        error,
        64.0 * n.max(16) as f64 * f64::EPSILON,
    );
    (check, r)
}

/// `ge`'s program: the root scatters the rows of `[A | b]`, then [`Elimination::solve`].
struct Problem<'a> {
    /// `A` and `b`; `None` in a skeleton run, which moves sizes only.
    system: Option<(&'a Matrix, &'a [f64])>,
    elimination: Elimination<'a>,
}

impl Problem<'_> {
    fn node_program(&self, ctx: &mut Ctx<'_>) -> Result<Option<Vec<f64>>> {
        let root = Root::Pid(ctx.rank(1)?);
        let elimination = &self.elimination;
        let counts = elimination.counts(ctx.nprocs());
        let global = elimination.rows_of(ctx.pid());
        let Some((a, b)) = self.system else {
            ctx.phase("distribute", |ctx| {
                scatterv_zeros::<f64>(ctx, root, &counts)
            })?;
            // `p` counts on each of `p` nodes: not kept through the elimination.
            drop(counts);
            return elimination.solve(ctx, LocalRows::without_values(global));
        };
        let packed = if Root::Pid(ctx.pid()) == root {
            self.pack_by_owner(a, b, ctx.nprocs())
        } else {
            Vec::new()
        };
        let data = ctx.phase("distribute", |ctx| scatterv(ctx, root, &packed, &counts))?;
        drop(counts);
        elimination.solve(ctx, LocalRows::new(global, data.value))
    }

    /// `[A | b]` rows grouped by owner, each group in ascending row order.
    fn pack_by_owner(&self, a: &Matrix, b: &[f64], p: usize) -> Vec<f64> {
        let n = self.elimination.n;
        let mut packed = Vec::with_capacity(n * (n + 1));
        for pid in 0..p {
            for i in self.elimination.rows_of(pid) {
                packed.extend_from_slice(a.row(i));
                packed.push(b[i]);
            }
        }
        packed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_at_scale_replays_a_bounded_sample_of_its_steps() {
        // Blocked GE at N = 100,000, b = 64 on 4096 nodes: 1563 block steps of O(p) each
        // would be 6.4e6 node-steps; the sample keeps about EXACT_REPLAY_NODE_STEPS.
        for (steps, p) in [
            (1563usize, 4096usize),
            (100_000, 4096),
            (1_000_000, 1024),
            (10, 2),
        ] {
            let replayed = steps.div_ceil(replay_stride(steps, p));
            assert!(
                replayed * p <= EXACT_REPLAY_NODE_STEPS + p,
                "{steps} steps on {p} nodes replay {replayed}"
            );
            assert!(replayed >= 1);
        }
        assert_eq!(
            replay_stride(1000, 2),
            1,
            "small models are replayed exactly"
        );
    }

    #[test]
    fn max_location_takes_the_largest_value_then_the_lower_row_in_any_order() {
        let none = [-1.0, -1.0];
        let candidates = [[0.5, 3.0], [2.0, 7.0], none, [2.0, 4.0], [1.0, 0.0]];
        for start in 0..candidates.len() {
            let rotated = candidates.iter().cycle().skip(start).take(candidates.len());
            let best = rotated.copied().reduce(max_location).unwrap();
            assert_eq!(best, [2.0, 4.0], "rotation {start}");
        }
        assert_eq!(max_location(none, none), none);
        assert!(max_location([f64::NAN, 5.0], [9.0, 1.0])[0].is_nan());
    }

    #[test]
    fn the_blocked_flops_are_the_row_cyclic_ones_regrouped() {
        for n in 1..40usize {
            for b in 1..=n {
                let by_hand_columns =
                    |lo: usize, hi: usize| -> usize { (lo..hi).map(|c| 1 + 2 * (n - c)).sum() };
                let by_hand_within = |lo: usize, hi: usize| -> usize {
                    (lo..hi).map(|c| (hi - 1 - c) * (1 + 2 * (n - c))).sum()
                };
                // Block k's own elimination, and its columns from every row below it.
                let mut total = n * n;
                for lo in (0..n).step_by(b) {
                    let hi = (lo + b).min(n);
                    assert_eq!(columns_flops(n, lo, hi), by_hand_columns(lo, hi) as f64);
                    assert_eq!(within_block_flops(n, lo, hi), by_hand_within(lo, hi) as f64);
                    total += by_hand_within(lo, hi) + (n - hi) * by_hand_columns(lo, hi);
                }
                assert_eq!(total as f64, flops(n), "n = {n}, b = {b}");
            }
        }
    }

    #[test]
    fn the_residual_check_fails_a_solution_with_nan_inf_or_one_wrong_element() {
        // A x = b with A = [[2, 1, 0], [1, 3, 1], [0, 1, 4]], x = (1, -1, 2).
        let a = Matrix::new(3, 3, vec![2.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 4.0]).unwrap();
        let x = [1.0, -1.0, 2.0];
        let b = [1.0, 0.0, 7.0];
        let (check, residual) = residual_check(&a, &b, &x);
        assert!(check.passed && residual == 0.0, "{check:?}");
        for (value, what) in [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Inf"),
            (-1.5, "one wrong element"),
        ] {
            let mut wrong = x;
            wrong[1] = value;
            let (check, _) = residual_check(&a, &b, &wrong);
            assert!(!check.passed, "{what}: {check:?}");
            assert!(
                check.error.is_nan() || check.error > check.tolerance,
                "{what}: {check:?}"
            );
        }
    }
}
