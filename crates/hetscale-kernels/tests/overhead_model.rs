//! Every kernel's time model (compute at marked speed plus its HBSP^1 overhead model, the
//! basis of approach 3) against the simulator, which charges the same HBSP^1 costs per
//! superstep: they must agree closely, or predicted sizes would drift from measured ones.

use hbsp::{Backend, Platform, SimOptions, WorkCharge};
use hetscale_kernels::{KernelOptions, kernel_by_name};

fn skeleton() -> Backend {
    Backend::Sim(SimOptions {
        work: WorkCharge::Declared,
        skip_compute: true,
        ..SimOptions::default()
    })
}

/// Relative error of the model's time against the simulated time.
fn model_error(kernel: &str, options: &KernelOptions, nodes: &str, n: usize) -> f64 {
    let machine = Platform::load("sunwulf")
        .unwrap()
        .select(&nodes.parse().unwrap())
        .unwrap();
    let k = kernel_by_name(kernel, options).unwrap();
    let run = k
        .run(&k.generate(n, 1).unwrap(), &skeleton(), &machine)
        .unwrap();
    let overhead = k.overhead(n, &machine).unwrap();
    let root = machine.marked_speed(machine.ranking()[0]) * 1e6;
    let model = overhead.predicted_time_s(run.work, machine.cluster_speed() * 1e6, root);
    let error = (model - run.time_s) / run.time_s;
    eprintln!(
        "{kernel} {nodes} N = {n}: sim {:.6e} s, model {model:.6e} s, error {:+.2}%",
        run.time_s,
        100.0 * error
    );
    error
}

const MACHINES: [&str; 3] = [
    "server:1,sunfire:1",
    "server:1,sunblade:3,sunfire:4",
    "server*2:1,sunblade:15",
];

fn check(kernel: &str, options: &KernelOptions, sizes: &[usize], bound: f64) {
    let worst = MACHINES
        .iter()
        .flat_map(|nodes| {
            sizes
                .iter()
                .map(move |&n| model_error(kernel, options, nodes, n).abs())
        })
        .fold(0.0, f64::max);
    assert!(
        worst < bound,
        "{kernel}: the model is {:.1}% off the simulator",
        100.0 * worst
    );
}

#[test]
fn mm_model_matches_the_simulator() {
    check("mm", &KernelOptions::default(), &[24, 100, 300], 1e-6);
}

#[test]
fn ge_model_matches_the_simulator() {
    let options = KernelOptions {
        pivoting: "none".into(),
        ..KernelOptions::default()
    };
    check("ge", &options, &[32, 128, 400], 0.05);
    check("ge", &KernelOptions::default(), &[32, 128], 0.05);
}
