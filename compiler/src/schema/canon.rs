//! The canonical text of a JSON value under a schema — what compiled grammars produce:
//! compact; object keys in `properties` order, read as the compiler merges the schema
//! (the object's own properties first, then those of a sibling `$ref` and of `allOf`
//! members in order, then those of the first `anyOf`/`oneOf` branch that admits the
//! object — judged by `type`, `required`, property `const`/`enum`/`pattern` and
//! `additionalProperties: false`), then other keys in their original order, their values
//! under the first matching `patternProperties` or else `additionalProperties`; array
//! items under their own or the first array branch's `items`; integral numbers written as
//! integers; strings escaped as serde_json does.

use std::cell::RefCell;

use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use super::document::{Document, Location};
use super::numeric;
use crate::json_text::{encode_str, push_encoded_str};
use crate::recognize::Recognizer;

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
    canonical_text_in_order(value, &property_order(map))
}

/// The canonical text of a literal `value` whose object keys in `order` come first.
pub fn canonical_text_in_order(value: &Value, order: &[String]) -> String {
    let mut out = String::new();
    write_with_order(value, order, &mut out);
    out
}

/// A number's canonical text: integral values as integers (zero as `0`, never `-0`),
/// others in the shortest layout ([`numeric::value::canonical_text`]), read exactly.
pub fn number_text(n: &serde_json::Number) -> String {
    numeric::value::canonical_text(n, false)
}

fn property_order(map: &Map<String, Value>) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    let add = |m: &Map<String, Value>, order: &mut Vec<String>| {
        if let Some(props) = m.get("properties").and_then(Value::as_object) {
            for k in props.keys() {
                if !order.contains(k) {
                    order.push(k.clone());
                }
            }
        }
    };
    add(map, &mut order);
    for key in ["allOf", "anyOf", "oneOf"] {
        for branch in map.get(key).and_then(Value::as_array).into_iter().flatten() {
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
        push_encoded_str(out, key);
        out.push_str("\":");
        member(key, &members[key], out);
    }
    out.push('}');
}

