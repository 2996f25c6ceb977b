//! The fast core of model selection: every hypothesis is a handful of columns, fitted by
//! weighted least squares on relative residuals from precomputed Gram matrices, so a fit is a
//! Cholesky factorisation of at most a 5 x 5 matrix whatever the number of runs, and a
//! held-out configuration's error is a quadratic form.
//!
//! Rows are weighted by `1 / T` (the target is then 1 in every row) and each column scaled to
//! unit norm over all runs, so the normal equations stay well conditioned; a column whose part
//! independent of the others is below `1e-5` of its norm is not identified.

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

/// A cross-validation fold: the groups held out (the others are fitted) and its weight.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Fold {
    pub test: Vec<usize>,
    pub weight: f64,
}

struct FoldSums {
    train: Sums,
    test: Sums,
    /// The rows held out.
    rows: Vec<usize>,
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
    /// `z[c][i]`: column `c` in row `i`, weighted and scaled.
    z: Vec<Vec<f64>>,
    all: Sums,
    folds: Vec<FoldSums>,
}

impl Engine {
    /// `columns[c][i]`: column `c`'s value in run `i`; `group[i]`: run `i`'s group (a
    /// configuration, or the run itself), `0..groups`.
    pub fn new(
        columns: &[Vec<f64>],
        times: &[f64],
        group: &[usize],
        groups: usize,
        folds: &[Fold],
        significance: f64,
    ) -> Self {
        let m = columns.len();
        let weighted: Vec<Vec<f64>> = columns
            .iter()
            .map(|c| c.iter().zip(times).map(|(x, t)| x / t).collect())
            .collect();
        let scale: Vec<f64> = weighted
            .iter()
            .map(|c| c.iter().map(|v| v * v).sum::<f64>().sqrt())
            .collect();
        let z: Vec<Vec<f64>> = weighted
            .iter()
            .zip(&scale)
            .map(|(c, &s)| {
                c.iter()
                    .map(|v| if s > 0.0 { v / s } else { 0.0 })
                    .collect()
            })
            .collect();
        let mut per_group = vec![Sums::zero(m); groups];
        for (i, &g) in group.iter().enumerate() {
            let sums = &mut per_group[g];
            sums.rows += 1.0;
            for u in 0..m {
                let zu = z[u][i];
                if zu == 0.0 {
                    continue;
                }
                sums.target[u] += zu;
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
                    rows: (0..group.len())
                        .filter(|i| fold.test.contains(&group[*i]))
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
        for fold in self.folds.iter().filter(|f| !f.rows.is_empty()) {
            let (sub, b) = nnls(&fold.train, self.m, cols)?;
            let mut sum = 0.0;
            for &i in &fold.rows {
                let fitted: f64 = sub.iter().zip(&b).map(|(&c, v)| v * self.z[c][i]).sum();
                sum += (1.0 - fitted).powi(2);
            }
            items.push((fold.weight, sum / fold.rows.len() as f64));
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
        let engine = Engine::new(&[x, y], &t, &[0, 0, 0, 1, 1, 1], 2, &folds, 2.0);
        let e = engine.evaluate(&[0, 1]).unwrap();
        assert!((e.coefficients[0] - 2.0).abs() < 1e-9 && (e.coefficients[1] - 3.0).abs() < 1e-9);
        assert!(e.cv_error < 1e-9 && e.fit_error < 1e-9, "{e:?}");
    }

    #[test]
    fn dependent_or_negative_columns_are_refused() {
        let x = vec![1.0, 2.0, 3.0, 4.0];
        let twice: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();
        let t: Vec<f64> = x.iter().map(|v| v + 1.0).collect();
        let engine = Engine::new(&[x.clone(), twice], &t, &[0, 1, 2, 3], 4, &[], 2.0);
        assert!(engine.evaluate(&[0, 1]).is_none());
        // T = 2 x - 0.5 needs a negative constant.
        let t: Vec<f64> = x.iter().map(|v| 2.0 * v - 0.5).collect();
        let engine = Engine::new(&[x, vec![1.0; 4]], &t, &[0, 1, 2, 3], 4, &[], 2.0);
        assert!(engine.evaluate(&[0, 1]).is_none());
        assert!(engine.evaluate(&[0]).is_some());
    }
}
