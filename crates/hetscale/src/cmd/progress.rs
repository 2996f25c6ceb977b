//! The progress of a study on standard error: on a terminal, a bar per approach and
//! configuration; elsewhere (a log file, a CI job), a line per size measured; nothing with
//! `--quiet`. It tells, at the end, what a resumed study reused and retried.

use crate::output::errln;
use hetscale_study::runner::{Measurement, Observer};
use hetscale_study::spec::Approach;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::{Cell, RefCell};
use std::io::IsTerminal;
use std::time::Instant;

/// Progress: on a terminal, a bar per approach and configuration; elsewhere (a log file, a
/// CI job), a line per size measured on stderr; nothing with `--quiet`.
pub(crate) struct Progress {
    bars: MultiProgress,
    current: RefCell<Option<ProgressBar>>,
    name: String,
    /// Completed runs read from the database instead of run again.
    reused: Cell<usize>,
    /// Runs stored as failed by an earlier run of the study, run again.
    retried: Cell<usize>,
    /// Whether to write log lines (stderr is not a terminal and not `--quiet`).
    log: bool,
    /// The configuration being settled: its log prefix, start and sizes measured so far.
    configuration: RefCell<String>,
    started: Cell<Instant>,
    sizes: Cell<usize>,
    /// Sizes the previous configuration of the same approach took: the estimate of this one's.
    previous_sizes: Cell<Option<usize>>,
}

impl Progress {
    pub(crate) fn new(name: &str, quiet: bool) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let bars = MultiProgress::new();
        if quiet {
            bars.set_draw_target(ProgressDrawTarget::hidden());
        }
        Self {
            bars,
            current: RefCell::new(None),
            name: name.to_owned(),
            reused: Cell::new(0),
            retried: Cell::new(0),
            log: !terminal && !quiet,
            configuration: RefCell::new(String::new()),
            started: Cell::new(Instant::now()),
            sizes: Cell::new(0),
            previous_sizes: Cell::new(None),
        }
    }

    /// What the user is told of a resumed study; none for a study that neither reused a
    /// stored run nor retried a failed one.
    pub(crate) fn resumed_line(&self) -> Option<String> {
        let counts = [
            (self.reused.get(), "reused", "stored run"),
            (self.retried.get(), "retried", "failed run"),
        ];
        let said: Vec<String> = counts
            .into_iter()
            .filter(|(count, _, _)| *count > 0)
            .map(|(count, verb, what)| format!("{verb} {}", plural(count, what)))
            .collect();
        (!said.is_empty()).then(|| format!("Resumed study \"{}\": {}", self.name, said.join(", ")))
    }

    pub(crate) fn finish(&self) {
        if let Some(bar) = self.current.borrow_mut().take() {
            bar.finish();
        }
    }

    /// The log line of a size just measured.
    fn log_line(&self, m: &Measurement) -> String {
        let elapsed = self.started.get().elapsed().as_secs_f64();
        let eta = remaining_s(self.sizes.get(), elapsed, self.previous_sizes.get())
            .map_or("ETA after the first configuration".into(), |s| {
                format!("ETA {s:.0} s (as many sizes as the previous configuration)")
            });
        format!(
            "{}: N = {}, E_s = {:.4}, T = {:.4e} s (median of {}); {} in {elapsed:.1} s, {eta}",
            self.configuration.borrow(),
            m.n,
            m.speed_efficiency,
            m.time.median,
            plural(m.time.samples, "run"),
            plural(self.sizes.get(), "size")
        )
    }
}

/// The bar of a scaling model's fit on standard error (drawn on a terminal only, like a
/// study's): a spinner while the model is selected, then the bootstrap's resamples, every
/// configuration asked about adding its own; cleared when done.
pub(crate) struct FitBar(ProgressBar);

impl FitBar {
    pub(crate) fn new(runs: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {pos}/{len} [{elapsed}]")
                .expect("a valid template"),
        );
        bar.set_message(format!(
            "fitting the scaling model to {runs}; bootstrap resamples"
        ));
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Self(bar)
    }

    /// What the bootstrap tells, moving the bar: each bootstrap's first resample adds its
    /// total to the bar's length.
    pub(crate) fn progress(&self) -> hetscale_model::scaling::Progress {
        let bar = self.0.clone();
        hetscale_model::scaling::Progress::new(move |done, total| {
            if done == 0 {
                bar.inc_length(total as u64);
            } else {
                bar.inc(1);
            }
        })
    }
}

impl Drop for FitBar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

fn plural(count: usize, word: &str) -> String {
    match count {
        1 => format!("1 {word}"),
        _ => format!("{count} {word}s"),
    }
}

/// Seconds left in a configuration that has measured `done` sizes in `elapsed` seconds, if it
/// takes as many as `expected` (the previous configuration's count; at least one more).
fn remaining_s(done: usize, elapsed: f64, expected: Option<usize>) -> Option<f64> {
    let per_size = elapsed / done.max(1) as f64;
    let left = expected?.saturating_sub(done);
    Some(left as f64 * per_size)
}

impl Observer for Progress {
    fn configuration_started(&self, approach: Approach, label: &str, index: usize, total: usize) {
        let prefix = format!(
            "{} {} {label} ({}/{total})",
            self.name,
            approach.name(),
            index + 1
        );
        if index == 0 {
            self.previous_sizes.set(None);
        }
        *self.configuration.borrow_mut() = prefix.clone();
        self.started.set(Instant::now());
        self.sizes.set(0);
        let bar = self.bars.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix} {wide_msg} [{elapsed}]")
                .expect("a valid template"),
        );
        bar.set_prefix(prefix);
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        *self.current.borrow_mut() = Some(bar);
    }

    fn measured(&self, m: &Measurement) {
        self.sizes.set(self.sizes.get() + 1);
        if self.log {
            errln!("{}", self.log_line(m));
        }
        if let Some(bar) = &*self.current.borrow() {
            bar.set_message(format!(
                "N = {}: E_s = {:.4}, T = {:.4} s",
                m.n, m.speed_efficiency, m.time.median
            ));
        }
    }

    fn run_reused(&self) {
        self.reused.set(self.reused.get() + 1);
    }

    fn failure_retried(&self) {
        self.retried.set(self.retried.get() + 1);
    }

    fn configuration_finished(&self, _approach: Approach, _label: &str, outcome: &str) {
        self.previous_sizes.set(Some(self.sizes.get()));
        if self.log {
            errln!(
                "{}: {outcome} after {} in {:.1} s",
                self.configuration.borrow(),
                plural(self.sizes.get(), "size"),
                self.started.get().elapsed().as_secs_f64()
            );
        }
        if let Some(bar) = self.current.borrow_mut().take() {
            bar.finish_with_message(outcome.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::remaining_s;

    #[test]
    fn the_eta_assumes_as_many_sizes_as_the_previous_configuration() {
        assert_eq!(remaining_s(2, 10.0, Some(6)), Some(20.0));
        assert_eq!(remaining_s(7, 10.0, Some(6)), Some(0.0));
        assert_eq!(remaining_s(2, 10.0, None), None);
    }
}
