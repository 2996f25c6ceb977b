//! Studies on the simulator: the approaches agree, results re-derive from the store alone.

use hbsp::{Backend, Machine};
use hetscale_kernels::mm::MmKernel;
use hetscale_kernels::{Array, Kernel, KernelRegistry, KernelRun, Overhead, Verification};
use hetscale_study::runner::Silent;
use hetscale_study::spec::StudySpec;
use hetscale_study::store::Store;
use hetscale_study::study::{load_results, load_results_with, run_study, run_study_with};

const SPEC: &str = r#"
name = "mm-small"
kernel = "mm"
platform = "sunwulf"
target = 0.2
n_max = 1024

[[configuration]]
label = "C'_2"
nodes = "server:1,sunfire:1"

[[configuration]]
label = "C'_4"
nodes = "server:1,sunblade:1,sunfire:2"

[[configuration]]
label = "C'_8"
nodes = "server:1,sunblade:3,sunfire:4"
"#;

fn spec() -> StudySpec {
    StudySpec::from_toml_str(SPEC, "test").unwrap()
}

/// `spec()` on Sunwulf as HBSP^1 alone (its preset without the machine model): `sim` then
/// charges exactly what the kernel's overhead model replays, so the approaches must agree.
fn hbsp_only_spec(dir: &std::path::Path) -> StudySpec {
    let mut platform = hetscale_machine::presets::sunwulf();
    platform.machine = None;
    let path = dir.join("sunwulf-hbsp.toml");
    platform.write_file(&path).unwrap();
    let mut spec = spec();
    spec.platform = path.display().to_string();
    spec
}

#[test]
fn measured_computed_and_predicted_sizes_agree_where_sim_charges_hbsp_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in_memory().unwrap();
    let result = run_study(&hbsp_only_spec(dir.path()), &store, &Silent).unwrap();
    for row in &result.comparison {
        let measured = row.measured.unwrap();
        for other in [row.computed.unwrap(), row.predicted.unwrap()] {
            // Sizes are integers: allow one size step beside the relative agreement.
            assert!(
                (other - measured).abs() <= 0.05 * measured + 1.0,
                "{}: measured {measured}, other {other}",
                row.configuration
            );
        }
    }
    let measured = result.measured.as_ref().unwrap();
    for p in &measured.points {
        assert!(
            (p.speed_efficiency - 0.2).abs() <= 0.01 * 0.2 + 0.01,
            "{p:?}"
        );
    }
    let psi = measured.psi.as_ref().unwrap();
    assert!(psi.get(0, 1).unwrap() < 1.0 && psi.chaining_violations(1e-9).is_empty());
    let held_out = result.held_out.as_ref().unwrap();
    assert!(held_out.relative_error.abs() < 0.05, "{held_out:?}");
    // Where sim charges HBSP^1 alone the refitted model is the machine: its time at the
    // held-out size is the run's.
    let held_point = measured.point(&held_out.configuration).unwrap();
    assert_eq!(held_out.time_reference_s, held_point.time_s);
    assert!(held_out.time_relative_error.abs() < 0.02, "{held_out:?}");
    assert!(result.verification.as_ref().unwrap().verified);
    assert!(
        result
            .contours
            .iter()
            .any(|c| (c.level - 0.2).abs() < 1e-12 && c.points.len() == 3)
    );
}

