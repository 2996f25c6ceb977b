//! `hetscale bench`: the marked speed of this machine's cores, and the `local` platform with it;
//! with `--backend mpi`, of every host of an MPI job, as a platform keyed by host name.

use crate::output::{errln, out, outln};
use std::path::PathBuf;

use hbsp::{Node, Platform};
use hetscale_study::speed::cpu_quota;
use hetscale_study::speed::marked_speed::{
    BenchOptions, MAX_RELATIVE_WIDTH, MarkedSpeedReport, measure,
};

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
        let mut json = serde_json::to_value(&report)?;
        json["marked_speed_flops_ci95"] = {
            let (lo, hi) = report.interval();
            serde_json::json!([lo * 1e6, hi * 1e6])
        };
        json["warnings"] = serde_json::to_value(&warnings)?;
        let json = hetscale_study::json::document("bench", "bench", json);
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        out!("{}", render(&report));
        if let Some(path) = &args.write_platform {
            outln!("wrote the local platform to {}", path.display());
        }
        if let Some(file) = &cached {
            outln!(
                "cached as the local platform's marked speed in {}",
                file.display()
            );
        }
    }
    Ok(())
}

/// One host's measurement: the mean over its ranks of their marked speeds and intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSpeed {
    /// Host name, short (up to its first dot): the platform node's name.
    pub host: String,
    /// The ranks that ran on it.
    pub ranks: Vec<usize>,
    /// Marked speed per core, Mflop/s.
    pub marked_speed: f64,
    /// 95% interval, Mflop/s.
    pub interval: (f64, f64),
    /// Each kernel's median rate, Mflop/s, in the suite's order (the values after the
    /// interval's).
    pub kernels: Vec<f64>,
}

/// Groups the ranks' `(host, [speed, low, high, kernel medians...])` by host, in order of first
/// rank.
pub fn by_host(ranks: &[(String, Vec<f64>)]) -> Vec<HostSpeed> {
    let mut hosts: Vec<(HostSpeed, usize)> = Vec::new();
    for (rank, (host, values)) in ranks.iter().enumerate() {
        let short = host.split('.').next().unwrap_or(host).to_owned();
        let i = match hosts.iter().position(|(h, _)| h.host == short) {
            Some(i) => i,
            None => {
                hosts.push((
                    HostSpeed {
                        host: short,
                        ranks: Vec::new(),
                        marked_speed: 0.0,
                        interval: (0.0, 0.0),
                        kernels: vec![0.0; values.len().saturating_sub(3)],
                    },
                    0,
                ));
                hosts.len() - 1
            }
        };
        let (h, _) = &mut hosts[i];
        h.ranks.push(rank);
        h.marked_speed += values[0];
        h.interval.0 += values[1];
        h.interval.1 += values[2];
        for (sum, v) in h.kernels.iter_mut().zip(values.iter().skip(3)) {
            *sum += v;
        }
    }
    hosts
        .into_iter()
        .map(|(mut h, _)| {
            let k = h.ranks.len() as f64;
            h.marked_speed /= k;
            h.interval = (h.interval.0 / k, h.interval.1 / k);
            h.kernels.iter_mut().for_each(|v| *v /= k);
            h
        })
        .collect()
}

