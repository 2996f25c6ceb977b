//! `burg`: Burg's method fitting an autoregressive model of order `K` to a series of length
//! `N`, with block decomposition and one global sum per order, as Sun & Rover ran it on the
//! nCUBE 2 (IEEE TPDS 1994, section IV-B).
//!
//! The series is already distributed: node `j` holds its own block of `N C_j / C` samples
//! (the program reads its slice of the input, as a node that generated or loaded its block
//! would), so nothing is scattered from a root and communication per order does not depend
//! on `N`. For each order `m = 1..K` the nodes (1) shift: each sends the last element of its
//! backward error to the next node that holds samples (one superstep), (2) form local sums
//! of `f(i) b(i-1)` and `f(i)^2 + b(i-1)^2` over their active samples `i >= m`, (3) add them
//! up with one global sum (an allreduce of the two partial sums, added in pid order so every
//! node gets the same bits), and (4) update their errors with the reflection
//! coefficient `k_m = -2 sum f b / sum (f^2 + b^2)`. The Levinson recursion
//! `a_j <- a_j + k_m a_{m-j}`, `a_m = k_m` runs on every node, so every node ends with the
//! model and nothing is gathered.
//!
//! The result is the predictor `phi`: `x[t] = phi_1 x[t-1] + ... + phi_K x[t-K] + e[t]`
//! (`phi = -a`, the convention of Numerical Recipes' `memcof`).
//!
//! Work, counted exactly: order `m` has `L = N - m` active samples and costs `2L` (products
//! and sums of `f b`) + `4L` (of `f^2 + b^2`) + 2 (`k_m`) + `2(m - 1)` (Levinson) + `4L`
//! (updates of `f` and `b`), so `W(N, K) = sum_m [10 (N - m) + 2 m] = 10 K N - 4 K (K + 1)`,
//! linear in `N` per order. A parallel run repeats the scalar work on every node: that redundant work is declared but is not part of
//! `W` (Sun & Rover leave redundant work out of `W` too, section IV-A). The additions of the
//! global sum happen inside the allreduce, which, as every `hbsp` reduction, does not count
//! its combining work.
//!
//! Against the paper: Sun & Rover state no closed form for Burg's `W`, only that work and
//! time are linear in `N` (section IV); `10 K N - 4 K (K + 1)` is this implementation's exact
//! count. Their eq. 10 charges per order a shift of 4 bytes (`alpha + 4 beta`) and a global
//! sum of 8 bytes in `log2 p` hypercube steps (`log N' (alpha + 8 beta)`), single-precision
//! values; here the values are `f64`, so the shift moves 8 bytes. The global sum is `hbsp`'s
//! allreduce: a reduce-scatter of the two sums (on equal nodes one 8-byte value to each of two
//! nodes) then an allgather of them, two supersteps whose messages carry the same bytes at
//! every step, so a hypercube machine model charges each `log2 p (alpha + 8 beta)` on equal
//! nodes: eq. 10's global sum, twice.
//!
//! Overhead model (exact, the closed form the simulator's times match): with
//! `cost(t) = g max_j r_j h_j(t) + o max_j m_j(t) + L`,
//! `T_o = K [cost(shift) + cost(allreduce of 16 bytes)] + idle + redundant`, where
//! the shift moves 8 bytes between consecutive holders, `idle` is what the integer block
//! sizes and the shrinking active ranges leave the faster nodes waiting per superstep, and
//! `redundant` the repeated scalar work paced by the slowest node; neither term depends on
//! `N` beyond the rounding of the blocks. Sequential fraction `K (K + 1) / W` (the Levinson
//! steps).
//!
//! Skeleton runs (sim with the compute blocks skipped) hold no sample: every node knows only
//! its block's bounds, the shifted values are zeros and [`BurgKernel::skeleton_inputs`] gives
//! the size alone, so their memory does not grow with `N`.

use hbsp::collectives::allreduce;
use hbsp::{Backend, Ctx, Machine};
use hetscale_model::hbsp::Traffic;

use crate::array::{Array, expect_arrays};
use crate::charges::{self, Charges, IDLE};
use crate::error::{KernelError, Result, invalid};
use crate::input::ar2_series;
use crate::kernel::{
    Kernel, KernelRun, Overhead, Verification, root_result, size_only, skeleton, skeleton_size,
    speeds, timed_run,
};
use crate::partition::{block_counts, efficiency_detail, offsets};
use crate::verify::relative_max_error;

