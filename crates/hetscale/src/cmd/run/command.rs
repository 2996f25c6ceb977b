//! `hetscale run --command ...`: one measurement of any program, to check a study's command.

use crate::cmd::load_platform;
use crate::output::{errln, out, outln};
use anyhow::Context;
use hbsp::Backend;
use hetscale_report::text;
use hetscale_study::runner::program::{Hostfiles, Program, execute};
use hetscale_study::runner::repeat::repeated;
use hetscale_study::runner::run_report::{CommandRunReport, command_run_warnings};
use hetscale_study::spec::command_study::in_options;
use hetscale_study::spec::configuration::resolve;

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
    let repeated = repeated(args.warmup, args.runs, || {
        execute(
            &program,
            args.seed,
            &config,
            &Backend::threads(),
            n as u64,
            hostfile.as_deref(),
        )
    })?;
    let warnings = command_run_warnings(&repeated.stats, &platform);
    warnings.iter().for_each(|w| errln!("warning: {w}"));
    let report = CommandRunReport::new(
        &spec.template,
        n,
        &config,
        &platform.name,
        &repeated,
        &warnings,
    );
    if args.json {
        let value = hetscale_study::json::document("run", "run", serde_json::to_value(&report)?);
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        out!("{}", text::run::command(&report));
    }
    Ok(())
}
