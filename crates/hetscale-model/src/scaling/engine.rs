//! The fast core of model selection: every hypothesis is a handful of columns, fitted by
//! weighted least squares on relative residuals from precomputed Gram matrices, so a fit is a
//! Cholesky factorisation of at most a 5 x 5 matrix whatever the number of runs, and a
//! held-out configuration's error is a quadratic form.
//!
//! Rows are weighted by `1 / T` (the target is then 1 in every row) and each column scaled to
//! unit norm over all runs, so the normal equations stay well conditioned; a column whose part
//! independent of the others is below `1e-5` of its norm is not identified.
//!
//! The runs at one point (a size on a configuration) share every column and differ only in
//! their times, so a point enters the sums once, by its [`Repeats`]: the sums, and so every
//! fit and held-out error, are those of its runs one by one (to rounding), at the cost of
//! the points, not the runs, however many repetitions a campaign took.

// Small dense linear algebra reads best with indices.
#![allow(clippy::needless_range_loop)]

/// A column's squared residual norm, after projecting out the earlier ones, relative to its
/// squared norm, below which it is not identified by the rows.
const NOT_IDENTIFIED: f64 = 1e-10;

/// Sums over some rows: the Gram matrix of the weighted, scaled columns, their products with
/// the target, and the row count (the target's squared norm, since it is 1 in every row).
#[derive(Clone)]
struct Sums {
    gram: Vec<f64>,
    target: Vec<f64>,
    rows: f64,
}

impl Sums {
    fn zero(m: usize) -> Self {
        Self {
            gram: vec![0.0; m * m],
            target: vec![0.0; m],
            rows: 0.0,
        }
    }

    fn add(&mut self, other: &Sums) {
        self.gram
            .iter_mut()
            .zip(&other.gram)
            .for_each(|(a, b)| *a += b);
        self.target
            .iter_mut()
            .zip(&other.target)
            .for_each(|(a, b)| *a += b);
        self.rows += other.rows;
    }

    /// `sum (1 - x b)^2` over the rows, for coefficients `b` of columns `cols`.
    fn ssr(&self, m: usize, cols: &[usize], b: &[f64]) -> f64 {
        let mut s = self.rows;
        for (u, &cu) in cols.iter().enumerate() {
            s -= 2.0 * b[u] * self.target[cu];
            for (v, &cv) in cols.iter().enumerate() {
                s += b[u] * b[v] * self.gram[cu * m + cv];
            }
        }
        s.max(0.0)
    }
}

/// The runs at one point, whose columns are the same: what the sums over them need of their
/// times `T_i`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Repeats {
    /// How many runs.
    pub count: f64,
    /// `sum 1/T_i`.
    pub inverse: f64,
    /// `sum 1/T_i^2`.
    pub inverse_square: f64,
    /// `sum (1 - m/T_i)^2` about their weighted mean `m = inverse / inverse_square`: kept
    /// apart so that a point's squared residuals need no difference of large sums.
    pub spread: f64,
}

impl Repeats {
    /// The repeats at each of `points` points of `runs`, each `(point, time)`.
    pub fn of(points: usize, runs: impl Iterator<Item = (usize, f64)> + Clone) -> Vec<Self> {
        let mut repeats = vec![Self::default(); points];
        for (point, t) in runs.clone() {
            let r = &mut repeats[point];
            r.count += 1.0;
            r.inverse += 1.0 / t;
            r.inverse_square += 1.0 / (t * t);
        }
        for (point, t) in runs {
            let r = &mut repeats[point];
            r.spread += (1.0 - r.mean() / t).powi(2);
        }
        repeats
    }

    /// The weighted mean time `sum (1/T_i) / sum (1/T_i^2)`: the one time whose relative
    /// residuals' sum over the runs is 0.
    fn mean(&self) -> f64 {
        self.inverse / self.inverse_square
    }

    /// `sum (1 - fitted/T_i)^2`: the runs' squared relative residuals from the time `fitted`.
    fn squared_residuals(&self, fitted: f64) -> f64 {
        if self.count == 0.0 {
            return 0.0;
        }
        self.spread + self.inverse_square * (self.mean() - fitted).powi(2)
    }
}

/// A cross-validation fold: the groups held out (the others are fitted) and its weight.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Fold {
    pub test: Vec<usize>,
    pub weight: f64,
}

struct FoldSums {
    train: Sums,
    test: Sums,
    /// The points held out (with runs).
    points: Vec<usize>,
    weight: f64,
}

/// A hypothesis fitted to every run and cross-validated.
#[derive(Debug, Clone)]
pub(super) struct Evaluation {
    /// The coefficients, in the columns' units, in the hypothesis' column order.
    pub coefficients: Vec<f64>,
    /// Root-mean-square relative residual of the fit to every run.
    pub fit_error: f64,
    /// Weighted root-mean-square relative error of the held-out runs over the folds.
    pub cv_error: f64,
}

