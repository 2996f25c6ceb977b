//! A run as the store holds it ([`RunRecord`], [`RunKey`]) and reading one from a row, refusing
//! what hetscale never writes.

use serde::{Deserialize, Serialize};

/// One completed run, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Study name.
    pub study: String,
    /// Why the run was made: `sample` (a measurement the approaches share) or
    /// `verification` (a run with real compute whose result was checked).
    pub purpose: String,
    /// Kernel name.
    pub kernel: String,
    /// Backend name.
    pub backend: String,
    /// Platform name.
    pub platform: String,
    /// Configuration label (node set).
    pub configuration: String,
    /// Number of nodes (`p` in JSON, where `nodes` is a node set).
    #[serde(rename = "p", alias = "nodes")]
    pub nodes: u32,
    /// Marked speed `C` of the configuration, flop/s.
    #[serde(rename = "marked_speed_flops", alias = "marked_speed")]
    pub marked_speed: f64,
    /// Problem size.
    pub n: u64,
    /// Repetition index (0-based) at this size.
    pub repetition: u32,
    /// Execution time, seconds.
    pub time_s: f64,
    /// Work `W(N)`, flop.
    #[serde(rename = "work_flop", alias = "work")]
    pub work: f64,
    /// Speed-efficiency `W / (T C)`.
    pub speed_efficiency: f64,
    /// Whether the result was checked against a reference (false for skeleton runs).
    pub verified: bool,
    /// Host that ran it.
    pub host: String,
    /// hetscale version that ran it.
    pub version: String,
}

/// Identifies a run for resuming.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunKey<'a> {
    /// Study name.
    pub study: &'a str,
    /// Purpose (`sample` or `verification`).
    pub purpose: &'a str,
    /// Configuration label.
    pub configuration: &'a str,
    /// Problem size.
    pub n: u64,
    /// Repetition index.
    pub repetition: u32,
}

/// The columns of a [`RunRecord`], in the order [`row_to_run`] reads them.
pub(super) const RUN_COLUMNS: &str = "study, purpose, kernel, backend, platform, configuration, nodes, marked_speed, n, \
    repetition, time_s, work, speed_efficiency, verified, host, version";
/// Completed runs only; the query goes on with `AND ...`.
pub(super) const SELECT_RUN: &str = "SELECT study, purpose, kernel, backend, platform, configuration, nodes, marked_speed, n, \
    repetition, time_s, work, speed_efficiency, verified, host, version FROM runs WHERE status = 'ok'";
/// The WHERE clause of one run by its key, parameters 1 to 5.
pub(super) const KEY_MATCH: &str =
    "WHERE study = ?1 AND purpose = ?2 AND configuration = ?3 AND n = ?4 AND repetition = ?5";

pub(super) fn row_to_run(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
    let study: String = r.get(0)?;
    let configuration: String = r.get(5)?;
    // Which run a tampered value is in, as far as the row says it.
    let of_run = |n: Option<i64>| {
        let at = n.map_or_else(String::new, |n| format!(" at n = {n}"));
        format!(
            "run of study {:?} on {:?}{at}",
            hetscale_out::echoed(&study),
            hetscale_out::echoed(&configuration)
        )
    };
    let n: i64 = column(r, 8, &of_run(None))?;
    let here = of_run(Some(n));
    let run = RunRecord {
        purpose: column(r, 1, &here)?,
        kernel: column(r, 2, &here)?,
        backend: column(r, 3, &here)?,
        platform: column(r, 4, &here)?,
        nodes: stored_integer(r, 6, "nodes", &here)?,
        marked_speed: column(r, 7, &here)?,
        n: stored_integer(r, 8, "n", &of_run(None))?,
        repetition: stored_integer(r, 9, "repetition", &here)?,
        time_s: column(r, 10, &here)?,
        work: column(r, 11, &here)?,
        speed_efficiency: column(r, 12, &here)?,
        verified: column(r, 13, &here)?,
        host: column(r, 14, &here)?,
        version: column(r, 15, &here)?,
        study: study.clone(),
        configuration: configuration.clone(),
    };
    check_stored(&run).map_err(|problem| tampered(format!("a {here} with {problem}")))?;
    Ok(run)
}

