//! `summa`: SUMMA `C = A B` on a logical `P x Q` grid with pipelined ring broadcasts and
//! panel width `nb`, under the four distribution strategies of Kalinov section 4
//! ([`layout`]), with the transfers timed as his equations (6)-(11) time them.
//!
//! The root (the fastest node) sends every logical process its blocks of `A` and `B`. The
//! `k` dimension is cut into panels at every multiple of `nb` and at every block boundary, so
//! each panel of `A` lies in one grid column and each panel of `B` in one process per grid
//! column. Panel `t` starts at ring step `t`: its owners pass it one hop along their ring per
//! step (`A` along grid rows to the next grid column, `B` down each grid column), so
//! successive panels are in flight together, as in van de Geijn & Watts' pipelined SUMMA. A
//! process updates `C_ij += A_i,t B_t,j` in the step both panels reach it. Finally the root
//! gathers `C`. There are `T + max(P, Q) - 1` ring steps for `T` panels.
//!
//! Kalinov's equations -> supersteps (`a` = per-message start-up, `b` = per-item time; on
//! HBSP^1 a superstep of one message per node costs `g r h + o + L`, Kalinov's `a + L b`):
//!
//! - Eq. (4), one step of the pipeline, `mn/(PQr) + (a + m/P b) + (a + n/Q b)`: the `A` pass
//!   and the `B` pass happen one after another, so each ring step is an `A` superstep
//!   followed by a `B` superstep, in which the processes also update `C`. Eqs. (3) and (5),
//!   the pipeline's fill and drain, are the first and last `max(P, Q) - 1` ring steps, in
//!   which only some processes pass or update. Eqs. (6)-(8) sum these.
//! - Eq. (9), HeHo: several logical processes share a node and pass their messages in the
//!   same superstep, so the node's `h` and message count add up: `g_l (a + L b)`.
//! - Eq. (10), HoHe1: grid columns cut rows differently, so a hop of an `A` panel from grid
//!   column `j` to `j + 1` sends each process of the next column the rows it needs from each
//!   process of this one: at most `2P - 1` messages (Statement 1). By Statement 2 the rows of
//!   a column are then no longer independent and the whole column's transfer takes the step:
//!   `(2P - 1) a + m b`. So the `A` pass of a ring step is cut into one superstep per message
//!   of the busiest column pair (`2P - 1` at most): the `k`-th message of every grid column
//!   pair (ordered by sending row, then receiving row) goes in the `k`-th, one after another.
//!   The `B` pass, down a grid column, stays one superstep: `a + H n/Q b`.
//! - Eq. (11), HoHe2: a true grid, one `A` message per process per hop, as HoHo.
//!
//! HeHo places several logical processes on one node: the node runs them one after another in
//! each superstep, so they share its speed (messages between them are sends to itself, free in
//! HBSP^1). Other strategies run one process per node.
//!
//! Skeleton runs (sim with the compute blocks skipped) hold no matrix: every message is sent
//! as its size only ([`hbsp::Ctx::send_zeros`], charged like the data), no block of `A`, `B`
//! or `C` is allocated, and [`SummaKernel::skeleton_inputs`] gives the size alone, so their
//! memory does not grow with `N^2`.
//!
//! Only square problems are run (`m = n = k = N`). Work `W = 2 N^3` (`2 m n k`), counted
//! exactly. Overhead model: the exact HBSP^1 cost of the distribution, of every superstep of
//! every ring step (its traffic, and its compute as the slowest node does it, so the layout's
//! load imbalance and the pipeline's fill and drain are overhead) and of the gather. No
//! sequential part.

pub mod layout;

use std::collections::HashMap;

use hbsp::{Backend, Ctx, Machine};
use hetscale_model::hbsp::Traffic;
pub use hetscale_model::summa::Strategy;

use crate::array::{Array, square_operands};
use crate::charges::{Charges, IDLE};
use crate::error::{KernelError, Result, invalid};
use crate::input::product_operands;
use crate::kernel::{
    Kernel, KernelRun, Verification, root_result, size_only, skeleton, skeleton_size, speeds,
    timed_run,
};
use crate::local::gemm;
use crate::matrix::{Matrix, put_block};
use crate::mm::check_operands;
use crate::verify::product_check;
pub use layout::{Layout, default_grid, partition};