/// On the preset, `sim` charges Sunwulf's machine model (section 4.5's measured broadcast,
/// 100 Mbit/s links) while approach 3 keeps HBSP^1's `g h + L`: measured and computed still
/// agree (both come from the runs), and approach 3 either differs or says why it cannot
/// calibrate. It never agrees with the runs by construction.
#[test]
fn on_the_preset_the_predicted_approach_is_a_model_not_a_copy_of_the_runs() {
    let store = Store::open_in_memory().unwrap();
    let result = run_study(&spec(), &store, &Silent).unwrap();
    for row in &result.comparison {
        let (measured, computed) = (row.measured.unwrap(), row.computed.unwrap());
        assert!(
            (computed - measured).abs() <= 0.05 * measured + 1.0,
            "{}: measured {measured}, computed {computed}",
            row.configuration
        );
    }
    let predicted = result.predicted.as_ref().unwrap();
    let sizes: Vec<Option<f64>> = result.comparison.iter().map(|r| r.predicted).collect();
    if sizes.iter().all(Option::is_none) {
        let why = &predicted.failures[0].message;
        assert!(why.contains("overhead model"), "{why}");
    } else {
        let differs = result
            .comparison
            .iter()
            .skip(1)
            .filter_map(|r| Some((r.measured?, r.predicted?)))
            .any(|(m, p)| (p - m).abs() > 1.0);
        assert!(differs, "{:?}", result.comparison);
    }
}

#[test]
fn results_re_derive_from_the_store_without_running() {
    let store = Store::open_in_memory().unwrap();
    let result = run_study(&spec(), &store, &Silent).unwrap();
    let runs = store.runs(None).unwrap().len();
    let loaded = load_results(&store).unwrap();
    assert_eq!(loaded, vec![result]);
    assert_eq!(
        store.runs(None).unwrap().len(),
        runs,
        "replaying runs nothing"
    );
}

#[test]
fn an_empty_or_incomplete_store_says_what_to_do() {
    let store = Store::open_in_memory().unwrap();
    assert!(
        load_results(&store)
            .unwrap_err()
            .to_string()
            .contains("holds no study")
    );
    store
        .register_study(
            "mm-small",
            &spec().canonical(),
            &hbsp::Platform::load("sunwulf")
                .unwrap()
                .to_toml_string()
                .unwrap(),
        )
        .unwrap();
    let err = load_results(&store).unwrap_err().to_string();
    assert!(
        err.contains("incomplete") && err.contains("hetscale study"),
        "{err}"
    );
}

/// `mm` whose every checked result is wrong: its verification fails.
struct WrongMm;

impl Kernel for WrongMm {
    fn name(&self) -> &'static str {
        "mm-wrong"
    }
    fn work(&self, n: usize) -> f64 {
        MmKernel.work(n)
    }
    fn counted_ops(&self, n: usize) -> f64 {
        MmKernel.counted_ops(n)
    }
    fn memory_per_node(&self, n: usize, machine: &Machine) -> hetscale_kernels::Result<Vec<f64>> {
        MmKernel.memory_per_node(n, machine)
    }
    fn overhead(&self, n: usize, machine: &Machine) -> hetscale_kernels::Result<Overhead> {
        MmKernel.overhead(n, machine)
    }
    fn generate(&self, n: usize, seed: u64) -> hetscale_kernels::Result<Vec<Array>> {
        MmKernel.generate(n, seed)
    }
    fn run(
        &self,
        inputs: &[Array],
        backend: &Backend,
        machine: &Machine,
    ) -> hetscale_kernels::Result<KernelRun> {
        let mut run = MmKernel.run(inputs, backend, machine)?;
        if !run.verification.skipped {
            run.verification = Verification::new("max error", 1.0, 1e-9);
        }
        Ok(run)
    }
}

#[test]
fn a_failed_verification_stays_failed_when_the_study_resumes() {
    let registry = KernelRegistry::builtin()
        .with("mm-wrong", |_| Ok(Box::new(WrongMm)))
        .unwrap();
    let text = SPEC.replace("kernel = \"mm\"", "kernel = \"mm-wrong\"");
    let spec = StudySpec::from_toml_str_with(&text, "test", &registry).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    for attempt in ["first run", "resumed run"] {
        let store = Store::open(&path).unwrap();
        let Err(err) = run_study_with(&spec, &registry, &store, &Silent) else {
            panic!("the {attempt} succeeded");
        };
        let err = err.to_string();
        assert!(
            err.contains("verification failed at N = ") && err.contains("max error = 1.000e0"),
            "{attempt}: {err}"
        );
    }
    let store = Store::open(&path).unwrap();
    let err = load_results_with(&store, &registry)
        .unwrap_err()
        .to_string();
    assert!(err.contains("verification failed"), "report: {err}");
}

