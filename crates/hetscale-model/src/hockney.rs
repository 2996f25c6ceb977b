//! Hockney's alpha-beta model of a point-to-point message: `t(S) = alpha + beta S`.

use crate::error::{Result, non_negative, positive};
use crate::fit::{FitQuality, least_squares};
use serde::Serialize;

/// Startup `alpha` (s) and per-byte time `beta` (s/byte).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Hockney {
    /// Latency in seconds.
    pub alpha: f64,
    /// Transfer time per byte in seconds.
    pub beta: f64,
}

impl Hockney {
    /// Validated parameters.
    pub fn new(alpha: f64, beta: f64) -> Result<Self> {
        Ok(Self {
            alpha: non_negative("alpha", alpha)?,
            beta: non_negative("beta", beta)?,
        })
    }

    /// Time to send `bytes`.
    pub fn time(&self, bytes: f64) -> Result<f64> {
        Ok(self.alpha + self.beta * non_negative("bytes", bytes)?)
    }

    /// Asymptotic bandwidth `r_inf = 1 / beta` in bytes per second.
    pub fn r_inf(&self) -> Result<f64> {
        Ok(1.0 / positive("beta", self.beta)?)
    }

    /// Half-performance message length `n_1/2 = alpha / beta` in bytes.
    pub fn n_half(&self) -> Result<f64> {
        Ok(self.alpha / positive("beta", self.beta)?)
    }

    /// Fits `alpha` and `beta` to `(bytes, seconds)` samples.
    pub fn fit(samples: &[(f64, f64)]) -> Result<(Self, FitQuality)> {
        let ones = vec![1.0; samples.len()];
        let bytes: Vec<f64> = samples.iter().map(|s| s.0).collect();
        let times: Vec<f64> = samples.iter().map(|s| s.1).collect();
        let (c, q) = least_squares(&[ones, bytes], &times)?;
        Ok((Self::new(c[0].max(0.0), c[1].max(0.0))?, q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncube2_parameters() {
        // Sun & Rover section IV-B: alpha = 130 us, beta = 0.5 us/byte on the nCUBE 2.
        let h = Hockney::new(130e-6, 0.5e-6).unwrap();
        assert!((h.time(8.0).unwrap() - 134e-6).abs() < 1e-15);
        assert!((h.n_half().unwrap() - 260.0).abs() < 1e-9);
        let samples: Vec<(f64, f64)> = [0.0, 64.0, 1024.0]
            .iter()
            .map(|&b| (b, h.time(b).unwrap()))
            .collect();
        let (fit, _) = Hockney::fit(&samples).unwrap();
        assert!((fit.alpha - 130e-6).abs() < 1e-12 && (fit.beta - 0.5e-6).abs() < 1e-15);
    }
}