const F64: f64 = 8.0;
const HEADER: usize = 3;

/// The run detail holding the multiply phase's duration in seconds: Kalinov's `T` (eqs.
/// 3-5), which starts with the blocks already in place (his section 3.1) and so leaves out
/// the distribution and the gather.
pub const MULTIPLY_PHASE_DETAIL: &str = "multiply phase (s)";

/// Message kinds, carried in the tag.
const BLOCK_A: u32 = 0;
const BLOCK_B: u32 = 1;
const PANEL_A: u32 = 2;
const PANEL_B: u32 = 3;
const BLOCK_C: u32 = 4;

/// SUMMA with a distribution strategy, an optional grid and a panel width.
#[derive(Debug, Clone, Copy)]
pub struct SummaKernel {
    /// HoHo, HeHo, HoHe1 or HoHe2.
    pub strategy: Strategy,
    /// `(P, Q)`; `None` picks [`default_grid`].
    pub grid: Option<(usize, usize)>,
    /// Panel width `nb` (at least 1).
    pub nb: usize,
}

impl Default for SummaKernel {
    fn default() -> Self {
        Self {
            strategy: Strategy::HoHo,
            grid: None,
            nb: 128,
        }
    }
}

/// Parses `hoho`, `heho`, `hohe1` or `hohe2`.
pub fn parse_strategy(name: &str) -> Result<Strategy> {
    Strategy::ALL
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| {
            invalid(format!(
                "unknown strategy \"{name}\": use hoho, heho, hohe1 or hohe2"
            ))
        })
}

impl SummaKernel {
    fn layout(&self, n: usize, machine: &Machine) -> Result<Layout> {
        if self.nb == 0 {
            return Err(invalid("panel width nb = 0: use nb >= 1"));
        }
        partition(self.strategy, n, &speeds(machine), self.grid)
    }
}

