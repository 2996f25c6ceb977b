//! `conv2d`: FFT-based circular 2D convolution of two `N x N` complex images (JPDC 4.1.3):
//! `D = IFFT2(FFT2(X) .* FFT2(Y))`, heterogeneous row blocks, transposes by all-to-all.
//!
//! The root (the fastest node) scatters both images in blocks of `N C_j / C` rows. Each node
//! transforms its rows (rustfft), an all-to-all transposes both images so each node holds
//! whole columns (its block of columns, as rows), the nodes transform the columns, multiply
//! point-wise and inverse-transform the columns; a second all-to-all transposes back, the
//! nodes inverse-transform the rows and scale by `1 / N^2`, and the root gathers `D`.
//! `D[u][v] = sum_{x,y} X[x][y] Y[(u - x) mod N][(v - y) mod N]`.
//!
//! Work: `W(N) = 66 N^2 lg N + 21 N^2 + 84 N lg N` as published, and a run declares exactly
//! that. The implementation performs `30 N^2 lg N + 8 N^2` flops ([`flops`]): six sets of `N`
//! length-`N` FFTs at the conventional `5 N lg N` flops each (the FFTW benchmark convention;
//! rustfft's actual count depends on `N`'s factors), `6 N^2` for the complex point-wise
//! product and `2 N^2` for the scaling. The published `W` counts the same operations about
//! twice as heavily, so each compute block declares its flops times `W(N) / flops(N)`
//! ([`work_per_flop`]): one `W`, declared and reported alike, so the simulator charges a
//! one-node run `W / C` and `E_s` never exceeds 1. Transposes move data and declare no
//! operations.
//!
//! Overhead model (exact): scatter of both images, two all-to-alls, gather, each superstep
//! with its barrier, plus the idle time of integer row counts; no sequential part.
//!
//! Skeleton runs (sim with the compute blocks skipped) hold no image and plan no transform:
//! the scatter, the transposes and the gather move sizes only (`hbsp`'s `*_zeros`
//! collectives, charged like the data), and [`Conv2dKernel::skeleton_inputs`] gives the size
//! alone, so their memory does not grow with `N^2`.

use std::sync::Arc;

use hbsp::collectives::{
    Root, alltoallv, alltoallv_zeros, gatherv, gatherv_zeros, scatterv, scatterv_zeros,
};
use hbsp::{Backend, Ctx, Machine};
use num_complex::Complex64;
use rustfft::{Fft, FftPlanner};

use crate::array::{Array, expect_arrays};
use crate::charges::{self, Charges, IDLE};
use crate::error::{Result, check_size, invalid};
use crate::input::{Stream, complex_matrix};
use crate::kernel::{
    Kernel, KernelRun, Overhead, Verification, root_result, size_only, skeleton, skeleton_size,
    speeds, timed_run,
};
use crate::matrix::ComplexMatrix;
use crate::partition::{block_counts, efficiency_detail, offsets};
use crate::verify::relative_max_error;

const C128: f64 = 16.0;

/// FFT-based 2D convolution.
#[derive(Debug, Clone, Copy, Default)]
pub struct Conv2dKernel;

/// `W(N) = 66 N^2 lg N + 21 N^2 + 84 N lg N`, as published (JPDC 4.1.3).
pub fn work(n: usize) -> f64 {
    let n = n as f64;
    let lg = n.log2();
    66.0 * n * n * lg + 21.0 * n * n + 84.0 * n * lg
}

/// Flops this implementation performs: `30 N^2 lg N + 8 N^2`.
pub fn flops(n: usize) -> f64 {
    6.0 * n as f64 * fft_ops(n) + 8.0 * (n as f64).powi(2)
}

/// Work each flop of the implementation declares, `W(N) / flops(N)`, so the blocks of a run
/// declare exactly `W(N)` between them.
pub fn work_per_flop(n: usize) -> f64 {
    work(n) / flops(n)
}

/// Nominal operations of one length-`n` complex FFT, `5 n lg n`.
fn fft_ops(n: usize) -> f64 {
    5.0 * n as f64 * (n as f64).log2()
}

