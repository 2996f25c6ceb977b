//! # hetscale-papers
//!
//! Everything about the five papers hetscale implements, one module per paper: their published
//! inputs and the tables those inputs determine (`hetscale paper`), their published
//! measurements as data (`papers/*.csv`), and their experiments reproduced on the simulated
//! machines (`hetscale reproduce`).
//!
//! | module | paper |
//! |---|---|
//! | [`jpdc`] | Chen, Sun & Wu, "Algorithm-system scalability of heterogeneous computing", JPDC 2008 (and its ICPP 2005 version): GE, MM and 2-D convolution on Sunwulf |
//! | [`tpds`] | Sun & Rover, "Scalability of Parallel Algorithm-Machine Combinations", IEEE TPDS 1994: Burg and SLALOM on the nCUBE 2 and the MasPar MP-1 ([`tpds::slalom`]) |
//! | [`wp`] | Williams & Parsons 2001: HBSP^1 shares and collectives on the UCF cluster ([`wp::collectives`]) |
//! | [`kalinov`] | Kalinov: SUMMA's four distribution strategies ([`kalinov::summa`]) |
//!
//! [`tables`] recomputes every paper's tables ([`all_tables`]), [`measurements`] holds the
//! published values, and [`reproduce`] runs the experiments that are studies (calibrated on the
//! base configuration's published rows only) and sets every published value beside hetscale's;
//! [`plan`] is which experiments `hetscale reproduce` runs, calibrated as its options ask.
//!
//! ```
//! use hetscale_papers::{all_tables, measurements::published};
//!
//! let tables = all_tables()?;
//! assert_eq!(tables[0].id, "jpdc-table3");
//! assert!(published("jpdc").map_err(|e| e.to_string()).unwrap().len() > 12);
//! # Ok::<(), hetscale_model::ModelError>(())
//! ```
//!
//! The crate stands on `hetscale-study` (studies, calibration, the store) and below
//! `hetscale-report` (which draws reproductions) and the command line.

pub mod experiment;
pub mod jpdc;
pub mod kalinov;
pub mod measurements;
pub mod plan;
pub mod published;
pub mod reproduce;
pub mod tables;
pub mod tpds;
pub mod wp;

pub use published::Published;
pub use tables::{PaperRow, PaperTable};

use hetscale_model::Result;

/// Every table of every paper, in the order `hetscale paper` prints them.
pub fn all_tables() -> Result<Vec<PaperTable>> {
    let mut tables = jpdc::tables()?;
    tables.extend(tpds::tables()?);
    tables.push(kalinov::strategies_table()?);
    tables.extend(wp::tables()?);
    for table in &mut tables {
        let found: Vec<String> = table.mismatches().map(PaperRow::mismatch_note).collect();
        table.notes.splice(0..0, found);
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_the_documented_ones() {
        let ids: Vec<&str> = all_tables().unwrap().iter().map(|t| t.id).collect();
        assert_eq!(
            ids,
            [
                "jpdc-table3",
                "jpdc-table6",
                "jpdc-table9",
                "jpdc-table11",
                "jpdc-table12",
                "jpdc-table13",
                "tpds-table1",
                "tpds-table3",
                "tpds-table8",
                "tpds-table10",
                "kalinov-strategies",
                "hbsp-shares",
                "hbsp-improvement"
            ]
        );
    }

    #[test]
    fn every_computed_value_is_finite() {
        for t in all_tables().unwrap() {
            assert!(!t.rows.is_empty(), "{}", t.id);
            for r in &t.rows {
                assert!(r.computed.is_finite(), "{} {}", t.id, r.label);
            }
        }
    }
}
