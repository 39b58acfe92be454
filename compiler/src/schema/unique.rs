//! `uniqueItems` when the items' values are a small finite set (an `enum`, a `const`,
//! `boolean`, `null`): the lists of distinct values, one rule per set of values written
//! so far.
//!
//! With the values `x_1 … x_d` and `R(S)` the rest of a list whose values so far are the
//! set `S`:
//!
//! ```text
//! R(S) = ""                         when |S| >= minItems
//!      | "," x_i R(S ∪ {i})         for each i not in S, when |S| < maxItems
//! ```
//!
//! `2^d` sets at most, so the domain is kept to [`MAX_DOMAIN`] values.

use serde_json::Value;

use super::emit::Emitter;
use super::ir::Subschema;
use super::numeric::value::{canonical_text, json_equal};
use crate::gbnf::Expr;
use crate::json_text::encode_str;

/// The most values a domain may have.
pub const MAX_DOMAIN: usize = 8;

/// What an item schema may hold beside `type`, `enum` and `const`.
const ANNOTATIONS: [&str; 5] = ["title", "description", "$comment", "examples", "default"];

/// The canonical texts of the values `items` allows, when it is one schema of `type`,
/// `enum` and `const` alone (and annotations) allowing at most [`MAX_DOMAIN`] scalar
/// values; `keep_point` writes integral numbers written with a fraction as draft-04 does.
pub fn finite_domain(items: &Subschema<'_>, keep_point: bool) -> Option<Vec<String>> {
    let [schema] = items.members() else {
        return None;
    };
    let schema = schema.value.as_object()?;
    let known = ["type", "enum", "const"];
    if schema
        .keys()
        .any(|k| !known.contains(&k.as_str()) && !ANNOTATIONS.contains(&k.as_str()))
    {
        return None;
    }
    let types: Option<Vec<&str>> = match schema.get("type") {
        None => None,
        Some(Value::String(one)) => Some(vec![one.as_str()]),
        Some(Value::Array(many)) => Some(many.iter().map(Value::as_str).collect::<Option<_>>()?),
        Some(_) => return None,
    };
    let listed: Vec<Value> = match (schema.get("const"), schema.get("enum")) {
        (Some(one), None) => vec![one.clone()],
        (None, Some(Value::Array(values))) => values.clone(),
        (Some(one), Some(Value::Array(values))) => values
            .iter()
            .filter(|v| json_equal(v, one))
            .cloned()
            .collect(),
        (None, None) => {
            let types = types.as_ref()?;
            let mut values = Vec::new();
            for &t in types {
                match t {
                    "boolean" => values.extend([Value::Bool(false), Value::Bool(true)]),
                    "null" => values.push(Value::Null),
                    _ => return None,
                }
            }
            values
        }
        _ => return None,
    };
    let mut domain: Vec<Value> = Vec::new();
    for value in listed {
        let typed = types
            .as_ref()
            .is_none_or(|types| types.iter().any(|&t| has_type(&value, t, keep_point)));
        if typed && !domain.iter().any(|v| json_equal(v, &value)) {
            domain.push(value);
        }
    }
    if domain.len() > MAX_DOMAIN {
        return None;
    }
    domain
        .iter()
        .map(|value| match value {
            Value::Null => Some("null".to_string()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(canonical_text(n, keep_point)),
            Value::String(s) => Some(format!("\"{}\"", encode_str(s))),
            Value::Array(_) | Value::Object(_) => None,
        })
        .collect()
}

/// Whether `value` has JSON Schema type `t` (under draft-04, `keep_point`, a number
/// written with a fraction is no integer).
fn has_type(value: &Value, t: &str, keep_point: bool) -> bool {
    match (t, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("string", Value::String(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => {
            let written_as_float = n.as_str().contains(['.', 'e', 'E']);
            super::numeric::value::is_integral(n) == Some(true) && !(keep_point && written_as_float)
        }
        _ => false,
    }
}

/// The lists (between the brackets) of `min..=max` distinct values of `domain` (their
/// texts), with a rule `{hint}-unique-{set}` per set of values written so far; `None`
/// when no list fits.
pub fn distinct_lists(
    e: &mut Emitter<'_, '_, '_>,
    domain: &[String],
    min: u64,
    max: Option<u64>,
    hint: &str,
) -> Option<Expr> {
    let d = domain.len();
    let max = max.map_or(d, |max| max.min(d as u64) as usize);
    let min = usize::try_from(min).unwrap_or(usize::MAX);
    if min > max {
        return None;
    }
    let comma = e.token(",");
    let prefix = e.fresh_prefix(&format!("{hint}-unique"));
    // The rest after the set `set` (a bit per value), by reference when it is a rule.
    let rest = |set: u32| -> Expr {
        let size = set.count_ones() as usize;
        if size >= max {
            return Expr::empty();
        }
        let mut name = prefix.clone();
        name.push('-');
        crate::gbnf::push_number(&mut name, u64::from(set));
        Expr::rule(name)
    };
    let mut rules = Vec::new();
    for set in 1..(1u32 << d) {
        let size = set.count_ones() as usize;
        if size >= max {
            continue;
        }
        let mut arms = Vec::with_capacity(d + 1);
        if size >= min {
            arms.push(Expr::empty());
        }
        for (i, text) in domain.iter().enumerate() {
            if set & (1 << i) == 0 {
                arms.push(Expr::seq([
                    comma.clone(),
                    Expr::literal(text.as_str()),
                    rest(set | (1 << i)),
                ]));
            }
        }
        if let Expr::Ref { name, .. } = rest(set) {
            rules.push((name.to_string(), Expr::alt(arms)));
        }
    }
    e.add_named_rules_exact(rules);
    let mut arms = Vec::with_capacity(d + 1);
    if min == 0 {
        arms.push(Expr::empty());
    }
    if max > 0 {
        for (i, text) in domain.iter().enumerate() {
            arms.push(Expr::seq([Expr::literal(text.as_str()), rest(1 << i)]));
        }
    }
    Some(Expr::alt(arms))
}
