//! `calibrate` and `reproduce`: parameters recovered from the simulator's own runs, and
//! validation rows that never reach a fit.

use hbsp::Platform;
use hetscale_kernels::{KernelOptions, KernelRegistry};
use hetscale_papers::measurements::Quantity;
use hetscale_papers::reproduce::Experiment;
use hetscale_study::calibrate::runs::MeasuredRun;
use hetscale_study::calibrate::{
    FitChoice, FreeParameter, calibrate, choose_fit, simulate, with_rate,
};

const BOTH: [FreeParameter; 2] = [FreeParameter::RateFraction, FreeParameter::RunOverhead];

fn truth() -> Platform {
    with_rate(&Platform::load("sunwulf").unwrap(), "mm", |rate| {
        rate.rate_fraction = 0.4;
        rate.run_overhead_s = 0.3;
    })
}

fn run(nodes: &str, n: u64) -> MeasuredRun {
    MeasuredRun {
        configuration: nodes.into(),
        nodes: nodes.into(),
        kernel: "mm".into(),
        n,
        time_s: f64::NAN,
    }
}

/// The runs `truth` simulates, each time multiplied by `1 + noise_k`.
fn simulated_runs(noise: &[f64]) -> Vec<MeasuredRun> {
    let registry = KernelRegistry::builtin();
    let sizes = [
        ("server:1,sunfire:1", 48),
        ("server:1,sunfire:1", 96),
        ("server:1,sunblade:1,sunfire:2", 64),
        ("server:1,sunblade:1,sunfire:2", 128),
        ("server:1,sunfire:1", 160),
        ("server:1,sunblade:1,sunfire:2", 200),
    ];
    sizes
        .iter()
        .zip(noise)
        .map(|(&(nodes, n), e)| {
            let mut r = run(nodes, n);
            r.time_s =
                simulate(&truth(), &registry, &KernelOptions::default(), &r).unwrap() * (1.0 + e);
            r
        })
        .collect()
}

#[test]
fn calibrate_recovers_the_simulators_own_parameters() {
    let registry = KernelRegistry::builtin();
    let start = Platform::load("sunwulf").unwrap();
    let exact = calibrate(
        &start,
        &registry,
        &KernelOptions::default(),
        &simulated_runs(&[0.0; 6]),
        &BOTH,
    )
    .unwrap();
    let k = &exact.kernels[0];
    assert!(
        (k.rate_fraction.estimate - 0.4).abs() < 1e-9,
        "{:?}",
        k.rate_fraction
    );
    assert!(
        (k.run_overhead_s.estimate - 0.3).abs() < 1e-9,
        "{:?}",
        k.run_overhead_s
    );
    assert!(k.residuals.iter().all(|r| r.rel_err.abs() < 1e-9));
    // With 3% noise the truth lies within the 95% intervals.
    let noise = [0.03, -0.02, 0.01, -0.03, 0.02, -0.01];
    let noisy = calibrate(
        &start,
        &registry,
        &KernelOptions::default(),
        &simulated_runs(&noise),
        &BOTH,
    )
    .unwrap();
    let k = &noisy.kernels[0];
    let (lo, hi) = k.rate_fraction.ci95.unwrap();
    assert!(lo < 0.4 && 0.4 < hi, "rate_fraction CI [{lo}, {hi}]");
    let (lo, hi) = k.run_overhead_s.ci95.unwrap();
    assert!(lo < 0.3 && 0.3 < hi, "run_overhead_s CI [{lo}, {hi}]");
    assert!(
        (k.rate_fraction.estimate - 0.4).abs() > 1e-6,
        "noise must move the estimate"
    );
    // The platform written carries the fit.
    let rate = noisy
        .platform
        .machine
        .as_ref()
        .unwrap()
        .rate(Some("mm"), Some("sunblade"));
    assert_eq!(rate.rate_fraction, k.rate_fraction.estimate);
}

#[test]
fn too_few_runs_for_the_free_parameters_is_one_line_naming_what_to_do() {
    let registry = KernelRegistry::builtin();
    let start = Platform::load("sunwulf").unwrap();
    let one = simulated_runs(&[0.0]);
    let err = calibrate(&start, &registry, &KernelOptions::default(), &one, &BOTH)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("at least 2 runs") && !err.contains('\n'),
        "{err}"
    );
    // One run still fixes the rate alone.
    let fit = calibrate(
        &start,
        &registry,
        &KernelOptions::default(),
        &one,
        &[FreeParameter::RateFraction],
    )
    .unwrap();
    assert!(fit.kernels[0].rate_fraction.ci95.is_none());
    assert!(!fit.kernels[0].run_overhead_s.fitted);
}

