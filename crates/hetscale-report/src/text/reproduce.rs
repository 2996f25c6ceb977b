//! `hetscale reproduce` (and the default study): the papers' values beside hetscale's, and
//! the statements checked.

use std::fmt::Write as _;

use hetscale_model::numbers::significant;
use hetscale_papers::kalinov::KALINOV_KEEPS_SCALABILITY;
use hetscale_papers::kalinov::summa::KalinovReproduction;
use hetscale_papers::reproduce::Reproduction;
use hetscale_papers::tpds::slalom::MasparGap;
use hetscale_papers::wp::collectives::WpReproduction;

/// An experiment's calibration, the value it holds, and every published value beside
/// hetscale's with its role and error, then the median errors of the validation rows.
pub fn reproduction(r: &Reproduction) -> String {
    let mut s = String::new();
    // The one target of the block is the held one the numbers use (the `held` line, or the
    // study's); the paper's is named here, once.
    let _ = writeln!(
        s,
        "== {}: the paper's values (published at E_s = {}) beside hetscale's",
        r.id,
        significant(r.target, 4)
    );
    if let Some(why) = &r.assumption {
        let _ = writeln!(s, "   assumed: {why}");
    }
    for k in &r.calibration.kernels {
        let _ = writeln!(
            s,
            "   calibrated on the base configuration ({}): {}",
            k.runs_label(),
            k.parameters_line()
        );
        if let Some(cv) = &k.cross_validation {
            let _ = writeln!(s, "   {}", cv.describe());
        }
    }
    if let Some(held) = &r.held {
        let _ = writeln!(s, "   {}", held.describe());
    }
    let _ = writeln!(
        s,
        "   {:<6} {:<18} {:<10} {:<12} {:>12} {:>12} {:>8}",
        "table", "item", "approach", "role", "published", "hetscale", "error"
    );
    for v in &r.values {
        let tool = v.tool.map_or("-".to_string(), |t| format!("{t:.4}"));
        let err = v
            .rel_err
            .map_or("-".to_string(), |e| format!("{:+.1}%", 100.0 * e));
        let _ = writeln!(
            s,
            "   {:<6} {:<18} {:<10} {:<12} {:>12.4} {:>12} {:>8}",
            v.table, v.item, v.approach, v.role, v.published, tool, err
        );
    }
    for (quantity, approach) in [
        ("N", "measured"),
        ("N", "computed"),
        ("N", "predicted"),
        ("psi", "measured"),
        ("psi", "computed"),
        ("psi", "predicted"),
        ("T", "measured"),
        ("E_s", "measured"),
    ] {
        if let Some(m) = r.median_error(quantity, approach) {
            let _ = writeln!(
                s,
                "   median |error| of {quantity} ({approach}, validation rows): {:.1}%",
                100.0 * m
            );
        }
    }
    s
}

/// His statement and hetscale's `E_he` series, per strategy.
pub fn kalinov(k: &KalinovReproduction) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "== {}: SUMMA's strategies at n^2/p = {:.0} (E_he of the multiply phase; \"eq.\" is his equation on the same inputs)",
        k.id, k.n2_per_p
    );
    let _ = writeln!(s, "   platform: {}", k.platform);
    for series in &k.strategies {
        let st = &series.statement;
        let says = |scalable: bool| if scalable { "scalable" } else { "not scalable" };
        let _ = writeln!(
            s,
            "   {:<6} Kalinov ({} section {}): {:<13} hetscale: {:<13} (E_he keeps {:.0}% from p = {} to {}) {}",
            st.strategy.name(),
            st.equation,
            st.section,
            says(st.scalable),
            says(series.scalable),
            100.0 * series.retained,
            series.points[0].p,
            series.points[series.points.len() - 1].p,
            if series.agrees() {
                "agrees"
            } else {
                "DISAGREES"
            },
        );
        for point in &series.points {
            let _ = writeln!(
                s,
                "          p = {:<4} n = {:<6} grid {:<7} E_he {:.4}   eq. {:.4}",
                point.p, point.n, point.grid, point.e_he, point.equation_e_he
            );
        }
    }
    let agree = k.strategies.iter().filter(|s| s.agrees()).count();
    let _ = writeln!(
        s,
        "   {agree} of {} verdicts agree with Kalinov's (scalable: E_he keeps >= {:.0}% of its value)",
        k.strategies.len(),
        100.0 * KALINOV_KEEPS_SCALABILITY
    );
    s
}

/// Each of Williams & Parsons' observations, its verdict and the number behind it.
pub fn wp(w: &WpReproduction) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "== {}: Williams & Parsons' scatter and broadcast observations (simulated \"actual\" factors)",
        w.id
    );
    let _ = writeln!(s, "   platform: {}", w.platform);
    let _ = writeln!(s, "   machine: {}", w.machine);
    for o in &w.observations {
        let _ = writeln!(s, "   {}. ({}) \"{}\"", o.number, o.source, o.quote);
        let _ = writeln!(
            s,
            "      {}: {}",
            if o.holds { "holds" } else { "DOES NOT HOLD" },
            o.evidence
        );
        let _ = writeln!(s, "      checked: {}", o.check);
        if let (false, Some(lacks)) = (o.holds, o.lacks) {
            let _ = writeln!(s, "      the machine model lacks: {lacks}");
        }
    }
    let _ = writeln!(
        s,
        "   {} of {} observations hold",
        w.holding(),
        w.observations.len()
    );
    s
}

/// Why SLALOM on the MasPar is not reproduced.
pub fn maspar(m: &MasparGap) -> String {
    format!(
        "== {}: SLALOM on the MasPar MP-1 (Tables X-XI)\n   {}\n",
        m.id,
        m.explanation()
    )
}