impl Kernel for SummaKernel {
    fn name(&self) -> &'static str {
        "summa"
    }

    fn work(&self, n: usize) -> f64 {
        crate::mm::work(n)
    }

    fn counted_ops(&self, n: usize) -> f64 {
        crate::mm::work(n)
    }

    /// `A` and `B`.
    fn input_bytes(&self, n: usize) -> f64 {
        2.0 * (n as f64).powi(2) * F64
    }

    /// Freivalds' check, as `mm`'s.
    fn verification_bytes(&self, n: usize) -> f64 {
        crate::mm::MmKernel.verification_bytes(n)
    }

    /// Each logical process's blocks of `A`, `B` and `C` and the panels in flight (at most
    /// `max(P, Q)` of width at most `nb`); the root also holds its copies of `A` and `B`, the
    /// blocks of `C` it receives and `C`.
    fn memory_per_node(&self, n: usize, machine: &Machine) -> Result<Vec<f64>> {
        let layout = self.layout(n, machine)?;
        let root = machine.ranking()[0];
        let widest_panel = self.nb.min(n) as f64;
        let mut bytes = vec![0.0; machine.p()];
        for q in 0..layout.processes() {
            let (i, j) = layout.position(q);
            let (rows, cols) = (layout.rows(i, j).len() as f64, layout.cols(j).len() as f64);
            let panels_in_flight = (layout.grid.0.max(layout.grid.1)) as f64 * widest_panel;
            bytes[layout.host[q]] += (3.0 * rows * cols + panels_in_flight * (rows + cols)) * F64;
        }
        bytes[root] += 4.0 * (n as f64).powi(2) * F64;
        Ok(bytes)
    }

    /// The layout, the schedule (panel bounds, and for each panel the grid row of its `B` in
    /// every grid column: `O(N / nb)` entries per grid column, which an absurd `N` makes
    /// absurd) and one ring superstep's hops.
    fn overhead_bytes(&self, n: usize, machine: &Machine) -> Result<f64> {
        let layout = self.layout(n, machine)?;
        let (rows, cols) = layout.grid;
        let processes = layout.processes() as f64;
        let panels = (n / self.nb) as f64 + 1.0 + processes + cols as f64;
        let schedule = panels * (cols as f64 + 2.0) * 8.0;
        let hops = processes * rows.max(cols) as f64 * 2.0 * std::mem::size_of::<Send>() as f64;
        Ok(schedule
            + hops
            + crate::kernel::OVERHEAD_BYTES_PER_NODE * (processes + machine.p() as f64))
    }

    /// Replays the program's supersteps (after the starting barrier): (1) the root sends
    /// every logical process its blocks of `A` and `B` (two messages each, free to its own
    /// processes); (2) each ring step `s` carries the panel hops of `Schedule::sends_at`,
    /// each in its superstep (the `A` pass, one superstep or under HoHe1 one per message of
    /// the busiest column pair, then the `B` pass), and the `C` updates of
    /// `Schedule::updates_at` in the `B` pass's superstep, a node's processes computing one
    /// after another (HeHo), the slowest node pacing the superstep;
    /// (3) every process sends its block of `C` to the root; the root's assembly at the end
    /// costs nothing. Every message carries a 3-value header. No sequential part.
    fn overhead(&self, n: usize, machine: &Machine) -> Result<crate::kernel::Overhead> {
        let layout = self.layout(n, machine)?;
        let schedule = Schedule::new(&layout, n, self.nb);
        let p = machine.p();
        let root = machine.ranking()[0];
        let message = |elements: usize| (elements + HEADER) as f64 * F64;
        let (mut blocks, mut gather) = (Traffic::idle(p), Traffic::idle(p));
        for q in 0..layout.processes() {
            let (i, j) = layout.position(q);
            let block = message(layout.rows(i, j).len() * layout.cols(j).len());
            blocks.add(root, layout.host[q], block);
            blocks.add(root, layout.host[q], block);
            gather.add(layout.host[q], root, block);
        }
        let mut replay = Charges::new(machine);
        replay.superstep(IDLE, &blocks)?;
        for s in 0..schedule.ring_steps() {
            let mut traffic = vec![Traffic::idle(p); schedule.b_slot() + 1];
            for send in schedule.sends_at(&layout, s) {
                traffic[send.slot].add(
                    layout.host[send.from],
                    layout.host[send.to],
                    message(send.elements),
                );
            }
            let mut ops = vec![0.0; p];
            for (q, width) in schedule.updates_at(&layout, s) {
                let (i, j) = layout.position(q);
                ops[layout.host[q]] += 2.0
                    * layout.rows(i, j).len() as f64
                    * layout.cols(j).len() as f64
                    * width as f64;
            }
            for (slot, traffic) in traffic.iter().enumerate() {
                let compute = if slot == schedule.b_slot() {
                    &ops[..]
                } else {
                    IDLE
                };
                replay.superstep(compute, traffic)?;
            }
        }
        replay.superstep(IDLE, &gather)?;
        let w = crate::mm::work(n);
        Ok(replay.overhead(w, w, 0.0))
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Vec<Array>> {
        crate::memory::check_inputs_fit(self, n)?;
        product_operands(n, seed)
    }

    /// The size alone: a skeleton run sends its data as sizes and reads no value.
    fn skeleton_inputs(&self, n: usize, _seed: u64) -> Result<Vec<Array>> {
        crate::error::check_size("N", n, 1)?;
        Ok(vec![size_only(n)])
    }

    /// Per node its processes' bookkeeping, plus the schedule: nothing of size `N^2`.
    fn skeleton_bytes(&self, n: usize, machine: &Machine) -> Result<Option<f64>> {
        Ok(Some(self.overhead_bytes(n, machine)?))
    }

    /// A few hundred bytes per superstep and node.
    fn trace_bytes(&self, n: usize, machine: &Machine) -> Result<f64> {
        let layout = self.layout(n, machine)?;
        let (a_slots, _) = a_pass_slots(&layout);
        // At most as many panels as `Schedule::new` can cut, without building it.
        let panels = (n / self.nb) as f64 + 1.0 + layout.processes() as f64;
        let ring_steps = panels + layout.grid.0.max(layout.grid.1) as f64;
        let supersteps = ring_steps * (a_slots + 1) as f64 + 3.0;
        Ok(supersteps * machine.p() as f64 * 512.0)
    }

    fn run(&self, inputs: &[Array], backend: &Backend, machine: &Machine) -> Result<KernelRun> {
        if let Some(n) = skeleton_size("summa", inputs, backend, "A and B")? {
            return execute(None, n, self, backend, machine);
        }
        let (a, b) = square_operands("summa", inputs)?;
        multiply(&a, &b, self, backend, machine)
    }
}

