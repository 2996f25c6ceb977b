//! Gaussian elimination and back substitution of rows already dealt to their owners: the
//! solver core `ge` and `slalom` share ([`Elimination`]), with its flop counts and errors.

use hbsp::Ctx;
use hbsp::collectives::{
    BroadcastAlgorithm, Root, allreduce, broadcast, broadcast_zeros, gatherv, gatherv_zeros,
};

use crate::error::{KernelError, Result};

use super::pivoting::Pivoting;

/// Gaussian elimination and back substitution of rows of `[A | b]` already dealt to their
/// owners: the solver core `ge` and `slalom` share.
pub(crate) struct Elimination<'a> {
    pub n: usize,
    /// Owner pid of each row.
    pub owners: &'a [usize],
    pub pivoting: Pivoting,
    /// Rows per block: 1 is the row-cyclic program, `b > 1` the blocked one (one broadcast
    /// of `b` pivot rows per block, [`Pivoting::None`] only; `owners` deals whole blocks).
    pub block: usize,
    /// Compute blocks are skipped (sim skeleton execution): values are meaningless, so pivots
    /// are taken in natural order and never checked.
    pub skeleton: bool,
    /// Work each flop declares (see [`work_per_flop`]; 1 for a kernel whose `W` is its flop
    /// count).
    pub work_per_flop: f64,
}

/// A node's rows of `[A | b]` (ascending global index) and which are still to be pivots.
pub(crate) struct LocalRows {
    global: Vec<usize>,
    data: Vec<f64>,
    remaining: Vec<bool>,
}

impl LocalRows {
    /// The rows `global` (ascending), `N + 1` values each in `data`.
    pub fn new(global: Vec<usize>, data: Vec<f64>) -> Self {
        Self {
            remaining: vec![true; global.len()],
            global,
            data,
        }
    }

    /// The rows `global` without their values, for a skeleton run.
    pub(super) fn without_values(global: Vec<usize>) -> Self {
        Self::new(global, Vec::new())
    }
}

