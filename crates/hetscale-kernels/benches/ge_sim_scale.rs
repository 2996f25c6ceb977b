//! GE on the sim backend as the node count grows: skeleton runs (compute skipped, declared
//! work charged, trace off) of `ge` at one N on 32, 64, ..., P nodes of a two-kind machine,
//! each timed in wall and CPU seconds. Simulating a run is linear in p when the CPU time per
//! node (last column) stays flat.
//!
//! `cargo bench -p hetscale-kernels --bench ge_sim_scale -- [N] [largest p] [block]`
//! (defaults 4096, 1024 and 1). A block `b > 1` runs the blocked program (pivoting none, one
//! broadcast per block of `b` rows); `--block B` says the same, and `--only-largest` runs
//! P alone, e.g. `-- 100000 4096 64 --only-largest`.

use std::time::Instant;

use hbsp::{Backend, BarrierCost, Machine, Network, Node, Platform, SimOptions, WorkCharge};
use hetscale_kernels::ge::{GeKernel, Pivoting};
use hetscale_kernels::kernel::Kernel;

fn main() {
    let (mut positional, mut block, mut only_largest) = (Vec::new(), None, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--block" => block = args.next().and_then(|b| b.parse::<usize>().ok()),
            "--only-largest" => only_largest = true,
            // cargo's own flags (`--bench`).
            a if a.starts_with('-') => {}
            a => positional.push(a.parse::<usize>().ok()),
        }
    }
    let next = |k: usize, default| positional.get(k).copied().flatten().unwrap_or(default);
    let (n, largest) = (next(0, 4096), next(1, 1024));
    let block = block.unwrap_or_else(|| next(2, 1));
    let backend = Backend::Sim(SimOptions {
        work: WorkCharge::Declared,
        skip_compute: true,
        no_trace: true,
        ..SimOptions::default()
    });
    let kernel = if block > 1 {
        GeKernel {
            pivoting: Pivoting::None,
            block,
        }
    } else {
        GeKernel::default()
    };
    let inputs = kernel.skeleton_inputs(n, 1).expect("skeleton inputs");
    println!(
        "ge skeleton on sim, N = {n}, block {block} (pivoting {}); load average {}",
        kernel.pivoting.name(),
        load_average()
    );
    println!(
        "{:>6} {:>10} {:>10} {:>14} {:>16}",
        "p", "wall s", "CPU s", "virtual s", "CPU ms / node"
    );
    let mut p = if only_largest { largest } else { 32 };
    while p <= largest {
        let machine = machine(p);
        let (start, cpu_start) = (Instant::now(), cpu_seconds());
        let run = kernel.run(&inputs, &backend, &machine).expect("ge runs");
        let (wall, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu_start);
        println!(
            "{p:>6} {wall:>10.2} {cpu:>10.2} {:>14.4} {:>16.3}",
            run.time_s,
            1e3 * cpu / p as f64
        );
        p *= 2;
    }
}

/// `p` nodes, every other one twice as fast, on a switched network.
fn machine(p: usize) -> Machine {
    Platform {
        name: "ge-scale".into(),
        description: String::new(),
        speed_unit: "Mflop/s".into(),
        nodes: (0..p)
            .map(|j| Node::new(format!("n{j}"), if j % 2 == 0 { 200.0 } else { 100.0 }))
            .collect(),
        network: Network::new(1e-8, BarrierCost::constant(1e-4)),
        machine: None,
    }
    .all()
    .expect("valid platform")
}

/// CPU seconds this process has used (user + system, from `/proc/self/stat`): on a shared
/// machine the wall time also counts waiting for a core.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces): utime and stime are the 12th
    // and 13th, in clock ticks of 1/100 s.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: f64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<f64>().ok())
        .sum();
    ticks / 100.0
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
