//! `hetscale run --command ...`: one measurement of any program, to check a study's command.

use crate::cmd::load_platform;
use crate::output::{errln, out, outln};
use anyhow::Context;
use hbsp::Backend;
use hetscale_study::runner::program::{Hostfiles, Program, execute};
use hetscale_study::runner::repeat::repeated;
use hetscale_study::spec::command_study::in_options;
use hetscale_study::spec::configuration::resolve;
use serde_json::json;

use super::args::Args;

/// Runs `hetscale run --command ...`: `--warmup` then `--runs` runs at --n on --nodes of
/// --platform.
pub(super) fn run(args: &Args, registry: &hetscale_kernels::KernelRegistry) -> anyhow::Result<()> {
    let spec = args
        .command
        .spec()?
        .context("give a kernel or --command TEMPLATE")?;
    hetscale_study::runner::interrupt::catch().context("cannot catch SIGINT and SIGTERM")?;
    let n = args
        .n
        .context("give the problem size with --n N: the command gets it as {n}")?;
    let command = spec.validate().map_err(|e| {
        anyhow::anyhow!(in_options(&e).unwrap_or_else(|| format!("--command: {e}")))
    })?;
    let platform = load_platform(&args.platform, registry)?;
    let config = resolve(&platform, &args.nodes, &args.nodes)?;
    let program = Program::Command(Box::new(command));
    let hostfiles = Hostfiles::default();
    let hostfile = hostfiles.path_for(&program, &config)?;
    // The backend is not used: the command runs itself.
    let (outcome, times, each_time_s) = repeated(args.warmup, args.runs, || {
        execute(
            &program,
            args.seed,
            &config,
            &Backend::threads(),
            n as u64,
            hostfile.as_deref(),
        )
    })?;
    let c = config.configuration.marked_speed;
    let speed = outcome.work / outcome.time_s;
    let warnings: Vec<String> = [platform.placeholder_warning(), times.outlier_warning()]
        .into_iter()
        .flatten()
        .collect();
    warnings.iter().for_each(|w| errln!("warning: {w}"));
    if args.json {
        let value = json!({
            "command": spec.template,
            "backend": hetscale_study::spec::EXTERNAL_BACKEND,
            "n": n,
            "p": config.configuration.nodes,
            "nodes": config.nodes,
            "platform": platform.name,
            "time_s": outcome.time_s,
            "time_stats_s": times,
            "times_s": each_time_s,
            "work_flop": outcome.work,
            "speed_flops": speed,
            "marked_speed_flops": c,
            "speed_efficiency": speed / c,
            "warnings": warnings,
        });
        let value = hetscale_study::json::document("run", "run", value);
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        out!(
            "command  {}\n\
             p        {} (nodes \"{}\" of {})\n\
             N        {n}\n\
             T        {}\n\
             W        {:.6e} flop\n\
             S = W/T  {:.4} Mflop/s\n\
             C        {:.4} Mflop/s\n\
             E_s      {:.4}\n",
            spec.template,
            config.configuration.nodes,
            config.nodes,
            platform.name,
            times.time_line(),
            outcome.work,
            speed / 1e6,
            c / 1e6,
            speed / c,
        );
    }
    Ok(())
}
