//! The canonical text of a JSON value under a schema — what compiled grammars produce:
//! compact; object keys in `properties` order as the compiler reads the schema (the
//! conjunction of the schema, its `$ref` targets and `allOf` members intersected as typed
//! schemas, each `anyOf`/`oneOf` settled to the first branch that admits the value —
//! judged by `type`, `minItems`/`maxItems`, `required`, property `const`/`enum`/`pattern`
//! and `additionalProperties: false`), then other keys in their original order, their
//! values under the first matching `patternProperties` or else `additionalProperties`;
//! array items under `prefixItems`/`items`; integral numbers written as integers; strings
//! escaped as serde_json does. The schema is read by the emitter's own stages (its
//! conjunctions, `read`, `intersect`), so this order is the grammar's.

use std::borrow::Cow;
use std::cell::RefCell;

use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use super::document::{at, Document};
use super::emit::{read_together, without_combinators, Emitter, Member};
use super::ir::{JsonType, PlainSchema, Subschema, Written};
use super::numeric;
use super::numeric::value::json_equal;
use super::Options;
use crate::json_text::{encode_str, push_encoded_str};
use crate::recognize::Recognizer;

/// The canonical text of `value` under the schema at the root of `doc`. (Under draft-04,
/// where `1.0` is no integer, numbers written with a fraction keep it.)
pub fn canonical_text(value: &Value, doc: &Document<'_>) -> String {
    let options = Options::default();
    let mut emitter = Emitter::new(doc, &options);
    let root = doc.root();
    let source = doc.source(&root);
    let schemas: Vec<Written<&Value>> = source
        .as_deref()
        .and_then(|source| at(source, &root))
        .map(|schema| Written {
            value: schema,
            at: root,
        })
        .into_iter()
        .collect();
    let mut writer = Writer {
        emitter: &mut emitter,
        keep_floats: doc.draft4_or_older,
    };
    let mut out = String::new();
    writer.write(value, &schemas, &mut out, 0);
    out
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

/// The deepest value nesting whose schema is followed for key order.
const MAX_DEPTH: usize = 64;

/// Writes values under the schemas the emitter reads for them.
struct Writer<'e, 'd, 'r, 'o> {
    emitter: &'e mut Emitter<'d, 'r, 'o>,
    /// Draft-04 and older: numbers written with a fraction keep it.
    keep_floats: bool,
}

impl Writer<'_, '_, '_, '_> {
    /// Writes `value`, valid under every one of `schemas` (none: its keys as they are).
    fn write(
        &mut self,
        value: &Value,
        schemas: &[Written<&Value>],
        out: &mut String,
        depth: usize,
    ) {
        let level: Vec<Member<'_>> = schemas
            .iter()
            .filter(|_| depth < MAX_DEPTH)
            .filter_map(|schema| match schema.value {
                Value::Object(map) => Some((Cow::Borrowed(map), schema.at.clone())),
                _ => None,
            })
            .collect();
        let members = match level.is_empty() {
            true => Vec::new(),
            false => self
                .emitter
                .settled(level, |arm| admits(arm, value))
                .unwrap_or_default(),
        };
        let members = without_combinators(&members);
        let Some(plain) = read_arm(&members) else {
            return self.write_under(value, None, out, depth);
        };
        // An `enum`/`const` member equal to the value: the grammar spells it as the
        // emitter lists it.
        if matches!(value, Value::Object(_) | Value::Array(_)) {
            let listed = plain.literals.iter().flat_map(|l| &l.values);
            if let Some(member) = listed.into_iter().find(|v| json_equal(v, value)) {
                out.push_str(&canonical_text_in_order(member, &plain.object.key_order()));
                return;
            }
        }
        self.write_under(value, Some(&plain), out, depth);
    }

    /// Writes `value` with its keys and items under the typed schema `plain`.
    fn write_under(
        &mut self,
        value: &Value,
        plain: Option<&PlainSchema<'_>>,
        out: &mut String,
        depth: usize,
    ) {
        match value {
            Value::Object(members) => {
                let order = plain
                    .map(|plain| plain.object.key_order())
                    .unwrap_or_default();
                write_object(members, &order, out, |key, member, out| {
                    let child = plain.and_then(|plain| property_schema(plain, key));
                    let child = child.as_ref().map_or(&[][..], Subschema::members);
                    self.write(member, child, out, depth + 1);
                });
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let child = plain.and_then(|plain| {
                        let array = &plain.array;
                        array.prefix.get(i).or(array.items.as_ref()).cloned()
                    });
                    let child = child.as_ref().map_or(&[][..], Subschema::members);
                    self.write(item, child, out, depth + 1);
                }
                out.push(']');
            }
            scalar => write_scalar(scalar, out, self.keep_floats),
        }
    }
}

