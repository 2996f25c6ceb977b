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

/// What a formula gives, for the example its errors end with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// A work, flop.
    Work,
    /// An overhead, s.
    Overhead,
}

impl Quantity {
    /// What to write instead, with an example of this kind of formula.
    pub fn advice(self) -> &'static str {
        match self {
            Self::Work => "write the work in flop in n and p, e.g. 2*n^3 + 4*p*n^2",
            Self::Overhead => "write the overhead in seconds in n and p, e.g. 1e-4*p*log2(p)",
        }
    }
}

/// The functions a formula may call (exmex's float functions of one argument).
pub const FUNCTIONS: [&str; 26] = [
    "abs", "signum", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "floor", "round", "ceil", "trunc", "fract", "exp", "sqrt", "cbrt", "ln",
    "log2", "log10", "log",
];

/// Why a text is no formula: the part that is wrong, at which character (0-based) when
/// known, and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Problem {
    part: String,
    at: Option<usize>,
    why: String,
    /// Whether `why` says what to write instead, so that no general advice follows.
    advises: bool,
}

impl Problem {
    fn at(part: String, at: usize, why: impl Into<String>) -> Self {
        Self {
            part,
            at: Some(at),
            why: why.into(),
            advises: false,
        }
    }

    fn whole(why: &str) -> Self {
        Self {
            part: String::new(),
            at: None,
            why: why.into(),
            advises: false,
        }
    }

    /// What is wrong and where (`"*" at character 3 has nothing before it`), the character
    /// counted from 1 after `offset` characters of the text it was cut from.
    pub(crate) fn describe(&self, offset: usize) -> String {
        match self.at {
            Some(at) => format!(
                "{} at character {} {}",
                self.part,
                offset + at + 1,
                self.why
            ),
            None => self.why.clone(),
        }
    }
}

impl Formula {
    /// Parses `text`; the error says in one line what is wrong and where in `text` (quoted
    /// first), with no advice: [`Formula::parse_as`] adds it.
    pub fn parse(text: &str) -> Result<Self, String> {
        Self::parse_problem(text).map_err(|problem| format!("\"{text}\": {}", problem.describe(0)))
    }

    /// Parses `text`, a formula of `quantity`: the error is [`Formula::parse`]'s with what to
    /// write instead.
    pub fn parse_as(text: &str, quantity: Quantity) -> Result<Self, String> {
        Self::parse_problem(text).map_err(|problem| {
            let why = problem.describe(0);
            if problem.advises {
                format!("\"{text}\": {why}")
            } else {
                format!("\"{text}\": {why}: {}", quantity.advice())
            }
        })
    }