/// `base` (or a new platform with the `local` preset's placeholder network) with every host's
/// node at its measured speed: a node named like the host takes it; a host without one is
/// added, with one CPU per rank that ran on it.
pub fn hosts_platform(base: Option<Platform>, hosts: &[HostSpeed]) -> anyhow::Result<Platform> {
    let mut platform = match base {
        Some(platform) => platform,
        None => {
            let mut platform = Platform::load("local")?;
            platform.name = "mpi-hosts".into();
            platform.nodes.clear();
            platform
        }
    };
    if platform.speed_unit != "Mflop/s" {
        anyhow::bail!(
            "platform \"{}\" measures speeds in {}: bench measures Mflop/s",
            platform.name,
            platform.speed_unit
        );
    }
    for h in hosts {
        match platform.nodes.iter_mut().find(|n| n.name == h.host) {
            Some(node) => node.marked_speed = h.marked_speed,
            None => {
                let mut node = Node::new(&h.host, h.marked_speed);
                node.cpus = h.ranks.len() as u32;
                platform.nodes.push(node);
            }
        }
    }
    let list: Vec<String> = hosts
        .iter()
        .map(|h| format!("{} {:.1}", h.host, h.marked_speed))
        .collect();
    platform.description = format!(
        "marked speeds per host measured by hetscale bench --backend mpi (Mflop/s: {}); network: run hetscale probe --backend mpi --write-platform",
        list.join(", ")
    );
    platform.validate()?;
    Ok(platform)
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
    let warnings: Vec<String> = hosts
        .iter()
        .filter(|h| (h.interval.1 - h.interval.0) / h.marked_speed > MAX_RELATIVE_WIDTH)
        .map(|h| {
            format!(
                "host {}: the marked speed {:.1} Mflop/s has a 95% interval of {:.1}-{:.1} Mflop/s, wider than {:.0}% of it: the host was loaded while it was measured",
                h.host,
                h.marked_speed,
                h.interval.0,
                h.interval.1,
                100.0 * MAX_RELATIVE_WIDTH
            )
        })
        .collect();
    warnings.iter().for_each(|w| errln!("warning: {w}"));
    if args.json {
        let json = serde_json::json!({
            "backend": "mpi",
            "p": ranks.len(),
            "hosts": hosts.iter().map(|h| serde_json::json!({
                "host": h.host,
                "cpus": h.ranks.len(),
                "marked_speed_flops": h.marked_speed * 1e6,
                "marked_speed_flops_ci95": [h.interval.0 * 1e6, h.interval.1 * 1e6],
                "kernel_median_flops": report.kernels.iter().zip(&h.kernels)
                    .map(|(k, v)| (k.name.to_owned(), serde_json::json!(v * 1e6)))
                    .collect::<serde_json::Map<_, _>>(),
            })).collect::<Vec<_>>(),
            "options": serde_json::to_value(options)?,
            "warnings": warnings,
        });
        let json = hetscale_study::json::document("bench", "bench", json);
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        outln!(
            "{:<16} {:>12} {:>12} {:>10}  ranks",
            "host",
            "Mflop/s",
            "95% CI low",
            "high"
        );
        for h in &hosts {
            let ranks: Vec<String> = h.ranks.iter().map(|r| r.to_string()).collect();
            outln!(
                "{:<16} {:>12.1} {:>12.1} {:>10.1}  {}",
                h.host,
                h.marked_speed,
                h.interval.0,
                h.interval.1,
                ranks.join(",")
            );
        }
        outln!(
            "(marked speed per core of each host, all ranks measuring at once: the mean of the medians of GEMM, LU, FFT and the STREAM triad over {} timed samples {})",
            options.repetitions,
            sample_words(options)
        );
        if let Some(path) = &args.write_platform {
            outln!("wrote the hosts' platform to {}", path.display());
        }
    }
    Ok(())
}

/// The `local` preset with every core at the measured marked speed.
fn local_platform(report: &MarkedSpeedReport) -> anyhow::Result<Platform> {
    let mut platform = Platform::load("local")?;
    for node in &mut platform.nodes {
        node.marked_speed = report.marked_speed;
    }
    platform.description = format!(
        "this host, one node per core at the marked speed measured by hetscale bench ({:.1} Mflop/s); network: run hetscale probe --write-platform",
        report.marked_speed
    );
    platform.validate()?;
    Ok(platform)
}