/// The schema of the member `key` of an object under `plain`: its `properties` entry, or
/// else the first of its `patternProperties` that matches the key, or else its
/// `additionalProperties`.
fn property_schema<'s>(plain: &PlainSchema<'s>, key: &str) -> Option<Subschema<'s>> {
    let object = &plain.object;
    if let Some(declared) = object.properties.get(key) {
        return Some(declared);
    }
    let matched = object
        .pattern_properties
        .iter()
        .find(|(pattern, _)| pattern_matches(pattern, key) == Some(true));
    match matched {
        Some((_, schema)) => Some(schema),
        None => object.additional.clone(),
    }
}

/// Whether `value` may be valid under the arm `members`, judged by the keywords that
/// usually tell branches apart: `type`; for arrays `minItems` and `maxItems`; for objects
/// `required`, the `const`/`enum`/`pattern` of a property, and
/// `additionalProperties: false`.
fn admits(members: &[Member<'_>], value: &Value) -> bool {
    let members = without_combinators(members);
    let Some(plain) = read_arm(&members) else {
        return true;
    };
    if !plain.types.admits(json_type(value)) {
        return false;
    }
    let members = match value {
        Value::Object(members) => members,
        Value::Array(items) => {
            let count = |n: &Option<Written<u64>>| n.as_ref().map(|n| n.value);
            let len = items.len() as u64;
            return plain.array.min_items() <= len
                && count(&plain.array.max_items).is_none_or(|max| len <= max);
        }
        _ => return true,
    };
    let object = &plain.object;
    let required_ok = object
        .required
        .iter()
        .all(|name| members.contains_key(name.value));
    let literals_ok = object.properties.iter().all(|(name, schema)| {
        let Some(value) = members.get(name) else {
            return true;
        };
        schema.members().iter().all(|written| {
            let schema = written.value;
            let pattern_ok = match (schema.get("pattern").and_then(Value::as_str), value) {
                (Some(pattern), Value::String(text)) => {
                    pattern_matches(pattern, text) != Some(false)
                }
                _ => true,
            };
            pattern_ok
                && schema.get("const").is_none_or(|c| json_equal(c, value))
                && schema
                    .get("enum")
                    .and_then(Value::as_array)
                    .is_none_or(|options| options.iter().any(|o| json_equal(o, value)))
        })
    });
    let closed = object.additional.as_ref().is_some_and(Subschema::is_false)
        && object.pattern_properties.is_empty();
    let keys_ok = !closed || members.keys().all(|k| object.properties.declares(k));
    required_ok && literals_ok && keys_ok
}

/// `members` (none: `None`) read and intersected, a conflict keeping the first side.
fn read_arm<'s>(members: &'s [Member<'_>]) -> Option<PlainSchema<'s>> {
    let (_, first_at) = members.first()?;
    read_together(members, first_at)
}

/// The JSON type of `value` (`integer` for a number without a fraction).
fn json_type(value: &Value) -> JsonType {
    match value {
        Value::Null => JsonType::Null,
        Value::Bool(_) => JsonType::Boolean,
        Value::Object(_) => JsonType::Object,
        Value::Array(_) => JsonType::Array,
        Value::String(_) => JsonType::String,
        Value::Number(n) if numeric::value::is_integral(n) == Some(true) => JsonType::Integer,
        Value::Number(_) => JsonType::Number,
    }
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
    fn a_property_several_members_declare_takes_the_keys_of_all_in_order() {
        let schema = json!({
            "allOf": [
                {"properties": {"p": {"type": "object"}}},
                {"properties": {"p": {"properties": {"id": {}}}}},
                {"properties": {"p": {"properties": {"model": {}}}}}
            ]
        });
        let text = accepted_canonical(&schema, &json!({"p": {"model": 1, "id": 2}}));
        assert_eq!(text, r#"{"p":{"id":2,"model":1}}"#);
    }

    #[test]
    fn an_array_takes_the_branch_its_length_fits() {
        let schema = json!({
            "oneOf": [
                {"type": "array", "maxItems": 0},
                {"type": "array", "minItems": 1, "items": {"properties": {"b": {}, "a": {}}}}
            ]
        });
        let text = accepted_canonical(&schema, &json!([{"a": 1, "b": 2}]));
        assert_eq!(text, r#"[{"b":2,"a":1}]"#);
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
