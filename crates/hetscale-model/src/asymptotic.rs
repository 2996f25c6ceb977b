//! Asymptotic single-node speed `r_inf` and reference speed `r_1/2` (Sun & Rover section III,
//! after Hockney's `n_1/2`).
//!
//! Speed is modelled as `r(W) = r_inf W / (W + W_1/2)`, so `1 / r = 1 / r_inf + (W_1/2 / r_inf) / W`
//! is linear in `1 / W` and is fitted by least squares. `r_1/2 = r_inf / 2` is reached at `W_1/2`.

use crate::error::{ModelError, Result, positive};
use crate::fit::{FitQuality, least_squares};
use serde::Serialize;

/// `r_inf` and `W_1/2` of one algorithm on one node.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AsymptoticSpeed {
    /// Speed as work goes to infinity.
    pub r_inf: f64,
    /// Work at which half of `r_inf` is reached.
    pub w_half: f64,
}

impl AsymptoticSpeed {
    /// Validated parameters.
    pub fn new(r_inf: f64, w_half: f64) -> Result<Self> {
        Ok(Self {
            r_inf: positive("r_inf", r_inf)?,
            w_half: crate::error::non_negative("W_1/2", w_half)?,
        })
    }

    /// Fits `r_inf` and `W_1/2` to `(work, speed)` samples of single-node runs.
    pub fn fit(samples: &[(f64, f64)]) -> Result<(Self, FitQuality)> {
        for &(w, s) in samples {
            positive("work", w)?;
            positive("speed", s)?;
        }
        let ones = vec![1.0; samples.len()];
        let inv_w: Vec<f64> = samples.iter().map(|(w, _)| 1.0 / w).collect();
        let inv_s: Vec<f64> = samples.iter().map(|(_, s)| 1.0 / s).collect();
        let (coef, q) = least_squares(&[ones, inv_w], &inv_s)?;
        if coef[0] <= 0.0 {
            return Err(ModelError::Fit {
                what: "asymptotic speed",
                why: "speed does not level off with work in these samples; measure larger sizes"
                    .into(),
            });
        }
        let r_inf = 1.0 / coef[0];
        Ok((Self::new(r_inf, (coef[1] * r_inf).max(0.0))?, q))
    }

    /// The reference speed `r_1/2 = r_inf / 2`.
    pub fn r_half(&self) -> f64 {
        self.r_inf / 2.0
    }

    /// Modelled speed at work `w`.
    pub fn speed_at(&self, w: f64) -> Result<f64> {
        let w = positive("work", w)?;
        Ok(self.r_inf * w / (w + self.w_half))
    }

    /// Work needed to reach speed `s`; an error if `s >= r_inf`.
    pub fn work_for_speed(&self, s: f64) -> Result<f64> {
        let s = positive("speed", s)?;
        if s >= self.r_inf {
            return Err(ModelError::Inconsistent(format!(
                "speed {s} is not below the asymptotic speed r_inf = {}: no work size reaches it",
                self.r_inf
            )));
        }
        Ok(self.w_half * s / (self.r_inf - s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_hockney_parameters() {
        let truth = AsymptoticSpeed::new(1.7e6, 5e4).unwrap();
        let samples: Vec<(f64, f64)> = [1e3, 1e4, 1e5, 1e6]
            .iter()
            .map(|&w| (w, truth.speed_at(w).unwrap()))
            .collect();
        let (fit, q) = AsymptoticSpeed::fit(&samples).unwrap();
        assert!((fit.r_inf - 1.7e6).abs() / 1.7e6 < 1e-9);
        assert!((fit.w_half - 5e4).abs() / 5e4 < 1e-9);
        assert!(q.r_squared > 0.999_999);
        assert!((fit.speed_at(fit.w_half).unwrap() - fit.r_half()).abs() < 1e-6);
        assert!(fit.work_for_speed(fit.r_inf).is_err());
    }
}
