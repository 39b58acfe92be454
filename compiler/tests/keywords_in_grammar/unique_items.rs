//! `uniqueItems` over items of a small finite set of values: an `enum`, a `const`,
//! `boolean`, `null`.

use super::Enforced;
use serde_json::json;

/// Arrays of up to four values from `values` (JSON texts), every order, repeats too.
fn arrays(values: &[&str]) -> Vec<String> {
    let mut out = vec!["[]".to_string()];
    let mut frontier = vec![Vec::<&str>::new()];
    for _ in 0..4 {
        let mut next = Vec::new();
        for list in &frontier {
            for &v in values {
                let mut longer = list.clone();
                longer.push(v);
                out.push(format!("[{}]", longer.join(",")));
                next.push(longer);
            }
        }
        frontier = next;
    }
    out
}

#[test]
fn enums_of_strings_with_and_without_bounds() {
    for bounds in [
        json!({}),
        json!({"minItems": 1}),
        json!({"minItems": 2, "maxItems": 3}),
        json!({"maxItems": 2}),
    ] {
        let mut schema = json!({
            "type": "array",
            "items": {"type": "string", "enum": ["red", "green", "blue", 7]},
            "uniqueItems": true
        });
        for (key, value) in bounds.as_object().unwrap() {
            schema[key] = value.clone();
        }
        let schema = Enforced::new(schema);
        let texts = arrays(&["\"red\"", "\"green\"", "\"blue\"", "7"]);
        schema.agrees_on_all(&texts.iter().map(String::as_str).collect::<Vec<_>>());
        schema.samples_validate(30);
    }
}

#[test]
fn booleans_nulls_and_numbers_equal_by_value() {
    for items in [
        json!({"type": "boolean"}),
        json!({"type": ["boolean", "null"]}),
        json!({"enum": [1, 1.0, 2.5, "1"]}),
        json!({"const": "only"}),
    ] {
        let schema = Enforced::new(json!({"type": "array", "items": items, "uniqueItems": true}));
        let texts = arrays(&[
            "true", "false", "null", "1", "1.0", "2.5", "\"1\"", "\"only\"",
        ]);
        schema.agrees_on_all(&texts.iter().map(String::as_str).collect::<Vec<_>>());
        schema.samples_validate(20);
    }
}

#[test]
fn more_distinct_items_than_values_is_unsatisfiable() {
    let schema = json!({
        "type": "array", "items": {"type": "boolean"}, "uniqueItems": true, "minItems": 3
    });
    let result =
        gbnfc_compiler::schema::compile(&schema, &gbnfc_compiler::schema::Options::default());
    assert!(
        matches!(
            result,
            Err(gbnfc_compiler::schema::CompileError::Unsatisfiable { .. })
        ),
        "{result:?}"
    );
}