impl Kernel for Conv2dKernel {
    fn name(&self) -> &'static str {
        "conv2d"
    }

    fn work(&self, n: usize) -> f64 {
        work(n)
    }

    fn counted_ops(&self, n: usize) -> f64 {
        work(n)
    }

    /// `X` and `Y`.
    fn input_bytes(&self, n: usize) -> f64 {
        2.0 * (n as f64).powi(2) * C128
    }

    /// The sequential convolution: a transformed copy of each image, their product and its
    /// transpose.
    fn verification_bytes(&self, n: usize) -> f64 {
        5.0 * (n as f64).powi(2) * C128
    }

    /// A node's rows of both images at the transpose's peak: the rows, the blocks it sends,
    /// the messages and the blocks it receives (about ten rows' worth per row it owns); the
    /// root also holds its copies of `X` and `Y`, the packed images it scatters and `D`.
    fn memory_per_node(&self, n: usize, machine: &Machine) -> Result<Vec<f64>> {
        let counts = block_counts(n, &speeds(machine))?;
        let root = machine.ranking()[0];
        let nf = n as f64;
        Ok(counts
            .iter()
            .enumerate()
            .map(|(j, &rows)| {
                let own = 10.0 * rows as f64 * nf;
                let root_copy = if j == root { 5.0 * nf * nf } else { 0.0 };
                (own + root_copy) * C128
            })
            .collect())
    }

    /// Replays the program's supersteps (after the starting barrier): (1) the root
    /// scatters both images' row blocks; (2) the nodes transform their rows and transpose
    /// both images by all-to-all; (3) they transform the columns, multiply, inverse-transform
    /// the columns and transpose the product back; (4) they inverse-transform the rows,
    /// scale and send them to the root; the root's assembly at the end costs nothing. Each
    /// superstep's compute is paced by the node slowest on its integer share of rows, each
    /// flop declaring [`work_per_flop`]; no sequential part.
    fn overhead(&self, n: usize, machine: &Machine) -> Result<Overhead> {
        check_size("N", n, 1)?;
        let root = machine.ranking()[0];
        let counts = block_counts(n, &speeds(machine))?;
        let rows_bytes: Vec<f64> = counts.iter().map(|&r| r as f64 * n as f64 * C128).collect();
        let two_images: Vec<f64> = rows_bytes.iter().map(|b| 2.0 * b).collect();
        let transpose = |images: f64| charges::block_transpose(&counts, images * C128);
        // Work per node, by the number of length-N transforms and point-wise products.
        let ops = |ffts: f64, pointwise: f64| -> Vec<f64> {
            counts
                .iter()
                .map(|&r| r as f64 * (ffts * fft_ops(n) + pointwise * n as f64) * work_per_flop(n))
                .collect()
        };
        let mut replay = Charges::new(machine);
        replay.collective("scatterv", 0, IDLE, &charges::scatterv(root, &two_images))?;
        replay.collective("alltoallv", 0, &ops(2.0, 0.0), &transpose(2.0))?;
        replay.collective("alltoallv", 0, &ops(3.0, 6.0), &transpose(1.0))?;
        replay.collective(
            "gatherv",
            0,
            &ops(1.0, 2.0),
            &charges::gatherv(root, &rows_bytes),
        )?;
        Ok(replay.overhead(work(n), work(n), 0.0))
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Vec<Array>> {
        check_size("N", n, 1)?;
        crate::memory::check_inputs_fit(self, n)?;
        Ok(vec![
            Array::complex_matrix("X", complex_matrix(n, seed, Stream::A)),
            Array::complex_matrix("Y", complex_matrix(n, seed, Stream::B)),
        ])
    }

    /// The size alone: a skeleton run moves sizes and reads no value.
    fn skeleton_inputs(&self, n: usize, _seed: u64) -> Result<Vec<Array>> {
        check_size("N", n, 1)?;
        Ok(vec![size_only(n)])
    }

    /// Per node its row counts and the all-to-alls' `p x p` counts: nothing of size `N^2`.
    fn skeleton_bytes(&self, n: usize, machine: &Machine) -> Result<Option<f64>> {
        let p = machine.p() as f64;
        let transpose_counts = 2.0 * p * p * 8.0;
        Ok(Some(
            p * transpose_counts + self.overhead_bytes(n, machine)?,
        ))
    }

    fn run(&self, inputs: &[Array], backend: &Backend, machine: &Machine) -> Result<KernelRun> {
        if let Some(n) = skeleton_size("conv2d", inputs, backend, "X and Y")? {
            return execute(None, n, backend, machine);
        }
        let [x, y] = expect_arrays("conv2d", inputs, &["X", "Y"])? else {
            unreachable!("expect_arrays checked the count")
        };
        convolve(
            &x.to_square_complex_matrix()?,
            &y.to_square_complex_matrix()?,
            backend,
            machine,
        )
    }
}

