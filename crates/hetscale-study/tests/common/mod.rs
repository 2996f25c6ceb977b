//! Helpers shared by the reproduction tests.
// Each test file compiles this module on its own and uses only some of it.
#![allow(dead_code)]

use hetscale_kernels::KernelRegistry;
use hetscale_study::reproduce::{Experiment, Reproduction, reproduce};
use hetscale_study::runner::Silent;
use hetscale_study::store::Store;

/// Experiment `id` on the configurations labelled `kept` only (and the values that name no
/// other): its smallest system sizes, for a test of a few seconds.
pub fn small(id: &str, kept: &[&str]) -> Experiment {
    let mut experiment = Experiment::named(id).unwrap();
    experiment
        .configurations
        .retain(|(label, _)| kept.contains(&label.as_str()));
    experiment.values.retain(|v| {
        v.configuration
            .split('>')
            .all(|label| kept.contains(&label))
    });
    experiment
}

/// `experiment` reproduced in a scratch directory and an in-memory store.
pub fn run(experiment: &Experiment) -> Reproduction {
    let out = tempfile::tempdir().unwrap();
    let store = Store::open_in_memory().unwrap();
    reproduce(
        experiment,
        &KernelRegistry::builtin(),
        &store,
        &Silent,
        out.path(),
    )
    .unwrap()
}
