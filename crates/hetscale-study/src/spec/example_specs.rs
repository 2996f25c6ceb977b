//! Two example specs, embedded: GE at E_s = 0.3 over JPDC Table 5's configurations and MM at
//! E_s = 0.2 over Table 7's, on the `sim` backend with the uncalibrated `sunwulf` preset, all
//! three approaches (`studies/default-ge.toml`, `studies/default-mm.toml`, named `default-ge`
//! and `default-mm`). They read like any user's spec, and the report's tests run them.
//!
//! They are not what `hetscale study` runs with no spec: that default study is the JPDC
//! reproduction, `hetscale_papers::reproduce::DEFAULT_STUDY`, each experiment calibrated on its
//! base configuration first.

use crate::error::Result;
use crate::spec::StudySpec;

/// The embedded specs, with the name errors show for each.
const SPECS: [(&str, &str); 2] = [
    (
        "example spec default-ge.toml",
        include_str!("../../studies/default-ge.toml"),
    ),
    (
        "example spec default-mm.toml",
        include_str!("../../studies/default-mm.toml"),
    ),
];

/// The example specs: GE, then MM.
pub fn example_specs() -> Result<Vec<StudySpec>> {
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
        let specs = example_specs().unwrap();
        let targets: Vec<(String, f64, usize)> = specs
            .iter()
            .map(|s| (s.kernel.clone(), s.target, s.configurations.len()))
            .collect();
        assert_eq!(targets, [("ge".into(), 0.3, 5), ("mm".into(), 0.2, 5)]);
    }
}
