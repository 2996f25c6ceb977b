//! The scaling model recovers known laws from noisy runs and predicts far beyond them.

use hetscale_model::ModelError;
use hetscale_model::scaling::{
    BootstrapOptions, Caution, Configuration, CustomTerm, HypothesisSpace, PredictionTarget, Run,
    ScalingData, SelectOptions, Selection, bootstrap, select,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Node speeds (flop/s) a configuration of `p` nodes takes in turn: heterogeneous.
const POOL: [f64; 8] = [1.0e9, 2.0e9, 1.5e9, 0.8e9, 1.2e9, 2.5e9, 1.0e9, 0.9e9];

fn configuration(p: usize) -> Configuration {
    Configuration::new(
        &format!("p{p}"),
        (0..p).map(|i| POOL[i % POOL.len()]).collect(),
    )
    .unwrap()
}

/// A law `T(n, configuration)` with its work `W(n)`.
struct Law {
    work: fn(f64) -> f64,
    time: fn(f64, f64, &Configuration) -> f64,
}

/// Runs of `law` on `p` nodes at each size, `repetitions` each, times multiplied by
/// `1 + noise * N(0, 1)`.
fn runs(
    law: &Law,
    nodes: &[usize],
    sizes: &[f64],
    repetitions: usize,
    noise: f64,
    seed: u64,
) -> ScalingData {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut data = ScalingData::default();
    for &p in nodes {
        let c = configuration(p);
        for &n in sizes {
            for _ in 0..repetitions {
                let w = (law.work)(n);
                // Box-Muller.
                let (u1, u2): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                let t = (law.time)(n, w, &c) * (1.0 + noise * z);
                data.runs.push(Run::new(&c.label, n, w, t));
            }
        }
        data.configurations.push(c);
    }
    data
}

/// The size at which the law's speed-efficiency is `target` on `c` (bisection on log n).
fn true_size(law: &Law, target: f64, c: &Configuration) -> f64 {
    let e = |n: f64| (law.work)(n) / ((law.time)(n, (law.work)(n), c) * c.marked_speed());
    let (mut lo, mut hi) = (1.0f64, 1e12f64);
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if e(mid) < target { lo = mid } else { hi = mid }
    }
    (lo * hi).sqrt()
}

fn report(s: &Selection) {
    eprintln!(
        "selected {} (cv {:.2}%, fit {:.2}%)",
        s.model, s.model.cv_error_percent, s.model.fit_error_percent
    );
    for (i, r) in s.runners_up.iter().enumerate() {
        eprintln!(
            "  runner-up {} {} (cv {:.2}%)",
            i + 1,
            r,
            r.cv_error_percent
        );
    }
}

const SIZES: [f64; 5] = [200.0, 400.0, 800.0, 1600.0, 3200.0];
const FITTED: [usize; 4] = [1, 2, 4, 8];

/// `T = W/C + 1e-7 n^2 log2(p) + 1e-3 p`, `W = 2 n^3`.
const LAW_1: Law = Law {
    work: |n| 2.0 * n * n * n,
    time: |n, w, c| {
        let p = c.nodes() as f64;
        w / c.marked_speed() + 1e-7 * n * n * p.log2() + 1e-3 * p
    },
};

/// `T = 1.2 W/C + 3e-6 n sqrt(p) + 2e-3`, `W = 10 n^2`.
const LAW_2: Law = Law {
    work: |n| 10.0 * n * n,
    time: |n, w, c| {
        let p = c.nodes() as f64;
        1.2 * w / c.marked_speed() + 3e-6 * n * p.sqrt() + 2e-3
    },
};

