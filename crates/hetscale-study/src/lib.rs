//! # hetscale-study
//!
//! Scalability studies: the measured, computed and predicted approaches, and their store.
