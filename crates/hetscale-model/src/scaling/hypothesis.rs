//! The hypothesis space: the terms a scaling model's overhead is built from.

use super::data::{Configuration, Partition};
use serde::{Serialize, Serializer};
use std::fmt;
use std::sync::Arc;

/// The exponents of one normal-form term `n^i log2(n)^j p^k log2(p)^l`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Exponents {
    /// `i`, the power of `n`.
    pub n: f64,
    /// `j`, the power of `log2(n)`.
    pub log_n: u32,
    /// `k`, the power of `p`.
    pub p: f64,
    /// `l`, the power of `log2(p)`.
    pub log_p: u32,
}

impl Exponents {
    /// The term's value at size `n` on `p` nodes.
    pub fn value(&self, n: f64, p: f64) -> f64 {
        n.powf(self.n)
            * n.log2().powi(self.log_n as i32)
            * p.powf(self.p)
            * p.log2().powi(self.log_p as i32)
    }

    /// Whether the term depends on `p` at all.
    pub fn depends_on_p(&self) -> bool {
        self.p != 0.0 || self.log_p != 0
    }

    /// How many factors the term multiplies (`n^2 log2(p)`: 2).
    pub fn factors(&self) -> usize {
        usize::from(self.n != 0.0)
            + usize::from(self.log_n != 0)
            + usize::from(self.p != 0.0)
            + usize::from(self.log_p != 0)
    }

    /// How complex the term is, for ties: the sum of its exponents, a log counting a quarter.
    pub fn complexity(&self) -> f64 {
        self.n + self.p + 0.25 * f64::from(self.log_n + self.log_p)
    }
}

impl fmt::Display for Exponents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        power(&mut parts, "n", self.n);
        log(&mut parts, "n", self.log_n);
        power(&mut parts, "p", self.p);
        log(&mut parts, "p", self.log_p);
        f.write_str(&parts.join(" "))
    }
}

fn power(parts: &mut Vec<String>, x: &str, e: f64) {
    match e {
        0.0 => {}
        0.5 => parts.push(format!("sqrt({x})")),
        1.0 => parts.push(x.to_owned()),
        _ => parts.push(format!("{x}^{e}")),
    }
}

fn log(parts: &mut Vec<String>, x: &str, e: u32) {
    match e {
        0 => {}
        1 => parts.push(format!("log2({x})")),
        _ => parts.push(format!("log2({x})^{e}")),
    }
}

/// A custom term's value at a size on a configuration, or why it has none there.
type TermFn = dyn Fn(f64, &Configuration) -> Result<f64, String> + Send + Sync;

/// A caller's own overhead column, e.g. a kernel's HBSP^1 overhead model `T_o(n, p)` in
/// seconds: the model fits a coefficient for it like for any other term.
#[derive(Clone)]
pub struct CustomTerm {
    name: String,
    value: Arc<TermFn>,
}

impl CustomTerm {
    /// A term named `name` (as it prints in formulas) whose value at size `n` on a
    /// configuration is `value(n, configuration)`.
    pub fn new(
        name: &str,
        value: impl Fn(f64, &Configuration) -> f64 + Send + Sync + 'static,
    ) -> Self {
        Self::fallible(name, move |n, c| Ok(value(n, c)))
    }

    /// A term named `name` whose value at size `n` on a configuration is `value(n,
    /// configuration)`, or the reason it has none there (a declared overhead that turns
    /// negative, say), which a prediction needing that value reports
    /// ([`ModelError::TermUndefined`](crate::ModelError::TermUndefined)).
    pub fn fallible(
        name: &str,
        value: impl Fn(f64, &Configuration) -> Result<f64, String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.to_owned(),
            value: Arc::new(value),
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Debug for CustomTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CustomTerm({})", self.name)
    }
}

