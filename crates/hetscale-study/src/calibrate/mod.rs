//! Calibration: fitting a platform's machine model to measured runs (`hetscale calibrate`).
//!
//! For one kernel, the simulated time of a run on a platform's machine model is
//! `T = (A + K w_1/2) / f + S c + B + s + P s_p`: `A` the compute time at the marked speed,
//! `w_1/2` the half-performance work of each compute block (Sun & Rover's average unit speed
//! grows with the work: `r(w) = r_inf w / (w + w_1/2)`), `K` the seconds each operation of
//! `w_1/2` adds on the slowest path, `f = r_inf / C_j` the achieved fraction of the marked
//! speed, `S` the measured collectives and barriers and `c` the kernel's `collective_scale` on
//! them, `B` everything else the model charges (messages), `s` the kernel's start-up per run
//! and `s_p` its start-up per process (`P` the run's processes). Each measured run is
//! simulated at `f = 1` and at `f = 1/2` (and, when `w_1/2` is free, once more with a
//! reference `w_1/2`; when `c` is free, once more at `c = 2`), which gives its `A`, `K`, `S`
//! and `B` (exactly while the slowest node stays the slowest); `1/f`, `w_1/2 / f`, `c`, `s`
//! and `s_p` then come from a linear least-squares fit of the measured times, weighted by
//! `1/T` so that each run counts by its relative error, with 95% intervals. Parameters not
//! free keep the platform's values. Each fit also reports its leave-one-out error
//! ([`CrossValidation`]), which compares choices of free parameters on the same runs. A run
//! used here is a calibration run: it must never be the one a prediction is checked against.
//!
//! This folder owns calibration: the fit (`fit`), the runs it reads from CSV ([`runs`]) or a study
//! database ([`stored_runs`]), the runs simulated and split into the fit's parts
//! (`simulation`: [`simulate`], [`with_rate`]), the choice of free parameters by
//! leave-one-out error ([`choose_fit`]), the parameters asked for by name or `auto`
//! ([`calibrate_as_asked`]) and the platform file written, extended if it exists
//! ([`platform_to_write`]).
//!
//! ```no_run
//! use hetscale_kernels::KernelRegistry;
//! use hetscale_study::calibrate::{calibrate, FreeParameter};
//! use hetscale_study::calibrate::runs::MeasuredRun;
//!
//! let platform = hbsp::Platform::load("sunwulf")?;
//! let runs = vec![MeasuredRun {
//!     configuration: "C'_2".into(),
//!     nodes: "server:1,sunfire:1".into(),
//!     kernel: "mm".into(),
//!     n: 165,
//!     time_s: 0.78,
//! }];
//! let fit = calibrate(&platform, &KernelRegistry::default(), &Default::default(), &runs,
//!     &[FreeParameter::RateFraction])?;
//! println!("f = {:.3}", fit.kernels[0].rate_fraction.estimate);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod choice;
mod fit;
mod platform_file;
mod request;
pub mod runs;
mod simulation;
mod stored;

pub use choice::{ALL_PARAMETERS, FitChoice, choose_fit};
pub use fit::{
    CrossValidation, Estimate, FreeParameter, KernelCalibration, PlatformCalibration, Residual,
    calibrate, calibrate_declared, faster_than_marked, simulated_faster_than_marked,
};
pub use platform_file::platform_to_write;
pub use request::{Calibrated, CalibrationDocument, calibrate_as_asked};
pub use simulation::{simulate, skeleton_run, with_rate};
pub use stored::{StoredRuns, stored_runs};