/// Runs the circular convolution of `x` and `y` on `machine` and verifies it (a skeleton
/// run moves sizes only).
pub fn convolve(
    x: &ComplexMatrix,
    y: &ComplexMatrix,
    backend: &Backend,
    machine: &Machine,
) -> Result<KernelRun> {
    let n = x.check_square("X")?;
    if y.check_square("Y")? != n {
        return Err(invalid(format!(
            "X is {n} x {n} but Y is {} x {}: give images of the same size",
            y.rows(),
            y.cols()
        )));
    }
    execute(Some((x, y)), n, backend, machine)
}

/// Convolves at size `n`: `images` (then `D` is checked), or in a skeleton run sizes alone.
fn execute(
    images: Option<(&ComplexMatrix, &ComplexMatrix)>,
    n: usize,
    backend: &Backend,
    machine: &Machine,
) -> Result<KernelRun> {
    let (d, verification, trace, time_s) = match images.filter(|_| !skeleton(backend)) {
        Some((x, y)) => {
            let timed = timed_run(backend, machine, |ctx| node_program(ctx, x, y, n))?;
            let d = ComplexMatrix::new(n, n, root_result(timed.results)?)?;
            let verification = Verification::unless_skipped(timed.compute_skipped, || {
                let reference = sequential(x, y);
                Verification::new(
                    "max |D - D_seq| / max |D_seq| against a sequential FFT convolution",
                    relative_max_error(d.as_slice(), reference.as_slice(), |a, b| (a - b).norm()),
                    1e-10,
                )
            });
            (d, verification, timed.trace, timed.time_s)
        }
        None => {
            let timed = timed_run(backend, machine, |ctx| skeleton_program(ctx, n))?;
            // No D of N^2 values.
            let d = ComplexMatrix::new(0, 0, Vec::new())?;
            (d, Verification::skipped(), timed.trace, timed.time_s)
        }
    };
    Ok(KernelRun {
        kernel: "conv2d",
        n,
        p: machine.p(),
        work: work(n),
        time_s,
        cluster_speed: machine.cluster_speed(),
        speed_unit: machine.speed_unit().to_owned(),
        result: Array::complex_matrix("D", d),
        verification,
        details: vec![efficiency_detail(
            &block_counts(n, &speeds(machine))?,
            &speeds(machine),
        )],
        trace,
    })
}

/// The sequential reference: the same mathematics on one thread, without distribution.
pub fn sequential(x: &ComplexMatrix, y: &ComplexMatrix) -> ComplexMatrix {
    let n = x.rows();
    let mut planner = FftPlanner::new();
    let (forward, inverse) = (planner.plan_fft_forward(n), planner.plan_fft_inverse(n));
    let transform = |m: &ComplexMatrix, fft: &Arc<dyn Fft<f64>>| {
        let mut data = m.as_slice().to_vec();
        fft.process(&mut data);
        let mut t = transpose(&data, n, n);
        fft.process(&mut t);
        t
    };
    let mut product: Vec<Complex64> = transform(x, &forward)
        .iter()
        .zip(transform(y, &forward))
        .map(|(a, b)| a * b)
        .collect();
    inverse.process(&mut product);
    let mut d = transpose(&product, n, n);
    inverse.process(&mut d);
    let scale = 1.0 / (n * n) as f64;
    d.iter_mut().for_each(|z| *z *= scale);
    ComplexMatrix::new(n, n, d).expect("n x n")
}

