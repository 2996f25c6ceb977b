//! A fitted scaling model: its terms and coefficients, how it prints, what it predicts.

use super::caution::Caution;
use super::data::Configuration;
use super::hypothesis::Term;
use crate::error::{ModelError, Result, positive};
use crate::numbers::three_digits;
use crate::root::solve_for_target;
use serde::Serialize;
use std::fmt;

/// One term of a fitted model with its coefficient.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FittedTerm {
    /// The term (`W/C`, `1` for the constant, `n log2(p)`, ...).
    pub term: Term,
    /// Its coefficient (>= 0): `a` for `W/C`, seconds per unit of the term otherwise.
    pub coefficient: f64,
    /// The coefficient's 95% interval (Student t of the weighted fit), `[low, high]`; `None`
    /// when the runs leave no degree of freedom.
    pub ci95: Option<(f64, f64)>,
}

/// `T(n, configuration) = a W(n)/C + sum_t c_t term_t(n, configuration)`, fitted to runs.
///
/// Prints as `T = 1.02 W/C + 3.1e-4 n log2(p) + 0.012 p` (3 significant digits).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingModel {
    /// The formula as [`Display`](fmt::Display) prints it.
    pub formula: String,
    /// The terms, `W/C` first.
    pub terms: Vec<FittedTerm>,
    /// The cross-validated error, %: the root-mean-square relative error of the times of the
    /// configurations left out, extrapolating folds weighed more ([`super::select`]).
    pub cv_error_percent: f64,
    /// The root-mean-square relative residual of the fit to every run, %.
    pub fit_error_percent: f64,
    /// How many configurations it was fitted on.
    pub configurations: usize,
    /// The largest node count among them.
    pub largest_fitted_nodes: usize,
    /// How many runs it was fitted on.
    pub runs: usize,
    /// What the data cannot support (few configurations, a poor fit).
    pub cautions: Vec<Caution>,
}

impl ScalingModel {
    /// The model's time at size `n` with work `work_flop` on `configuration`, s.
    pub fn predict_time(
        &self,
        n: f64,
        work_flop: f64,
        configuration: &Configuration,
    ) -> Result<f64> {
        positive("n", n)?;
        positive("work_flop", work_flop)?;
        configuration.check()?;
        let t: f64 = self
            .terms
            .iter()
            .map(|t| t.coefficient * t.term.value(n, work_flop, configuration))
            .sum();
        if t.is_finite() && t > 0.0 {
            Ok(t)
        } else if let Some(why) = self
            .terms
            .iter()
            .find_map(|t| t.term.undefined_because(n, configuration))
        {
            Err(ModelError::TermUndefined {
                configuration: configuration.label.clone(),
                why,
            })
        } else {
            Err(ModelError::Inconsistent(format!(
                "the model predicts time {t} at n = {n} on \"{}\"",
                configuration.label
            )))
        }
    }

    /// The model's time at size `n` split into its compute part (the `W/C` term) and the
    /// rest, its overhead, s: the part a prediction's error is carried by
    /// ([`super::predictive`]). A model with no overhead term (or none above 0) carries it on
    /// the whole time: `(0, T)`.
    pub fn split_time(
        &self,
        n: f64,
        work_flop: f64,
        configuration: &Configuration,
    ) -> Result<(f64, f64)> {
        let total = self.predict_time(n, work_flop, configuration)?;
        if !self.has_overhead() {
            return Ok((0.0, total));
        }
        let compute = self.compute_time(n, work_flop, configuration);
        Ok((compute, total - compute))
    }

    /// The model's compute part (its `W/C` term) at size `n`, s.
    pub fn compute_time(&self, n: f64, work_flop: f64, configuration: &Configuration) -> f64 {
        self.terms
            .iter()
            .filter(|t| t.term.is_compute())
            .map(|t| t.coefficient * t.term.value(n, work_flop, configuration))
            .sum()
    }

    /// The model with its compute term multiplied by `compute` and its overhead (every other
    /// term) by `overhead`; a model with no overhead term has its whole time multiplied by
    /// `overhead`, as [`Self::split_time`] puts it all there.
    pub fn with_parts_scaled(&self, compute: f64, overhead: f64) -> ScalingModel {
        let whole = !self.has_overhead();
        let mut scaled = self.clone();
        for t in &mut scaled.terms {
            t.coefficient *= if whole || !t.term.is_compute() {
                overhead
            } else {
                compute
            };
        }
        scaled
    }

    fn has_overhead(&self) -> bool {
        self.terms
            .iter()
            .any(|t| !t.term.is_compute() && t.coefficient > 0.0)
    }

    /// The speed-efficiency `E_s = W(n) / (T(n) C)` the model predicts at size `n`.
    pub fn efficiency(
        &self,
        n: f64,
        configuration: &Configuration,
        work: &dyn Fn(f64) -> f64,
    ) -> Result<f64> {
        let w = positive("work", work(n))?;
        Ok(w / (self.predict_time(n, w, configuration)? * configuration.marked_speed()))
    }

    /// The smallest size in `n_bounds` at which the model's speed-efficiency reaches
    /// `target_efficiency` on `configuration`, `work(n)` giving the work in flop. A target no
    /// size in the bounds reaches is [`ModelError::Unreachable`] with the closest `E_s` and
    /// where: at the upper bound, the target needs a larger size than the bounds allow or is
    /// above what the configuration ever reaches; at the lower bound, every size in the bounds
    /// is already past it.
    pub fn size_for_efficiency(
        &self,
        target_efficiency: f64,
        configuration: &Configuration,
        work: &dyn Fn(f64) -> f64,
        n_bounds: (f64, f64),
    ) -> Result<f64> {
        positive("target speed-efficiency", target_efficiency)?;
        solve_for_target(
            |n| self.efficiency(n, configuration, work),
            target_efficiency,
            n_bounds.0,
            n_bounds.1,
            "speed-efficiency",
        )
    }

    /// The overhead terms' names, e.g. `["n log2(p)", "1"]` (the hypothesis, without `W/C`).
    pub fn hypothesis(&self) -> Vec<String> {
        self.terms[1..]
            .iter()
            .map(|t| match t.term {
                Term::Constant => "1".to_owned(),
                ref other => other.to_string(),
            })
            .collect()
    }
}

impl fmt::Display for ScalingModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&formula(&self.terms))
    }
}

/// `T = 1.02 W/C + 3.1e-4 n log2(p) + 0.012 p`.
pub(super) fn formula(terms: &[FittedTerm]) -> String {
    let parts: Vec<String> = terms
        .iter()
        .map(|t| match t.term {
            Term::Constant => three_digits(t.coefficient),
            ref other => format!("{} {other}", three_digits(t.coefficient)),
        })
        .collect();
    format!("T = {}", parts.join(" + "))
}
