//! The canonical text of a JSON value under a schema — what compiled grammars produce:
//! compact; object keys in `properties` order (the object's own properties first, then
//! those of `allOf` members in order, then those of `anyOf`/`oneOf` branches in order),
//! then other keys in their original order; integral numbers written as integers; strings
//! escaped as serde_json does.

use serde_json::{Map, Value};

use super::document::{Document, Location};
use super::lookup::Lookup;
use crate::json_text::encode_str;

/// The canonical text of `value` under the schema at the root of `doc`. (Under draft-04,
/// where `1.0` is no integer, numbers written with a fraction keep it.)
pub fn canonical_text(value: &Value, doc: &Document<'_>) -> String {
    let mut out = String::new();
    write(value, Some(&doc.root()), doc, &mut out, 0);
    out
}

/// The canonical text of `value` under the schema object `map` (its `$ref`s unresolved:
/// for `enum`/`const` literals, whose key order is their own unless `map` declares
/// properties).
pub fn canonical_text_of(value: &Value, map: &Map<String, Value>) -> String {
    let mut out = String::new();
    write_with_order(value, &property_order(map), &mut out);
    out
}

/// A number's canonical text: integral values as integers, others as serde_json prints.
pub fn number_text(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    match n.as_f64() {
        Some(f) if f.is_finite() && f.fract() == 0.0 => format!("{f:.0}"),
        _ => n.to_string(),
    }
}

fn property_order(map: &Map<String, Value>) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    let add = |m: &Map<String, Value>, order: &mut Vec<String>| {
        if let Some(props) = m.kw("properties").and_then(Value::as_object) {
            for k in props.keys() {
                if !order.contains(k) {
                    order.push(k.clone());
                }
            }
        }
    };
    add(map, &mut order);
    for key in ["allOf", "anyOf", "oneOf"] {
        for branch in map.kw(key).and_then(Value::as_array).into_iter().flatten() {
            if let Value::Object(b) = branch {
                add(b, &mut order);
            }
        }
    }
    order
}

fn write_with_order(value: &Value, order: &[String], out: &mut String) {
    match value {
        Value::Object(members) => {
            write_object(members, order, out, |_, member, out| {
                write_with_order(member, &[], out)
            });
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_with_order(item, &[], out);
            }
            out.push(']');
        }
        scalar => write_scalar(scalar, out, false),
    }
}

/// Writes an object's members: the keys in `order` first, then the others in their own
/// order; `member` writes each value.
fn write_object(
    members: &Map<String, Value>,
    order: &[String],
    out: &mut String,
    mut member: impl FnMut(&str, &Value, &mut String),
) {
    out.push('{');
    let ordered = order.iter().filter(|k| members.contains_key(*k));
    let rest = members.keys().filter(|k| !order.contains(k));
    for (i, key) in ordered.chain(rest).enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(&encode_str(key));
        out.push_str("\":");
        member(key, &members[key], out);
    }
    out.push('}');
}