/// The database of a completed study, then changed by `sql` (as another program, or an older
/// hetscale, could have); the directory lives as long as the returned guard.
fn stored_study_altered_by(sql: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    run_study(&spec(), &Store::open(&path).unwrap(), &Silent).unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(sql, [])
        .unwrap();
    (dir, path)
}

#[test]
fn a_verification_stored_unverified_by_an_older_hetscale_is_a_failure() {
    // Before runs had a status, a failed verification was stored as completed, unverified.
    let (_dir, path) =
        stored_study_altered_by("UPDATE runs SET verified = 0 WHERE purpose = 'verification'");
    let err = run_study(&spec(), &Store::open(&path).unwrap(), &Silent)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("verification") && err.contains("did not pass"),
        "{err}"
    );
}

#[test]
fn a_tampered_spec_in_the_database_is_a_one_line_error() {
    let (_dir, path) = stored_study_altered_by(
        "UPDATE studies SET spec = replace(spec, '\"n_max\":1024', '\"n_max\":0')",
    );
    let err = load_results(&Store::open_read_only(&path).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("invalid spec") && err.contains("n_max = 0") && err.contains("altered"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn the_summary_restates_the_approaches_own_numbers_and_computes_its_verdict() {
    use hetscale_model::numbers::significant_fixed;
    use hetscale_study::study::summary::Verdict;
    let result = run_study(&spec(), &Store::open_in_memory().unwrap(), &Silent).unwrap();
    let summary = &result.summary;
    assert_eq!(summary.target, 0.2);
    let mut checked = 0;
    for (approach, said) in [&result.measured, &result.computed, &result.predicted]
        .into_iter()
        .flatten()
        .zip(&summary.approaches)
    {
        assert_eq!(said.approach, approach.approach);
        // An approach that settled nothing (predicted without a model) is not a "scales".
        let Some(psi) = approach.psi.as_ref() else {
            assert_ne!(said.verdict, Verdict::Scales, "{}", said.verdict_line);
            continue;
        };
        for (j, (row, point)) in said.rows.iter().zip(&approach.points).enumerate() {
            assert_eq!(row.n, Some(point.n));
            assert_eq!(row.psi_from_base, psi.get(0, j));
        }
        let (first, last) = (&approach.points[0], &approach.points[2]);
        let growth = format!(
            "N grows {}x from C'_2 to C'_8 to hold E_s = 0.2; psi(C'_2, C'_8) = {}",
            significant_fixed(last.n / first.n, 2),
            significant_fixed(psi.get(0, 2).unwrap(), 2)
        );
        assert_eq!(said.verdict, Verdict::Scales, "{}", said.verdict_line);
        assert_eq!(said.verdict_line, format!("scales: {growth}"));
        checked += 1;
    }
    assert!(
        checked >= 2,
        "measured and computed settle every configuration"
    );
    let held = result.held_out.as_ref().unwrap();
    let line = summary.held_out_line().unwrap();
    assert!(
        line.contains(&format!("{:+.1}%", 100.0 * held.relative_error)),
        "{line}"
    );
}

#[test]
fn a_target_out_of_reach_is_the_summary_s_verdict() {
    let text = SPEC
        .replace("target = 0.2", "target = 0.9")
        .replace("n_max = 1024", "n_max = 64");
    let spec = StudySpec::from_toml_str(&text, "test").unwrap();
    let result = run_study(&spec, &Store::open_in_memory().unwrap(), &Silent).unwrap();
    let measured = &result.summary.approaches[0];
    assert_eq!(
        measured.verdict,
        hetscale_study::study::summary::Verdict::Unreachable,
        "{}",
        measured.verdict_line
    );
    assert!(
        measured
            .verdict_line
            .starts_with("unreachable: no size holds E_s = 0.9 on C'_2: "),
        "{}",
        measured.verdict_line
    );
    assert!(measured.rows.iter().all(|r| r.n.is_none()));
}
