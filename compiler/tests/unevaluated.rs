//! `unevaluatedProperties` / `unevaluatedItems` where the grammar cannot see everything
//! that evaluates keys (items): the keyword is reported as validation-only, and the grammar
//! must not refuse a value the schema accepts (checked against the `jsonschema` crate).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::schema::canon::canonical_text;
use gbnfc_compiler::schema::document::Document;
use gbnfc_compiler::schema::{compile, KeywordStatus, Options};
use serde_json::{json, Value};

/// Every one of `valid` is valid under `schema` (by the `jsonschema` crate) and its
/// canonical text is accepted by the compiled grammar; `keyword` is reported as
/// validation-only.
fn accepts_every_valid_value(schema: &Value, keyword: &str, valid: &[Value]) {
    let validator = jsonschema::validator_for(schema).unwrap();
    let compiled = compile(schema, &Options::default()).unwrap();
    assert!(
        compiled
            .diagnostics
            .iter()
            .any(|d| d.keyword == keyword && d.status == KeywordStatus::ValidationOnly),
        "{keyword} not reported as validation-only: {:?}",
        compiled.diagnostics
    );
    let recognizer = Recognizer::new(&compiled.grammar).unwrap();
    let doc = Document::from_input(schema, None).unwrap();
    for value in valid {
        assert!(validator.is_valid(value), "not valid by the crate: {value}");
        let text = canonical_text(value, &doc);
        assert!(
            recognizer.recognize(&text).accepted,
            "grammar refuses {text}:\n{}",
            compiled.grammar
        );
    }
}

/// Does the grammar compiled from `schema` accept `text`?
fn grammar_accepts(schema: &Value, text: &str) -> bool {
    let compiled = compile(schema, &Options::default()).unwrap();
    Recognizer::new(&compiled.grammar)
        .unwrap()
        .recognize(text)
        .accepted
}

#[test]
fn positional_items_of_different_lengths_merge_position_by_position() {
    // `allOf`'s member evaluates the second item: the merged tuple covers two positions.
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "prefixItems": [{"type": "string"}],
        "allOf": [{"prefixItems": [true, {"type": "number"}]}],
        "unevaluatedItems": false
    });
    accepts_every_valid_value(
        &schema,
        "unevaluatedItems",
        &[json!(["a", 1]), json!(["a"])],
    );
    assert!(!grammar_accepts(&schema, r#"["a","b"]"#));
}

#[test]
fn branches_of_any_of_evaluate_together() {
    // Both branches match `{"a":1,"b":2}`; together they evaluate both keys.
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "anyOf": [
            {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"b": {"type": "integer"}}, "required": ["b"]}
        ],
        "unevaluatedProperties": false
    });
    accepts_every_valid_value(
        &schema,
        "unevaluatedProperties",
        &[json!({"a": 1, "b": 2}), json!({"a": 1}), json!({"b": 2})],
    );
}

#[test]
fn an_if_without_then_or_else_evaluates_what_it_matches() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "if": {"patternProperties": {"foo": {"type": "string"}}},
        "unevaluatedProperties": false
    });
    accepts_every_valid_value(&schema, "unevaluatedProperties", &[json!({"foo": "x"})]);
    let items = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "if": {"prefixItems": [{"const": "a"}]},
        "unevaluatedItems": false
    });
    accepts_every_valid_value(&items, "unevaluatedItems", &[json!(["a"])]);
}

#[test]
fn a_conflict_kept_from_one_side_leaves_the_other_sides_items_free() {
    // Two array-form `items` (2019-09) are not intersected: the outer one is kept, so the
    // outer `unevaluatedItems` must not hold the item the member evaluates.
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "items": [{"type": "string"}],
        "allOf": [{"items": [true, {"type": "number"}]}],
        "unevaluatedItems": false
    });
    accepts_every_valid_value(&schema, "unevaluatedItems", &[json!(["a", 1])]);
}

#[test]
fn unevaluated_items_governs_the_items_after_an_array_form_items() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "items": [{"type": "string"}],
        "unevaluatedItems": {"type": "integer"}
    });
    assert!(grammar_accepts(&schema, r#"["a",1,2]"#));
    assert!(!grammar_accepts(&schema, r#"["a","b"]"#));
}

#[test]
fn a_dynamic_reference_resolved_statically_leaves_unevaluated_keys_to_validation() {
    // The dynamic anchor in scope is `derived`'s, which evaluates `bar`; statically the
    // reference lands on the empty default.
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/derived",
        "$ref": "/base",
        "$defs": {
            "derived": {
                "$dynamicAnchor": "addons",
                "properties": {"bar": {"type": "string"}}
            },
            "base": {
                "$id": "/base",
                "type": "object",
                "properties": {"foo": {"type": "string"}},
                "$dynamicRef": "#addons",
                "$defs": {"defaultAddons": {"$dynamicAnchor": "addons"}},
                "unevaluatedProperties": false
            }
        }
    });
    accepts_every_valid_value(
        &schema,
        "unevaluatedProperties",
        &[json!({"foo": "x", "bar": "y"})],
    );
}
