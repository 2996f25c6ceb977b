//! Study specs: what to run (kernel, backend, platform, configurations) and what to find
//! (the problem size holding a target speed-efficiency), read from TOML.
//!
//! ```toml
//! name = "ge-sunwulf"
//! kernel = "ge"                   # mm, ge, conv2d, summa, burg, slalom
//! backend = "sim"                 # sim, threads or mpi (each run an mpirun job)
//! platform = "sunwulf"            # a preset or a platform TOML file
//! target = 0.3                    # speed-efficiency E_s to hold
//! approaches = ["measured", "computed", "predicted"]
//! n_min = 16
//! n_max = 8192
//!
//! [kernel_options]
//! pivoting = "none"
//!
//! [[configuration]]
//! label = "C_2"
//! nodes = "server*2:1,sunblade:1"
//!
//! # backend = "mpi" only, all optional:
//! [mpi]
//! launcher = "mpirun"             # or another mpirun-compatible launcher, or "srun" (Slurm)
//! launcher_args = ["--oversubscribe"]
//! hostfile = "hosts.txt"          # mpirun: the hosts (a configuration of them runs on its own)
//! hosts = "a,b"                   # mpirun: passed as --host
//! hetscale = "/opt/hetscale"      # a hetscale built with feature mpi; default: this one
//! timeout_s = 3600                # a run's job is killed after this long
//! ```
//!
//! Instead of `kernel`, a `[command]` table studies any program (see [`crate::runner::external`]):
//!
//! ```toml
//! name = "my-solver"
//! platform = "my-cluster.toml"    # the nodes' marked speeds: E_s = W / (T C)
//! target = 0.5
//! n_max = 4096
//!
//! [command]
//! template = "./solver --size {n} --procs {p} --hosts {hostfile}"
//! work = "2*n^3"                  # W in n (and p), flop
//! overhead = "1e-3*p"             # T_o in n and p, s: approach 3 needs it
//! time_regex = "elapsed: (\S+) s" # or time_json = "timing.total_s"; default: wall clock
//! timeout_s = 60
//!
//! [[configuration]]
//! label = "C_1"
//! nodes = "1"
//! ```
//!
//! Every rejection is one line naming the TOML line and the field. Numbers are bounded:
//! `repetitions` and `max_repetitions` 1 to 1000, `warmup` 0 to 1000, `samples` 2 to 100,
//! `n_max` at most 2^53, `timeout_s` at most 30 days.
//!
//! This folder owns what a study is before it runs: the spec ([`StudySpec`]), its
//! configurations resolved on a platform ([`configuration`]), the formulas of `W` and `T_o`
//! ([`formula`]), `hetscale study --command` as a spec ([`command_study`]), the launch options
//! the command line lays over its `[mpi]` table ([`launch`]) and two embedded example specs
//! ([`example_specs`]).

pub mod command_study;
pub mod communication;
pub mod configuration;
pub mod example_specs;
pub mod formula;
pub mod launch;
pub mod mpi;
mod surface;

pub use surface::Surface;

pub use mpi::MpiLaunch;

use hetscale_kernels::{KernelOptions, KernelRegistry, MAX_N};
use serde::{Deserialize, Serialize};
use std::ops::Range;
use toml::Spanned;

use crate::error::{Result, StudyError};
use crate::runner::external::CommandSpec;
use hetscale_model::numbers::echoed;

/// The `kernel` a command study records in the database and tables.
pub const COMMAND_KERNEL: &str = "command";

/// The three ways to find the problem size of each configuration (SPEC section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Approach {
    /// Search N by runs until the measured E_s is within tolerance of the target.
    Measured,
    /// Fit E_s(N) to sampled runs and invert the fit.
    Computed,
    /// Solve the isospeed-e condition with the kernel's overhead model.
    Predicted,
}

impl Approach {
    /// All three, in the papers' order.
    pub const ALL: [Approach; 3] = [Self::Measured, Self::Computed, Self::Predicted];

    /// The lowercase name used in specs, tables and the database.
    pub fn name(self) -> &'static str {
        match self {
            Self::Measured => "measured",
            Self::Computed => "computed",
            Self::Predicted => "predicted",
        }
    }
}

