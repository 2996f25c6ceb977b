//! Sun & Rover, "Scalability of Parallel Algorithm-Machine Combinations", IEEE TPDS 1994
//! (seed 004_6da8699756e3a759.txt): Tables I-III and VIII-XI.

use crate::published::Published as P;
use crate::tables::{PaperRow, PaperTable};
use hetscale_model::Result;
use hetscale_model::scalability::ScalabilityMatrix;

pub use hetscale_machine::paper_machines::{
    MASPAR_BURG_R_INF_MFLOPS, NCUBE2_ALPHA_S, NCUBE2_BETA_S_PER_BYTE, NCUBE2_BURG_R_INF_MFLOPS,
};

pub mod burg;
pub mod slalom;

const SOURCE: &str = "X.-H. Sun and D. T. Rover, \"Scalability of Parallel Algorithm-Machine Combinations\", IEEE Transactions on Parallel and Distributed Systems, 1994";

/// SLALOM's asymptotic average unit speed on the nCUBE 2, Mflop/s (section IV-C: "1.5
/// MFLOPS, giving a reference speed of 0.75 MFLOPS").
pub const NCUBE2_SLALOM_R_INF_MFLOPS: f64 = 1.5;
/// SLALOM's asymptotic average unit speed on the MasPar MP-1, Mflop/s (section IV-D: "18
/// KFLOPS, giving a reference speed of 9 KFLOPS").
pub const MASPAR_SLALOM_R_INF_MFLOPS: f64 = 0.018;

/// Table II: Burg-nCUBE system sizes and the times (s) that keep the average unit speed.
const TABLE2: [(&str, f64); 8] = [
    ("1", 0.004029),
    ("2", 0.00913),
    ("4", 0.01362),
    ("8", 0.01774),
    ("16", 0.02144),
    ("32", 0.02561),
    ("64", 0.0296),
    ("128", 0.03338),
];

/// Table I: computed scalability of Burg-nCUBE (approach 2), row i from column i on.
const TABLE1: [&[P]; 8] = [
    &[
        P::new("1.00"),
        P::new("0.441"),
        P::new("0.296"),
        P::new("0.215"),
        P::new("0.188"),
        P::new("0.157"),
        P::new("0.136"),
        P::new("0.121"),
    ],
    &[
        P::new("1.00"),
        P::new("0.670"),
        P::new("0.488"),
        P::new("0.426"),
        P::new("0.357"),
        P::new("0.308"),
        P::new("0.274"),
    ],
    &[
        P::new("1.00"),
        P::new("0.728"),
        P::new("0.635"),
        P::new("0.532"),
        P::new("0.460"),
        P::new("0.408"),
    ],
    &[
        P::new("1.00"),
        P::new("0.827"),
        P::new("0.693"),
        P::new("0.599"),
        P::new("0.531"),
    ],
    &[
        P::new("1.00"),
        P::new("0.837"),
        P::new("0.724"),
        P::new("0.642"),
    ],
    &[P::new("1.00"), P::new("0.865"), P::new("0.767")],
    &[P::new("1.00"), P::new("0.887")],
    &[P::new("1.00")],
];

/// Table III: the super-diagonal of Table I.
const TABLE3: [P; 7] = [
    P::new("0.441"),
    P::new("0.670"),
    P::new("0.728"),
    P::new("0.827"),
    P::new("0.837"),
    P::new("0.865"),
    P::new("0.887"),
];

/// Table V: measured scalability of Burg-nCUBE (approach 1), for a chaining check.
const TABLE5: [&[f64]; 8] = [
    &[1.00, 0.451, 0.319, 0.240, 0.193, 0.161, 0.138, 0.121],
    &[1.00, 0.707, 0.533, 0.427, 0.357, 0.306, 0.269],
    &[1.00, 0.753, 0.604, 0.504, 0.433, 0.380],
    &[1.00, 0.802, 0.670, 0.575, 0.504],
    &[1.00, 0.835, 0.717, 0.629],
    &[1.00, 0.859, 0.753],
    &[1.00, 0.876],
    &[1.00],
];

/// Table IX: Burg-MasPar times (s).
const TABLE9: [(&str, f64); 4] = [
    ("1K", 0.0135),
    ("2K", 0.0145),
    ("4K", 0.0152),
    ("8K", 0.0162),
];
/// Table VIII: computed Burg-MasPar scalability.
const TABLE8: [&[P]; 4] = [
    &[
        P::new("1.00"),
        P::new("0.93"),
        P::new("0.89"),
        P::new("0.83"),
    ],
    &[P::new("1.00"), P::new("0.95"), P::new("0.90")],
    &[P::new("1.00"), P::new("0.94")],
    &[P::new("1.00")],
];
/// Table XI: SLALOM-MasPar times (s).
const TABLE11: [(&str, f64); 4] = [("1K", 8.42), ("2K", 11.37), ("4K", 11.20), ("8K", 24.60)];
/// Table X: computed SLALOM-MasPar scalability.
const TABLE10: [&[P]; 4] = [
    &[
        P::new("1.00"),
        P::new("0.74"),
        P::new("0.75"),
        P::new("0.34"),
    ],
    &[P::new("1.00"), P::new("1.02"), P::new("0.46")],
    &[P::new("1.00"), P::new("0.46")],
    &[P::new("1.00")],
];