fn write_scalar(value: &Value, out: &mut String, keep_floats: bool) {
    match value {
        Value::Number(n) => out.push_str(&numeric::value::canonical_text(n, keep_floats)),
        Value::String(s) => {
            out.push('"');
            push_encoded_str(out, s);
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
            .get("enum")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .chain(map.get("const").cloned());
        for member in members {
            if matches!(member, Value::Object(_) | Value::Array(_))
                && super::numeric::value::json_equal(&member, value)
            {
                out.push_str(&canonical_text_of(&member, &map));
                return;
            }
        }
    }
    match value {
        Value::Object(members) => {
            let (order, children): (Vec<String>, Vec<(String, Location)>) = match &schema {
                Some(at) => ordering(at, doc, members, 0),
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
        scalar => write_scalar(scalar, out, doc.draft4_or_older),
    }
}

/// Follows `$ref`s to the schema object that holds the keywords.
fn resolved(at: &Location, doc: &Document<'_>, hops: usize) -> Option<Location> {
    let value = doc.get(at)?;
    let map = value.as_object()?;
    match map.get("$ref").and_then(Value::as_str) {
        Some(reference)
            if hops < 16 && (doc.ref_overrides_siblings || !map.contains_key("properties")) =>
        {
            let target = doc.resolve(at, reference).ok()?;
            resolved(&target, doc, hops + 1)
        }
        _ => Some(at.clone()),
    }
}

/// Property order and per-property schema locations for the object `members` under the
/// schema at `at`, as the compiler merges it: the properties of the schema, then of a
/// sibling `$ref` and of `allOf` members ([`merged_parts`]); then, for each `anyOf`/`oneOf`
/// among those, the first branch that [`admits`] the object (every branch when none
/// does). A key declared nowhere takes the schema of the first of the schema's
/// `patternProperties` that matches it, or else its `additionalProperties`.
fn ordering(
    at: &Location,
    doc: &Document<'_>,
    members: &Map<String, Value>,
    depth: usize,
) -> (Vec<String>, Vec<(String, Location)>) {
    let mut order = Vec::new();
    let mut children = Vec::new();
    let merged = merged_parts(at, doc);
    for (part, map) in &merged {
        for key in map
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            add_key(
                &mut order,
                &mut children,
                key,
                part.grandchild("properties", key),
            );
        }
    }
    if depth <= 8 {
        for (part, map) in &merged {
            for key in ["anyOf", "oneOf"] {
                let count = map.get(key).and_then(Value::as_array).map_or(0, Vec::len);
                let branches: Vec<Location> = (0..count)
                    .filter_map(|i| resolved(&part.child(key).index(i), doc, 0))
                    .collect();
                let chosen = match branches.iter().find(|b| admits(b, doc, members)) {
                    Some(first) => std::slice::from_ref(first),
                    None => branches.as_slice(),
                };
                for branch in chosen {
                    let (sub_order, sub_children) = ordering(branch, doc, members, depth + 1);
                    for key in sub_order {
                        if !order.contains(&key) {
                            order.push(key);
                        }
                    }
                    for (key, location) in sub_children {
                        add_key(&mut order, &mut children, &key, location);
                    }
                }
            }
        }
    }
    if let Some((_, map)) = merged.first().filter(|(part, _)| part == at) {
        let patterns = map.get("patternProperties").and_then(Value::as_object);
        let additional = map
            .get("additionalProperties")
            .is_some_and(Value::is_object);
        for key in members.keys() {
            if children.iter().any(|(k, _)| k == key) {
                continue;
            }
            let matched = patterns
                .into_iter()
                .flatten()
                .find(|(pattern, _)| pattern_matches(pattern, key) == Some(true));
            if let Some((pattern, _)) = matched {
                children.push((key.clone(), at.grandchild("patternProperties", pattern)));
            } else if additional {
                children.push((key.clone(), at.child("additionalProperties")));
            }
        }
    }
    (order, children)
}

/// How many patterns' recognizers [`pattern_matches`] keeps per thread.
const MAX_CACHED_PATTERNS: usize = 256;

/// Whether the ECMA-262 `pattern` matches somewhere in `text`, as the compiled grammar
/// reads it; `None` when the compiler cannot read the pattern either. Recognizers are
/// kept per thread (a few hundred), since an object's keys meet the same patterns again
/// and again.
fn pattern_matches(pattern: &str, text: &str) -> Option<bool> {
    thread_local! {
        static RECOGNIZERS: RefCell<FxHashMap<String, Option<Recognizer>>> =
            RefCell::new(FxHashMap::default());
    }
    RECOGNIZERS.with(|cache| {
        let mut cache = cache.borrow_mut();
        // A long run (the conformance harness, a fuzzer) meets endless patterns.
        if cache.len() >= MAX_CACHED_PATTERNS && !cache.contains_key(pattern) {
            cache.clear();
        }
        let recognizer = cache.entry(pattern.to_string()).or_insert_with(|| {
            let expr = crate::pattern::pattern_expr(pattern).ok()?;
            Recognizer::new(&crate::pattern::pattern_grammar(expr)).ok()
        });
        recognizer
            .as_ref()
            .map(|r| r.recognize(&encode_str(text)).accepted)
    })
}

/// Adds `key` to the order (once) and its schema location (the first one found).
fn add_key(
    order: &mut Vec<String>,
    children: &mut Vec<(String, Location)>,
    key: &String,
    location: Location,
) {
    if !order.contains(key) {
        order.push(key.clone());
    }
    if !children.iter().any(|(k, _)| k == key) {
        children.push((key.clone(), location));
    }
}

/// The schema objects at `at` and merged into it, each fetched once, in the order the
/// emitter merges them: level by level, each schema's sibling `$ref` target, then its
/// `allOf` members (a member's own `allOf` is merged only once its level is: after every
/// member of this one). The first is `at`'s own, when it is an object.
fn merged_parts(at: &Location, doc: &Document<'_>) -> Vec<(Location, Map<String, Value>)> {
    let mut seen = vec![at.clone()];
    let mut parts = Vec::new();
    let mut next = 0;
    while next < seen.len() && seen.len() < MAX_MERGED_PARTS {
        let part = seen[next].clone();
        next += 1;
        let Some(Value::Object(map)) = doc.get(&part) else {
            continue;
        };
        let target = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| doc.resolve(&part, reference).ok());
        let count = map
            .get("allOf")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let members = (0..count).filter_map(|i| resolved(&part.child("allOf").index(i), doc, 0));
        for found in target.into_iter().chain(members) {
            if !seen.contains(&found) {
                seen.push(found);
            }
        }
        parts.push((part, map));
    }
    parts
}

/// The most schemas [`merged_parts`] gathers for one object.
const MAX_MERGED_PARTS: usize = 64;

/// Whether the object `members` may be valid under the branch schema at `at`, judged by
/// the keywords that usually tell branches apart: `type`, `required`, the `const`/`enum`/
/// `pattern` of a property, and `additionalProperties: false`.
fn admits(at: &Location, doc: &Document<'_>, members: &Map<String, Value>) -> bool {
    let Some(Value::Object(map)) = doc.get(at) else {
        return true;
    };
    let type_ok = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => true,
    };
    let required_ok = map
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .all(|name| members.contains_key(name));
    let properties = map.get("properties").and_then(Value::as_object);
    let literals_ok = properties.into_iter().flatten().all(|(name, schema)| {
        let Some(value) = members.get(name) else {
            return true;
        };
        let equal = |v: &Value| super::numeric::value::json_equal(v, value);
        let pattern_ok = match (schema.get("pattern").and_then(Value::as_str), value) {
            (Some(pattern), Value::String(text)) => pattern_matches(pattern, text) != Some(false),
            _ => true,
        };
        pattern_ok
            && schema.get("const").is_none_or(equal)
            && schema
                .get("enum")
                .and_then(Value::as_array)
                .is_none_or(|options| options.iter().any(equal))
    });
    let closed = map.get("additionalProperties") == Some(&Value::Bool(false))
        && !map.contains_key("patternProperties");
    let keys_ok = !closed
        || members
            .keys()
            .all(|k| properties.is_some_and(|p| p.contains_key(k)));
    type_ok && required_ok && literals_ok && keys_ok
}

