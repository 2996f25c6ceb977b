//! `hetscale predict`: approach 3 at any scale, instantly — the kernel's time model on the
//! platform's HBSP^1 parameters, solved for the target speed-efficiency on each node set; or,
//! with `--from DB` (a study's stored runs) or `--runs FILE.csv` (runs measured anywhere), the
//! scaling model fitted to measured runs, with 95% intervals.

use crate::output::{out, outln};
use anyhow::Context;
use hetscale_kernels::KernelRegistry;
use hetscale_kernels::MAX_N;
use hetscale_study::StudyError;
use hetscale_study::approaches::predicted::{PredictedStudy, check_replication_fits};
use hetscale_study::calibrate::runs::{MeasuredRun, read_runs};
use hetscale_study::runner::program::Program;
use hetscale_study::scaling::fit::{StudyRuns, pick_study};
use hetscale_study::scaling::prediction::{ModelSummary, ScalingPrediction, UnreachedPoint};
use hetscale_study::scaling::time::TimePrediction;
use hetscale_study::spec::configuration::{ResolvedConfiguration, resolve};
use hetscale_study::store::Store;
use hetscale_study::study::predict_configurations;
use hetscale_study::study::summary::{prediction_verdict, seconds_and_human, trimmed_to};
use hetscale_study::study::warnings::{OPTION_RANGE, with_range_advice};

use super::declared::DeclaredArgs;
use super::run::KernelArgs;

/// Arguments of `hetscale predict`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale predict mm --nodes 4 --nodes 16 --nodes 64 --target 0.3
  hetscale predict ge --nodes 64 --nodes 1024 --replicate 16 --target 0.2 --json
  hetscale predict --from study.db --nodes 'server*2:1,sunblade:63' --replicate 16
  hetscale predict --runs runs.csv --work '400*(n-2)^2' --platform cluster.toml --nodes h1,h2,h3,h4 --target 0.06")]