impl Elimination<'_> {
    fn width(&self) -> usize {
        self.n + 1
    }

    /// The rows node `pid` owns, ascending.
    pub fn rows_of(&self, pid: usize) -> Vec<usize> {
        (0..self.n).filter(|&i| self.owners[i] == pid).collect()
    }

    /// Values of `[A | b]` each node holds.
    pub(super) fn counts(&self, p: usize) -> Vec<usize> {
        // One pass over the owners, not one per node: that made each node O(p N).
        owned_rows(self.owners, p)
            .into_iter()
            .map(|rows| rows * self.width())
            .collect()
    }

    /// Eliminates, gathers the rows on the root (the fastest node) and back-substitutes
    /// there: `x` on the root, `None` elsewhere.
    pub fn solve(&self, ctx: &mut Ctx<'_>, mut rows: LocalRows) -> Result<Option<Vec<f64>>> {
        if self.block > 1 {
            return self.solve_in_blocks(ctx, rows);
        }
        let mut pivots = Vec::with_capacity(self.n);
        ctx.phase("eliminate", |ctx| {
            for i in 0..self.n - 1 {
                let pivot_row = self.choose_pivot(ctx, &rows, i)?;
                let pivot = self.broadcast_pivot(ctx, &mut rows, pivot_row, i)?;
                pivots.push(pivot_row);
                self.eliminate(ctx, &mut rows, &pivot, i)?;
                if self.pivoting == Pivoting::None {
                    ctx.sync()?;
                }
            }
            Ok::<_, KernelError>(())
        })?;
        pivots.push(last_remaining(self.n, &pivots));
        // Only the last pivot was never broadcast (and checked on the way).
        self.collect(ctx, &rows, Some(&pivots), self.n - 1)
    }

    /// Gathers the rows on the root and back-substitutes there in the order `pivots` (`None`:
    /// the natural order, made on the root alone), after checking the pivots from
    /// `pivots[unchecked]` on, which no broadcast checked.
    fn collect(
        &self,
        ctx: &mut Ctx<'_>,
        rows: &LocalRows,
        pivots: Option<&[usize]>,
        unchecked: usize,
    ) -> Result<Option<Vec<f64>>> {
        let root = ctx.rank(1)?;
        let counts = self.counts(ctx.nprocs());
        if self.skeleton {
            let gathered = ctx.phase("collect", |ctx| {
                gatherv_zeros::<f64>(ctx, Root::Pid(root), &counts)
            })?;
            return match gathered.value {
                Some(_) => Ok(Some(self.skip_back_substitution(ctx)?)),
                None => Ok(None),
            };
        }
        let gathered = ctx.phase("collect", |ctx| {
            gatherv(ctx, Root::Pid(root), &rows.data, &counts)
        })?;
        let Some(all) = gathered.value else {
            return Ok(None);
        };
        let natural: Vec<usize>;
        let pivots = match pivots {
            Some(pivots) => pivots,
            None => {
                natural = (0..self.n).collect();
                &natural
            }
        };
        Ok(Some(self.back_substitute(ctx, &all, pivots, unchecked)?))
    }

    /// The blocked program (`block = b > 1`, no pivoting). Block step `k` (rows
    /// `lo..hi = k b..min(k b + b, N)`): every node eliminates the columns of block `k - 1`
    /// from its rows of the blocks `>= k`, the owner of block `k` then eliminates within
    /// it (its rows now have every earlier update), all in one compute block, and the owner
    /// broadcasts the block's rows, columns `lo..=N`, in one broadcast. The last block is
    /// not broadcast: its elimination runs in the gather's superstep.
    fn solve_in_blocks(&self, ctx: &mut Ctx<'_>, mut rows: LocalRows) -> Result<Option<Vec<f64>>> {
        let (n, b) = (self.n, self.block);
        let blocks = n.div_ceil(b);
        ctx.phase("eliminate", |ctx| {
            let mut previous: Option<(usize, usize, Vec<f64>)> = None;
            for k in 0..blocks {
                let (lo, hi) = (k * b, (k * b + b).min(n));
                self.update(ctx, &mut rows, previous.take(), (lo, hi))?;
                if k + 1 < blocks {
                    let pivots = self.broadcast_block(ctx, &rows, lo, hi)?;
                    previous = Some((lo, hi, pivots));
                }
            }
            Ok::<_, KernelError>(())
        })?;
        // Pivots in natural order; the last block's were never broadcast.
        self.collect(ctx, &rows, None, (blocks - 1) * b)
    }

    /// A block step's compute: this node eliminates the columns `plo..phi` of the
    /// `previous` block's pivot rows (if any) from its remaining rows, then, if it owns the
    /// rows `lo..hi`, eliminates within them and marks them done.
    fn update(
        &self,
        ctx: &mut Ctx<'_>,
        rows: &mut LocalRows,
        previous: Option<(usize, usize, Vec<f64>)>,
        (lo, hi): (usize, usize),
    ) -> Result<()> {
        let (n, width) = (self.n, self.width());
        let remaining = rows.remaining.iter().filter(|&&r| r).count();
        let mut flops = 0.0;
        if let Some((plo, phi, _)) = &previous {
            flops += remaining as f64 * columns_flops(n, *plo, *phi);
        }
        let owned = (self.owners[lo] == ctx.pid()).then(|| {
            let first = rows
                .global
                .binary_search(&lo)
                .expect("the owner holds its block");
            flops += within_block_flops(n, lo, hi);
            first
        });
        ctx.compute(flops * self.work_per_flop, || {
            if let Some((plo, phi, pivots)) = &previous {
                let pivot_width = width - plo;
                for (row, _) in rows
                    .data
                    .chunks_exact_mut(width)
                    .zip(&rows.remaining)
                    .filter(|(_, r)| **r)
                {
                    for c in *plo..*phi {
                        let pivot = &pivots[(c - plo) * pivot_width + (c - plo)..][..width - c];
                        eliminate_column(row, pivot, c);
                    }
                }
            }
            if let Some(first) = owned {
                let block = &mut rows.data[first * width..(first + hi - lo) * width];
                for c in lo..hi {
                    let (above, below) = block.split_at_mut((c - lo + 1) * width);
                    let pivot = &above[(c - lo) * width + c..];
                    for row in below.chunks_exact_mut(width) {
                        eliminate_column(row, pivot, c);
                    }
                }
            }
        })?;
        if let Some(first) = owned {
            rows.remaining[first..first + hi - lo].fill(false);
        }
        Ok(())
    }

    /// The pivot rows `lo..hi` (columns `lo..=N`, `(hi - lo) (N + 1 - lo)` values) from
    /// their owner to every node in one broadcast; every node checks their pivots.
    fn broadcast_block(
        &self,
        ctx: &mut Ctx<'_>,
        rows: &LocalRows,
        lo: usize,
        hi: usize,
    ) -> Result<Vec<f64>> {
        let owner = self.owners[lo];
        let width = self.width();
        let root = Root::Pid(owner);
        let auto = BroadcastAlgorithm::Auto;
        if self.skeleton {
            broadcast_zeros::<f64>(ctx, root, (hi - lo) * (width - lo), auto)?;
            return Ok(Vec::new());
        }
        let segment: Vec<f64> = if ctx.pid() == owner {
            let first = rows
                .global
                .binary_search(&lo)
                .expect("the owner holds its block");
            rows.data[first * width..(first + hi - lo) * width]
                .chunks_exact(width)
                .flat_map(|row| &row[lo..])
                .copied()
                .collect()
        } else {
            Vec::new()
        };
        let pivots = broadcast(ctx, root, &segment, auto)?.value;
        for c in lo..hi {
            let pivot = pivots[(c - lo) * (width - lo) + (c - lo)];
            if pivot == 0.0 {
                return Err(singular(c));
            }
            if !pivot.is_finite() {
                return Err(not_finite(c));
            }
        }
        Ok(pivots)
    }

    fn choose_pivot(&self, ctx: &mut Ctx<'_>, rows: &LocalRows, i: usize) -> Result<usize> {
        if self.pivoting == Pivoting::None {
            return Ok(i);
        }
        let width = self.width();
        // Comparisons, not flops (W excludes them), so no compute block.
        let mut candidate = [-1.0, -1.0];
        // A skeleton's rows hold no values: it searches nothing.
        let searched = if self.skeleton { &[][..] } else { &rows.global };
        for (k, &g) in searched.iter().enumerate() {
            let v = rows.data[k * width + i].abs();
            if rows.remaining[k] && v > candidate[0] {
                candidate = [v, g as f64];
            }
        }
        let best = allreduce(ctx, &[candidate], max_location)?.value[0];
        if self.skeleton {
            return Ok(i);
        }
        // Every node's rows being NaN in this column leaves no candidate at all.
        if best[1] < 0.0 {
            return Err(not_finite(i));
        }
        if best[0] == 0.0 {
            return Err(singular(i));
        }
        if !best[0].is_finite() {
            return Err(not_finite(i));
        }
        Ok(best[1] as usize)
    }

    /// The pivot row's columns `i..=N`, from its owner to every node: in one broadcast with
    /// pivoting, in the paper's two (`A`'s part, then `b`) without.
    fn broadcast_pivot(
        &self,
        ctx: &mut Ctx<'_>,
        rows: &mut LocalRows,
        pivot_row: usize,
        i: usize,
    ) -> Result<Vec<f64>> {
        let owner = self.owners[pivot_row];
        let width = self.width();
        let mine = (ctx.pid() == owner).then(|| {
            let k = rows
                .global
                .binary_search(&pivot_row)
                .expect("the owner holds its row");
            rows.remaining[k] = false;
            k
        });
        let root = Root::Pid(owner);
        if self.skeleton {
            self.broadcast_pivot_size(ctx, root, width - i)?;
            return Ok(Vec::new());
        }
        let segment = match mine {
            Some(k) => rows.data[k * width + i..(k + 1) * width].to_vec(),
            None => Vec::new(),
        };
        let pivot = match self.pivoting {
            Pivoting::Partial => broadcast(ctx, root, &segment, BroadcastAlgorithm::Auto)?.value,
            Pivoting::None => {
                let (a_part, b) = segment.split_at(segment.len().saturating_sub(1));
                let mut pivot = broadcast(ctx, root, a_part, BroadcastAlgorithm::Auto)?.value;
                pivot.extend(broadcast(ctx, root, b, BroadcastAlgorithm::Auto)?.value);
                pivot
            }
        };
        if pivot[0] == 0.0 {
            return Err(singular(i));
        }
        if !pivot[0].is_finite() {
            return Err(not_finite(i));
        }
        Ok(pivot)
    }

    /// [`Elimination::broadcast_pivot`]'s broadcasts of a pivot row of `len` values, as
    /// sizes only.
    fn broadcast_pivot_size(&self, ctx: &mut Ctx<'_>, root: Root, len: usize) -> Result<()> {
        let auto = BroadcastAlgorithm::Auto;
        match self.pivoting {
            Pivoting::Partial => {
                broadcast_zeros::<f64>(ctx, root, len, auto)?;
            }
            Pivoting::None => {
                let a_part = len.saturating_sub(1);
                broadcast_zeros::<f64>(ctx, root, a_part, auto)?;
                broadcast_zeros::<f64>(ctx, root, len - a_part, auto)?;
            }
        }
        Ok(())
    }

    fn eliminate(
        &self,
        ctx: &mut Ctx<'_>,
        rows: &mut LocalRows,
        pivot: &[f64],
        i: usize,
    ) -> Result<()> {
        let width = self.width();
        let remaining = rows.remaining.iter().filter(|&&r| r).count();
        let ops = remaining as f64 * (1.0 + 2.0 * (self.n - i) as f64) * self.work_per_flop;
        ctx.compute(ops, || {
            for (row, _) in rows
                .data
                .chunks_exact_mut(width)
                .zip(&rows.remaining)
                .filter(|(_, r)| **r)
            {
                eliminate_column(row, pivot, i);
            }
        })?;
        Ok(())
    }

    /// The back substitution of a skeleton run: its work declared, `x` left zero.
    fn skip_back_substitution(&self, ctx: &mut Ctx<'_>) -> Result<Vec<f64>> {
        let n = self.n;
        ctx.charge_work((n * n) as f64 * self.work_per_flop)?;
        Ok(vec![0.0; n])
    }

    /// Back substitution on the root, following the pivot order, after checking the pivots
    /// `s >= unchecked` are not zero.
    fn back_substitute(
        &self,
        ctx: &mut Ctx<'_>,
        packed: &[f64],
        pivots: &[usize],
        unchecked: usize,
    ) -> Result<Vec<f64>> {
        let (n, width) = (self.n, self.width());
        let mut position = vec![0usize; n];
        let mut next = 0;
        for pid in 0..ctx.nprocs() {
            for i in self.rows_of(pid) {
                position[i] = next;
                next += 1;
            }
        }
        for s in unchecked..n {
            if packed[position[pivots[s]] * width + s] == 0.0 {
                return Err(singular(s));
            }
        }
        let mut x = vec![0.0; n];
        ctx.compute((n * n) as f64 * self.work_per_flop, || {
            for s in (0..n).rev() {
                let row = &packed[position[pivots[s]] * width..][..width];
                let dot: f64 = row[s + 1..n]
                    .iter()
                    .zip(&x[s + 1..])
                    .map(|(a, x)| a * x)
                    .sum();
                x[s] = (row[n] - dot) / row[s];
            }
        })?;
        Ok(x)
    }
}