pub(crate) fn tables() -> Result<Vec<PaperTable>> {
    let burg = from_times(&TABLE2)?;
    Ok(vec![
        matrix_table(
            "tpds-table1",
            "Burg-nCUBE computed scalability from Table II's times (Tables I and II)",
            &burg,
            &TABLE1,
            burg_notes(&burg)?,
        ),
        superdiagonal_table(&burg),
        matrix_table(
            "tpds-table8",
            "Burg-MasPar computed scalability from Table IX's times (Tables VIII and IX)",
            &from_times(&TABLE9)?,
            &TABLE8,
            vec![],
        ),
        matrix_table(
            "tpds-table10",
            "SLALOM-MasPar computed scalability from Table XI's times (Tables X and XI)",
            &from_times(&TABLE11)?,
            &TABLE10,
            vec![],
        ),
    ])
}

fn from_times(times: &[(&str, f64)]) -> Result<ScalabilityMatrix> {
    let labels = times.iter().map(|t| t.0.to_string()).collect();
    let t: Vec<f64> = times.iter().map(|t| t.1).collect();
    ScalabilityMatrix::from_times(labels, &t)
}

fn psi_label(m: &ScalabilityMatrix, i: usize, j: usize) -> String {
    format!("psi({}, {})", m.labels()[i], m.labels()[j])
}

fn matrix_table(
    id: &'static str,
    title: &str,
    m: &ScalabilityMatrix,
    published: &[&[P]],
    notes: Vec<String>,
) -> PaperTable {
    let mut rows = Vec::new();
    for (i, row) in published.iter().enumerate() {
        for (k, p) in row.iter().enumerate().skip(1) {
            let computed = m.get(i, i + k).unwrap_or(f64::NAN);
            rows.push(PaperRow::compared(psi_label(m, i, i + k), *p, computed));
        }
    }
    PaperTable {
        id,
        title: title.into(),
        source: SOURCE,
        rows,
        notes,
    }
}

fn superdiagonal_table(burg: &ScalabilityMatrix) -> PaperTable {
    let rows: Vec<PaperRow> = burg
        .superdiagonal()
        .into_iter()
        .zip(TABLE3)
        .enumerate()
        .map(|(i, (psi, p))| PaperRow::compared(psi_label(burg, i, i + 1), p, psi))
        .collect();
    PaperTable {
        id: "tpds-table3",
        title: "Burg-nCUBE scalability super-diagonal from Table II (Table III)".into(),
        source: SOURCE,
        rows,
        notes: vec![],
    }
}

/// Explains the Table I mismatch from the published numbers: which time the column implies, and
/// where the published matrices break the chaining law.
fn burg_notes(burg: &ScalabilityMatrix) -> Result<Vec<String>> {
    let i8 = 3;
    let implied: Vec<f64> = (0..i8)
        .map(|i| TABLE2[i].1 / TABLE1[i][i8 - i].value())
        .collect();
    let mean = implied.iter().sum::<f64>() / implied.len() as f64;
    let from_row = TABLE1[i8][1].value() * TABLE2[i8 + 1].1;
    let published_rows = |rows: &[&[P]]| {
        rows.iter()
            .map(|r| r.iter().map(|p| p.value()).collect())
            .collect()
    };
    let t1 = ScalabilityMatrix::from_rows(burg.labels().to_vec(), published_rows(&TABLE1))?;
    let t5 = ScalabilityMatrix::from_rows(
        burg.labels().to_vec(),
        TABLE5.iter().map(|r| r.to_vec()).collect(),
    )?;
    let count = |m: &ScalabilityMatrix| m.chaining_violations(0.01).len();
    Ok(vec![
        format!(
            "Table II gives T_8 = 0.01774 s. Column 8 of Table I implies T_8 = T_N / psi(N, 8) = {mean:.5} s (N = 1, 2, 4), while row 8 implies T_8 = psi(8, 16) T_16 = {from_row:.5} s: the published time reproduces row 8 but not column 8."
        ),
        format!(
            "Chaining psi(a,c) = psi(a,b) psi(b,c) checked to 0.01: {} triples of the published Table I violate it, {} of the published Table V (measured).",
            count(&t1),
            count(&t5)
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_column_8_of_table_1_fails() {
        let t = tables().unwrap();
        let bad: Vec<&str> = t[0].mismatches().map(|r| r.label.as_str()).collect();
        assert_eq!(bad, ["psi(1, 8)", "psi(2, 8)", "psi(4, 8)"]);
        let bad3: Vec<&str> = t[1].mismatches().map(|r| r.label.as_str()).collect();
        assert_eq!(bad3, ["psi(4, 8)"]);
        assert_eq!(t[2].mismatches().count(), 0);
        assert_eq!(t[3].mismatches().count(), 0);
    }
}
