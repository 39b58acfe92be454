//! `enum` and `const`: the canonical texts of the listed values that the rest of the
//! schema accepts. Each value is checked against the typed keywords of its kind
//! ([`super::ir`]); a value that keywords checked here cannot judge (a `pattern`, a
//! subschema) is kept, and the `enum` is reported as checked after generation.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::canon;
use super::document::Location;
use super::emit::Emitter;
use super::ir::{ArraySchema, NumberSchema, ObjectSchema, StringSchema};
use super::keywords::TRUE;
use super::lookup::Lookup;
use super::{numeric, read, CompileError};
use crate::gbnf::Expr;

/// The expression for the `enum`/`const` values of the schema `map` (at `at`) that fit
/// the allowed `types` and its other keywords.
///
/// # Errors
/// A malformed `enum` or keyword; [`CompileError::Unsatisfiable`] when no value fits.
pub fn literals(
    e: &mut Emitter<'_, '_, '_>,
    map: &Map<String, Value>,
    types: &[&str],
    at: &Location,
) -> Result<Expr, CompileError> {
    let values = read::literals(map, at).map_err(|err| e.shape_error(err))?;
    let checks = Checks::read(map, at, &values).map_err(|err| e.shape_error(err))?;
    let mut texts: Vec<String> = Vec::new();
    let mut unchecked = false;
    for value in values {
        match checks.fit(value, types) {
            Fit::No => continue,
            Fit::Unchecked => unchecked = true,
            Fit::Yes => {}
        }
        let text = canon::canonical_text_of(value, map);
        if !texts.contains(&text) {
            texts.push(text);
        }
    }
    if unchecked {
        e.validation_only(
            at,
            "enum",
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

/// The keywords a schema's literal values are checked against, each kind read only when
/// a value of that kind is listed.
struct Checks<'s> {
    string: Option<StringSchema>,
    number: Option<NumberSchema>,
    array: Option<ArraySchema<'s>>,
    object: Option<ObjectSchema<'s>>,
    /// `not`, which is not checked here.
    not: bool,
}

impl<'s> Checks<'s> {
    /// The keywords of `map` (at `at`) that `values` are checked against.
    fn read(
        map: &'s Map<String, Value>,
        at: &Location,
        values: &[&Value],
    ) -> Result<Self, super::ir::ShapeError> {
        let listed = |kind: fn(&Value) -> bool| values.iter().any(|v| kind(v));
        Ok(Checks {
            string: listed(Value::is_string)
                .then(|| read::string(map, at))
                .transpose()?,
            number: listed(Value::is_number)
                .then(|| read::number(map, at))
                .transpose()?,
            array: listed(Value::is_array)
                .then(|| read::array(map, at))
                .transpose()?,
            object: listed(Value::is_object)
                .then(|| read::object(map, at))
                .transpose()?,
            not: map.has("not"),
        })
    }

    /// Does `value` fit the allowed `types` and these keywords?
    fn fit(&self, value: &Value, types: &[&str]) -> Fit {
        let type_ok = match value {
            Value::Null => types.contains(&"null"),
            Value::Bool(_) => types.contains(&"boolean"),
            Value::Object(_) => types.contains(&"object"),
            Value::Array(_) => types.contains(&"array"),
            Value::String(_) => types.contains(&"string"),
            Value::Number(n) => {
                types.contains(&"number")
                    || (types.contains(&"integer") && numeric::value::is_integral(n) == Some(true))
            }
        };
        if !type_ok {
            return Fit::No;
        }
        let fit = match value {
            Value::String(s) => self.string.as_ref().map_or(Fit::Yes, |k| string_fit(s, k)),
            Value::Number(n) => self.number.as_ref().map_or(Fit::Yes, |k| number_fit(n, k)),
            Value::Array(items) => self
                .array
                .as_ref()
                .map_or(Fit::Yes, |k| array_fit(items, k)),
            Value::Object(members) => self
                .object
                .as_ref()
                .map_or(Fit::Yes, |k| object_fit(members, k)),
            Value::Null | Value::Bool(_) => Fit::Yes,
        };
        match fit {
            Fit::Yes if self.not => Fit::Unchecked,
            fit => fit,
        }
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
        Some(string.min_length),
        string.max_length,
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
            match numeric::value::compare(n, bound) {
                Some(order) if out_of_range(order) => return Fit::No,
                Some(_) => {}
                None => unchecked = true,
            }
        }
    }
    if let Some(step) = &number.multiple_of {
        match numeric::value::is_multiple(n, step) {
            Some(false) => return Fit::No,
            Some(true) => {}
            None => unchecked = true,
        }
    }
    checked_unless(unchecked)
}

fn array_fit(items: &[Value], array: &ArraySchema<'_>) -> Fit {
    if !within(items.len(), Some(array.min_items), array.max_items) {
        return Fit::No;
    }
    let restricts = |schema: &Option<super::ir::Subschema<'_>>| {
        schema.as_ref().is_some_and(|s| s.schema != &TRUE)
    };
    checked_unless(
        !array.prefix.is_empty()
            || restricts(&array.items)
            || restricts(&array.unevaluated)
            || array.contains.is_some()
            || array.unique_items,
    )
}

fn object_fit(members: &Map<String, Value>, object: &ObjectSchema<'_>) -> Fit {
    if !within(members.len(), object.min_properties, object.max_properties)
        || object
            .required
            .iter()
            .any(|name| !members.contains_key(*name))
    {
        return Fit::No;
    }
    let restricts = |schema: &Option<super::ir::Subschema<'_>>| {
        schema.as_ref().is_some_and(|s| s.schema != &TRUE)
    };
    checked_unless(
        !object.properties.is_empty()
            || !object.pattern_properties.is_empty()
            || restricts(&object.additional)
            || restricts(&object.unevaluated)
            || restricts(&object.property_names)
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
        let left = compiled
            .diagnostics
            .iter()
            .any(|d| d.pointer == "/enum" && d.status == KeywordStatus::ValidationOnly);
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