impl PartialEq for CustomTerm {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// One column of a scaling model: its value per run is multiplied by a fitted coefficient.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    /// `W / C`: the compute time at the configuration's marked speed (the compute term unless
    /// the partition is [`Partition::Equal`]).
    Compute,
    /// `W / (p C_min)`: the compute time when every node gets the same share, the slowest
    /// finishing last (the compute term of a [`Partition::Equal`] program).
    EqualShareCompute,
    /// `1`: the constant `b`.
    Constant,
    /// `W/(p C_min) - W/C`: the compute time the slowest node adds when every node gets the
    /// same share ([`Configuration::slowest_share`]); 0 on homogeneous configurations.
    SlowestShare,
    /// A normal-form term `n^i log2(n)^j p^k log2(p)^l`.
    Power(Exponents),
    /// A caller's own column.
    Custom(CustomTerm),
}

impl Term {
    /// The term's value for a run of size `n` and work `work_flop` on `configuration`.
    pub fn value(&self, n: f64, work_flop: f64, configuration: &Configuration) -> f64 {
        match self {
            Term::Compute => work_flop / configuration.marked_speed(),
            Term::EqualShareCompute => {
                work_flop / (configuration.nodes() as f64 * configuration.slowest_marked_speed())
            }
            Term::Constant => 1.0,
            Term::SlowestShare => {
                work_flop / configuration.marked_speed() * (configuration.slowest_share() - 1.0)
            }
            Term::Power(e) => e.value(n, configuration.nodes() as f64),
            Term::Custom(c) => (c.value)(n, configuration).unwrap_or(f64::NAN),
        }
    }

    /// Why the term has no value at size `n` on `configuration`, if a custom term's caller
    /// said why ([`CustomTerm::fallible`]).
    pub(crate) fn undefined_because(
        &self,
        n: f64,
        configuration: &Configuration,
    ) -> Option<String> {
        match self {
            Term::Custom(c) => (c.value)(n, configuration).err(),
            _ => None,
        }
    }

    /// Whether it is the compute term `W/C` (or its equal-share form).
    pub(crate) fn is_compute(&self) -> bool {
        matches!(self, Term::Compute | Term::EqualShareCompute)
    }

    /// How many factors the term multiplies: 0 for the compute term, 1 for the constant, the slowest
    /// share and custom terms, [`Exponents::factors`] for a normal-form term.
    pub(crate) fn factors(&self) -> usize {
        match self {
            Term::Compute | Term::EqualShareCompute => 0,
            Term::Constant | Term::SlowestShare | Term::Custom(_) => 1,
            Term::Power(e) => e.factors(),
        }
    }

    /// How complex the term is, for ties between equally good hypotheses.
    pub(crate) fn complexity(&self) -> f64 {
        match self {
            Term::Compute | Term::EqualShareCompute | Term::Constant => 0.0,
            Term::SlowestShare => 1.0,
            Term::Power(e) => e.complexity(),
            Term::Custom(_) => 1.0,
        }
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Compute => f.write_str("W/C"),
            Term::EqualShareCompute => f.write_str("W/(p C_min)"),
            Term::Constant => Ok(()),
            Term::SlowestShare => f.write_str("(W/(p C_min) - W/C)"),
            Term::Power(e) => e.fmt(f),
            Term::Custom(c) => f.write_str(&c.name),
        }
    }
}

impl Serialize for Term {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Term::Constant => serializer.serialize_str("1"),
            other => serializer.serialize_str(&other.to_string()),
        }
    }
}

