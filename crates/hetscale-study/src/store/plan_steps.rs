//! The steps of a study that plans its own runs (`plan_steps`): which run it chose, why, what
//! it expected and what it cost, one row per step, written as the step completes.

use serde::Serialize;

/// One step of a planned study, as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanStepRecord {
    /// The study.
    pub study: String,
    /// Its number, from 1.
    pub step: u32,
    /// The configuration run.
    pub configuration: String,
    /// The size run.
    pub n: u64,
    /// How many runs it asked for there (repetitions in all, after it).
    pub runs: u32,
    /// `first design`, `new size`, `repetition` or `explore`.
    pub kind: String,
    /// The machine time the model expected it to cost, s.
    pub expected_cost_s: f64,
    /// The summed `ln(hi/lo)` of the intervals not pinned, before it.
    pub width_before: f64,
    /// The same, as expected after it.
    pub width_expected: f64,
    /// The machine time its runs took, s.
    pub cost_s: f64,
    /// The machine time the study had spent after it, s.
    pub spent_s: f64,
    /// Why it was chosen.
    pub reason: String,
    /// The `hi/lo` of each interval asked about before it, as the study's answer read it (an
    /// open upper end at the search bound); empty for a first design's step.
    pub hi_over_lo: Vec<f64>,
}

/// The columns of `plan_steps` a step is written to and read from, in [`PlanStepRecord`]'s
/// order.
pub(super) const STEP_COLUMNS: &str = "study, step, configuration, n, runs, kind, \
    expected_cost_s, width_before, width_expected, cost_s, spent_s, reason, hi_over_lo";

/// A row of [`STEP_COLUMNS`] as a step.
pub(super) fn row_to_step(r: &rusqlite::Row<'_>) -> rusqlite::Result<PlanStepRecord> {
    Ok(PlanStepRecord {
        study: r.get(0)?,
        step: r.get(1)?,
        configuration: r.get(2)?,
        n: u64::try_from(r.get::<_, i64>(3)?).unwrap_or_default(),
        runs: r.get(4)?,
        kind: r.get(5)?,
        expected_cost_s: r.get(6)?,
        width_before: r.get(7)?,
        width_expected: r.get(8)?,
        cost_s: r.get(9)?,
        spent_s: r.get(10)?,
        reason: r.get(11)?,
        // Written by this module as a JSON list; anything else reads as none.
        hi_over_lo: serde_json::from_str(&r.get::<_, String>(12)?).unwrap_or_default(),
    })
}
