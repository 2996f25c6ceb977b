//! A study that settled no configuration in any approach: every one failed or its target was
//! unreachable. What it found is still written; the command ends with its own exit code.

use crate::study::result::StudyResult;

/// The studies that settled no configuration in any approach.
#[derive(Debug)]
pub struct Unsettled {
    /// The names of the studies that settled nothing.
    studies: Vec<String>,
}

impl std::fmt::Display for Unsettled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            // Which of n_min, n_max or the target to change depends on the side of the range
            // each target missed, which each configuration's line says.
            "study {} settled no configuration: each \"not settled\" line above (and the report) says what to change, n_min, n_max or the target, or which runs failed",
            self.studies.join(", ")
        )
    }
}

impl std::error::Error for Unsettled {}

/// [`Unsettled`] if a study of `results` settled nothing.
pub fn check_settled(results: &[StudyResult]) -> Result<(), Unsettled> {
    let studies: Vec<String> = results
        .iter()
        .filter(|r| {
            [&r.measured, &r.computed, &r.predicted]
                .into_iter()
                .flatten()
                .all(|approach| approach.points.is_empty())
        })
        .map(|r| format!("\"{}\"", r.spec.name))
        .collect();
    if studies.is_empty() {
        return Ok(());
    }
    Err(Unsettled { studies })
}
