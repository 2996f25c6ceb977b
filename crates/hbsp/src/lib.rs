//! # hbsp
//!
//! The HBSP^1 library (Williams & Parsons 2001). Under construction: see issue 3.
