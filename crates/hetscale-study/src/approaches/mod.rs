//! The three approaches to the problem size that holds a target speed-efficiency, and what
//! their numbers are worth: measured by runs ([`measured`]), computed from fitted models
//! ([`computed`]), predicted from the kernel's HBSP^1 time model ([`predicted`]), their 95%
//! intervals ([`uncertainty`]), and the scaling model fitted to a study's runs, which predicts
//! configurations never run ([`scaling_fit`], reporting [`scaling_prediction`]), also as the time at one size
//! ([`scaling_time`]).

pub mod computed;
pub mod measured;
pub mod predicted;
pub mod scaling_fit;
pub mod scaling_prediction;
pub mod scaling_time;
pub mod uncertainty;
