//! `hetscale study`: run a study spec (with no spec, the built-in default study), with a
//! progress line per configuration, every run stored as it completes, then write the report.

use crate::output::{errln, out, outln};
use std::path::{Path, PathBuf};

use anyhow::Context;
use hetscale_kernels::KernelRegistry;
use hetscale_out::write_atomically;
use hetscale_papers::reproduce::{DEFAULT_STUDY, Experiment, reproduce};
use hetscale_study::spec::StudySpec;
use hetscale_study::spec::command_study::CommandStudy;
use hetscale_study::spec::launch::LaunchOptions;
use hetscale_study::store::Store;
use hetscale_study::study::{StudyResult, check_settled, load_results_with, run_study_with};

mod planned;

use super::progress::Progress;
use super::report::write_report;
use hetscale_report::text;
use hetscale_report::views::reproduction::reproduction_report;

/// What `hetscale study --help` adds after the options: examples, resuming and the exit codes.
fn after_help() -> String {
    AFTER_HELP.replace("{n}", &super::command_args::placeholder_n())
}

/// [`after_help`]'s text, `{n}` as written.
const AFTER_HELP: &str = "\
Examples:
  hetscale study --out hetscale-out
  hetscale study my-study.toml --db runs.db --out results
  hetscale study --command './solve {n}' --work n^3 --nodes 1 --nodes 2 --target 0.5 --n-max 4096
  hetscale study my-study.toml --predict-nodes 64 --replicate 8 --precision 0.1 --budget-s 600

Resuming: rerun with the same --db (or --out) to resume a study. Completed runs are reused; a
run that failed (non-zero exit, timeout, a node that died) is run again, its earlier failure
kept in the database's failure_history table. A study whose spec changed is refused under its
stored name: --replace drops the stored runs and runs it anew; another name keeps both.

Exit codes: 0 the study settled at least one configuration; 1 an error (every run failed,
bad input); 2 a run refused as too large for this machine; 3 the study settled no
configuration (every one failed or its target was unreachable; the database, results and
report are still written); 128 + N stopped by signal N (SIGINT, SIGTERM, SIGHUP: rerun to
resume).";

/// Arguments of `hetscale study`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = after_help(),
    // A one-off study needs all of these; clap names every one missing in one error.
    group(clap::ArgGroup::new("one_off").args(["command"]).requires_all(["nodes", "target", "n_max"]))
)]
pub struct Args {
    /// Study spec (TOML); with none, the built-in default study: the JPDC reproduction (GE, MM
    /// and conv2d on simulated Sunwulf, calibrated on their base configurations).
    #[arg(conflicts_with = "command")]
    pub spec: Option<PathBuf>,
    /// A one-off study of any program (instead of a spec): the command and how to read it.
    #[command(flatten)]
    pub command: super::command_args::CommandArgs,
    /// With --command: the configurations' node sets, smallest first (repeat: --nodes 1 --nodes 2).
    #[arg(long, requires = "command")]
    pub nodes: Vec<String>,
    /// With --command: the platform giving the nodes' marked speeds (E_s = W / (T C)).
    /// Default: local, this machine's cores (a command that runs programs here defaults to
    /// local; one that models a paper, to the paper's machine).
    #[arg(long, default_value = "local")]
    pub platform: String,
    /// With --command: the target speed-efficiency E_s.
    #[arg(long, requires = "command")]
    pub target: Option<f64>,
    /// With --command: smallest problem size searched.
    #[arg(long, default_value_t = 8)]
    pub n_min: u64,
    /// With --command: largest problem size searched.
    #[arg(long, requires = "command")]
    pub n_max: Option<u64>,
    /// With --command: runs per size, 1 to 10,000 (default 3, after one warm-up run).
    #[arg(
        long,
        alias = "repetitions",
        requires = "command",
        value_parser = clap::value_parser!(u32).range(1..=10_000)
    )]
    pub runs: Option<u32>,
    /// With --command: unrecorded warm-up runs before each size, 0 to 10,000 (default 1).
    #[arg(long, requires = "command", value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub warmup: Option<u32>,
    /// With --command: the study's name in the database.
    #[arg(long, default_value = "command")]
    pub name: String,
    /// A study stored under the same name with another spec or platform: drop its runs and run
    /// this one anew (without it, such a study is refused; another name keeps both).
    #[arg(long)]
    pub replace: bool,
    /// Database every run is written to as it completes; rerunning resumes from it, retrying
    /// the runs that failed.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Directory for the results (the database too, unless --db is given).
    #[arg(long, default_value = "hetscale-out")]
    pub out: PathBuf,
    /// Print the results as JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// No progress: neither the bars on a terminal nor, elsewhere, the log line per size.
    #[arg(long, short)]
    pub quiet: bool,
    /// backend = "mpi": hosts for every run's mpirun (`--host`), e.g. a,b or a:2,b:2.
    #[arg(long)]
    pub hosts: Option<String>,
    /// backend = "mpi": host file for every run's mpirun (`--hostfile`).
    #[arg(long)]
    pub hostfile: Option<PathBuf>,
    /// backend = "mpi": what launches each run, `mpirun` or `srun` (Slurm: each configuration's
    /// nodes as --nodelist, inside the allocation if there is one), or a path to either; the
    /// spec's [mpi] launcher otherwise.
    #[arg(long, value_name = "srun|mpirun")]
    pub launcher: Option<String>,
    /// A study that plans its own runs (--predict-nodes, --precision, --budget-s).
    #[command(flatten)]
    pub plan: planned::PlanArgs,
}