pub(super) struct Engine {
    m: usize,
    /// A coefficient below this many standard errors refuses its hypothesis (0: none).
    significance: f64,
    scale: Vec<f64>,
    /// `z[c][i]`: column `c` at point `i`, scaled (not weighted: its runs' times differ).
    z: Vec<Vec<f64>>,
    /// The runs at each point.
    repeats: Vec<Repeats>,
    all: Sums,
    folds: Vec<FoldSums>,
}

impl Engine {
    /// `columns[c][i]`: column `c`'s value at point `i`, whose runs `repeats[i]` has; `group[i]`:
    /// point `i`'s group (a configuration's sizes, or the point itself), `0..groups`.
    pub fn new(
        columns: &[Vec<f64>],
        repeats: &[Repeats],
        group: &[usize],
        groups: usize,
        folds: &[Fold],
        significance: f64,
    ) -> Self {
        let m = columns.len();
        let scale: Vec<f64> = columns
            .iter()
            .map(|c| {
                c.iter()
                    .zip(repeats)
                    .map(|(v, r)| v * v * r.inverse_square)
                    .sum::<f64>()
                    .sqrt()
            })
            .collect();
        let z: Vec<Vec<f64>> = columns
            .iter()
            .zip(&scale)
            .map(|(c, &s)| {
                c.iter()
                    .map(|v| if s > 0.0 { v / s } else { 0.0 })
                    .collect()
            })
            .collect();
        let mut per_group = vec![Sums::zero(m); groups];
        for (i, (&g, r)) in group.iter().zip(repeats).enumerate() {
            if r.count == 0.0 {
                continue;
            }
            let sums = &mut per_group[g];
            sums.rows += r.count;
            for u in 0..m {
                let zu = z[u][i];
                if zu == 0.0 {
                    continue;
                }
                sums.target[u] += zu * r.inverse;
                let zu = zu * r.inverse_square;
                for v in u..m {
                    sums.gram[u * m + v] += zu * z[v][i];
                }
            }
        }
        for sums in &mut per_group {
            for u in 0..m {
                for v in 0..u {
                    sums.gram[u * m + v] = sums.gram[v * m + u];
                }
            }
        }
        let mut all = Sums::zero(m);
        per_group.iter().for_each(|s| all.add(s));
        let folds = folds
            .iter()
            .map(|fold| {
                let mut test = Sums::zero(m);
                fold.test.iter().for_each(|&g| test.add(&per_group[g]));
                let mut train = all.clone();
                train
                    .gram
                    .iter_mut()
                    .zip(&test.gram)
                    .for_each(|(a, b)| *a -= b);
                train
                    .target
                    .iter_mut()
                    .zip(&test.target)
                    .for_each(|(a, b)| *a -= b);
                train.rows -= test.rows;
                FoldSums {
                    train,
                    test,
                    points: (0..group.len())
                        .filter(|&i| repeats[i].count > 0.0 && fold.test.contains(&group[i]))
                        .collect(),
                    weight: fold.weight,
                }
            })
            .collect();
        Self {
            m,
            significance,
            scale,
            z,
            repeats: repeats.to_vec(),
            all,
            folds,
        }
    }

    /// Whether column `c` is non-zero in some run.
    pub fn usable(&self, c: usize) -> bool {
        self.scale[c] > 0.0
    }

    /// Fits columns `cols` (the first is the compute term) to every run and cross-validates
    /// them; `None` when the runs do not identify every coefficient, one is negative, or one
    /// is within `significance` standard errors of 0 (the term is not needed).
    pub fn evaluate(&self, cols: &[usize]) -> Option<Evaluation> {
        if cols.iter().any(|&c| !self.usable(c)) || self.all.rows <= cols.len() as f64 {
            return None;
        }
        let b = solve(&self.all, self.m, cols)?;
        if b.iter().any(|&v| v < 0.0) {
            return None;
        }
        let ssr = self.all.ssr(self.m, cols, &b);
        let fit_error = (ssr / self.all.rows).sqrt();
        if self.significance > 0.0 {
            let variance = ssr / (self.all.rows - cols.len() as f64);
            let spread = inverse_diagonal(&self.all, self.m, cols)?;
            if b.iter()
                .zip(&spread)
                .any(|(v, d)| *v <= self.significance * (variance * d).sqrt())
            {
                return None;
            }
        }
        let (mut sum, mut weights) = (0.0, 0.0);
        for fold in self.folds.iter().filter(|f| f.test.rows > 0.0) {
            let (sub, bf) = nnls(&fold.train, self.m, cols)?;
            let mse = fold.test.ssr(self.m, &sub, &bf) / fold.test.rows;
            sum += fold.weight * mse;
            weights += fold.weight;
        }
        let cv_error = if weights > 0.0 {
            (sum / weights).sqrt()
        } else {
            fit_error
        };
        let coefficients = cols
            .iter()
            .zip(&b)
            .map(|(&c, v)| v / self.scale[c])
            .collect();
        Some(Evaluation {
            coefficients,
            fit_error,
            cv_error,
        })
    }
}