/// A validated study spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudySpec {
    /// Study name: the key of its runs in the database.
    pub name: String,
    /// Kernel name (`command` for a command study).
    pub kernel: String,
    /// The external command studied instead of a kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandSpec>,
    /// Options of the kernel.
    pub kernel_options: KernelOptions,
    /// Backend: `sim` or `threads`.
    pub backend: String,
    /// Platform preset or file.
    pub platform: String,
    /// sim only: skip compute blocks (skeleton execution) in every run but the verification run.
    pub skeleton: bool,
    /// Target speed-efficiency `E_s`.
    pub target: f64,
    /// Accepted relative distance of a measured `E_s` from the target.
    pub tolerance: f64,
    /// Approaches to run.
    pub approaches: Vec<Approach>,
    /// Smallest and largest problem size searched.
    pub n_min: u64,
    /// Largest problem size searched.
    pub n_max: u64,
    /// Runs per size (the median time is used).
    pub repetitions: u32,
    /// Unrecorded runs before the first measurement at a size.
    pub warmup: u32,
    /// Repeat up to this many runs while the median's 95% interval is wider than
    /// `max_relative_ci` of the median.
    pub max_repetitions: u32,
    /// See `max_repetitions`; none: always exactly `repetitions` runs.
    pub max_relative_ci: Option<f64>,
    /// Sizes the computed approach samples per configuration (besides the bracket).
    pub samples: u32,
    /// Degree of the overhead polynomial `T_o(N)` of the computed approach.
    pub overhead_degree: u32,
    /// Seed of the generated inputs.
    pub seed: u64,
    /// Label of the configuration whose run at its found size computes for real and is
    /// verified (the first one when absent).
    pub verify: Option<String>,
    /// The configurations, smallest first.
    pub configurations: Vec<ConfigurationSpec>,
    /// How runs are launched on `backend = "mpi"`.
    pub mpi: MpiLaunch,
    /// Whether a file or `hetscale study --command`'s options gave it: its advice names the
    /// fields as the user wrote them.
    #[serde(skip)]
    pub surface: Surface,
}

/// One configuration: a label and a node set of the platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigurationSpec {
    /// How tables show it (e.g. `C_8`).
    pub label: String,
    /// Node set, in the syntax of `--nodes` (e.g. `server*2:1,sunblade:7`).
    pub nodes: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    name: Spanned<String>,
    kernel: Option<Spanned<String>>,
    command: Option<Spanned<CommandSpec>>,
    #[serde(default)]
    kernel_options: KernelOptions,
    backend: Option<Spanned<String>>,
    platform: Spanned<String>,
    #[serde(default = "default_skeleton")]
    skeleton: Spanned<bool>,
    target: Spanned<f64>,
    #[serde(default = "default_tolerance")]
    tolerance: Spanned<f64>,
    #[serde(default = "default_approaches")]
    approaches: Spanned<Vec<Approach>>,
    #[serde(default = "default_n_min")]
    n_min: Spanned<u64>,
    n_max: Spanned<u64>,
    repetitions: Option<Spanned<u32>>,
    warmup: Option<Spanned<u32>>,
    max_repetitions: Option<Spanned<u32>>,
    max_relative_ci: Option<Spanned<f64>>,
    #[serde(default = "default_samples")]
    samples: Spanned<u32>,
    #[serde(default = "default_overhead_degree")]
    overhead_degree: Spanned<u32>,
    #[serde(default = "default_seed")]
    seed: u64,
    verify: Option<Spanned<String>>,
    configuration: Spanned<Vec<ConfigurationSpec>>,
    mpi: Option<Spanned<MpiLaunch>>,
}

fn default_skeleton() -> Spanned<bool> {
    Spanned::new(0..0, false)
}
/// A spec's `tolerance` when it gives none (and `predict --runs`'s default).
pub const DEFAULT_TOLERANCE: f64 = 0.01;