/// Runs `hetscale study`.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    hetscale_study::runner::interrupt::catch()
        .context("cannot catch SIGINT, SIGTERM and SIGHUP")?;
    if let Some(spec) = &args.spec {
        hetscale_out::protect_input("the spec", spec);
    }
    let mut specs = match (&args.spec, command_study(args)?) {
        (_, Some(study)) => vec![study.spec()?],
        (Some(path), None) => vec![StudySpec::from_file_with(path, registry)?],
        (None, None) if args.plan.options().is_some() => anyhow::bail!(
            "--predict-nodes plans a study of a spec or a --command: give one (the default study is the papers' reproduction)"
        ),
        (None, None) => return run_default(args, registry),
    };
    let launch = LaunchOptions {
        launcher: args.launcher.clone(),
        hosts: args.hosts.clone(),
        hostfile: args.hostfile.clone(),
    };
    for spec in &mut specs {
        launch.apply_to(spec)?;
    }
    let Output {
        db,
        fresh,
        store,
        created,
    } = open_output(args)?;
    let outcome = run_studies(args, registry, &specs, &store, &db);
    if outcome.is_err() {
        if fresh && store.studies().is_ok_and(|names| names.is_empty()) {
            // Refused before anything was stored (an unknown node, a program the platform
            // has no entry for): the database this command made holds nothing, so it goes.
            drop(store);
            let _ = std::fs::remove_file(&db);
        }
        // And so do the directories made for --out, if nothing was written there.
        remove_empty(&created);
    }
    outcome
}

/// Where a study writes: its database, open, and the directories made for `--out`.
struct Output {
    db: PathBuf,
    /// Whether the database is new (no file was there).
    fresh: bool,
    store: Store,
    /// The directories this command created, deepest first.
    created: Vec<PathBuf>,
}

