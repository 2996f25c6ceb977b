//! `slalom`: the SLALOM benchmark's radiosity problem (Gustafson et al.), as Sun & Rover ran
//! it on the nCUBE 2 and the MasPar (IEEE TPDS 1994, section IV-C and D, Tables VI-VII and
//! X-XI): the equilibrium radiation of a closed box whose six faces are cut into `N` patches
//! that emit and reflect diffusely.
//!
//! The program has SLALOM's three stages:
//!
//! 1. **Setup**: every node builds the geometry (the box, `4 x 3 x 2`, its faces cut into
//!    patches in proportion to their areas, each face a grid of rectangles) and the rows it
//!    owns of the radiosity matrix `A = I - diag(rho) F` and of `b = E`. The form factor of
//!    patch `j` seen from patch `i` on another face is the point-to-disk one,
//!    `F_ij = A_j cos t_i cos t_j / (pi r^2 + A_j)`, which stays below 1 for neighbours;
//!    patches of one face do not see each other (`F_ij = 0`). Rows are dealt by the
//!    heterogeneous cyclic distribution of `ge` (in proportion to marked speed), and nothing
//!    is communicated: each node holds its rows from the start.
//! 2. **Solve**: `A x = b` with partial pivoting, laid out as the `layout` option says:
//!    - [`Layout::Rows`] (the default): `ge`'s solver core ([`crate::ge`]'s elimination on
//!      rows dealt in proportion to speed, the rows gathered on the root, back substitution
//!      there);
//!    - [`Layout::Grid`]: the nCUBE 2 program's `sqrt(p) x sqrt(p)` process grid, the
//!      matrix cyclic over it, pivot search and broadcasts along grid columns and rows in
//!      `log2 sqrt(p)` neighbour steps, a distributed back substitution and no gather of the
//!      matrix (`slalom_grid`); the setup then builds each node's block of rows and columns.
//!      It needs a square number of nodes.
//! 3. **Answer**: the root forms the total radiated power `sum_i A_i x_i`.
//!
//! Inputs: the reflectance `rho` and emittance `E` of every patch (as [`SlalomKernel::generate`]
//! makes them: a face's patches share its colour; the ceiling emits). The result is the
//! radiosity `x` of every patch.
//!
//! Work, counted exactly: `18` flops per coupling of two patches on different faces
//! ([`FORM_FACTOR_FLOPS`]: the offset `3`, `r^2` `5`, the two cosines `2`, the numerator `2`,
//! the denominator `3`, the quotient `1`, `0 - rho_i F_ij` `2`), `ge`'s
//! `2/3 N^3 + 3/2 N^2 - 7/6 N` for elimination and back substitution ([`crate::ge::flops`]),
//! and `2 N` for the answer:
//! `W(N) = 18 (N^2 - sum_f n_f^2) + 2/3 N^3 + 3/2 N^2 + 5/6 N`, with `n_f` the
//! patches of face `f`. Sun & Rover state no closed form for SLALOM's work, only that it is
//! at most of order `N^3` with `N^2` storage (section IV); the geometry (`O(N)` coordinate
//! arithmetic on every node) and pivot comparisons are not counted.
//!
//! Overhead model: the setup is compute only (each node's couplings, paced by the slowest
//! node in the first superstep), then the solve replayed superstep by superstep: `ge`'s
//! (exact; sequential fraction: back substitution and the answer on the root,
//! `(N^2 + 2 N) / W`) or the grid's (a step's multipliers charged with its update; the
//! answer, `2 N / W`, sequential).

use hbsp::{Backend, Ctx, Machine};

use crate::array::{Array, expect_arrays};
use crate::charges::Charges;
use crate::error::{KernelError, Result, check_size, invalid};
use crate::ge::{self, Elimination, LocalRows, Pivoting, SolveModel, residual_check};
use crate::input::{Stream, uniform};
use crate::kernel::{
    Kernel, KernelRun, Overhead, Verification, root_result, skeleton, speeds, timed_run,
};
use crate::matrix::Matrix;
use crate::partition::{block_counts, cyclic_owners, efficiency_detail};
use crate::slalom_grid::{Block, Grid, GridSolver};
use crate::verify::relative_max_error;

const F64: f64 = 8.0;

/// Flops of one coupling `A_ij = 0 - rho_i F_ij` of patches on different faces.
pub const FORM_FACTOR_FLOPS: f64 = 18.0;