pub struct Args {
    /// Kernel: mm, ge, conv2d, summa, burg or slalom (not with --from, --runs or --work).
    #[arg(required_unless_present_any = ["from", "runs", "work"])]
    pub kernel: Option<String>,
    /// Fit the scaling model to the measured runs of a study in this database and predict
    /// from it, instead of a kernel's HBSP^1 model.
    #[arg(long, value_name = "DB", conflicts_with = "runs")]
    pub from: Option<String>,
    /// Fit the scaling model to the runs in this CSV file (configuration,nodes,kernel,n,time_s:
    /// one line per run, repetitions on lines of their own), measured on --platform; the
    /// kernel column names a kernel, or, with --work, is the program's name.
    #[arg(long, value_name = "FILE.csv", requires = "platform")]
    pub runs: Option<std::path::PathBuf>,
    /// The declared program (--work ...): with --runs, what the runs measured; alone,
    /// approach 3 on the platform for it.
    #[command(flatten)]
    pub declared: DeclaredArgs,
    /// With --work and no runs: the program's name in the platform's machine model, whose
    /// compute rate and start-up `hetscale calibrate --runs ... --work` fitted to its runs.
    #[arg(long, value_name = "NAME", requires = "work", conflicts_with_all = ["runs", "from"])]
    pub program: Option<String>,
    /// With --runs: the relative tolerance within which a size holds the target E_s (with
    /// --from, default: the study's).
    #[arg(long)]
    pub tolerance: Option<f64>,
    /// With --from: the study to fit (default: the database's only study).
    #[arg(long, value_name = "NAME", requires = "from")]
    pub study: Option<String>,
    /// With --from or --runs: choose the overhead from Extra-P's normal form (and the slowest
    /// node's share, unless the split is declared equal) only, leaving out the program's own
    /// model (T_o,hbsp, T_o,spec): what the runs alone say.
    #[arg(long)]
    pub normal_form: bool,
    /// Platform preset (`hetscale platform list` lists them) or TOML file. Default: sunwulf,
    /// the JPDC paper's machine (a command that runs programs here defaults to local; one that
    /// models a paper, to the paper's machine); with --from, the platform the study ran on.
    #[arg(long)]
    pub platform: Option<String>,
    /// A configuration's node set; repeat for several (e.g. --nodes 64 --nodes 1024).
    #[arg(long, required = true)]
    pub nodes: Vec<String>,
    /// Target speed-efficiency E_s (with --from, default: the study's target).
    #[arg(long, required_unless_present_any = ["from", "time_at"])]
    pub target: Option<f64>,
    /// With --from or --runs: predict the time T at this problem size on each configuration,
    /// with its 95% interval, instead of the size holding the target.
    #[arg(long, value_name = "N", conflicts_with = "target")]
    pub time_at: Option<u64>,
    /// Predict on a hypothetical platform with this many copies of every node (to go beyond
    /// the machine that exists, e.g. 4096 SunBlades).
    #[arg(long, default_value_t = 1)]
    pub replicate: usize,
    /// Smallest problem size searched.
    #[arg(long, default_value_t = 8)]
    pub n_min: u64,
    /// Largest problem size searched.
    #[arg(long, default_value_t = 10_000_000)]
    pub n_max: u64,
    /// Options of the configurable kernels.
    #[command(flatten)]
    pub kernel_options: KernelArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `hetscale predict`.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    check_ranges(args)?;
    if (args.from.is_none() && args.runs.is_none())
        && (args.normal_form || args.tolerance.is_some())
    {
        anyhow::bail!(
            "--normal-form and --tolerance choose how measured runs are fitted: give --from DB or --runs FILE.csv"
        );
    }
    let declared = args.declared.work.is_some();
    if args.time_at.is_some() && args.from.is_none() && args.runs.is_none() && !declared {
        anyhow::bail!(
            "--time-at asks the scaling model fitted to measured runs or a declared program's model: give --from DB, --runs FILE.csv or --work FORMULA (a kernel's HBSP^1 model: hetscale run KERNEL --backend sim)"
        );
    }
    match (&args.from, &args.runs, &args.kernel, args.target) {
        (_, _, Some(kernel), _) if args.from.is_some() || args.runs.is_some() || declared => {
            anyhow::bail!(
                "give one of a KERNEL ({kernel}), a declared program (--work) or measured runs (--from DB, --runs FILE.csv): the runs name their program"
            )
        }
        (Some(db), None, None, _) => run_from(db, args, registry),
        (None, Some(csv), None, target) => run_runs(csv, target, args, registry),
        (None, None, None, target) if declared => run_declared(target, args, registry),
        (None, None, Some(kernel), Some(target)) => run_kernel(kernel, target, args, registry),
        // clap requires the rest.
        _ => {
            anyhow::bail!("give a KERNEL and --target, --from DB, or --runs FILE.csv and --target")
        }
    }
}

/// The checks of the options both ways share.
fn check_ranges(args: &Args) -> anyhow::Result<()> {
    if let Some(target) = args.target {
        anyhow::ensure!(
            target > 0.0 && target < 1.0,
            "--target {target} is not a speed-efficiency: use a value in (0, 1)"
        );
    }
    if let Some(tolerance) = args.tolerance {
        anyhow::ensure!(
            tolerance > 0.0 && tolerance < 0.5,
            "--tolerance {tolerance} is not a relative tolerance: use a value in (0, 0.5), e.g. 0.02"
        );
    }
    if let Some(n) = args.time_at {
        anyhow::ensure!(
            (1..=MAX_N).contains(&n),
            "--time-at {n} is not a problem size: use 1 to {MAX_N} (2^53)"
        );
    }
    anyhow::ensure!(
        args.n_min >= 1 && args.n_max > args.n_min,
        "--n-min {} and --n-max {} give nothing to search: use 1 <= n-min < n-max",
        args.n_min,
        args.n_max
    );
    anyhow::ensure!(
        args.n_max <= MAX_N,
        "--n-max {} is beyond the largest problem size the models take exactly, {MAX_N} (2^53): use a smaller --n-max",
        args.n_max
    );
    Ok(())
}

