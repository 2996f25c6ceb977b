//! A run repeated as hyperfine repeats one (`hetscale run --runs K --warmup K`): unmeasured
//! warm-up runs, then measured runs whose median is the time the run reports.

use hetscale_kernels::KernelRun;

use crate::error::StudyError;
use crate::runner::program::RunOutcome;
use crate::stats::{Summary, summarize};

/// A run whose time [`repeated`] summarises.
pub trait Timed {
    /// The run's time, s.
    fn time_s(&self) -> f64;
    /// Sets the run's time, s.
    fn set_time_s(&mut self, time_s: f64);
}

impl Timed for KernelRun {
    fn time_s(&self) -> f64 {
        self.time_s
    }
    fn set_time_s(&mut self, time_s: f64) {
        self.time_s = time_s;
    }
}

impl Timed for RunOutcome {
    fn time_s(&self) -> f64 {
        self.time_s
    }
    fn set_time_s(&mut self, time_s: f64) {
        self.time_s = time_s;
    }
}

/// A run repeated: the last of the measured runs, their statistics and their times.
#[derive(Debug, Clone)]
pub struct Repetitions<R> {
    /// The last measured run, its time set to the median of the measured times.
    pub last: R,
    /// The statistics of the measured times, s.
    pub stats: Summary,
    /// Every measured run's time, in order, s.
    pub times_s: Vec<f64>,
}

/// `warmup` unmeasured runs of `once`, then `runs` measured ones.
pub fn repeated<R: Timed, E: From<StudyError>>(
    warmup: u32,
    runs: u32,
    mut once: impl FnMut() -> Result<R, E>,
) -> Result<Repetitions<R>, E> {
    for _ in 0..warmup {
        once()?;
    }
    let mut times = Vec::with_capacity(runs as usize);
    let mut last = None;
    for _ in 0..runs {
        let run = once()?;
        times.push(run.time_s());
        last = Some(run);
    }
    let summary = summarize(&times)?;
    let mut last = last.ok_or_else(|| StudyError::Stats("--runs is at least 1".into()))?;
    last.set_time_s(summary.median);
    Ok(Repetitions {
        last,
        stats: summary,
        times_s: times,
    })
}
