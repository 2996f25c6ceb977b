//! `fit_linear`: weighted least squares with standard errors and 95% intervals, and its
//! one-line refusals of runs that cannot identify a parameter.

use hetscale_model::fit::{LinearFit, fit_linear};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{ContinuousCDF, Normal};

/// `T(N) = compute_s_per_flop W(N) + overhead_s_per_n N + run_overhead_s`, sampled at
/// `N = 100, 200, ..`: the shape of a calibration.
fn design(runs: usize) -> Vec<Vec<f64>> {
    let n: Vec<f64> = (1..=runs).map(|i| 100.0 * i as f64).collect();
    vec![
        n.iter().map(|n| 2.0 / 3.0 * n * n * n).collect(),
        n.clone(),
        vec![1.0; runs],
    ]
}

const NAMES: [&str; 3] = ["compute_s_per_flop", "overhead_s_per_n", "run_overhead_s"];
const TRUTH: [f64; 3] = [2e-8, 3e-4, 0.05];

fn evaluate(columns: &[Vec<f64>], coefficients: &[f64]) -> Vec<f64> {
    (0..columns[0].len())
        .map(|i| {
            columns
                .iter()
                .zip(coefficients)
                .map(|(c, b)| b * c[i])
                .sum()
        })
        .collect()
}