fn default_tolerance() -> Spanned<f64> {
    Spanned::new(0..0, DEFAULT_TOLERANCE)
}
fn default_approaches() -> Spanned<Vec<Approach>> {
    Spanned::new(0..0, Approach::ALL.to_vec())
}
fn default_n_min() -> Spanned<u64> {
    Spanned::new(0..0, 8)
}
fn default_samples() -> Spanned<u32> {
    Spanned::new(0..0, 4)
}
fn default_overhead_degree() -> Spanned<u32> {
    Spanned::new(0..0, 2)
}
fn default_seed() -> u64 {
    1
}

/// The most runs per size a spec may ask for (repetitions, their maximum, warm-ups).
const MAX_RUNS: u32 = 1000;
/// The most sizes the computed approach may sample per configuration.
const MAX_SAMPLES: u32 = 100;

/// The longest study name, in bytes: it becomes file names (`OUT/<name>.json`), which most
/// filesystems limit to 255 bytes.
const MAX_NAME_BYTES: usize = 200;

/// Why `name` cannot name a study: it becomes the name of the study's result files, so it
/// must stay one file name in the output directory.
fn study_name_problem(name: &str) -> Option<String> {
    let refuse = |what: String| {
        Some(format!(
            "name = {name:?} {what}: a study's name names its result files; use letters, digits, spaces, '-', '_' or '.'"
        ))
    };
    if let Some(c) = name
        .chars()
        .find(|c| matches!(c, '/' | '\\') || c.is_control())
    {
        return refuse(format!("contains {c:?}"));
    }
    if name.contains("..") {
        return refuse("contains \"..\"".into());
    }
    if name.len() > MAX_NAME_BYTES {
        return refuse(format!(
            "is {} bytes long, over {MAX_NAME_BYTES}",
            name.len()
        ));
    }
    None
}

/// Backends a study can run kernels on: in-process, or by launching `mpirun` per run.
const BACKENDS: [&str; 3] = ["sim", "threads", "mpi"];
/// The backend of command studies: the command runs itself.
pub const EXTERNAL_BACKEND: &str = "external";

impl StudySpec {
    /// Parses and validates a spec with the built-in kernels; `source` names the text in
    /// errors (a path or `default`).
    pub fn from_toml_str(text: &str, source: &str) -> Result<Self> {
        Self::from_toml_str_with(text, source, &KernelRegistry::builtin())
    }

