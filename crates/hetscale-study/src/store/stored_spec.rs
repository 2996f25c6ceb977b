//! The spec a study was stored with, read back and checked as a spec file is.

use hetscale_kernels::KernelRegistry;

use crate::error::{Result, StudyError};
use crate::spec::StudySpec;
use crate::store::Store;

/// The spec study `name` was stored with, checked as a spec file is: a database altered by
/// hand must not reach the approaches with, say, `n_max = 0`.
pub(crate) fn stored_spec(
    store: &Store,
    name: &str,
    registry: &KernelRegistry,
) -> Result<StudySpec> {
    let fail = |why: String| StudyError::Store {
        path: store.path().to_string(),
        why,
    };
    let text = store.study_spec(name)?.unwrap_or_default();
    let spec: StudySpec = serde_json::from_str(&text).map_err(|e| {
        fail(format!("study \"{name}\" has an unreadable spec ({e}): was it written by another hetscale version?"))
    })?;
    spec.validated(registry).map_err(|e| {
        fail(format!(
            "study \"{name}\" has an invalid spec ({e}): the database was altered or damaged; rerun the study with a new --db"
        ))
    })
}
