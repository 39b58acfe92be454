//! `dependentRequired` and draft-07 `dependencies` (arrays, and schemas of `required` or
//! `not: {"required": [name]}`) over declared properties, alone and beside counts.

use super::Enforced;
use serde_json::{json, Value};

/// Objects of `a`, `b`, `c`, `d` (integers) with each subset of the four present, and
/// with an extra key beside.
fn objects() -> Vec<String> {
    let mut out = Vec::new();
    for mask in 0..16u32 {
        let mut members: Vec<String> = ["a", "b", "c", "d"]
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(i, name)| format!("\"{name}\":{i}"))
            .collect();
        out.push(format!("{{{}}}", members.join(",")));
        members.push("\"x\":true".to_string());
        out.push(format!("{{{}}}", members.join(",")));
    }
    out
}

fn over_four(extra: Value) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer"}, "b": {"type": "integer"},
            "c": {"type": "integer"}, "d": {"type": "integer"}
        }
    });
    for (key, value) in extra.as_object().unwrap() {
        schema[key] = value.clone();
    }
    schema
}

fn agrees_everywhere(schema: Value) {
    let schema = Enforced::new(schema);
    let texts = objects();
    schema.agrees_on_all(&texts.iter().map(String::as_str).collect::<Vec<_>>());
    schema.samples_validate(30);
}

#[test]
fn required_together_both_ways_and_in_chains() {
    for dependencies in [
        // A later property, an earlier one, both ways, a chain.
        json!({"dependentRequired": {"a": ["c"]}}),
        json!({"dependentRequired": {"d": ["b"]}}),
        json!({"dependentRequired": {"b": ["c"], "c": ["b"]}}),
        json!({"dependentRequired": {"a": ["b"], "b": ["c", "d"]}}),
        json!({"dependentRequired": {"c": ["a"]}, "required": ["c"]}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"b": ["a", "d"]}}),
    ] {
        agrees_everywhere(over_four(dependencies));
    }
}

#[test]
fn schema_dependencies_of_required_and_excluded_names() {
    for dependencies in [
        json!({"$schema": "http://json-schema.org/draft-07/schema#",
               "dependencies": {"a": {"required": ["b"]}, "c": {"not": {"required": ["d"]}}}}),
        json!({"dependentSchemas": {"d": {"not": {"required": ["a"]}, "description": "not with a"}}}),
        json!({"dependentSchemas": {"b": {"required": ["c"]}}, "additionalProperties": false}),
    ] {
        agrees_everywhere(over_four(dependencies));
    }
}

#[test]
fn dependencies_beside_counts() {
    for extra in [
        json!({"dependentRequired": {"a": ["b"]}, "maxProperties": 2}),
        json!({"dependentRequired": {"c": ["d"]}, "minProperties": 1, "maxProperties": 3}),
        json!({"dependentRequired": {"b": ["a"]}, "minProperties": 3, "additionalProperties": false}),
    ] {
        agrees_everywhere(over_four(extra));
    }
}

#[test]
fn names_no_property_declares() {
    // Without extra keys, `e` is never present: `a`, which needs it, is never written.
    agrees_everywhere(over_four(json!({
        "dependentRequired": {"a": ["e"], "e": ["b"]},
        "additionalProperties": false
    })));
    // Beside extra keys, `e` may be one: validation keeps it.
    let compiled = gbnfc_compiler::schema::compile(
        &over_four(json!({"dependentRequired": {"a": ["e"]}})),
        &gbnfc_compiler::schema::Options::default(),
    )
    .unwrap();
    assert!(compiled.needs_validation());
}