impl Engine {
    /// Each fold's weight and mean squared relative error of its held-out rows: the items
    /// whose weighted mean is the squared cross-validated error. `None` when a fold cannot
    /// be fitted.
    pub fn held_out_errors(&self, cols: &[usize]) -> Option<Vec<(f64, f64)>> {
        let mut items = Vec::new();
        for fold in self.folds.iter().filter(|f| !f.points.is_empty()) {
            let (sub, b) = nnls(&fold.train, self.m, cols)?;
            let mut sum = 0.0;
            for &i in &fold.points {
                let fitted: f64 = sub.iter().zip(&b).map(|(&c, v)| v * self.z[c][i]).sum();
                sum += self.repeats[i].squared_residuals(fitted);
            }
            items.push((fold.weight, sum / fold.test.rows));
        }
        Some(items)
    }
}

/// The Cholesky factor `L` (lower triangle) of the Gram matrix of `cols`, `None` when a column
/// is not identified.
fn factor(sums: &Sums, m: usize, cols: &[usize]) -> Option<[[f64; 6]; 6]> {
    let k = cols.len();
    let mut a = [[0.0f64; 6]; 6];
    for u in 0..k {
        for v in 0..k {
            a[u][v] = sums.gram[cols[u] * m + cols[v]];
        }
    }
    for j in 0..k {
        let diagonal = a[j][j];
        let mut d = diagonal;
        for q in 0..j {
            d -= a[j][q] * a[j][q];
        }
        if d.is_nan() || d <= NOT_IDENTIFIED * diagonal {
            return None;
        }
        let l = d.sqrt();
        a[j][j] = l;
        for i in j + 1..k {
            let mut s = a[i][j];
            for q in 0..j {
                s -= a[i][q] * a[j][q];
            }
            a[i][j] = s / l;
        }
    }
    Some(a)
}

/// Solves `L L^T x = rhs` for the first `k` entries.
fn substitute(l: &[[f64; 6]; 6], k: usize, rhs: &[f64]) -> Vec<f64> {
    let mut y = [0.0f64; 6];
    for i in 0..k {
        let mut s = rhs[i];
        for q in 0..i {
            s -= l[i][q] * y[q];
        }
        y[i] = s / l[i][i];
    }
    let mut x = vec![0.0; k];
    for i in (0..k).rev() {
        let mut s = y[i];
        for q in i + 1..k {
            s -= l[q][i] * x[q];
        }
        x[i] = s / l[i][i];
    }
    x
}

/// The least-squares coefficients of `cols` over the rows of `sums`, `None` when a column is
/// not identified.
fn solve(sums: &Sums, m: usize, cols: &[usize]) -> Option<Vec<f64>> {
    let l = factor(sums, m, cols)?;
    let rhs: Vec<f64> = cols.iter().map(|&c| sums.target[c]).collect();
    let b = substitute(&l, cols.len(), &rhs);
    b.iter().all(|v| v.is_finite()).then_some(b)
}

/// The diagonal of the inverse Gram matrix of `cols` (each coefficient's variance over the
/// residual variance), `None` when a column is not identified.
fn inverse_diagonal(sums: &Sums, m: usize, cols: &[usize]) -> Option<Vec<f64>> {
    let k = cols.len();
    let l = factor(sums, m, cols)?;
    Some(
        (0..k)
            .map(|j| {
                let mut unit = vec![0.0; k];
                unit[j] = 1.0;
                substitute(&l, k, &unit)[j]
            })
            .collect(),
    )
}