const F64: f64 = 8.0;

/// Burg's autoregressive fit of a given order.
#[derive(Debug, Clone, Copy)]
pub struct BurgKernel {
    /// Model order `K` (`1 <= K < N`).
    pub order: usize,
}

/// The model order when none is given: 4, below the smallest size a study or `hetscale
/// predict` searches by default (`n_min = 8`), so both work out of the box (an order of 8
/// fitted no series they tried), and above the order 2 of the seeded series.
pub const DEFAULT_ORDER: usize = 4;

impl Default for BurgKernel {
    fn default() -> Self {
        Self {
            order: DEFAULT_ORDER,
        }
    }
}

/// `W(N, K) = 10 K N - 4 K (K + 1)`, the exact flop count of Burg's method.
pub fn work(n: usize, order: usize) -> f64 {
    let (n, k) = (n as f64, order as f64);
    10.0 * k * n - 4.0 * k * (k + 1.0)
}

/// Checks `N >= 2` and `1 <= K < N`.
pub fn check_order(n: usize, order: usize) -> Result<()> {
    if n < 2 {
        return Err(invalid(format!(
            "the series has {n} samples: Burg needs at least 2"
        )));
    }
    if order == 0 || order >= n {
        return Err(invalid(format!(
            "order {order} does not fit a series of {n} samples: use 1 <= order < {n}"
        )));
    }
    Ok(())
}

impl Kernel for BurgKernel {
    fn name(&self) -> &'static str {
        "burg"
    }

    fn work(&self, n: usize) -> f64 {
        work(n, self.order)
    }

    fn counted_ops(&self, n: usize) -> f64 {
        work(n, self.order)
    }

    /// The series `x`.
    fn input_bytes(&self, n: usize) -> f64 {
        n as f64 * F64
    }

    /// Sequential Burg's forward and backward errors.
    fn verification_bytes(&self, n: usize) -> f64 {
        2.0 * n as f64 * F64
    }

    fn memory_per_node(&self, n: usize, machine: &Machine) -> Result<Vec<f64>> {
        Ok(block_counts(n, &speeds(machine))?
            .iter()
            .map(|&c| (2.0 * c as f64 + 2.0 * self.order as f64) * F64)
            .collect())
    }

    /// Replays the program's supersteps (after the starting barrier): per order `m` (a) the
    /// shift of one value to the next node holding samples and (b) the two supersteps of the
    /// allreduce of the two partial sums. Each node forms its sums (`6` per active sample) in
    /// (b); its updates (`4` per active sample) and the Levinson step (`2 m`, repeated on every
    /// node, so paced by the slowest) land in the next order's (a), or in the program's end
    /// after order `K`. The Levinson steps are the sequential part; their repetitions are
    /// overhead.
    fn overhead(&self, n: usize, machine: &Machine) -> Result<Overhead> {
        check_order(n, self.order)?;
        let p = machine.p();
        let counts = block_counts(n, &speeds(machine))?;
        let starts = offsets(&counts);
        let mut shift = Traffic::idle(p);
        let holders: Vec<usize> = (0..p).filter(|&j| counts[j] > 0).collect();
        for pair in holders.windows(2) {
            shift.add(pair[0], pair[1], F64);
        }
        let sums = charges::allreduce(&machine.balanced_counts(2), F64);
        // Samples i >= m of each node's block: those order m works on.
        let active = |m: usize| -> Vec<f64> {
            (0..p)
                .map(|j| (starts[j] + counts[j]).saturating_sub(m.max(starts[j])) as f64)
                .collect()
        };
        let update =
            |m: usize| -> Vec<f64> { active(m).iter().map(|a| 4.0 * a + 2.0 * m as f64).collect() };
        let mut replay = Charges::new(machine);
        for m in 1..=self.order {
            let previous = if m > 1 { update(m - 1) } else { Vec::new() };
            replay.superstep(&previous, &shift)?;
            let partial: Vec<f64> = active(m).iter().map(|a| 6.0 * a).collect();
            replay.collective("allreduce", 0, &partial, &sums[0])?;
            replay.collective("allreduce", 1, IDLE, &sums[1])?;
        }
        replay.end(&update(self.order), &Traffic::idle(p))?;
        let levinson = (self.order * (self.order + 1)) as f64;
        let w = work(n, self.order);
        Ok(replay.overhead(w, w, levinson))
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Vec<Array>> {
        check_order(n, self.order)?;
        crate::memory::check_inputs_fit(self, n)?;
        Ok(vec![Array::vector("x", ar2_series(n, seed))])
    }

    /// The size alone: a skeleton run reads no sample.
    fn skeleton_inputs(&self, n: usize, _seed: u64) -> Result<Vec<Array>> {
        check_order(n, self.order)?;
        Ok(vec![size_only(n)])
    }

    /// Per node its model, as [`Kernel::memory_per_node`] counts it without the samples:
    /// nothing of size `N`.
    fn skeleton_bytes(&self, n: usize, machine: &Machine) -> Result<Option<f64>> {
        let model = 2.0 * self.order as f64 * F64;
        Ok(Some(
            machine.p() as f64 * model + self.overhead_bytes(n, machine)?,
        ))
    }

    fn run(&self, inputs: &[Array], backend: &Backend, machine: &Machine) -> Result<KernelRun> {
        if let Some(n) = skeleton_size("burg", inputs, backend, "x")? {
            check_order(n, self.order)?;
            return execute(None, n, self.order, backend, machine);
        }
        let [x] = expect_arrays("burg", inputs, &["x"])? else {
            unreachable!("expect_arrays checked the count")
        };
        fit(&x.to_vector(2)?, self.order, backend, machine)
    }
}

