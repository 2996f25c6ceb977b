//! `hetscale study`: with no spec, the built-in default study.

use hetscale_study::default_study;
use hetscale_study::predicted::PredictedStudy;
use std::fmt::Write as _;

/// Arguments of `hetscale study`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Study spec (TOML). Study specs arrive with the study runner; today only the built-in
    /// default study runs.
    pub spec: Option<std::path::PathBuf>,
    /// Print results as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `hetscale study`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    if let Some(spec) = &args.spec {
        anyhow::bail!(
            "study specs are not supported yet ({}): run `hetscale study` with no spec for the built-in default study",
            spec.display()
        );
    }
    let study = default_study::ge_sunwulf_predicted()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&study)?);
    } else {
        print!("{}", render_text(&study));
    }
    Ok(())
}

fn render_text(study: &PredictedStudy) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Default study: GE on Sunwulf (JPDC Table 5 configurations), target E_s = {}\n\
         Approach 3 (predicted) with the measured communication model of JPDC section 4.5.\n\
         Approaches 1 (measured) and 2 (computed) need the sim backend and kernels, not built yet.\n",
        study.target
    );
    let _ = writeln!(
        out,
        "{:<6} {:>5} {:>12} {:>9} {:>12} {:>9} {:>6}",
        "config", "nodes", "C (Mflop/s)", "N", "W (flop)", "T (s)", "E_s"
    );
    for p in &study.points {
        let c = &p.configuration;
        let _ = writeln!(
            out,
            "{:<6} {:>5} {:>12.2} {:>9.1} {:>12.4e} {:>9.4} {:>6.3}",
            c.label,
            c.nodes,
            c.marked_speed / 1e6,
            p.n,
            p.work,
            p.time_s,
            p.speed_efficiency
        );
    }
    let labels = study.psi.labels();
    let _ = writeln!(out, "\npsi(C_i, C_j) = C_j W_i / (C_i W_j):");
    let _ = writeln!(
        out,
        "{:<6}{}",
        "",
        labels.iter().map(|l| format!("{l:>8}")).collect::<String>()
    );
    for (i, label) in labels.iter().enumerate() {
        let cells: String = (0..labels.len())
            .map(|j| {
                study
                    .psi
                    .get(i, j)
                    .map_or(format!("{:>8}", ""), |v| format!("{v:>8.3}"))
            })
            .collect();
        let _ = writeln!(out, "{label:<6}{cells}");
    }
    out
}