/// Eliminates column `c` from `row` (`N + 1` values) with the pivot row's columns `c..=N`
/// in `pivot`: the multiplier `row[c] / pivot[0]` times the columns `c + 1..=N`.
fn eliminate_column(row: &mut [f64], pivot: &[f64], c: usize) {
    let multiplier = row[c] / pivot[0];
    for (x, &p) in row[c + 1..].iter_mut().zip(&pivot[1..]) {
        *x -= multiplier * p;
    }
}

/// Flops of eliminating the columns `lo..hi` from one row below them: `1 + 2 (N - c)` for
/// column `c` (the multiplier, and a multiply and a subtraction for each of the columns
/// `c + 1..N` and `b`).
pub fn columns_flops(n: usize, lo: usize, hi: usize) -> f64 {
    let m = (hi - lo) as u128;
    (m * (2 * n as u128 + 2 - lo as u128 - hi as u128)) as f64
}

/// Flops of the elimination within the rows `lo..hi`: row `r` eliminates the columns `lo..r`,
/// `sum_c (hi - 1 - c) (1 + 2 (N - c))` in closed form.
pub fn within_block_flops(n: usize, lo: usize, hi: usize) -> f64 {
    let m = (hi - lo) as u128;
    let first = 1 + 2 * (n - lo) as u128;
    if m < 2 {
        return 0.0;
    }
    (first * m * (m - 1) / 2 - m * (m - 1) * (m - 2) / 3) as f64
}