/// The box: width, depth, height.
const BOX: [f64; 3] = [4.0, 3.0, 2.0];

/// The face that emits light: the ceiling (`z = height`).
const CEILING: usize = 5;

/// SLALOM's radiosity problem: setup, GE solve, answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct SlalomKernel {
    /// How the matrix is spread over the nodes.
    pub layout: Layout,
}

/// How SLALOM spreads its matrix over the nodes (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Whole rows, dealt in proportion to speed; `ge`'s solver.
    #[default]
    Rows,
    /// A `q x q` process grid (`p = q^2`), rows and columns cyclic over it.
    Grid,
}

impl Layout {
    /// `rows` or `grid`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rows => "rows",
            Self::Grid => "grid",
        }
    }
}

impl std::str::FromStr for Layout {
    type Err = KernelError;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "rows" => Ok(Self::Rows),
            "grid" => Ok(Self::Grid),
            _ => Err(invalid(format!(
                "unknown slalom layout \"{s}\": use rows or grid"
            ))),
        }
    }
}

/// A face of the box: the axis its normal is on, the coordinate of its plane, the signs of
/// its inward and outward normals, and the two axes it spans.
#[derive(Debug, Clone, Copy)]
struct Face {
    normal_axis: usize,
    plane: f64,
    inward: f64,
    outward: f64,
    spans: [usize; 2],
}

/// The six faces: `x = 0`, `x = W`, `y = 0`, `y = D`, `z = 0` (floor), `z = H` (ceiling).
fn faces() -> [Face; 6] {
    let face = |axis: usize, far: bool| Face {
        normal_axis: axis,
        plane: if far { BOX[axis] } else { 0.0 },
        inward: if far { -1.0 } else { 1.0 },
        outward: if far { 1.0 } else { -1.0 },
        spans: match axis {
            0 => [1, 2],
            1 => [0, 2],
            _ => [0, 1],
        },
    };
    [
        face(0, false),
        face(0, true),
        face(1, false),
        face(1, true),
        face(2, false),
        face(2, true),
    ]
}

/// A patch: its face, centre and area.
#[derive(Debug, Clone, Copy)]
struct Patch {
    face: usize,
    centre: [f64; 3],
    area: f64,
}

/// Patches of each face, in proportion to the faces' areas (largest remainders).
fn patches_per_face(n: usize) -> Result<Vec<usize>> {
    let areas: Vec<f64> = faces()
        .iter()
        .map(|f| BOX[f.spans[0]] * BOX[f.spans[1]])
        .collect();
    block_counts(n, &areas)
}

/// The `N` patches, face by face: face `f`'s `n_f` patches in `ceil(sqrt(n_f))` rows along
/// its second axis, the rows' patch counts within one of each other.
fn geometry(n: usize) -> Result<Vec<Patch>> {
    let mut patches = Vec::with_capacity(n);
    for (f, (face, count)) in faces().iter().zip(patches_per_face(n)?).enumerate() {
        if count == 0 {
            continue;
        }
        let rows = (count as f64).sqrt().ceil() as usize;
        let [u, v] = face.spans;
        let height = BOX[v] / rows as f64;
        for row in 0..rows {
            let in_row = count / rows + usize::from(row < count % rows);
            let width = BOX[u] / in_row as f64;
            for k in 0..in_row {
                let mut centre = [0.0; 3];
                centre[face.normal_axis] = face.plane;
                centre[u] = (k as f64 + 0.5) * width;
                centre[v] = (row as f64 + 0.5) * height;
                patches.push(Patch {
                    face: f,
                    centre,
                    area: width * height,
                });
            }
        }
    }
    Ok(patches)
}

/// Couplings each row of a problem of `N` patches computes: the patches on other faces.
fn couplings(per_face: &[usize], patch_face: usize) -> f64 {
    let n: usize = per_face.iter().sum();
    (n - per_face[patch_face]) as f64
}

/// `W(N)`, the exact flop count (see the module docs).
pub fn work(n: usize) -> Result<f64> {
    let per_face = patches_per_face(n)?;
    let nf = n as f64;
    let same_face: f64 = per_face.iter().map(|&c| (c as f64).powi(2)).sum();
    Ok(FORM_FACTOR_FLOPS * (nf * nf - same_face) + ge::flops(n) + answer_flops(n))
}

/// The answer stage's flops: `sum_i A_i x_i`, a product and an addition per patch.
fn answer_flops(n: usize) -> f64 {
    2.0 * n as f64
}