fn check_recovered(law: &Law, sizes: &[f64], expected: &[&str], seed: u64) -> Selection {
    let data = runs(law, &FITTED, sizes, 2, 0.03, seed);
    let options = SelectOptions {
        runners_up: 40,
        ..SelectOptions::default()
    };
    let selection = select(&data, &HypothesisSpace::default(), &options).unwrap();
    report(&selection);
    let mut hypothesis = selection.model.hypothesis();
    hypothesis.sort();
    assert_eq!(hypothesis, expected, "{}", selection.model);
    let target = configuration(512);
    let truth = true_size(law, 0.5, &target);
    let n = selection
        .model
        .size_for_efficiency(0.5, &target, &law.work, (10.0, 1e12))
        .unwrap();
    eprintln!(
        "N(E_s = 0.5, p = 512): model {n:.4e}, law {truth:.4e}, error {:+.2}%",
        100.0 * (n / truth - 1.0)
    );
    assert!((n / truth - 1.0).abs() < 0.05, "{n} vs {truth}");
    selection
}

#[test]
fn a_law_in_n_squared_log_p_and_p_is_recovered_and_extrapolates_64x() {
    for seed in [1, 2, 3] {
        check_recovered(&LAW_1, &SIZES, &["n^2 log2(p)", "p"], seed);
    }
}

#[test]
fn a_law_in_n_sqrt_p_and_a_constant_is_recovered_and_extrapolates_64x() {
    let sizes = [1000.0, 2000.0, 4000.0, 8000.0, 16000.0];
    for seed in [3, 5, 6] {
        check_recovered(&LAW_2, &sizes, &["1", "n sqrt(p)"], seed);
    }
}

/// Over 20 seeds: how often the true hypothesis is chosen and the distribution of the error of
/// N at 64x (`cargo test -p hetscale-model --test scaling -- --ignored --nocapture`).
#[test]
#[ignore]
fn recovery_statistics_over_20_seeds() {
    let law2_sizes = [1000.0, 2000.0, 4000.0, 8000.0, 16000.0];
    let options = SelectOptions {
        runners_up: 3000,
        ..SelectOptions::default()
    };
    for (name, law, sizes, truth_h) in [
        (
            "law1",
            &LAW_1,
            &SIZES,
            "T = 1 W/C + 0.001 p + 1e-7 n^2 log2(p)",
        ),
        (
            "law2",
            &LAW_2,
            &law2_sizes,
            "T = 1.2 W/C + 3e-6 n sqrt(p) + 0.002",
        ),
    ] {
        let target = configuration(512);
        let truth = true_size(law, 0.5, &target);
        let hyp = |m: &hetscale_model::scaling::ScalingModel| {
            let mut h = m.hypothesis();
            h.sort();
            h
        };
        let exact = select(
            &runs(law, &FITTED, sizes, 1, 0.0, 0),
            &HypothesisSpace::default(),
            &options,
        )
        .unwrap();
        eprintln!("{name} exact: {}", exact.model);
        let _ = truth_h;
        let (mut ok, mut errs) = (0, vec![]);
        for seed in 1..=20 {
            let data = runs(law, &FITTED, sizes, 2, 0.03, seed);
            let s = select(&data, &HypothesisSpace::default(), &options).unwrap();
            let n = s
                .model
                .size_for_efficiency(0.5, &target, &law.work, (10.0, 1e12))
                .unwrap();
            if hyp(&s.model) == hyp(&exact.model) {
                ok += 1
            } else {
                let rank = s
                    .runners_up
                    .iter()
                    .position(|r| hyp(r) == hyp(&exact.model));
                let cv = rank
                    .map(|r| s.runners_up[r].cv_error_percent)
                    .unwrap_or(f64::NAN);
                eprintln!(
                    "  {name} seed {seed}: {} cv {:.2}% fit {:.2}% N err {:+.1}%; truth rank {rank:?} cv {cv:.2}% fit {:.2}%",
                    s.model,
                    s.model.cv_error_percent,
                    s.model.fit_error_percent,
                    100.0 * (n / truth - 1.0),
                    rank.map(|r| s.runners_up[r].fit_error_percent)
                        .unwrap_or(f64::NAN)
                );
            }
            errs.push((100.0 * (n / truth - 1.0)).abs());
        }
        errs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        eprintln!(
            "{name}: {ok}/20 true; |N err| median {:.2}% p90 {:.1}% max {:.1}%",
            errs[10], errs[18], errs[19]
        );
    }
}
