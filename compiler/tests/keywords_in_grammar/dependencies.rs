//! `dependentRequired` and draft-07 `dependencies` (arrays, and schemas of `required` or
//! `not: {"required": [name]}`) over declared properties, alone and beside counts.

use super::{agrees_on_every_subset, four_properties};
use serde_json::json;

/// The extra member the objects may carry.
const EXTRA: &[&str] = &["\"x\":true"];

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
        agrees_on_every_subset(four_properties(&dependencies), EXTRA);
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
        agrees_on_every_subset(four_properties(&dependencies), EXTRA);
    }
}

#[test]
fn dependencies_beside_counts() {
    for extra in [
        json!({"dependentRequired": {"a": ["b"]}, "maxProperties": 2}),
        json!({"dependentRequired": {"c": ["d"]}, "minProperties": 1, "maxProperties": 3}),
        json!({"dependentRequired": {"b": ["a"]}, "minProperties": 3, "additionalProperties": false}),
    ] {
        agrees_on_every_subset(four_properties(&extra), EXTRA);
    }
}

#[test]
fn names_no_property_declares() {
    // Without extra keys, `e` is never present: `a`, which needs it, is never written.
    agrees_on_every_subset(
        four_properties(&json!({
            "dependentRequired": {"a": ["e"], "e": ["b"]},
            "additionalProperties": false
        })),
        EXTRA,
    );
    // Beside extra keys, `e` may be one: validation keeps it.
    let compiled = gbnfc_compiler::schema::compile(
        &four_properties(&json!({"dependentRequired": {"a": ["e"]}})),
        &gbnfc_compiler::schema::Options::default(),
    )
    .unwrap();
    assert!(compiled.needs_validation());
}