/// `args.nodes` resolved on `platform` replicated `args.replicate` times.
fn configurations(
    platform: hbsp::Platform,
    args: &Args,
) -> anyhow::Result<(hbsp::Platform, Vec<ResolvedConfiguration>)> {
    check_replication_fits(platform.nodes.len(), args.replicate)?;
    let platform = platform.replicated(args.replicate)?;
    let configs = args
        .nodes
        .iter()
        .map(|nodes| resolve(&platform, nodes, nodes))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            anyhow::anyhow!("{e} (to predict beyond the real machine, add --replicate K)")
        })?;
    Ok((platform, configs))
}

/// `hetscale predict KERNEL`: approach 3 on the platform.
fn run_kernel(
    kernel: &str,
    target: f64,
    args: &Args,
    registry: &KernelRegistry,
) -> anyhow::Result<()> {
    let program = Program::Kernel(args.kernel_options.kernel(kernel, registry)?);
    let platform = super::load_platform(args.platform.as_deref().unwrap_or("sunwulf"), registry)?;
    let (platform, configs) = configurations(platform, args)?;
    let predicted = predict(&program, &configs, target, args)?;
    print_study(
        &predicted,
        kernel,
        "the kernel's HBSP^1 time model",
        &platform,
        args,
    )
}

/// Approach 3's prediction of `name` (a kernel, or a declared program) from `model`, printed.
fn print_study(
    predicted: &Predicted,
    name: &str,
    model: &str,
    platform: &hbsp::Platform,
    args: &Args,
) -> anyhow::Result<()> {
    if args.json {
        let mut value = serde_json::to_value(&predicted.study)?;
        value["unreached"] = serde_json::to_value(&predicted.unreached)?;
        // The inputs, echoed: the points' labels are the node sets too.
        value[if args.declared.work.is_some() {
            "program"
        } else {
            "kernel"
        }] = name.into();
        value["platform"] = platform.name.clone().into();
        value["nodes"] = serde_json::to_value(&args.nodes)?;
        value["replicate"] = args.replicate.into();
        let value = hetscale_study::json::document("predict", "prediction", value);
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        out!("{}", render(name, model, &platform.name, predicted));
    }
    Ok(())
}

/// `hetscale predict --work ...`: approach 3 on the platform for a declared program, its
/// compute rate and start-up --program's in the platform's machine model.
fn run_declared(target: Option<f64>, args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    let program = args
        .declared
        .program(args.program.as_deref())?
        .context("--work is required here")?;
    if program.unmodelled().is_some() {
        anyhow::bail!(
            "approach 3 adds the program's messages and overhead to its compute: give --communication STEPS or --overhead FORMULA (\"0\" if it has none)"
        );
    }
    let platform = super::load_platform(args.platform.as_deref().unwrap_or("sunwulf"), registry)?;
    program.check_calibrated_on(&platform)?;
    let name = args.program.as_deref().unwrap_or("the declared program");
    let (platform, configs) = configurations(platform, args)?;
    let Some(target) = target else {
        let n = args.time_at.context("give --target E or --time-at N")?;
        let points = declared_times(&program, &platform, &configs, n, args.program.as_deref())?;
        let source = RunsSource {
            name: name.to_string(),
            phrase: String::new(),
            json_key: "program",
            json_value: name.to_string(),
        };
        let prediction = serde_json::json!({ "n": n, "points": points });
        return print_prediction(&prediction, &platform, &source, args, |_| {
            render_declared_times(name, &platform.name, n, &points)
        });
    };
    let predicted = predict(&program, &configs, target, args)?;
    print_study(
        &predicted,
        name,
        "the program's declared model",
        &platform,
        args,
    )
}

/// Approach 3's time at one size on one configuration, for a declared program.
#[derive(Debug, serde::Serialize)]
struct DeclaredTime {
    nodes: String,
    p: usize,
    marked_speed_flops: f64,
    n: u64,
    work_flop: f64,
    time_s: f64,
    /// From the calibration's errors on configurations it predicted from smaller ones.
    time_s_ci95: Option<(f64, f64)>,
    speed_efficiency: f64,
}

