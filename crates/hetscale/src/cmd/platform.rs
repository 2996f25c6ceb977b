//! `hetscale platform`: list, show and validate platforms.

use crate::output::{errln, out, outln};
use hbsp::{Machine, NodeSet, Platform};
use hetscale_kernels::{KernelRegistry, flops_per_unit};
use hetscale_study::json::document;
use serde_json::{Map, Value, json};

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

    /// The summary in the JSON schema: the node count `p`, the cluster's marked speed under
    /// [`speed_key`].
    fn to_json(&self) -> Value {
        let (key, factor) = speed_key(self.speed_unit);
        let mut value = json!({
            "name": self.name,
            "p": self.nodes,
            "kinds": self.kinds,
            "speed_unit": self.speed_unit,
            "description": self.description,
        });
        value[key] = json!(self.cluster_speed * factor);
        value
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

struct MachineView<'a> {
    machine: &'a Machine,
    p: usize,
    cluster_speed: f64,
    shares: Vec<f64>,
    l_s: f64,
}

impl MachineView<'_> {
    /// The machine in the JSON schema: `nodes` the node set as given and `p` its count, the
    /// cluster's and each node's marked speed under [`speed_key`], each node's share beside it.
    fn to_json(&self, nodes: &str) -> anyhow::Result<Value> {
        let unit = self.machine.speed_unit();
        let mut value = schema_keys(serde_json::to_value(self.machine)?, unit);
        let Some(object) = value.as_object_mut() else {
            anyhow::bail!("a machine serializes to a JSON object");
        };
        let mut each = object.remove("nodes").unwrap_or_default();
        for (node, share) in each.as_array_mut().into_iter().flatten().zip(&self.shares) {
            node["share"] = json!(share);
        }
        let (key, factor) = speed_key(unit);
        object.insert("node".into(), each);
        object.insert("nodes".into(), json!(nodes));
        object.insert("p".into(), json!(self.p));
        object.insert(key.into(), json!(self.cluster_speed * factor));
        object.insert("l_s".into(), json!(self.l_s));
        Ok(value)
    }
}

/// The JSON key of a marked speed in `unit`, and the factor that converts it: one JSON
/// schema across commands (README "JSON output") gives a flop rate as `marked_speed_flops` in
/// flop/s; a unit that is not a flop rate (a BYTEmark index) has no flop/s to give, so its
/// number keeps the platform's unit under `marked_speed_index`, which `speed_unit` names.
fn speed_key(unit: &str) -> (&'static str, f64) {
    match flops_per_unit(unit) {
        Some(factor) => ("marked_speed_flops", factor),
        None => ("marked_speed_index", 1.0),
    }
}

/// `value` (a platform or machine as its file names it) with the JSON schema's keys: every
/// marked speed under [`speed_key`], HBSP's barrier cost `L` (`L_s`) as `l` (`l_s`).
fn schema_keys(value: Value, unit: &str) -> Value {
    match value {
        Value::Object(map) => {
            let (speed, factor) = speed_key(unit);
            let renamed: Map<String, Value> = map
                .into_iter()
                .map(|(key, v)| match key.as_str() {
                    "marked_speed" => (speed.to_owned(), json!(v.as_f64().map(|s| s * factor))),
                    "L" => ("l".to_owned(), schema_keys(v, unit)),
                    "L_s" => ("l_s".to_owned(), v),
                    _ => (key, schema_keys(v, unit)),
                })
                .collect();
            Value::Object(renamed)
        }
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| schema_keys(v, unit)).collect())
        }
        other => other,
    }
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
    let summaries: Vec<Summary> = presets.iter().map(Summary::of).collect();
    if json {
        let values: Vec<Value> = summaries.iter().map(Summary::to_json).collect();
        let json = document("platform", "platforms", Value::from(values));
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        summaries.iter().for_each(|s| outln!("{}", s.line()));
    }
    Ok(())
}

fn show(name: &str, nodes: Option<&str>, json: bool) -> anyhow::Result<()> {
    let platform = as_runs_use(Platform::load(name)?)?;
    let Some(spec) = nodes else {
        if json {
            let value = schema_keys(serde_json::to_value(&platform)?, &platform.speed_unit);
            let json = document("platform", "platform", value);
            outln!("{}", serde_json::to_string_pretty(&json)?);
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
        let json = document("platform", "machine", view.to_json(spec)?);
        outln!("{}", serde_json::to_string_pretty(&json)?);
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

fn validate(name: &str, registry: &KernelRegistry, json: bool) -> anyhow::Result<()> {
    let platform = Platform::load(name)?;
    platform.check_kernels(&registry.names())?;
    let summary = Summary::of(&platform);
    if json {
        let json = document("platform", "platform", summary.to_json());
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        outln!("{name}: ok: {}", summary.line());
    }
    Ok(())
}
