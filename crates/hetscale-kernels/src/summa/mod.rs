//! `summa`: SUMMA `C = A B` on a logical `P x Q` grid with pipelined ring broadcasts and
//! panel width `nb`, under the four distribution strategies of Kalinov section 4
//! ([`layout`]).
//!
//! The root (the fastest node) sends every logical process its blocks of `A` and `B`. The
//! `k` dimension is cut into panels at every multiple of `nb` and at every block boundary, so
//! each panel of `A` lies in one grid column and each panel of `B` in one process per grid
//! column. Panel `t` starts at superstep `t`: its owners pass it one hop along their ring per
//! superstep (`A` along grid rows to the next grid column, `B` down each grid column), so
//! successive panels are in flight together, as in van de Geijn & Watts' pipelined SUMMA. A
//! process updates `C_ij += A_i,t B_t,j` in the superstep both panels reach it. Under HoHe1
//! grid columns cut rows differently, so a hop sends each process of the next column the rows
//! it needs from each process of this column (at most `2P - 1` messages: Kalinov's Statement 1).
//! Finally the root gathers `C`. There are `T + max(P, Q) - 1` ring supersteps for `T` panels.
//!
//! HeHo places several logical processes on one node: the node runs them one after another in
//! each superstep, so they share its speed (messages between them are sends to itself, free in
//! HBSP^1). Other strategies run one process per node.
//!
//! Only square problems are run (`m = n = k = N`). Work `W = 2 N^3` (`2 m n k`), counted
//! exactly. Overhead model: the exact HBSP^1 cost of the distribution, of every ring
//! superstep (its traffic, and its compute as the slowest node does it, so the layout's load
//! imbalance and the pipeline's fill and drain are overhead) and of the gather. No
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
use crate::kernel::{Kernel, KernelRun, Verification, root_result, speeds, timed_run};
use crate::local::gemm;
use crate::matrix::{Matrix, put_block};
use crate::mm::check_operands;
use crate::verify::product_check;
pub use layout::{Layout, default_grid, partition};

const F64: f64 = 8.0;
const HEADER: usize = 3;

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
    /// processes); (2) each ring superstep `s` carries the panel hops of
    /// `Schedule::sends_at` and the `C` updates of `Schedule::updates_at`, a node's
    /// processes computing one after another (HeHo), the slowest node pacing the superstep;
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
        for s in 0..schedule.supersteps() {
            let mut traffic = Traffic::idle(p);
            for send in schedule.sends_at(&layout, s) {
                traffic.add(
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
            replay.superstep(&ops, &traffic)?;
        }
        replay.superstep(IDLE, &gather)?;
        let w = crate::mm::work(n);
        Ok(replay.overhead(w, w, 0.0))
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Vec<Array>> {
        crate::memory::check_inputs_fit(self, n)?;
        product_operands(n, seed)
    }

    fn run(&self, inputs: &[Array], backend: &Backend, machine: &Machine) -> Result<KernelRun> {
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
    let layout = config.layout(n, machine)?;
    let schedule = Schedule::new(&layout, n, config.nb);
    let program = Program {
        layout: &layout,
        schedule: &schedule,
        a,
        b,
        n,
    };
    let timed = timed_run(backend, machine, |ctx| program.node(ctx))?;
    let multiply_s = timed.results.iter().map(|r| r.1).fold(0.0, f64::max);
    let c = Matrix::new(
        n,
        n,
        root_result(timed.results.into_iter().map(|r| r.0).collect())?,
    )?;
    let verification =
        Verification::unless_skipped(timed.compute_skipped, || product_check(a, b, &c, 0x5eed));
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
            ("multiply phase (s)".into(), format!("{multiply_s:.6}")),
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
}

/// One ring hop: `elements` values from logical process `from` to `to`.
struct Send {
    from: usize,
    to: usize,
    elements: usize,
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
        Self {
            bounds,
            a_column,
            b_row,
            grid: layout.grid,
        }
    }

    fn panels(&self) -> usize {
        self.bounds.len() - 1
    }

    fn panel(&self, t: usize) -> std::ops::Range<usize> {
        self.bounds[t]..self.bounds[t + 1]
    }

    fn supersteps(&self) -> usize {
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
                    for (to, _, count) in a_targets(layout, i, j) {
                        sends.push(Send {
                            from: q,
                            to,
                            elements: count * width,
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
                    });
                }
            }
        }
        sends
    }
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
    a: &'a Matrix,
    b: &'a Matrix,
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
            for s in 0..self.schedule.supersteps() {
                for proc in procs.iter_mut() {
                    self.step(ctx, proc, s)?;
                }
                ctx.sync()?;
                self.receive(ctx, &mut procs)?;
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
        Process {
            q,
            i,
            j,
            rows,
            cols,
            a: Vec::new(),
            b: Vec::new(),
            c: vec![0.0; rows * cols],
            a_panels: HashMap::new(),
            b_panels: HashMap::new(),
        }
    }

    fn send_blocks(&self, ctx: &mut Ctx<'_>) -> Result<()> {
        for q in 0..self.layout.processes() {
            let (i, j) = self.layout.position(q);
            let (r, c) = (self.layout.rows(i, j), self.layout.cols(j));
            for (tag, m) in [(BLOCK_A, self.a), (BLOCK_B, self.b)] {
                let mut message = header(q, 0, 0);
                message.extend(m.block(r.start, r.end, c.start, c.end));
                ctx.send_vec(self.layout.host[q], tag, message)?;
            }
        }
        Ok(())
    }

    /// Files every queued message with the logical process it is addressed to.
    fn receive(&self, ctx: &mut Ctx<'_>, procs: &mut [Process]) -> Result<()> {
        for message in ctx.recv_all::<f64>()? {
            let (q, t, offset) = (
                message.data[0] as usize,
                message.data[1] as usize,
                message.data[2] as usize,
            );
            let body = &message.data[HEADER..];
            let proc = procs.iter_mut().find(|p| p.q == q).ok_or_else(|| {
                invalid(format!(
                    "a SUMMA message for process {q} reached a node that does not run it"
                ))
            })?;
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

    /// Superstep `s` of one process: take own panels, pass panels on, update `C`.
    fn step(&self, ctx: &mut Ctx<'_>, proc: &mut Process, s: usize) -> Result<()> {
        let (rows, cols) = self.layout.grid;
        for t in self.schedule.window(s) {
            let da = self.schedule.a_distance(t, proc.j);
            let db = self.schedule.b_distance(t, proc.i, proc.j);
            if s == t + da {
                if da == 0 {
                    let panel = self.own_a_panel(proc, t);
                    proc.a_panels.insert(t, panel);
                }
                if da + 1 < cols {
                    self.pass_a(ctx, proc, t)?;
                }
            }
            if s == t + db {
                if db == 0 {
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

    fn pass_a(&self, ctx: &mut Ctx<'_>, proc: &Process, t: usize) -> Result<()> {
        let width = self.schedule.panel(t).len();
        let panel = proc.a_panels.get(&t).map_or(&[][..], Vec::as_slice);
        for (to, first, count) in a_targets(self.layout, proc.i, proc.j) {
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
            let mut message = header(proc.q, 0, 0);
            message.extend_from_slice(&proc.c);
            ctx.send_vec(root, BLOCK_C, message)?;
        }
        ctx.sync()?;
        if ctx.pid() != root {
            return Ok(None);
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