/// The schema of item `index` of an array under the schema at `at`: its own
/// `prefixItems`/`items`, or else those of the first `allOf`/`anyOf`/`oneOf` branch that
/// may hold arrays (the branch the grammar compiles such an array with).
fn item_schema(at: &Location, index: usize, doc: &Document<'_>) -> Option<Location> {
    item_schema_within(at, index, doc, 0)
}

fn item_schema_within(
    at: &Location,
    index: usize,
    doc: &Document<'_>,
    depth: usize,
) -> Option<Location> {
    let value = doc.get(at)?;
    let map = value.as_object()?;
    let prefix_len = |key: &str| map.get(key).and_then(Value::as_array).map(Vec::len);
    if let Some(n) = prefix_len("prefixItems") {
        if index < n {
            return Some(at.child("prefixItems").index(index));
        }
        return map.get("items").map(|_| at.child("items"));
    }
    match map.get("items") {
        Some(Value::Array(items)) if index < items.len() => {
            return Some(at.child("items").index(index))
        }
        Some(Value::Array(_)) => {
            return map
                .get("additionalItems")
                .map(|_| at.child("additionalItems"))
        }
        Some(_) => return Some(at.child("items")),
        None => {}
    }
    if depth >= 8 {
        return None;
    }
    ["allOf", "anyOf", "oneOf"]
        .into_iter()
        .filter_map(|key| Some((key, map.get(key)?.as_array()?.len())))
        .flat_map(|(key, len)| (0..len).map(move |i| at.child(key).index(i)))
        .filter_map(|branch| resolved(&branch, doc, 0))
        .filter(|branch| may_hold_arrays(branch, doc))
        .find_map(|branch| item_schema_within(&branch, index, doc, depth + 1))
}

