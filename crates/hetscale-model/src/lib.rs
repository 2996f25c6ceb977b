//! # hetscale-model
//!
//! Every formula hetscale uses, exactly as published, as small pure functions: speed, marked
//! speed and speed-efficiency (Chen, Sun & Wu 2008), isospeed and isospeed-efficiency
//! scalability and scalability matrices (Sun & Rover 1994), both papers' prediction theorems,
//! heterogeneous concurrent efficiency and the SUMMA cost models (Kalinov), the HBSP^1 cost model
//! (Williams & Parsons 2001), Hockney's alpha-beta model, workload formulas, least-squares fits and
//! bracketed root finding. The papers' published tables, recomputed from their inputs with these
//! formulas, are crate `hetscale-papers`'s.
//!
//! ```
//! use hetscale_model::{metrics, scalability, workload};
//!
//! // JPDC Table 5: GE on 2 and 4 Sunwulf nodes keeps E_s = 0.3 at N = 310 and N = 480.
//! let c2 = metrics::system_marked_speed(&[20.88, 20.88, 20.29])?;
//! let c4 = metrics::system_marked_speed(&[20.88, 20.88, 20.29, 20.29, 20.29])?;
//! let psi = scalability::isospeed_e_psi(c2, workload::ge(310.0)?, c4, workload::ge(480.0)?)?;
//! assert_eq!(format!("{psi:.3}"), "0.445"); // JPDC Table 6
//! # Ok::<(), hetscale_model::ModelError>(())
//! ```
//!
//! The crate does no I/O, spawns no threads and knows nothing about runs: it is the arithmetic
//! the rest of hetscale stands on.

pub mod error;
pub mod hbsp;

pub use error::{ModelError, Result};
pub mod asymptotic;
pub mod fit;
pub mod hockney;
pub mod isoefficiency;
pub mod metrics;
pub mod numbers;
pub mod root;
pub mod scalability;
pub mod scaling;
pub mod summa;
pub mod theorems;
pub mod workload;
