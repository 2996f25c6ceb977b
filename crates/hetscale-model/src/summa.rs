//! SUMMA cost models and heterogeneous distribution strategies (Kalinov, sections 3-4).
//!
//! A message of `L` elements costs `a + L b`. Processor performance `r` is measured on
//! sequential matrix multiplication in element updates (multiply-adds) per second, so the
//! sequential time of an `n x n` product is `n^3 / r`. Square forms take `m = n = k` and a
//! `sqrt(p) x sqrt(p)` grid; `sqrt(p)` is used as a real number so any `p` can be evaluated.

use crate::error::{ModelError, Result, all_positive, non_negative, positive};
use serde::Serialize;

/// Startup `a` (s) and per-element time `b` (s) of a point-to-point message.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SummaNetwork {
    /// Startup time in seconds.
    pub a: f64,
    /// Transfer time per matrix element in seconds.
    pub b: f64,
}

impl SummaNetwork {
    /// Validated parameters.
    pub fn new(a: f64, b: f64) -> Result<Self> {
        Ok(Self {
            a: non_negative("a", a)?,
            b: non_negative("b", b)?,
        })
    }

    fn message(&self, elements: f64) -> f64 {
        self.a + elements * self.b
    }
}

/// Kalinov eq. 6, pipelined SUMMA on a `P x Q` grid (`A` is `m x k`, `B` is `k x n`):
/// `mn(k+1)/(PQr) + (k+2Q-3)(a + (m/P) b) + (k+2P-3)(a + (n/Q) b)`.
pub fn summa_time(
    m: f64,
    n: f64,
    k: f64,
    grid: (usize, usize),
    r: f64,
    net: SummaNetwork,
) -> Result<f64> {
    let (m, n, k) = (positive("m", m)?, positive("n", n)?, positive("k", k)?);
    let (pp, qq) = (positive("P", grid.0 as f64)?, positive("Q", grid.1 as f64)?);
    let r = positive("r", r)?;
    Ok(m * n * (k + 1.0) / (pp * qq * r)
        + (k + 2.0 * qq - 3.0) * net.message(m / pp)
        + (k + 2.0 * pp - 3.0) * net.message(n / qq))
}

/// Kalinov eq. 7 (approximate form used for scalability): `n^3/(pr) + 2n(a + (n/sqrt p) b)`.
pub fn summa_time_square(n: f64, p: f64, r: f64, net: SummaNetwork) -> Result<f64> {
    let (n, p, r) = (positive("n", n)?, positive("p", p)?, positive("r", r)?);
    Ok(n.powi(3) / (p * r) + 2.0 * n * net.message(n / p.sqrt()))
}

/// Kalinov section 3.3, blocked SUMMA with panel width `nb`:
/// `n^3/(pr) + 2n(a/nb + (n/sqrt p) b)`.
pub fn summa_blocked_time(n: f64, p: f64, nb: f64, r: f64, net: SummaNetwork) -> Result<f64> {
    let (n, p, r, nb) = (
        positive("n", n)?,
        positive("p", p)?,
        positive("r", r)?,
        positive("nb", nb)?,
    );
    Ok(n.powi(3) / (p * r) + 2.0 * n * (net.a / nb + n / p.sqrt() * net.b))
}

/// A distribution strategy of Kalinov section 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Strategy {
    /// One process per processor, data evenly distributed.
    HoHo,
    /// Processes per processor in proportion to speed, data evenly distributed over processes.
    HeHo,
    /// One process per processor, column-wise heterogeneous data distribution.
    HoHe1,
    /// One process per processor, heterogeneous true-grid data distribution.
    HoHe2,
}

impl Strategy {
    /// All four strategies in the paper's order.
    pub const ALL: [Strategy; 4] = [
        Strategy::HoHo,
        Strategy::HeHo,
        Strategy::HoHe1,
        Strategy::HoHe2,
    ];

    /// The lower-case name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::HoHo => "hoho",
            Strategy::HeHo => "heho",
            Strategy::HoHe1 => "hohe1",
            Strategy::HoHe2 => "hohe2",
        }
    }
}

/// The processors of a heterogeneous platform, characterised by their performances `r_l`.
#[derive(Debug, Clone, PartialEq)]
pub struct Processors {
    speeds: Vec<f64>,
}

impl Processors {
    /// Validated performances (each > 0).
    pub fn new(speeds: Vec<f64>) -> Result<Self> {
        all_positive("r_l", &speeds)?;
        Ok(Self { speeds })
    }

    /// Number of processors.
    pub fn p(&self) -> usize {
        self.speeds.len()
    }