/// The `cols x rows` transpose of a row-major `rows x cols` block.
fn transpose(data: &[Complex64], rows: usize, cols: usize) -> Vec<Complex64> {
    let mut out = vec![Complex64::default(); data.len()];
    for i in 0..rows {
        for j in 0..cols {
            out[j * rows + i] = data[i * cols + j];
        }
    }
    out
}

/// Per-node FFT plans and the row layout.
struct Plan {
    n: usize,
    counts: Vec<usize>,
    forward: Arc<dyn Fft<f64>>,
    inverse: Arc<dyn Fft<f64>>,
    /// See [`work_per_flop`].
    work_per_flop: f64,
}

impl Plan {
    fn rows(&self, pid: usize) -> usize {
        self.counts[pid]
    }

    /// Applies `fft` to each length-`n` row of `data` and declares its work.
    fn transform_rows(
        &self,
        ctx: &mut Ctx<'_>,
        fft: &Arc<dyn Fft<f64>>,
        data: &mut [Complex64],
    ) -> Result<()> {
        ctx.compute(
            transform_ops(self.n, data.len(), self.work_per_flop),
            || {
                if !data.is_empty() {
                    fft.process(data);
                }
            },
        )?;
        Ok(())
    }

    /// Transposes `images` stacked blocks of `rows(me) x n` rows so this node ends up with
    /// `images` stacked blocks of its `rows(me)` columns, each as a row of length `n`.
    fn transpose(
        &self,
        ctx: &mut Ctx<'_>,
        data: &[Complex64],
        images: usize,
    ) -> Result<Vec<Complex64>> {
        let (p, me, n) = (ctx.nprocs(), ctx.pid(), self.n);
        let starts = offsets(&self.counts);
        let mine = self.rows(me);
        let blocks: Vec<Vec<Complex64>> = (0..p)
            .map(|k| {
                let mut block = Vec::with_capacity(images * mine * self.counts[k]);
                for image in 0..images {
                    let image = &data[image * mine * n..(image + 1) * mine * n];
                    for col in starts[k]..starts[k] + self.counts[k] {
                        block.extend((0..mine).map(|r| image[r * n + col]));
                    }
                }
                block
            })
            .collect();
        let received = alltoallv(ctx, &blocks, &transpose_counts(&self.counts, images))?.value;
        let mut out = vec![Complex64::default(); images * mine * n];
        for (i, block) in received.iter().enumerate() {
            let rows_i = self.counts[i];
            for image in 0..images {
                let piece = &block[image * mine * rows_i..(image + 1) * mine * rows_i];
                let target = &mut out[image * mine * n..(image + 1) * mine * n];
                crate::matrix::put_block(target, n, (0, starts[i]), piece, rows_i);
            }
        }
        Ok(out)
    }
}

/// Operations declared for transforming `values` values as rows of length `n`.
fn transform_ops(n: usize, values: usize, work_per_flop: f64) -> f64 {
    let ffts = values / n.max(1);
    ffts as f64 * fft_ops(n) * work_per_flop
}

/// Items node `i` sends node `k` in a transpose of `images` stacked images in row blocks of
/// `counts`.
fn transpose_counts(counts: &[usize], images: usize) -> Vec<Vec<usize>> {
    counts
        .iter()
        .map(|&rows_i| {
            counts
                .iter()
                .map(|&rows_k| rows_i.saturating_mul(rows_k).saturating_mul(images))
                .collect()
        })
        .collect()
}