fn estimates(fit: &LinearFit) -> Vec<f64> {
    fit.parameters.iter().map(|p| p.estimate).collect()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

#[test]
fn noiseless_runs_give_the_coefficients_with_zero_width_intervals() {
    let columns = design(6);
    let y = evaluate(&columns, &TRUTH);
    let fit = fit_linear(&NAMES, &columns, &y, None).unwrap();
    assert_eq!(fit.dof, 3);
    for (p, (name, truth)) in fit.parameters.iter().zip(NAMES.iter().zip(TRUTH)) {
        assert_eq!(p.name, *name);
        assert!(close(p.estimate, truth, 1e-9), "{p:?}");
        let se = p.std_error.unwrap();
        assert!(se <= 1e-9 * truth, "{p:?}");
        let (lo, hi) = p.ci95.unwrap();
        assert!(
            lo <= p.estimate && p.estimate <= hi && hi - lo <= 1e-8 * truth,
            "{p:?}"
        );
    }
    assert!(fit.residuals.iter().all(|r| r.abs() <= 1e-12 * y[5]));
    assert!(fit.fitted.iter().zip(&y).all(|(f, y)| close(*f, *y, 1e-12)));
    assert!((fit.quality.r_squared - 1.0).abs() < 1e-12 && fit.quality.samples == 6);
}

#[test]
fn exactly_determined_fits_have_no_intervals() {
    let columns = design(3);
    let y = evaluate(&columns, &TRUTH);
    let fit = fit_linear(&NAMES, &columns, &y, None).unwrap();
    assert_eq!(fit.dof, 0);
    for (p, truth) in fit.parameters.iter().zip(TRUTH) {
        assert!(close(p.estimate, truth, 1e-9), "{p:?}");
        assert_eq!((p.std_error, p.ci95), (None, None));
    }
    let json = serde_json::to_value(&fit.parameters[0]).unwrap();
    assert!(
        json["std_error"].is_null() && json["ci95"].is_null(),
        "{json}"
    );
}

#[test]
fn intervals_are_the_student_t_ones_around_the_estimate() {
    // Four runs near a line: (0, 1), (1, 4), (2, 5), (3, 7).
    let x = vec![0.0, 1.0, 2.0, 3.0];
    let y = [1.0, 4.0, 5.0, 7.0];
    let fit = fit_linear(&["a", "b"], &[vec![1.0; 4], x], &y, None).unwrap();
    // Closed form: b = S_xy / S_xx = 9.5 / 5 = 1.9, a = mean y - b mean x = 4.25 - 2.85 = 1.4,
    // SSR = 0.7, s^2 = 0.35, se(b) = sqrt(s^2 / S_xx) = sqrt(0.07), t_{0.975, 2} = 4.302653.
    let b = &fit.parameters[1];
    assert!(close(b.estimate, 1.9, 1e-12) && close(fit.parameters[0].estimate, 1.4, 1e-12));
    assert!(close(b.std_error.unwrap(), 0.07f64.sqrt(), 1e-12), "{b:?}");
    let half = 4.302_652_729_911_275 * 0.07f64.sqrt();
    let (lo, hi) = b.ci95.unwrap();
    assert!(
        close(lo, 1.9 - half, 1e-9) && close(hi, 1.9 + half, 1e-9),
        "{b:?}"
    );
    assert!(close(fit.quality.rmse, (0.7f64 / 4.0).sqrt(), 1e-12));
}

/// Standard Gaussian samples by inverting the normal CDF of uniform draws.
fn gaussian(rng: &mut ChaCha8Rng, count: usize) -> Vec<f64> {
    let normal = Normal::standard();
    (0..count)
        .map(|_| normal.inverse_cdf(rng.random_range(1e-12..1.0 - 1e-12)))
        .collect()
}

#[test]
fn about_95_percent_of_the_intervals_cover_the_truth() {
    let columns = design(8);
    let exact = evaluate(&columns, &TRUTH);
    let sigma = 0.02 * exact[0];
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let (repetitions, mut covered) = (400, [0usize; 3]);
    for _ in 0..repetitions {
        let noise = gaussian(&mut rng, exact.len());
        let y: Vec<f64> = exact
            .iter()
            .zip(noise)
            .map(|(t, e)| t + sigma * e)
            .collect();
        let fit = fit_linear(&NAMES, &columns, &y, None).unwrap();
        for (count, (p, truth)) in covered.iter_mut().zip(fit.parameters.iter().zip(TRUTH)) {
            let (lo, hi) = p.ci95.unwrap();
            *count += usize::from(lo <= truth && truth <= hi);
        }
    }
    for (count, name) in covered.iter().zip(NAMES) {
        let rate = *count as f64 / repetitions as f64;
        assert!((0.90..=0.99).contains(&rate), "{name}: {rate} covered");
    }
}

#[test]
fn a_weighted_fit_is_the_plain_fit_of_the_weighted_rows() {
    let columns = design(7);
    let y: Vec<f64> = evaluate(&columns, &TRUTH)
        .iter()
        .enumerate()
        .map(|(i, t)| t * (1.0 + 0.03 * (i as f64 * 2.3).sin()))
        .collect();
    // Relative error: each residual divided by its measurement.
    let weights: Vec<f64> = y.iter().map(|y| 1.0 / y).collect();
    let weighted = fit_linear(&NAMES, &columns, &y, Some(&weights)).unwrap();
    let scaled_columns: Vec<Vec<f64>> = columns
        .iter()
        .map(|c| c.iter().zip(&weights).map(|(x, w)| x * w).collect())
        .collect();
    let scaled_y: Vec<f64> = y.iter().zip(&weights).map(|(y, w)| y * w).collect();
    let plain = fit_linear(&NAMES, &scaled_columns, &scaled_y, None).unwrap();
    for (a, b) in weighted.parameters.iter().zip(&plain.parameters) {
        assert!(close(a.estimate, b.estimate, 1e-9), "{a:?} vs {b:?}");
        assert!(close(a.std_error.unwrap(), b.std_error.unwrap(), 1e-9));
        let ((a_lo, a_hi), (b_lo, b_hi)) = (a.ci95.unwrap(), b.ci95.unwrap());
        assert!(
            close(a_lo, b_lo, 1e-9) && close(a_hi, b_hi, 1e-9),
            "{a:?} vs {b:?}"
        );
    }
    // Residuals stay in y's unit; the plain fit's are the weighted ones.
    for ((r, w), scaled) in weighted
        .residuals
        .iter()
        .zip(&weights)
        .zip(&plain.residuals)
    {
        assert!((r * w - scaled).abs() <= 1e-9, "{r} x {w} vs {scaled}");
    }
    let unweighted = fit_linear(&NAMES, &columns, &y, None).unwrap();
    assert!(!close(
        estimates(&unweighted)[2],
        estimates(&weighted)[2],
        1e-3
    ));
}

fn error(columns: &[Vec<f64>], y: &[f64], weights: Option<&[f64]>) -> String {
    let names = &NAMES[..columns.len()];
    let message = fit_linear(names, columns, y, weights)
        .unwrap_err()
        .to_string();
    assert!(!message.contains('\n'), "{message}");
    message
}

#[test]
fn fewer_runs_than_parameters_is_an_error_saying_how_many() {
    let columns: Vec<Vec<f64>> = design(2);
    assert_eq!(
        error(&columns, &[1.0, 2.0], None),
        "calibrating 3 parameters needs at least 3 runs, got 2: add runs at other sizes or fix a parameter"
    );
}

#[test]
fn a_parameter_no_run_depends_on_is_named() {
    let mut columns = design(5);
    columns[2] = vec![0.0; 5];
    assert_eq!(
        error(&columns, &[1.0, 2.0, 3.0, 4.0, 5.0], None),
        "parameter \"run_overhead_s\" is not identified by these runs: it multiplies 0 in every run; add runs in which it matters or fix it"
    );
}

#[test]
fn dependent_columns_name_the_later_parameter_and_what_it_repeats() {
    // The third column is 0.5 x the second: the overhead per N and the start-up cannot be
    // told apart.
    let mut columns = design(5);
    columns[2] = columns[1].iter().map(|n| 0.5 * n).collect();
    assert_eq!(
        error(&columns, &[1.0, 2.0, 3.0, 4.0, 5.0], None),
        "parameter \"run_overhead_s\" is not identified by these runs: its column is a linear combination of those of \"overhead_s_per_n\"; add runs that vary them independently or fix one of them"
    );
    // A combination of two earlier columns, at very different scales.
    let mut columns = design(6);
    columns[2] = columns[0]
        .iter()
        .zip(&columns[1])
        .map(|(w, n)| 1e-6 * w - 3.0 * n)
        .collect();
    assert!(
        error(&columns, &[1.0; 6], None).starts_with(
            "parameter \"run_overhead_s\" is not identified by these runs: its column is a linear combination of those of \"compute_s_per_flop\", \"overhead_s_per_n\";"
        )
    );
}

#[test]
fn non_finite_values_and_bad_weights_are_refused_by_run() {
    let columns = design(4);
    let y = [1.0, 2.0, 3.0, 4.0];
    let mut nan_column = columns.clone();
    nan_column[1][2] = f64::NAN;
    assert_eq!(
        error(&nan_column, &y, None),
        "parameter \"overhead_s_per_n\" multiplies NaN in run 3: every value must be finite"
    );
    assert_eq!(
        error(&columns, &[1.0, f64::INFINITY, 3.0, 4.0], None),
        "the measured value of run 2 is inf: every value must be finite"
    );
    for bad in [0.0, -1.0, f64::NAN] {
        assert_eq!(
            error(&columns, &y, Some(&[1.0, 1.0, 1.0, bad])),
            format!("the weight of run 4 is {bad}: weights must be positive and finite")
        );
    }
    assert_eq!(
        error(&columns, &y, Some(&[1.0])),
        "1 weights for 4 runs: give one weight per run"
    );
    assert_eq!(
        error(&columns, &y[..3], None),
        "parameter \"compute_s_per_flop\" has 4 values for 3 runs: give one value per run"
    );
    let message = fit_linear(&["a"], &columns, &y, None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        "1 parameter names for 3 columns: name every column"
    );
    assert_eq!(
        fit_linear(&[], &[], &y, None).unwrap_err().to_string(),
        "nothing to fit: give at least one parameter"
    );
}

#[test]
fn huge_values_do_not_overflow_the_intervals() {
    let columns = vec![vec![1e200, 2e200, 3e200, 4e200], vec![1.0; 4]];
    let y = [3e200, 5e200, 7.5e200, 9e200];
    let fit = fit_linear(&["a", "b"], &columns, &y, None).unwrap();
    for p in &fit.parameters {
        let (lo, hi) = p.ci95.unwrap();
        assert!(
            p.std_error.unwrap().is_finite() && lo.is_finite() && hi.is_finite(),
            "{p:?}"
        );
    }
    assert!(
        close(fit.parameters[0].estimate, 2.05, 1e-12),
        "{:?}",
        fit.parameters
    );
}

proptest! {
    #[test]
    fn weighted_residuals_are_orthogonal_to_the_columns(
        rows in prop::collection::vec(
            (prop::collection::vec(-100.0f64..100.0, 3), -1e3f64..1e3, 0.1f64..10.0),
            4..20,
        ),
    ) {
        let columns: Vec<Vec<f64>> =
            (0..3).map(|j| rows.iter().map(|r| r.0[j]).collect()).collect();
        let y: Vec<f64> = rows.iter().map(|r| r.1).collect();
        let w: Vec<f64> = rows.iter().map(|r| r.2).collect();
        let fit = fit_linear(&["a", "b", "c"], &columns, &y, Some(&w));
        // Random rows may be (nearly) dependent; that refusal is tested above.
        prop_assume!(fit.is_ok());
        let fit = fit.unwrap();
        let norm = |v: &mut dyn Iterator<Item = f64>| v.map(|x| x * x).sum::<f64>().sqrt();
        let y_norm = norm(&mut y.iter().zip(&w).map(|(y, w)| y * w));
        for column in &columns {
            let dot: f64 = (0..y.len()).map(|i| w[i] * w[i] * fit.residuals[i] * column[i]).sum();
            let column_norm = norm(&mut column.iter().zip(&w).map(|(x, w)| x * w));
            prop_assert!(dot.abs() <= 1e-9 * y_norm * column_norm, "{dot}");
        }
        let sum: Vec<f64> = fit.fitted.iter().zip(&fit.residuals).map(|(f, r)| f + r).collect();
        prop_assert!(sum.iter().zip(&y).all(|(s, y)| (s - y).abs() <= 1e-9 * y_norm));
    }
}
