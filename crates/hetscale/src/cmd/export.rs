//! `hetscale export`: a study database as CSV, JSON or Extra-P text.

use crate::output::{out, outln};
use hetscale_kernels::KernelRegistry;
use hetscale_study::store::Store;
use hetscale_study::store::export::{Format, export, scaling_metadata};
use std::path::{Path, PathBuf};

/// What `--format extrap --out F` writes beside `F`: appended to the whole name rather than
/// replacing an extension, so `ge.txt` and `ge.dat` never share one, and a listing shows it
/// next to its Extra-P file.
pub const MODEL_SUFFIX: &str = ".hetscale-model.json";

/// Arguments of `hetscale export`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  hetscale export hetscale-out/study.db
  hetscale export hetscale-out/study.db --format extrap --study ge --out ge.txt

With --format extrap and --out F, hetscale's own scaling model of the study (the one
`hetscale predict --from` selects: formula, terms with coefficients and 95% intervals,
cross-validated error, runners-up) is written beside it as F.hetscale-model.json, to set
beside the model Extra-P fits to F.")]
pub struct Args {
    /// The study database (SQLite) to export.
    pub db: PathBuf,
    /// Output format: csv, json, or extrap (Extra-P's text input format).
    #[arg(long, default_value = "csv")]
    pub format: String,
    /// Only the runs of this study.
    #[arg(long)]
    pub study: Option<String>,
    /// Write to this file instead of standard output (with --format extrap, the scaling model
    /// goes beside it as FILE.hetscale-model.json).
    #[arg(long, short = 'o', alias = "output", value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs `hetscale export`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let format: Format = args.format.parse()?;
    hetscale_out::protect_input("the study database", &args.db);
    let store = Store::open_read_only(&args.db)?;
    let text = export(&store, args.study.as_deref(), format)?;
    match &args.out {
        Some(path) => {
            let model = match format {
                Format::Extrap => Some(model_beside(&store, args, path)?),
                _ => None,
            };
            hetscale_out::write_atomically(path, text)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
            if let Some((model_path, document)) = model {
                hetscale_out::write_atomically(&model_path, document)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", model_path.display()))?;
                outln!(
                    "Extra-P input: {}\nhetscale's scaling model of the same study: {}",
                    path.display(),
                    model_path.display()
                );
            }
            Ok(())
        }
        None => {
            out!("{text}");
            Ok(())
        }
    }
}

/// The scaling model's path beside `path` and its JSON document. Computed before anything is
/// written, so that a failure leaves neither file half-made; a study whose runs support no
/// model still gets the document, saying why.
fn model_beside(store: &Store, args: &Args, path: &Path) -> anyhow::Result<(PathBuf, String)> {
    let mut name = path.as_os_str().to_owned();
    name.push(MODEL_SUFFIX);
    let model_path = PathBuf::from(name);
    if model_path == args.db {
        anyhow::bail!(
            "{} is the study database: choose another --out",
            model_path.display()
        );
    }
    // The built-in kernels: a kernel a user binary registered is not known here, and its
    // study's metadata then says so instead of holding a model.
    let metadata = scaling_metadata(store, args.study.as_deref(), &KernelRegistry::builtin())?;
    let value = serde_json::to_value(&metadata)?;
    let document = hetscale_study::json::document("export-scaling-model", "model", value);
    Ok((model_path, serde_json::to_string_pretty(&document)?))
}