/// The hypotheses [`select`](super::selection::select) chooses among: the compute term `a W/C`
/// (`a W/(p C_min)` for a [`Partition::Equal`] program), always, plus one to
/// `max_overhead_terms` overhead terms, each with or without the constant `b` and, unless the
/// split is equal, with or without the [`Term::SlowestShare`] term.
///
/// The overhead terms are the normal-form terms `n^i log2(n)^j p^k log2(p)^l` over every
/// combination of the exponent lists but the all-zero one (which is `b`), and the `custom`
/// terms. The default, Extra-P's normal form cut to what parallel overheads show: `i` in
/// {0, 1/2, 1, 3/2, 2, 3}, `j` in {0, 1}, `k` in {0, 1/2, 1, 3/2, 2}, `l` in {0, 1, 2}: 179
/// terms, about 16 000 pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct HypothesisSpace {
    /// The powers `i` of `n`.
    pub n_exponents: Vec<f64>,
    /// The powers `j` of `log2(n)`.
    pub log_n_exponents: Vec<u32>,
    /// The powers `k` of `p`.
    pub p_exponents: Vec<f64>,
    /// The powers `l` of `log2(p)`.
    pub log_p_exponents: Vec<u32>,
    /// At most this many overhead terms per hypothesis (1 or 2; the constant and the
    /// slowest-share term not counted).
    pub max_overhead_terms: usize,
    /// How the program splits its work: its compute term, and whether hypotheses may add
    /// [`Term::SlowestShare`] (not for [`Partition::Equal`], whose compute term holds it, and
    /// only where the configurations' slowest shares differ).
    pub partition: Partition,
    /// The caller's own terms (e.g. a kernel's HBSP^1 overhead).
    pub custom: Vec<CustomTerm>,
}

impl Default for HypothesisSpace {
    fn default() -> Self {
        Self {
            n_exponents: vec![0.0, 0.5, 1.0, 1.5, 2.0, 3.0],
            log_n_exponents: vec![0, 1],
            p_exponents: vec![0.0, 0.5, 1.0, 1.5, 2.0],
            log_p_exponents: vec![0, 1, 2],
            max_overhead_terms: 2,
            partition: Partition::Speed,
            custom: Vec::new(),
        }
    }
}

impl HypothesisSpace {
    /// The default space plus a caller's own term.
    pub fn with_custom(mut self, term: CustomTerm) -> Self {
        self.custom.push(term);
        self
    }

    /// The default space for a program split as `partition`.
    pub fn for_partition(partition: Partition) -> Self {
        Self {
            partition,
            ..Self::default()
        }
    }

    /// The compute term every hypothesis has: `W/C`, or `W/(p C_min)` for an equal split.
    pub fn compute_term(&self) -> Term {
        match self.partition {
            Partition::Equal => Term::EqualShareCompute,
            Partition::Speed => Term::Compute,
        }
    }

    /// Whether hypotheses may add [`Term::SlowestShare`]: not for an equal split, whose
    /// compute term holds it.
    pub fn slowest_share(&self) -> bool {
        self.partition != Partition::Equal
    }

    /// Every overhead term of the space: the normal-form terms, then the custom ones.
    pub fn overhead_terms(&self) -> Vec<Term> {
        let mut terms = Vec::new();
        for &n in &self.n_exponents {
            for &log_n in &self.log_n_exponents {
                for &p in &self.p_exponents {
                    for &log_p in &self.log_p_exponents {
                        let e = Exponents { n, log_n, p, log_p };
                        if e.complexity() > 0.0 && !terms.contains(&Term::Power(e)) {
                            terms.push(Term::Power(e));
                        }
                    }
                }
            }
        }
        terms.extend(self.custom.iter().cloned().map(Term::Custom));
        terms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_print_as_a_person_writes_them() {
        let e = |n, log_n, p, log_p| Term::Power(Exponents { n, log_n, p, log_p });
        assert_eq!(e(1.0, 0, 0.0, 1).to_string(), "n log2(p)");
        assert_eq!(e(2.0, 1, 0.5, 0).to_string(), "n^2 log2(n) sqrt(p)");
        assert_eq!(e(0.0, 0, 1.5, 2).to_string(), "p^1.5 log2(p)^2");
        assert_eq!(Term::Compute.to_string(), "W/C");
    }

    #[test]
    fn default_space_has_179_terms_without_the_constant() {
        let terms = HypothesisSpace::default().overhead_terms();
        assert_eq!(terms.len(), 179);
        assert!(!terms.iter().any(|t| t.complexity() == 0.0));
    }
}
