//! The options of `hetscale run`, and those of the configurable kernels it shares with
//! `predict` and `calibrate`.

use std::path::PathBuf;

use hetscale_kernels::{Kernel, KernelOptions, KernelRegistry};

use crate::cmd::command_args::CommandArgs;
use crate::cmd::mpi::SpeedSource;

/// Arguments of `hetscale run`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale run mm --n 256
  hetscale run ge --backend sim --platform sunwulf --nodes 8 --n 2048
  hetscale run --command 'sleep 0' --work 'n^2' --n 100 --runs 3")]
pub struct Args {
    /// Kernel: mm, ge, conv2d, summa, burg, slalom (or one a user binary added); not with
    /// --command.
    #[arg(required_unless_present = "command", conflicts_with = "command")]
    pub kernel: Option<String>,
    /// Run any program instead of a kernel (see `hetscale run --command --help`).
    #[command(flatten)]
    pub command: CommandArgs,
    /// Backend: threads (real time), sim (virtual time on the platform's HBSP^1 model) or
    /// mpi (one rank per node, under `mpirun -np P`; needs a build with feature mpi).
    #[arg(long, default_value = "threads")]
    pub backend: String,
    /// mpi only: where the ranks' marked speeds come from: the --nodes selection (rank j =
    /// node j), each rank's host name in --platform, or a benchmark at start-up.
    #[arg(long, value_enum, default_value = "nodes")]
    pub marked_speed_from: SpeedSource,
    /// sim only: skip compute blocks and charge their declared work (skeleton execution), so
    /// sizes beyond this machine can be simulated; the result is not verified.
    #[arg(long)]
    pub skip_compute: bool,
    /// sim only: how the nodes execute: coroutines (on one thread, the default) or threads
    /// (one OS thread per node, the former engine, kept as a baseline).
    #[arg(long, default_value = "coroutines")]
    pub sim_engine: String,
    /// Platform preset (`hetscale platform list` lists them) or TOML file. Default: local,
    /// this machine's cores (a command that runs programs here defaults to local; one that
    /// models a paper, to the paper's machine).
    #[arg(long, default_value = "local")]
    pub platform: String,
    /// Node-set: a count (4), names (a,b) or kinds with counts (sunblade:3); default all of
    /// the platform's nodes for a kernel, one for --command (a serial program is not judged
    /// against every core).
    #[arg(
        long,
        default_value = "all",
        default_value_if("command", clap::builder::ArgPredicate::IsPresent, "1")
    )]
    pub nodes: String,
    /// Problem size N (matrix order, image side or series length); taken from --input if absent.
    #[arg(long)]
    pub n: Option<usize>,
    /// Seed of the generated inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Measured runs (as hyperfine's --runs): T is their median, shown with mean +/- sd, the
    /// range and a warning on outliers; the trace, report and result are the last run's.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub runs: u32,
    /// Runs before the measured ones, not measured (caches, page faults, thread start-up).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub warmup: u32,
    /// Input .npy files instead of generated data, comma-separated: mm/summa A,B; ge A,b;
    /// conv2d X,Y (complex128); burg x.
    #[arg(long, value_delimiter = ',')]
    pub input: Vec<PathBuf>,
    /// Write the result (C, x, the image D or the AR coefficients) to this .npy file.
    #[arg(long)]
    pub dump_result: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Options of the configurable kernels.
    #[command(flatten)]
    pub kernel_options: KernelArgs,
    /// Stretch each node's compute blocks by C_max / C_j (threads backend).
    #[arg(long)]
    pub emulate_speeds: bool,
    /// Write the run's trace as Chrome trace event JSON, for ui.perfetto.dev.
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,
    /// Write a report of the run (spacetime diagram, average speed, task summary) into DIR.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
}

/// The options of the configurable kernels, shared by `run` and `predict`.
#[derive(Debug, clap::Args)]
pub struct KernelArgs {
    /// SUMMA strategy: hoho, heho, hohe1 or hohe2.
    #[arg(long, default_value = "hoho")]
    pub strategy: String,
    /// SUMMA grid PxQ (default: near-square).
    #[arg(long)]
    pub grid: Option<String>,
    /// SUMMA panel width.
    #[arg(long, default_value_t = 128)]
    pub nb: usize,
    /// Burg model order K.
    #[arg(long, default_value_t = hetscale_kernels::burg::DEFAULT_ORDER)]
    pub order: usize,
    /// GE pivoting: partial or none (the paper's; generated matrices are then diagonally dominant).
    #[arg(long, default_value = "partial")]
    pub pivoting: String,
    /// GE rows per block: 1 (the paper's row-cyclic program) or more (block-cyclic rows, one
    /// broadcast of b pivot rows per block; needs --pivoting none).
    #[arg(long, default_value_t = 1)]
    pub block: usize,
    /// SLALOM layout: rows (GE's rows, by speed) or grid (a square process grid, as on the nCUBE 2).
    #[arg(long, default_value = "rows")]
    pub layout: String,
}

impl KernelArgs {
    /// The kernel `name` of `registry` with these options.
    pub fn kernel(&self, name: &str, registry: &KernelRegistry) -> anyhow::Result<Box<dyn Kernel>> {
        Ok(registry.get(name, &self.options())?)
    }

    /// These options as the kernels take them.
    pub fn options(&self) -> KernelOptions {
        KernelOptions {
            pivoting: self.pivoting.clone(),
            block: self.block,
            strategy: self.strategy.clone(),
            grid: self.grid.clone(),
            nb: self.nb,
            order: self.order,
            layout: self.layout.clone(),
        }
    }
}
