//! SLALOM's solver on a `q x q` process grid, as the nCUBE 2 version Sun & Rover ran "only
//! executes on square hypercubes" (IEEE TPDS 1994, section IV-C; Fig. 8: factoring, then a
//! distributed back substitution).
//!
//! Node `pid = r q + c` is process `(r, c)`. Row `i` of `[A | b]` lives on process row
//! `i mod q`, column `j` (the right-hand side is column `N`) on process column `j mod q`:
//! each node holds the cyclic block of the rows and columns it owns, built in place by the
//! setup. Elimination step `k`:
//!
//! 1. the pivot search: the processes of column `k mod q` find the largest remaining `|a_ik|`
//!    with an allreduce along that column (recursive doubling, `log2 q` neighbour exchanges);
//! 2. each process `(r, k mod q)` sends the pivot's index and its rows' multipliers along its
//!    grid row (a binomial-tree broadcast, `log2 q` neighbour steps);
//! 3. the processes of the pivot's process row send its columns `> k` down their grid
//!    columns (the same tree);
//! 4. every node updates its remaining rows in its columns `> k`.
//!
//! Back substitution, `s = N-1 .. 0`: the processes of the pivot row's process row reduce
//! `b_p - sum_{j > s} u_pj x_j` along it to the owner of column `s`, which divides and sends
//! `x_s` down its grid column. At the end process row 0 sends `x` to node 0. No matrix is
//! gathered. With `q` a power of two (a square hypercube) every tree edge and exchange joins
//! hypercube neighbours (indices differ in one bit).
//!
//! Rows and columns are dealt cyclically whatever the speeds: the grid is for homogeneous
//! machines such as the nCUBE 2. Skeleton runs hold no block and send sizes only; pivots are
//! then taken in natural order.

use hbsp::{Ctx, Machine, Message};
use hetscale_model::hbsp::Traffic;

use crate::charges::Charges;
use crate::error::{KernelError, Result, invalid};
use crate::ge::{max_location, not_finite, singular};

const F64: f64 = 8.0;
const TAG: u32 = 16;

/// The `q x q` grid of a machine of `p = q^2` nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grid {
    pub q: usize,
}

/// A grid row (the processes `(r, *)`) or a grid column (`(*, c)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    Row,
    Column,
}

impl Grid {
    /// The grid of `p` nodes, or a one-line error when `p` is not a square.
    pub fn of(p: usize) -> Result<Self> {
        let q = (p as f64).sqrt().round() as usize;
        if q * q != p || p == 0 {
            return Err(invalid(format!(
                "slalom's grid layout needs a square number of nodes (q x q), not p = {p}: use \
                 1, 4, 9, 16, ... nodes, or --layout rows"
            )));
        }
        Ok(Self { q })
    }

    fn coords(self, pid: usize) -> (usize, usize) {
        (pid / self.q, pid % self.q)
    }

    fn pid(self, r: usize, c: usize) -> usize {
        r * self.q + c
    }

    /// Neighbour steps of a tree along a line: `ceil(log2 q)`.
    fn steps(self) -> usize {
        self.q.next_power_of_two().trailing_zeros() as usize
    }

    /// The pid at index `index` of the line through `pid`.
    fn on_line(self, pid: usize, line: Line, index: usize) -> usize {
        let (r, c) = self.coords(pid);
        match line {
            Line::Row => self.pid(r, index),
            Line::Column => self.pid(index, c),
        }
    }

    /// `pid`'s index on its line.
    fn index(self, pid: usize, line: Line) -> usize {
        let (r, c) = self.coords(pid);
        match line {
            Line::Row => c,
            Line::Column => r,
        }
    }

    /// Line index of tree position `relative` from `root`: XOR on a power of two, so tree
    /// edges join hypercube neighbours; modular otherwise.
    fn absolute(self, relative: usize, root: usize) -> usize {
        if self.q.is_power_of_two() {
            relative ^ root
        } else {
            (relative + root) % self.q
        }
    }

    /// Round `s` of a binomial-tree broadcast from `root`: `(from, to)` line indices.
    fn broadcast_round(self, root: usize, s: usize) -> Vec<(usize, usize)> {
        let half = 1 << s;
        (0..half.min(self.q))
            .filter(|rel| rel + half < self.q)
            .map(|rel| (self.absolute(rel, root), self.absolute(rel + half, root)))
            .collect()
    }

