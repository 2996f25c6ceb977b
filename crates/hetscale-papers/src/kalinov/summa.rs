//! Kalinov's four SUMMA strategies on his cluster (`hetscale reproduce --only kalinov-summa`).
//!
//! Kalinov publishes no measurement, only statements: by his definition (section 2) an
//! algorithm is scalable when its heterogeneous concurrent efficiency `E_he` depends on `n^2`
//! and `p` only through their ratio, and he shows SUMMA scalable under HoHo (eq. 8), HeHo
//! (eq. 9) and HoHe2 (eq. 11) but not under HoHe1 (eq. 10). This reproduction runs the
//! `summa` kernel on the simulated `kalinov` platform for each strategy along `n^2 / p` fixed,
//! from 4 to 256 processors, and judges each series as the model crate's `kalinov-strategies`
//! table does ([`KALINOV_KEEPS_SCALABILITY`]). Nothing is fitted: the platform holds only what
//! the paper states (256 processors, `H = 4`, parallel point-to-point links) and the numbers
//! it leaves open, chosen once; his statements only validate.
//!
//! `E_he = W / (C T)` (his eq. 2 with `T_seq = W / r_seq`, `C = p r_aver`), where `T` is the
//! multiply phase ([`MULTIPLY_PHASE_DETAIL`]): his `T` (eqs. 3-5) starts with the blocks in
//! place. Beside each simulated value, his own equation for the strategy evaluated on the same
//! `n`, speeds, `a` and `b` ([`strategy_efficiency`]) stands as the "published" value.

use super::{KALINOV_KEEPS_SCALABILITY, KALINOV_N2_PER_P};
use hbsp::Platform;
use hetscale_kernels::summa::MULTIPLY_PHASE_DETAIL;
use hetscale_kernels::{KernelOptions, KernelRegistry, flops_per_unit};
use hetscale_model::summa::{Processors, Strategy, SummaNetwork, strategy_efficiency};
use serde::Serialize;

use crate::experiment::ReproducedValue;
use hetscale_study::calibrate::skeleton_run;
use hetscale_study::{Result, StudyError};

/// The experiment's id in [`crate::reproduce::EXPERIMENTS`].
pub const KALINOV_SUMMA: &str = "kalinov-summa";

/// What Kalinov states of a strategy, and where.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Statement {
    /// The strategy.
    pub strategy: Strategy,
    /// Section of the paper.
    pub section: &'static str,
    /// Equation of its efficiency.
    pub equation: &'static str,
    /// Whether he shows it scalable.
    pub scalable: bool,
}

/// His four statements, in his order (sections 3.2, 4.1-4.3; conclusion: "HeHo and HoHe2
/// strategies keep scalability of SUMMA algorithm but HoHe1 does not keep it").
pub const STATEMENTS: [Statement; 4] = [
    Statement {
        strategy: Strategy::HoHo,
        section: "3.2",
        equation: "eq. 8",
        scalable: true,
    },
    Statement {
        strategy: Strategy::HeHo,
        section: "4.1",
        equation: "eq. 9",
        scalable: true,
    },
    Statement {
        strategy: Strategy::HoHe1,
        section: "4.2",
        equation: "eq. 10",
        scalable: false,
    },
    Statement {
        strategy: Strategy::HoHe2,
        section: "4.3",
        equation: "eq. 11",
        scalable: true,
    },
];

/// The runs to make.
#[derive(Debug, Clone, PartialEq)]
pub struct KalinovExperiment {
    /// Preset or platform file.
    pub platform: String,
    /// Processor counts, the first `p` nodes of the platform each.
    pub processors: Vec<usize>,
    /// `n^2 / p`, held fixed.
    pub n2_per_p: f64,
    /// SUMMA panel width.
    pub nb: usize,
}

impl Default for KalinovExperiment {
    fn default() -> Self {
        Self {
            platform: "kalinov".into(),
            processors: vec![4, 16, 64, 256],
            n2_per_p: KALINOV_N2_PER_P,
            nb: 128,
        }
    }
}

/// One run of a strategy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrategyPoint {
    /// Processors.
    pub p: usize,
    /// Matrix order.
    pub n: usize,
    /// `E_he` of the simulated run's multiply phase.
    pub e_he: f64,
    /// `E_he` by Kalinov's equation for the strategy on the same inputs.
    pub equation_e_he: f64,
    /// The process grid, `PxQ`.
    pub grid: String,
}

/// A strategy's series beside his statement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrategySeries {
    /// What he states.
    pub statement: Statement,
    /// One point per processor count.
    pub points: Vec<StrategyPoint>,
    /// `E_he` at the most processors over `E_he` at the fewest.
    pub retained: f64,
    /// Whether hetscale finds it scalable (`retained >= KALINOV_KEEPS_SCALABILITY`).
    pub scalable: bool,
}

impl StrategySeries {
    /// Whether hetscale's verdict is his.
    pub fn agrees(&self) -> bool {
        self.scalable == self.statement.scalable
    }
}

/// The reproduction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KalinovReproduction {
    /// [`KALINOV_SUMMA`].
    pub id: String,
    /// The platform's description.
    pub platform: String,
    /// `n^2 / p` of every run.
    pub n2_per_p: f64,
    /// One per strategy, in [`STATEMENTS`] order.
    pub strategies: Vec<StrategySeries>,
}

