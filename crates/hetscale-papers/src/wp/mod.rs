//! Williams & Parsons, "Practical experience using a computational model for the design of
//! heterogeneous distributed software" (2001, seed 001_79fec892f14a3f95.txt): balanced shares
//! and the HBSP^1 model's predicted improvement factors.

use crate::published::Published as P;
use crate::tables::{PaperRow, PaperTable};
use hetscale_model::Result;
use hetscale_model::hbsp::{HbspMachine, balanced_shares, scatter_cost, two_phase_broadcast_cost};
use hetscale_model::metrics;

pub use hetscale_machine::paper_machines::{
    UCF_BARRIER_US, UCF_ETHERNET_BYTES_PER_S, UCF_G_US_PER_BYTE, UCF_NODES, UcfNode,
    ucf_message_start_up_s,
};

pub mod collectives;
pub mod experiments;

const SOURCE: &str = "T. L. Williams and R. J. Parsons, \"Practical experience using a computational model for the design of heterogeneous distributed software\", 2001, Tables 3-5";

/// Section 5.1, Figure 3 (a): "The best improvement occurs when p = 6 and n = 500KB", as
/// `(p, n in KB)`.
pub const WP_SCATTER_ROOT_BEST: (usize, usize) = (6, 500);

/// Section 5.1, Figure 3 (b): "p = 2 had the best performance with a maximum improvement of
/// 3.62" (`T_u / T_b` of the scatter), as `(p, factor)`.
pub const WP_SCATTER_BALANCED_BEST: (usize, f64) = (2, 3.62);

/// Table 4's cluster speeds (sum of Integer indices) for p = 2..10.
const TABLE4_SPEED: [P; 5] = [
    P::new("5.64"),
    P::new("12.89"),
    P::new("17.48"),
    P::new("22.10"),
    P::new("28.00"),
];

/// Shares quoted in section 4.4: (p, node, c_j).
const SECTION44_SHARES: [(usize, usize, P); 6] = [
    (2, 0, P::new("0.867")),
    (2, 1, P::new("0.133")),
    (4, 0, P::new("0.379")),
    (4, 1, P::new("0.058")),
    (4, 2, P::new("0.345")),
    (4, 3, P::new("0.217")),
];

/// Bytes per integer in the experiments.
const INT_BYTES: f64 = 4.0;
/// One KByte of input, in bytes.
const KBYTE: f64 = 1024.0;

fn speeds(p: usize) -> Vec<f64> {
    UCF_NODES[..p].iter().map(|n| n.integer_index).collect()
}

fn machine(p: usize, l_us: f64) -> Result<HbspMachine> {
    HbspMachine::new(
        UCF_G_US_PER_BYTE * 1e-6,
        UCF_NODES[..p].iter().map(|n| n.r).collect(),
        l_us * 1e-6,
    )
}

pub(crate) fn tables() -> Result<Vec<PaperTable>> {
    Ok(vec![shares_table()?, improvement_table()?])
}

fn shares_table() -> Result<PaperTable> {
    let mut rows = Vec::new();
    for (&(p, _), speed) in UCF_BARRIER_US.iter().zip(TABLE4_SPEED) {
        rows.push(PaperRow::compared(
            format!("cluster speed, p={p}"),
            speed,
            metrics::system_marked_speed(&speeds(p))?,
        ));
    }
    for (p, j, published) in SECTION44_SHARES {
        let c = balanced_shares(&speeds(p))?;
        rows.push(PaperRow::compared(
            format!("c_j of {}, p={p}", UCF_NODES[j].name),
            published,
            c[j],
        ));
    }
    for &(p, _) in &UCF_BARRIER_US[2..] {
        for (node, c) in UCF_NODES.iter().zip(balanced_shares(&speeds(p))?) {
            rows.push(PaperRow::computed_only(
                format!("c_j of {}, p={p}", node.name),
                c,
            ));
        }
    }
    Ok(PaperTable {
        id: "hbsp-shares",
        title: "Cluster speeds (Table 4) and balanced shares c_j = C_j / C from the Integer index (Table 3, section 4.4)".into(),
        source: SOURCE,
        rows,
        notes: vec!["Nodes join in Table 4's order: gromit, chromus, aditi, dcn_sgi1, dcn_sgi3, gradsun1, gradsun3, sgi1, sgi3, sgi7.".into()],
    })
}