/// Approach 3's time at size `n` on each configuration for a declared program, with the 95%
/// interval of the errors its calibration made on configurations it predicted from smaller
/// ones (none when the platform holds no calibration of `program`).
fn declared_times(
    program: &Program,
    platform: &hbsp::Platform,
    configs: &[ResolvedConfiguration],
    n: u64,
    name: Option<&str>,
) -> anyhow::Result<Vec<DeclaredTime>> {
    let errors = match (name, &platform.machine) {
        (Some(name), Some(model)) => model.rate(Some(name), None).held_out_errors,
        _ => Vec::new(),
    };
    configs
        .iter()
        .map(|config| {
            let (compute, overhead) = program.model_parts(n as f64, config)?;
            let time_s = compute + overhead;
            let c = &config.configuration;
            let work_flop = program.work(n as f64, c.nodes);
            Ok(DeclaredTime {
                nodes: config.nodes.clone(),
                p: c.nodes,
                marked_speed_flops: c.marked_speed,
                n,
                work_flop,
                time_s,
                time_s_ci95: hetscale_model::fit::interval_from_errors(time_s, &errors),
                speed_efficiency: work_flop / (time_s * c.marked_speed),
            })
        })
        .collect()
}

/// `predict --work ... --time-at N`'s text: a line per configuration.
fn render_declared_times(name: &str, platform: &str, n: u64, points: &[DeclaredTime]) -> String {
    let mut out = format!(
        "Predicted (approach 3, the program's declared model): {name} on {platform}, T at N = {n}\n"
    );
    let header = ["nodes", "p", "C (Mflop/s)", "T [95%]", "E_s"].map(String::from);
    let cells: Vec<[String; 5]> = points
        .iter()
        .map(|point| {
            let interval = point.time_s_ci95.map_or(String::new(), |(lo, hi)| {
                format!(" [{} s, {} s]", compact(lo), compact(hi))
            });
            [
                point.nodes.clone(),
                point.p.to_string(),
                format!("{:.2}", point.marked_speed_flops / 1e6),
                format!("{}{interval}", seconds_and_human(point.time_s)),
                ratio(point.speed_efficiency),
            ]
        })
        .collect();
    out.push_str(&aligned(&header, &cells));
    if points.iter().any(|p| p.time_s_ci95.is_none()) {
        out.push_str("no interval: the platform holds no calibration of the program (hetscale calibrate --runs ... --work ...)\n");
    }
    out
}

/// `hetscale predict --from DB`: the scaling model fitted to a study's runs, asked for the
/// requested configurations.
fn run_from(db: &str, args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    hetscale_out::protect_input("the study database", db);
    let store = Store::open_read_only(std::path::Path::new(db))?;
    let study = pick_study(&store, args.study.as_deref())?;
    let runs = StudyRuns::load(&store, &study, registry)?;
    // A stored study always has a target.
    let target = args.target.or(runs.target);
    // The study's own platform by default: its nodes are the ones the runs measured.
    let platform = match &args.platform {
        Some(name) => super::load_platform(name, registry)?,
        None => runs.platform.clone(),
    };
    let source = RunsSource {
        name: study.clone(),
        phrase: format!("the runs of study \"{study}\" in {db}"),
        json_key: "from",
        json_value: db.to_string(),
    };
    fit_and_predict(runs, platform, target, &source, args)
}

/// `hetscale predict --runs FILE.csv`: the scaling model fitted to runs measured anywhere,
/// on `--platform` (their machine), asked for the requested configurations.
fn run_runs(
    csv: &std::path::Path,
    target: Option<f64>,
    args: &Args,
    registry: &KernelRegistry,
) -> anyhow::Result<()> {
    hetscale_out::protect_input("--runs", csv);
    let measured = read_runs(csv)?;
    let program = program_of_runs(&measured, args, registry)?;
    // clap requires --platform with --runs.
    let platform = super::load_platform(args.platform.as_deref().unwrap_or_default(), registry)?;
    // A study's default tolerance; fit_and_predict applies --tolerance to both sources.
    let runs = StudyRuns::from_measured(
        &measured,
        platform.clone(),
        std::sync::Arc::new(program),
        hetscale_study::spec::DEFAULT_TOLERANCE,
    )?;
    let shown = csv.display().to_string();
    let source = RunsSource {
        name: shown.clone(),
        phrase: format!("the runs in {shown}"),
        json_key: "runs",
        json_value: shown,
    };
    fit_and_predict(runs, platform, target, &source, args)
}

