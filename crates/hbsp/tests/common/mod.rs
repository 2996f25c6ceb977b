//! Helpers shared by the integration tests.

#![allow(dead_code)]

pub mod model;

use std::sync::mpsc;
use std::time::Duration;

use hbsp::{
    Backend, BarrierCost, Machine, Network, Node, Platform, SimEngine, SimOptions, WorkCharge,
};

/// A machine whose node `j` has marked speed `speeds[j]` and `r_j = 1 + j / 10`.
pub fn machine(speeds: &[f64]) -> Machine {
    platform(speeds).all().expect("test platform is valid")
}

/// The platform behind [`machine`].
pub fn platform(speeds: &[f64]) -> Platform {
    Platform {
        name: "test".into(),
        description: String::new(),
        speed_unit: "Mflop/s".into(),
        nodes: speeds
            .iter()
            .enumerate()
            .map(|(j, &s)| Node::new(format!("n{j}"), s).with_r(1.0 + j as f64 / 10.0))
            .collect(),
        network: Network::new(1e-9, BarrierCost::constant(1e-5)),
        machine: None,
    }
}

/// Uneven speeds for `p` nodes, including a very slow node so small `n` gives zero shares.
pub fn uneven(p: usize) -> Vec<f64> {
    (0..p)
        .map(|j| [5.0, 1.0, 3.0, 0.01, 2.5, 4.0, 0.5, 7.0, 1.5][j % 9])
        .collect()
}

/// Runs `f` on another thread and fails the test if it takes longer than five seconds:
/// a hang becomes a failure instead of a stuck test run.
pub fn within_5s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("run did not finish within 5 s: it hangs")
}

/// The sim backend with `options` on each of its engines: sim tests run on both.
pub fn sim_engines(options: SimOptions) -> [Backend; 2] {
    [SimEngine::Coroutines, SimEngine::Threads].map(|engine| {
        Backend::Sim(SimOptions {
            engine,
            ..options.clone()
        })
    })
}

/// The deterministic sim backend (declared work only) on each engine.
pub fn sim_declared() -> [Backend; 2] {
    sim_engines(SimOptions {
        work: WorkCharge::Declared,
        ..SimOptions::default()
    })
}

/// The default sim backend on each engine.
pub fn sim() -> [Backend; 2] {
    sim_engines(SimOptions::default())
}

/// Virtual time of `program` on `machine` with declared work, checked to be the same bit for
/// bit on both sim engines.
pub fn sim_elapsed<T, E, F>(machine: &Machine, program: F) -> f64
where
    F: Fn(&mut hbsp::Ctx<'_>) -> Result<T, E> + Sync,
    T: hbsp::NodeResult,
    E: std::fmt::Display,
{
    let [coroutines, threads] = sim_declared().map(|backend| {
        hbsp::run(&backend, machine, &program)
            .unwrap_or_else(|err| panic!("{backend:?}: {err}"))
            .elapsed_s
    });
    assert_eq!(
        coroutines.to_bits(),
        threads.to_bits(),
        "{coroutines} vs {threads}"
    );
    coroutines
}
