//! Reading the files a user gives (a runs CSV, a study spec, a platform file) within a stated
//! cap, and echoing what was read in errors at a readable length.
//!
//! A file is read through [`std::io::Read::take`] one byte past its cap, so `/dev/zero`, a FIFO
//! or a file still growing can never grow memory beyond it: the read stops there and fails
//! with a one-line error that names the cap and what to do.

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

/// The most a kind of input file may hold, and what to do with a larger one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputCap {
    /// The largest file read, bytes.
    pub bytes: u64,
    /// What the file is, after "the cap on", e.g. `a runs file`.
    pub of: &'static str,
    /// What to do with a larger one.
    pub advice: &'static str,
}

/// A runs CSV (`calibrate --runs`, `predict --runs`). 64 MiB is about a million runs of
/// 60 bytes, ten times a long campaign's export; every row read is held in memory with its
/// fields as text, several times its bytes, so the cap keeps a file's runs within a few GB.
pub const RUNS_FILE: InputCap = InputCap {
    bytes: 64 << 20,
    of: "a runs file",
    advice: "split it into files of fewer runs (by configuration or kernel), or keep the repetitions a fit needs",
};

/// A study spec (TOML). A spec names a few configurations and sizes: 1 MiB is far beyond any
/// written by hand or by a script, and a TOML document is held in memory several times over
/// while it is parsed.
pub const SPEC_FILE: InputCap = InputCap {
    bytes: 1 << 20,
    of: "a study spec",
    advice: "a spec lists configurations and sizes, not data: check that this is the spec file",
};

/// A platform file (TOML). 16 MiB holds over 100,000 `[[node]]` tables with their measured
/// segments: more than any cluster, while a file that large is parsed in well under a second.
pub const PLATFORM_FILE: InputCap = InputCap {
    bytes: 16 << 20,
    of: "a platform file",
    advice: "check that this is a platform file (hetscale platform show sunwulf prints one)",
};

/// An MPI host file (`--hostfile`): a line per host, so 1 MiB is tens of thousands of hosts.
pub const HOST_FILE: InputCap = InputCap {
    bytes: 1 << 20,
    of: "a host file",
    advice: "list one host per line (a name and its slots)",
};

/// A file hetscale keeps for itself (the cached marked speed): a few hundred bytes when
/// hetscale wrote it.
pub const CACHE_FILE: InputCap = InputCap {
    bytes: 1 << 20,
    of: "a cache file",
    advice: "hetscale never writes one this large",
};

/// Why an input file was not read.
#[derive(Debug)]
pub enum InputError {
    /// It could not be opened or read (the operating system's reason).
    Unreadable(io::Error),
    /// It holds more than its cap.
    TooLarge(InputCap),
}

impl InputError {
    /// Whether the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Unreadable(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

/// What is wrong, without the file's name (the caller's error names it): `larger than 64 MiB,
/// the cap on a runs file: split it ...`, or the operating system's reason.
impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreadable(e) => write!(f, "{e}"),
            Self::TooLarge(cap) => write!(
                f,
                "larger than {}, the cap on {}: {}",
                mebibytes(cap.bytes),
                cap.of,
                cap.advice
            ),
        }
    }
}

impl std::error::Error for InputError {}

fn mebibytes(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

/// The bytes of the file at `path`, refused when it holds more than `cap` (read no further
/// than one byte past it).
pub fn read_capped(path: impl AsRef<Path>, cap: InputCap) -> Result<Vec<u8>, InputError> {
    let file = std::fs::File::open(path).map_err(InputError::Unreadable)?;
    let mut bytes = Vec::new();
    file.take(cap.bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(InputError::Unreadable)?;
    if bytes.len() as u64 > cap.bytes {
        return Err(InputError::TooLarge(cap));
    }
    Ok(bytes)
}

/// As [`read_capped`], as UTF-8 text (invalid UTF-8 is an [`io::ErrorKind::InvalidData`]
/// error, "stream did not contain valid UTF-8").
pub fn read_capped_to_string(path: impl AsRef<Path>, cap: InputCap) -> Result<String, InputError> {
    let bytes = read_capped(path, cap)?;
    String::from_utf8(bytes).map_err(|_| {
        InputError::Unreadable(io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ))
    })
}

/// The most characters of an input an error echoes: enough to recognise a value or a node
/// list, short enough that the error stays one readable line.
pub const ECHOED_CHARS: usize = 60;

/// `text` as an error echoes it: whole up to [`ECHOED_CHARS`] characters, else its first ones
/// with an ellipsis and its length (`9999999999...  (1000000 characters)`), so a megabyte
/// field or node list never becomes a megabyte error line.
pub fn echoed(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(ECHOED_CHARS) {
        None => text.into(),
        Some((end, _)) => {
            format!("{}... ({} characters)", &text[..end], text.chars().count()).into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: InputCap = InputCap {
        bytes: 8,
        of: "a test file",
        advice: "make it smaller",
    };

    #[test]
    fn a_file_within_its_cap_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "12345678").unwrap();
        assert_eq!(read_capped(&path, TINY).unwrap(), b"12345678");
    }

    #[test]
    fn a_file_past_its_cap_is_refused_naming_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "123456789").unwrap();
        let err = read_capped(&path, TINY).unwrap_err();
        assert!(matches!(err, InputError::TooLarge(_)), "{err:?}");
        let cap = InputCap {
            bytes: 64 << 20,
            ..TINY
        };
        assert_eq!(
            InputError::TooLarge(cap).to_string(),
            "larger than 64 MiB, the cap on a test file: make it smaller"
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_file_stops_at_its_cap() {
        // /dev/zero never ends: read whole, it would fill memory.
        let err = read_capped("/dev/zero", TINY).unwrap_err();
        assert!(matches!(err, InputError::TooLarge(_)), "{err:?}");
    }

    #[test]
    fn a_missing_file_says_so() {
        let err = read_capped("/nonexistent/hetscale-input", TINY).unwrap_err();
        assert!(err.is_not_found(), "{err:?}");
    }

    #[test]
    fn short_text_is_echoed_whole() {
        assert_eq!(echoed("sunblade:3"), "sunblade:3");
        let exactly = "x".repeat(ECHOED_CHARS);
        assert_eq!(echoed(&exactly), exactly);
    }

    #[test]
    fn long_text_is_cut_with_its_length() {
        let long = "9".repeat(1_000_000);
        let shown = echoed(&long);
        assert_eq!(
            shown,
            format!("{}... (1000000 characters)", "9".repeat(ECHOED_CHARS))
        );
        // Cut on a character, not a byte: no panic inside a multi-byte one.
        let wide = "é".repeat(100);
        assert!(echoed(&wide).starts_with(&"é".repeat(ECHOED_CHARS)));
    }
}