/// The program the runs in a file measured: the kernel their `kernel` column names (one for
/// all), or, with --work, a program known by its work (and overhead) formula.
fn program_of_runs(
    runs: &[MeasuredRun],
    args: &Args,
    registry: &KernelRegistry,
) -> anyhow::Result<Program> {
    let names: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.kernel.as_str()).collect();
    anyhow::ensure!(
        names.len() <= 1,
        "--runs holds runs of several programs ({}): give one program's runs per file",
        names.iter().copied().collect::<Vec<_>>().join(", ")
    );
    match (args.declared.program(None)?, names.first()) {
        (Some(program), _) => Ok(program),
        (None, Some(name)) => Ok(Program::Kernel(
            args.kernel_options.kernel(name, registry).map_err(|e| {
                anyhow::anyhow!(
                    "{e} (for a program that is not a kernel, give its work with --work FORMULA)"
                )
            })?,
        )),
        (None, None) => anyhow::bail!("--runs holds no runs: give one measured run per line"),
    }
}

/// Where the runs of a prediction came from, as the text and JSON name it.
struct RunsSource {
    /// The study's name, or the file's path.
    name: String,
    /// How the text's first line names them.
    phrase: String,
    /// The JSON key echoing the input, and its value.
    json_key: &'static str,
    json_value: String,
}

/// The scaling model fitted to `runs`, asked for `args.nodes` on `platform` (the size
/// holding `target`, or with --time-at the time at a size), printed.
fn fit_and_predict(
    mut runs: StudyRuns,
    platform: hbsp::Platform,
    target: Option<f64>,
    source: &RunsSource,
    args: &Args,
) -> anyhow::Result<()> {
    if let Some(tolerance) = args.tolerance {
        runs.tolerance = tolerance;
    }
    let (platform, configs) = configurations(platform, args)?;
    let selection = runs.fit(&configs, !args.normal_form)?;
    if let Some(n) = args.time_at {
        let prediction = runs.predict_time_at(&source.name, &selection, &configs, n)?;
        return print_prediction(&prediction, &platform, source, args, |p| {
            render_time_at(&source.phrase, &platform.name, p)
        });
    }
    // clap requires --target unless --from (whose study has one) or --time-at.
    let target = target.context("give --target E_s, or --time-at N")?;
    let prediction = runs.predict(
        &source.name,
        &selection,
        &configs,
        target,
        (args.n_min as f64, args.n_max as f64),
    )?;
    print_prediction(&prediction, &platform, source, args, |p| {
        render_from(&source.phrase, &platform.name, p)
    })
}

/// A scaling-model prediction as JSON (the inputs echoed) or as `text` renders it.
fn print_prediction<P: serde::Serialize>(
    prediction: &P,
    platform: &hbsp::Platform,
    source: &RunsSource,
    args: &Args,
    text: impl Fn(&P) -> String,
) -> anyhow::Result<()> {
    if args.json {
        let mut value = serde_json::to_value(prediction)?;
        // The inputs, echoed.
        value[source.json_key] = source.json_value.clone().into();
        value["platform"] = platform.name.clone().into();
        value["nodes"] = serde_json::to_value(&args.nodes)?;
        value["replicate"] = args.replicate.into();
        let value = hetscale_study::json::document("predict", "prediction", value);
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        out!("{}", text(prediction));
    }
    Ok(())
}

/// Approach 3's prediction: the study on the configurations that hold the target in the range,
/// and why each other one does not.
struct Predicted {
    study: PredictedStudy,
    unreached: Vec<UnreachedPoint>,
}