/// Creates `--out` and opens the study database (registered as an input). A database that
/// cannot be used (not a database, locked, unreadable) fails the start, and the directories
/// made for `--out` are removed again: a failed start leaves nothing behind.
fn open_output(args: &Args) -> anyhow::Result<Output> {
    let created: Vec<PathBuf> = args
        .out
        .ancestors()
        .take_while(|dir| !dir.as_os_str().is_empty() && !dir.exists())
        .map(Path::to_path_buf)
        .collect();
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create --out {}", args.out.display()))?;
    let opened = database(args).and_then(|db| {
        let fresh = !db.exists();
        Ok((Store::open(&db)?, db, fresh))
    });
    let (store, db, fresh) = opened.inspect_err(|_| remove_empty(&created))?;
    hetscale_out::protect_input("the study database", &db);
    Ok(Output {
        db,
        fresh,
        store,
        created,
    })
}

/// Removes the directories `created` lists (deepest first) that are still empty.
fn remove_empty(created: &[PathBuf]) {
    for dir in created {
        let _ = std::fs::remove_dir(dir);
    }
}

/// Runs `specs` into `store` (at `db`), writes each result and the report, and prints them.
fn run_studies(
    args: &Args,
    registry: &KernelRegistry,
    specs: &[StudySpec],
    store: &Store,
    db: &Path,
) -> anyhow::Result<()> {
    if let Some(options) = args.plan.options() {
        let shown = planned::Shown {
            out: &args.out,
            quiet: args.quiet,
            json: args.json,
        };
        let replace = |spec: &StudySpec, platform: &hbsp::Platform| match args.replace {
            true => replace_stored(store, spec, platform),
            false => Ok(()),
        };
        return planned::run(&shown, registry, specs, store, &options, &replace);
    }
    let mut results = Vec::new();
    let mut resumed = Vec::new();
    for spec in specs {
        // Measures and caches this host's speed before the study's runs, if `local` needs it.
        let platform = hetscale_study::speed::local_speed::load_platform(&spec.platform)?;
        if let Some(note) = platform.note.filter(|_| !args.quiet) {
            errln!("note: {note}");
        }
        if args.replace {
            replace_stored(store, spec, &platform.platform)?;
        }
        let progress = Progress::new(&spec.name, args.quiet);
        let result = run_study_with(spec, registry, store, &progress)?;
        progress.finish();
        if let Some(line) = progress.resumed_line() {
            resumed.push(line);
        }
        write_result(&args.out, &result)?;
        results.push(result);
    }
    let index = write_report(&every_study(store, registry, &results), &args.out)?;
    let tables: String = results.iter().map(text::study::tables).collect();
    show(args, &results, &tables, &resumed, db, &index)
}

/// `--replace`: drops the runs of a study stored under `spec`'s name with another spec or
/// platform, so that `spec` runs anew instead of being refused.
fn replace_stored(
    store: &Store,
    spec: &StudySpec,
    platform: &hbsp::Platform,
) -> anyhow::Result<()> {
    if store.replace_if_changed(&spec.name, &spec.canonical(), &platform.to_toml_string()?)? {
        errln!(
            "note: study \"{}\" was stored with another spec or platform: its runs are dropped (--replace)",
            spec.name
        );
    }
    Ok(())
}

/// The studies the report shows: those just run, then every other study in the database
/// (re-derived from its stored runs); only those just run if the others cannot be read.
fn every_study(store: &Store, registry: &KernelRegistry, ran: &[StudyResult]) -> Vec<StudyResult> {
    let stored = match load_results_with(store, registry) {
        Ok(stored) => stored,
        Err(e) => {
            errln!("note: the report shows only the studies just run: {e}");
            Vec::new()
        }
    };
    let others = stored
        .into_iter()
        .filter(|s| !ran.iter().any(|r| r.spec.name == s.spec.name));
    ran.iter().cloned().chain(others).collect()
}