/// Runs SUMMA `C = A B` with `config` on `machine` and verifies `C`.
pub fn multiply(
    a: &Matrix,
    b: &Matrix,
    config: &SummaKernel,
    backend: &Backend,
    machine: &Machine,
) -> Result<KernelRun> {
    let n = check_operands(a, b)?;
    execute(Some((a, b)), n, config, backend, machine)
}

/// Runs SUMMA at size `n` with `config`: on `operands` if given (then `C` is verified),
/// else, in a skeleton run, on sizes alone.
fn execute(
    operands: Option<(&Matrix, &Matrix)>,
    n: usize,
    config: &SummaKernel,
    backend: &Backend,
    machine: &Machine,
) -> Result<KernelRun> {
    let layout = config.layout(n, machine)?;
    let schedule = Schedule::new(&layout, n, config.nb);
    let program = Program {
        layout: &layout,
        schedule: &schedule,
        operands: operands.filter(|_| !skeleton(backend)),
        n,
    };
    let timed = timed_run(backend, machine, |ctx| program.node(ctx))?;
    let multiply_s = timed.results.iter().map(|r| r.1).fold(0.0, f64::max);
    let c = root_result(timed.results.into_iter().map(|r| r.0).collect())?;
    let (c, verification) = match operands {
        Some((a, b)) if !timed.compute_skipped => {
            let c = Matrix::new(n, n, c)?;
            let check = product_check(a, b, &c, 0x5eed);
            (c, check)
        }
        // A skeleton's root assembles nothing: no C of N^2 values.
        _ => (Matrix::new(0, 0, Vec::new())?, Verification::skipped()),
    };
    let (rows, cols) = layout.grid;
    Ok(KernelRun {
        kernel: "summa",
        n,
        p: machine.p(),
        work: crate::mm::work(n),
        time_s: timed.time_s,
        cluster_speed: machine.cluster_speed(),
        speed_unit: machine.speed_unit().to_owned(),
        result: Array::matrix("C", c),
        verification,
        details: vec![
            ("strategy".into(), config.strategy.name().into()),
            ("grid".into(), format!("{rows}x{cols}")),
            ("nb".into(), config.nb.to_string()),
            ("processes".into(), layout.processes().to_string()),
            ("panels".into(), schedule.panels().to_string()),
            (
                "layout efficiency".into(),
                format!("{:.4}", layout.efficiency),
            ),
            (MULTIPLY_PHASE_DETAIL.into(), format!("{multiply_s:.6}")),
        ],
        trace: timed.trace,
    })
}

/// Panels of the `k` dimension and the processes that own them.
struct Schedule {
    bounds: Vec<usize>,
    /// Grid column holding panel `t` of `A`.
    a_column: Vec<usize>,
    /// For panel `t` and grid column `j`, the grid row holding that panel of `B`.
    b_row: Vec<Vec<usize>>,
    grid: (usize, usize),
    /// Supersteps the `A` pass of a ring step takes: where rows are not aligned across grid
    /// columns (HoHe1), one per message of the busiest grid column pair, sent one after
    /// another (Kalinov's Statement 2); else 1.
    a_slots: usize,
    /// For each logical process, the superstep of the `A` pass in which it sends its first
    /// message (its others follow, one per superstep).
    a_first_slot: Vec<usize>,
}

/// One ring hop: `elements` values from logical process `from` to `to`, sent in superstep
/// `slot` of its ring step.
struct Send {
    from: usize,
    to: usize,
    elements: usize,
    slot: usize,
}

fn containing(bounds: &[usize], start: usize) -> usize {
    bounds.partition_point(|&b| b <= start) - 1
}