/// The prediction on `configs`. One configuration's answer is worth giving with the others'
/// reasons (as `--runs` gives it); where none holds the target in the range, the first one's
/// reason is the error, naming which of --n-min or --n-max to change.
fn predict(
    program: &Program,
    configs: &[ResolvedConfiguration],
    target: f64,
    args: &Args,
) -> Result<Predicted, StudyError> {
    let on = |configs: &[ResolvedConfiguration]| {
        predict_configurations(program, configs, target, (args.n_min, args.n_max))
    };
    match on(configs) {
        Ok(study) => {
            return Ok(Predicted {
                study,
                unreached: Vec::new(),
            });
        }
        Err(StudyError::Model(_)) => {}
        Err(other) => return Err(other),
    }
    let (mut reached, mut unreached) = (Vec::new(), Vec::new());
    for config in configs {
        match on(std::slice::from_ref(config)) {
            Ok(_) => reached.push(config.clone()),
            Err(StudyError::Model(err)) => unreached.push(unreached_point(config, err)?),
            Err(other) => return Err(other),
        }
    }
    if reached.is_empty() {
        // Every configuration failed alone with a reason: the first is the error.
        let first = unreached.swap_remove(0);
        return Err(StudyError::Configuration {
            configuration: first.nodes,
            message: first.reason,
        });
    }
    Ok(Predicted {
        study: on(&reached)?,
        unreached,
    })
}

/// `config` as a configuration the model brings to the target at no size searched, with the
/// advice of `err`; any other model error as it is.
fn unreached_point(
    config: &ResolvedConfiguration,
    err: hetscale_model::ModelError,
) -> Result<UnreachedPoint, StudyError> {
    let c = &config.configuration;
    let err = with_range_advice(err, &c.label, OPTION_RANGE);
    UnreachedPoint::from_error(&c.label, c.nodes, c.marked_speed, err)
}

fn render(name: &str, model: &str, platform: &str, predicted: &Predicted) -> String {
    let study = &predicted.study;
    let mut out = format!(
        "Predicted (approach 3, {model}): {name} on {platform}, target E_s = {}\n{:<28} {:>6} {:>14} {:>10} {:>12} {:>24} {:>14} {:>13}\n",
        study.target,
        "nodes",
        "p",
        "C (Mflop/s)",
        "N",
        "W (flop)",
        "T",
        "psi(prev,this)",
        "psi(1st,this)"
    );
    for p in &study.points {
        let c = &p.configuration;
        let previous = p
            .psi_from_previous
            .map_or("-".to_string(), |psi| format!("{psi:.4}"));
        out.push_str(&format!(
            "{:<28} {:>6} {:>14.2} {:>10.0} {:>12.4e} {:>24} {:>14} {:>13.4}\n",
            c.label,
            c.nodes,
            c.marked_speed / 1e6,
            p.n,
            p.work,
            seconds_and_human(p.time_s),
            previous,
            p.psi_from_first
        ));
    }
    out.push_str(
        "psi(a, b) = C_b W_a / (C_a W_b): psi(prev,this) between consecutive configurations (the papers' tables), psi(1st,this) from the first.\n",
    );
    out.push_str(&not_reached(&predicted.unreached));
    // The answer last, where the eye lands.
    if let Some(verdict) = prediction_verdict(study) {
        out.push_str(&format!("{verdict}\n"));
    }
    out
}

/// One line per configuration that holds the target at no size searched, with why.
fn not_reached(unreached: &[UnreachedPoint]) -> String {
    unreached
        .iter()
        .map(|u| format!("not reached on {} (p = {}): {}\n", u.nodes, u.p, u.reason))
        .collect()
}