/// Row `i` of `[A | b]`: `1` on the diagonal, `0 - rho_i F_ij` for patches `j` on other faces,
/// then `E_i`.
fn matrix_row(patches: &[Patch], rho: &[f64], emittance: &[f64], i: usize) -> Vec<f64> {
    (0..=patches.len())
        .map(|j| entry(patches, rho, emittance, i, j))
        .collect()
}

/// Entry `(i, j)` of `[A | b]` (column `N` is `b`).
fn entry(patches: &[Patch], rho: &[f64], emittance: &[f64], i: usize, j: usize) -> f64 {
    let n = patches.len();
    if j == n {
        return emittance[i];
    }
    if j == i {
        return 1.0;
    }
    let (me, other) = (&patches[i], &patches[j]);
    if other.face == me.face {
        return 0.0;
    }
    let faces = faces();
    let (mine, theirs) = (&faces[me.face], &faces[other.face]);
    {
        let d = [
            other.centre[0] - me.centre[0],
            other.centre[1] - me.centre[1],
            other.centre[2] - me.centre[2],
        ];
        let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        // r cos t_i and r cos t_j: the inward normals are unit vectors along an axis.
        let cos_i = mine.inward * d[mine.normal_axis];
        let cos_j = theirs.outward * d[theirs.normal_axis];
        let numerator = cos_i * cos_j * other.area;
        let denominator = r2 * (std::f64::consts::PI * r2 + other.area);
        0.0 - rho[i] * (numerator / denominator)
    }
}

/// Checks the inputs: `rho` and `E` of equal length `N >= 2`, `0 <= rho < 1` (a face that
/// reflected everything would make the box's light grow without bound), `E >= 0`.
fn check_inputs(rho: &[f64], emittance: &[f64]) -> Result<usize> {
    let n = rho.len();
    check_size("N (patches)", n, 2)?;
    if emittance.len() != n {
        return Err(invalid(format!(
            "rho has {n} patches but E has {}: give one emittance per patch",
            emittance.len()
        )));
    }
    if let Some(i) = rho.iter().position(|r| !(0.0..1.0).contains(r)) {
        return Err(invalid(format!(
            "rho[{i}] = {}: reflectances must be in [0, 1)",
            rho[i]
        )));
    }
    if let Some(i) = emittance.iter().position(|e| !(e.is_finite() && *e >= 0.0)) {
        return Err(invalid(format!(
            "E[{i}] = {}: emittances must be finite and >= 0",
            emittance[i]
        )));
    }
    Ok(n)
}