    /// Slowest performance `r_min`.
    pub fn r_min(&self) -> f64 {
        self.speeds.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Average performance `r_aver`.
    pub fn r_aver(&self) -> f64 {
        self.speeds.iter().sum::<f64>() / self.p() as f64
    }

    /// Level of heterogeneity `H = r_max / r_min`.
    pub fn heterogeneity(&self) -> f64 {
        self.speeds.iter().copied().fold(0.0, f64::max) / self.r_min()
    }

    /// HeHo process counts `g_l`: in proportion to speed, the slowest running one process.
    pub fn heho_processes(&self) -> Vec<usize> {
        let r_min = self.r_min();
        self.speeds
            .iter()
            .map(|r| ((r / r_min).round() as usize).max(1))
            .collect()
    }

    /// `r'_min`, the performance of the weakest HeHo process, `min_l r_l / g_l`.
    pub fn heho_r_min(&self) -> f64 {
        self.speeds
            .iter()
            .zip(self.heho_processes())
            .map(|(r, g)| r / g as f64)
            .fold(f64::INFINITY, f64::min)
    }
}

/// Time of unblocked square SUMMA (`m = n = k`) under `strategy` (Kalinov section 4):
/// - HoHo: `n^3/(p r_min) + 2n(a + (n/sqrt p) b)` (eq. 7 paced by the weakest processor);
/// - HeHo: `n^3/(p_h r'_min) + 2Hn(a + (n/sqrt p_h) b)` over `p_h = sum g_l` processes;
/// - HoHe1: `n^3/(p r_aver) + 2n sqrt(p) a + n^2 (1 + H/sqrt p) b`;
/// - HoHe2: `n^3/(p r_aver) + 2n(a + (Hn/sqrt p) b)`.
pub fn strategy_time(
    strategy: Strategy,
    n: f64,
    procs: &Processors,
    net: SummaNetwork,
) -> Result<f64> {
    let n = positive("n", n)?;
    let p = procs.p() as f64;
    let h = procs.heterogeneity();
    let (sq, n3) = (p.sqrt(), n.powi(3));
    Ok(match strategy {
        Strategy::HoHo => summa_time_square(n, p, procs.r_min(), net)?,
        Strategy::HeHo => {
            let ph = procs.heho_processes().iter().sum::<usize>() as f64;
            n3 / (ph * procs.heho_r_min()) + 2.0 * h * n * net.message(n / ph.sqrt())
        }
        Strategy::HoHe1 => {
            n3 / (p * procs.r_aver()) + 2.0 * n * sq * net.a + n * n * (1.0 + h / sq) * net.b
        }
        Strategy::HoHe2 => n3 / (p * procs.r_aver()) + 2.0 * n * net.message(h * n / sq),
    })
}

/// Heterogeneous concurrent efficiency of a strategy, `E_he = n^3 / (p r_aver T)` (Kalinov eq. 2
/// with `T_seq = n^3 / r_seq`): 1 is the ideal use of the platform's aggregate performance.
pub fn strategy_efficiency(
    strategy: Strategy,
    n: f64,
    procs: &Processors,
    net: SummaNetwork,
) -> Result<f64> {
    let t = strategy_time(strategy, n, procs, net)?;
    Ok(n.powi(3) / (procs.p() as f64 * procs.r_aver() * t))
}

/// Checks a grid shape: `P Q` must equal the process count.
pub fn check_grid(p: usize, grid: (usize, usize)) -> Result<()> {
    if grid.0 * grid.1 == p && p > 0 {
        Ok(())
    } else {
        Err(ModelError::Inconsistent(format!(
            "a {}x{} grid does not hold {p} processes",
            grid.0, grid.1
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net() -> SummaNetwork {
        SummaNetwork::new(50e-6, 6.4e-8).unwrap()
    }

    #[test]
    fn eq6_square_case_is_eq7_plus_final_update() {
        // Eq. 6 with m = n = k, P = Q = sqrt p: n^2(n+1)/(pr) + 2(n + 2 sqrt p - 3)(a + n b / sqrt p).
        let (n, q, r) = (600.0, 4usize, 1e9);
        let p = (q * q) as f64;
        let exact = summa_time(n, n, n, (q, q), r, net()).unwrap();
        let expected = n * n * (n + 1.0) / (p * r)
            + 2.0 * (n + 2.0 * q as f64 - 3.0) * (net().a + n / q as f64 * net().b);
        assert!((exact - expected).abs() < 1e-12 * expected);
    }

    #[test]
    fn homogeneous_strategies_coincide() {
        let procs = Processors::new(vec![2e9; 16]).unwrap();
        let t: Vec<f64> = Strategy::ALL
            .iter()
            .map(|&s| strategy_time(s, 1000.0, &procs, net()).unwrap())
            .collect();
        assert!(
            (t[0] - t[1]).abs() < 1e-12 && (t[0] - t[3]).abs() < 1e-12,
            "{t:?}"
        );
    }

    #[test]
    fn hohe1_loses_scalability_others_keep_it() {
        // Fixed n^2 / p: E of HoHo, HeHo, HoHe2 tends to a constant; HoHe1 decays.
        let eff = |s, p: usize| {
            let speeds = (0..p).map(|i| if i % 2 == 0 { 4e9 } else { 1e9 }).collect();
            let procs = Processors::new(speeds).unwrap();
            strategy_efficiency(s, (1e6 * p as f64).sqrt(), &procs, net()).unwrap()
        };
        for s in [Strategy::HoHo, Strategy::HeHo, Strategy::HoHe2] {
            let ratio = eff(s, 4096) / eff(s, 64);
            assert!(ratio > 0.9, "{s:?} {ratio}");
        }
        assert!(eff(Strategy::HoHe1, 4096) / eff(Strategy::HoHe1, 64) < 0.7);
    }

    #[test]
    fn bad_grids_and_speeds_are_errors() {
        assert!(check_grid(6, (2, 2)).is_err());
        assert!(check_grid(6, (3, 2)).is_ok());
        assert!(Processors::new(vec![1.0, 0.0]).is_err());
        assert!(summa_blocked_time(10.0, 4.0, 0.0, 1.0, net()).is_err());
    }
}