    /// Parses and validates a spec whose kernel may be any of `registry`'s.
    pub fn from_toml_str_with(text: &str, source: &str, registry: &KernelRegistry) -> Result<Self> {
        let raw: RawSpec = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, &s));
            spec_error(source, line, e.message().trim().replace('\n', "; "))
        })?;
        let at = |span: Range<usize>, message: String| {
            let line = (span.end > 0).then(|| line_of(text, &span));
            spec_error(source, line, message)
        };
        validate(raw, registry, at)
    }

    /// Reads and validates the spec file at `path` with the built-in kernels.
    pub fn from_file(path: &std::path::Path) -> Result<Self> {
        Self::from_file_with(path, &KernelRegistry::builtin())
    }

    /// Reads and validates the spec file at `path`; its kernel may be any of `registry`'s.
    pub fn from_file_with(path: &std::path::Path, registry: &KernelRegistry) -> Result<Self> {
        let shown = path.display().to_string();
        let text = hetscale_out::read_capped_to_string(path, hetscale_out::input::SPEC_FILE)
            .map_err(|e| match e {
                hetscale_out::InputError::TooLarge(_) => spec_error(&shown, None, e.to_string()),
                hetscale_out::InputError::Unreadable(_) => {
                    spec_error(&shown, None, format!("cannot read the file: {e}"))
                }
            })?;
        Self::from_toml_str_with(&text, &shown, registry)
    }

    /// The spec as canonical JSON: what the database compares to refuse resuming a study
    /// whose spec changed.
    pub fn canonical(&self) -> String {
        serde_json::to_string(self).expect("a spec serializes")
    }

    /// Whether the spec asks for `approach`.
    pub fn wants(&self, approach: Approach) -> bool {
        self.approaches.contains(&approach)
    }

    /// The stem of the study's result files (`<stem>.json`, `<stem>.txt`): its name, which
    /// validation keeps to one file name, with path separators and control characters
    /// replaced by `_` and cut to `MAX_NAME_BYTES` (for specs built in code, which skip
    /// validation). With an extension after it, no stem names `..` or a directory.
    pub fn file_stem(&self) -> String {
        let mut stem: String = self
            .name
            .chars()
            .map(|c| {
                if matches!(c, '/' | '\\') || c.is_control() {
                    '_'
                } else {
                    c
                }
            })
            .collect();
        let mut end = stem.len().min(MAX_NAME_BYTES);
        while !stem.is_char_boundary(end) {
            end -= 1;
        }
        stem.truncate(end);
        if stem.trim().is_empty() {
            stem = "study".into();
        }
        stem
    }

    /// Index of the configuration whose run is verified.
    pub fn verified_configuration(&self) -> usize {
        self.verify
            .as_ref()
            .and_then(|label| self.configurations.iter().position(|c| &c.label == label))
            .unwrap_or(0)
    }

    /// This spec checked as a spec file is, for one that came from elsewhere (a database):
    /// written as the TOML a user would write and read again, so every rule of a file holds
    /// for it. The error is the file's message, without a line.
    pub fn validated(&self, registry: &KernelRegistry) -> std::result::Result<Self, String> {
        let text = self.to_toml()?;
        let spec = Self::from_toml_str_with(&text, "stored", registry).map_err(|e| match e {
            StudyError::Spec { message, .. } => message,
            other => other.to_string(),
        })?;
        // The text holds no surface: the spec came from where this one did.
        Ok(Self {
            surface: self.surface,
            ..spec
        })
    }

    /// The spec as a spec file gives it: `[[configuration]]` tables, no `kernel` beside a
    /// `[command]`, no `[mpi]` off `backend = "mpi"`, absent options left out.
    fn to_toml(&self) -> std::result::Result<String, String> {
        let mut value = serde_json::to_value(self).map_err(|e| e.to_string())?;
        if let Some(table) = value.as_object_mut() {
            if let Some(configurations) = table.remove("configurations") {
                table.insert("configuration".into(), configurations);
            }
            if self.command.is_some() {
                table.remove("kernel");
            }
            if self.backend != "mpi" {
                table.remove("mpi");
            }
        }
        drop_nulls(&mut value);
        toml::to_string(&value).map_err(|e| e.to_string())
    }
}

