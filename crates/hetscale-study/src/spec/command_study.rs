//! A one-off study of an external command, from command-line options instead of a spec file
//! (`hetscale study --command ...`): the spec it makes is validated like a file's.

use serde::Serialize;

use crate::error::Result;
use crate::runner::external::CommandSpec;
use crate::spec::StudySpec;

/// What `hetscale study --command ...` gives.
#[derive(Debug, Clone, Serialize)]
pub struct CommandStudy {
    /// Study name (the key of its runs in the database).
    pub name: String,
    /// The command, its work, overhead, time source and timeout.
    pub command: CommandSpec,
    /// Platform preset or file giving the nodes' marked speeds.
    pub platform: String,
    /// One node set per configuration, smallest first; each is its own label.
    #[serde(skip)]
    pub nodes: Vec<String>,
    /// Target speed-efficiency.
    pub target: f64,
    /// Smallest problem size searched.
    pub n_min: u64,
    /// Largest problem size searched.
    pub n_max: u64,
    /// Runs per size (default 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repetitions: Option<u32>,
    /// Unrecorded runs before the first measurement at a size (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup: Option<u32>,
}

#[derive(Serialize)]
struct Configuration<'a> {
    label: &'a str,
    nodes: &'a str,
}

impl CommandStudy {
    /// The validated spec; errors are one line, as a spec file's.
    pub fn spec(&self) -> Result<StudySpec> {
        #[derive(Serialize)]
        struct Text<'a> {
            #[serde(flatten)]
            study: &'a CommandStudy,
            configuration: Vec<Configuration<'a>>,
        }
        let configuration = self
            .nodes
            .iter()
            .map(|n| Configuration { label: n, nodes: n })
            .collect();
        let text = toml::to_string(&Text {
            study: self,
            configuration,
        })
        .map_err(|e| crate::StudyError::Spec {
            source_name: "--command".into(),
            line: None,
            message: e.to_string(),
        })?;
        let spec = StudySpec::from_toml_str(&text, SOURCE).map_err(|e| match e {
            // The spec is made from the options: its lines mean nothing to the user, its
            // fields are their options.
            crate::StudyError::Spec { message, .. } => crate::StudyError::Spec {
                source_name: SOURCE.into(),
                line: None,
                message: in_options(&message).unwrap_or(message),
            },
            other => other,
        })?;
        Ok(StudySpec {
            surface: crate::spec::Surface::Options,
            ..spec
        })
    }
}

/// What a command study's errors name as their source.
const SOURCE: &str = "hetscale study --command";

/// The spec fields the options of `hetscale study --command` and `run --command` set.
const OPTIONS: [(&str, &str); 15] = [
    ("timeout_s", "--timeout"),
    ("time_regex", "--time-regex"),
    ("time_json", "--time-json"),
    ("overhead", "--overhead"),
    ("communication", "--communication"),
    ("partition", "--partition"),
    ("program", "--program"),
    ("work", "--work"),
    ("n_min", "--n-min"),
    ("n_max", "--n-max"),
    ("target", "--target"),
    ("repetitions", "--runs"),
    ("warmup", "--warmup"),
    ("platform", "--platform"),
    ("name", "--name"),
];

/// A spec error about a field the command options set, worded with the option instead:
/// `[command] timeout_s = 1e300: ...` becomes `--timeout 1e300: ...`; none if it names none.
pub fn in_options(message: &str) -> Option<String> {
    let message = message.strip_prefix("[command] ").unwrap_or(message);
    OPTIONS.iter().find_map(|(field, option)| {
        let rest = message.strip_prefix(field)?;
        match rest.strip_prefix(" = ") {
            Some(value) => Some(format!("{option} {value}")),
            None if rest.starts_with([' ', ':']) => Some(format!("{option}{rest}")),
            None => None,
        }
    })
}
