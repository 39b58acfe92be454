//! A JSON array `[schema, value]`: the canonical text of the value under the schema never
//! panics and reads back as the same value; and where the schema compiles with every
//! keyword enforced, a canonical text its grammar accepts is one the `jsonschema` crate
//! finds valid (soundness, on values the fuzzer picks rather than the grammar).
#![no_main]

use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::schema::canon::canonical_text;
use gbnfc_compiler::schema::document::Document;
use gbnfc_compiler::schema::{compile, Options};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Array(pair)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let [schema, value] = pair.as_slice() else {
        return;
    };
    let Ok(doc) = Document::from_input(schema, None) else {
        return;
    };
    let text = canonical_text(value, &doc);
    let back: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("canonical text {text} is not JSON: {e}"));
    assert!(
        same(&back, value),
        "{text} reads back as {back}, not {value}"
    );

    let Ok(compiled) = compile(schema, &Options::default()) else {
        return;
    };
    if compiled.needs_validation() || !numbers_are_small_integers(value) {
        return;
    }
    let Ok(recognizer) = Recognizer::new(&compiled.grammar) else {
        panic!(
            "a compiled grammar has no recognizer:\n{}",
            compiled.grammar
        );
    };
    if !recognizer.recognize(&text).accepted {
        return;
    }
    // The draft the schema declares (2020-12 by default), as the bridge validates.
    let Ok(validator) = jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
    else {
        return;
    };
    if let Err(error) = validator.validate(value) {
        panic!("the grammar accepts {text}, which is invalid: {error}\nschema: {schema}");
    }
});

/// Equal as JSON values: numbers by their f64, objects whatever their key order.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Every number is an integer below 2^53: exact however serde_json and jsonschema read it.
fn numbers_are_small_integers(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_i64().is_some_and(|i| i.unsigned_abs() < 1 << 53),
        Value::Array(items) => items.iter().all(numbers_are_small_integers),
        Value::Object(map) => map.values().all(numbers_are_small_integers),
        _ => true,
    }
}