    /// Parses `text`, or says what is wrong in it and where.
    pub(crate) fn parse_problem(text: &str) -> Result<Self, Problem> {
        if text.trim().is_empty() {
            return Err(Problem::whole("is empty"));
        }
        let expr = Expression::parse(text).map_err(|_| {
            // exmex's own words name its internals: say what a person would see instead.
            first_problem(text).unwrap_or_else(|| Problem::whole("is not arithmetic in n and p"))
        })?;
        if let Some(unknown) = expr
            .var_names()
            .iter()
            .find(|v| !VARIABLES.contains(&v.as_str()))
        {
            let why =
                "is not a variable: a formula may use only n (problem size) and p (node count)";
            return Err(match word_at(text, unknown) {
                Some(at) => Problem::at(format!("\"{unknown}\""), at, why),
                None => Problem::whole(&format!("\"{unknown}\" {why}")),
            });
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

/// The first thing in `text` that makes it no formula, scanning left to right: a character
/// no formula has, a parenthesis that does not match, an unknown function, two operands with
/// no operator between them, or an operator with nothing on one side.
fn first_problem(text: &str) -> Option<Problem> {
    let tokens = tokens(text);
    let mut open: Vec<usize> = Vec::new();
    let problem = |token: &Token<'_>, why: String| {
        Some(Problem::at(format!("\"{}\"", token.text), token.at, why))
    };
    for (i, token) in tokens.iter().enumerate() {
        let previous = i.checked_sub(1).map(|j| &tokens[j]);
        let next = tokens.get(i + 1);
        match token.kind {
            Kind::Other => {
                return problem(token, "is no part of a formula".into());
            }
            Kind::Open => open.push(token.at),
            Kind::Close if open.pop().is_none() => {
                return problem(token, "closes no \"(\"".into());
            }
            Kind::Close if previous.is_some_and(|p| p.kind == Kind::Open) => {
                return problem(token, "closes \"(\" with nothing between them".into());
            }
            Kind::Word if next.is_some_and(|n| n.kind == Kind::Open) => {
                if let Some((why, advises)) = not_a_function(token.text) {
                    return problem(token, why).map(|p| Problem { advises, ..p });
                }
            }
            Kind::Operator => {
                let binary_only = !matches!(token.text, "+" | "-");
                let after_operand = previous.is_some_and(|p| p.ends_operand());
                if binary_only && !after_operand {
                    return problem(token, "has nothing before it to apply to".into());
                }
                if next.is_none_or(|n| n.kind == Kind::Close) {
                    return problem(token, "has nothing after it to apply to".into());
                }
            }
            _ => {}
        }
        let operand_follows_operand = previous.is_some_and(|p| p.ends_operand())
            && token.starts_operand()
            && !(previous.is_some_and(|p| p.kind == Kind::Word) && token.kind == Kind::Open);
        if operand_follows_operand {
            return problem(
                token,
                format!(
                    "follows \"{}\" with no operator between them (write * to multiply)",
                    previous.map_or("", |p| p.text)
                ),
            );
        }
    }
    open.last()
        .map(|&at| Problem::at("\"(\"".into(), at, "is never closed"))
}

/// Why `name(` is no call of a formula's functions, if it is not, and whether that says
/// what to write instead.
fn not_a_function(name: &str) -> Option<(String, bool)> {
    if FUNCTIONS.contains(&name) {
        return None;
    }
    let pattern = hetscale_kernels::declared::Pattern::ALL
        .iter()
        .any(|p| p.name() == name);
    Some(if pattern {
        let why = format!(
            "is a communication pattern, not a function: declare its messages as communication, e.g. 100*{name}(8*n), which the network charges and adds to the overhead"
        );
        (why, true)
    } else {
        let why = format!(
            "is no function (the functions are {})",
            FUNCTIONS.join(", ")
        );
        (why, false)
    })
}

/// The character at which `word` first stands as a word of its own in `text`.
fn word_at(text: &str, word: &str) -> Option<usize> {
    tokens(text)
        .into_iter()
        .find(|t| t.kind == Kind::Word && t.text == word)
        .map(|t| t.at)
}

/// What a token of a formula is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Number,
    Word,
    Operator,
    Open,
    Close,
    Comma,
    Other,
}

/// One token, with the character it starts at.
#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    kind: Kind,
    text: &'a str,
    at: usize,
}

impl Token<'_> {
    fn ends_operand(&self) -> bool {
        matches!(self.kind, Kind::Number | Kind::Word | Kind::Close)
    }

    fn starts_operand(&self) -> bool {
        matches!(self.kind, Kind::Number | Kind::Word | Kind::Open)
    }
}

/// `text` cut into numbers (`1.5e-3`), words (`n`, `log2`), operators, parentheses, commas
/// and anything else one character at a time, white space left out.
fn tokens(text: &str) -> Vec<Token<'_>> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        let take = |mut j: usize, keep: &dyn Fn(usize, char) -> bool| {
            while j < chars.len() && keep(j, chars[j].1) {
                j += 1;
            }
            j
        };
        let (kind, end) = if c.is_whitespace() {
            i += 1;
            continue;
        } else if c.is_ascii_digit() || c == '.' {
            (Kind::Number, number_end(&chars, i))
        } else if c.is_alphabetic() || c == '_' {
            (Kind::Word, take(i, &|_, c| c.is_alphanumeric() || c == '_'))
        } else {
            let kind = match c {
                '+' | '-' | '*' | '/' | '^' => Kind::Operator,
                '(' => Kind::Open,
                ')' => Kind::Close,
                ',' => Kind::Comma,
                _ => Kind::Other,
            };
            (kind, i + 1)
        };
        let stop = chars.get(end).map_or(text.len(), |&(at, _)| at);
        out.push(Token {
            kind,
            text: &text[start..stop],
            at: i,
        });
        i = end;
    }
    out
}

