//! The options that declare a program hetscale does not run (its work, overhead, messages and
//! partition), shared by `predict` and `calibrate`.

use hetscale_study::runner::external::CommandSpec;
use hetscale_study::runner::program::Program;
use hetscale_study::spec::command_study::in_options;

/// A program known by its declared model, as a command study's `[command]` gives it.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DeclaredArgs {
    /// The program's work W in n (and p), flop, e.g. "2*n^3": a program that is not one of
    /// hetscale's kernels (its runs' kernel column is then its name).
    #[arg(long, value_name = "FORMULA")]
    pub work: Option<String>,
    /// With --work: the program's overhead T_o in n and p, s (as a command study's
    /// `overhead`).
    #[arg(long, value_name = "FORMULA", requires = "work")]
    pub overhead: Option<String>,
    /// With --work: the program's communication as steps COUNT*PATTERN(BYTES) joined by ;,
    /// e.g. "100*neighbours(8*n)" (patterns: neighbours, alltoall, broadcast, scatter,
    /// gather, allreduce), charged on the platform's network and added to --overhead.
    #[arg(long, value_name = "STEPS", requires = "work")]
    pub communication: Option<String>,
    /// With --work: how the program splits its work among the nodes, "speed" (in proportion
    /// to marked speed) or "equal" (the same share each: its compute is W/(p C_min)).
    #[arg(long, value_name = "SPLIT", requires = "work")]
    pub partition: Option<String>,
}

impl DeclaredArgs {
    /// The declared program, if --work was given, with its compute rate and start-up those
    /// of `program` in the platform's machine model, if named; the error is one line naming
    /// the option.
    pub fn program(&self, program: Option<&str>) -> anyhow::Result<Option<Program>> {
        let Some(work) = &self.work else {
            return Ok(None);
        };
        let spec = CommandSpec {
            overhead: self.overhead.clone(),
            communication: self.communication.clone(),
            partition: self.partition.clone(),
            program: program.map(str::to_string),
            ..CommandSpec::new("false", work)
        };
        Program::of_formulas(&spec)
            .map(Some)
            .map_err(|e| anyhow::anyhow!(in_options(&e).unwrap_or_else(|| format!("--{e}"))))
    }
}