/// `predict --from`'s text: the model and how it was chosen, the prediction per
/// configuration with its intervals, the cautions, and the verdict last.
fn render_from(source: &str, platform: &str, p: &ScalingPrediction) -> String {
    let question = format!("target E_s = {}", p.target);
    let mut out = scaling_heading(source, platform, &question, &p.model);
    for (i, r) in p.runners_up.iter().enumerate() {
        out.push_str(&format!(
            "  runner-up {}: {}  (cross-validated error {:.1}%)\n",
            i + 1,
            r.formula,
            r.cv_error_percent
        ));
    }
    let fitted: Vec<String> = p
        .fitted_on
        .iter()
        .map(|c| format!("{} (p = {}, N {}..{})", c.label, c.p, c.n_min, c.n_max))
        .collect();
    out.push_str(&format!("Fitted on: {}\n", fitted.join(", ")));
    if !p.excluded.is_empty() {
        out.push_str(&format!(
            "Left out of the fit, below the noise floor: {} (each run in --json)\n",
            excluded_by_configuration(&p.excluded)
        ));
    }
    out.push_str(&match p.base.n_reference {
        Some(n) => format!(
            "psi from the largest measured configuration, {} (p = {}, N = {n} by the model)\n",
            p.base.label, p.base.p
        ),
        None => format!(
            "no psi: the model holds E_s = {} at no size on the largest measured configuration, {} (p = {})\n",
            p.target, p.base.label, p.base.p
        ),
    });
    let cells: Vec<[String; 6]> = p
        .points
        .iter()
        .map(|point| {
            let psi = match (point.psi_from_base, point.psi_from_base_ci95) {
                (Some(psi), Some([lo, hi])) => {
                    format!("{} [{}, {}]", ratio(psi), ratio(lo), ratio(hi))
                }
                _ => "-".into(),
            };
            let measured = if point.measured { " (measured)" } else { "" };
            let [lo, hi] = point.time_s_ci95;
            [
                format!("{}{measured}", point.nodes),
                point.p.to_string(),
                format!("{:.2}", point.marked_speed_flops / 1e6),
                format!("{} [{}, {}]", point.n, point.n_ci95[0], point.n_ci95[1]),
                format!(
                    "{} [{} s, {} s]",
                    seconds_and_human(point.time_s),
                    compact(lo),
                    compact(hi)
                ),
                psi,
            ]
        })
        .collect();
    let header = [
        "nodes",
        "p",
        "C (Mflop/s)",
        "N [95%]",
        "T [95%]",
        "psi(base,this) [95%]",
    ]
    .map(String::from);
    out.push_str(&aligned(&header, &cells));
    let cautions = p.points.iter().map(|point| (&point.nodes, &point.cautions));
    out.push_str(&cautions_once(cautions));
    out.push_str(&not_reached(&p.unreached));
    // The answer last, where the eye lands.
    out.push_str(&format!("{}\n", p.verdict));
    out
}

/// The first two lines of a scaling-model prediction: where the runs came from, the question,
/// and the chosen model with its errors.
fn scaling_heading(source: &str, platform: &str, question: &str, model: &ModelSummary) -> String {
    format!(
        "Predicted from {source} (the scaling model fitted to them): on {platform}, {question}\nModel: {}  (cross-validated error {:.1}%, fit error {:.1}%)\n",
        model.formula, model.cv_error_percent, model.fit_error_percent
    )
}

/// `predict --time-at`'s text: the model, the time per configuration with its interval and
/// the speed-efficiency there, the cautions.
fn render_time_at(source: &str, platform: &str, p: &TimePrediction) -> String {
    let question = format!("T at N = {}", p.n);
    let mut out = scaling_heading(source, platform, &question, &p.model);
    let header = ["nodes", "p", "C (Mflop/s)", "T [95%]", "E_s"].map(String::from);
    let cells: Vec<[String; 5]> = p
        .points
        .iter()
        .map(|point| {
            let [lo, hi] = point.time_s_ci95;
            [
                point.nodes.clone(),
                point.p.to_string(),
                format!("{:.2}", point.marked_speed_flops / 1e6),
                format!(
                    "{} [{} s, {} s]",
                    seconds_and_human(point.time_s),
                    compact(lo),
                    compact(hi)
                ),
                ratio(point.speed_efficiency),
            ]
        })
        .collect();
    out.push_str(&aligned(&header, &cells));
    let cautions = p.points.iter().map(|point| (&point.nodes, &point.cautions));
    out.push_str(&cautions_once(cautions));
    out
}