#[test]
fn validation_rows_never_reach_the_calibration() {
    let registry = KernelRegistry::default();
    // Kalinov's and Williams & Parsons' reproductions calibrate on nothing (their inputs are
    // the presets' facts), so they have no calibration runs to check.
    let studies = hetscale_papers::reproduce::EXPERIMENTS
        .into_iter()
        .filter(|id| !hetscale_papers::reproduce::STATEMENT_CHECKS.contains(id));
    for id in studies {
        let experiment = Experiment::named(id).unwrap();
        let platform = Platform::load(&experiment.platform).unwrap();
        let base = experiment.base().to_owned();
        let runs = experiment.calibration_runs(&platform, &registry).unwrap();
        assert!(!runs.is_empty(), "{id}: nothing to calibrate on");
        assert!(
            runs.iter().all(|r| r.configuration == base),
            "{id}: {runs:?}"
        );
        let mut altered = experiment.clone();
        for v in altered
            .values
            .iter_mut()
            .filter(|v| v.configuration != base)
        {
            v.value *= 1.5;
        }
        assert_eq!(
            altered.calibration_runs(&platform, &registry).unwrap(),
            runs,
            "{id}"
        );
        // And the configurations studied are the same: the tool's values cannot move.
        assert_eq!(altered.configurations, experiment.configurations);
        // Changing a base row does move the calibration.
        let mut base_changed = experiment.clone();
        base_changed
            .values
            .iter_mut()
            .filter(|v| {
                v.configuration == base
                    && matches!(v.quantity, Quantity::ProblemSize | Quantity::IsospeedTime)
            })
            .for_each(|v| v.value *= 1.5);
        assert_ne!(
            base_changed.calibration_runs(&platform, &registry).unwrap(),
            runs,
            "{id}"
        );
    }
}

#[test]
fn calibrate_recovers_a_collective_scale_and_a_start_up_per_process() {
    let registry = KernelRegistry::builtin();
    let sunwulf = Platform::load("sunwulf").unwrap();
    let truth = with_rate(&sunwulf, "ge", |rate| {
        rate.rate_fraction = 0.7;
        rate.collective_scale = 0.5;
        rate.process_overhead_s = 0.035;
    });
    // JPDC's C_2 and C_4 (3 and 5 processes): a start-up per process is told apart from
    // one per run only across process counts, which these runs have.
    let runs: Vec<MeasuredRun> = [
        ("server*2:1,sunblade:1", 60),
        ("server*2:1,sunblade:1", 120),
        ("server*2:1,sunblade:1", 200),
        ("server*2:1,sunblade:3", 80),
        ("server*2:1,sunblade:3", 160),
    ]
    .into_iter()
    .map(|(nodes, n)| {
        let mut r = run(nodes, n);
        r.kernel = "ge".into();
        r.time_s = simulate(&truth, &registry, &KernelOptions::default(), &r).unwrap();
        r
    })
    .collect();
    let free = [
        FreeParameter::RateFraction,
        FreeParameter::CollectiveScale,
        FreeParameter::ProcessOverhead,
    ];
    let fit = calibrate(&sunwulf, &registry, &KernelOptions::default(), &runs, &free).unwrap();
    let k = &fit.kernels[0];
    assert!((k.rate_fraction.estimate - 0.7).abs() < 1e-6, "{k:?}");
    assert!((k.collective_scale.estimate - 0.5).abs() < 1e-6, "{k:?}");
    assert!(
        (k.process_overhead_s.estimate - 0.035).abs() < 1e-6,
        "{k:?}"
    );
    assert!(!k.run_overhead_s.fitted);
    // The platform written charges what the truth charges.
    let check = run("server*2:1,sunblade:7", 100);
    let check = MeasuredRun {
        kernel: "ge".into(),
        ..check
    };
    let options = KernelOptions::default();
    let want = simulate(&truth, &registry, &options, &check).unwrap();
    let got = simulate(&fit.platform, &registry, &options, &check).unwrap();
    assert!((got - want).abs() < 1e-9 * want, "{got} vs {want}");
}