impl Kernel for SlalomKernel {
    fn name(&self) -> &'static str {
        "slalom"
    }

    fn work(&self, n: usize) -> f64 {
        work(n).unwrap_or(f64::NAN)
    }

    fn counted_ops(&self, n: usize) -> f64 {
        self.work(n)
    }

    /// `rho` and `E`.
    fn input_bytes(&self, n: usize) -> f64 {
        2.0 * n as f64 * F64
    }

    /// The sequential reference: the whole `[A | b]`, its factors and `x`.
    fn verification_bytes(&self, n: usize) -> f64 {
        let n = n as f64;
        (n * (n + 1.0) + 2.0 * n) * F64
    }

    /// A node's rows of `[A | b]`, the geometry and the pivot row; the root also holds the
    /// gathered rows and `x` (as `ge`).
    fn memory_per_node(&self, n: usize, machine: &Machine) -> Result<Vec<f64>> {
        if self.layout == Layout::Grid {
            return grid_memory(n, machine);
        }
        let shares = hetscale_model::hbsp::integer_shares(n, &speeds(machine))?;
        let root = machine.ranking()[0];
        let (nf, width) = (n as f64, n as f64 + 1.0);
        Ok(shares
            .iter()
            .enumerate()
            .map(|(j, &rows)| {
                let root_copy = if j == root { nf * width + nf } else { 0.0 };
                ((rows as f64 + 1.0) * width + 5.0 * nf + root_copy) * F64
            })
            .collect())
    }

    /// The solve's trace, as `ge`'s with partial pivoting.
    fn trace_bytes(&self, n: usize, machine: &Machine) -> Result<f64> {
        Ok(ge::elimination_trace_bytes(n, Pivoting::Partial, machine))
    }

    /// The row owners (the setup's compute is counted row by row) and what replaying takes.
    fn overhead_bytes(&self, n: usize, machine: &Machine) -> Result<f64> {
        Ok(n as f64 * 8.0 + crate::kernel::OVERHEAD_BYTES_PER_NODE * machine.p() as f64)
    }

    /// The setup's compute (each node's rows times their couplings) in the first superstep,
    /// then `ge`'s solve (`SolveModel::replay`) with the answer on the root at the end.
    fn overhead(&self, n: usize, machine: &Machine) -> Result<Overhead> {
        check_size("N (patches)", n, 2)?;
        let w = work(n)?;
        let setup = match self.layout {
            Layout::Rows => setup_ops(n, machine)?,
            Layout::Grid => grid_setup_ops(n, Grid::of(machine.p())?)?,
        };
        let solve = SolveModel {
            n,
            pivoting: Pivoting::Partial,
            block: 1,
            work_per_flop: 1.0,
        };
        let mut replay = Charges::new(machine);
        if self.layout == Layout::Grid {
            crate::slalom_grid::replay(&mut replay, machine, n, setup, answer_flops(n))?;
            return Ok(replay.overhead(w, w, answer_flops(n)));
        }
        let sequential = solve.replay(&mut replay, machine, setup, answer_flops(n))?;
        Ok(replay.overhead(w, w, sequential))
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Vec<Array>> {
        check_size("N (patches)", n, 2)?;
        crate::memory::check_inputs_fit(self, n)?;
        let colour = uniform(6, seed, Stream::A);
        let patches = geometry(n)?;
        let rho = patches.iter().map(|p| 0.5 + 0.4 * colour[p.face]).collect();
        let emittance = patches
            .iter()
            .map(|p| if p.face == CEILING { 1.0 } else { 0.0 })
            .collect();
        Ok(vec![
            Array::vector("rho", rho),
            Array::vector("E", emittance),
        ])
    }

    fn run(&self, inputs: &[Array], backend: &Backend, machine: &Machine) -> Result<KernelRun> {
        let [rho, emittance] = expect_arrays("slalom", inputs, &["rho", "E"])? else {
            unreachable!("expect_arrays checked the count")
        };
        solve(
            &rho.to_vector(2)?,
            &emittance.to_vector(2)?,
            self.layout,
            backend,
            machine,
        )
    }
}

/// The setup's operations on each node: its rows' couplings.
fn setup_ops(n: usize, machine: &Machine) -> Result<Vec<f64>> {
    let per_face = patches_per_face(n)?;
    let faces_of = face_of_each_patch(&per_face);
    let mut ops = vec![0.0; machine.p()];
    for (i, owner) in cyclic_owners(n, &speeds(machine))?.into_iter().enumerate() {
        ops[owner] += FORM_FACTOR_FLOPS * couplings(&per_face, faces_of[i]);
    }
    Ok(ops)
}

/// The setup's operations on each node of the grid: its rows' couplings with its columns,
/// from the patches per face of its rows and of its columns.
fn grid_setup_ops(n: usize, grid: Grid) -> Result<Vec<f64>> {
    let per_face = patches_per_face(n)?;
    let faces_of = face_of_each_patch(&per_face);
    let count = |indices: Vec<usize>| {
        let mut on = [0.0f64; 6];
        indices
            .into_iter()
            .filter(|&i| i < n)
            .for_each(|i| on[faces_of[i]] += 1.0);
        on
    };
    let q = grid.q;
    let row_faces: Vec<[f64; 6]> = (0..q).map(|r| count((r..n).step_by(q).collect())).collect();
    let col_faces: Vec<[f64; 6]> = (0..q).map(|c| count((c..n).step_by(q).collect())).collect();
    Ok((0..q * q)
        .map(|pid| {
            let (rows, cols) = (&row_faces[pid / q], &col_faces[pid % q]);
            let all: f64 = cols.iter().sum();
            let pairs: f64 = (0..6).map(|f| rows[f] * (all - cols[f])).sum();
            FORM_FACTOR_FLOPS * pairs
        })
        .collect())
}

/// Per node of the grid: its block of `[A | b]` (`ceil(N/q) x ceil((N+1)/q)`), the pivot
/// row's and the multipliers' segments, the geometry and `x`; node 0 also assembles `x`.
fn grid_memory(n: usize, machine: &Machine) -> Result<Vec<f64>> {
    let q = Grid::of(machine.p())?.q as f64;
    let nf = n as f64;
    let (rows, cols) = ((nf / q).ceil(), ((nf + 1.0) / q).ceil());
    Ok((0..machine.p())
        .map(|pid| {
            let root = if pid == 0 { nf } else { 0.0 };
            (rows * cols + rows + cols + 6.0 * nf + root) * F64
        })
        .collect())
}

