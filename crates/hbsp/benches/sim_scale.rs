//! The sim backend at scale, both engines side by side in one run: 1024 virtual nodes x 1000
//! supersteps, each an exchange of small messages with both ring neighbours, on the
//! coroutine engine and on the thread-per-node baseline (node-supersteps per second); then
//! 65,536 nodes x 100 supersteps on the coroutine engine alone (wall time and peak RSS), or,
//! on kernels before 6.13, as many nodes as this machine's `vm.max_map_count` allows.
//!
//! `cargo bench -p hbsp --bench sim_scale` (arguments: `[nodes] [supersteps] [big nodes]
//! [big supersteps] [lanes]`; lanes, the coroutine engine's OS threads, one if 0 or absent).

use std::time::Instant;

use hbsp::backend::coroutines;
use hbsp::backend::stack_pool::Guards;
use hbsp::{
    Backend, BarrierCost, HbspError, Machine, Network, Node, Platform, SimEngine, SimOptions,
    WorkCharge,
};

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .map(|a| a.parse::<usize>().ok());
    let mut next = |default| args.next().flatten().unwrap_or(default);
    let (p, steps, big_p, big_steps) = (next(1024), next(1000), next(65_536), next(100));
    let lanes = Some(next(0)).filter(|&n| n > 0);
    println!("load average: {}", load_average());
    for engine in [SimEngine::Coroutines, SimEngine::Threads] {
        report(engine, &machine(p), steps, lanes);
    }
    println!("stack guard pages: {:?}", Guards::available());
    let most = coroutines::max_nodes().unwrap_or(usize::MAX);
    if big_p > most {
        println!("vm.max_map_count allows {most} nodes, not {big_p}: running {most}");
    }
    report(
        SimEngine::Coroutines,
        &machine(big_p.min(most)),
        big_steps,
        lanes,
    );
    println!("peak RSS of the process: {:.0} MiB", peak_rss_mib());
}

fn machine(p: usize) -> Machine {
    Platform {
        name: "bench".into(),
        description: String::new(),
        speed_unit: "Mflop/s".into(),
        nodes: (0..p)
            .map(|j| Node::new(format!("n{j}"), 100.0 + j as f64))
            .collect(),
        network: Network::new(1e-9, BarrierCost::constant(1e-5)),
        machine: None,
    }
    .all()
    .expect("valid platform")
}

fn report(engine: SimEngine, machine: &Machine, steps: usize, lanes: Option<usize>) {
    let p = machine.p();
    let options = SimOptions {
        work: WorkCharge::Declared,
        no_trace: true,
        engine,
        lanes,
        ..SimOptions::default()
    };
    let engine = match engine {
        SimEngine::Coroutines => format!("coroutines, {} lanes", coroutines::lanes(&options, p)),
        other => format!("{other:?}"),
    };
    let (start, cpu_start) = (Instant::now(), cpu_time::ProcessTime::now());
    let out = hbsp::run(&Backend::Sim(options), machine, |ctx| {
        let (left, right) = (
            (ctx.pid() + ctx.nprocs() - 1) % ctx.nprocs(),
            (ctx.pid() + 1) % ctx.nprocs(),
        );
        for step in 0..steps {
            ctx.charge_work(1000.0)?;
            ctx.send(left, 0, &[step as u64; 8])?;
            ctx.send(right, 0, &[step as u64; 8])?;
            ctx.sync()?;
            ctx.recv_all::<u64>()?;
        }
        Ok::<_, HbspError>(())
    })
    .expect("simulation runs");
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu_start.elapsed().as_secs_f64();
    println!(
        "sim ({engine}): {p} nodes x {steps} supersteps in {wall:.2} s wall, {cpu:.2} s CPU ({:.0} supersteps/s, {:.2e} node-supersteps/s, {:.2e} per CPU second); virtual time {:.6} s; peak RSS so far {:.0} MiB",
        steps as f64 / wall,
        (p * steps) as f64 / wall,
        (p * steps) as f64 / cpu,
        out.elapsed_s,
        peak_rss_mib()
    );
}

/// `VmHWM` of `/proc/self/status`, MiB (0 where the system does not say).
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