#[test]
fn calibrate_recovers_an_average_unit_speed_curve() {
    let registry = KernelRegistry::builtin();
    let ncube = Platform::load("ncube2").unwrap();
    let truth = with_rate(&ncube, "burg", |rate| {
        rate.rate_fraction = 0.8;
        rate.half_work = 400.0;
    });
    let runs: Vec<MeasuredRun> = [("ncube:1", 200), ("ncube:1", 2000), ("ncube:4", 800)]
        .into_iter()
        .map(|(nodes, n)| {
            let mut r = run(nodes, n);
            r.kernel = "burg".into();
            r.time_s = simulate(&truth, &registry, &KernelOptions::default(), &r).unwrap();
            r
        })
        .collect();
    let free = [FreeParameter::RateFraction, FreeParameter::HalfWork];
    let fit = calibrate(&ncube, &registry, &KernelOptions::default(), &runs, &free).unwrap();
    let k = &fit.kernels[0];
    assert!((k.rate_fraction.estimate - 0.8).abs() < 1e-6, "{k:?}");
    assert!((k.half_work.estimate - 400.0).abs() < 1e-3, "{k:?}");
    assert!(!k.run_overhead_s.fitted);
    // A small one-node run is slower per operation than a large one: mu(W) grows with W.
    let (small, large) = (&runs[0], &runs[1]);
    assert!(small.time_s / 200.0 > large.time_s / 2000.0);
}

#[test]
fn the_leave_one_out_error_is_the_refit_without_each_run_predicting_it() {
    let registry = KernelRegistry::builtin();
    let options = KernelOptions::default();
    let start = Platform::load("sunwulf").unwrap();
    let runs = simulated_runs(&[0.08, -0.05, 0.03, -0.07, 0.06, -0.02]);
    let fit = calibrate(&start, &registry, &options, &runs, &BOTH).unwrap();
    let cv = fit.kernels[0].cross_validation.as_ref().unwrap();
    assert_eq!(cv.rel_errors.len(), runs.len());
    for (i, left_out) in runs.iter().enumerate() {
        let mut others = runs.clone();
        others.remove(i);
        let refit = calibrate(&start, &registry, &options, &others, &BOTH).unwrap();
        let predicted = simulate(&refit.platform, &registry, &options, left_out).unwrap();
        let expected = (predicted - left_out.time_s) / left_out.time_s;
        assert!(
            (cv.rel_errors[i] - expected).abs() < 1e-9,
            "run {i}: {} vs {expected}",
            cv.rel_errors[i]
        );
    }
    let largest = cv.rel_errors.iter().fold(0.0_f64, |m, e| m.max(e.abs()));
    assert_eq!(cv.max_abs, largest);
    assert!(cv.rms > 0.0 && cv.rms <= cv.max_abs);
    // Noise-free runs of the same model leave nothing to mispredict.
    let exact = calibrate(
        &start,
        &registry,
        &options,
        &simulated_runs(&[0.0; 6]),
        &BOTH,
    )
    .unwrap();
    assert!(exact.kernels[0].cross_validation.as_ref().unwrap().max_abs < 1e-9);
    // With no run to spare there is nothing to cross-validate.
    let two = calibrate(&start, &registry, &options, &runs[..2], &BOTH).unwrap();
    assert!(two.kernels[0].cross_validation.is_none());
}

#[test]
fn fit_auto_ranks_every_identified_choice_by_leave_one_out_and_fits_the_best() {
    let registry = KernelRegistry::builtin();
    let options = KernelOptions::default();
    let start = Platform::load("sunwulf").unwrap();
    let runs = simulated_runs(&[0.02, -0.01, 0.015, -0.02, 0.01, -0.015]);
    let (best, ranking) = choose_fit(&start, &registry, &options, &runs).unwrap();
    assert!(ranking.len() > 3, "{ranking:?}");
    assert!(
        ranking
            .windows(2)
            .all(|w| w[0].cross_validation.rms <= w[1].cross_validation.rms + 1e-6),
        "{ranking:?}"
    );
    // The best choice is what calibrate fits with those parameters.
    let free: Vec<FreeParameter> = ranking[0]
        .fit
        .iter()
        .map(|name| FreeParameter::parse(name).unwrap())
        .collect();
    assert_eq!(
        calibrate(&start, &registry, &options, &runs, &free).unwrap(),
        best
    );
    // The truth's own choice (rate and start-up) is among the choices, scored as its own
    // cross-validation, and no better than the best.
    let both = ranking
        .iter()
        .find(|c| c.fit == ["rate_fraction", "run_overhead_s"])
        .unwrap();
    let fit = calibrate(&start, &registry, &options, &runs, &BOTH).unwrap();
    assert_eq!(
        &both.cross_validation,
        fit.kernels[0].cross_validation.as_ref().unwrap()
    );
    assert!(ranking[0].cross_validation.rms <= both.cross_validation.rms + 1e-6);
    // One run leaves nothing to cross-validate.
    let err = choose_fit(&start, &registry, &options, &runs[..1])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--fit auto") && err.contains("1 run(s)"),
        "{err}"
    );
}

