//! `hetscale plan`: the next runs a study that plans its own runs would make, from a study's
//! stored runs, each with its expected gain and cost, without running anything.
//!
//! Here only the options and their wiring: `hetscale_study::plan::ahead` plans,
//! `hetscale_report::text::plan` shows the plan, its JSON is the plan's serde form.

use crate::output::{out, outln};
use hetscale_kernels::KernelRegistry;
use hetscale_study::plan::{PlanRequest, plan_from_study};

/// Arguments of `hetscale plan`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale plan --from hetscale-out/study.db --nodes 'fast:4,middle:4,slow:8' --precision 0.1
  hetscale plan --from runs.db --study ge --nodes 64 --replicate 8 --precision 0.2 --next 10 --json

Each run is chosen as if the runs before it measured what the fitted model predicts; the
study itself (hetscale study SPEC --predict-nodes SET --precision R) replans after every run.")]
pub struct Args {
    /// The study database whose runs the plan starts from.
    #[arg(long, value_name = "DB")]
    pub from: String,
    /// The study in it (default: the database's only study).
    #[arg(long, value_name = "NAME")]
    pub study: Option<String>,
    /// A node set whose N is to be pinned; repeat for several.
    #[arg(long, value_name = "SET", required = true)]
    pub nodes: Vec<String>,
    /// The half-width asked of each N's 95% interval, relative to N (0.1: ±10%).
    #[arg(long, value_name = "R")]
    pub precision: f64,
    /// How many runs to plan, 1 to 100.
    #[arg(long, value_name = "K", default_value_t = 5)]
    pub next: usize,
    /// Copies of every node of the study's platform the node sets are resolved on.
    #[arg(long, default_value_t = 1)]
    pub replicate: usize,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `hetscale plan`.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    hetscale_out::protect_input("the study database", &args.from);
    let request = PlanRequest {
        db: args.from.clone(),
        study: args.study.clone(),
        nodes: args.nodes.clone(),
        replicate: args.replicate,
        precision: args.precision,
        next: args.next,
    };
    let plan = plan_from_study(&request, registry)?;
    if args.json {
        let value = serde_json::to_value(&plan)?;
        let value = hetscale_study::json::document("plan", "plan", value);
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        out!("{}", hetscale_report::text::plan::plan(&plan));
    }
    Ok(())
}
