//! `hetscale collectives`: Williams & Parsons' improvement factors, actual beside predicted.

use std::fmt::Write as _;

use hbsp::Backend;
use hetscale_papers::wp::experiments::Improvement;

/// Each collective's improvement factor, actual over predicted, per input size and node count.
pub fn factors(factors: &[Improvement], backend: &Backend, platform: &str) -> String {
    let mut out = format!(
        "Williams & Parsons collective experiments on {platform}, backend {backend} ({} time)\n\
         improvement factor: actual / predicted by HBSP^1 (g max r_j h_j + L per superstep)\n",
        if backend.is_virtual() {
            "virtual"
        } else {
            "measured"
        }
    );
    let mut keys: Vec<(String, &str)> = Vec::new();
    for f in factors {
        let key = (format!("{:?}", f.collective).to_lowercase(), f.factor);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    for (collective, factor) in keys {
        let _ = writeln!(out, "\n{collective} {factor}");
        let ps: Vec<usize> = dedup(factors.iter().map(|f| f.p));
        let _ = writeln!(
            out,
            "{:>8}{}",
            "n (KB)",
            ps.iter()
                .map(|p| format!("{:>16}", format!("p={p}")))
                .collect::<String>()
        );
        for kb in dedup(factors.iter().map(|f| f.n_kb)) {
            let cells: String = ps
                .iter()
                .map(|&p| {
                    factors
                        .iter()
                        .find(|f| {
                            format!("{:?}", f.collective).to_lowercase() == collective
                                && f.factor == factor
                                && f.p == p
                                && f.n_kb == kb
                        })
                        .map_or(format!("{:>16}", "-"), |f| {
                            format!("{:>16}", format!("{:.3}/{:.3}", f.actual, f.predicted))
                        })
                })
                .collect();
            let _ = writeln!(out, "{kb:>8}{cells}");
        }
    }
    out
}

fn dedup(values: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut v: Vec<usize> = values.collect();
    v.sort_unstable();
    v.dedup();
    v
}
