//! # hetscale-kernels
//!
//! The papers' algorithms as HBSP programs. Under construction: see issue 5.
