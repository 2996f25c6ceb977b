//! Formulas in the problem size `n` and the node count `p`, as external-command studies give
//! their work (`2*n^3`) and overhead (`1e-4*p*n`): parsed by `exmex`, all arithmetic in `f64`
//! (so `2/3*n^3` is two thirds, not zero), `^` is the power.
//!
//! ```
//! use hetscale_study::spec::formula::Formula;
//!
//! let work = Formula::parse("2/3*n^3 - 1/2*n^2")?;
//! assert_eq!(work.eval(6.0, 1.0)?, 144.0 - 18.0);
//! assert!(Formula::parse("2*m^3").is_err());       // only n and p
//! assert!(Formula::parse("2*(n^3").is_err());      // does not parse
//! # Ok::<(), String>(())
//! ```

use exmex::prelude::*;
use exmex::{FloatOpsFactory, MatchLiteral, literal_matcher_from_pattern};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The variables a formula may use.
pub const VARIABLES: [&str; 2] = ["n", "p"];

// exmex's own literals have no exponent; overheads in seconds are written `1e-3*p`.
literal_matcher_from_pattern!(DecimalLiteral, r"^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?");

type Expression = FlatEx<f64, FloatOpsFactory<f64>, DecimalLiteral>;

/// A parsed formula in `n` and `p`; it serialises as the text it was parsed from.
#[derive(Clone)]
pub struct Formula {
    text: String,
    expr: Expression,
}

impl std::fmt::Debug for Formula {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Formula").field(&self.text).finish()
    }
}

impl PartialEq for Formula {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Formula {
    /// Parses `text`; the error says what is wrong in one line.
    pub fn parse(text: &str) -> Result<Self, String> {
        let expr = Expression::parse(text).map_err(|e| {
            format!(
                "\"{text}\" does not parse ({}): write e.g. 2*n^3 + 4*p*n^2",
                one_line(&e.to_string())
            )
        })?;
        if let Some(unknown) = expr
            .var_names()
            .iter()
            .find(|v| !VARIABLES.contains(&v.as_str()))
        {
            return Err(format!(
                "\"{text}\" uses \"{unknown}\": a formula may use only n (problem size) and p (node count)"
            ));
        }
        Ok(Self {
            text: text.to_string(),
            expr,
        })
    }

    /// The text it was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Its value at size `n` on `p` nodes (any finite or non-finite number).
    pub fn eval(&self, n: f64, p: f64) -> Result<f64, String> {
        // exmex passes the variables in alphabetical order, which is also VARIABLES' order.
        let values: Vec<f64> = self
            .expr
            .var_names()
            .iter()
            .map(|v| if v == "n" { n } else { p })
            .collect();
        self.expr.eval(&values).map_err(|e| {
            format!(
                "\"{}\" cannot be evaluated: {}",
                self.text,
                one_line(&e.to_string())
            )
        })
    }

    /// Its value, which must be positive and finite (a work or a time): else a one-line error
    /// naming `what`, `n` and `p`.
    pub fn eval_positive(&self, what: &str, n: f64, p: f64) -> Result<f64, String> {
        let value = self.eval(n, p)?;
        if value.is_finite() && value > 0.0 {
            Ok(value)
        } else {
            Err(format!(
                "{what} \"{}\" is {value} at n = {n}, p = {p}: it must be positive and finite",
                self.text
            ))
        }
    }
}

impl Serialize for Formula {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Formula {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_floats_and_scientific_literals() {
        let f = Formula::parse("2*n^3").unwrap();
        assert_eq!(f.eval(10.0, 1.0).unwrap(), 2000.0);
        let o = Formula::parse("1e-3*p + 0.5e-6*n^2").unwrap();
        assert!((o.eval(1000.0, 2.0).unwrap() - 0.502).abs() < 1e-12);
        assert_eq!(Formula::parse("7").unwrap().eval(1.0, 1.0).unwrap(), 7.0);
        assert_eq!(
            Formula::parse("n*log2(n)").unwrap().eval(8.0, 1.0).unwrap(),
            24.0
        );
    }

    #[test]
    fn bad_formulas_are_one_line_errors() {
        for bad in ["2*(n^3", "2*q", "", "n +* 2"] {
            let err = Formula::parse(bad).unwrap_err();
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        let err = Formula::parse("n - 10")
            .unwrap()
            .eval_positive("work", 4.0, 1.0)
            .unwrap_err();
        assert!(err.contains("-6") && err.contains("n = 4"), "{err}");
    }
}