    /// Round `s` of the pivot search's recursive doubling (`q` a power of two): both ways
    /// between indices that differ in bit `s`.
    fn exchange_round(self, s: usize) -> Vec<(usize, usize)> {
        (0..self.q).map(|i| (i, i ^ (1 << s))).collect()
    }
}

/// One tree round on `ctx`: sends `payload` (or its size, in a skeleton) from this node to
/// the line indices `to`, ends the superstep and returns what arrived.
fn round(
    ctx: &mut Ctx<'_>,
    grid: Grid,
    line: Line,
    to: &[usize],
    payload: Option<&[f64]>,
    len: usize,
) -> Result<Vec<Vec<f64>>> {
    let me = ctx.pid();
    for &index in to {
        let target = grid.on_line(me, line, index);
        match payload {
            Some(data) => ctx.send(target, TAG, data)?,
            None => ctx.send_zeros(target, TAG, len * F64 as usize)?,
        }
    }
    ctx.sync()?;
    Ok(ctx
        .recv_all::<f64>()?
        .into_iter()
        .map(Message::into_data)
        .collect())
}

/// Broadcasts `data` (significant at index `root` of each line) along every line through an
/// `active` node; a node off the active lines only keeps step. Returns what this node holds
/// afterwards (empty when it is not active). `skeleton`: sizes only, `len` values.
fn broadcast_along(
    ctx: &mut Ctx<'_>,
    grid: Grid,
    line: Line,
    root: usize,
    active: bool,
    mut data: Vec<f64>,
    skeleton: bool,
) -> Result<Vec<f64>> {
    let me = grid.index(ctx.pid(), line);
    let mut have = active && me == root;
    let len = data.len();
    for s in 0..grid.steps() {
        let to: Vec<usize> = grid
            .broadcast_round(root, s)
            .into_iter()
            .filter(|&(from, _)| active && have && from == me)
            .map(|(_, to)| to)
            .collect();
        let payload = (!skeleton).then_some(&data[..]);
        let mut got = round(ctx, grid, line, &to, payload, len)?;
        if let Some(message) = got.pop() {
            data = message;
            have = true;
        }
    }
    Ok(if active { data } else { Vec::new() })
}

/// The pivot search's allreduce of `[|a_ik|, i, a_ik]` under "max location" along the grid
/// column through an `active` node: recursive doubling on a power of two, else a tree reduce
/// to index 0 and a broadcast back.
fn allreduce_max_location(
    ctx: &mut Ctx<'_>,
    grid: Grid,
    active: bool,
    mut candidate: [f64; 3],
    skeleton: bool,
) -> Result<[f64; 3]> {
    let me = grid.index(ctx.pid(), Line::Column);
    let combine = |a: [f64; 3], b: [f64; 3]| {
        if max_location([a[0], a[1]], [b[0], b[1]]) == [a[0], a[1]] {
            a
        } else {
            b
        }
    };
    let receive = |got: Vec<Vec<f64>>, mine: [f64; 3]| {
        got.iter().fold(mine, |acc, m| match m[..] {
            [v, i, a] if !skeleton => combine(acc, [v, i, a]),
            _ => acc,
        })
    };
    if grid.q.is_power_of_two() {
        for s in 0..grid.steps() {
            let to: Vec<usize> = grid
                .exchange_round(s)
                .into_iter()
                .filter(|&(from, _)| active && from == me)
                .map(|(_, to)| to)
                .collect();
            let got = round(ctx, grid, Line::Column, &to, Some(&candidate), 3)?;
            candidate = receive(got, candidate);
        }
        return Ok(candidate);
    }
    for s in (0..grid.steps()).rev() {
        // The broadcast's rounds reversed: every index sends what it holds to its parent.
        let to: Vec<usize> = grid
            .broadcast_round(0, s)
            .into_iter()
            .filter(|&(_, child)| active && child == me)
            .map(|(parent, _)| parent)
            .collect();
        let got = round(ctx, grid, Line::Column, &to, Some(&candidate), 3)?;
        candidate = receive(got, candidate);
    }
    let all = broadcast_along(
        ctx,
        grid,
        Line::Column,
        0,
        active,
        candidate.to_vec(),
        false,
    )?;
    Ok(match all[..] {
        [v, i, a] => [v, i, a],
        _ => candidate,
    })
}