fn write_scalar(value: &Value, out: &mut String, keep_floats: bool) {
    match value {
        Value::Number(n) if keep_floats && n.is_f64() => out.push_str(&n.to_string()),
        Value::Number(n) => out.push_str(&number_text(n)),
        Value::String(s) => {
            out.push('"');
            out.push_str(&encode_str(s));
            out.push('"');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The deepest schema nesting followed for key order.
const MAX_DEPTH: usize = 64;

fn write(
    value: &Value,
    schema_at: Option<&Location>,
    doc: &Document<'_>,
    out: &mut String,
    depth: usize,
) {
    let schema = schema_at
        .filter(|_| depth < MAX_DEPTH)
        .and_then(|at| resolved(at, doc, 0));
    // An `enum`/`const` member equal to the value: the grammar spells it as the member is.
    if let Some(Value::Object(map)) = schema.as_ref().and_then(|at| doc.get(at)) {
        let members = map
            .kw("enum")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .chain(map.kw("const").cloned());
        for member in members {
            if matches!(member, Value::Object(_) | Value::Array(_))
                && super::merge::json_equal(&member, value)
            {
                out.push_str(&canonical_text_of(&member, &map));
                return;
            }
        }
    }
    match value {
        Value::Object(members) => {
            let (order, children): (Vec<String>, Vec<(String, Location)>) = match &schema {
                Some(at) => ordering(at, doc, 0),
                None => (Vec::new(), Vec::new()),
            };
            write_object(members, &order, out, |key, member, out| {
                let child = children.iter().find(|(k, _)| k == key).map(|(_, at)| at);
                write(member, child, doc, out, depth + 1);
            });
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let child = schema.as_ref().and_then(|at| item_schema(at, i, doc));
                write(item, child.as_ref(), doc, out, depth + 1);
            }
            out.push(']');
        }
        scalar => write_scalar(scalar, out, doc.integers_exclude_floats),
    }
}

/// Follows `$ref`s to the schema object that holds the keywords.
fn resolved(at: &Location, doc: &Document<'_>, hops: usize) -> Option<Location> {
    let value = doc.get(at)?;
    let map = value.as_object()?;
    match map.kw("$ref").and_then(Value::as_str) {
        Some(reference) if hops < 16 && !map.has("properties") => {
            let target = doc.resolve(at, reference).ok()?;
            resolved(&target, doc, hops + 1)
        }
        _ => Some(at.clone()),
    }
}

/// Property order and per-property schema locations for the schema at `at`: its own
/// properties, then `allOf`, `anyOf`, `oneOf` members' (and a sibling `$ref`'s).
fn ordering(
    at: &Location,
    doc: &Document<'_>,
    depth: usize,
) -> (Vec<String>, Vec<(String, Location)>) {
    let mut order = Vec::new();
    let mut children = Vec::new();
    let Some(Value::Object(map)) = doc.get(at) else {
        return (order, children);
    };
    if let Some(Value::Object(props)) = map.kw("properties") {
        for key in props.keys() {
            order.push(key.clone());
            children.push((key.clone(), at.child("properties").child(key)));
        }
    }
    if depth > 8 {
        return (order, children);
    }
    let mut subschemas: Vec<Location> = Vec::new();
    if let Some(reference) = map.kw("$ref").and_then(Value::as_str) {
        if let Ok(target) = doc.resolve(at, reference) {
            subschemas.push(target);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(items)) = map.kw(key) {
            for i in 0..items.len() {
                if let Some(target) = resolved(&at.child(key).index(i), doc, 0) {
                    subschemas.push(target);
                }
            }
        }
    }
    for sub in subschemas {
        let (sub_order, sub_children) = ordering(&sub, doc, depth + 1);
        for key in sub_order {
            if !order.contains(&key) {
                order.push(key);
            }
        }
        for (key, location) in sub_children {
            if !children.iter().any(|(k, _)| *k == key) {
                children.push((key, location));
            }
        }
    }
    (order, children)
}

fn item_schema(at: &Location, index: usize, doc: &Document<'_>) -> Option<Location> {
    let value = doc.get(at)?;
    let map = value.as_object()?;
    let prefix_len = |key: &str| map.kw(key).and_then(Value::as_array).map(Vec::len);
    if let Some(n) = prefix_len("prefixItems") {
        if index < n {
            return Some(at.child("prefixItems").index(index));
        }
        return map.kw("items").map(|_| at.child("items"));
    }
    match map.kw("items") {
        Some(Value::Array(items)) if index < items.len() => Some(at.child("items").index(index)),
        Some(Value::Array(_)) => map
            .kw("additionalItems")
            .map(|_| at.child("additionalItems")),
        Some(_) => Some(at.child("items")),
        None => None,
    }
}

/// Whether a literal value fits the rest of its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// It satisfies every keyword checked here.
    Yes,
    /// It violates one.
    No,
    /// It satisfies those checked, but some keyword (a pattern, a format, a subschema)
    /// was not checked.
    Unchecked,
}

/// Does `value` (an `enum`/`const` member) fit the allowed `types` and the simple
/// keywords of `map`?
pub fn fits(value: &Value, map: &Map<String, Value>, types: &[&str]) -> Fit {
    let type_ok = match value {
        Value::Null => types.contains(&"null"),
        Value::Bool(_) => types.contains(&"boolean"),
        Value::Object(_) => types.contains(&"object"),
        Value::Array(_) => types.contains(&"array"),
        Value::String(_) => types.contains(&"string"),
        Value::Number(n) => {
            let integral = n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0);
            types.contains(&"number") || (integral && types.contains(&"integer"))
        }
    };
    if !type_ok {
        return Fit::No;
    }
    let num = |k: &str| map.kw(k).and_then(Value::as_f64);
    let mut unchecked = false;
    match value {
        Value::String(s) => {
            let len = s.chars().count() as f64;
            if num("minLength").is_some_and(|m| len < m)
                || num("maxLength").is_some_and(|m| len > m)
            {
                return Fit::No;
            }
            unchecked |= map.has("pattern") || map.has("format");
        }
        Value::Number(n) => {
            let Some(v) = n.as_f64() else {
                return Fit::Unchecked;
            };
            if num("minimum").is_some_and(|m| v < m)
                || num("maximum").is_some_and(|m| v > m)
                || num("exclusiveMinimum").is_some_and(|m| v <= m)
                || num("exclusiveMaximum").is_some_and(|m| v >= m)
            {
                return Fit::No;
            }
            if let Some(k) = num("multipleOf") {
                let q = v / k;
                if q.abs() >= 9_007_199_254_740_992.0 {
                    unchecked = true;
                } else if q != q.round() {
                    return Fit::No;
                }
            }
            // Beyond 2^53, f64 comparisons above may be off by one.
            if v.abs() >= 9_007_199_254_740_992.0 {
                unchecked = true;
            }
        }
        Value::Array(items) => {
            let len = items.len() as f64;
            if num("minItems").is_some_and(|m| len < m) || num("maxItems").is_some_and(|m| len > m)
            {
                return Fit::No;
            }
            unchecked |= ["items", "prefixItems", "contains", "uniqueItems"]
                .iter()
                .any(|k| map.contains_key(*k));
        }
        Value::Object(members) => {
            let count = members.len() as f64;
            if num("minProperties").is_some_and(|m| count < m)
                || num("maxProperties").is_some_and(|m| count > m)
            {
                return Fit::No;
            }
            let required = map.kw("required").and_then(Value::as_array);
            if required.is_some_and(|r| {
                r.iter()
                    .any(|k| k.as_str().is_some_and(|k| !members.contains_key(k)))
            }) {
                return Fit::No;
            }
            unchecked |= [
                "properties",
                "additionalProperties",
                "patternProperties",
                "propertyNames",
            ]
            .iter()
            .any(|k| map.contains_key(*k));
        }
        _ => {}
    }
    if map.has("not") {
        unchecked = true;
    }
    if unchecked {
        Fit::Unchecked
    } else {
        Fit::Yes
    }
}
