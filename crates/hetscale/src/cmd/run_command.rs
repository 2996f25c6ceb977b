//! `hetscale run --command ...` (one measurement of any program, to check a study's command)
//! and the command options `hetscale study --command ...` shares.

use crate::output::{errln, out, outln};
use anyhow::Context;
use hbsp::Backend;
use hetscale_study::runner::external::CommandSpec;
use hetscale_study::runner::program::{Hostfiles, Program, RunOutcome, execute};
use hetscale_study::spec::command_study::in_options;
use hetscale_study::spec::configuration::resolve;
use serde_json::json;

/// How to run any program: its command template, work and time.
#[derive(Debug, Clone, clap::Args)]
pub struct CommandArgs {
    /// Study any program instead of a kernel: a command template with placeholders (see
    /// [`command_help`]).
    #[arg(long, value_name = "TEMPLATE", requires = "work", help = command_help())]
    pub command: Option<String>,
    /// With --command: the work W in n (and p), flop, e.g. "2*n^3".
    #[arg(long, value_name = "FORMULA", requires = "command")]
    pub work: Option<String>,
    /// With --command: the overhead T_o in n and p, seconds, e.g. "1e-3*p" (approach 3 needs it).
    #[arg(long, value_name = "FORMULA", requires = "command")]
    pub overhead: Option<String>,
    /// With --command: the communication as steps COUNT*PATTERN(BYTES) joined by ;, e.g.
    /// "100*neighbours(8*n)", charged on the platform's network and added to --overhead.
    #[arg(long, value_name = "STEPS", requires = "command")]
    pub communication: Option<String>,
    /// With --command: how the program splits its work among the nodes, "speed" (in
    /// proportion to marked speed) or "equal" (the same share each: its compute is W/(p C_min)).
    #[arg(long, value_name = "SPLIT", requires = "command")]
    pub partition: Option<String>,
    /// With --command: the program's name in the platform's machine model, whose compute
    /// rate and start-up approach 3 takes (`hetscale calibrate --runs ... --work ...` fits
    /// them to its runs).
    #[arg(long, value_name = "NAME", requires = "command")]
    pub program: Option<String>,
    /// With --command: read the time (s) from the first group of this regex in the output
    /// (default: the wall-clock time hetscale measures).
    #[arg(long, value_name = "REGEX", requires = "command")]
    pub time_regex: Option<String>,
    /// With --command: read the time (s) from this field of the JSON output, e.g. "time_s".
    #[arg(long, value_name = "PATH", requires = "command")]
    pub time_json: Option<String>,
    /// With --command: seconds a run may take before it is killed and counted as failed.
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0)]
    pub timeout: f64,
}

/// `{n}` as help text can show it (see [`command_help`]).
pub(crate) fn placeholder_n() -> String {
    format!("{{{}n}}", clap::builder::styling::Reset.render())
}

/// The help of `--command`. clap turns `{n}` in help text into a line break and has no escape
/// for it (clap-rs/clap#5196), so `{n}` is written with a style reset between `{` and `n}`:
/// invisible on a terminal, and stripped with every other style when the help is not coloured.
fn command_help() -> String {
    let n = placeholder_n();
    format!(
        "Study any program instead of a kernel: a command template with placeholders {n}, {{p}}, \
         {{nodes}} and {{hostfile}}, e.g. \"./solver --size {n} --procs {{p}}\" (run without a shell)"
    )
}

impl CommandArgs {
    /// The command's spec, if --command was given.
    pub fn spec(&self) -> anyhow::Result<Option<CommandSpec>> {
        let Some(template) = &self.command else {
            return Ok(None);
        };
        let work = self.work.as_deref().context(
            "--command needs --work FORMULA, the work in n (and p), e.g. --work \"2*n^3\"",
        )?;
        Ok(Some(CommandSpec {
            overhead: self.overhead.clone(),
            communication: self.communication.clone(),
            partition: self.partition.clone(),
            program: self.program.clone(),
            time_regex: self.time_regex.clone(),
            time_json: self.time_json.clone(),
            timeout_s: self.timeout,
            ..CommandSpec::new(template, work)
        }))
    }
}

/// Runs `hetscale run --command ...`: `--warmup` then `--runs` runs at --n on --nodes of
/// --platform.
pub fn run(
    args: &super::run::Args,
    registry: &hetscale_kernels::KernelRegistry,
) -> anyhow::Result<()> {
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
    let platform = super::load_platform(&args.platform, registry)?;
    let config = resolve(&platform, &args.nodes, &args.nodes)?;
    let program = Program::Command(Box::new(command));
    let hostfiles = Hostfiles::default();
    let hostfile = hostfiles.path_for(&program, &config)?;
    // The backend is not used: the command runs itself.
    let (outcome, times, each_time_s) = super::run::repeated(args, || {
        Ok(execute(
            &program,
            args.seed,
            &config,
            &Backend::threads(),
            n as u64,
            hostfile.as_deref(),
        )?)
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

impl super::run::Timed for RunOutcome {
    fn time_s(&self) -> f64 {
        self.time_s
    }
    fn set_time_s(&mut self, time_s: f64) {
        self.time_s = time_s;
    }
}
