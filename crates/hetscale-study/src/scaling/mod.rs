//! The study side of the scaling model (`hetscale_model::scaling`, the pure model): fitted to
//! measured runs, a study's stored ones or a file's, with the program's own model as one more
//! hypothesis ([`fit`], which also holds the held-out check a study ends with); what its
//! prediction of the size holding a target reports ([`prediction`]); and its time at one size
//! ([`time`]). It is none of the three approaches (`crate::approaches`): it fits a model of
//! any program's runs to predict configurations never run (`hetscale predict --from`,
//! `--runs`).

pub mod fit;
pub mod prediction;
pub mod time;