/// Sums `value` along the grid row through an `active` node onto index `root` (a tree
/// reduce); `Some(sum)` there.
fn reduce_sum_along_row(
    ctx: &mut Ctx<'_>,
    grid: Grid,
    root: usize,
    active: bool,
    mut value: f64,
    skeleton: bool,
) -> Result<Option<f64>> {
    let me = grid.index(ctx.pid(), Line::Row);
    for s in (0..grid.steps()).rev() {
        let to: Vec<usize> = grid
            .broadcast_round(root, s)
            .into_iter()
            .filter(|&(_, child)| active && child == me)
            .map(|(parent, _)| parent)
            .collect();
        let payload = [value];
        let got = round(
            ctx,
            grid,
            Line::Row,
            &to,
            (!skeleton).then_some(&payload[..]),
            1,
        )?;
        value += got
            .iter()
            .map(|m| m.first().copied().unwrap_or(0.0))
            .sum::<f64>();
    }
    Ok((active && me == root).then_some(value))
}

/// A node's cyclic block of `[A | b]`: its rows (ascending), its columns (ascending, `N`
/// among them on process column `N mod q`), the values row by row (empty in a skeleton), and
/// which rows are still to be pivots.
pub(crate) struct Block {
    pub rows: Vec<usize>,
    pub cols: Vec<usize>,
    pub data: Vec<f64>,
    remaining: Vec<bool>,
}

impl Block {
    /// Node `pid`'s rows and columns of a system of `n` unknowns.
    pub fn indices(grid: Grid, pid: usize, n: usize) -> (Vec<usize>, Vec<usize>) {
        let (r, c) = grid.coords(pid);
        (
            (r..n).step_by(grid.q).collect(),
            (c..=n).step_by(grid.q).collect(),
        )
    }

    pub fn new(rows: Vec<usize>, cols: Vec<usize>, data: Vec<f64>) -> Self {
        Self {
            remaining: vec![true; rows.len()],
            rows,
            cols,
            data,
        }
    }

    fn width(&self) -> usize {
        self.cols.len()
    }

    /// Local index of the first column after `k`.
    fn after(&self, k: usize) -> usize {
        self.cols.partition_point(|&j| j <= k)
    }

    fn remaining_count(&self) -> usize {
        self.remaining.iter().filter(|&&r| r).count()
    }
}

/// The grid solver of `n` unknowns.
pub(crate) struct GridSolver {
    pub grid: Grid,
    pub n: usize,
    pub skeleton: bool,
}

impl GridSolver {
    /// Eliminates and back-substitutes on the grid: `x` on node 0, `None` elsewhere.
    pub fn solve(&self, ctx: &mut Ctx<'_>, mut block: Block) -> Result<Option<Vec<f64>>> {
        let mut pivots = Vec::with_capacity(self.n);
        ctx.phase("eliminate", |ctx| {
            for k in 0..self.n - 1 {
                pivots.push(self.step(ctx, &mut block, k)?);
            }
            Ok::<_, KernelError>(())
        })?;
        pivots.push(self.last_pivot(&pivots));
        let x = ctx.phase("back substitution", |ctx| {
            self.back_substitute(ctx, &block, &pivots)
        })?;
        ctx.phase("collect", |ctx| self.collect_x(ctx, &x))
    }

    /// The row never chosen as a pivot (every node knows all pivots).
    fn last_pivot(&self, pivots: &[usize]) -> usize {
        let mut used = vec![false; self.n];
        pivots.iter().for_each(|&p| used[p] = true);
        used.iter().position(|u| !u).unwrap_or(self.n - 1)
    }

