//! The `local` platform's marked speed: measured on this host once, with the suite of
//! `hetscale bench --quick`, and cached, so that E_s and psi on `local` are relative to this
//! host's speed rather than a placeholder.
//!
//! The cache is one JSON file, `local-marked-speed.json`, in `$HETSCALE_CACHE_DIR` if set, else
//! in the user's cache directory (`$XDG_CACHE_HOME/hetscale`, usually `~/.cache/hetscale`).
//! `hetscale bench --quick --save-local` measures again and replaces it; deleting it makes the
//! next use of `local` measure again. `HETSCALE_CACHE_DIR=` (empty) turns the cache off: `local`
//! then keeps its placeholder speed, and says so.

use std::path::{Path, PathBuf};

use hbsp::Platform;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StudyError};
use crate::speed::marked_speed::{BenchOptions, MarkedSpeedReport, measure};

pub use hetscale_machine::presets::CACHE_DIR_ENV;

const FILE_NAME: &str = "local-marked-speed.json";

/// What the cache holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedSpeed {
    /// Marked speed of one core, Mflop/s (the `local` platform's unit).
    pub marked_speed_mflops: f64,
    /// Cores of the host that measured it.
    pub cores: usize,
    /// What measured it.
    pub measured_by: String,
}

/// A platform as a command loads it, and what to tell the user about its speeds.
#[derive(Debug, Clone)]
pub struct LoadedPlatform {
    /// The platform; `local` at this host's cached marked speed where there is one.
    pub platform: Platform,
    /// Where `local`'s marked speed came from and how to refresh it.
    pub note: Option<String>,
}

/// The cache file, or `None` when the cache is off (an empty [`CACHE_DIR_ENV`]) or the user
/// has no cache directory.
pub fn cache_file() -> Option<PathBuf> {
    match std::env::var_os(CACHE_DIR_ENV) {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => Some(PathBuf::from(dir).join(FILE_NAME)),
        None => dirs::cache_dir().map(|d| d.join("hetscale").join(FILE_NAME)),
    }
}

/// The platform `name_or_path` (a preset or a TOML file). The `local` preset gets this host's
/// cached marked speed, measured now with the quick suite if nothing is cached yet; with the
/// cache off it keeps its placeholder (and [`Platform::placeholder_warning`] says so). A
/// speed measured now on a loaded machine (see [`MarkedSpeedReport::spread_warning`]) is used
/// for this run but not cached: the next use measures again.
pub fn load_platform(name_or_path: &str) -> Result<LoadedPlatform> {
    let platform = Platform::load(name_or_path)?;
    let file = match cache_file() {
        Some(file) if platform.has_placeholder_speeds() => file,
        _ => {
            return Ok(LoadedPlatform {
                platform,
                note: None,
            });
        }
    };
    if let Some(cached) = read(&file)? {
        return Ok(cached_at(platform, &cached, &file));
    }
    let report = measure(&BenchOptions::quick())?;
    match report.spread_warning() {
        None => {
            let cached = save(&file, &report)?;
            Ok(cached_at(platform, &cached, &file))
        }
        Some(warning) => Ok(LoadedPlatform {
            platform: at_speed(platform, &cached_of(&report), "measured now, not cached"),
            note: Some(format!(
                "platform local: {warning}; it was not cached, so the next use of local measures again"
            )),
        }),
    }
}

/// `platform` at the speeds runs on it use, without measuring anything: `local` at this
/// host's cached marked speed if one is cached, with a note saying where it came from; its
/// placeholder otherwise, with a note saying that a run measures it first.
pub fn as_runs_use(platform: Platform) -> Result<LoadedPlatform> {
    if !platform.has_placeholder_speeds() {
        return Ok(LoadedPlatform {
            platform,
            note: None,
        });
    }
    let Some(file) = cache_file() else {
        return Ok(LoadedPlatform {
            platform,
            note: None,
        });
    };
    match read(&file)? {
        Some(cached) => Ok(cached_at(platform, &cached, &file)),
        None => Ok(LoadedPlatform {
            platform,
            note: Some(format!(
                "platform local: no marked speed is cached in {} yet: the first run on local measures this host's (hetscale bench --quick) and caches it",
                file.display()
            )),
        }),
    }
}

/// `platform` at the speed cached in `file`, with the note saying so.
fn cached_at(platform: Platform, cached: &CachedSpeed, file: &Path) -> LoadedPlatform {
    let whence = format!("cached in {}", file.display());
    LoadedPlatform {
        platform: at_speed(platform, cached, &whence),
        note: Some(note(cached, file)),
    }
}

