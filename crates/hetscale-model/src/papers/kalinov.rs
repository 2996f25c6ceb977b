//! Kalinov, "Scalability analysis of matrix-matrix multiplication on heterogeneous clusters"
//! (seed 003_df03cd6dcfbdbd36.txt): efficiency of the four distribution strategies versus p.
//!
//! The paper states the strategies' cost models (section 4) but no numeric table, so the inputs
//! below are chosen, not published: a platform of alternating fast and slow processors with
//! heterogeneity `H`, a gigabit-class network, and a fixed `n^2 / p`.

use super::{PaperRow, PaperTable};
use crate::error::Result;
use crate::summa::{Processors, Strategy, SummaNetwork, strategy_efficiency};

const SOURCE: &str =
    "Kalinov, SUMMA on heterogeneous clusters, section 4 (seed 003_df03cd6dcfbdbd36.txt)";

/// Heterogeneity `H = r_max / r_min` of the modelled platform.
const HETEROGENEITY: f64 = 4.0;
/// Performance of the fast processors, element updates per second.
const R_FAST: f64 = 1e9;
/// Message startup, seconds.
const STARTUP_S: f64 = 50e-6;
/// Time per matrix element (8 bytes at 1 Gbit/s), seconds.
const PER_ELEMENT_S: f64 = 6.4e-8;
/// The fixed problem size per processor, `n^2 / p`.
const N2_PER_P: f64 = 1.0e6;
/// Processor counts evaluated.
const PROCESSORS: [usize; 6] = [4, 16, 64, 256, 1024, 4096];
/// A strategy whose efficiency at the largest p stays above this fraction of its value at the
/// smallest p is reported as keeping scalability over the range.
const KEEPS_SCALABILITY: f64 = 0.8;

fn platform(p: usize) -> Result<Processors> {
    Processors::new(
        (0..p)
            .map(|i| {
                if i % 2 == 0 {
                    R_FAST
                } else {
                    R_FAST / HETEROGENEITY
                }
            })
            .collect(),
    )
}

pub(super) fn strategies_table() -> Result<PaperTable> {
    let net = SummaNetwork::new(STARTUP_S, PER_ELEMENT_S)?;
    let mut rows = Vec::new();
    let mut notes = vec![format!(
        "Chosen inputs (the paper publishes none): p processors alternating r = {R_FAST:.0e} and r / H with H = {HETEROGENEITY}, a = {STARTUP_S:.0e} s, b = {PER_ELEMENT_S:.1e} s per element, n = sqrt({N2_PER_P:.0e} p). Values are E_he = n^3 / (p r_aver T)."
    )];
    for strategy in Strategy::ALL {
        let effs: Vec<f64> = PROCESSORS
            .iter()
            .map(|&p| {
                strategy_efficiency(strategy, (N2_PER_P * p as f64).sqrt(), &platform(p)?, net)
            })
            .collect::<Result<_>>()?;
        for (p, e) in PROCESSORS.iter().zip(&effs) {
            rows.push(PaperRow::computed_only(
                format!("{} p={p}", strategy.name()),
                *e,
            ));
        }
        let ratio = effs[effs.len() - 1] / effs[0];
        let verdict = if ratio >= KEEPS_SCALABILITY {
            "keeps scalability"
        } else {
            "loses scalability"
        };
        notes.push(format!(
            "{}: E_he(p={}) / E_he(p={}) = {ratio:.3}: {verdict}.",
            strategy.name(),
            PROCESSORS[PROCESSORS.len() - 1],
            PROCESSORS[0]
        ));
    }
    Ok(PaperTable {
        id: "kalinov-strategies",
        title: format!(
            "SUMMA heterogeneous concurrent efficiency versus p at fixed n^2/p, H = {HETEROGENEITY} (eqs. 7, 9, 10, 11)"
        ),
        source: SOURCE,
        rows,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hohe1_loses_scalability() {
        let t = strategies_table().unwrap();
        let losers: Vec<&String> = t.notes.iter().filter(|n| n.contains("loses")).collect();
        assert_eq!(losers.len(), 1);
        assert!(losers[0].starts_with("hohe1"));
    }
}
