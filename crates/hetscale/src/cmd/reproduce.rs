//! `hetscale reproduce`: the papers' experiments, calibrated on their base configuration and
//! checked on the others.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use hetscale_kernels::KernelRegistry;
use hetscale_papers::kalinov::KALINOV_KEEPS_SCALABILITY;
use hetscale_papers::kalinov::summa::{
    KALINOV_SUMMA, KalinovExperiment, KalinovReproduction, reproduce_kalinov,
};
use hetscale_papers::reproduce::{
    EXPERIMENTS, Experiment, Reproduction, STATEMENT_CHECKS, reproduce,
};
use hetscale_papers::tpds::slalom::{MasparGap, TPDS_SLALOM_MASPAR, maspar_gap};
use hetscale_papers::wp::collectives::{
    WP_COLLECTIVES, WpExperiment, WpReproduction, reproduce_wp,
};
use hetscale_report::Report;
use hetscale_report::views::reproduction::{
    draw_published, kalinov_sections, reproduction_lead, reproduction_section,
    unreproduced_section, wp_sections,
};
use hetscale_report::views::study::study_report;
use hetscale_study::calibrate::FreeParameter;
use hetscale_study::store::Store;

use crate::output::{errln, out, outln};

/// Arguments of `hetscale reproduce`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale reproduce
  hetscale reproduce --only jpdc-ge --out ge-reproduction --json")]
pub struct Args {
    #[arg(long, value_name = "ID", help = only_help())]
    pub only: Option<String>,
    /// Print one JSON array of values (one object per published value and approach).
    #[arg(long)]
    pub json: bool,
    /// The machine facts to start from (preset or platform file). Default: each experiment's
    /// own paper's machine (a command that runs programs here defaults to local; one that
    /// models a paper, to the paper's machine).
    #[arg(long)]
    pub platform: Option<String>,
    /// Directory for the calibrated platforms and the study database.
    #[arg(long, default_value = "hetscale-reproduce")]
    pub out: PathBuf,
    /// Parameters the base configuration fits instead of the experiment's own choice,
    /// comma-separated: rate_fraction, run_overhead_s, process_overhead_s, half_work,
    /// collective_scale (with --only; the others keep the platform's values); or `auto`: the
    /// choice with the smallest leave-one-out error over the base's runs.
    #[arg(long, value_delimiter = ',', requires = "only")]
    pub fit: Option<Vec<String>>,
    /// The kernel's achieved rate over the marked speed, as a machine fact set before the fit
    /// (e.g. JPDC section 4.5's t_c for GE); fitted only if --fit names rate_fraction or auto
    /// chooses it (with --only).
    #[arg(long, requires = "only", allow_negative_numbers = true)]
    pub rate_fraction: Option<f64>,
    /// Hold the paper's target E_s itself on the calibrated machine, instead of the machine's
    /// own E_s at the base configuration's published size (the contour through the base point)
    #[arg(long)]
    pub published_target: bool,
}

/// `--fit`'s parameters, if given.
fn free_parameters(args: &Args) -> anyhow::Result<Option<Vec<FreeParameter>>> {
    if args.fit.iter().flatten().any(|name| name.trim() == "auto") {
        anyhow::bail!("--fit auto chooses the parameters itself: give it alone");
    }
    args.fit
        .as_ref()
        .map(|names| names.iter().map(|n| FreeParameter::parse(n)).collect())
        .transpose()
        .map_err(Into::into)
}

/// Whether `--fit` is `auto` alone (beside names it is refused by [`free_parameters`]).
fn is_auto(fit: &Option<Vec<String>>) -> bool {
    fit.as_deref()
        .is_some_and(|names| names.len() == 1 && names[0].trim() == "auto")
}

/// The experiments that calibrate (all but the statement checks).
fn studies() -> Vec<&'static str> {
    EXPERIMENTS
        .into_iter()
        .filter(|id| !STATEMENT_CHECKS.contains(id))
        .collect()
}

/// `--only`'s help, listing the ids from [`EXPERIMENTS`] so that it cannot fall behind.
fn only_help() -> String {
    format!("Only this experiment ({})", EXPERIMENTS.join(", "))
}