/// Where the number starting at `chars[i]` ends: digits, a point, digits, and an exponent
/// `e-3` if one follows.
fn number_end(chars: &[(usize, char)], i: usize) -> usize {
    let digits = |mut j: usize| {
        while j < chars.len() && chars[j].1.is_ascii_digit() {
            j += 1;
        }
        j
    };
    let mut j = digits(i);
    if j < chars.len() && chars[j].1 == '.' {
        j = digits(j + 1);
    }
    if j < chars.len() && matches!(chars[j].1, 'e' | 'E') {
        let sign = usize::from(j + 1 < chars.len() && matches!(chars[j + 1].1, '+' | '-'));
        let exponent = digits(j + 1 + sign);
        if exponent > j + 1 + sign {
            j = exponent;
        }
    }
    j
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
    fn every_function_an_error_lists_is_one_a_formula_can_call() {
        for function in FUNCTIONS {
            let call = format!("{function}(n + 2)");
            assert!(Formula::parse(&call).is_ok(), "{call}");
        }
    }

    #[test]
    fn each_kind_of_formula_is_advised_with_an_example_of_its_own() {
        let work = Formula::parse_as("foo(n)", Quantity::Work).unwrap_err();
        assert!(
            work.ends_with("write the work in flop in n and p, e.g. 2*n^3 + 4*p*n^2"),
            "{work}"
        );
        let overhead = Formula::parse_as("2*(p", Quantity::Overhead).unwrap_err();
        assert!(
            overhead.ends_with("write the overhead in seconds in n and p, e.g. 1e-4*p*log2(p)"),
            "{overhead}"
        );
        // A pattern where a function would be: the advice is where to declare it instead.
        let pattern = Formula::parse_as("neighbours(8)", Quantity::Overhead).unwrap_err();
        assert_eq!(
            pattern,
            "\"neighbours(8)\": \"neighbours\" at character 1 is a communication pattern, not a \
             function: declare its messages as communication, e.g. 100*neighbours(8*n), which \
             the network charges and adds to the overhead"
        );
    }

    #[test]
    fn bad_formulas_are_one_line_errors() {
        for bad in ["2*(n^3", "2*q", "", "n +* 2"] {
            let err = Formula::parse(bad).unwrap_err();
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        for (bad, says) in [
            ("", "\"\": is empty"),
            (
                "foo(n)",
                "\"foo\" at character 1 is no function (the functions are abs,",
            ),
            (
                "2*q",
                "\"q\" at character 3 is not a variable: a formula may use only n",
            ),
            ("2*(n^3", "\"(\" at character 3 is never closed"),
            ("n)", "\")\" at character 2 closes no \"(\""),
            ("n +* 2", "\"*\" at character 4 has nothing before it"),
            ("log2(p)+", "\"+\" at character 8 has nothing after it"),
            (
                "2 n",
                "\"n\" at character 3 follows \"2\" with no operator between them",
            ),
            ("n # 2", "\"#\" at character 3 is no part of a formula"),
            ("1e-4*p*q", "\"q\" at character 8"),
        ] {
            let err = Formula::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
            assert!(
                !err.contains("wlog") && !err.contains("left:"),
                "{bad}: {err}"
            );
        }
        let err = Formula::parse("n - 10")
            .unwrap()
            .eval_positive("work", 4.0, 1.0)
            .unwrap_err();
        assert!(err.contains("-6") && err.contains("n = 4"), "{err}");
    }
}
