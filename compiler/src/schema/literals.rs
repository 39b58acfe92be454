//! `enum` and `const`: the canonical texts of the listed values that the rest of the
//! schema accepts. Each value is checked against the typed keywords of its kind
//! ([`super::ir`]); a value that keywords checked here cannot judge (a `pattern`, a
//! subschema) is kept, and the `enum` is reported as checked after generation.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::canon;
use super::document::Location;
use super::emit::Emitter;
use super::ir::{
    count, ArraySchema, JsonType, Literals, NumberSchema, ObjectSchema, PlainSchema, StringSchema,
    Subschema, Types,
};
use super::{numeric, CompileError};
use crate::gbnf::Expr;

/// The expression for the `listed` values, the `enum`/`const` of `plain` (at `at`), that
/// fit the allowed `types` and its other keywords.
///
/// # Errors
/// [`CompileError::Unsatisfiable`] when no value fits.
pub fn literals(
    e: &mut Emitter<'_, '_, '_>,
    plain: &PlainSchema<'_>,
    listed: &Literals<'_>,
    types: Types,
    at: &Location,
) -> Result<Expr, CompileError> {
    // Objects list the declared properties first, in the order declared.
    let order = plain.object.key_order();
    let mut texts: Vec<String> = Vec::new();
    let mut unchecked = false;
    for value in &listed.values {
        match fit(value, plain, types) {
            Fit::No => continue,
            Fit::Unchecked => unchecked = true,
            Fit::Yes => {}
        }
        let text = canon::canonical_text_in_order(value, &order);
        if !texts.contains(&text) {
            texts.push(text);
        }
    }
    if unchecked {
        e.validation_only_at(
            &listed.keyword.at,
            listed.keyword.value,
            "some values are not checked against the other keywords",
        )?;
    }
    if texts.is_empty() {
        return Err(e.unsatisfiable(at, "no `enum`/`const` value satisfies the schema"));
    }
    Ok(Expr::alt(texts.into_iter().map(Expr::literal)))
}

/// Whether a literal value fits the rest of its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// It satisfies every keyword.
    Yes,
    /// It violates one.
    No,
    /// It satisfies those checked, but some keyword (a pattern, a format, a subschema)
    /// was not checked.
    Unchecked,
}

/// Does `value` fit the allowed `types` and the keywords of `plain`?
fn fit(value: &Value, plain: &PlainSchema<'_>, types: Types) -> Fit {
    let fit = match value {
        Value::Null => types.admits(JsonType::Null).then_some(Fit::Yes),
        Value::Bool(_) => types.admits(JsonType::Boolean).then_some(Fit::Yes),
        Value::String(s) => types
            .admits(JsonType::String)
            .then(|| string_fit(s, &plain.string)),
        Value::Number(n) => {
            let integral = numeric::value::is_integral(n) == Some(true);
            (types.admits(JsonType::Number) || (integral && types.admits(JsonType::Integer)))
                .then(|| number_fit(n, &plain.number))
        }
        Value::Array(items) => types
            .admits(JsonType::Array)
            .then(|| array_fit(items, &plain.array)),
        Value::Object(members) => types
            .admits(JsonType::Object)
            .then(|| object_fit(members, &plain.object)),
    };
    match fit {
        None => Fit::No,
        Some(Fit::Yes) if !plain.not.is_empty() => Fit::Unchecked,
        Some(fit) => fit,
    }
}

/// `Unchecked` when `unchecked`, else `Yes`.
fn checked_unless(unchecked: bool) -> Fit {
    if unchecked {
        Fit::Unchecked
    } else {
        Fit::Yes
    }
}

/// Whether `count` is within `min` (absent: 0) and `max`.
fn within(count: usize, min: Option<u64>, max: Option<u64>) -> bool {
    let count = count as u64;
    min.is_none_or(|min| count >= min) && max.is_none_or(|max| count <= max)
}

fn string_fit(s: &str, string: &StringSchema) -> Fit {
    if !within(
        s.chars().count(),
        count(&string.min_length),
        count(&string.max_length),
    ) {
        return Fit::No;
    }
    checked_unless(string.pattern.is_some() || string.format.is_some())
}

fn number_fit(n: &serde_json::Number, number: &NumberSchema) -> Fit {
    let bounds = [
        (&number.minimum, Ordering::is_lt as fn(Ordering) -> bool),
        (&number.maximum, Ordering::is_gt),
        (&number.exclusive_minimum, Ordering::is_le),
        (&number.exclusive_maximum, Ordering::is_ge),
    ];
    let mut unchecked = false;
    for (bound, out_of_range) in bounds {
        if let Some(bound) = bound {
            match numeric::value::compare(n, &bound.value) {
                Some(order) if out_of_range(order) => return Fit::No,
                Some(_) => {}
                None => unchecked = true,
            }
        }
    }
    if let Some(step) = &number.multiple_of {
        match numeric::value::is_multiple(n, &step.value) {
            Some(false) => return Fit::No,
            Some(true) => {}
            None => unchecked = true,
        }
    }
    checked_unless(unchecked)
}

