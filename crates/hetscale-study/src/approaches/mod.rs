//! The three approaches to the problem size that holds a target speed-efficiency, and what
//! their numbers are worth: measured by runs ([`measured`]), computed from fitted models
//! ([`computed`]), predicted from the kernel's HBSP^1 time model ([`predicted`]), and their
//! 95% intervals ([`uncertainty`]). The scaling model fitted to a study's runs, which is none
//! of the three, is [`crate::scaling`].

pub mod computed;
pub mod measured;
pub mod predicted;
pub mod uncertainty;