fn face_of_each_patch(per_face: &[usize]) -> Vec<usize> {
    per_face
        .iter()
        .enumerate()
        .flat_map(|(f, &c)| std::iter::repeat_n(f, c))
        .collect()
}

/// Runs SLALOM for patches of reflectance `rho` and emittance `emittance` on `machine` and
/// verifies the radiosities against a sequential solve of the same system.
pub fn solve(
    rho: &[f64],
    emittance: &[f64],
    layout: Layout,
    backend: &Backend,
    machine: &Machine,
) -> Result<KernelRun> {
    let n = check_inputs(rho, emittance)?;
    let grid = match layout {
        Layout::Grid => Some(Grid::of(machine.p())?),
        Layout::Rows => None,
    };
    let patches = geometry(n)?;
    let owners = cyclic_owners(n, &speeds(machine))?;
    let elimination = Elimination {
        n,
        owners: &owners,
        pivoting: Pivoting::Partial,
        block: 1,
        skeleton: skeleton(backend),
        work_per_flop: 1.0,
    };
    let problem = Problem {
        patches: &patches,
        rho,
        emittance,
        elimination,
        grid,
    };
    let timed = timed_run(backend, machine, |ctx| problem.node_program(ctx))?;
    let (x, power) = root_result(timed.results)?;
    let verification = if timed.compute_skipped {
        Verification::skipped()
    } else {
        verify(&patches, rho, emittance, &x)?
    };
    let mut owned = vec![0; machine.p()];
    match grid {
        Some(grid) => {
            (0..machine.p()).for_each(|pid| owned[pid] = Block::indices(grid, pid, n).0.len())
        }
        None => owners.iter().for_each(|&o| owned[o] += 1),
    }
    Ok(KernelRun {
        kernel: "slalom",
        n,
        p: machine.p(),
        work: work(n)?,
        time_s: timed.time_s,
        cluster_speed: machine.cluster_speed(),
        speed_unit: machine.speed_unit().to_owned(),
        result: Array::vector("x", x),
        verification,
        details: vec![
            (
                "patches per face".into(),
                format!("{:?}", patches_per_face(n)?),
            ),
            ("layout".into(), layout.name().into()),
            efficiency_detail(&owned, &speeds(machine)),
            ("radiated power".into(), format!("{power:.6e}")),
        ],
        trace: timed.trace,
    })
}

struct Problem<'a> {
    patches: &'a [Patch],
    rho: &'a [f64],
    emittance: &'a [f64],
    elimination: Elimination<'a>,
    /// The process grid, when the layout is [`Layout::Grid`].
    grid: Option<Grid>,
}

impl Problem<'_> {
    /// Setup of the node's rows, the shared GE solve, and the answer on the root.
    fn node_program(&self, ctx: &mut Ctx<'_>) -> Result<Option<(Vec<f64>, f64)>> {
        let x = match self.grid {
            Some(grid) => self.grid_solve(ctx, grid)?,
            None => self.rows_solve(ctx)?,
        };
        let Some(x) = x else { return Ok(None) };
        let power = ctx.compute(answer_flops(self.patches.len()), || {
            self.patches
                .iter()
                .zip(&x)
                .map(|(p, x)| p.area * x)
                .sum::<f64>()
        })?;
        Ok(Some((x, power)))
    }

    /// Setup of the node's block of rows and columns, then the grid solve; skeleton runs
    /// build no block.
    fn grid_solve(&self, ctx: &mut Ctx<'_>, grid: Grid) -> Result<Option<Vec<f64>>> {
        let n = self.patches.len();
        let (rows, cols) = Block::indices(grid, ctx.pid(), n);
        let ops = grid_setup_ops(n, grid)?[ctx.pid()];
        let data = ctx.phase("setup", |ctx| {
            ctx.compute(ops, || {
                rows.iter()
                    .flat_map(|&i| {
                        cols.iter()
                            .map(move |&j| entry(self.patches, self.rho, self.emittance, i, j))
                    })
                    .collect::<Vec<f64>>()
            })
        })?;
        let solver = GridSolver {
            grid,
            n,
            skeleton: self.elimination.skeleton,
        };
        ctx.phase("solve", |ctx| {
            solver.solve(ctx, Block::new(rows, cols, data))
        })
    }

    /// Setup of the node's rows, then `ge`'s solve.
    fn rows_solve(&self, ctx: &mut Ctx<'_>) -> Result<Option<Vec<f64>>> {
        let mine = self.elimination.rows_of(ctx.pid());
        let n = self.patches.len();
        let per_face = patches_per_face(n)?;
        let ops: f64 = mine
            .iter()
            .map(|&i| FORM_FACTOR_FLOPS * couplings(&per_face, self.patches[i].face))
            .sum();
        let data = ctx.phase("setup", |ctx| {
            ctx.compute(ops, || {
                mine.iter()
                    .flat_map(|&i| matrix_row(self.patches, self.rho, self.emittance, i))
                    .collect::<Vec<f64>>()
            })
        })?;
        // Skeleton runs skip the block: the rows are then zeros of the right size.
        let data = if data.is_empty() {
            vec![0.0; mine.len() * (n + 1)]
        } else {
            data
        };
        ctx.phase("solve", |ctx| {
            self.elimination.solve(ctx, LocalRows::new(mine, data))
        })
    }
}