/// Fits an AR model of `order` to `x` on `machine` and verifies the coefficients (a
/// skeleton run reads no sample).
pub fn fit(x: &[f64], order: usize, backend: &Backend, machine: &Machine) -> Result<KernelRun> {
    let n = x.len();
    check_order(n, order)?;
    execute(Some(x), n, order, backend, machine)
}

/// Fits at size `n`: to `series` (then `phi` is checked), or in a skeleton run to a series
/// of `n` samples that is never made.
fn execute(
    series: Option<&[f64]>,
    n: usize,
    order: usize,
    backend: &Backend,
    machine: &Machine,
) -> Result<KernelRun> {
    let series = series.filter(|_| !skeleton(backend));
    let timed = timed_run(backend, machine, |ctx| node_program(ctx, series, n, order))?;
    let phi = root_result(timed.results)?;
    let verification = match series {
        Some(x) if !timed.compute_skipped => {
            let reference = sequential(x, order)?;
            Verification::new(
                "max |phi - phi_seq| / max |phi_seq| against sequential Burg",
                relative_max_error(&phi, &reference, |a, b| (a - b).abs()),
                1e-9,
            )
        }
        _ => Verification::skipped(),
    };
    Ok(KernelRun {
        kernel: "burg",
        n,
        p: machine.p(),
        work: work(n, order),
        time_s: timed.time_s,
        cluster_speed: machine.cluster_speed(),
        speed_unit: machine.speed_unit().to_owned(),
        result: Array::vector("phi", phi),
        verification,
        details: vec![
            ("order".into(), order.to_string()),
            efficiency_detail(&block_counts(n, &speeds(machine))?, &speeds(machine)),
        ],
        trace: timed.trace,
    })
}

/// Sequential Burg: the predictor `phi` of `order` for `x`.
pub fn sequential(x: &[f64], order: usize) -> Result<Vec<f64>> {
    check_order(x.len(), order)?;
    let (mut f, mut b) = (x.to_vec(), x.to_vec());
    let mut a: Vec<f64> = Vec::with_capacity(order);
    for m in 1..=order {
        let (mut num, mut den) = (0.0, 0.0);
        for i in m..x.len() {
            num += f[i] * b[i - 1];
            den += f[i] * f[i] + b[i - 1] * b[i - 1];
        }
        let k = reflection(num, den, m)?;
        levinson(&mut a, k);
        for i in (m..x.len()).rev() {
            let (fi, bi) = (f[i], b[i - 1]);
            f[i] = fi + k * bi;
            b[i] = bi + k * fi;
        }
    }
    Ok(a.iter().map(|c| -c).collect())
}

/// `k_m = -2 num / den`; a zero `den` means the series carries no signal at this order.
fn reflection(num: f64, den: f64, m: usize) -> Result<f64> {
    if den > 0.0 && den.is_finite() {
        Ok(-2.0 * num / den)
    } else {
        Err(KernelError::Numerical(format!(
            "the prediction errors vanish at order {m} (the series is zero or exactly predictable): use a lower order"
        )))
    }
}

