//! `hetscale calibrate`: fit a platform's machine model to measured runs.

use std::path::PathBuf;

use anyhow::Context as _;
use hbsp::Platform;
use hetscale_kernels::KernelRegistry;
use hetscale_report::text;
use hetscale_study::calibrate::runs::read_runs;
use hetscale_study::calibrate::{
    CalibrationDocument, calibrate_as_asked, platform_to_write, stored_runs,
};
use hetscale_study::store::Store;

use super::declared::DeclaredArgs;
use super::run::KernelArgs;
use crate::output::{errln, out, outln};

/// Arguments of `hetscale calibrate`.
#[derive(Debug, clap::Args)]
// The synopsis says what clap cannot: a program declared by --work needs its overhead model
// (--overhead, --communication or both) to be calibrated; a kernel's runs do not.
#[command(override_usage = "\
hetscale calibrate --runs <FILE.csv> [--platform <PLATFORM>] [OPTIONS]
       hetscale calibrate --runs <FILE.csv> --work <FORMULA> <--overhead <FORMULA> | --communication <STEPS>> [OPTIONS]
       hetscale calibrate --db <FILE.db> [--study <NAME>] [OPTIONS]")]
#[command(after_help = "\
Examples:
  hetscale calibrate --db hetscale-out/study.db --study jpdc-mm --fit auto
  hetscale calibrate --runs runs.csv --platform sunwulf --write-platform calibrated.toml
  hetscale calibrate --runs jacobi.csv --work '400*(n-2)^2' --partition equal --platform cluster.toml --write-platform calibrated.toml")]
pub struct Args {
    /// CSV of measured runs: configuration,nodes,kernel,n,time_s.
    #[arg(
        long,
        value_name = "FILE.csv",
        required_unless_present = "db",
        conflicts_with = "db"
    )]
    pub runs: Option<PathBuf>,
    /// A study database: its runs, on the platform and with the kernel options stored with them.
    #[arg(long, value_name = "FILE.db")]
    pub db: Option<PathBuf>,
    /// With --db: the study whose runs to fit (needed when its studies ran on different
    /// platforms or programs, as the default study's three do).
    #[arg(long, value_name = "NAME", requires = "db")]
    pub study: Option<String>,
    /// The platform to calibrate (preset or TOML file): its nodes and machine facts (with
    /// --runs). Default: sunwulf, the JPDC paper's machine (a command that runs programs here
    /// defaults to local; one that models a paper, to the paper's machine).
    #[arg(long, conflicts_with = "db")]
    pub platform: Option<String>,
    /// Parameters to fit, comma-separated: rate_fraction, run_overhead_s, process_overhead_s,
    /// half_work, collective_scale; or `auto`: every choice the runs identify, ranked by
    /// leave-one-out error, the best one fitted.
    #[arg(
        long,
        default_value = "rate_fraction,run_overhead_s",
        value_delimiter = ','
    )]
    pub fit: Vec<String>,
    /// Write the calibrated platform here (for `study` and `predict`).
    #[arg(long, value_name = "FILE.toml")]
    pub write_platform: Option<PathBuf>,
    /// Print the fit as JSON.
    #[arg(long)]
    pub json: bool,
    /// Options of the configurable kernels.
    #[command(flatten)]
    pub kernel_options: KernelArgs,
    /// With --runs: a program hetscale does not run, known by its declared model (--work
    /// ...), whose runs fit its compute rate and start-up (the runs' kernel column is its
    /// name, as `predict --work ... --program NAME` takes it).
    #[command(flatten)]
    pub declared: DeclaredArgs,
}

/// Runs `hetscale calibrate`.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    if let Some(csv) = &args.runs {
        hetscale_out::protect_input("--runs", csv);
    }
    if let Some(db) = &args.db {
        hetscale_out::protect_input("the study database", db);
    }
    if let Some(path) = &args.write_platform {
        // Before the fit, not after it.
        hetscale_out::check_not_input(path)
            .with_context(|| format!("cannot write --write-platform {}", path.display()))?;
    }
    if args.declared.program(None)?.is_some() && args.db.is_some() {
        anyhow::bail!(
            "--work declares a program whose runs are in --runs FILE.csv: a study database names its own program"
        );
    }
    let (platform, runs, options, declared) = match (&args.db, &args.runs) {
        (Some(db), _) => {
            let store = Store::open_read_only(db)?;
            let stored = stored_runs(&store, registry, args.study.as_deref())?;
            (
                stored.platform,
                stored.runs,
                stored.options,
                stored.declared,
            )
        }
        (None, Some(csv)) => {
            let platform = Platform::load(args.platform.as_deref().unwrap_or("sunwulf"))?;
            let file = read_runs(csv)?;
            if let Some(warning) = file.copies_warning() {
                errln!("warning: {warning}");
            }
            (
                platform,
                file.runs,
                args.kernel_options.options(),
                args.declared.program(None)?,
            )
        }
        (None, None) => anyhow::bail!("give the runs: --runs FILE.csv or --db FILE.db"),
    };
    let calibrated = calibrate_as_asked(
        &platform,
        registry,
        &options,
        &runs,
        &args.fit,
        declared.as_ref(),
    )?;
    let fit = &calibrated.fit;
    if let Some(path) = &args.write_platform {
        platform_to_write(path, &platform, fit)?
            .write_file(path)
            .with_context(|| format!("cannot write --write-platform {}", path.display()))?;
    }
    let warnings: Vec<String> = fit.kernels.iter().flat_map(|k| k.warnings()).collect();
    warnings.iter().for_each(|w| errln!("warning: {w}"));
    if args.json {
        let document = CalibrationDocument::new(&calibrated, &warnings);
        let json = hetscale_study::json::document(
            "calibrate",
            "calibration",
            serde_json::to_value(&document)?,
        );
        outln!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    if let Some(compared) = &calibrated.compared {
        out!("{}", text::calibrate::comparison(compared));
    }
    out!("{}", text::calibrate::fit(fit));
    if let Some(path) = &args.write_platform {
        outln!("Calibrated platform written to {}", path.display());
    }
    Ok(())
}
