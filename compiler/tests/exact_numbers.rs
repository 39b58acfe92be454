//! Schema numbers are read exactly from their JSON text, on every path that decides what
//! the grammar accepts: bounds past the 64-bit integers and past `f64`'s 17 digits, merges
//! of bounds that differ only beyond `f64`'s precision, `enum`/`const` members checked
//! against bounds and steps, counts written as `2.0` or `1e400`, steps below `f64`'s range.
//! Each case once went through `f64` and was enforced wrongly while reported enforced.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::schema::{compile, CompileError, Compiled, KeywordStatus, Options};

fn compiled(schema: &str) -> Compiled {
    let value: serde_json::Value = serde_json::from_str(schema).unwrap();
    compile(&value, &Options::default()).unwrap_or_else(|e| panic!("{schema}: {e}"))
}

/// The schema compiles with every keyword enforced, its grammar accepts each of `valid`
/// and rejects each of `invalid`.
fn exactly(schema: &str, valid: &[&str], invalid: &[&str]) {
    let compiled = compiled(schema);
    let loose: Vec<_> = compiled
        .diagnostics
        .iter()
        .filter(|d| d.status == KeywordStatus::ValidationOnly)
        .collect();
    assert!(loose.is_empty(), "{schema}: {loose:?}");
    let recognizer = Recognizer::new(&compiled.grammar).unwrap();
    for text in valid {
        assert!(
            recognizer.recognize(text).accepted,
            "{schema} must accept {text}\n{}",
            compiled.grammar
        );
    }
    for text in invalid {
        assert!(
            !recognizer.recognize(text).accepted,
            "{schema} must reject {text}\n{}",
            compiled.grammar
        );
    }
}

#[test]
fn integer_bounds_beyond_64_bits() {
    exactly(
        r#"{"type": "integer", "maximum": 18446744073709551616}"#,
        &["18446744073709551616", "0", "-5"],
        &["18446744073709551617", "18446744073709552000"],
    );
    exactly(
        r#"{"type": "integer", "minimum": 123456789012345678901234567890}"#,
        &[
            "123456789012345678901234567890",
            "123456789012345678901234567891",
            "123456789012345680000000000000",
        ],
        &["123456789012345678901234567889", "-1"],
    );
    exactly(
        r#"{"type": "integer", "exclusiveMinimum": -9223372036854775810}"#,
        &["-9223372036854775809", "0"],
        &["-9223372036854775810", "-9223372036854775811"],
    );
}

#[test]
fn number_bounds_beyond_f64() {
    exactly(
        r#"{"type": "number", "exclusiveMaximum": 1e400, "minimum": 0}"#,
        &["1e399", "9.99e399", "0"],
        &["1e400", "2e400", "1E+400"],
    );
    exactly(
        r#"{"type": "number", "minimum": 1e-400, "maximum": 1}"#,
        &["1e-400", "0.5", "1"],
        &["0", "9e-401"],
    );
    exactly(
        r#"{"type": "number", "minimum": 0.10000000000000000001}"#,
        &["0.10000000000000000001", "0.2"],
        &["0.1", "0.1000000000000000000099"],
    );
}

#[test]
fn merged_bounds_that_differ_beyond_f64() {
    for (a, b) in [
        ("0.1", "0.10000000000000001"),
        ("0.10000000000000001", "0.1"),
    ] {
        exactly(
            &format!(r#"{{"allOf": [{{"type": "number", "minimum": {a}}}, {{"minimum": {b}}}]}}"#),
            &["0.10000000000000001", "0.5"],
            &["0.1", "0.09"],
        );
    }
    for (a, b) in [
        ("9007199254740992", "9007199254740993"),
        ("9007199254740993", "9007199254740992"),
    ] {
        exactly(
            &format!(r#"{{"allOf": [{{"type": "integer", "maximum": {a}}}, {{"maximum": {b}}}]}}"#),
            &["9007199254740992", "-1"],
            &["9007199254740993"],
        );
    }
    for (a, b) in [
        ("0.30000000000000004", "0.30000000000000005"),
        ("0.30000000000000005", "0.30000000000000004"),
    ] {
        exactly(
            &format!(
                r#"{{"allOf": [{{"type": "number", "exclusiveMinimum": {a}}}, {{"exclusiveMinimum": {b}}}]}}"#
            ),
            &["0.30000000000000006", "1"],
            &["0.30000000000000005", "0.30000000000000004"],
        );
    }
}

#[test]
fn constants_are_checked_exactly_against_bounds_and_steps() {
    exactly(
        r#"{"enum": [9007199254740993, 9007199254740994], "multipleOf": 2}"#,
        &["9007199254740994"],
        &["9007199254740993"],
    );
    exactly(
        r#"{"enum": [9007199254740992, 9007199254740993], "maximum": 9007199254740992}"#,
        &["9007199254740992"],
        &["9007199254740993"],
    );
    exactly(
        r#"{"enum": [0.30000000000000001, 0.7], "multipleOf": 0.1}"#,
        &["0.7"],
        &["0.30000000000000001", "0.3"],
    );
    let value = serde_json::json!({"const": 9007199254740993u64, "maximum": 9007199254740992u64});
    match compile(&value, &Options::default()) {
        Err(CompileError::Unsatisfiable { .. }) => {}
        Ok(c) => {
            let recognizer = Recognizer::new(&c.grammar).unwrap();
            assert!(
                !recognizer.recognize("9007199254740993").accepted,
                "{}",
                c.grammar
            );
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn constants_are_written_in_canonical_text() {
    exactly(
        r#"{"enum": [1.0, 2.50, 1E2, -0.0, 18446744073709551616.0]}"#,
        &["1", "2.5", "100", "0", "18446744073709551616"],
        &["1.0", "2.50", "1E2", "-0.0"],
    );
}

#[test]
fn counts_are_read_exactly() {
    exactly(
        r#"{"type": "string", "minLength": 2.0, "maxLength": 3e0}"#,
        &[r#""ab""#, r#""abc""#],
        &[r#""a""#, r#""abcd""#],
    );
    // Counts past u64 saturate (no array is longer); too large to bound in a grammar, they
    // are refused where they are written, as u64::MAX is.
    for (schema, pointer) in [
        (r#"{"type": "array", "maxItems": 1e400}"#, "/maxItems"),
        (
            r#"{"type": "array", "minItems": 18446744073709551616}"#,
            "/minItems",
        ),
    ] {
        let value: serde_json::Value = serde_json::from_str(schema).unwrap();
        let error = compile(&value, &Options::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains(pointer), "{error}");
    }
}

#[test]
fn steps_below_f64s_range_are_positive() {
    // `1e-400` reads as 0.0 through f64, which refused it as "not above 0".
    let compiled = compiled(r#"{"type": "number", "multipleOf": 1e-400}"#);
    let recognizer = Recognizer::new(&compiled.grammar).unwrap();
    assert!(recognizer.recognize("0.5").accepted);
    exactly(
        r#"{"type": "integer", "multipleOf": 1e-400}"#,
        &["0", "7", "-12"],
        &["0.5"],
    );
}