/// The sequential reference: the whole system built row by row and solved by plain Gaussian
/// elimination with partial pivoting; the run's `x` must match it and have a small residual.
fn verify(patches: &[Patch], rho: &[f64], emittance: &[f64], x: &[f64]) -> Result<Verification> {
    let n = patches.len();
    let rows: Vec<Vec<f64>> = (0..n)
        .map(|i| matrix_row(patches, rho, emittance, i))
        .collect();
    let a = Matrix::new(
        n,
        n,
        rows.iter().flat_map(|r| r[..n].iter().copied()).collect(),
    )?;
    let b: Vec<f64> = rows.iter().map(|r| r[n]).collect();
    let (residual, _) = residual_check(&a, &b, x);
    if !residual.passed {
        return Ok(residual);
    }
    let reference = sequential_solve(rows);
    Ok(Verification::new(
        "max |x - x_seq| / max |x_seq| against a sequential solve of the same system, after the normwise backward error check",
        relative_max_error(x, &reference, |a, b| (a - b).abs()),
        1e-9,
    ))
}

/// Plain Gaussian elimination with partial pivoting on the augmented rows `[A | b]`.
fn sequential_solve(mut rows: Vec<Vec<f64>>) -> Vec<f64> {
    let n = rows.len();
    for i in 0..n {
        let pivot = (i..n)
            .max_by(|&r, &s| rows[r][i].abs().total_cmp(&rows[s][i].abs()))
            .unwrap_or(i);
        rows.swap(i, pivot);
        let (done, below) = rows.split_at_mut(i + 1);
        let pivot = &done[i];
        for row in below {
            let m = row[i] / pivot[i];
            for (x, p) in row[i..].iter_mut().zip(&pivot[i..]) {
                *x -= m * p;
            }
        }
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let dot: f64 = (i + 1..n).map(|c| rows[i][c] * x[c]).sum();
        x[i] = (rows[i][n] - dot) / rows[i][i];
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patches_tile_every_face_of_the_box() {
        for n in [2, 7, 200, 491] {
            let patches = geometry(n).unwrap();
            assert_eq!(patches.len(), n);
            let area: f64 = patches.iter().map(|p| p.area).sum();
            let box_area = 2.0 * (BOX[0] * BOX[1] + BOX[0] * BOX[2] + BOX[1] * BOX[2]);
            let faces_used = patches_per_face(n)
                .unwrap()
                .iter()
                .filter(|&&c| c > 0)
                .count();
            if faces_used == 6 {
                assert!((area - box_area).abs() < 1e-9 * box_area, "n = {n}: {area}");
            }
        }
    }

    #[test]
    fn rows_are_diagonally_dominant_so_the_system_has_one_answer() {
        let n = 300;
        let patches = geometry(n).unwrap();
        let rho = vec![0.9; n];
        let e = vec![1.0; n];
        for i in 0..n {
            let row = matrix_row(&patches, &rho, &e, i);
            let off: f64 = (0..n).filter(|&j| j != i).map(|j| row[j].abs()).sum();
            assert!(off < row[i], "row {i}: {off}");
        }
    }
}
