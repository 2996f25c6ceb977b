//! `hetscale predict`: approach 3 at any scale, instantly — the kernel's time model on the
//! platform's HBSP^1 parameters, solved for the target speed-efficiency on each node set.

use crate::output::{out, outln};
use hetscale_kernels::KernelRegistry;
use hetscale_kernels::MAX_N;
use hetscale_study::StudyError;
use hetscale_study::configuration::{ResolvedConfiguration, resolve};
use hetscale_study::predicted::{PredictedStudy, check_replication_fits};
use hetscale_study::program::Program;
use hetscale_study::study::predict_configurations;
use hetscale_study::summary::{prediction_verdict, seconds_and_human};
use hetscale_study::warnings::{OPTION_RANGE, with_range_advice};

use super::run::KernelArgs;

/// Arguments of `hetscale predict`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale predict mm --nodes 4 --nodes 16 --nodes 64 --target 0.3
  hetscale predict ge --nodes 64 --nodes 1024 --replicate 16 --target 0.2 --json")]
pub struct Args {
    /// Kernel: mm, ge, conv2d, summa, burg or slalom.
    pub kernel: String,
    /// Platform preset (`hetscale platform list` lists them) or TOML file. Default: sunwulf,
    /// the JPDC paper's machine (a command that runs programs here defaults to local; one that
    /// models a paper, to the paper's machine).
    #[arg(long, default_value = "sunwulf")]
    pub platform: String,
    /// A configuration's node set; repeat for several (e.g. --nodes 64 --nodes 1024).
    #[arg(long, required = true)]
    pub nodes: Vec<String>,
    /// Target speed-efficiency E_s.
    #[arg(long)]
    pub target: f64,
    /// Predict on a hypothetical platform with this many copies of every node (to go beyond
    /// the machine that exists, e.g. 4096 SunBlades).
    #[arg(long, default_value_t = 1)]
    pub replicate: usize,
    /// Smallest problem size searched.
    #[arg(long, default_value_t = 8)]
    pub n_min: u64,
    /// Largest problem size searched.
    #[arg(long, default_value_t = 10_000_000)]
    pub n_max: u64,
    /// Options of the configurable kernels.
    #[command(flatten)]
    pub kernel_options: KernelArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `hetscale predict`.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.target > 0.0 && args.target < 1.0,
        "--target {} is not a speed-efficiency: use a value in (0, 1)",
        args.target
    );
    anyhow::ensure!(
        args.n_min >= 1 && args.n_max > args.n_min,
        "--n-min {} and --n-max {} give nothing to search: use 1 <= n-min < n-max",
        args.n_min,
        args.n_max
    );
    anyhow::ensure!(
        args.n_max <= MAX_N,
        "--n-max {} is beyond the largest problem size the models take exactly, {MAX_N} (2^53): use a smaller --n-max",
        args.n_max
    );
    let program = Program::Kernel(args.kernel_options.kernel(&args.kernel, registry)?);
    let platform = super::load_platform(&args.platform, registry)?;
    check_replication_fits(platform.nodes.len(), args.replicate)?;
    let platform = platform.replicated(args.replicate)?;
    let configs = args
        .nodes
        .iter()
        .map(|nodes| resolve(&platform, nodes, nodes))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            anyhow::anyhow!("{e} (to predict beyond the real machine, add --replicate K)")
        })?;
    let study = predict(&program, &configs, args)?;
    if args.json {
        let mut value = serde_json::to_value(&study)?;
        // The inputs, echoed: the points' labels are the node sets too.
        value["kernel"] = args.kernel.clone().into();
        value["platform"] = platform.name.clone().into();
        value["nodes"] = serde_json::to_value(&args.nodes)?;
        value["replicate"] = args.replicate.into();
        let value = hetscale_study::json::document("predict", "prediction", value);
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        out!("{}", render(&args.kernel, &platform.name, &study));
    }
    Ok(())
}

/// The prediction on `configs`; a target no size in the range reaches names the configuration
/// and which of --n-min or --n-max to change.
fn predict(
    program: &Program,
    configs: &[ResolvedConfiguration],
    args: &Args,
) -> Result<PredictedStudy, StudyError> {
    let on = |configs: &[ResolvedConfiguration]| {
        predict_configurations(program, configs, args.target, (args.n_min, args.n_max))
    };
    on(configs).map_err(|err| match err {
        StudyError::Model(err) => {
            // The first configuration that fails alone is the one that failed.
            let failed = configs
                .iter()
                .find(|c| on(std::slice::from_ref(c)).is_err())
                .map_or("", |c| c.configuration.label.as_str());
            with_range_advice(err, failed, OPTION_RANGE)
        }
        other => other,
    })
}

fn render(kernel: &str, platform: &str, study: &PredictedStudy) -> String {
    let mut out = format!(
        "Predicted (approach 3, the kernel's HBSP^1 time model): {kernel} on {platform}, target E_s = {}\n{:<28} {:>6} {:>14} {:>10} {:>12} {:>24} {:>14} {:>13}\n",
        study.target,
        "nodes",
        "p",
        "C (Mflop/s)",
        "N",
        "W (flop)",
        "T",
        "psi(prev,this)",
        "psi(1st,this)"
    );
    for p in &study.points {
        let c = &p.configuration;
        let previous = p
            .psi_from_previous
            .map_or("-".to_string(), |psi| format!("{psi:.4}"));
        out.push_str(&format!(
            "{:<28} {:>6} {:>14.2} {:>10.0} {:>12.4e} {:>24} {:>14} {:>13.4}\n",
            c.label,
            c.nodes,
            c.marked_speed / 1e6,
            p.n,
            p.work,
            seconds_and_human(p.time_s),
            previous,
            p.psi_from_first
        ));
    }
    out.push_str(
        "psi(a, b) = C_b W_a / (C_a W_b): psi(prev,this) between consecutive configurations (the papers' tables), psi(1st,this) from the first.\n",
    );
    // The answer last, where the eye lands.
    if let Some(verdict) = prediction_verdict(study) {
        out.push_str(&format!("{verdict}\n"));
    }
    out
}