/// Runs every strategy at every processor count.
pub fn reproduce_kalinov(
    experiment: &KalinovExperiment,
    registry: &KernelRegistry,
) -> Result<KalinovReproduction> {
    let platform = Platform::load(&experiment.platform)?;
    let strategies = STATEMENTS
        .iter()
        .map(|statement| series(experiment, &platform, registry, *statement))
        .collect::<Result<Vec<_>>>()?;
    Ok(KalinovReproduction {
        id: KALINOV_SUMMA.into(),
        platform: platform.description.clone(),
        n2_per_p: experiment.n2_per_p,
        strategies,
    })
}

fn series(
    experiment: &KalinovExperiment,
    platform: &Platform,
    registry: &KernelRegistry,
    statement: Statement,
) -> Result<StrategySeries> {
    let points = experiment
        .processors
        .iter()
        .map(|&p| run_point(experiment, platform, registry, statement.strategy, p))
        .collect::<Result<Vec<_>>>()?;
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return Err(StudyError::Reproduce(
            "kalinov-summa needs at least one processor count".into(),
        ));
    };
    let retained = last.e_he / first.e_he;
    Ok(StrategySeries {
        statement,
        retained,
        scalable: retained >= KALINOV_KEEPS_SCALABILITY,
        points,
    })
}

/// The order `n = sqrt(n^2/p * p)`, rounded.
fn order(n2_per_p: f64, p: usize) -> Result<usize> {
    let n = (n2_per_p * p as f64).sqrt().round();
    if (1.0..=1e9).contains(&n) {
        Ok(n as usize)
    } else {
        Err(StudyError::Calibration(format!(
            "n^2 / p = {n2_per_p} gives no matrix order at p = {p}: use a positive n^2 / p"
        )))
    }
}

fn run_point(
    experiment: &KalinovExperiment,
    platform: &Platform,
    registry: &KernelRegistry,
    strategy: Strategy,
    p: usize,
) -> Result<StrategyPoint> {
    let n = order(experiment.n2_per_p, p)?;
    let fail = |message: String| StudyError::Configuration {
        configuration: format!("{} p={p}", strategy.name()),
        message: format!("N = {n}: {message}"),
    };
    let flops = flops_per_unit(&platform.speed_unit).ok_or_else(|| {
        fail(format!(
            "speeds in {} are not a flop rate: E_he needs one",
            platform.speed_unit
        ))
    })?;
    let machine = platform
        .select(&p.to_string().parse()?)
        .map_err(|e| fail(e.to_string()))?;
    let options = KernelOptions {
        strategy: strategy.name().into(),
        nb: experiment.nb,
        ..KernelOptions::default()
    };
    let kernel = registry.get("summa", &options)?;
    let run = skeleton_run(kernel.as_ref(), n, &machine).map_err(fail)?;
    let detail = |name: &str| {
        run.details
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
            .ok_or_else(|| fail(format!("the run reports no \"{name}\"")))
    };
    let multiply_s: f64 = detail(MULTIPLY_PHASE_DETAIL)?
        .parse()
        .map_err(|e| fail(format!("{MULTIPLY_PHASE_DETAIL}: {e}")))?;
    let speeds: Vec<f64> = machine
        .nodes()
        .iter()
        .map(|node| node.marked_speed * flops)
        .collect();
    let cluster_flops: f64 = speeds.iter().sum();
    Ok(StrategyPoint {
        p,
        n,
        e_he: run.work / (cluster_flops * multiply_s),
        equation_e_he: equation_e_he(platform, strategy, n, &speeds)?,
        grid: detail("grid")?,
    })
}

/// Kalinov's equation for `strategy`: speeds in element updates (2 flop) per second, `a` the
/// platform's per-message start-up, `b` its time per 8-byte element.
fn equation_e_he(platform: &Platform, strategy: Strategy, n: usize, flops: &[f64]) -> Result<f64> {
    let processors = Processors::new(flops.iter().map(|f| f / 2.0).collect())?;
    let net = SummaNetwork::new(platform.network.o_s, 8.0 * platform.network.g_s_per_byte)?;
    Ok(strategy_efficiency(strategy, n as f64, &processors, net)?)
}

impl KalinovReproduction {
    /// The `--json` rows: per strategy and processor count hetscale's `E_he` beside his
    /// equation's, then per strategy his statement (1 = scalable, 0 = not) beside hetscale's
    /// verdict (their `rel_err` is empty: they agree when the two values are equal).
    pub fn values(&self) -> Vec<ReproducedValue> {
        let mut rows = Vec::new();
        for s in &self.strategies {
            let name = s.statement.strategy.name();
            for point in &s.points {
                rows.push(ReproducedValue {
                    paper: "kalinov".into(),
                    table: s.statement.equation.into(),
                    item: format!("{name} p={} n={}", point.p, point.n),
                    quantity: "E_he".into(),
                    unit: "1".into(),
                    published: point.equation_e_he,
                    tool: Some(point.e_he),
                    approach: "measured".into(),
                    role: "validation".into(),
                    rel_err: Some((point.e_he - point.equation_e_he) / point.equation_e_he),
                });
            }
            let (first, last) = (&s.points[0], &s.points[s.points.len() - 1]);
            let flag = |scalable: bool| if scalable { 1.0 } else { 0.0 };
            rows.push(ReproducedValue {
                paper: "kalinov".into(),
                table: s.statement.section.into(),
                item: format!("{name} scalable p={}..{}", first.p, last.p),
                quantity: "scalable".into(),
                unit: "1 = scalable, 0 = not".into(),
                published: flag(s.statement.scalable),
                tool: Some(flag(s.scalable)),
                approach: "measured".into(),
                role: "validation".into(),
                rel_err: None,
            });
        }
        rows
    }
}
