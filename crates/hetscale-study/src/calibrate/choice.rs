//! Choosing the free parameters on the runs alone (`hetscale calibrate --fit auto`): every
//! choice the runs identify, fitted and ranked by its leave-one-out error.

use hbsp::Platform;
use hetscale_kernels::{KernelOptions, KernelRegistry};
use serde::Serialize;

use super::fit::{
    CrossValidation, FreeParameter, KernelCalibration, PlatformCalibration, Simulations,
    calibrate_with, runs_by_kernel, with_fit,
};
use super::runs::MeasuredRun;
use crate::error::{Result, StudyError};

/// Every free parameter, in the order `--fit auto` prefers them on a tie (a start-up per
/// process before one per run: on one configuration the runs cannot tell them apart, and
/// across configurations the papers' overheads grow with the processes).
pub const ALL_PARAMETERS: [FreeParameter; 5] = [
    FreeParameter::RateFraction,
    FreeParameter::ProcessOverhead,
    FreeParameter::RunOverhead,
    FreeParameter::HalfWork,
    FreeParameter::CollectiveScale,
];

/// One choice of free parameters, scored on the runs alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitChoice {
    /// The kernel whose runs chose.
    pub kernel: String,
    /// The parameters fitted, by their platform-file names.
    pub fit: Vec<&'static str>,
    /// The fit's leave-one-out error.
    pub cross_validation: CrossValidation,
    /// Whether its leave-one-out rms ties the chosen fit's (to 1e-6): the runs cannot rank
    /// it against the chosen one, a rule did (`TIE_RULE`).
    pub tied: bool,
    /// On the chosen fit, when others tie with it: how many tie and the rule that chose it.
    pub tie_break: Option<String>,
}

/// How `--fit auto` orders choices whose leave-one-out errors tie.
pub const TIE_RULE: &str = "fewer parameters first, then the order rate_fraction, \
    process_overhead_s, run_overhead_s, half_work, collective_scale (a start-up per process \
    before one per run: on one configuration the runs cannot tell them apart)";

/// The choice of free parameters that predicts left-out runs best, for each kernel of the
/// runs (`hetscale calibrate --fit auto`): every non-empty subset of [`ALL_PARAMETERS`] whose
/// fit, and every leave-one-out refit, the kernel's runs identify, ranked by leave-one-out
/// rms (to 1e-6: closer choices tie, and go to fewer parameters, then to
/// [`ALL_PARAMETERS`]' order). Returns the calibration with each kernel's best choice and
/// the rankings, kernel by kernel; an error when a kernel's runs can cross-validate no
/// choice (too few runs).
pub fn choose_fit(
    platform: &Platform,
    registry: &KernelRegistry,
    options: &KernelOptions,
    runs: &[MeasuredRun],
) -> Result<(PlatformCalibration, Vec<FitChoice>)> {
    let simulations = Simulations::new(platform, registry, options);
    let mut calibrated = platform.clone();
    let (mut kernels, mut rankings) = (Vec::new(), Vec::new());
    for (kernel, runs) in runs_by_kernel(runs) {
        let runs: Vec<MeasuredRun> = runs.into_iter().cloned().collect();
        let (fit, ranking) = choose_kernel_fit(&simulations, kernel, &runs)?;
        calibrated = with_fit(&calibrated, &fit);
        kernels.push(fit);
        rankings.extend(ranking);
    }
    calibrated.validate()?;
    Ok((
        PlatformCalibration {
            kernels,
            platform: calibrated,
        },
        rankings,
    ))
}

/// [`choose_fit`] for the runs of one kernel.
fn choose_kernel_fit(
    simulations: &Simulations,
    kernel: &str,
    runs: &[MeasuredRun],
) -> Result<(KernelCalibration, Vec<FitChoice>)> {
    let mut scored = Vec::new();
    for mask in 1u32..(1 << ALL_PARAMETERS.len()) {
        let free: Vec<FreeParameter> = ALL_PARAMETERS
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, p)| *p)
            .collect();
        let Ok(mut fit) = calibrate_with(simulations, runs, &free) else {
            continue;
        };
        let fit = fit.kernels.remove(0);
        let Some(cross_validation) = fit.cross_validation.clone() else {
            continue;
        };
        if cross_validation.rms.is_finite() {
            let choice = FitChoice {
                kernel: kernel.to_owned(),
                fit: free.iter().map(|p| p.name()).collect(),
                cross_validation,
                tied: false,
                tie_break: None,
            };
            scored.push((choice, fit));
        }
    }
    rank(&mut scored);
    let Some((_, best)) = scored.first().cloned() else {
        return Err(StudyError::Calibration(format!(
            "--fit auto: kernel {kernel}: {} run(s) leave no choice of parameters a left-out \
             run can check: add runs at other sizes or name the parameters with --fit",
            runs.len()
        )));
    };
    Ok((best, scored.into_iter().map(|(c, _)| c).collect()))
}

