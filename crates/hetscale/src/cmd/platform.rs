//! `hetscale platform`: list, show and validate platforms.

use crate::output::{out, outln};
use hbsp::{Machine, NodeSet, Platform};
use serde::Serialize;

/// List the built-in platforms, show one, or validate a platform file.
#[derive(Debug, clap::Args)]
#[command(about = "List the built-in platforms, show one, or validate a platform file")]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// List the presets.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show a preset or platform file as TOML, or the machine a node-set selects from it.
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
    Validate {
        /// Preset name (`hetscale platform list` lists them) or path of a TOML file.
        name: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Serialize)]
struct Summary<'a> {
    name: &'a str,
    nodes: usize,
    kinds: Vec<&'a str>,
    cluster_speed: f64,
    speed_unit: &'a str,
    description: &'a str,
}

impl<'a> Summary<'a> {
    fn of(platform: &'a Platform) -> Self {
        Self {
            name: &platform.name,
            nodes: platform.nodes.len(),
            kinds: platform.kinds(),
            cluster_speed: platform.nodes.iter().map(|n| n.marked_speed).sum(),
            speed_unit: &platform.speed_unit,
            description: &platform.description,
        }
    }

    fn line(&self) -> String {
        format!(
            "{:<12} {:>4} nodes  C = {:<9.2} {:<24} kinds: {}",
            self.name,
            self.nodes,
            self.cluster_speed,
            self.speed_unit,
            self.kinds.join(", ")
        )
    }
}

#[derive(Serialize)]
struct MachineView<'a> {
    #[serde(flatten)]
    machine: &'a Machine,
    p: usize,
    cluster_speed: f64,
    shares: Vec<f64>,
    #[serde(rename = "L_s")]
    l_s: f64,
}

/// Runs `hetscale platform`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    match &args.action {
        Action::List { json } => list(*json),
        Action::Show { name, nodes, json } => show(name, nodes.as_deref(), *json),
        Action::Validate { name, json } => validate(name, *json),
    }
}

fn list(json: bool) -> anyhow::Result<()> {
    let presets = hbsp::presets::all();
    let summaries: Vec<Summary> = presets.iter().map(Summary::of).collect();
    if json {
        outln!("{}", serde_json::to_string_pretty(&summaries)?);
    } else {
        summaries.iter().for_each(|s| outln!("{}", s.line()));
    }
    Ok(())
}

fn show(name: &str, nodes: Option<&str>, json: bool) -> anyhow::Result<()> {
    let platform = Platform::load(name)?;
    let Some(spec) = nodes else {
        if json {
            outln!("{}", serde_json::to_string_pretty(&platform)?);
        } else {
            out!("{}", platform.to_toml_string()?);
        }
        return Ok(());
    };
    let machine = platform.select(&spec.parse::<NodeSet>()?)?;
    let view = MachineView {
        machine: &machine,
        p: machine.p(),
        cluster_speed: machine.cluster_speed(),
        shares: machine.shares(),
        l_s: machine.l_s(),
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&view)?);
    } else {
        print_machine(&view);
    }
    Ok(())
}

fn print_machine(view: &MachineView<'_>) {
    let m = view.machine;
    outln!(
        "{} nodes of {}: C = {:.2} {}",
        view.p,
        m.platform(),
        view.cluster_speed,
        m.speed_unit()
    );
    outln!(
        "{:>4}  {:<12} {:>4} {:>12} {:>7} {:>6}",
        "pid",
        "node",
        "cpus",
        "marked_speed",
        "share",
        "r"
    );
    for (pid, (node, share)) in m.nodes().iter().zip(&view.shares).enumerate() {
        outln!(
            "{pid:>4}  {:<12} {:>4} {:>12.2} {:>6.1}% {:>6.2}",
            node.name,
            node.cpus_used,
            node.marked_speed,
            share * 100.0,
            node.r
        );
    }
    let net = m.network();
    outln!(
        "g = {:.4e} s/byte, L({}) = {:.4e} s, o = {:.4e} s",
        net.g_s_per_byte,
        view.p,
        view.l_s,
        net.o_s
    );
}

fn validate(name: &str, json: bool) -> anyhow::Result<()> {
    let platform = Platform::load(name)?;
    let summary = Summary::of(&platform);
    if json {
        outln!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        outln!("{name}: ok: {}", summary.line());
    }
    Ok(())
}
