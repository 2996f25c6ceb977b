//! The one schema of every command's `--json` (the README's "JSON output" section):
//! snake_case keys; SI units named in the key (`time_s`, `work_flop`, `marked_speed_flops` in
//! flop/s, `_bytes`); numbers as numbers; a configuration's `nodes` is its node set as
//! `--nodes` writes it, beside its node count `p`; a problem size `n` is an integer; psi is a
//! full matrix, `null` where undefined.

use serde_json::{Map, Value};

/// The version of the schema every `--json` document states; raised when a key changes.
pub const SCHEMA_VERSION: u64 = 2;

/// The suffixes that name a quantity's unit in a key, in SI units: seconds, flop, flop/s,
/// bytes, bytes per second, seconds per byte, and percent (a relative error is a percentage
/// everywhere). A statistics object under such a key (`time_stats_s`) is in that unit.
pub const UNIT_SUFFIXES: [&str; 7] = [
    "_s_per_byte",
    "_bytes_per_s",
    "_s",
    "_flop",
    "_flops",
    "_bytes",
    "_percent",
];

/// A command's `--json` document: `body`'s keys under `kind` (the command) and `version`
/// ([`SCHEMA_VERSION`]). A body that is not an object goes under `field`.
pub fn document(kind: &str, field: &str, body: Value) -> Value {
    let mut object = match body {
        Value::Object(map) => map,
        other => Map::from_iter([(field.to_string(), other)]),
    };
    object.insert("kind".into(), Value::from(kind));
    object.insert("version".into(), Value::from(SCHEMA_VERSION));
    Value::Object(object)
}

/// Serializes a fraction (a relative error) as a percentage.
pub fn fraction_as_percent<S: serde::Serializer>(
    fraction: &f64,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(fraction * 100.0)
}

/// Serializes optional fractions as percentages.
pub fn fraction_as_percent_opt<S: serde::Serializer>(
    fraction: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&fraction.map(|f| f * 100.0), serializer)
}

/// Serializes fractions as percentages.
pub fn fractions_as_percent<S: serde::Serializer>(
    fractions: &[f64],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(fractions.iter().map(|f| f * 100.0))
}

/// Serializes statistics of a rate in Mflop/s as statistics in flop/s.
pub fn summary_mflops_as_flops<S: serde::Serializer>(
    mflops: &crate::stats::Summary,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&mflops.scaled(1e6), serializer)
}

/// `name` as a snake_case key: lower case, every run of other characters one `_`; a unit in
/// parentheses becomes a suffix (`multiply phase (s)` is `multiply_phase_s`).
pub fn snake_key(name: &str) -> String {
    let mut key = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            key.push(c.to_ascii_lowercase());
        } else if !key.is_empty() && !key.ends_with('_') {
            key.push('_');
        }
    }
    key.trim_end_matches('_').to_string()
}

/// A kernel run's details (name and text) as a JSON object: snake_case keys, a number or a
/// list of numbers as such, anything else as text.
pub fn details(details: &[(String, String)]) -> Map<String, Value> {
    details
        .iter()
        .map(|(name, text)| (snake_key(name), value_of(text)))
        .collect()
}

fn value_of(text: &str) -> Value {
    if let Some(number) = text
        .trim()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
    {
        return Value::Number(number);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(list @ Value::Array(_)) => list,
        _ => Value::String(text.to_string()),
    }
}

/// Serializes a problem size held as `f64` as the integer it is (`null` if not finite).
pub fn as_integer<S: serde::Serializer>(n: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&integer_size(*n), serializer)
}

/// Serializes an optional problem size held as `f64` as the integer it is.
pub fn as_integer_opt<S: serde::Serializer>(
    n: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&n.and_then(integer_size), serializer)
}

/// Serializes a speed in Mflop/s as flop/s.
pub fn mflops_as_flops<S: serde::Serializer>(
    mflops: &f64,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(mflops * 1e6)
}

/// A problem size found as a real root, as the integer the text shows.
pub fn integer_size(root: f64) -> Option<u64> {
    (root.is_finite() && root >= 0.0).then(|| root.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_snake_case_and_values_numbers_where_they_are() {
        let details = details(&[
            ("layout efficiency".into(), "0.9876".into()),
            ("residual ||Ax - b||_inf".into(), "1.234e-12".into()),
            ("multiply phase (s)".into(), "0.500000".into()),
            ("patches per face".into(), "[2, 3]".into()),
            ("pivoting".into(), "partial".into()),
            ("grid".into(), "2x3".into()),
        ]);
        assert_eq!(
            Value::Object(details),
            serde_json::json!({
                "layout_efficiency": 0.9876,
                "residual_ax_b_inf": 1.234e-12,
                "multiply_phase_s": 0.5,
                "patches_per_face": [2, 3],
                "pivoting": "partial",
                "grid": "2x3",
            })
        );
        assert_eq!(integer_size(34.500000000014), Some(35));
    }

    #[test]
    fn a_document_is_an_object_with_its_kind_and_version() {
        let listed = document("paper", "papers", serde_json::json!([1, 2]));
        assert_eq!(listed["kind"], "paper");
        assert_eq!(listed["version"], SCHEMA_VERSION);
        assert_eq!(listed["papers"], serde_json::json!([1, 2]));
        let object = document("run", "unused", serde_json::json!({"n": 3}));
        assert_eq!(object["n"], 3);
        assert!(object.get("unused").is_none());
        assert_eq!(integer_size(f64::NAN), None);
    }
}