/// Prints what the studies found: on `--json` one JSON document of `results` (the resumed
/// lines and the report's path on standard error), else `tables`, the resumed lines, where
/// everything is and, last, each study's summary. Then [`check_settled`].
fn show(
    args: &Args,
    results: &[StudyResult],
    tables: &str,
    resumed: &[String],
    db: &Path,
    index: &Path,
) -> anyhow::Result<()> {
    if args.json {
        let json =
            hetscale_study::json::document("study", "studies", serde_json::to_value(results)?);
        outln!("{}", serde_json::to_string_pretty(&json)?);
        // Standard output stays one JSON document.
        resumed.iter().for_each(|line| errln!("{line}"));
        errln!("Report: {}", index.display());
    } else {
        out!("{tables}");
        resumed.iter().for_each(|line| outln!("{line}"));
        outln!(
            "Runs stored in {}; results in {}",
            db.display(),
            args.out.display()
        );
        outln!("Report: {}", index.display());
        // The answer, last: each study's summary table and verdicts.
        for result in results {
            out!("{}", text::study::summary(&result.summary));
        }
    }
    Ok(check_settled(results)?)
}

/// The default study: the JPDC reproduction (GE, MM and conv2d on simulated Sunwulf,
/// calibrated on each experiment's base configuration), with the published values beside.
fn run_default(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    let Output { db, store, .. } = open_output(args)?;
    let mut reproductions = Vec::new();
    let mut resumed = Vec::new();
    for id in DEFAULT_STUDY {
        let experiment = Experiment::named(id)?;
        let progress = Progress::new(id, args.quiet);
        let reproduction = reproduce(&experiment, registry, &store, &progress, &args.out);
        progress.finish();
        resumed.extend(progress.resumed_line());
        let reproduction = reproduction?;
        write_result(&args.out, &reproduction.study)?;
        reproductions.push(reproduction);
    }
    let values: Vec<_> = reproductions.iter().flat_map(|r| r.values.iter()).collect();
    let published = args.out.join("published-beside.json");
    write_atomically(&published, serde_json::to_string_pretty(&values)?)
        .with_context(|| format!("cannot write {}", published.display()))?;
    let results: Vec<StudyResult> = reproductions.iter().map(|r| r.study.clone()).collect();
    let index = reproduction_report(&reproductions, None, None, None)?
        .write(&args.out)
        .with_context(|| format!("cannot write the report into {}", args.out.display()))?
        .index;
    let tables: String = reproductions
        .iter()
        .map(|r| text::study::tables(&r.study) + &text::reproduce::reproduction(r))
        .collect();
    show(args, &results, &tables, &resumed, &db, &index)
}

/// The study database: --db, or `study.db` in --out, which must not be a symbolic link (one
/// planted there would have SQLite write wherever it leads).
fn database(args: &Args) -> anyhow::Result<PathBuf> {
    if let Some(db) = &args.db {
        return Ok(db.clone());
    }
    let db = args.out.join("study.db");
    hetscale_out::check_not_link(&db).with_context(|| format!("cannot use {}", db.display()))?;
    Ok(db)
}

/// The one-off command study the options describe, if --command was given.
fn command_study(args: &Args) -> anyhow::Result<Option<CommandStudy>> {
    let Some(command) = args.command.spec()? else {
        return Ok(None);
    };
    Ok(Some(CommandStudy {
        name: args.name.clone(),
        command,
        platform: args.platform.clone(),
        nodes: args.nodes.clone(),
        target: args
            .target
            .context("--command needs --target E_s, e.g. --target 0.5")?,
        n_min: args.n_min,
        n_max: args
            .n_max
            .context("--command needs --n-max N, the largest size to search")?,
        repetitions: args.runs,
        warmup: args.warmup,
    }))
}

fn write_result(out: &Path, result: &StudyResult) -> anyhow::Result<()> {
    let stem = result.spec.file_stem();
    let json = out.join(format!("{stem}.json"));
    write_atomically(&json, serde_json::to_string_pretty(result)?)
        .with_context(|| format!("cannot write {}", json.display()))?;
    let tables = out.join(format!("{stem}.txt"));
    write_atomically(&tables, text::study::tables(result))
        .with_context(|| format!("cannot write {}", tables.display()))?;
    Ok(())
}