/// Caches the marked speed of `report` (replacing what was cached); returns the file.
pub fn save_report(report: &MarkedSpeedReport) -> Result<PathBuf> {
    let file = cache_file().ok_or_else(|| {
        StudyError::SpeedCache(format!(
            "no cache directory: set {CACHE_DIR_ENV} to a directory to save this host's marked speed in"
        ))
    })?;
    save(&file, report)?;
    Ok(file)
}

/// What the cache holds of `report`.
fn cached_of(report: &MarkedSpeedReport) -> CachedSpeed {
    CachedSpeed {
        marked_speed_mflops: report.marked_speed,
        cores: report.cores,
        measured_by: format!(
            "hetscale {} bench{}",
            env!("CARGO_PKG_VERSION"),
            if report.options == BenchOptions::quick() {
                " --quick"
            } else {
                ""
            }
        ),
    }
}

fn save(file: &Path, report: &MarkedSpeedReport) -> Result<CachedSpeed> {
    let cached = cached_of(report);
    let cannot = |e: std::io::Error| {
        StudyError::SpeedCache(format!(
            "cannot write this host's marked speed to {}: {e}; set {CACHE_DIR_ENV} to a writable directory, or to nothing to keep the placeholder",
            file.display()
        ))
    };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(cannot)?;
    }
    let text = serde_json::to_string_pretty(&cached).expect("a cached speed serializes");
    hetscale_out::write_atomically(file, text).map_err(cannot)?;
    Ok(cached)
}

/// The cached speed, `None` if nothing is cached; a damaged file is an error saying to delete it.
fn read(file: &Path) -> Result<Option<CachedSpeed>> {
    let text = match hetscale_out::read_capped_to_string(file, hetscale_out::input::CACHE_FILE) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(damaged(file, &e.to_string())),
    };
    let cached: CachedSpeed =
        serde_json::from_str(&text).map_err(|e| damaged(file, &e.to_string()))?;
    let speed = cached.marked_speed_mflops;
    if !(speed.is_finite() && speed > 0.0) {
        return Err(damaged(
            file,
            &format!("marked speed {speed} is not a positive number"),
        ));
    }
    Ok(Some(cached))
}

fn damaged(file: &Path, why: &str) -> StudyError {
    StudyError::SpeedCache(format!(
        "the cached marked speed of this host, {}, is unreadable ({why}): delete it and the next use of the local platform measures again",
        file.display()
    ))
}

/// `platform` at `cached`'s speed; `whence` says where the speed is kept.
fn at_speed(mut platform: Platform, cached: &CachedSpeed, whence: &str) -> Platform {
    for node in &mut platform.nodes {
        node.marked_speed = cached.marked_speed_mflops;
    }
    platform.description = format!(
        "this host, one node per core at the marked speed measured by {} ({} Mflop/s, {whence}); network: placeholders until hetscale probe --write-platform",
        cached.measured_by, cached.marked_speed_mflops,
    );
    platform
}

fn note(cached: &CachedSpeed, file: &Path) -> String {
    format!(
        "platform local: marked speed {:.1} Mflop/s per core, measured on this host by {} and cached in {}; refresh it with `hetscale bench --quick --save-local`, or delete the file",
        cached.marked_speed_mflops,
        cached.measured_by,
        file.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cached(speed: f64) -> CachedSpeed {
        CachedSpeed {
            marked_speed_mflops: speed,
            cores: 2,
            measured_by: "hetscale 0 bench --quick".into(),
        }
    }

    #[test]
    fn a_cached_speed_replaces_the_placeholder_and_says_where_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE_NAME);
        std::fs::write(&file, serde_json::to_string(&cached(2345.5)).unwrap()).unwrap();
        let platform = cached_at(
            hetscale_machine::presets::local(2),
            &read(&file).unwrap().unwrap(),
            &file,
        )
        .platform;
        assert!(
            platform
                .description
                .contains(&format!("2345.5 Mflop/s, cached in {}", file.display()))
        );
        assert!(platform.nodes.iter().all(|n| n.marked_speed == 2345.5));
        assert!(!platform.has_placeholder_speeds());
        assert_eq!(platform.placeholder_warning(), None);
        assert_eq!(
            note(&cached(2345.5), &file),
            format!(
                "platform local: marked speed 2345.5 Mflop/s per core, measured on this host by hetscale 0 bench --quick and cached in {}; refresh it with `hetscale bench --quick --save-local`, or delete the file",
                file.display()
            )
        );
    }

    #[test]
    fn no_file_is_nothing_cached_and_a_damaged_one_says_to_delete_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE_NAME);
        assert_eq!(read(&file).unwrap(), None);
        for text in ["{", &serde_json::to_string(&cached(-1.0)).unwrap()] {
            std::fs::write(&file, text).unwrap();
            let err = read(&file).unwrap_err().to_string();
            assert!(
                err.contains("is unreadable") && err.contains("delete it and the next use"),
                "{err}"
            );
        }
    }
}
