//! Where a spec came from: its advice names the fields as the user wrote them.

/// Where a spec came from, which decides how advice names its fields: a spec file's keys
/// (`n_max`, `overhead = "..."` in `[command]`) or the command line's options (`--n-max`,
/// `--overhead`). Not stored: a study resumed or reported from its database advises in a
/// spec's terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Surface {
    /// A spec file (or the built-in default study).
    #[default]
    File,
    /// `hetscale study --command ...`'s options.
    Options,
}