impl Schedule {
    fn new(layout: &Layout, n: usize, nb: usize) -> Self {
        let mut bounds: Vec<usize> = (0..n).step_by(nb.max(1)).chain([n]).collect();
        bounds.extend(&layout.col_bounds);
        layout.row_bounds.iter().for_each(|b| bounds.extend(b));
        bounds.sort_unstable();
        bounds.dedup();
        let starts = &bounds[..bounds.len() - 1];
        let a_column = starts
            .iter()
            .map(|&k| containing(&layout.col_bounds, k))
            .collect();
        let b_row = starts
            .iter()
            .map(|&k| {
                layout
                    .row_bounds
                    .iter()
                    .map(|rb| containing(rb, k))
                    .collect()
            })
            .collect();
        let (a_slots, a_first_slot) = a_pass_slots(layout);
        Self {
            bounds,
            a_column,
            b_row,
            grid: layout.grid,
            a_slots,
            a_first_slot,
        }
    }

    /// The superstep of a ring step that carries the `B` pass and the `C` updates: the one
    /// after the `A` pass's.
    fn b_slot(&self) -> usize {
        self.a_slots
    }

    fn panels(&self) -> usize {
        self.bounds.len() - 1
    }

    fn panel(&self, t: usize) -> std::ops::Range<usize> {
        self.bounds[t]..self.bounds[t + 1]
    }

    fn ring_steps(&self) -> usize {
        self.panels() + self.grid.0.max(self.grid.1) - 1
    }

    /// Hops of panel `t`'s `A` from grid column `j0` to process column `j`.
    fn a_distance(&self, t: usize, j: usize) -> usize {
        (j + self.grid.1 - self.a_column[t]) % self.grid.1
    }

    /// Hops of panel `t`'s `B` from its owner to process row `i` in grid column `j`.
    fn b_distance(&self, t: usize, i: usize, j: usize) -> usize {
        (i + self.grid.0 - self.b_row[t][j]) % self.grid.0
    }

    /// For each grid column, the panels whose `A` reaches it at ring step `s`: panel `t` is
    /// `s - t` hops from its owner column then. Found from the window alone, not by asking
    /// every process about every panel (HeHo runs thousands of processes on a node).
    fn a_due(&self, s: usize) -> Vec<Vec<usize>> {
        let cols = self.grid.1;
        let mut due = vec![Vec::new(); cols];
        for t in self.window(s).filter(|&t| s - t < cols) {
            due[(self.a_column[t] + s - t) % cols].push(t);
        }
        due
    }

    /// Panels that may be moving or due at superstep `s`.
    fn window(&self, s: usize) -> std::ops::Range<usize> {
        let depth = self.grid.0.max(self.grid.1);
        s.saturating_sub(depth - 1)..(s + 1).min(self.panels())
    }

    /// The `C` updates made at superstep `s` (for the overhead model): `(process, panel
    /// width)` for each process that holds both panels of some `t` then and owns a
    /// non-empty block, as [`Program::step`] and [`Program::update`] do.
    fn updates_at(&self, layout: &Layout, s: usize) -> Vec<(usize, usize)> {
        let mut updates = Vec::new();
        for t in self.window(s) {
            for q in 0..layout.processes() {
                let (i, j) = layout.position(q);
                let due = t + self.a_distance(t, j).max(self.b_distance(t, i, j));
                if s == due && !layout.rows(i, j).is_empty() && !layout.cols(j).is_empty() {
                    updates.push((q, self.panel(t).len()));
                }
            }
        }
        updates
    }

    /// Every ring hop made at superstep `s` (for the overhead model), as [`Program::pass_a`]
    /// and [`Program::pass_b`] make them: `A` rows to each overlapping process of the next
    /// grid column, `B` down the column unless this process has no columns.
    fn sends_at(&self, layout: &Layout, s: usize) -> Vec<Send> {
        let (rows, cols) = self.grid;
        let mut sends = Vec::new();
        for t in self.window(s) {
            let width = self.panel(t).len();
            for q in 0..layout.processes() {
                let (i, j) = layout.position(q);
                if s == t + self.a_distance(t, j) && self.a_distance(t, j) + 1 < cols {
                    for (k, (to, _, count)) in a_targets(layout, i, j).into_iter().enumerate() {
                        sends.push(Send {
                            from: q,
                            to,
                            elements: count * width,
                            slot: self.a_first_slot[q] + k,
                        });
                    }
                }
                if s == t + self.b_distance(t, i, j)
                    && self.b_distance(t, i, j) + 1 < rows
                    && !layout.cols(j).is_empty()
                {
                    let to = layout.process((i + 1) % rows, j);
                    sends.push(Send {
                        from: q,
                        to,
                        elements: width * layout.cols(j).len(),
                        slot: self.b_slot(),
                    });
                }
            }
        }
        sends
    }
}

