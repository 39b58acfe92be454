//! `minProperties` / `maxProperties` over declared optional properties, beside extra keys
//! (`additionalProperties`, `propertyNames`) or without them.

use super::{agrees_on_every_subset, four_properties, Enforced};
use serde_json::json;

/// The extra members the objects may carry.
const EXTRAS: &[&str] = &["\"x\":true", "\"y\":null"];

/// The four properties, `b` required, with `keywords` beside (which may replace it).
fn declared(keywords: serde_json::Value) -> serde_json::Value {
    let mut schema = four_properties(&json!({"required": ["b"]}));
    for (key, value) in keywords.as_object().unwrap() {
        schema[key] = value.clone();
    }
    schema
}

#[test]
fn counts_over_optional_properties_without_extra_keys() {
    for counts in [
        json!({"minProperties": 2}),
        json!({"minProperties": 4}),
        json!({"maxProperties": 2}),
        json!({"maxProperties": 1}),
        json!({"minProperties": 2, "maxProperties": 3}),
        json!({"minProperties": 3, "maxProperties": 3}),
    ] {
        let mut extra = counts.clone();
        extra["additionalProperties"] = json!(false);
        agrees_on_every_subset(declared(extra), EXTRAS);
    }
}

#[test]
fn counts_beside_extra_keys() {
    for extra in [
        json!({"minProperties": 1, "required": []}),
        json!({"maxProperties": 2}),
        json!({"maxProperties": 3, "additionalProperties": {"type": ["boolean", "null"]}}),
        json!({"minProperties": 1, "maxProperties": 2, "required": []}),
    ] {
        agrees_on_every_subset(declared(extra), EXTRAS);
    }
}

#[test]
fn counts_of_keys_that_only_property_names_constrain() {
    let schema = Enforced::new(json!({
        "type": "object",
        "propertyNames": {"pattern": "^[a-z]$"},
        "minProperties": 1,
        "maxProperties": 3
    }));
    schema.agrees_on_all(&[
        "{}",
        r#"{"a":1}"#,
        r#"{"a":1,"b":2,"c":3}"#,
        r#"{"a":1,"b":2,"c":3,"d":4}"#,
        r#"{"ab":1}"#,
    ]);
    schema.samples_validate(30);
}

#[test]
fn a_minimum_above_one_beside_extra_keys_stays_with_validation() {
    // Two extra members may repeat a key, and JSON keeps one of them.
    let compiled = gbnfc_compiler::schema::compile(
        &declared(json!({"minProperties": 3})),
        &gbnfc_compiler::schema::Options::default(),
    )
    .unwrap();
    let left: Vec<&str> = compiled
        .diagnostics
        .iter()
        .filter(|d| d.status == gbnfc_compiler::schema::KeywordStatus::ValidationOnly)
        .map(|d| d.keyword.as_str())
        .collect();
    assert_eq!(left, ["minProperties"]);
}

#[test]
fn a_count_the_chain_cannot_hold_stays_with_validation() {
    // 80 optional properties counted up to 40: more than 2,000 nodes.
    let properties: serde_json::Map<String, serde_json::Value> = (0..80)
        .map(|i| (format!("p{i}"), json!({"type": "integer"})))
        .collect();
    let schema = json!({
        "type": "object", "properties": properties,
        "maxProperties": 40, "additionalProperties": false
    });
    let compiled =
        gbnfc_compiler::schema::compile(&schema, &gbnfc_compiler::schema::Options::default())
            .unwrap();
    let left: Vec<(&str, &str)> = compiled
        .diagnostics
        .iter()
        .filter(|d| d.status == gbnfc_compiler::schema::KeywordStatus::ValidationOnly)
        .map(|d| (d.keyword.as_str(), d.message.as_str()))
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].0, "maxProperties");
    assert!(left[0].1.contains("2000 rules"), "{left:?}");
}