#[test]
fn fit_auto_lets_each_kernel_choose_on_its_own_runs() {
    let registry = KernelRegistry::builtin();
    let start = Platform::load("sunwulf").unwrap();
    let ge = Experiment::named("jpdc-ge").unwrap();
    let mut runs = ge.calibration_runs(&start, &registry).unwrap();
    runs.extend(simulated_runs(&[0.02, -0.01, 0.015, -0.02, 0.01, -0.015]));
    let (fit, ranking) = choose_fit(&start, &registry, &ge.options, &runs).unwrap();
    let kernels: Vec<&str> = fit.kernels.iter().map(|k| k.kernel.as_str()).collect();
    assert_eq!(kernels, ["ge", "mm"]);
    for (k, kernel) in fit.kernels.iter().zip(kernels) {
        let own: Vec<_> = ranking.iter().filter(|c| c.kernel == kernel).collect();
        assert!(!own.is_empty(), "{kernel}");
        // Each kernel's fit is its own ranking's best.
        assert_eq!(k.cross_validation.as_ref(), Some(&own[0].cross_validation));
    }
    // GE's base runs choose what `reproduce` fits them with; MM's, independently, another.
    let best = |kernel: &str| &ranking.iter().find(|c| c.kernel == kernel).unwrap().fit;
    assert_eq!(
        best("ge"),
        &["rate_fraction", "process_overhead_s", "collective_scale"]
    );
    assert_ne!(best("mm"), best("ge"));
}

#[test]
fn fit_auto_says_when_a_rule_not_the_runs_broke_a_tie() {
    // GE's base runs identify two choices of three parameters at the same leave-one-out error.
    let registry = KernelRegistry::builtin();
    let start = Platform::load("sunwulf").unwrap();
    let ge = Experiment::named("jpdc-ge").unwrap();
    let runs = ge.calibration_runs(&start, &registry).unwrap();
    let (_, ranking) = choose_fit(&start, &registry, &ge.options, &runs).unwrap();
    let tied: Vec<&FitChoice> = ranking.iter().filter(|c| c.tied).collect();
    assert!(tied.len() >= 2, "{ranking:#?}");
    assert!(ranking.iter().take(tied.len()).all(|c| c.tied));
    let rule = ranking[0].tie_break.as_deref().unwrap();
    assert!(
        rule.starts_with(&format!("{} choices tie at leave-one-out rms", tied.len()))
            && rule.contains("chosen by a rule, not by the runs"),
        "{rule}"
    );
    assert!(ranking[1..].iter().all(|c| c.tie_break.is_none()));
}

#[test]
fn many_runs_leave_out_a_few_spread_evenly_so_a_large_file_fits_in_seconds() {
    let registry = KernelRegistry::builtin();
    let options = KernelOptions::default();
    let start = Platform::load("sunwulf").unwrap();
    // 6000 runs: each left out in turn was 6000 fits of 5999 runs; a few are left out now.
    let noise: Vec<f64> = (0..6).map(|k| 0.01 * (k as f64 - 2.5)).collect();
    let some = simulated_runs(&noise);
    let runs: Vec<MeasuredRun> = some.iter().cycle().take(6000).cloned().collect();
    let fit = calibrate(&start, &registry, &options, &runs, &BOTH).unwrap();
    let cv = fit.kernels[0].cross_validation.as_ref().unwrap();
    assert_eq!(
        cv.rel_errors.len(),
        30,
        "a few runs left out, not all {}",
        runs.len()
    );
    // With so many runs, leaving one out changes the fit by nothing: its error is the residual.
    let residual = |i: usize| fit.kernels[0].residuals[i].rel_err;
    assert!(
        (cv.rel_errors[0] - residual(0)).abs() < 1e-4,
        "{} {}",
        cv.rel_errors[0],
        residual(0)
    );
    assert!(
        (cv.rel_errors[1] - residual(200)).abs() < 1e-4,
        "{} {}",
        cv.rel_errors[1],
        residual(200)
    );
}