/// Non-negative least squares over the few columns `cols` (the first, the compute term, always
/// kept): the unconstrained fit when it is identified and non-negative, else the best
/// identified non-negative fit of a subset. Returns the columns kept and their coefficients.
fn nnls(sums: &Sums, m: usize, cols: &[usize]) -> Option<(Vec<usize>, Vec<f64>)> {
    if let Some(b) = solve(sums, m, cols) {
        if b.iter().all(|&v| v >= 0.0) {
            return Some((cols.to_vec(), b));
        }
    }
    let rest = cols.len() - 1;
    let mut best: Option<(f64, Vec<usize>, Vec<f64>)> = None;
    for mask in 0..(1usize << rest) - 1 {
        let sub: Vec<usize> = std::iter::once(cols[0])
            .chain(
                (0..rest)
                    .filter(|q| mask >> q & 1 == 1)
                    .map(|q| cols[q + 1]),
            )
            .collect();
        let Some(b) = solve(sums, m, &sub) else {
            continue;
        };
        if b.iter().any(|&v| v < 0.0) {
            continue;
        }
        let ssr = sums.ssr(m, &sub, &b);
        if best.as_ref().is_none_or(|(s, _, _)| ssr < *s) {
            best = Some((ssr, sub, b));
        }
    }
    best.map(|(_, sub, b)| (sub, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each run of times `t` a point of its own.
    fn each_run(t: &[f64]) -> Vec<Repeats> {
        Repeats::of(t.len(), t.iter().copied().enumerate())
    }

    #[test]
    fn recovers_an_exact_law_and_its_held_out_error_is_zero() {
        // T = 2 x + 3 y over two groups.
        let x = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let y = vec![1.0, 1.0, 2.0, 3.0, 5.0, 8.0];
        let t: Vec<f64> = x.iter().zip(&y).map(|(a, b)| 2.0 * a + 3.0 * b).collect();
        let folds = [
            Fold {
                test: vec![0],
                weight: 1.0,
            },
            Fold {
                test: vec![1],
                weight: 2.0,
            },
        ];
        let engine = Engine::new(&[x, y], &each_run(&t), &[0, 0, 0, 1, 1, 1], 2, &folds, 2.0);
        let e = engine.evaluate(&[0, 1]).unwrap();
        assert!((e.coefficients[0] - 2.0).abs() < 1e-9 && (e.coefficients[1] - 3.0).abs() < 1e-9);
        assert!(e.cv_error < 1e-9 && e.fit_error < 1e-9, "{e:?}");
    }

    #[test]
    fn dependent_or_negative_columns_are_refused() {
        let x = vec![1.0, 2.0, 3.0, 4.0];
        let twice: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();
        let t: Vec<f64> = x.iter().map(|v| v + 1.0).collect();
        let engine = Engine::new(
            &[x.clone(), twice],
            &each_run(&t),
            &[0, 1, 2, 3],
            4,
            &[],
            2.0,
        );
        assert!(engine.evaluate(&[0, 1]).is_none());
        // T = 2 x - 0.5 needs a negative constant.
        let t: Vec<f64> = x.iter().map(|v| 2.0 * v - 0.5).collect();
        let engine = Engine::new(
            &[x, vec![1.0; 4]],
            &each_run(&t),
            &[0, 1, 2, 3],
            4,
            &[],
            2.0,
        );
        assert!(engine.evaluate(&[0, 1]).is_none());
        assert!(engine.evaluate(&[0]).is_some());
    }

    #[test]
    fn repeats_at_a_point_fit_and_hold_out_as_their_runs_one_by_one() {
        // Three points of T = 2 x + 3 y, each run 3 times 5% apart, in two groups.
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [1.0, 3.0, 2.0, 5.0];
        let group = [0, 0, 1, 1];
        let spread = [0.95, 1.0, 1.05];
        let times = |i: usize| spread.map(|s| s * (2.0 * x[i] + 3.0 * y[i]));
        let folds = [
            Fold {
                test: vec![0],
                weight: 1.0,
            },
            Fold {
                test: vec![1],
                weight: 2.0,
            },
        ];
        let runs: Vec<(usize, f64)> = (0..4).flat_map(|i| times(i).map(|t| (i, t))).collect();
        let each: Vec<usize> = runs.iter().map(|&(i, _)| i).collect();
        let one_by_one = Engine::new(
            &[
                each.iter().map(|&i| x[i]).collect(),
                each.iter().map(|&i| y[i]).collect(),
            ],
            &each_run(&runs.iter().map(|&(_, t)| t).collect::<Vec<_>>()),
            &each.iter().map(|&i| group[i]).collect::<Vec<_>>(),
            2,
            &folds,
            2.0,
        );
        let repeats = Repeats::of(4, runs.iter().copied());
        let pooled = Engine::new(&[x.to_vec(), y.to_vec()], &repeats, &group, 2, &folds, 2.0);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(1e-3);
        let (a, b) = (
            one_by_one.evaluate(&[0, 1]).unwrap(),
            pooled.evaluate(&[0, 1]).unwrap(),
        );
        assert!(a.cv_error > 0.01, "{a:?}");
        assert!(
            close(a.fit_error, b.fit_error) && close(a.cv_error, b.cv_error),
            "{a:?} {b:?}"
        );
        for (u, v) in a.coefficients.iter().zip(&b.coefficients) {
            assert!(close(*u, *v), "{a:?} {b:?}");
        }
        let (a, b) = (
            one_by_one.held_out_errors(&[0]).unwrap(),
            pooled.held_out_errors(&[0]).unwrap(),
        );
        for (u, v) in a.iter().zip(&b) {
            assert!(u.0 == v.0 && close(u.1, v.1), "{a:?} {b:?}");
        }
    }
}