/// A collective's exact HBSP^1 cost given the machine, the root and the per-node bytes.
type CollectiveCost = fn(&HbspMachine, usize, &[f64]) -> Result<f64>;

/// Predicted times (s) of (fastest root, slowest root, balanced) for one collective.
fn predicted(
    m: &HbspMachine,
    n_bytes: f64,
    c: &[f64],
    cost: CollectiveCost,
) -> Result<(f64, f64, f64)> {
    let p = m.p();
    let even = vec![n_bytes / p as f64; p];
    let balanced: Vec<f64> = c.iter().map(|c| c * n_bytes).collect();
    Ok((
        cost(m, m.fastest(), &even)?,
        cost(m, m.slowest(), &even)?,
        cost(m, m.fastest(), &balanced)?,
    ))
}

fn improvement_table() -> Result<PaperTable> {
    let mut rows = Vec::new();
    let collectives: [(&str, CollectiveCost); 2] = [
        ("scatter", scatter_cost),
        ("broadcast", two_phase_broadcast_cost),
    ];
    for (name, cost) in collectives {
        for &(p, l_us) in &UCF_BARRIER_US {
            let m = machine(p, l_us)?;
            let c = balanced_shares(&speeds(p))?;
            for kb in (100..=1000).step_by(100) {
                let n_bytes = kb as f64 * KBYTE;
                let (t_f, t_s, t_b) = predicted(&m, n_bytes, &c, cost)?;
                rows.push(PaperRow::computed_only(
                    format!("{name} T_s/T_f p={p} n={kb}KB"),
                    t_s / t_f,
                ));
                rows.push(PaperRow::computed_only(
                    format!("{name} T_u/T_b p={p} n={kb}KB"),
                    t_f / t_b,
                ));
            }
        }
    }
    Ok(PaperTable {
        id: "hbsp-improvement",
        title: "HBSP^1 predicted improvement factors T_s/T_f (fastest vs slowest root) and T_u/T_b (balanced vs even shares), Figures 4 and 6".into(),
        source: SOURCE,
        rows,
        notes: vec![
            format!("g = {UCF_G_US_PER_BYTE} us/byte, r_j from Table 5, L(p) from Table 4; n KB of {INT_BYTES}-byte integers (1 KB = {KBYTE} bytes); cost g max_j r_j h_j + L per superstep, w = 0 (section 5)."),
            "Scatter: one superstep, the root keeps its own share. Broadcast: two-phase (pieces n/p, or c_j n when balanced, then all-to-all of the pieces). T_u = T_f: even shares from the fastest root.".into(),
            "The paper publishes these as figures only (Figures 4 and 6), so there are no printed values to compare.".into(),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_speeds_reproduce() {
        let t = shares_table().unwrap();
        assert_eq!(
            t.mismatches().count(),
            0,
            "{:?}",
            t.mismatches().collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_pvm_message_costs_table_4_s_slope() {
        // (37000 - 9000) / 8 = 3500 us between the ends; the fit through all five is 3550 us.
        assert!(
            (ucf_message_start_up_s() - 3.55e-3).abs() < 1e-9,
            "{}",
            ucf_message_start_up_s()
        );
    }

    #[test]
    fn scatter_at_p2_gains_nothing_from_a_fast_root() {
        // With two nodes the single transfer is paced by chromus either way (section 5.1).
        let m = machine(2, 9000.0).unwrap();
        let (t_f, t_s, _) =
            predicted(&m, 1e5, &balanced_shares(&speeds(2)).unwrap(), scatter_cost).unwrap();
        assert!((t_s / t_f - 1.0).abs() < 1e-12);
    }
}