/// A choice's leave-one-out rms as the ranking compares it: to 1e-6, closer ones tie.
fn rms_key(choice: &FitChoice) -> i64 {
    (choice.cross_validation.rms * 1e6).round() as i64
}

/// Orders `scored` best first by leave-one-out rms, ties by [`TIE_RULE`] (the sort is
/// stable and the enumeration follows [`ALL_PARAMETERS`]), and marks the choices tied with
/// the best, saying on the best which rule chose it: a hand-set order must not pass for the
/// runs' verdict.
fn rank<T>(scored: &mut [(FitChoice, T)]) {
    scored.sort_by_key(|(c, _)| (rms_key(c), c.fit.len()));
    let Some(best) = scored.first().map(|(c, _)| rms_key(c)) else {
        return;
    };
    let tied = scored
        .iter()
        .take_while(|(c, _)| rms_key(c) == best)
        .count();
    if tied < 2 {
        return;
    }
    for (choice, _) in &mut scored[..tied] {
        choice.tied = true;
    }
    let chosen = &scored[0].0;
    let fewest_alone = scored[1..tied]
        .iter()
        .all(|(c, _)| c.fit.len() > chosen.fit.len());
    let rule = if fewest_alone {
        "fewer parameters first"
    } else {
        TIE_RULE
    };
    let message = format!(
        "{tied} choices tie at leave-one-out rms {:.4}%: {} was chosen by a rule, not by the \
         runs: {rule}",
        100.0 * chosen.cross_validation.rms,
        chosen.fit.join(",")
    );
    scored[0].0.tie_break = Some(message);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(fit: &[&'static str], rms: f64) -> (FitChoice, ()) {
        let choice = FitChoice {
            kernel: "ge".into(),
            fit: fit.to_vec(),
            cross_validation: CrossValidation {
                rel_errors: vec![rms],
                rms,
                max_abs: rms,
            },
            tied: false,
            tie_break: None,
        };
        (choice, ())
    }

    #[test]
    fn tied_choices_are_marked_and_the_rule_that_broke_them_is_said() {
        // GE's base: two choices of two parameters at 6.3417%, one of three, one worse.
        let mut scored = [
            choice(
                &["rate_fraction", "process_overhead_s", "half_work"],
                0.063417,
            ),
            choice(&["rate_fraction", "process_overhead_s"], 0.063417),
            choice(&["rate_fraction"], 0.09),
            choice(&["rate_fraction", "run_overhead_s"], 0.0634170001),
        ];
        rank(&mut scored);
        let fits: Vec<String> = scored.iter().map(|(c, _)| c.fit.join(",")).collect();
        assert_eq!(
            fits,
            [
                "rate_fraction,process_overhead_s",
                "rate_fraction,run_overhead_s",
                "rate_fraction,process_overhead_s,half_work",
                "rate_fraction"
            ]
        );
        let tied: Vec<bool> = scored.iter().map(|(c, _)| c.tied).collect();
        assert_eq!(tied, [true, true, true, false]);
        let said = scored[0].0.tie_break.as_deref().unwrap();
        assert!(
            said.starts_with("3 choices tie at leave-one-out rms 6.3417%: rate_fraction,process_overhead_s was chosen by a rule")
                && said.contains("then the order rate_fraction, process_overhead_s"),
            "{said}"
        );
        assert!(scored[1..].iter().all(|(c, _)| c.tie_break.is_none()));
        // Fewer parameters alone break a tie: only that rule is named.
        let mut scored = [
            choice(&["rate_fraction", "half_work"], 0.05),
            choice(&["rate_fraction"], 0.05),
        ];
        rank(&mut scored);
        assert!(
            scored[0]
                .0
                .tie_break
                .as_deref()
                .unwrap()
                .ends_with("by the runs: fewer parameters first")
        );
        // No tie, nothing said.
        let mut scored = [
            choice(&["rate_fraction"], 0.05),
            choice(&["half_work"], 0.06),
        ];
        rank(&mut scored);
        assert!(scored.iter().all(|(c, _)| !c.tied && c.tie_break.is_none()));
    }
}
