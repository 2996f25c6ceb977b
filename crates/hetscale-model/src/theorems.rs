//! Scalability prediction theorems.
//!
//! - Sun & Rover Theorem 1 (eq. 5/8) and Theorem 2 (eq. 7/9), homogeneous, with the single-node
//!   speed `mu(W)` that may grow with work;
//! - Chen, Sun & Wu Theorem 1, Theorem 2 and Corollary 2, heterogeneous, with marked speeds.

use crate::error::{ModelError, Result, non_negative, positive};

/// Sun & Rover Theorem 1 (eq. 5):
/// `psi(N, N') = t_cN / t_oN' [1 - mu(W/N) / mu(W'/N')] + t_oN / t_oN'`.
///
/// `t_c` is the computation time on `N` processors, `t_o` and `t_o_scaled` the overhead times on
/// `N` and `N'`, `mu` and `mu_scaled` the single-processor speeds at the per-processor work
/// `W/N` and `W'/N'`.
pub fn sun_rover_psi(t_c: f64, t_o: f64, t_o_scaled: f64, mu: f64, mu_scaled: f64) -> Result<f64> {
    non_negative("t_cN", t_c)?;
    non_negative("t_oN", t_o)?;
    positive("t_oN'", t_o_scaled)?;
    let ratio = positive("mu(W/N)", mu)? / positive("mu(W'/N')", mu_scaled)?;
    Ok(t_c / t_o_scaled * (1.0 - ratio) + t_o / t_o_scaled)
}

/// Sun & Rover eq. 7: the work `W'` that keeps the average unit speed on `N'` processors,
/// `W' = N' t_oN' / ((1/mu(W/N) - 1/mu(W'/N')) + N t_oN / W)`, solved as a fixed point because
/// `mu(W'/N')` and (Theorem 2) `t_oN'(W')` depend on `W'`.
pub struct SunRoverScaling<'a> {
    /// Single-processor speed as a function of per-processor work, `mu(w)`.
    pub mu: &'a dyn Fn(f64) -> Result<f64>,
    /// Overhead time as a function of `(processors, work)`, `t_o(N, W)`.
    pub overhead: &'a dyn Fn(f64, f64) -> Result<f64>,
}

impl SunRoverScaling<'_> {
    /// Time on `n` processors for work `w`: `W / (N mu(W/N)) + t_o(N, W)`.
    pub fn time(&self, n: f64, w: f64) -> Result<f64> {
        Ok(w / (n * (self.mu)(w / n)?) + (self.overhead)(n, w)?)
    }

    /// The `W'` on `n_scaled` processors with the same average unit speed as `w` on `n`,
    /// searched in `[lo, hi]`.
    pub fn scaled_work(&self, n: f64, w: f64, n_scaled: f64, lo: f64, hi: f64) -> Result<f64> {
        let target = w / (n * self.time(n, w)?);
        crate::root::solve_for_target(
            |w2| Ok(w2 / (n_scaled * self.time(n_scaled, w2)?)),
            target,
            lo,
            hi,
            "average unit speed",
        )
    }

    /// Theorem 2 (eq. 9) evaluated at the solved `W'`.
    pub fn psi(&self, n: f64, w: f64, n_scaled: f64, w_scaled: f64) -> Result<f64> {
        let mu = (self.mu)(w / n)?;
        let mu2 = (self.mu)(w_scaled / n_scaled)?;
        let t_c = w / (n * mu);
        sun_rover_psi(
            t_c,
            (self.overhead)(n, w)?,
            (self.overhead)(n_scaled, w_scaled)?,
            mu,
            mu2,
        )
    }
}

/// Chen, Sun & Wu Theorem 1: `psi(C, C') = (t_0 + T_0) / (t_0' + T_0')`, with `t_0` the time of
/// the sequential portion and `T_0` the communication overhead on each system.
pub fn chen_theorem1(t0: f64, overhead: f64, t0_scaled: f64, overhead_scaled: f64) -> Result<f64> {
    let num = non_negative("t_0", t0)? + non_negative("T_0", overhead)?;
    let den = non_negative("t_0'", t0_scaled)? + non_negative("T_0'", overhead_scaled)?;
    positive("t_0' + T_0'", den)?;
    Ok(num / den)
}

/// Chen, Sun & Wu Theorem 1's scaled work: `W' = C'(t_0' + T_0') / (C (t_0 + T_0)) W`.
pub fn chen_theorem1_scaled_work(
    c: f64,
    work: f64,
    t0: f64,
    overhead: f64,
    c_scaled: f64,
    t0_scaled: f64,
    overhead_scaled: f64,
) -> Result<f64> {
    let psi = chen_theorem1(t0, overhead, t0_scaled, overhead_scaled)?;
    positive("psi", psi)?;
    Ok(positive("C'", c_scaled)? * positive("W", work)? / (positive("C", c)? * psi))
}

