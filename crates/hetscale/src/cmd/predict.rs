//! `hetscale predict`: approach 3 at any scale, instantly — the kernel's time model on the
//! platform's HBSP^1 parameters, solved for the target speed-efficiency on each node set; or,
//! with `--from DB` (a study's stored runs) or `--runs FILE.csv` (runs measured anywhere), the
//! scaling model fitted to measured runs, with 95% intervals.
//!
//! Here only the options and their wiring: `hetscale_study::predict` answers the question they
//! ask, `hetscale_report::text::predict` shows the answer, its JSON is the answer's serde form.

use crate::output::{errln, out, outln};
use anyhow::Context;
use hetscale_kernels::KernelRegistry;
use hetscale_study::calibrate::runs::read_runs;
use hetscale_study::predict::question::{Mode, Question};
use hetscale_study::predict::{approach3, declared, fitted};
use hetscale_study::runner::program::Program;

use super::declared::DeclaredArgs;
use super::progress::FitBar;
use super::run::KernelArgs;

/// Arguments of `hetscale predict`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale predict mm --nodes 4 --nodes 16 --nodes 64 --target 0.3
  hetscale predict ge --nodes 64 --nodes 1024 --replicate 16 --target 0.2 --json
  hetscale predict --from study.db --nodes 'server*2:1,sunblade:63' --replicate 16
  hetscale predict --runs runs.csv --work '400*(n-2)^2' --platform cluster.toml --nodes h1,h2,h3,h4 --target 0.06")]
pub struct Args {
    /// Kernel: mm, ge, conv2d, summa, burg or slalom (not with --from, --runs or --work).
    #[arg(required_unless_present_any = ["from", "runs", "work"])]
    pub kernel: Option<String>,
    /// Fit the scaling model to the measured runs of a study in this database and predict
    /// from it, instead of a kernel's HBSP^1 model.
    #[arg(long, value_name = "DB", conflicts_with = "runs")]
    pub from: Option<String>,
    /// Fit the scaling model to the runs in this CSV file (configuration,nodes,kernel,n,time_s:
    /// one line per run, repetitions on lines of their own), measured on --platform; the
    /// kernel column names a kernel, or, with --work, is the program's name.
    #[arg(long, value_name = "FILE.csv", requires = "platform")]
    pub runs: Option<std::path::PathBuf>,
    /// The declared program (--work ...): with --runs, what the runs measured; alone,
    /// approach 3 on the platform for it.
    #[command(flatten)]
    pub declared: DeclaredArgs,
    /// With --work and no runs: the program's name in the platform's machine model, whose
    /// compute rate and start-up `hetscale calibrate --runs ... --work` fitted to its runs.
    #[arg(long, value_name = "NAME", requires = "work", conflicts_with_all = ["runs", "from"])]
    pub program: Option<String>,
    /// With --runs: the relative tolerance within which a size holds the target E_s (with
    /// --from, default: the study's).
    #[arg(long)]
    pub tolerance: Option<f64>,
    /// With --from: the study to fit (default: the database's only study).
    #[arg(long, value_name = "NAME", requires = "from")]
    pub study: Option<String>,
    /// With --from or --runs: choose the overhead from Extra-P's normal form (and the slowest
    /// node's share, unless the split is declared equal) only, leaving out the program's own
    /// model (T_o,hbsp, T_o,spec): what the runs alone say.
    #[arg(long)]
    pub normal_form: bool,
    /// Platform preset (`hetscale platform list` lists them) or TOML file. With --runs,
    /// required: the machine the runs measured, whose nodes --nodes names; with --from, the
    /// platform the study ran on unless given. Default: sunwulf, the JPDC paper's machine (a
    /// command that runs programs here defaults to local; one that models a paper, to the
    /// paper's machine).
    #[arg(long)]
    pub platform: Option<String>,
    /// A configuration's node set; repeat for several (e.g. --nodes 64 --nodes 1024).
    #[arg(long, required = true)]
    pub nodes: Vec<String>,
    /// Target speed-efficiency E_s (with --from, default: the study's target).
    #[arg(long, required_unless_present_any = ["from", "time_at"])]
    pub target: Option<f64>,
    /// With --from or --runs: predict the time T at this problem size on each configuration,
    /// with its 95% interval, instead of the size holding the target.
    #[arg(long, value_name = "N", conflicts_with = "target")]
    pub time_at: Option<u64>,
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

/// Runs `hetscale predict`: the question the options ask, answered by its library function,
/// printed as text or JSON.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    let question = question_of(args);
    let platform =
        |default: &str| super::load_platform(args.platform.as_deref().unwrap_or(default), registry);
    let prediction = match question.mode()? {
        Mode::Kernel { kernel, target } => {
            let program = Program::Kernel(args.kernel_options.kernel(kernel, registry)?);
            approach3::kernel(kernel, &program, platform("sunwulf")?, target, &question)?
        }
        Mode::Declared => {
            let program = args
                .declared
                .program(args.program.as_deref())?
                .context("--work is required here")?;
            declared::declared(&program, || platform("sunwulf"), &question)?
        }
        Mode::Study { db } => {
            hetscale_out::protect_input("the study database", db);
            // The study's own platform unless --platform names another.
            let named = || args.platform.as_deref().map(&platform).transpose();
            let bar = FitBar::new(&format!("the runs of {db}"));
            fitted::from_study(db, registry, named, &question, bar.progress())?
        }
        Mode::Runs { csv } => {
            hetscale_out::protect_input("--runs", csv);
            let file = read_runs(csv)?;
            if let Some(warning) = file.copies_warning() {
                errln!("warning: {warning}");
            }
            let program = |name: Option<&str>| program_of_runs(name, args, registry);
            // clap requires --platform with --runs.
            let bar = FitBar::new(&format!("{} runs", file.runs.len()));
            fitted::from_runs(&file, program, || platform(""), &question, bar.progress())?
        }
    };
    if args.json {
        let value = serde_json::to_value(&prediction)?;
        let value = hetscale_study::json::document("predict", "prediction", value);
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        out!("{}", hetscale_report::text::predict::render(&prediction));
    }
    Ok(())
}

/// The options as the library takes them.
fn question_of(args: &Args) -> Question {
    Question {
        kernel: args.kernel.clone(),
        from: args.from.clone(),
        runs: args.runs.clone(),
        declared: args.declared.work.is_some(),
        program: args.program.clone(),
        study: args.study.clone(),
        nodes: args.nodes.clone(),
        replicate: args.replicate,
        target: args.target,
        time_at: args.time_at,
        tolerance: args.tolerance,
        normal_form: args.normal_form,
        n_min: args.n_min,
        n_max: args.n_max,
    }
}

/// The program the runs in a file measured, their `kernel` column naming it (`name`, none
/// when the file holds no runs): with --work, a program known by its work (and overhead)
/// formula, else the kernel of that name.
fn program_of_runs(
    name: Option<&str>,
    args: &Args,
    registry: &KernelRegistry,
) -> anyhow::Result<Program> {
    match (args.declared.program(None)?, name) {
        (Some(program), _) => Ok(program),
        (None, Some(name)) => Ok(Program::Kernel(
            args.kernel_options.kernel(name, registry).map_err(|e| {
                anyhow::anyhow!(
                    "{e} (for a program that is not a kernel, give its work with --work FORMULA)"
                )
            })?,
        )),
        (None, None) => anyhow::bail!("--runs holds no runs: give one measured run per line"),
    }
}
