//! Section builders for the papers' views. Each returns a [`crate::Section`] with a fixed id
//! (listed in [`ids`]; a study's views are `<study>-<view>`, see [`study`]) holding
//! explanatory text, figures and tables.

pub mod collectives;
pub mod plan;
pub mod reproduction;
pub mod run;
pub mod study;
pub mod summa;
pub mod trace;

/// The section ids of the views (each figure is `<id>-figure`, each table `<id>`).
pub mod ids {
    /// [`super::trace::spacetime_section`].
    pub const SPACETIME: &str = "spacetime";
    /// [`super::trace::average_speed_section`].
    pub const AVERAGE_SPEED: &str = "average-speed";
    /// [`super::trace::task_summary_section`].
    pub const TASK_SUMMARY: &str = "task-summary";
    /// [`super::collectives::collective_section`].
    pub const COLLECTIVE_IMPROVEMENTS: &str = "collective-improvements";
    /// [`super::summa::summa_section`].
    pub const SUMMA_EFFICIENCY: &str = "summa-efficiency";
}

/// `a, b, c` or `a, b, c and 4 more`.
pub(crate) fn short_list(names: &[&str], shown: usize) -> String {
    if names.len() <= shown {
        names.join(", ")
    } else {
        format!(
            "{} and {} more",
            names[..shown].join(", "),
            names.len() - shown
        )
    }
}
