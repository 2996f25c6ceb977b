//! The built-in default study (what `hetscale study` runs with no spec): GE at E_s = 0.3 over
//! JPDC Table 5's configurations and MM at E_s = 0.2 over Table 7's, on the `sim` backend with
//! the `sunwulf` preset, all three approaches. The specs are embedded TOML files
//! (`studies/default-*.toml`), so they read like any user's spec.

use crate::error::Result;
use crate::spec::StudySpec;

/// The embedded specs, with the name errors show for each.
const SPECS: [(&str, &str); 2] = [
    (
        "default study default-ge.toml",
        include_str!("../../studies/default-ge.toml"),
    ),
    (
        "default study default-mm.toml",
        include_str!("../../studies/default-mm.toml"),
    ),
];

/// The default study's specs: GE, then MM.
pub fn default_specs() -> Result<Vec<StudySpec>> {
    SPECS
        .iter()
        .map(|(source, text)| StudySpec::from_toml_str(text, source))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_specs_are_the_papers_configurations() {
        let specs = default_specs().unwrap();
        let targets: Vec<(String, f64, usize)> = specs
            .iter()
            .map(|s| (s.kernel.clone(), s.target, s.configurations.len()))
            .collect();
        assert_eq!(targets, [("ge".into(), 0.3, 5), ("mm".into(), 0.2, 5)]);
    }
}