/// As [`row_to_run`], for a completed run: its time must also be one a clock measures, in
/// the range a runs CSV takes ([`crate::calibrate::runs::MEASURED_RUN_S`]); a failed run's
/// time is only how long it ran before failing.
pub(super) fn row_to_completed_run(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
    let run = row_to_run(r)?;
    let range = crate::calibrate::runs::MEASURED_RUN_S;
    if range.contains(&run.time_s) {
        return Ok(run);
    }
    Err(tampered(format!(
        "a run of study {:?} on {:?} at n = {} with time_s = {:e}, outside the {:e} to {:e} s a measured run takes",
        hetscale_out::echoed(&run.study),
        hetscale_out::echoed(&run.configuration),
        run.n,
        run.time_s,
        range.start(),
        range.end()
    )))
}

/// Column `index` of the run `of_run` names; a value of the wrong type names the run.
fn column<T: rusqlite::types::FromSql>(
    r: &rusqlite::Row<'_>,
    index: usize,
    of_run: &str,
) -> rusqlite::Result<T> {
    r.get(index).map_err(|e| match e {
        rusqlite::Error::InvalidColumnType(_, name, kind) => {
            tampered(format!("a {of_run} whose {name} is {kind}"))
        }
        other => other,
    })
}

/// Integer column `index` as `T`, refusing what hetscale never writes (a negative size, a
/// count beyond `T`, 0 nodes) instead of wrapping it; `of_run` names the run.
pub(super) fn stored_integer<T: TryFrom<i64>>(
    r: &rusqlite::Row<'_>,
    index: usize,
    name: &str,
    of_run: &str,
) -> rusqlite::Result<T> {
    let value: i64 = column(r, index, of_run)?;
    T::try_from(value).map_err(|_| tampered(format!("a {of_run} with {name} = {value}")))
}

/// What is wrong with stored quantities no run can have (`time_s = -1`); they would turn
/// into wrong results, not errors.
pub(super) fn check_stored(run: &RunRecord) -> Result<(), String> {
    if run.nodes == 0 {
        return Err("nodes = 0".into());
    }
    let bad = [
        ("time_s", run.time_s, run.time_s >= 0.0),
        ("marked_speed", run.marked_speed, run.marked_speed > 0.0),
        ("work", run.work, run.work >= 0.0),
        (
            "speed_efficiency",
            run.speed_efficiency,
            run.speed_efficiency >= 0.0,
        ),
    ]
    .into_iter()
    .find(|(_, value, ok)| !(*ok && value.is_finite()));
    match bad {
        Some((name, value, _)) => Err(format!("{name} = {value}")),
        None => Ok(()),
    }
}

/// What a database holds that hetscale never writes.
#[derive(Debug)]
pub(super) struct Tampered(String);

impl std::fmt::Display for Tampered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Tampered {}

pub(super) fn tampered(what: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        0,
        rusqlite::types::Type::Null,
        Box::new(Tampered(what)),
    )
}

/// A sample record for tests of this crate.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::RunRecord;

    /// A run of `mm` on `C_2` at size `n`.
    pub(crate) fn sample(n: u64, repetition: u32) -> RunRecord {
        RunRecord {
            study: "s".into(),
            purpose: "sample".into(),
            kernel: "mm".into(),
            backend: "sim".into(),
            platform: "sunwulf".into(),
            configuration: "C_2".into(),
            nodes: 2,
            marked_speed: 57.33e6,
            n,
            repetition,
            time_s: 0.5,
            work: 2.0 * (n as f64).powi(3),
            speed_efficiency: 0.2,
            verified: true,
            host: "h".into(),
            version: "0.1.0".into(),
        }
    }
}
