//! # hetscale-study
//!
//! Scalability studies: find, per configuration, the problem size that holds a target
//! speed-efficiency, and the isospeed-e scalability `psi` between configurations.
//!
//! Approach 3 (predicted) is available now: it solves the isospeed-e condition with a time model
//! `T(N, configuration)`. Approaches 1 (measured) and 2 (computed) need runs on an HBSP backend
//! and arrive with the simulator and kernels.
//!
//! ```
//! use hetscale_study::predicted::{Configuration, predict};
//!
//! // A toy machine: T(N) = W / C + 0.01 p seconds for W = 2 N^3.
//! let configs = vec![Configuration::new("2 nodes", 2, 200e6)?, Configuration::new("4 nodes", 4, 400e6)?];
//! let work = |n: f64| hetscale_model::workload::mm(n);
//! let time = |n: f64, c: &Configuration| Ok(work(n)? / c.marked_speed + 0.01 * c.nodes as f64);
//! let study = predict(&configs, work, time, 0.5, (10.0, 1e5))?;
//! assert!(study.psi.get(0, 1).unwrap() < 1.0);
//! # Ok::<(), hetscale_model::ModelError>(())
//! ```

pub mod computed;
pub mod default_study;
pub mod error;
pub mod export;
pub mod marked_speed;
pub mod measured;
pub mod predicted;
pub mod runner;
pub mod spec;
pub mod stats;
pub mod store;
pub mod study;

pub use error::{Result, StudyError};
