//! `hetscale bench`: the marked speed of this machine's cores, and the `local` platform with it;
//! with `--backend mpi`, of every host of an MPI job, as a platform keyed by host name.

use crate::output::{errln, out, outln};
use std::path::PathBuf;

use hbsp::Platform;
use hetscale_report::text;
use hetscale_study::speed::bench::{
    BenchDocument, HostsDocument, by_host, hosts_platform, hosts_warnings, local_platform,
};
use hetscale_study::speed::cpu_quota;
use hetscale_study::speed::marked_speed::{BenchOptions, measure};

/// Where `hetscale bench` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchBackend {
    /// This process, one core of this machine.
    Local,
    /// Every rank of the MPI job this runs in (`mpirun -np P hetscale bench --backend mpi`),
    /// all at once: one node per host, named by its host name (in a Slurm job step, its Slurm
    /// node name, `SLURMD_NODENAME`).
    Mpi,
}

/// Arguments of `hetscale bench`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale bench --quick
  hetscale bench --save-local --json
  mpirun -np 4 --hostfile hosts hetscale bench --backend mpi --write-platform cluster.toml")]
pub struct Args {
    /// local: this machine's core; mpi: every host of the MPI job this runs in, written as
    /// one node per host named by its host name (under srun, its Slurm node name).
    #[arg(long, value_enum, default_value = "local")]
    pub backend: BenchBackend,
    /// With --backend mpi: the platform whose nodes named like the hosts take the measured
    /// speeds (its other nodes and network kept; hosts it lacks are added). Default: a new
    /// platform with the `local` preset's placeholder network (bench runs programs here, so
    /// it defaults to local, as every such command does).
    #[arg(long)]
    pub platform: Option<String>,
    /// Small sizes, 3 samples of one run each: a few seconds, less representative.
    #[arg(long)]
    pub quick: bool,
    /// Timed samples per kernel, 1 to 10,000 (default 10).
    #[arg(long, alias = "repetitions", value_parser = clap::value_parser!(u16).range(1..=10_000))]
    pub runs: Option<u16>,
    /// Each timed sample repeats its kernel until it has lasted at least this many seconds
    /// (rate = flop x runs / elapsed), so a preemption or a CPU quota's throttle falls in every
    /// sample alike. Default 0.25, or 20 periods of the CPU quota this process runs under if
    /// longer (a cgroup's `cpu.cfs_period_us` or `cpu.max`); with --quick 0 (single runs).
    #[arg(long, value_name = "SECONDS")]
    pub min_sample_time: Option<f64>,
    /// Write the `local` platform (one node per core at the measured marked speed) to FILE,
    /// or with --backend mpi one node per host; fill its network with `hetscale probe
    /// --write-platform FILE`.
    #[arg(long)]
    pub write_platform: Option<PathBuf>,
    /// Cache the measured marked speed as the `local` platform's, replacing what `local`
    /// measured and cached on its first use (run with --quick to match that measurement).
    #[arg(long)]
    pub save_local: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `hetscale bench`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let mut options = if args.quick {
        BenchOptions::quick()
    } else {
        BenchOptions::default()
    };
    if let Some(r) = args.runs {
        options.repetitions = r.into();
    }
    if let Some(seconds) = args.min_sample_time {
        options.min_sample_s = seconds;
    } else if !args.quick {
        options.min_sample_s =
            cpu_quota::min_sample_s(options.min_sample_s, cpu_quota::this_process());
    }
    if args.backend == BenchBackend::Mpi {
        return run_mpi(args, &options);
    }
    if args.platform.is_some() {
        anyhow::bail!(
            "--platform is for --backend mpi: the local bench writes the `local` platform"
        );
    }
    let report = measure(&options)?;
    if let Some(path) = &args.write_platform {
        local_platform(&report)?.write_file(path)?;
    }
    let cached = args
        .save_local
        .then(|| hetscale_study::speed::local_speed::save_report(&report))
        .transpose()?;
    let warnings: Vec<String> = report.spread_warning().into_iter().collect();
    warnings.iter().for_each(|w| errln!("warning: {w}"));
    if args.json {
        let document = BenchDocument::new(&report, &warnings);
        let json =
            hetscale_study::json::document("bench", "bench", serde_json::to_value(&document)?);
        outln!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    out!("{}", text::bench::suite(&report));
    if let Some(path) = &args.write_platform {
        outln!("wrote the local platform to {}", path.display());
    }
    if let Some(file) = &cached {
        outln!(
            "cached as the local platform's marked speed in {}",
            file.display()
        );
    }
    Ok(())
}

/// `hetscale bench --backend mpi`: every rank measures at once; rank 0 reports per host.
fn run_mpi(args: &Args, options: &BenchOptions) -> anyhow::Result<()> {
    if args.save_local {
        anyhow::bail!("--save-local caches this machine's speed: not with --backend mpi");
    }
    // The platform is read before the measurement, so a wrong one fails at once.
    let base = args.platform.as_deref().map(Platform::load).transpose()?;
    let job = super::mpi::Job::start(&hbsp::Backend::Mpi(Default::default()))?
        .ok_or_else(|| anyhow::anyhow!("no MPI job"))?;
    let report = measure(options)?;
    let (lo, hi) = report.interval();
    let mut values = vec![report.marked_speed, lo, hi];
    values.extend(report.kernels.iter().map(|k| k.mflops.median));
    let ranks = job.gather_by_host(&values)?;
    if job.rank() != 0 {
        return Ok(());
    }
    let hosts = by_host(&ranks);
    let platform = hosts_platform(base, &hosts)?;
    if let Some(path) = &args.write_platform {
        platform.write_file(path)?;
    }
    let warnings = hosts_warnings(&hosts);
    warnings.iter().for_each(|w| errln!("warning: {w}"));
    if args.json {
        let document = HostsDocument::new(ranks.len(), &hosts, &report, options, &warnings);
        let json =
            hetscale_study::json::document("bench", "bench", serde_json::to_value(&document)?);
        outln!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    out!("{}", text::bench::hosts(&hosts, options));
    if let Some(path) = &args.write_platform {
        outln!("wrote the hosts' platform to {}", path.display());
    }
    Ok(())
}