/// One Levinson step: `a_j <- a_j + k a_{m-j}` for `j < m`, then `a_m = k`.
fn levinson(a: &mut Vec<f64>, k: f64) {
    let previous = a.clone();
    let m = previous.len() + 1;
    for j in 1..m {
        a[j - 1] = previous[j - 1] + k * previous[m - j - 1];
    }
    a.push(k);
}

/// A node's block of the forward and backward prediction errors (none in a skeleton run).
struct Block {
    start: usize,
    len: usize,
    f: Vec<f64>,
    b: Vec<f64>,
    /// `b(start - 1)` received from the previous holder.
    before: f64,
}

impl Block {
    fn end(&self) -> usize {
        self.start + self.len
    }

    /// `b(i - 1)` for a global index `i` of this block.
    fn b_before(&self, i: usize) -> f64 {
        if i > self.start {
            self.b[i - 1 - self.start]
        } else {
            self.before
        }
    }

    /// Partial sums of `f(i) b(i-1)` and `f(i)^2 + b(i-1)^2` over active `i >= m`.
    fn sums(&self, m: usize) -> [f64; 2] {
        let (mut num, mut den) = (0.0, 0.0);
        for i in m.max(self.start)..self.end() {
            let (f, b) = (self.f[i - self.start], self.b_before(i));
            num += f * b;
            den += f * f + b * b;
        }
        [num, den]
    }

    /// `f(i) += k b(i-1)`, `b(i) = b(i-1) + k f(i)` for `i >= m`, from the top so every
    /// `b(i-1)` read is still the previous order's.
    fn update(&mut self, m: usize, k: f64) {
        for i in (m.max(self.start)..self.end()).rev() {
            let (f, b) = (self.f[i - self.start], self.b_before(i));
            self.f[i - self.start] = f + k * b;
            self.b[i - self.start] = b + k * f;
        }
    }

    fn active(&self, m: usize) -> usize {
        self.end().saturating_sub(m.max(self.start))
    }
}

/// The node's part on the `n` samples of `series`; without a series (a skeleton run, compute
/// blocks skipped) the shifted values are zeros and the reflection coefficients are taken
/// as 0 instead of checked.
fn node_program(
    ctx: &mut Ctx<'_>,
    series: Option<&[f64]>,
    n: usize,
    order: usize,
) -> Result<Option<Vec<f64>>> {
    let (me, p) = (ctx.pid(), ctx.nprocs());
    let is_root = me == ctx.rank(1)?;
    let counts = ctx.balanced_counts(n);
    let (start, len) = (offsets(&counts)[me], counts[me]);
    // The node's own block: the series is distributed before the program starts.
    let own = series.map_or_else(Vec::new, |x| x[start..start + len].to_vec());
    let mut block = Block {
        start,
        len,
        f: own.clone(),
        b: own,
        before: 0.0,
    };
    let next_holder = (me + 1..p).find(|&j| counts[j] > 0);
    let mut a = Vec::with_capacity(order);
    for m in 1..=order {
        if let Some(to) = next_holder.filter(|_| len > 0) {
            ctx.send(to, 0, &[block.b.last().copied().unwrap_or(0.0)])?;
        }
        ctx.sync()?;
        if let Some(message) = ctx.recv::<f64>()? {
            block.before = message.data[0];
        }
        let active = block.active(m) as f64;
        let partial = ctx.compute(6.0 * active, || block.sums(m))?;
        let [num, den] = global_sum(ctx, &partial)?;
        let k = match series {
            Some(_) => reflection(num, den, m)?,
            None => 0.0,
        };
        ctx.compute(2.0 + 2.0 * (m - 1) as f64, || levinson(&mut a, k))?;
        ctx.compute(4.0 * active, || block.update(m, k))?;
    }
    Ok(is_root.then(|| a.iter().map(|c| -c).collect()))
}

/// The sum over all nodes of each node's `[sum f b, sum f^2 + b^2]`, the same on every node:
/// an allreduce, whose messages carry the same two values at every step of the network (Sun &
/// Rover's `log N' (alpha + 8 beta)`), folded in pid order so every node gets the same bits.
fn global_sum(ctx: &mut Ctx<'_>, partial: &[f64; 2]) -> Result<[f64; 2]> {
    let sum = allreduce(ctx, partial, |a, b| a + b)?.value;
    Ok([sum[0], sum[1]])
}