    /// Elimination step `k`; returns its pivot row.
    fn step(&self, ctx: &mut Ctx<'_>, block: &mut Block, k: usize) -> Result<usize> {
        let (q, skeleton) = (self.grid.q, self.skeleton);
        let (r, c) = self.grid.coords(ctx.pid());
        let in_pivot_column = c == k % q;
        let candidate = if in_pivot_column && !skeleton {
            self.candidate(block, k)
        } else {
            [-1.0, -1.0, 0.0]
        };
        let best = allreduce_max_location(ctx, self.grid, in_pivot_column, candidate, skeleton)?;
        if in_pivot_column && !skeleton {
            check_pivot(best, k)?;
        }
        let chosen = if skeleton { k } else { best[1] as usize };
        let message = if in_pivot_column {
            self.multipliers(ctx, block, k, chosen, best[2])?
        } else {
            Vec::new()
        };
        let got = broadcast_along(ctx, self.grid, Line::Row, k % q, true, message, skeleton)?;
        let pivot = if skeleton { k } else { got[0] as usize };
        if r == pivot % q {
            let at = block.rows.binary_search(&pivot).expect("the row is here");
            block.remaining[at] = false;
        }
        let first = block.after(k);
        let segment = if r == pivot % q && !skeleton {
            let at = block.rows.binary_search(&pivot).expect("the row is here");
            block.data[at * block.width() + first..(at + 1) * block.width()].to_vec()
        } else {
            vec![0.0; if skeleton { block.width() - first } else { 0 }]
        };
        let pivot_row = broadcast_along(
            ctx,
            self.grid,
            Line::Column,
            pivot % q,
            true,
            segment,
            skeleton,
        )?;
        let multipliers = got.get(1..).unwrap_or(&[]);
        self.eliminate(ctx, block, first, multipliers, &pivot_row)?;
        Ok(pivot)
    }

    /// This node's best `[|a_ik|, i, a_ik]` among its remaining rows (`i = -1`: none).
    fn candidate(&self, block: &Block, k: usize) -> [f64; 3] {
        let at = block.cols.binary_search(&k).expect("the column is here");
        let width = block.width();
        let mut best = [-1.0, -1.0, 0.0];
        for (l, &i) in block.rows.iter().enumerate() {
            let a = block.data[l * width + at];
            if block.remaining[l] && a.abs() > best[0] {
                best = [a.abs(), i as f64, a];
            }
        }
        best
    }

    /// The pivot's index, then `a_ik / a_pk` for this node's remaining rows but the pivot.
    fn multipliers(
        &self,
        ctx: &mut Ctx<'_>,
        block: &Block,
        k: usize,
        pivot: usize,
        pivot_value: f64,
    ) -> Result<Vec<f64>> {
        let others = block.remaining_count() - usize::from(block.rows.contains(&pivot));
        if self.skeleton {
            ctx.charge_work(others as f64)?;
            return Ok(vec![0.0; 1 + others]);
        }
        let at = block.cols.binary_search(&k).expect("the column is here");
        let width = block.width();
        ctx.compute(others as f64, || {
            let mut message = vec![pivot as f64];
            for (l, &i) in block.rows.iter().enumerate() {
                if block.remaining[l] && i != pivot {
                    message.push(block.data[l * width + at] / pivot_value);
                }
            }
            message
        })
        .map_err(Into::into)
    }

    /// `a_ij -= l_i u_j` for the remaining rows and the columns from local `first` on.
    fn eliminate(
        &self,
        ctx: &mut Ctx<'_>,
        block: &mut Block,
        first: usize,
        multipliers: &[f64],
        pivot_row: &[f64],
    ) -> Result<()> {
        let width = block.width();
        let ops = 2.0 * (block.remaining_count() * (width - first)) as f64;
        let Block {
            data, remaining, ..
        } = block;
        ctx.compute(ops, || {
            let rows = data
                .chunks_exact_mut(width)
                .zip(remaining.iter())
                .filter(|(_, r)| **r);
            for ((row, _), l) in rows.zip(multipliers) {
                for (a, u) in row[first..].iter_mut().zip(pivot_row) {
                    *a -= l * u;
                }
            }
        })?;
        Ok(())
    }

    /// Back substitution in pivot order; each node returns the `x_j` of its columns (zeros
    /// elsewhere).
    fn back_substitute(
        &self,
        ctx: &mut Ctx<'_>,
        block: &Block,
        pivots: &[usize],
    ) -> Result<Vec<f64>> {
        let (q, n) = (self.grid.q, self.n);
        let (r, c) = self.grid.coords(ctx.pid());
        let width = block.width();
        let mut x = vec![0.0; if self.skeleton { 0 } else { n }];
        for s in (0..n).rev() {
            let p = pivots[s];
            let on_pivot_row = r == p % q;
            let first = block.after(s);
            let terms = block.cols[first..].iter().filter(|&&j| j < n).count();
            let contribution = if on_pivot_row {
                let at = block.rows.binary_search(&p).expect("the row is here");
                let row = block.data.get(at * width..(at + 1) * width).unwrap_or(&[]);
                ctx.compute(2.0 * terms as f64, || {
                    block.cols[first..]
                        .iter()
                        .zip(row.get(first..).unwrap_or(&[]))
                        .map(|(&j, &u)| if j == n { u } else { -u * x[j] })
                        .sum::<f64>()
                })?
            } else {
                0.0
            };
            let total = reduce_sum_along_row(
                ctx,
                self.grid,
                s % q,
                on_pivot_row,
                contribution,
                self.skeleton,
            )?;
            let solved = match total {
                Some(total) => vec![self.divide(ctx, block, p, s, total)?],
                None => Vec::new(),
            };
            let got = broadcast_along(
                ctx,
                self.grid,
                Line::Column,
                p % q,
                c == s % q,
                solved,
                self.skeleton,
            )?;
            if let (Some(&value), false) = (got.first(), self.skeleton) {
                x[s] = value;
            }
        }
        Ok(x)
    }

