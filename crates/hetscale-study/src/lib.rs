//! # hetscale-study
//!
//! Scalability studies: find, per configuration, the problem size that holds a target
//! speed-efficiency — measured (searched by runs), computed (fitted and inverted) and predicted
//! (the kernel's HBSP^1 time model) — and the isospeed-e scalability `psi` between
//! configurations, with every run stored in SQLite as it completes.
//!
//! Grouped by job: [`spec`] (what a study is), [`runner`] (running a program, kernels,
//! commands and MPI jobs), [`approaches`] (measured, computed, predicted and their intervals),
//! [`scaling`] (the scaling model fitted to measured runs), [`study`] (a whole study, its
//! warnings and summary), [`predict`] (what `hetscale predict` asks and answers), [`plan`] (a
//! study that plans its own runs, and `hetscale plan`),
//! [`calibrate`], [`store`] (the database and its exports) and [`speed`] (this host's marked
//! speed), over the shared [`error`],
//! [`json`], [`stats`] and [`csv_rows`]. The papers' experiments are crate `hetscale-papers`'s.
//!
//! ```
//! use hetscale_study::{runner::Silent, spec::StudySpec, store::Store, study::run_study};
//!
//! let spec = StudySpec::from_toml_str(r#"
//!     name = "mm"
//!     kernel = "mm"
//!     platform = "sunwulf"
//!     target = 0.2
//!     n_max = 512
//!     [[configuration]]
//!     label = "C'_2"
//!     nodes = "server:1,sunfire:1"
//!     [[configuration]]
//!     label = "C'_4"
//!     nodes = "server:1,sunblade:1,sunfire:2"
//! "#, "example")?;
//! let result = run_study(&spec, &Store::open_in_memory()?, &Silent)?;
//! let measured = result.measured.as_ref().unwrap();
//! assert!(measured.points[1].n > measured.points[0].n);
//! assert!(measured.psi.as_ref().unwrap().get(0, 1).unwrap() < 1.0);
//! # Ok::<(), hetscale_study::StudyError>(())
//! ```

pub mod approaches;
pub mod calibrate;
pub mod csv_rows;
pub mod error;
pub mod json;
pub mod plan;
pub mod platform_view;
pub mod predict;
pub mod runner;
pub mod scaling;
pub mod spec;
pub mod speed;
pub mod stats;
pub mod store;
pub mod study;

pub use error::{Result, StudyError};
