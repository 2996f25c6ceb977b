//! The options that describe any program to run (its command template, work and time),
//! shared by `hetscale run --command` and `hetscale study --command`.

use anyhow::Context;
use hetscale_study::runner::external::CommandSpec;

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