/// `false` when the schema at `at` names types and `array` is not one of them.
fn may_hold_arrays(at: &Location, doc: &Document<'_>) -> bool {
    match doc.get(at).as_ref().and_then(|s| s.get("type").cloned()) {
        Some(Value::String(t)) => t == "array",
        Some(Value::Array(types)) => types.iter().any(|t| t == "array"),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::{json, Value};

    use super::canonical_text;
    use crate::recognize::Recognizer;
    use crate::schema::document::Document;
    use crate::schema::{compile, Options};

    #[test]
    fn integral_floats_are_written_as_integers_at_every_size() {
        let cases = [
            (1.0, "1"),
            (-3.0, "-3"),
            (-0.0, "0"),
            (1e15, "1000000000000000"),
            (9_007_199_254_740_991.0, "9007199254740991"),
            (9_007_199_254_740_992.0, "9007199254740992"),
            (-9_007_199_254_740_994.0, "-9007199254740994"),
            (1e21, "1000000000000000000000"),
            (2.5, "2.5"),
        ];
        for (value, text) in cases {
            let number = serde_json::Number::from_f64(value).unwrap();
            assert_eq!(super::number_text(&number), text, "{value}");
        }
    }

    /// The canonical text of `value`, after checking the compiled grammar accepts it.
    fn accepted_canonical(schema: &Value, value: &Value) -> String {
        let doc = Document::from_input(schema, None).unwrap();
        let text = canonical_text(value, &doc);
        let compiled = compile(schema, &Options::default()).unwrap();
        let recognizer = Recognizer::new(&compiled.grammar).unwrap();
        assert!(recognizer.recognize(&text).accepted, "{text}");
        text
    }

    #[test]
    fn keys_follow_the_branch_the_object_belongs_to() {
        let schema = json!({
            "type": "object",
            "oneOf": [
                {"properties": {"kind": {"const": "a"}, "x": {}}, "required": ["kind"]},
                {"properties": {"y": {}, "kind": {"enum": ["b"]}}, "required": ["kind"]}
            ]
        });
        let text = accepted_canonical(&schema, &json!({"kind": "b", "y": 1}));
        assert_eq!(text, r#"{"y":1,"kind":"b"}"#);
        let text = accepted_canonical(&schema, &json!({"x": 1, "kind": "a"}));
        assert_eq!(text, r#"{"kind":"a","x":1}"#);
    }

    #[test]
    fn array_items_follow_the_array_branch() {
        let schema = json!({
            "oneOf": [
                {"type": "object"},
                {"type": "array", "items": {"properties": {"b": {}, "a": {}}}}
            ]
        });
        let text = accepted_canonical(&schema, &json!([{"a": 1, "b": 2}]));
        assert_eq!(text, r#"[{"b":2,"a":1}]"#);
    }

    #[test]
    fn branches_inside_all_of_members_come_after_every_merged_property() {
        let schema = json!({
            "allOf": [
                {"properties": {"a": {}}},
                {"anyOf": [
                    {"properties": {"c": {}}, "required": ["c"]},
                    {"properties": {"d": {}}, "required": ["d"]}
                ]},
                {"properties": {"b": {}}}
            ]
        });
        let text = accepted_canonical(&schema, &json!({"c": 1, "b": 2, "a": 3}));
        assert_eq!(text, r#"{"a":3,"b":2,"c":1}"#);
    }

    #[test]
    fn undeclared_keys_take_the_additional_properties_schema() {
        let schema = json!({
            "properties": {"x": {}},
            "additionalProperties": {"properties": {"q": {}, "p": {}}}
        });
        let text = accepted_canonical(&schema, &json!({"y": {"p": 1, "q": 2}, "x": 1}));
        assert_eq!(text, r#"{"x":1,"y":{"q":2,"p":1}}"#);
    }

    #[test]
    fn pattern_matched_keys_take_their_pattern_schema() {
        let schema = json!({
            "type": "object",
            "patternProperties": {"^x": {"properties": {"b": {}, "a": {}}}}
        });
        let text = accepted_canonical(&schema, &json!({"xy": {"a": 1, "b": 2}}));
        assert_eq!(text, r#"{"xy":{"b":2,"a":1}}"#);
    }

    #[test]
    fn branches_told_apart_by_a_pattern() {
        let schema = json!({
            "type": "object",
            "oneOf": [
                {"properties": {"status": {"pattern": "^ok$"}, "a": {}}, "required": ["status"]},
                {"properties": {"b": {}, "status": {"pattern": "^fail$"}}, "required": ["status"]}
            ]
        });
        let text = accepted_canonical(&schema, &json!({"status": "fail", "b": 1}));
        assert_eq!(text, r#"{"b":1,"status":"fail"}"#);
    }
}