/// The `A` pass's supersteps per ring step and each process's first one (see
/// [`Schedule::a_slots`]): in a true grid every process sends its one message at once; else
/// the messages from each grid column to the next go one per superstep, ordered by sending
/// row, then receiving row.
fn a_pass_slots(layout: &Layout) -> (usize, Vec<usize>) {
    let mut first = vec![0; layout.processes()];
    if layout.is_true_grid() {
        return (1, first);
    }
    let (rows, cols) = layout.grid;
    let mut slots = 1;
    for j in 0..cols {
        let mut next = 0;
        for i in 0..rows {
            first[layout.process(i, j)] = next;
            next += a_targets(layout, i, j).len();
        }
        slots = slots.max(next);
    }
    (slots, first)
}

/// Where process `(i, j)` passes its rows of an `A` panel: for each process of the next grid
/// column whose rows overlap, `(process, first overlapping row offset in my block, rows)`.
fn a_targets(layout: &Layout, i: usize, j: usize) -> Vec<(usize, usize, usize)> {
    let (rows, cols) = layout.grid;
    let next = (j + 1) % cols;
    let mine = layout.rows(i, j);
    (0..rows)
        .filter_map(|k| {
            let theirs = layout.rows(k, next);
            let (lo, hi) = (mine.start.max(theirs.start), mine.end.min(theirs.end));
            (lo < hi).then(|| (layout.process(k, next), lo - mine.start, hi - lo))
        })
        .collect()
}

/// A logical process's data on its host.
struct Process {
    q: usize,
    i: usize,
    j: usize,
    rows: usize,
    cols: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    a_panels: HashMap<usize, Vec<f64>>,
    b_panels: HashMap<usize, Vec<f64>>,
}

struct Program<'a> {
    layout: &'a Layout,
    schedule: &'a Schedule,
    /// `A` and `B`; `None` in a skeleton run, which sends sizes only and holds no block.
    operands: Option<(&'a Matrix, &'a Matrix)>,
    n: usize,
}