fn node_program(
    ctx: &mut Ctx<'_>,
    x: &ComplexMatrix,
    y: &ComplexMatrix,
    n: usize,
) -> Result<Option<Vec<Complex64>>> {
    let mut planner = FftPlanner::new();
    let plan = Plan {
        n,
        counts: ctx.balanced_counts(n),
        forward: planner.plan_fft_forward(n),
        inverse: planner.plan_fft_inverse(n),
        work_per_flop: work_per_flop(n),
    };
    let root = Root::Fastest;
    let packed = if ctx.pid() == ctx.rank(1)? {
        pack_two_images(x, y, &plan.counts)
    } else {
        Vec::new()
    };
    let two_images: Vec<usize> = plan.counts.iter().map(|r| 2 * r * n).collect();
    let mut rows = ctx
        .phase("distribute", |ctx| {
            scatterv(ctx, root, &packed, &two_images)
        })?
        .value;
    plan.transform_rows(ctx, &plan.forward, &mut rows)?;
    let mut columns = plan.transpose(ctx, &rows, 2)?;
    plan.transform_rows(ctx, &plan.forward, &mut columns)?;
    let half = columns.len() / 2;
    let (xs, ys) = columns.split_at_mut(half);
    ctx.compute(6.0 * half as f64 * plan.work_per_flop, || {
        xs.iter_mut().zip(ys.iter()).for_each(|(a, b)| *a *= b)
    })?;
    let mut product = columns[..half].to_vec();
    plan.transform_rows(ctx, &plan.inverse, &mut product)?;
    let mut d = plan.transpose(ctx, &product, 1)?;
    plan.transform_rows(ctx, &plan.inverse, &mut d)?;
    let scale = 1.0 / (n * n) as f64;
    ctx.compute(2.0 * d.len() as f64 * plan.work_per_flop, || {
        d.iter_mut().for_each(|z| *z *= scale)
    })?;
    let elements: Vec<usize> = plan.counts.iter().map(|r| r * n).collect();
    let gathered = ctx.phase("collect", |ctx| gatherv(ctx, root, &d, &elements))?;
    Ok(gathered.value)
}

/// For each node in pid order: its rows of `x`, then its rows of `y`.
fn pack_two_images(x: &ComplexMatrix, y: &ComplexMatrix, counts: &[usize]) -> Vec<Complex64> {
    let n = x.cols();
    let mut packed = Vec::with_capacity(2 * n * n);
    for (start, rows) in offsets(counts).into_iter().zip(counts.iter().copied()) {
        for image in [x, y] {
            packed.extend_from_slice(&image.as_slice()[start * n..(start + rows) * n]);
        }
    }
    packed
}

/// [`node_program`] on sizes alone: the same collectives and declared work, no image and
/// no transform planned.
fn skeleton_program(ctx: &mut Ctx<'_>, n: usize) -> Result<()> {
    let counts = ctx.balanced_counts(n);
    let work_per_flop = work_per_flop(n);
    let root = Root::Fastest;
    // Saturated sizes (an absurd N) are refused by the collectives, in one line.
    let values = counts[ctx.pid()].saturating_mul(n);
    let transform = |values| transform_ops(n, values, work_per_flop);
    let two_images: Vec<usize> = counts
        .iter()
        .map(|r| r.saturating_mul(n).saturating_mul(2))
        .collect();
    ctx.phase("distribute", |ctx| {
        scatterv_zeros::<Complex64>(ctx, root, &two_images)
    })?;
    ctx.charge_work(transform(values.saturating_mul(2)))?;
    alltoallv_zeros::<Complex64>(ctx, &transpose_counts(&counts, 2))?;
    ctx.charge_work(transform(values.saturating_mul(2)))?;
    ctx.charge_work(6.0 * values as f64 * work_per_flop)?;
    ctx.charge_work(transform(values))?;
    alltoallv_zeros::<Complex64>(ctx, &transpose_counts(&counts, 1))?;
    ctx.charge_work(transform(values))?;
    ctx.charge_work(2.0 * values as f64 * work_per_flop)?;
    let elements: Vec<usize> = counts.iter().map(|r| r.saturating_mul(n)).collect();
    ctx.phase("collect", |ctx| {
        gatherv_zeros::<Complex64>(ctx, root, &elements)
    })?;
    Ok(())
}