/// Runs `hetscale reproduce`.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    hetscale_study::runner::interrupt::catch().context("cannot catch SIGINT and SIGTERM")?;
    let ids: Vec<&str> = match &args.only {
        Some(id) => vec![id.as_str()],
        None => EXPERIMENTS.to_vec(),
    };
    let kalinov = ids.contains(&KALINOV_SUMMA).then(|| KalinovExperiment {
        platform: args.platform.clone().unwrap_or_else(|| "kalinov".into()),
        ..KalinovExperiment::default()
    });
    let wp = ids.contains(&WP_COLLECTIVES).then(|| WpExperiment {
        platform: args
            .platform
            .clone()
            .unwrap_or_else(|| "ucf-cluster".into()),
        ..WpExperiment::default()
    });
    let maspar = ids
        .contains(&TPDS_SLALOM_MASPAR)
        .then(|| maspar_gap(registry))
        .transpose()?;
    let experiments = ids
        .iter()
        .filter(|id| !STATEMENT_CHECKS.contains(id))
        .map(|id| {
            let mut experiment = Experiment::named(id)?;
            if let Some(platform) = &args.platform {
                experiment.platform = platform.clone();
            }
            let experiment = if is_auto(&args.fit) {
                experiment
                    .calibrated_with(None, args.rate_fraction)?
                    .choosing_free()
            } else {
                experiment.calibrated_with(free_parameters(args)?, args.rate_fraction)?
            };
            Ok(if args.published_target {
                experiment.holding_published_target()
            } else {
                experiment
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if experiments.is_empty()
        && (args.fit.is_some() || args.rate_fraction.is_some() || args.published_target)
    {
        anyhow::bail!(
            "--fit, --rate-fraction and --published-target calibrate a study experiment, and {} \
             calibrates nothing: use them with --only {}",
            ids.join(", "),
            studies().join(" | ")
        );
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create --out {}", args.out.display()))?;
    let db = args.out.join("reproduce.db");
    hbsp::file::check_not_link(&db).with_context(|| format!("cannot use {}", db.display()))?;
    let store = Store::open(&db)?;
    let mut done = Vec::new();
    for experiment in &experiments {
        let progress = super::study::Progress::new(&experiment.id, false);
        let result = reproduce(experiment, registry, &store, &progress, &args.out);
        progress.finish();
        done.push(result?);
    }
    let kalinov = kalinov
        .map(|experiment| reproduce_kalinov(&experiment, registry))
        .transpose()?;
    let wp = wp.map(|experiment| reproduce_wp(&experiment)).transpose()?;
    let index = write_report(
        &done,
        kalinov.as_ref(),
        wp.as_ref(),
        maspar.as_ref(),
        &args.out,
    )?;
    if args.json {
        let values: Vec<_> = done
            .iter()
            .flat_map(|r| r.values.iter().cloned())
            .chain(kalinov.iter().flat_map(|k| k.values()))
            .chain(wp.iter().flat_map(|w| w.values()))
            .collect();
        let json =
            hetscale_study::json::document("reproduce", "values", serde_json::to_value(&values)?);
        outln!("{}", serde_json::to_string_pretty(&json)?);
        maspar
            .iter()
            .for_each(|m| errln!("{}: {}", m.id, m.explanation()));
        errln!("Report: {}", index.display());
    } else {
        done.iter().for_each(|r| out!("{}", render_text(r)));
        kalinov.iter().for_each(|k| out!("{}", render_kalinov(k)));
        wp.iter().for_each(|w| out!("{}", render_wp(w)));
        maspar.iter().for_each(|m| out!("{}", render_maspar(m)));
        if !done.is_empty() {
            outln!("Calibrated platforms and runs in {}", args.out.display());
        }
        outln!("Report: {}", index.display());
        let studies: Vec<_> = done.iter().map(|r| r.study.clone()).collect();
        super::study::print_summaries(&studies);
    }
    Ok(())
}

/// Each of Williams & Parsons' observations, its verdict and the number behind it.
pub(crate) fn render_wp(w: &WpReproduction) -> String {
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
pub(crate) fn render_maspar(m: &MasparGap) -> String {
    format!(
        "== {}: SLALOM on the MasPar MP-1 (Tables X-XI)\n   {}\n",
        m.id,
        m.explanation()
    )
}

/// His statement and hetscale's `E_he` series, per strategy.
pub(crate) fn render_kalinov(k: &KalinovReproduction) -> String {
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

/// The studies' report with the published values beside, then Kalinov's and Williams &
/// Parsons' statements checked, written into `dir`.
pub(crate) fn write_report(
    done: &[Reproduction],
    kalinov: Option<&KalinovReproduction>,
    wp: Option<&WpReproduction>,
    maspar: Option<&MasparGap>,
    dir: &Path,
) -> anyhow::Result<PathBuf> {
    let mut report = if done.is_empty() {
        Report::new("hetscale reproduce").intro(
            "The papers' statements checked on hetscale's simulated machines (no study: \
             nothing is calibrated on the values checked).",
        )
    } else {
        let results: Vec<_> = done.iter().map(|r| r.study.clone()).collect();
        let mut report = study_report(&results)?;
        // The summary the page opens with has the papers' sizes beside hetscale's.
        report.lead = Some(reproduction_lead(done)?);
        draw_published(&mut report, done)?;
        report.push(reproduction_section(done)?);
        report
    };
    let statements = kalinov
        .map(kalinov_sections)
        .into_iter()
        .chain(wp.map(wp_sections))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(m) = maspar {
        report.push(unreproduced_section(&m.id, &m.explanation()));
    }
    statements
        .into_iter()
        .flatten()
        .for_each(|section| report.push(section));
    Ok(report
        .write(dir)
        .with_context(|| format!("cannot write the report into {}", dir.display()))?
        .index)
}

pub(crate) fn render_text(r: &Reproduction) -> String {
    let mut s = String::new();
    // The one target of the block is the held one the numbers use (the `held` line, or the
    // study's); the paper's is named here, once.
    let _ = writeln!(
        s,
        "== {}: the paper's values (published at E_s = {}) beside hetscale's",
        r.id,
        hetscale_model::numbers::significant(r.target, 4)
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