    /// `x_s = total / u_ps` on the owner of `u_ps`.
    fn divide(
        &self,
        ctx: &mut Ctx<'_>,
        block: &Block,
        p: usize,
        s: usize,
        total: f64,
    ) -> Result<f64> {
        if self.skeleton {
            ctx.charge_work(1.0)?;
            return Ok(0.0);
        }
        let at = block.rows.binary_search(&p).expect("the row is here");
        let col = block.cols.binary_search(&s).expect("the column is here");
        let u = block.data[at * block.width() + col];
        if u == 0.0 {
            return Err(singular(s));
        }
        ctx.compute(1.0, || total / u).map_err(Into::into)
    }

    /// Process row 0 sends its columns' `x_j` to node 0, which assembles `x`.
    fn collect_x(&self, ctx: &mut Ctx<'_>, x: &[f64]) -> Result<Option<Vec<f64>>> {
        let (q, n) = (self.grid.q, self.n);
        let (r, c) = self.grid.coords(ctx.pid());
        let mine: Vec<f64> = if self.skeleton {
            Vec::new()
        } else {
            (c..n).step_by(q).map(|j| x[j]).collect()
        };
        if r == 0 && c != 0 {
            if self.skeleton {
                ctx.send_zeros(0, TAG, (c..n).step_by(q).count() * F64 as usize)?;
            } else {
                ctx.send(0, TAG, &mine)?;
            }
        }
        ctx.sync()?;
        let got = ctx.recv_all::<f64>()?;
        if ctx.pid() != 0 {
            return Ok(None);
        }
        let mut all = vec![0.0; n];
        if self.skeleton {
            return Ok(Some(all));
        }
        for (column, values) in
            std::iter::once((0, mine)).chain(got.into_iter().map(|m| (m.source, m.into_data())))
        {
            for (j, v) in (column..n).step_by(q).zip(values) {
                all[j] = v;
            }
        }
        Ok(Some(all))
    }
}

fn check_pivot(best: [f64; 3], k: usize) -> Result<()> {
    if best[1] < 0.0 || !best[0].is_finite() {
        return Err(not_finite(k));
    }
    if best[0] == 0.0 {
        return Err(singular(k));
    }
    Ok(())
}

/// Replays [`GridSolver::solve`]'s supersteps on `machine` (pivots in natural order), with
/// `first` (ops by pid) computed before the first superstep and the answer's `root_tail`
/// ops on node 0 at the end. A step's multipliers are charged with its update.
pub(crate) fn replay(
    charges: &mut Charges<'_>,
    machine: &Machine,
    n: usize,
    first: Vec<f64>,
    root_tail: f64,
) -> Result<()> {
    let p = machine.p();
    let grid = Grid::of(p)?;
    let q = grid.q;
    let blocks: Vec<(Vec<usize>, Vec<usize>)> =
        (0..p).map(|pid| Block::indices(grid, pid, n)).collect();
    let below = |rows: &[usize], k: usize| rows.iter().filter(|&&i| i > k).count() as f64;
    let mut pending = first;
    for k in 0..n - 1 {
        let mut rounds = search_rounds(grid, k % q);
        rounds.extend(tree_rounds(grid, Line::Row, k % q, |pid| {
            (1.0 + below(&blocks[pid].0, k)) * F64
        }));
        rounds.extend(tree_rounds(grid, Line::Column, k % q, |pid| {
            below(&blocks[pid].1, k) * F64
        }));
        charge_rounds(charges, &mut pending, rounds)?;
        let update: Vec<f64> = (0..p)
            .map(|pid| {
                let (rows, cols) = &blocks[pid];
                let division = if pid % q == k % q { 1.0 } else { 0.0 };
                below(rows, k) * (2.0 * below(cols, k) + division)
            })
            .collect();
        pending = add(&pending, &update);
    }
    for s in (0..n).rev() {
        let dot: Vec<f64> = (0..p)
            .map(|pid| {
                let (r, c) = grid.coords(pid);
                let terms = blocks[pid].1.iter().filter(|&&j| j > s && j < n).count() as f64;
                let division = if c == s % q { 1.0 } else { 0.0 };
                if r == s % q {
                    2.0 * terms + division
                } else {
                    0.0
                }
            })
            .collect();
        pending = add(&pending, &dot);
        let mut rounds: Vec<Traffic> = tree_rounds(grid, Line::Row, s % q, |_| F64)
            .iter()
            .rev()
            .map(reversed)
            .collect();
        rounds.extend(tree_rounds(grid, Line::Column, s % q, |_| F64));
        charge_rounds(charges, &mut pending, rounds)?;
    }
    let mut gather = Traffic::idle(p);
    for c in 1..q {
        gather.add(c, 0, (c..n).step_by(q).count() as f64 * F64);
    }
    charges.superstep(&pending, &gather)?;
    let mut tail = vec![0.0; p];
    tail[0] = root_tail;
    charges.end(&tail, &Traffic::idle(p))
}