/// Of two pivot candidates `[|a_ji|, j]` (`j = -1`: the node has none), the larger value,
/// then the lower row: associative and commutative, so every node gets the same pivot
/// whatever the reduction's order. NaN counts as the largest value, to be refused.
pub(crate) fn max_location(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    match (a[1] >= 0.0, b[1] >= 0.0) {
        (false, _) => b,
        (_, false) => a,
        _ => match a[0].total_cmp(&b[0]).then(b[1].total_cmp(&a[1])) {
            std::cmp::Ordering::Less => b,
            _ => a,
        },
    }
}

pub(crate) fn not_finite(column: usize) -> KernelError {
    KernelError::Numerical(format!(
        "no finite pivot in column {column}: the elimination overflowed to Inf or NaN; scale the matrix so its entries are far below 1e300"
    ))
}

pub(crate) fn singular(column: usize) -> KernelError {
    KernelError::Numerical(format!(
        "the matrix is singular: no non-zero pivot in column {column}{}",
        if column == 0 {
            ""
        } else {
            " (with --pivoting none, try partial)"
        }
    ))
}

/// Rows each node owns.
pub(super) fn owned_rows(owners: &[usize], p: usize) -> Vec<usize> {
    let mut counts = vec![0; p];
    owners.iter().for_each(|&o| counts[o] += 1);
    counts
}

/// The one row that was never a pivot in the `N - 1` elimination steps.
fn last_remaining(n: usize, pivots: &[usize]) -> usize {
    let mut used = vec![false; n];
    pivots.iter().for_each(|&r| used[r] = true);
    used.iter().position(|u| !u).expect("one row is left")
}

/// The index of the largest share (the fastest node), lowest on ties.
pub(super) fn fastest(shares: &[f64]) -> usize {
    (0..shares.len()).fold(0, |best, j| if shares[j] > shares[best] { j } else { best })
}
