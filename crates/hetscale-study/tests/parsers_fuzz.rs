//! The parsers of user input never panic: study specs, platform files and .npy inputs fed
//! random bytes and mutations of valid files are either accepted or rejected with one line.

use proptest::prelude::*;

const SPEC: &str = include_str!("../studies/default-ge.toml");
const PLATFORM: &str = r#"
name = "two"
speed_unit = "Mflop/s"

[[node]]
name = "a"
marked_speed = 100.0

[[node]]
name = "b"
marked_speed = 50.0
r = 1.5

[network]
g_s_per_byte = 1e-9
o_s = 1e-6
L = { base_s = 1e-5, per_node_s = 1e-6, per_log2_node_s = 0.0 }
"#;

/// `valid` with a random byte span replaced by random bytes.
fn mutated(valid: &'static str) -> impl Strategy<Value = Vec<u8>> {
    (
        0..valid.len(),
        0usize..16,
        prop::collection::vec(any::<u8>(), 0..16),
    )
        .prop_map(move |(at, cut, insert)| {
            let mut bytes = valid.as_bytes().to_vec();
            let end = (at + cut).min(bytes.len());
            bytes.splice(at..end, insert);
            bytes
        })
}

fn one_line(err: &str) -> bool {
    !err.trim().is_empty() && err.trim().lines().count() == 1
}

fn check_spec(bytes: &[u8]) -> Result<(), TestCaseError> {
    let text = String::from_utf8_lossy(bytes);
    if let Err(e) = hetscale_study::spec::StudySpec::from_toml_str(&text, "fuzz.toml") {
        let e = e.to_string();
        prop_assert!(one_line(&e), "{e}");
    }
    Ok(())
}

fn check_platform(bytes: &[u8]) -> Result<(), TestCaseError> {
    let text = String::from_utf8_lossy(bytes);
    if let Err(e) = hbsp::Platform::from_toml_str(&text) {
        let e = e.to_string();
        prop_assert!(one_line(&e), "{e}");
    }
    Ok(())
}

fn check_npy(bytes: &[u8]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.npy");
    std::fs::write(&path, bytes).unwrap();
    if let Err(e) = hetscale_kernels::read_npy(&path) {
        let e = e.to_string();
        prop_assert!(one_line(&e), "{e}");
    }
    Ok(())
}

/// A valid .npy file of a 3 x 3 float64 matrix.
fn valid_npy() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.npy");
    let m = hetscale_kernels::Matrix::new(3, 3, (0..9).map(f64::from).collect()).unwrap();
    hetscale_kernels::write_npy(&path, &hetscale_kernels::Array::matrix("m", m)).unwrap();
    std::fs::read(path).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn specs_from_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check_spec(&bytes)?;
    }

    #[test]
    fn specs_mutated(bytes in mutated(SPEC)) {
        check_spec(&bytes)?;
    }

    #[test]
    fn platforms_from_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check_platform(&bytes)?;
    }

    #[test]
    fn platforms_mutated(bytes in mutated(PLATFORM)) {
        check_platform(&bytes)?;
    }

    #[test]
    fn npy_from_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        check_npy(&bytes)?;
    }

    #[test]
    fn npy_mutated(at in 0usize..200, insert in prop::collection::vec(any::<u8>(), 1..8)) {
        let mut bytes = valid_npy();
        let at = at.min(bytes.len());
        let end = (at + insert.len()).min(bytes.len());
        bytes.splice(at..end, insert);
        check_npy(&bytes)?;
    }
}

#[test]
fn the_fixtures_are_valid() {
    hetscale_study::spec::StudySpec::from_toml_str(SPEC, "default").unwrap();
    hbsp::Platform::from_toml_str(PLATFORM).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.npy"), valid_npy()).unwrap();
    hetscale_kernels::read_npy(dir.path().join("m.npy")).unwrap();
}
