//! The sim backend at scale: 1024 virtual nodes, 1000 supersteps, each an exchange of small
//! messages with both ring neighbours. Prints the wall time and supersteps per second.
//!
//! `cargo bench -p hbsp --bench sim_scale` (arguments: `[nodes] [supersteps]`).

use std::time::Instant;

use hbsp::{Backend, BarrierCost, HbspError, Network, Node, Platform, SimOptions, WorkCharge};

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with('-'));
    let p: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1024);
    let steps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let platform = Platform {
        name: "bench".into(),
        description: String::new(),
        speed_unit: "Mflop/s".into(),
        nodes: (0..p)
            .map(|j| Node::new(format!("n{j}"), 100.0 + j as f64))
            .collect(),
        network: Network::new(1e-9, BarrierCost::constant(1e-5)),
        machine: None,
    };
    let machine = platform.all().expect("valid platform");
    let options = SimOptions {
        work: WorkCharge::Declared,
        no_trace: true,
        ..SimOptions::default()
    };
    let start = Instant::now();
    let out = hbsp::run(&Backend::Sim(options), &machine, |ctx| {
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
    println!(
        "sim: {p} nodes x {steps} supersteps in {wall:.2} s wall ({:.0} supersteps/s, {:.2e} node-supersteps/s); virtual time {:.6} s",
        steps as f64 / wall,
        (p * steps) as f64 / wall,
        out.elapsed_s
    );
}