fn render(report: &MarkedSpeedReport) -> String {
    let mut out = format!(
        "{:<6} {:>12} {:>12} {:>10} {:>10}  {}\n",
        "kernel", "median", "95% CI low", "high", "MAD", "problem"
    );
    for k in &report.kernels {
        let s = &k.mflops;
        out.push_str(&format!(
            "{:<6} {:>12.1} {:>12.1} {:>10.1} {:>10.1}  {}\n",
            k.name, s.median, s.median_ci.0, s.median_ci.1, s.mad, k.problem
        ));
    }
    let (lo, hi) = report.interval();
    out.push_str(&format!(
        "(rates in Mflop/s over {} timed samples {} after {} warm-up)\nmarked_speed = {:.1} Mflop/s per core, 95% CI [{lo:.1}, {hi:.1}] (mean of the medians, as JPDC section 4.3 averages NPB kernels); {} cores\n",
        report.options.repetitions,
        sample_words(&report.options),
        report.options.warmup,
        report.marked_speed,
        report.cores
    ));
    out
}

/// What one sample is: `of one run each`, or `of at least 0.25 s each`.
fn sample_words(options: &BenchOptions) -> String {
    if options.min_sample_s > 0.0 {
        // Rounded: 20 periods of 0.1 s print as 2, not 1.9999999999999998.
        let seconds = (options.min_sample_s * 1e6).round() / 1e6;
        format!("of at least {seconds} s each")
    } else {
        "of one run each".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranks(list: &[(&str, f64)]) -> Vec<(String, Vec<f64>)> {
        list.iter()
            .map(|(h, s)| (h.to_string(), vec![*s, s - 1.0, s + 1.0]))
            .collect()
    }

    #[test]
    fn ranks_on_one_host_are_averaged_and_hosts_keep_first_rank_order() {
        let hosts = by_host(&ranks(&[("h2.lab", 300.0), ("h1", 600.0), ("h2", 200.0)]));
        assert_eq!(hosts.len(), 2);
        assert_eq!(hosts[0].host, "h2");
        assert_eq!(hosts[0].ranks, vec![0, 2]);
        assert_eq!(hosts[0].marked_speed, 250.0);
        assert_eq!(hosts[0].interval, (249.0, 251.0));
        assert_eq!(hosts[1].host, "h1");
        assert_eq!(hosts[1].ranks, vec![1]);
        assert!(hosts[0].kernels.is_empty());
        // The kernels' medians after the interval, averaged over a host's ranks alike.
        let with_kernels = vec![
            ("h1".to_owned(), vec![3.0, 2.0, 4.0, 10.0, 20.0]),
            ("h1".to_owned(), vec![5.0, 4.0, 6.0, 30.0, 40.0]),
        ];
        assert_eq!(by_host(&with_kernels)[0].kernels, vec![20.0, 30.0]);
    }

    #[test]
    fn a_platform_takes_its_hosts_speeds_and_gains_the_hosts_it_lacks() {
        let mut base = Platform::load("local").unwrap();
        base.nodes = vec![Node::new("h1", 1.0).with_kind("fast"), Node::new("h9", 7.0)];
        let hosts = by_host(&ranks(&[("h1", 600.0), ("h3", 150.0), ("h3", 150.0)]));
        let platform = hosts_platform(Some(base), &hosts).unwrap();
        let names: Vec<&str> = platform.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["h1", "h9", "h3"]);
        assert_eq!(platform.nodes[0].marked_speed, 600.0);
        assert_eq!(platform.nodes[0].kind.as_deref(), Some("fast"));
        assert_eq!(platform.nodes[1].marked_speed, 7.0);
        assert_eq!(
            (platform.nodes[2].marked_speed, platform.nodes[2].cpus),
            (150.0, 2)
        );
        assert!(platform.description.contains("h3 150.0"));
        // Without a base: a new platform of the hosts only.
        let fresh = hosts_platform(None, &hosts).unwrap();
        assert_eq!(fresh.nodes.len(), 2);
        assert_eq!(fresh.name, "mpi-hosts");
    }

    #[test]
    fn a_platform_in_another_unit_is_refused() {
        let base = Platform::load("ucf-cluster").unwrap();
        let err = hosts_platform(Some(base), &by_host(&ranks(&[("h1", 1.0)]))).unwrap_err();
        assert!(err.to_string().contains("bench measures Mflop/s"), "{err}");
    }
}