/// Charges one superstep per round, the first with the `pending` compute.
fn charge_rounds(
    charges: &mut Charges<'_>,
    pending: &mut Vec<f64>,
    rounds: Vec<Traffic>,
) -> Result<()> {
    for t in rounds {
        charges.superstep(pending, &t)?;
        pending.clear();
    }
    Ok(())
}

fn add(a: &[f64], b: &[f64]) -> Vec<f64> {
    (0..a.len().max(b.len()))
        .map(|i| a.get(i).unwrap_or(&0.0) + b.get(i).unwrap_or(&0.0))
        .collect()
}

/// The supersteps of a broadcast from index `root` along every line at once, node `pid`
/// sending `bytes(pid)`.
fn tree_rounds(grid: Grid, line: Line, root: usize, bytes: impl Fn(usize) -> f64) -> Vec<Traffic> {
    let p = grid.q * grid.q;
    (0..grid.steps())
        .map(|s| {
            let mut t = Traffic::idle(p);
            for other in 0..grid.q {
                let anchor = match line {
                    Line::Row => grid.pid(other, 0),
                    Line::Column => grid.pid(0, other),
                };
                for (from, to) in grid.broadcast_round(root, s) {
                    let from = grid.on_line(anchor, line, from);
                    t.add(from, grid.on_line(anchor, line, to), bytes(from));
                }
            }
            t
        })
        .collect()
}

/// The same messages the other way (a tree reduce is a broadcast reversed).
fn reversed(t: &Traffic) -> Traffic {
    Traffic {
        sent: t.received.clone(),
        received: t.sent.clone(),
        messages_sent: t.messages_received.clone(),
        messages_received: t.messages_sent.clone(),
    }
}

/// The pivot search's supersteps along grid column `c`.
fn search_rounds(grid: Grid, c: usize) -> Vec<Traffic> {
    let p = grid.q * grid.q;
    let item = 3.0 * F64;
    if grid.q.is_power_of_two() {
        return (0..grid.steps())
            .map(|s| {
                let mut t = Traffic::idle(p);
                for (from, to) in grid.exchange_round(s) {
                    t.add(grid.pid(from, c), grid.pid(to, c), item);
                }
                t
            })
            .collect();
    }
    let column = |t: Traffic| keep_column(grid, c, t);
    let mut rounds: Vec<Traffic> = tree_rounds(grid, Line::Column, 0, |_| item)
        .into_iter()
        .rev()
        .map(|t| column(reversed(&t)))
        .collect();
    rounds.extend(
        tree_rounds(grid, Line::Column, 0, |_| item)
            .into_iter()
            .map(column),
    );
    rounds
}

/// `t` restricted to the nodes of grid column `c`.
fn keep_column(grid: Grid, c: usize, mut t: Traffic) -> Traffic {
    for pid in (0..grid.q * grid.q).filter(|pid| pid % grid.q != c) {
        t.sent[pid] = 0.0;
        t.received[pid] = 0.0;
        t.messages_sent[pid] = 0.0;
        t.messages_received[pid] = 0.0;
    }
    t
}