/// Chen, Sun & Wu Theorem 2 (sequential part on the same node before and after scaling):
/// `psi(C, C') = (C b W - C' b W + C T_0) / (C T_0')` with `b = alpha / C_i`.
pub fn chen_theorem2(
    c: f64,
    c_scaled: f64,
    beta: f64,
    work: f64,
    overhead: f64,
    overhead_scaled: f64,
) -> Result<f64> {
    let (c, c2) = (positive("C", c)?, positive("C'", c_scaled)?);
    let (b, w) = (non_negative("beta", beta)?, positive("W", work)?);
    let (t, t2) = (
        non_negative("T_0", overhead)?,
        positive("T_0'", overhead_scaled)?,
    );
    let num = c * b * w - c2 * b * w + c * t;
    if num <= 0.0 {
        return Err(ModelError::Inconsistent(format!(
            "no scaled problem keeps the speed-efficiency: C b W - C' b W + C T_0 = {num} <= 0 (the sequential part grows faster than the overhead it hides)"
        )));
    }
    Ok(num / (c * t2))
}

/// Chen, Sun & Wu Theorem 2's scaled work: `W' = C' T_0' W / (C b W - C' b W + C T_0)`.
pub fn chen_theorem2_scaled_work(
    c: f64,
    c_scaled: f64,
    beta: f64,
    work: f64,
    overhead: f64,
    overhead_scaled: f64,
) -> Result<f64> {
    let psi = chen_theorem2(c, c_scaled, beta, work, overhead, overhead_scaled)?;
    Ok(c_scaled * work / (c * psi))
}

/// `beta = alpha / C_i` of Theorem 2: sequential fraction over the marked speed of its node.
pub fn chen_beta(alpha: f64, marked_speed: f64) -> Result<f64> {
    if !(0.0..1.0).contains(&alpha) {
        return Err(ModelError::Inconsistent(format!(
            "sequential fraction alpha must be in [0, 1), got {alpha}"
        )));
    }
    Ok(alpha / positive("marked_speed", marked_speed)?)
}

/// Chen, Sun & Wu Corollary 2 (perfectly parallel, balanced): `psi(C, C') = T_0 / T_0'`.
pub fn chen_corollary2(overhead: f64, overhead_scaled: f64) -> Result<f64> {
    chen_theorem1(0.0, overhead, 0.0, overhead_scaled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalability::isospeed_e_psi;

    /// Synthetic heterogeneous runs: T = (1-alpha) W / C + alpha W / C_j + T_0, with the
    /// sequential part on node j of speed C_j.
    fn time(w: f64, c: f64, alpha: f64, c_j: f64, t0: f64) -> f64 {
        (1.0 - alpha) * w / c + alpha * w / c_j + t0
    }

    #[test]
    fn theorem1_agrees_with_definition_on_synthetic_runs() {
        let (c, c2, cj, alpha) = (100.0, 250.0, 30.0, 0.01);
        let (t0, t0s, w) = (2.0, 5.0, 1e3);
        let e = w / (time(w, c, alpha, cj, t0) * c);
        let w2 = crate::root::solve_for_target(
            |w2| Ok(w2 / (time(w2, c2, alpha, cj, t0s) * c2)),
            e,
            1.0,
            1e9,
            "E_s",
        )
        .unwrap();
        let by_definition = isospeed_e_psi(c, w, c2, w2).unwrap();
        let seq = |w: f64| alpha * w / cj;
        let by_theorem1 = chen_theorem1(seq(w), t0, seq(w2), t0s).unwrap();
        let by_theorem2 = chen_theorem2(c, c2, chen_beta(alpha, cj).unwrap(), w, t0, t0s).unwrap();
        assert!(
            (by_definition - by_theorem1).abs() < 1e-9,
            "{by_definition} {by_theorem1}"
        );
        assert!(
            (by_definition - by_theorem2).abs() < 1e-9,
            "{by_definition} {by_theorem2}"
        );
    }

    #[test]
    fn corollary1_constant_overhead_is_perfect() {
        assert_eq!(chen_corollary2(3.0, 3.0).unwrap(), 1.0);
    }

    #[test]
    fn sun_rover_theorem2_matches_definition() {
        let mu = |w: f64| Ok(1.7e6 * w / (w + 2e4));
        let overhead = |n: f64, _w: f64| Ok(130e-6 * (1.0 + n.log2()));
        let model = SunRoverScaling {
            mu: &mu,
            overhead: &overhead,
        };
        let (n, n2, w) = (4.0, 16.0, 1e5);
        let w2 = model.scaled_work(n, w, n2, 1e3, 1e12).unwrap();
        let by_definition = n2 * w / (n * w2);
        let by_theorem = model.psi(n, w, n2, w2).unwrap();
        assert!(
            (by_definition - by_theorem).abs() < 1e-8,
            "{by_definition} {by_theorem}"
        );
        // Equivalently T_N / T_N'.
        let by_times = model.time(n, w).unwrap() / model.time(n2, w2).unwrap();
        assert!((by_definition - by_times).abs() < 1e-8);
    }

    #[test]
    fn impossible_scaling_is_an_error() {
        assert!(chen_theorem2(10.0, 1000.0, 1.0, 1e6, 0.0, 1.0).is_err());
        assert!(chen_beta(1.5, 10.0).is_err());
        assert!(sun_rover_psi(1.0, 1.0, 0.0, 1.0, 1.0).is_err());
    }
}