/// Rows under a header, the first column left-aligned and the others right-aligned.
fn aligned<const K: usize>(header: &[String; K], cells: &[[String; K]]) -> String {
    let widths: Vec<usize> = (0..K)
        .map(|i| {
            cells
                .iter()
                .chain(std::iter::once(header))
                .map(|row| row[i].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in std::iter::once(header).chain(cells) {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| match i {
                0 => format!("{cell:<w$}", w = widths[i]),
                _ => format!("{cell:>w$}", w = widths[i]),
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// Each caution once, naming the configurations it is about unless it is about all.
fn cautions_once<'a>(
    points: impl ExactSizeIterator<Item = (&'a String, &'a Vec<String>)>,
) -> String {
    let count = points.len();
    let mut cautions: Vec<(&String, Vec<&str>)> = Vec::new();
    for (nodes, on_point) in points {
        for c in on_point {
            match cautions.iter_mut().find(|(seen, _)| *seen == c) {
                Some((_, on)) => on.push(nodes),
                None => cautions.push((c, vec![nodes])),
            }
        }
    }
    let mut out = String::new();
    for (c, on) in cautions {
        if on.len() == count {
            out.push_str(&format!("caution: {c}\n"));
        } else {
            out.push_str(&format!("caution on {}: {c}\n", on.join(", ")));
        }
    }
    out
}

/// A time in seconds as read at a glance: 4 significant digits, an exponent from 1e6 s up.
fn compact(seconds: f64) -> String {
    if seconds.abs() >= 1e6 {
        format!("{seconds:.3e}")
    } else {
        trimmed_to(seconds, 4)
    }
}

/// A ratio (psi) to 3 significant digits, with an exponent below 0.001.
fn ratio(value: f64) -> String {
    if value == 0.0 || value.abs() >= 1e-3 {
        trimmed_to(value, 3)
    } else {
        format!("{value:.2e}")
    }
}

/// The runs left out of the fit, one phrase per configuration (`C_1: 12 runs, N 8..160,
/// 3.8e-3..9.9e-3 s`): a study can leave out dozens, which one per run would bury.
fn excluded_by_configuration(
    excluded: &[hetscale_study::scaling::prediction::ExcludedRun],
) -> String {
    let mut labels: Vec<&str> = Vec::new();
    for e in excluded {
        if !labels.contains(&e.configuration.as_str()) {
            labels.push(&e.configuration);
        }
    }
    let phrases: Vec<String> = labels
        .iter()
        .map(|&label| {
            let runs: Vec<_> = excluded
                .iter()
                .filter(|e| e.configuration == label)
                .collect();
            let n = runs
                .iter()
                .map(|e| e.n)
                .fold((u64::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
            let t = runs
                .iter()
                .map(|e| e.time_s)
                .fold((f64::INFINITY, 0.0f64), |(lo, hi), t| {
                    (lo.min(t), hi.max(t))
                });
            let count = runs.len();
            let noun = if count == 1 { "run" } else { "runs" };
            let sizes = if n.0 == n.1 {
                format!("at N = {}", n.0)
            } else {
                format!("N {}..{}", n.0, n.1)
            };
            let times = if t.0 == t.1 {
                format!("{:.2e} s", t.0)
            } else {
                format!("{:.2e}..{:.2e} s", t.0, t.1)
            };
            format!("{label}: {count} {noun} {sizes}, {times}")
        })
        .collect();
    phrases.join("; ")
}

#[cfg(test)]
mod excluded_tests {
    use super::excluded_by_configuration;
    use hetscale_study::scaling::prediction::ExcludedRun;

    fn run(configuration: &str, n: u64, time_s: f64) -> ExcludedRun {
        ExcludedRun {
            configuration: configuration.into(),
            n,
            time_s,
            reason: "below the noise floor".into(),
        }
    }

    #[test]
    fn left_out_runs_read_as_one_phrase_per_configuration() {
        let runs = [
            run("C_1", 8, 4e-3),
            run("C_2", 64, 9e-3),
            run("C_1", 160, 9.5e-3),
            run("C_1", 32, 3e-3),
        ];
        assert_eq!(
            excluded_by_configuration(&runs),
            "C_1: 3 runs N 8..160, 3.00e-3..9.50e-3 s; C_2: 1 run at N = 64, 9.00e-3 s"
        );
    }
}
