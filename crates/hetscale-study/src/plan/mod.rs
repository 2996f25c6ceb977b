//! A study that plans its own runs: the run to make next is the one with the largest expected
//! shrink of the 95% intervals of `N` at the configurations asked about, per second of
//! machine time, until each interval is within `±R` of its estimate or the budget is spent.
//!
//! - [`look`]: what the scaling model ([`crate::scaling`]) says of `N` on each configuration
//!   asked about, and how far each interval is from the precision asked;
//! - [`candidates`]: the runs the study could make next: on every configuration it may run, at
//!   the size holding the target there, at the sizes asked about, and another repetition of
//!   the largest size run;
//! - [`picks`]: each candidate's expected gain and cost, and the greedy choice of the next
//!   `k` (`hetscale plan`);
//! - [`ahead`]: the next runs from a study's stored runs, run by nothing (`hetscale plan`);
//! - [`adaptive`]: the study that makes them (`hetscale study --predict-nodes ... --precision
//!   R`), every run and step stored as it completes, so that it resumes like any study.
//!
//! How a gain is expected. A run not yet made is supposed to measure what the fitted model
//! predicts for it (the "kriging believer" of Ginsbourger, Le Riche and Carraro, 2010): the
//! runs refitted with it (the model reselected, the bootstrap rerun with fewer resamples) give
//! the intervals it would leave. The gain is the summed log width, `ln(hi/lo)`, that it takes
//! off the intervals not yet within `±R`; an open upper end counts at the search bound. A run
//! on a configuration larger than any run so far lowers the doublings the interval
//! extrapolates over; a run at a size already run narrows the resamples' spread. The cost is
//! the model's time for the run (and its warm-up), so the pick weighs a configuration's speed
//! and size: a second of machine time is worth the same wherever it is spent.
//!
//! Design choices beyond the papers, in the spirit of Extra-P's measurement advisor and of
//! Ritter et al.'s cost-effective sampling (IPDPS 2020), aimed at one question: the interval
//! of `N` at a scale not run, rather than the model's fit over the runs.

pub mod adaptive;
pub mod ahead;
pub mod candidates;
pub mod look;
pub mod picks;

pub use adaptive::{AdaptiveOptions, AdaptiveStudy, run_adaptive};
pub use ahead::{PlanAhead, PlanRequest, plan_from_study};
pub use candidates::Candidate;
pub use look::PredictedSize;
pub use picks::{PLAN_RESAMPLES, Pick, Planner};
