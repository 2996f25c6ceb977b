//! Helpers shared by the reproduction tests.
// Each test file compiles this module on its own and uses only some of it.
#![allow(dead_code)]

use hetscale_kernels::KernelRegistry;
use hetscale_papers::reproduce::{Experiment, Reproduction, reproduce};
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

/// Checks that scaling every validation value (every row off the base configuration) by 1.5
/// moves no value hetscale finds, while the published side does move (so the comparison saw
/// the altered rows).
pub fn check_validation_rows_move_nothing(experiment: &Experiment) {
    let base = experiment.base().to_owned();
    let mut altered = experiment.clone();
    for v in altered
        .values
        .iter_mut()
        .filter(|v| v.configuration != base)
    {
        v.value *= 1.5;
    }
    let tool = |r: &Reproduction| -> Vec<(String, String, Option<f64>)> {
        r.values
            .iter()
            .map(|v| (v.item.clone(), v.approach.clone(), v.tool))
            .collect()
    };
    let published = |r: &Reproduction| r.values.iter().map(|v| v.published).collect::<Vec<_>>();
    let (original, moved) = (run(experiment), run(&altered));
    assert_eq!(tool(&original), tool(&moved));
    assert_ne!(published(&original), published(&moved));
}
