//! `hetscale predict`: the question its options ask ([`question`]), one function per question,
//! and the answer its text and `--json` show ([`answer`]).
//!
//! The questions are approach 3 for a kernel ([`approach3::kernel`]) or for a declared
//! program ([`declared::declared`]), and the scaling model fitted to a study's stored runs
//! ([`fitted::from_study`]) or to a file's ([`fitted::from_runs`]). This folder owns what the
//! command adds to the parts it puts together: each configuration answered alone where
//! another holds the target at no size searched, a declared program's times at one size, the
//! inputs the answer echoes. The numbers are the parts' own: approach 3 is
//! [`crate::approaches::predicted`] and the scaling model [`crate::scaling`], both unaware of
//! the command; this folder sits above them, and above [`crate::study`] whose advice an
//! unreached configuration quotes, so none of them reaches up to it.

pub mod answer;
pub mod approach3;
pub mod declared;
pub mod fitted;
pub mod question;
