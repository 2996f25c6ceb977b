//! Kalinov, "Scalability analysis of matrix-matrix multiplication on heterogeneous clusters"
//! (seed 003_df03cd6dcfbdbd36.txt): efficiency of the four distribution strategies versus p.
//!
//! The paper states the strategies' cost models (section 4) but no numeric table: it gives
//! only the platform's shape (up to 256 processors of different performance, heterogeneity
//! `H = r_max / r_min`, homogeneous communication equipment with parallel point-to-point
//! transfers, section 1 and 4.1). The numbers below are chosen, not published, and the `kalinov`
//! platform preset uses the same ones: speeds cycling `r_max, r_max / H, r_max / 2`, a
//! gigabit-class network, and a fixed `n^2 / p`.

use crate::tables::{PaperRow, PaperTable};
use hetscale_model::Result;
use hetscale_model::summa::{Processors, Strategy, SummaNetwork, strategy_efficiency};

pub use hetscale_machine::paper_machines::{
    KALINOV_HETEROGENEITY, KALINOV_NODES, KALINOV_PER_ELEMENT_S, KALINOV_R_MAX,
    KALINOV_SPEED_CYCLE, KALINOV_STARTUP_S, kalinov_speeds,
};

pub mod summa;

const SOURCE: &str = "A. Kalinov, \"Scalability analysis of matrix-matrix multiplication on heterogeneous clusters\", ISPDC/HeteroPar 2004, section 4";

/// The fixed problem size per processor, `n^2 / p`, along which scalability is judged
/// (section 2: scalable when `E_he` depends on `n^2` and `p` only through their ratio).
pub const KALINOV_N2_PER_P: f64 = 1.0e6;

/// Processor counts evaluated.
const PROCESSORS: [usize; 6] = [4, 16, 64, 256, 1024, 4096];
/// A strategy whose efficiency at the largest p stays above this fraction of its value at the
/// smallest p is reported as keeping scalability over the range.
pub const KALINOV_KEEPS_SCALABILITY: f64 = 0.8;

pub(crate) fn strategies_table() -> Result<PaperTable> {
    let net = SummaNetwork::new(KALINOV_STARTUP_S, KALINOV_PER_ELEMENT_S)?;
    let mut rows = Vec::new();
    let mut notes = vec![format!(
        "Chosen inputs (the paper publishes none): p processors cycling r = {KALINOV_R_MAX:.0e} x {KALINOV_SPEED_CYCLE:?} (H = {KALINOV_HETEROGENEITY}), a = {KALINOV_STARTUP_S:.0e} s, b = {KALINOV_PER_ELEMENT_S:.1e} s per element, n = sqrt({KALINOV_N2_PER_P:.0e} p). Values are E_he = n^3 / (p r_aver T)."
    )];
    for strategy in Strategy::ALL {
        let effs: Vec<f64> = PROCESSORS
            .iter()
            .map(|&p| {
                strategy_efficiency(
                    strategy,
                    (KALINOV_N2_PER_P * p as f64).sqrt(),
                    &Processors::new(kalinov_speeds(p))?,
                    net,
                )
            })
            .collect::<Result<_>>()?;
        for (p, e) in PROCESSORS.iter().zip(&effs) {
            rows.push(PaperRow::computed_only(
                format!("{} p={p}", strategy.name()),
                *e,
            ));
        }
        let ratio = effs[effs.len() - 1] / effs[0];
        let verdict = if ratio >= KALINOV_KEEPS_SCALABILITY {
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
            "SUMMA heterogeneous concurrent efficiency versus p at fixed n^2/p, H = {KALINOV_HETEROGENEITY} (eqs. 7, 9, 10, 11)"
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
