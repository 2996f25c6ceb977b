//! What `hetscale predict` is asked: its options as plain values ([`Question`]), checked, and
//! the one question they ask ([`Mode`]); the node sets asked about, resolved on the platform.

use std::path::{Path, PathBuf};

use hetscale_kernels::MAX_N;
use hetscale_model::numbers::echoed;

use crate::approaches::predicted::check_replication_fits;
use crate::error::{Result, StudyError};
use crate::spec::configuration::{ResolvedConfiguration, resolve};

/// `hetscale predict`'s options, as given (the kernel's options, the declared program and
/// the platform are resolved by the caller, which knows how they are spelled).
#[derive(Debug, Clone, Default)]
pub struct Question {
    /// A kernel's name (`predict KERNEL`).
    pub kernel: Option<String>,
    /// A study database whose runs to fit (`--from DB`).
    pub from: Option<String>,
    /// A CSV of runs to fit (`--runs FILE.csv`).
    pub runs: Option<PathBuf>,
    /// Whether a program is declared by its work (`--work`).
    pub declared: bool,
    /// The declared program's name in the platform's machine model (`--program`).
    pub program: Option<String>,
    /// With `--from`: the study to fit (default: the database's only study).
    pub study: Option<String>,
    /// The node sets asked about, one per configuration.
    pub nodes: Vec<String>,
    /// Copies of every node of the platform (a hypothetical machine beyond the real one).
    pub replicate: usize,
    /// The speed-efficiency to hold (with `--from`, default: the study's).
    pub target: Option<f64>,
    /// The size whose time to predict, instead of the size holding the target.
    pub time_at: Option<u64>,
    /// The relative tolerance within which a size holds the target (fitted runs only).
    pub tolerance: Option<f64>,
    /// Fitted runs only: the overhead from Extra-P's normal form alone, without the
    /// program's own model.
    pub normal_form: bool,
    /// The smallest problem size searched.
    pub n_min: u64,
    /// The largest problem size searched.
    pub n_max: u64,
}

/// The one question a [`Question`]'s options ask.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode<'a> {
    /// Approach 3 for a kernel: its HBSP^1 time model on the platform.
    Kernel {
        /// The kernel's name.
        kernel: &'a str,
        /// The speed-efficiency to hold.
        target: f64,
    },
    /// Approach 3 for a declared program (`--work`): the size holding the target, or the
    /// time at `--time-at`.
    Declared,
    /// The scaling model fitted to a study's stored runs.
    Study {
        /// The database.
        db: &'a str,
    },
    /// The scaling model fitted to the runs of a CSV file.
    Runs {
        /// The file.
        csv: &'a Path,
    },
}

/// A one-line refusal of options that ask nothing, or ask it wrongly.
fn refused(message: impl Into<String>) -> StudyError {
    StudyError::Question(message.into())
}

impl Question {
    /// The question these options ask, after checking each option's range; options that
    /// conflict, or ask nothing, are a one-line error saying what to give.
    pub fn mode(&self) -> Result<Mode<'_>> {
        self.check_ranges()?;
        let fitted = self.from.is_some() || self.runs.is_some();
        if !fitted && (self.normal_form || self.tolerance.is_some()) {
            return Err(refused(
                "--normal-form and --tolerance choose how measured runs are fitted: give --from DB or --runs FILE.csv",
            ));
        }
        if self.time_at.is_some() && !fitted && !self.declared {
            return Err(refused(
                "--time-at asks the scaling model fitted to measured runs or a declared program's model: give --from DB, --runs FILE.csv or --work FORMULA (a kernel's HBSP^1 model: hetscale run KERNEL --backend sim)",
            ));
        }
        match (&self.from, &self.runs, &self.kernel, self.target) {
            (_, _, Some(kernel), _) if fitted || self.declared => Err(refused(format!(
                "give one of a KERNEL ({kernel}), a declared program (--work) or measured runs (--from DB, --runs FILE.csv): the runs name their program"
            ))),
            (Some(db), None, None, _) => Ok(Mode::Study { db }),
            (None, Some(csv), None, _) => Ok(Mode::Runs { csv }),
            (None, None, None, _) if self.declared => Ok(Mode::Declared),
            (None, None, Some(kernel), Some(target)) => Ok(Mode::Kernel { kernel, target }),
            // The command line requires the rest.
            _ => Err(refused(
                "give a KERNEL and --target, --from DB, or --runs FILE.csv and --target",
            )),
        }
    }

    /// The checks of the options every question shares.
    fn check_ranges(&self) -> Result<()> {
        if let Some(target) = self.target {
            if !(target > 0.0 && target < 1.0) {
                return Err(refused(format!(
                    "--target {} is not a speed-efficiency: use a value in (0, 1)",
                    echoed(target)
                )));
            }
        }
        if let Some(tolerance) = self.tolerance {
            if !(tolerance > 0.0 && tolerance < 0.5) {
                return Err(refused(format!(
                    "--tolerance {} is not a relative tolerance: use a value in (0, 0.5), e.g. 0.02",
                    echoed(tolerance)
                )));
            }
        }
        if let Some(n) = self.time_at {
            if !(1..=MAX_N).contains(&n) {
                return Err(refused(format!(
                    "--time-at {n} is not a problem size: use 1 to {MAX_N} (2^53)"
                )));
            }
        }
        if !(self.n_min >= 1 && self.n_max > self.n_min) {
            return Err(refused(format!(
                "--n-min {} and --n-max {} give nothing to search: use 1 <= n-min < n-max",
                self.n_min, self.n_max
            )));
        }
        if self.n_max > MAX_N {
            return Err(refused(format!(
                "--n-max {} is beyond the largest problem size the models take exactly, {MAX_N} (2^53): use a smaller --n-max",
                self.n_max
            )));
        }
        Ok(())
    }

    /// The sizes searched, `--n-min..--n-max`.
    pub fn n_range(&self) -> (u64, u64) {
        (self.n_min, self.n_max)
    }

    /// The node sets asked about, resolved on `platform` replicated `replicate` times (the
    /// platform returned); a node set it lacks is an error that says how to go beyond it.
    pub fn configurations(
        &self,
        platform: hbsp::Platform,
    ) -> Result<(hbsp::Platform, Vec<ResolvedConfiguration>)> {
        check_replication_fits(platform.nodes.len(), self.replicate)?;
        let platform = platform.replicated(self.replicate)?;
        let configs = self
            .nodes
            .iter()
            .map(|nodes| {
                resolve(&platform, nodes, nodes).map_err(|e| beyond_hint(&e, nodes, &platform))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((platform, configs))
    }
}

/// `e`, the error of node set `nodes` on `platform`, with the way beyond the real machine
/// where that is what the set asks for (more nodes than it has): a set written wrong or
/// naming no node of it is wrong on any number of copies.
fn beyond_hint(e: &StudyError, nodes: &str, platform: &hbsp::Platform) -> StudyError {
    let beyond = nodes
        .parse::<hbsp::NodeSet>()
        .is_ok_and(|set| set.asks_beyond(platform));
    if beyond {
        refused(format!(
            "{e} (to predict beyond the real machine, add --replicate K)"
        ))
    } else {
        refused(e.to_string())
    }
}