/// Removes `null` members, which TOML cannot hold (an absent option is absent).
fn drop_nulls(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(members) => {
            members.retain(|_, v| !v.is_null());
            members.values_mut().for_each(drop_nulls);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

fn validate(
    raw: RawSpec,
    registry: &KernelRegistry,
    at: impl Fn(Range<usize>, String) -> StudyError,
) -> Result<StudySpec> {
    let text_field = |field: &Spanned<String>, name: &str| {
        if field.get_ref().trim().is_empty() {
            Err(at(field.span(), format!("{name} is empty: give a value")))
        } else {
            Ok(field.get_ref().clone())
        }
    };
    let name = text_field(&raw.name, "name")?;
    if let Some(problem) = study_name_problem(&name) {
        return Err(at(raw.name.span(), problem));
    }
    let (kernel, backend) = program_and_backend(&raw, registry, &at)?;
    let platform = text_field(&raw.platform, "platform")?;
    if *raw.skeleton.get_ref() && backend != "sim" {
        return Err(at(
            raw.skeleton.span(),
            "skeleton = true needs backend = \"sim\"".into(),
        ));
    }
    let target = *raw.target.get_ref();
    if !(target > 0.0 && target < 1.0) {
        return Err(at(
            raw.target.span(),
            format!(
                "target = {}: a speed-efficiency lies in (0, 1)",
                echoed(target)
            ),
        ));
    }
    let tolerance = *raw.tolerance.get_ref();
    if !(tolerance > 0.0 && tolerance < 0.5) {
        return Err(at(
            raw.tolerance.span(),
            format!(
                "tolerance = {}: use a relative tolerance in (0, 0.5), e.g. 0.02",
                echoed(tolerance)
            ),
        ));
    }
    let mut approaches = raw.approaches.get_ref().clone();
    approaches.sort();
    approaches.dedup();
    if approaches.is_empty() {
        return Err(at(
            raw.approaches.span(),
            "approaches is empty: list measured, computed and/or predicted".into(),
        ));
    }
    let (n_min, n_max) = (*raw.n_min.get_ref(), *raw.n_max.get_ref());
    if n_min < 1 {
        return Err(at(raw.n_min.span(), "n_min = 0: use n_min >= 1".into()));
    }
    if n_max > MAX_N {
        return Err(at(
            raw.n_max.span(),
            format!("n_max = {n_max}: use at most 2^53 = {MAX_N}"),
        ));
    }
    if n_max < n_min.saturating_mul(2) {
        return Err(at(
            raw.n_max.span(),
            format!(
                "n_max = {n_max} leaves nothing to search above n_min = {n_min}: use n_max >= 2 n_min"
            ),
        ));
    }
    let virtual_time = backend == "sim";
    let repetitions = count_in(
        raw.repetitions.as_ref(),
        if virtual_time { 1 } else { 3 },
        (1, MAX_RUNS),
        "repetitions",
        &at,
    )?;
    let max_repetitions = count_in(
        raw.max_repetitions.as_ref(),
        repetitions,
        (1, MAX_RUNS),
        "max_repetitions",
        &at,
    )?;
    let warmup = count_in(
        raw.warmup.as_ref(),
        if virtual_time { 0 } else { 1 },
        (0, MAX_RUNS),
        "warmup",
        &at,
    )?;
    if max_repetitions < repetitions {
        let span = raw.max_repetitions.as_ref().map_or(0..0, Spanned::span);
        return Err(at(
            span,
            format!("max_repetitions = {max_repetitions} is below repetitions = {repetitions}"),
        ));
    }
    let max_relative_ci = match &raw.max_relative_ci {
        Some(v) if !(*v.get_ref() > 0.0 && *v.get_ref() <= 1.0) => {
            return Err(at(
                v.span(),
                format!(
                    "max_relative_ci = {}: use a fraction in (0, 1], e.g. 0.02",
                    echoed(*v.get_ref())
                ),
            ));
        }
        other => other.as_ref().map(|v| *v.get_ref()),
    };
    let samples = count_in(Some(&raw.samples), 0, (2, MAX_SAMPLES), "samples", &at)?;
    let overhead_degree = *raw.overhead_degree.get_ref();
    if overhead_degree > 3 {
        return Err(at(
            raw.overhead_degree.span(),
            format!("overhead_degree = {overhead_degree}: use 0 to 3"),
        ));
    }
    let configurations = raw.configuration.get_ref().clone();
    validate_configurations(&configurations, raw.configuration.span(), &at)?;
    let verify = match &raw.verify {
        Some(label) if !configurations.iter().any(|c| &c.label == label.get_ref()) => {
            return Err(at(
                label.span(),
                format!(
                    "verify = \"{}\" is not a configuration label",
                    label.get_ref()
                ),
            ));
        }
        other => other.as_ref().map(|l| l.get_ref().clone()),
    };
    let mpi = mpi::validate(raw.mpi, &backend, &at)?;
    Ok(StudySpec {
        name,
        kernel,
        command: raw.command.map(|c| c.into_inner()),
        kernel_options: raw.kernel_options,
        backend,
        platform,
        skeleton: *raw.skeleton.get_ref(),
        target,
        tolerance,
        approaches,
        n_min,
        n_max,
        repetitions,
        warmup,
        max_repetitions,
        max_relative_ci,
        samples,
        overhead_degree,
        seed: raw.seed,
        verify,
        configurations,
        mpi,
        surface: Surface::File,
    })
}

/// The kernel's name (checked in `registry`) or, for a `[command]`, [`COMMAND_KERNEL`] (the
/// command checked); and the backend.
fn program_and_backend(
    raw: &RawSpec,
    registry: &KernelRegistry,
    at: &impl Fn(Range<usize>, String) -> StudyError,
) -> Result<(String, String)> {
    let backend = raw
        .backend
        .as_ref()
        .map(|b| (b.get_ref().clone(), b.span()));
    match (&raw.kernel, &raw.command) {
        (Some(_), Some(command)) => Err(at(
            command.span(),
            "give kernel or [command], not both".into(),
        )),
        (None, None) => Err(at(
            0..0,
            "missing field `kernel`: name a kernel, or give a [command] table to study any program"
                .into(),
        )),
        (None, Some(command)) => {
            command
                .get_ref()
                .validate()
                .map_err(|e| at(command.span(), format!("[command] {e}")))?;
            match backend {
                Some((b, span)) if b != EXTERNAL_BACKEND => Err(at(
                    span,
                    format!(
                        "backend \"{b}\" does not apply to a [command], which runs itself: drop backend"
                    ),
                )),
                _ => Ok((COMMAND_KERNEL.into(), EXTERNAL_BACKEND.into())),
            }
        }
        (Some(kernel), None) => {
            if kernel.get_ref().trim().is_empty() {
                return Err(at(kernel.span(), "kernel is empty: give a value".into()));
            }
            registry
                .get(kernel.get_ref(), &raw.kernel_options)
                .map_err(|e| at(kernel.span(), format!("kernel: {e}")))?;
            let (backend, span) = backend.unwrap_or(("sim".into(), 0..0));
            if !BACKENDS.contains(&backend.as_str()) {
                return Err(at(
                    span,
                    format!(
                        "backend \"{backend}\" cannot run studies: use {}",
                        BACKENDS.join(", ")
                    ),
                ));
            }
            Ok((kernel.get_ref().clone(), backend))
        }
    }
}

/// The count `field` gives, if within `lo..=hi`, else `default` when absent.
fn count_in(
    field: Option<&Spanned<u32>>,
    default: u32,
    (lo, hi): (u32, u32),
    name: &str,
    at: &impl Fn(Range<usize>, String) -> StudyError,
) -> Result<u32> {
    match field {
        Some(v) if !(lo..=hi).contains(v.get_ref()) => Err(at(
            v.span(),
            format!("{name} = {}: use {lo} to {hi}", v.get_ref()),
        )),
        Some(v) => Ok(*v.get_ref()),
        None => Ok(default),
    }
}

fn validate_configurations(
    configurations: &[ConfigurationSpec],
    span: Range<usize>,
    at: &impl Fn(Range<usize>, String) -> StudyError,
) -> Result<()> {
    if configurations.is_empty() {
        return Err(at(span, "no [[configuration]]: give at least one".into()));
    }
    for (i, c) in configurations.iter().enumerate() {
        // The node-set first: `study --command --nodes ""` makes both empty, and the empty
        // node-set is what the user wrote.
        c.nodes.parse::<hbsp::NodeSet>().map_err(|e| {
            let which = match c.label.trim() {
                "" => (i + 1).to_string(),
                // Debug quoting: a control character in the label is shown escaped.
                label => format!("{label:?}"),
            };
            at(span.clone(), format!("configuration {which}: nodes: {e}"))
        })?;
        if c.label.trim().is_empty() {
            return Err(at(
                span.clone(),
                format!("configuration {}: label is empty", i + 1),
            ));
        }
        // Labels are printed in tables and exported to CSV, like names.
        if let Some(problem) = hetscale_machine::platform::control_character_problem(&c.label) {
            return Err(at(
                span.clone(),
                format!("configuration {}: label {problem}", i + 1),
            ));
        }
        if configurations[..i].iter().any(|o| o.label == c.label) {
            return Err(at(
                span.clone(),
                format!(
                    "configuration label \"{}\" appears twice: labels must differ",
                    c.label
                ),
            ));
        }
    }
    Ok(())
}

/// The 1-based line of `span`'s start.
fn line_of(text: &str, span: &Range<usize>) -> usize {
    let start = span.start.min(text.len());
    text.as_bytes()[..start]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn spec_error(source: &str, line: Option<usize>, message: String) -> StudyError {
    StudyError::Spec {
        source_name: source.to_string(),
        line,
        message,
    }
}

#[cfg(test)]
mod tests;
