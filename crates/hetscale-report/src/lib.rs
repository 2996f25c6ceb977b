//! # hetscale-report
//!
//! Tables, plots and the HTML report. Under construction: see issue 7.
