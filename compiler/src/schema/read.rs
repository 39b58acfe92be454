//! JSON → typed schema ([`super::ir`]): each keyword's value checked for its shape once,
//! so that lowering works on meanings and not on JSON.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::document::Location;
use super::ir::{NumberSchema, ShapeError, StringSchema};
use super::lookup::Lookup;
use super::numeric;

/// The shape error for the value of `key` in the schema at `at`.
fn shape(at: &Location, key: &str, message: String) -> ShapeError {
    ShapeError {
        at: at.child(key),
        message,
    }
}

/// A count keyword (`minLength`, `maxItems`, …): a non-negative integer by value
/// (`2.0` too), saturated at `u64::MAX`, since nothing has 2^64 members.
///
/// # Errors
/// Anything else.
pub fn count(
    map: &Map<String, Value>,
    key: &str,
    at: &Location,
) -> Result<Option<u64>, ShapeError> {
    let Some(value) = map.kw(key) else {
        return Ok(None);
    };
    match value.as_number().and_then(numeric::value::count) {
        Some(n) => Ok(Some(n)),
        None => Err(shape(
            at,
            key,
            format!("`{key}` must be a non-negative integer"),
        )),
    }
}

/// The string keywords of the schema at `at`.
///
/// # Errors
/// A length that is not a count; a `pattern` that is not a string.
pub fn string(map: &Map<String, Value>, at: &Location) -> Result<StringSchema, ShapeError> {
    let min_length = count(map, "minLength", at)?.unwrap_or(0);
    let max_length = count(map, "maxLength", at)?;
    let pattern = match map.kw("pattern") {
        None => None,
        Some(Value::String(pattern)) => Some(pattern.clone()),
        Some(_) => {
            return Err(shape(at, "pattern", "`pattern` must be a string".into()));
        }
    };
    let format = map.kw("format").and_then(Value::as_str).map(str::to_string);
    Ok(StringSchema {
        min_length,
        max_length,
        pattern,
        format,
    })
}

/// The number keywords of the schema at `at`, draft-04's boolean `exclusiveMinimum` and
/// `exclusiveMaximum` folded into the exclusive bounds.
///
/// # Errors
/// A bound that is not a number; a `multipleOf` that is not a number above 0.
pub fn number(map: &Map<String, Value>, at: &Location) -> Result<NumberSchema, ShapeError> {
    let bound = |key: &str| match map.kw(key) {
        None | Some(Value::Bool(_)) => Ok(None),
        Some(Value::Number(n)) => Ok(Some(n.clone())),
        Some(_) => Err(shape(at, key, format!("`{key}` must be a number"))),
    };
    let (mut minimum, mut maximum) = (bound("minimum")?, bound("maximum")?);
    let (mut exclusive_minimum, mut exclusive_maximum) =
        (bound("exclusiveMinimum")?, bound("exclusiveMaximum")?);
    if map.kw("exclusiveMinimum") == Some(&Value::Bool(true)) {
        exclusive_minimum = minimum.take();
    }
    if map.kw("exclusiveMaximum") == Some(&Value::Bool(true)) {
        exclusive_maximum = maximum.take();
    }
    let multiple_of = match map.kw("multipleOf") {
        None => None,
        Some(Value::Number(step)) if numeric::value::sign(step) == Some(Ordering::Greater) => {
            Some(step.clone())
        }
        Some(_) => {
            return Err(shape(
                at,
                "multipleOf",
                "`multipleOf` must be a number above 0".into(),
            ))
        }
    };
    Ok(NumberSchema {
        minimum,
        exclusive_minimum,
        maximum,
        exclusive_maximum,
        multiple_of,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::{json, Number};

    use super::*;

    fn at() -> Location {
        Location {
            doc: 0,
            pointer: "/properties/x".into(),
        }
    }

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn counts_are_integers_by_value_and_saturate() {
        let m = map(json!({"a": 2.0, "b": 1e30, "c": -1, "d": 1.5, "e": "3"}));
        assert_eq!(count(&m, "a", &at()), Ok(Some(2)));
        assert_eq!(count(&m, "b", &at()), Ok(Some(u64::MAX)));
        assert_eq!(count(&m, "absent", &at()), Ok(None));
        for key in ["c", "d", "e"] {
            let err = count(&m, key, &at()).unwrap_err();
            assert_eq!(err.at.pointer, format!("/properties/x/{key}"));
            assert!(err.message.contains("non-negative integer"), "{err:?}");
        }
    }

    #[test]
    fn strings_read_every_keyword() {
        let m = map(json!({"minLength": 1, "maxLength": 3, "pattern": "^a", "format": "date"}));
        assert_eq!(
            string(&m, &at()),
            Ok(StringSchema {
                min_length: 1,
                max_length: Some(3),
                pattern: Some("^a".into()),
                format: Some("date".into()),
            })
        );
        let err = string(&map(json!({"pattern": 3})), &at()).unwrap_err();
        assert_eq!(err.at.pointer, "/properties/x/pattern");
    }

    #[test]
    fn draft4_boolean_exclusives_move_the_bound() {
        let m = map(
            json!({"minimum": 1, "exclusiveMinimum": true, "maximum": 9, "exclusiveMaximum": false}),
        );
        let n = number(&m, &at()).unwrap();
        assert_eq!(n.minimum, None);
        assert_eq!(n.exclusive_minimum, Some(Number::from(1)));
        assert_eq!(n.maximum, Some(Number::from(9)));
        assert_eq!(n.exclusive_maximum, None);
        assert!(n.bounded());
    }

    #[test]
    fn numbers_keep_their_written_text() {
        let m: Map<String, Value> = serde_json::from_str(
            r#"{"minimum": 123456789012345678901234567890, "multipleOf": 0.01}"#,
        )
        .unwrap();
        let n = number(&m, &at()).unwrap();
        assert_eq!(
            n.minimum.unwrap().to_string(),
            "123456789012345678901234567890"
        );
        assert_eq!(n.multiple_of.unwrap().to_string(), "0.01");
    }

    #[test]
    fn bad_number_keywords_name_their_place() {
        for (schema, key) in [
            (json!({"minimum": "1"}), "minimum"),
            (json!({"multipleOf": 0}), "multipleOf"),
            (json!({"multipleOf": -2}), "multipleOf"),
        ] {
            let err = number(&map(schema), &at()).unwrap_err();
            assert_eq!(err.at.pointer, format!("/properties/x/{key}"));
        }
    }
}
