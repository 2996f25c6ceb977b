//! `hetscale study ... --predict-nodes SET --precision R [--budget-s S]`: the study planning
//! its own runs (`hetscale_study::plan::adaptive`), its steps on standard error as they end,
//! its answer on standard output, its JSON, text and report page under `--out`.

use std::cell::Cell;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Context;
use hetscale_kernels::KernelRegistry;
use hetscale_out::write_atomically;
use hetscale_study::plan::{AdaptiveOptions, AdaptiveStudy, run_adaptive};
use hetscale_study::runner::{Measurement, Observer};
use hetscale_study::spec::StudySpec;
use hetscale_study::store::{PlanStepRecord, Store};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::output::{errln, out, outln};
use hetscale_report::text;

/// The options of a study that plans its own runs.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// Plan the study's runs to pin N on this node set (repeat for several), as the scaling
    /// model fitted to its runs predicts it, instead of running the spec's fixed design.
    #[arg(long, value_name = "SET", requires = "precision")]
    pub predict_nodes: Vec<String>,
    /// With --predict-nodes: the half-width asked of each N's 95% interval, relative to N
    /// (0.1: ±10%); the study stops when every one is within it.
    #[arg(long, value_name = "R", requires = "predict_nodes")]
    pub precision: Option<f64>,
    /// With --predict-nodes: the machine time the study may spend, s (the sum of its runs'
    /// times); it stops before a run that would exceed it.
    #[arg(long, value_name = "S", requires = "predict_nodes")]
    pub budget_s: Option<f64>,
    /// With --predict-nodes: copies of every node of the platform the node sets are resolved
    /// on (to ask beyond the real machine).
    #[arg(long, default_value_t = 1, requires = "predict_nodes")]
    pub replicate: usize,
}

impl PlanArgs {
    /// The planned study's options, if `--predict-nodes` asks for one.
    pub(super) fn options(&self) -> Option<AdaptiveOptions> {
        (!self.predict_nodes.is_empty()).then(|| AdaptiveOptions {
            nodes: self.predict_nodes.clone(),
            replicate: self.replicate,
            // clap requires --precision with --predict-nodes.
            precision: self.precision.unwrap_or(f64::NAN),
            budget_s: self.budget_s,
        })
    }
}

/// Where and how a planned study's results are shown: `--out`, `--quiet`, `--json`.
pub(super) struct Shown<'a> {
    pub out: &'a Path,
    pub quiet: bool,
    pub json: bool,
}

/// Runs each of `specs` as a planned study into `store` (`replace` dropping a study stored
/// with another spec, if asked), writes its results and prints them.
pub(super) fn run(
    args: &Shown,
    registry: &KernelRegistry,
    specs: &[StudySpec],
    store: &Store,
    options: &AdaptiveOptions,
    replace: &dyn Fn(&StudySpec, &hbsp::Platform) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut studies = Vec::new();
    let mut pages = Vec::new();
    for spec in specs {
        let platform = hetscale_study::speed::local_speed::load_platform(&spec.platform)?;
        if let Some(note) = platform.note.filter(|_| !args.quiet) {
            errln!("note: {note}");
        }
        replace(spec, &platform.platform)?;
        let progress = StepProgress::new(&spec.name, args.quiet);
        let tell = |step: &PlanStepRecord| progress.step(step);
        let study = run_adaptive(spec, registry, store, &progress, options, &tell);
        progress.finish();
        let study = study?;
        if let Some(line) = progress.reused_line() {
            errln!("{line}");
        }
        pages.push(write(args.out, spec, &study)?);
        studies.push(study);
    }
    if args.json {
        let value = serde_json::to_value(&studies)?;
        let json = hetscale_study::json::document("study", "planned", value);
        outln!("{}", serde_json::to_string_pretty(&json)?);
        pages
            .iter()
            .for_each(|page| errln!("Report: {}", page.display()));
    } else {
        outln!("Results in {}", args.out.display());
        pages
            .iter()
            .for_each(|page| outln!("Report: {}", page.display()));
        // The answer, last: each study's steps, N and why it stopped.
        for study in &studies {
            out!("{}", text::plan::adaptive(study));
        }
    }
    Ok(())
}

/// Writes `study`'s JSON, text and report under `out`; returns the report's page.
fn write(out: &Path, spec: &StudySpec, study: &AdaptiveStudy) -> anyhow::Result<PathBuf> {
    let stem = spec.file_stem();
    let files = [
        (
            format!("{stem}-plan.json"),
            serde_json::to_string_pretty(study)?,
        ),
        (format!("{stem}-plan.txt"), text::plan::adaptive(study)),
    ];
    for (name, content) in files {
        let path = out.join(name);
        write_atomically(&path, content)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let dir = out.join(format!("{stem}-plan"));
    let written = hetscale_report::views::plan::report(study)?
        .write(&dir)
        .with_context(|| format!("cannot write the report into {}", dir.display()))?;
    Ok(written.index)
}

/// A planned study's progress on standard error: on a terminal a spinner with the last
/// step; elsewhere a line per step; nothing with `--quiet`.
struct StepProgress {
    bar: ProgressBar,
    name: String,
    log: bool,
    reused: Cell<usize>,
}

impl StepProgress {
    fn new(name: &str, quiet: bool) -> Self {
        let bar = ProgressBar::new_spinner();
        if quiet || !std::io::stderr().is_terminal() {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        } else {
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix} {wide_msg} [{elapsed}]")
                    .expect("a valid template"),
            );
            bar.set_prefix(format!("{name} planned"));
            bar.enable_steady_tick(std::time::Duration::from_millis(200));
        }
        Self {
            bar,
            name: name.to_owned(),
            log: !quiet && !std::io::stderr().is_terminal(),
            reused: Cell::new(0),
        }
    }

    fn step(&self, step: &PlanStepRecord) {
        let line = format!(
            "step {}: {} at N = {} ({} runs), {:.3} s; {:.3} s spent. {}",
            step.step,
            step.configuration,
            step.n,
            step.runs,
            step.cost_s,
            step.spent_s,
            step.reason
        );
        if self.log {
            errln!("{} planned {line}", self.name);
        }
        self.bar.set_message(line);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn reused_line(&self) -> Option<String> {
        let reused = self.reused.get();
        (reused > 0).then(|| {
            format!(
                "Resumed study \"{}\": reused {reused} stored run{}",
                self.name,
                if reused == 1 { "" } else { "s" }
            )
        })
    }
}

impl Observer for StepProgress {
    fn measured(&self, m: &Measurement) {
        self.bar.set_message(format!(
            "{} N = {}: E_s = {:.4}, T = {:.4} s",
            m.configuration, m.n, m.speed_efficiency, m.time.median
        ));
    }

    fn run_reused(&self) {
        self.reused.set(self.reused.get() + 1);
    }
}
