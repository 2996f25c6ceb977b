//! `hetscale platform`: list, show and validate platforms.

use crate::output::{errln, out, outln};
use hbsp::{NodeSet, Platform};
use hetscale_kernels::KernelRegistry;
use hetscale_report::text;
use hetscale_study::json::document;
use hetscale_study::platform_view::{MachineView, PlatformSummary, platform_json};

/// List the built-in platforms, show one, or validate a platform file.
#[derive(Debug, clap::Args)]
#[command(
    about = "List the built-in platforms, show one, or validate a platform file",
    after_help = "\
Examples:
  hetscale platform list
  hetscale platform show sunwulf --nodes sunblade:4
  hetscale platform validate my-cluster.toml"
)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// List the presets.
    #[command(after_help = "Example:\n  hetscale platform list --json")]
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show a preset or platform file as TOML, or the machine a node-set selects from it.
    #[command(after_help = "\
Examples:
  hetscale platform show ucf-cluster
  hetscale platform show sunwulf --nodes sunblade:3,sunfire:1 --json")]
    Show {
        /// Preset name (`hetscale platform list` lists them) or path of a TOML file.
        name: String,
        /// Show only the machine these nodes make, e.g. 4, gromit,chromus or sunblade:3,server*2:1.
        #[arg(long)]
        nodes: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check a preset or platform file; prints a summary, or the first problem and exits non-zero.
    #[command(after_help = "Example:\n  hetscale platform validate ucf-cluster")]
    Validate {
        /// Preset name (`hetscale platform list` lists them) or path of a TOML file.
        name: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `hetscale platform`.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    match &args.action {
        Action::List { json } => list(*json),
        Action::Show { name, nodes, json } => show(name, nodes.as_deref(), *json),
        Action::Validate { name, json } => validate(name, registry, *json),
    }
}

/// `platform` at the marked speeds runs on it use (`local`'s cached one), with a note on
/// standard error saying where they came from.
fn as_runs_use(platform: Platform) -> anyhow::Result<Platform> {
    let loaded = hetscale_study::speed::local_speed::as_runs_use(platform)?;
    if let Some(note) = loaded.note {
        errln!("note: {note}");
    }
    Ok(loaded.platform)
}

fn list(json: bool) -> anyhow::Result<()> {
    let presets = hetscale_machine::presets::all()
        .into_iter()
        .map(as_runs_use)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let summaries: Vec<PlatformSummary> = presets.iter().map(PlatformSummary::of).collect();
    if json {
        let json = document("platform", "platforms", serde_json::to_value(&summaries)?);
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        summaries
            .iter()
            .for_each(|s| outln!("{}", text::platform::summary(s)));
    }
    Ok(())
}

fn show(name: &str, nodes: Option<&str>, json: bool) -> anyhow::Result<()> {
    let platform = as_runs_use(Platform::load(name)?)?;
    let Some(spec) = nodes else {
        if json {
            let json = document("platform", "platform", platform_json(&platform)?);
            outln!("{}", serde_json::to_string_pretty(&json)?);
        } else {
            out!("{}", platform.to_toml_string()?);
        }
        return Ok(());
    };
    let machine = platform.select(&spec.parse::<NodeSet>()?)?;
    let view = MachineView::of(&machine);
    if json {
        let json = document("platform", "machine", view.to_json(spec)?);
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        out!("{}", text::platform::machine(&view));
    }
    Ok(())
}

fn validate(name: &str, registry: &KernelRegistry, json: bool) -> anyhow::Result<()> {
    let platform = Platform::load(name)?;
    platform.check_kernels(&registry.names())?;
    let summary = PlatformSummary::of(&platform);
    if json {
        let json = document("platform", "platform", serde_json::to_value(&summary)?);
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        outln!("{name}: ok: {}", text::platform::summary(&summary));
    }
    Ok(())
}
