//! Exports of stored runs: CSV, JSON and Extra-P's text input format.

use crate::error::{Result, StudyError};
use crate::runner::SAMPLE;
use crate::spec::COMMAND_KERNEL;
use crate::spec::StudySpec;
use crate::store::{RunRecord, Store};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Export formats of `hetscale export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One row per run, with a header.
    Csv,
    /// A JSON array of runs.
    Json,
    /// Extra-P's text input format: one study, parameters `p` (or `C_gflops`) and `n`, metric
    /// `time_s`.
    Extrap,
}

impl std::str::FromStr for Format {
    type Err = StudyError;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "csv" => Ok(Self::Csv),
            "json" => Ok(Self::Json),
            "extrap" => Ok(Self::Extrap),
            other => Err(StudyError::Export(format!(
                "unknown format '{other}': use csv, json or extrap"
            ))),
        }
    }
}

/// The runs of `study` (of every study when `None`) in `format`; a study the database does
/// not hold is an error that names the ones it does.
pub fn export(store: &Store, study: Option<&str>, format: Format) -> Result<String> {
    if let Some(name) = study {
        let names = store.studies()?;
        if !names.iter().any(|n| n == name) {
            let held = match names.as_slice() {
                [] => "it holds none".to_string(),
                names => {
                    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                    format!("it holds {}", quoted.join(", "))
                }
            };
            return Err(StudyError::Store {
                path: store.path().to_string(),
                why: format!("has no study \"{name}\": {held}"),
            });
        }
    }
    let runs = store.runs(study)?;
    let node_sets = NodeSets::of(store, &runs)?;
    render_with(&runs, format, &node_sets)
}

/// Renders `runs` in `format`, each configuration's node set taken to be its label (as a
/// command study's is: `--nodes 2` is configuration `2` on node set `2`).
pub fn render(runs: &[RunRecord], format: Format) -> Result<String> {
    render_with(runs, format, &NodeSets::default())
}

fn render_with(runs: &[RunRecord], format: Format, node_sets: &NodeSets) -> Result<String> {
    let rows = || runs.iter().map(|r| ExportedRun::of(r, node_sets));
    match format {
        Format::Csv => csv_text(rows()),
        Format::Json => serde_json::to_value(rows().collect::<Vec<_>>())
            .map(|runs| crate::json::document("export", "runs", runs))
            .and_then(|document| serde_json::to_string_pretty(&document))
            .map_err(|e| StudyError::Export(e.to_string())),
        Format::Extrap => extrap_text(runs),
    }
}

/// What the check of a run's result says, in the `verification` column.
pub mod verification {
    /// The result was checked against the sequential reference and matched.
    pub const PASSED: &str = "passed";
    /// A kernel run whose result was not checked (a sample run; on `sim`, a skeleton that
    /// computes nothing).
    pub const NOT_CHECKED: &str = "not checked";
    /// An external command's run: hetscale cannot check what a program computes.
    pub const NOT_APPLICABLE: &str = "not applicable";
}

/// A run as the CSV and JSON exports write it: the stored run with its configuration's node
/// set (`nodes`, as `--nodes` writes it), node count `p`, and what its verification says.
#[derive(Debug, Serialize)]
struct ExportedRun<'a> {
    study: &'a str,
    purpose: &'a str,
    kernel: &'a str,
    backend: &'a str,
    platform: &'a str,
    configuration: &'a str,
    nodes: &'a str,
    p: u32,
    marked_speed_flops: f64,
    n: u64,
    repetition: u32,
    time_s: f64,
    work_flop: f64,
    speed_efficiency: f64,
    verification: &'static str,
    host: &'a str,
    version: &'a str,
}

impl<'a> ExportedRun<'a> {
    fn of(run: &'a RunRecord, node_sets: &'a NodeSets) -> Self {
        let verification = if run.verified {
            verification::PASSED
        } else if run.kernel == COMMAND_KERNEL {
            verification::NOT_APPLICABLE
        } else {
            verification::NOT_CHECKED
        };
        Self {
            study: &run.study,
            purpose: &run.purpose,
            kernel: &run.kernel,
            backend: &run.backend,
            platform: &run.platform,
            configuration: &run.configuration,
            nodes: node_sets.of_run(run),
            p: run.nodes,
            marked_speed_flops: run.marked_speed,
            n: run.n,
            repetition: run.repetition,
            time_s: run.time_s,
            work_flop: run.work,
            speed_efficiency: run.speed_efficiency,
            verification,
            host: &run.host,
            version: &run.version,
        }
    }
}

/// The node set of each study's configurations, from the specs the studies were registered
/// with: `(study, label) -> node set`.
#[derive(Debug, Default)]
struct NodeSets(BTreeMap<(String, String), String>);

impl NodeSets {
    fn of(store: &Store, runs: &[RunRecord]) -> Result<Self> {
        let studies: BTreeSet<&str> = runs.iter().map(|r| r.study.as_str()).collect();
        let mut sets = BTreeMap::new();
        for study in studies {
            let Some(text) = store.study_spec(study)? else {
                continue;
            };
            // A spec this hetscale cannot read (an older one) leaves the labels in place.
            let Ok(spec) = serde_json::from_str::<StudySpec>(&text) else {
                continue;
            };
            for c in spec.configurations {
                sets.insert((study.to_string(), c.label), c.nodes);
            }
        }
        Ok(Self(sets))
    }

    /// The node set of `run`'s configuration; its label where the spec is unknown.
    fn of_run<'a>(&'a self, run: &'a RunRecord) -> &'a str {
        self.0
            .get(&(run.study.clone(), run.configuration.clone()))
            .map_or(run.configuration.as_str(), String::as_str)
    }
}

fn csv_text<'a>(rows: impl Iterator<Item = ExportedRun<'a>>) -> Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer
            .serialize(row)
            .map_err(|e| StudyError::Export(e.to_string()))?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| StudyError::Export(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| StudyError::Export(e.to_string()))
}

/// Extra-P's text input format holds one list of points that every region must fill, so an
/// export is one study's sample runs (verification runs repeat a sample with real compute and
/// would count twice): one region named after the study, metric `time_s` (seconds), a point
/// per (configuration, N) measured and its repetitions on its `DATA` line.
fn extrap_text(runs: &[RunRecord]) -> Result<String> {
    let samples: Vec<&RunRecord> = runs.iter().filter(|r| r.purpose == SAMPLE).collect();
    let study = single_study(&samples)?;
    let scale = ExtrapScale::of(&samples);
    let mut points: BTreeMap<(u64, u64), Vec<f64>> = BTreeMap::new();
    for run in &samples {
        points
            .entry((scale.key(run), run.n))
            .or_default()
            .push(run.time_s);
    }
    let mut out = String::new();
    if let Some(name) = scale.parameter() {
        let _ = writeln!(out, "PARAMETER {name}");
    }
    out.push_str("PARAMETER n\n\nPOINTS");
    for (key, n) in points.keys() {
        match scale.parameter() {
            Some(_) => {
                let _ = write!(out, " ( {} {n} )", scale.value(*key));
            }
            None => {
                let _ = write!(out, " {n}");
            }
        }
    }
    let _ = writeln!(out, "\n\nREGION {study}\nMETRIC time_s");
    for times in points.values() {
        let values: Vec<String> = times.iter().map(|t| t.to_string()).collect();
        let _ = writeln!(out, "DATA {}", values.join(" "));
    }
    Ok(out)
}

/// What `hetscale export --format extrap --out F` writes beside `F` (as
/// `F.hetscale-model.json`): the scaling model hetscale selects for the exported study
/// ([`crate::scaling::fit`]), so that it can be set beside the model Extra-P fits to the same
/// points. Extra-P models `time_s` in `p` (or `C_gflops`) and `n`; hetscale's model is
/// `T = a W(n)/C + T_o(n, p)`, with the program's `W(n)` and each configuration's marked speed
/// `C`.
#[derive(Debug, Clone, Serialize)]
pub struct ScalingMetadata {
    /// The study, as the Extra-P file's `REGION` names it.
    pub study: String,
    /// The metric modelled, as the Extra-P file's `METRIC` names it.
    pub metric: &'static str,
    /// What the model's variables are, for a reader holding only this file.
    pub variables: BTreeMap<&'static str, &'static str>,
    /// The selected model; `None` when the runs support none (`why_no_model` says why).
    pub model: Option<ExportedModel>,
    /// The next best models by cross-validated error, best first.
    pub runners_up: Vec<ExportedModel>,
    /// Why there is no model (fewer than 2 configurations measured, ...).
    pub why_no_model: Option<String>,
    /// The runs left out of the fit as below the noise floor.
    pub excluded_runs: usize,
}

/// A fitted scaling model as the export's metadata writes it.
#[derive(Debug, Clone, Serialize)]
pub struct ExportedModel {
    /// `T = ...`, as `hetscale predict --from` prints it.
    pub formula: String,
    /// Every term, `W/C` first, with its coefficient and the coefficient's 95% interval.
    pub terms: Vec<ExportedTerm>,
    /// The cross-validated error on the configurations left out, %.
    pub cv_error_percent: f64,
    /// The fit's error on every run, %.
    pub fit_error_percent: f64,
    /// How many configurations it was fitted on.
    pub configurations: usize,
    /// How many runs it was fitted on.
    pub runs: usize,
}

/// One term of an exported model.
#[derive(Debug, Clone, Serialize)]
pub struct ExportedTerm {
    /// The term as the formula writes it (`W/C`, `n p`, ...; `1` for the constant).
    pub term: String,
    /// Its coefficient: `a` for `W/C` (no unit), seconds per unit of the term otherwise.
    pub coefficient: f64,
    /// The coefficient's 95% interval, `[low, high]`; `None` when the runs leave no degree of
    /// freedom.
    pub ci95: Option<[f64; 2]>,
}

impl ExportedModel {
    fn of(model: &hetscale_model::scaling::ScalingModel) -> Self {
        let terms = model
            .terms
            .iter()
            .map(|t| {
                let name = t.term.to_string();
                ExportedTerm {
                    // The constant prints as nothing after its coefficient in the formula.
                    term: if name.is_empty() { "1".into() } else { name },
                    coefficient: t.coefficient,
                    ci95: t.ci95.map(|(low, high)| [low, high]),
                }
            })
            .collect();
        Self {
            formula: model.formula.clone(),
            terms,
            cv_error_percent: model.cv_error_percent,
            fit_error_percent: model.fit_error_percent,
            configurations: model.configurations,
            runs: model.runs,
        }
    }
}

/// The scaling model of the study an Extra-P export of `study` holds (the same one study
/// [`export`] picks), fitted as `hetscale predict --from` fits it. Runs that support no model
/// give metadata saying why rather than an error: the Extra-P file is still of use.
pub fn scaling_metadata(
    store: &Store,
    study: Option<&str>,
    registry: &hetscale_kernels::KernelRegistry,
) -> Result<ScalingMetadata> {
    let runs = store.runs(study)?;
    let samples: Vec<&RunRecord> = runs.iter().filter(|r| r.purpose == SAMPLE).collect();
    let name = single_study(&samples)?.to_string();
    let variables = BTreeMap::from([
        ("T", "time_s, the metric, s"),
        ("W", "the program's work at size n, flop"),
        (
            "C",
            "the configuration's marked speed (the sum of its nodes' marked speeds), flop/s",
        ),
        ("n", "the problem size, Extra-P's parameter n"),
        ("p", "the configuration's node count"),
        (
            "C_min",
            "the slowest node's marked speed of the configuration, flop/s",
        ),
        (
            crate::scaling::fit::OWN_OVERHEAD_KERNEL,
            "the kernel's own HBSP^1 time model on the configuration's machine, minus W/C, s",
        ),
        (
            crate::scaling::fit::OWN_OVERHEAD_COMMAND,
            "the command's overhead formula from its spec, s",
        ),
    ]);
    let fitted = crate::scaling::fit::StudyRuns::load(store, &name, registry)
        .and_then(|runs| runs.fit(&[], true));
    let (model, runners_up, why_no_model, excluded_runs) = match fitted {
        Ok(selection) => (
            Some(ExportedModel::of(&selection.model)),
            selection
                .runners_up
                .iter()
                .take(crate::scaling::fit::RUNNERS_UP)
                .map(ExportedModel::of)
                .collect(),
            None,
            selection.excluded.len(),
        ),
        Err(e) => (None, Vec::new(), Some(e.to_string()), 0),
    };
    Ok(ScalingMetadata {
        study: name,
        metric: "time_s",
        variables,
        model,
        runners_up,
        why_no_model,
        excluded_runs,
    })
}

/// The one study `samples` belong to; none or several is an error saying what to do.
fn single_study<'a>(samples: &[&'a RunRecord]) -> Result<&'a str> {
    let studies: BTreeSet<&str> = samples.iter().map(|r| r.study.as_str()).collect();
    match Vec::from_iter(studies).as_slice() {
        [] => Err(StudyError::Export(
            "no sample runs to export to Extra-P: run the study first".into(),
        )),
        [one] => Ok(one),
        several => {
            let quoted: Vec<String> = several.iter().map(|n| format!("\"{n}\"")).collect();
            Err(StudyError::Export(format!(
                "Extra-P's text format holds one study's points per file and these runs are of {}: \
                 export one with --study NAME",
                quoted.join(", ")
            )))
        }
    }
}

/// The system-size parameter of an Extra-P export: none for one configuration, the node
/// count `p` when it tells the configurations apart, else their marked speed `C`.
enum ExtrapScale {
    Single,
    Nodes,
    MarkedSpeed,
}

impl ExtrapScale {
    fn of(samples: &[&RunRecord]) -> Self {
        let configurations: BTreeMap<&str, (u32, u64)> = samples
            .iter()
            .map(|r| {
                (
                    r.configuration.as_str(),
                    (r.nodes, r.marked_speed.to_bits()),
                )
            })
            .collect();
        let distinct_p: BTreeSet<u32> = configurations.values().map(|(p, _)| *p).collect();
        match configurations.len() {
            0 | 1 => Self::Single,
            n if distinct_p.len() == n => Self::Nodes,
            _ => Self::MarkedSpeed,
        }
    }

    fn parameter(&self) -> Option<&'static str> {
        match self {
            Self::Single => None,
            Self::Nodes => Some("p"),
            Self::MarkedSpeed => Some("C_gflops"),
        }
    }

    /// A key that sorts runs by system size (an f64's bits sort as the value for positives).
    fn key(&self, run: &RunRecord) -> u64 {
        match self {
            Self::Single => 0,
            Self::Nodes => u64::from(run.nodes),
            Self::MarkedSpeed => run.marked_speed.to_bits(),
        }
    }

    fn value(&self, key: u64) -> String {
        match self {
            Self::MarkedSpeed => (f64::from_bits(key) / 1e9).to_string(),
            _ => key.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn runs() -> Vec<RunRecord> {
        let store = Store::open_in_memory().unwrap();
        for (n, rep, t) in [(100, 0, 0.5), (100, 1, 0.25), (200, 0, 1.5)] {
            let mut r = crate::store::tests_support::sample(n, rep);
            r.time_s = t;
            store.record(&r).unwrap();
        }
        store.runs(None).unwrap()
    }

    /// Runs of study `s` on C_2 (p = 2) at N = 100 (twice) and 200, on C_4 (p = 4) at N = 300,
    /// a verification run, and one run of another study.
    fn mixed_runs() -> Vec<RunRecord> {
        let run = |study: &str, purpose: &str, configuration: &str, nodes, n, rep, t| {
            let mut r = crate::store::tests_support::sample(n, rep);
            r.study = study.into();
            r.purpose = purpose.into();
            r.configuration = configuration.into();
            r.nodes = nodes;
            r.time_s = t;
            r
        };
        vec![
            run("s", SAMPLE, "C_2", 2, 100, 0, 0.5),
            run("s", SAMPLE, "C_2", 2, 100, 1, 0.25),
            run("s", SAMPLE, "C_2", 2, 200, 0, 1.5),
            run("s", SAMPLE, "C_4", 4, 300, 0, 2.0),
            run("s", "verification", "C_4", 4, 300, 0, 9.0),
            run("other", SAMPLE, "C_2", 2, 700, 0, 7.0),
        ]
    }

    #[test]
    fn extrap_holds_one_studys_samples_with_data_at_every_point() {
        let runs: Vec<RunRecord> = mixed_runs()
            .into_iter()
            .filter(|r| r.study == "s")
            .collect();
        let text = render(&runs, Format::Extrap).unwrap();
        assert_eq!(
            text,
            "PARAMETER p\nPARAMETER n\n\nPOINTS ( 2 100 ) ( 2 200 ) ( 4 300 )\n\n\
             REGION s\nMETRIC time_s\nDATA 0.5 0.25\nDATA 1.5\nDATA 2\n"
        );
    }

    #[test]
    fn extrap_of_several_studies_says_to_pick_one() {
        let err = render(&mixed_runs(), Format::Extrap)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("these runs are of \"other\", \"s\": export one with --study NAME"),
            "{err}"
        );
        let err = render(&[], Format::Extrap).unwrap_err().to_string();
        assert!(err.contains("no sample runs to export"), "{err}");
    }

    #[test]
    fn extrap_tells_configurations_of_one_node_count_apart_by_marked_speed() {
        let mut runs: Vec<RunRecord> = mixed_runs()
            .into_iter()
            .filter(|r| r.study == "s")
            .collect();
        for r in runs.iter_mut().filter(|r| r.configuration == "C_4") {
            r.nodes = 2;
            r.marked_speed = 1e9;
        }
        let text = render(&runs, Format::Extrap).unwrap();
        assert!(
            text.starts_with(
                "PARAMETER C_gflops\nPARAMETER n\n\nPOINTS ( 0.05733 100 ) ( 0.05733 200 ) ( 1 300 )\n"
            ),
            "{text}"
        );
        let one: Vec<RunRecord> = runs
            .into_iter()
            .filter(|r| r.configuration == "C_2")
            .collect();
        let text = render(&one, Format::Extrap).unwrap();
        assert!(
            text.starts_with("PARAMETER n\n\nPOINTS 100 200\n"),
            "{text}"
        );
    }

    #[test]
    fn a_study_the_database_does_not_hold_is_named_with_those_it_does() {
        let store = Store::open_in_memory().unwrap();
        let err = export(&store, Some("nosuch"), Format::Csv)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("has no study \"nosuch\": it holds none"),
            "{err}"
        );
        store.register_study("ge", "{}", "").unwrap();
        store.register_study("mm", "{}", "").unwrap();
        let err = export(&store, Some("nosuch"), Format::Json)
            .unwrap_err()
            .to_string();
        assert!(err.contains("it holds \"ge\", \"mm\""), "{err}");
        let none: serde_json::Value =
            serde_json::from_str(&export(&store, Some("mm"), Format::Json).unwrap()).unwrap();
        assert_eq!(none["runs"], serde_json::json!([]));
    }

    #[test]
    fn csv_and_json_hold_every_run_with_units_in_the_names() {
        let runs = runs();
        let csv = render(&runs, Format::Csv).unwrap();
        assert_eq!(csv.lines().count(), 4);
        assert!(csv.starts_with(
            "study,purpose,kernel,backend,platform,configuration,nodes,p,marked_speed_flops,n,\
             repetition,time_s,work_flop,speed_efficiency,verification,host,version\n"
        ));
        let json: serde_json::Value =
            serde_json::from_str(&render(&runs, Format::Json).unwrap()).unwrap();
        assert_eq!(
            (&json["kind"], &json["version"]),
            (&"export".into(), &2.into())
        );
        let rows = json["runs"].as_array().unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2]["n"], 200);
        assert_eq!(rows[2]["time_s"], 1.5);
        assert_eq!(rows[2]["work_flop"], 2.0 * 200f64.powi(3));
        assert!("xml".parse::<Format>().is_err());
    }

    /// A command study of `--nodes 1 --nodes 2` on the platform `two`: each run's `nodes` is
    /// its node set and `p` its count, and its verification "not applicable"; a kernel
    /// study's node sets come from its spec.
    #[test]
    fn exports_give_the_node_set_and_what_verification_says() {
        let store = Store::open_in_memory().unwrap();
        let spec = |name: &str, kernel: &str, configurations: &[(&str, &str)]| {
            let configurations: Vec<String> = configurations
                .iter()
                .map(|(label, nodes)| {
                    format!("[[configuration]]\nlabel = \"{label}\"\nnodes = \"{nodes}\"\n")
                })
                .collect();
            let text = format!(
                "name = \"{name}\"\nkernel = \"{kernel}\"\nplatform = \"ucf-cluster\"\nbackend = \"sim\"\ntarget = 0.2\nn_max = 1000\n{}",
                configurations.concat()
            );
            StudySpec::from_toml_str(&text, "test").unwrap().canonical()
        };
        store
            .register_study("k", &spec("k", "mm", &[("C_2", "gromit,chromus")]), "")
            .unwrap();
        store.register_study("cmd", "not a spec", "").unwrap();
        let mut kernel_run = crate::store::tests_support::sample(100, 0);
        kernel_run.study = "k".into();
        kernel_run.verified = false;
        store.record(&kernel_run).unwrap();
        let mut verified = kernel_run.clone();
        verified.purpose = "verification".into();
        verified.verified = true;
        store.record(&verified).unwrap();
        let mut command_run = kernel_run.clone();
        command_run.study = "cmd".into();
        command_run.kernel = COMMAND_KERNEL.into();
        command_run.configuration = "2".into();
        store.record(&command_run).unwrap();

        let json: serde_json::Value =
            serde_json::from_str(&export(&store, None, Format::Json).unwrap()).unwrap();
        let row = |i: usize, key: &str| json["runs"][i][key].clone();
        assert_eq!(row(0, "nodes"), "gromit,chromus");
        assert_eq!(row(0, "p"), 2);
        assert_eq!(row(0, "verification"), verification::NOT_CHECKED);
        assert_eq!(row(1, "verification"), verification::PASSED);
        assert_eq!(row(2, "nodes"), "2");
        assert_eq!(row(2, "p"), 2);
        assert_eq!(row(2, "verification"), verification::NOT_APPLICABLE);
        let csv = export(&store, Some("cmd"), Format::Csv).unwrap();
        assert!(
            csv.lines()
                .nth(1)
                .unwrap()
                .starts_with("cmd,sample,command,sim,sunwulf,2,2,2,57330000.0,100,0,0.5,2000000.0,0.2,not applicable,"),
            "{csv}"
        );
    }
}