impl Program<'_> {
    /// The whole node: returns `C` on the root and the multiply phase's duration.
    fn node(&self, ctx: &mut Ctx<'_>) -> Result<(Option<Vec<f64>>, f64)> {
        let root = ctx.rank(1)?;
        let mut procs: Vec<Process> = (0..self.layout.processes())
            .filter(|&q| self.layout.host[q] == ctx.pid())
            .map(|q| self.empty_process(q))
            .collect();
        ctx.phase("distribute", |ctx| {
            if ctx.pid() == root {
                self.send_blocks(ctx)?;
            }
            ctx.sync()?;
            self.receive(ctx, &mut procs)
        })?;
        let start = ctx.time();
        ctx.phase("multiply", |ctx| {
            for s in 0..self.schedule.ring_steps() {
                let a_due = self.schedule.a_due(s);
                for slot in 0..=self.schedule.b_slot() {
                    for proc in procs.iter_mut() {
                        self.step(ctx, proc, s, slot, &a_due[proc.j])?;
                    }
                    ctx.sync()?;
                    self.receive(ctx, &mut procs)?;
                }
            }
            Ok::<_, KernelError>(())
        })?;
        let multiply_s = ctx.time() - start;
        let c = ctx.phase("collect", |ctx| self.collect(ctx, &procs, root))?;
        Ok((c, multiply_s))
    }

    fn empty_process(&self, q: usize) -> Process {
        let (i, j) = self.layout.position(q);
        let (rows, cols) = (self.layout.rows(i, j).len(), self.layout.cols(j).len());
        let c = if self.operands.is_some() {
            vec![0.0; rows * cols]
        } else {
            Vec::new()
        };
        Process {
            q,
            i,
            j,
            rows,
            cols,
            a: Vec::new(),
            b: Vec::new(),
            c,
            a_panels: HashMap::new(),
            b_panels: HashMap::new(),
        }
    }

    fn send_blocks(&self, ctx: &mut Ctx<'_>) -> Result<()> {
        for q in 0..self.layout.processes() {
            let (i, j) = self.layout.position(q);
            let (r, c) = (self.layout.rows(i, j), self.layout.cols(j));
            let Some((a, b)) = self.operands else {
                for tag in [BLOCK_A, BLOCK_B] {
                    send_size(ctx, self.layout.host[q], tag, r.len() * c.len())?;
                }
                continue;
            };
            for (tag, m) in [(BLOCK_A, a), (BLOCK_B, b)] {
                let mut message = header(q, 0, 0);
                message.extend(m.block(r.start, r.end, c.start, c.end));
                ctx.send_vec(self.layout.host[q], tag, message)?;
            }
        }
        Ok(())
    }

    /// Files every queued message with the logical process it is addressed to (a skeleton
    /// drops them unread).
    fn receive(&self, ctx: &mut Ctx<'_>, procs: &mut [Process]) -> Result<()> {
        if self.operands.is_none() {
            ctx.discard_all();
            return Ok(());
        }
        for message in ctx.recv_all::<f64>()? {
            let (q, t, offset) = (
                message.data[0] as usize,
                message.data[1] as usize,
                message.data[2] as usize,
            );
            let body = &message.data[HEADER..];
            // A node's processes are in ascending order (HeHo runs thousands on one node).
            let at = procs.binary_search_by_key(&q, |p| p.q).map_err(|_| {
                invalid(format!(
                    "a SUMMA message for process {q} reached a node that does not run it"
                ))
            })?;
            let proc = &mut procs[at];
            let width = self.schedule.panel(t).len();
            match message.tag {
                BLOCK_A => proc.a = body.to_vec(),
                BLOCK_B => proc.b = body.to_vec(),
                PANEL_A => {
                    let panel = proc
                        .a_panels
                        .entry(t)
                        .or_insert_with(|| vec![0.0; proc.rows * width]);
                    panel[offset * width..offset * width + body.len()].copy_from_slice(body);
                }
                PANEL_B => {
                    proc.b_panels.insert(t, body.to_vec());
                }
                _ => {
                    return Err(invalid(format!(
                        "unexpected SUMMA message tag {}",
                        message.tag
                    )));
                }
            }
        }
        Ok(())
    }

    /// Superstep `slot` of ring step `s` of one process: in the `A` pass take own `A`
    /// panels and pass on the `A` panels `a_due` (the messages due in this slot); in the `B`
    /// pass take own `B` panels, pass them on and update `C`.
    fn step(
        &self,
        ctx: &mut Ctx<'_>,
        proc: &mut Process,
        s: usize,
        slot: usize,
        a_due: &[usize],
    ) -> Result<()> {
        let (rows, cols) = self.layout.grid;
        let real = self.operands.is_some();
        if slot < self.schedule.b_slot() {
            for &t in a_due {
                let da = self.schedule.a_distance(t, proc.j);
                if slot == 0 && da == 0 && real {
                    let panel = self.own_a_panel(proc, t);
                    proc.a_panels.insert(t, panel);
                }
                if da + 1 < cols {
                    self.pass_a(ctx, proc, t, slot)?;
                }
            }
            return Ok(());
        }
        for t in self.schedule.window(s) {
            let da = self.schedule.a_distance(t, proc.j);
            let db = self.schedule.b_distance(t, proc.i, proc.j);
            if s == t + db {
                if db == 0 && real {
                    let panel = self.own_b_panel(proc, t);
                    proc.b_panels.insert(t, panel);
                }
                if db + 1 < rows {
                    self.pass_b(ctx, proc, t)?;
                }
            }
            if s == t + da.max(db) {
                self.update(ctx, proc, t)?;
            }
        }
        Ok(())
    }

    fn own_a_panel(&self, proc: &Process, t: usize) -> Vec<f64> {
        let panel = self.schedule.panel(t);
        let first = panel.start - self.layout.cols(proc.j).start;
        let mut out = Vec::with_capacity(proc.rows * panel.len());
        for row in proc.a.chunks_exact(proc.cols.max(1)).take(proc.rows) {
            out.extend_from_slice(&row[first..first + panel.len()]);
        }
        out
    }

    fn own_b_panel(&self, proc: &Process, t: usize) -> Vec<f64> {
        let panel = self.schedule.panel(t);
        let first = panel.start - self.layout.rows(proc.i, proc.j).start;
        proc.b[first * proc.cols..(first + panel.len()) * proc.cols].to_vec()
    }

    /// Sends the messages of panel `t`'s `A` hop that are due in superstep `slot`.
    fn pass_a(&self, ctx: &mut Ctx<'_>, proc: &Process, t: usize, slot: usize) -> Result<()> {
        let width = self.schedule.panel(t).len();
        let panel = proc.a_panels.get(&t).map_or(&[][..], Vec::as_slice);
        let targets = a_targets(self.layout, proc.i, proc.j)
            .into_iter()
            .enumerate();
        for (k, (to, first, count)) in targets {
            if self.schedule.a_first_slot[proc.q] + k != slot {
                continue;
            }
            if self.operands.is_none() {
                send_size(ctx, self.layout.host[to], PANEL_A, count * width)?;
                continue;
            }
            let (ti, tj) = self.layout.position(to);
            let offset =
                self.layout.rows(proc.i, proc.j).start + first - self.layout.rows(ti, tj).start;
            let mut message = header(to, t, offset);
            message.extend_from_slice(&panel[first * width..(first + count) * width]);
            ctx.send_vec(self.layout.host[to], PANEL_A, message)?;
        }
        Ok(())
    }

    fn pass_b(&self, ctx: &mut Ctx<'_>, proc: &Process, t: usize) -> Result<()> {
        if proc.cols == 0 {
            return Ok(());
        }
        let to = self
            .layout
            .process((proc.i + 1) % self.layout.grid.0, proc.j);
        if self.operands.is_none() {
            let width = self.schedule.panel(t).len();
            return send_size(ctx, self.layout.host[to], PANEL_B, width * proc.cols);
        }
        let mut message = header(to, t, 0);
        message.extend_from_slice(proc.b_panels.get(&t).map_or(&[][..], Vec::as_slice));
        ctx.send_vec(self.layout.host[to], PANEL_B, message)?;
        Ok(())
    }

    fn update(&self, ctx: &mut Ctx<'_>, proc: &mut Process, t: usize) -> Result<()> {
        let width = self.schedule.panel(t).len();
        let a = proc.a_panels.remove(&t).unwrap_or_default();
        let b = proc.b_panels.remove(&t).unwrap_or_default();
        if proc.rows == 0 || proc.cols == 0 {
            return Ok(());
        }
        let (m, n) = (proc.rows, proc.cols);
        ctx.compute(2.0 * (m * n * width) as f64, || {
            gemm((m, n, width), &a, &b, &mut proc.c, true)
        })?;
        Ok(())
    }

    fn collect(
        &self,
        ctx: &mut Ctx<'_>,
        procs: &[Process],
        root: usize,
    ) -> Result<Option<Vec<f64>>> {
        for proc in procs {
            if self.operands.is_none() {
                send_size(ctx, root, BLOCK_C, proc.rows * proc.cols)?;
                continue;
            }
            let mut message = header(proc.q, 0, 0);
            message.extend_from_slice(&proc.c);
            ctx.send_vec(root, BLOCK_C, message)?;
        }
        ctx.sync()?;
        if ctx.pid() != root {
            return Ok(None);
        }
        if self.operands.is_none() {
            ctx.discard_all();
            return Ok(Some(Vec::new()));
        }
        let mut c = vec![0.0; self.n * self.n];
        for message in ctx.recv_all::<f64>()? {
            let (i, j) = self.layout.position(message.data[0] as usize);
            let (r, cols) = (self.layout.rows(i, j), self.layout.cols(j));
            put_block(
                &mut c,
                self.n,
                (r.start, cols.start),
                &message.data[HEADER..],
                cols.len(),
            );
        }
        Ok(Some(c))
    }
}

fn header(q: usize, t: usize, offset: usize) -> Vec<f64> {
    vec![q as f64, t as f64, offset as f64]
}

/// What a skeleton sends instead of a message of `elements` values and its header: the
/// message's size, charged like the data.
fn send_size(ctx: &mut Ctx<'_>, to: usize, tag: u32, elements: usize) -> Result<()> {
    ctx.send_zeros(to, tag, (elements + HEADER) * std::mem::size_of::<f64>())?;
    Ok(())
}