/// Whether a keyword holding a schema is written and restricts anything.
fn restricting(schema: &Option<Subschema<'_>>) -> bool {
    schema.as_ref().is_some_and(Subschema::restricts)
}

fn array_fit(items: &[Value], array: &ArraySchema<'_>) -> Fit {
    if !within(
        items.len(),
        count(&array.min_items),
        count(&array.max_items),
    ) {
        return Fit::No;
    }
    checked_unless(
        !array.prefix.is_empty()
            || restricting(&array.items)
            || restricting(&array.unevaluated)
            || array.contains.is_some()
            || array.unique_items.is_some(),
    )
}

fn object_fit(members: &Map<String, Value>, object: &ObjectSchema<'_>) -> Fit {
    if !within(
        members.len(),
        count(&object.min_properties),
        count(&object.max_properties),
    ) || object
        .required
        .iter()
        .any(|name| !members.contains_key(name.value))
    {
        return Fit::No;
    }
    checked_unless(
        !object.properties.is_empty()
            || !object.pattern_properties.is_empty()
            || restricting(&object.additional)
            || restricting(&object.unevaluated)
            || restricting(&object.property_names)
            || !object.dependencies.is_empty(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::{json, Value};

    use crate::recognize::Recognizer;
    use crate::schema::{compile, CompileError, KeywordStatus, Options};

    /// The texts the grammar of `schema` accepts among `texts`, and whether the compiler
    /// left `enum` to validation.
    fn accepted(schema: &Value, texts: &[&str]) -> (Vec<String>, bool) {
        let compiled = compile(schema, &Options::default()).unwrap();
        let recognizer = Recognizer::new(&compiled.grammar).unwrap();
        let accepted = texts
            .iter()
            .filter(|text| recognizer.recognize(text).accepted)
            .map(|text| text.to_string())
            .collect();
        // The keyword named is the one that lists the values: `enum`, or a lone `const`.
        let listing = if schema.get("enum").is_some() {
            "/enum"
        } else {
            "/const"
        };
        let left = compiled
            .diagnostics
            .iter()
            .any(|d| d.pointer == listing && d.status == KeywordStatus::ValidationOnly);
        (accepted, left)
    }

    #[test]
    fn draft4_exclusive_bounds_exclude_their_value() {
        let draft4 = "http://json-schema.org/draft-04/schema#";
        let low =
            json!({"$schema": draft4, "enum": [1, 2], "minimum": 1, "exclusiveMinimum": true});
        assert_eq!(accepted(&low, &["1", "2"]), (vec!["2".into()], false));
        let high = json!({"$schema": draft4, "const": 2, "maximum": 2, "exclusiveMaximum": true});
        assert!(matches!(
            compile(&high, &Options::default()),
            Err(CompileError::Unsatisfiable { .. })
        ));
    }

    #[test]
    fn keywords_not_checked_here_leave_the_enum_to_validation() {
        for schema in [
            json!({"enum": [[1]], "unevaluatedItems": false}),
            json!({"enum": [[1]], "items": {"type": "string"}}),
            json!({"enum": [[1, 1]], "uniqueItems": true}),
            json!({"enum": [{"a": 1}], "unevaluatedProperties": false}),
            json!({"enum": [{"a": 1}], "dependentRequired": {"a": ["b"]}}),
            json!({"const": {"a": 1}, "dependencies": {"a": {"required": ["b"]}}}),
            json!({"enum": [{"a": 1}], "propertyNames": {"maxLength": 0}}),
            json!({"enum": ["a"], "pattern": "^b"}),
            json!({"enum": [1], "not": {"const": 1}}),
        ] {
            let (_, left) = accepted(&schema, &[]);
            assert!(left, "{schema}");
        }
    }

    #[test]
    fn keywords_checked_here_decide_exactly() {
        let schema = json!({
            "enum": [{"a": 1}, {"b": 2}, [], [1, 2, 3], "ab", "abcd", 3, 4.5],
            "required": ["a"], "additionalProperties": true, "maxItems": 2,
            "uniqueItems": false, "maxLength": 3, "multipleOf": 1.5
        });
        let texts = [
            r#"{"a":1}"#,
            r#"{"b":2}"#,
            "[]",
            "[1,2,3]",
            r#""ab""#,
            r#""abcd""#,
            "3",
            "4.5",
        ];
        assert_eq!(
            accepted(&schema, &texts),
            (
                vec![
                    r#"{"a":1}"#.into(),
                    "[]".into(),
                    r#""ab""#.into(),
                    "3".into(),
                    "4.5".into()
                ],
                false
            )
        );
    }

    #[test]
    fn malformed_keywords_beside_an_enum_are_errors() {
        let err = compile(
            &json!({"enum": ["a"], "minLength": -1}),
            &Options::default(),
        )
        .unwrap_err();
        assert!(
            matches!(&err, CompileError::Invalid { pointer, .. } if pointer == "/minLength"),
            "{err:?}"
        );
    }
}
