//! JSON → typed schema ([`super::ir`]): each keyword's value checked for its shape once,
//! so that lowering works on meanings and not on JSON.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::document::Location;
use super::ir::{
    ArraySchema, Demands, Dependency, JsonType, Keyed, Literals, NumberSchema, ObjectSchema,
    PlainSchema, ShapeError, StringSchema, Subschema, Types, Written,
};
use super::keywords::{self, TYPES};
use super::numeric;
use super::numeric::value::json_equal;

/// The shape error for the value of `key` in the schema at `at`.
fn shape(at: &Location, key: &str, message: String) -> ShapeError {
    ShapeError {
        at: at.child(key),
        message,
    }
}

/// `value`, written under `key` in the schema at `at`.
fn written<T>(value: T, at: &Location, key: &str) -> Written<T> {
    Written {
        value,
        at: at.child(key),
    }
}

/// The schema `key` holds in the schema at `at`, if it is written.
fn subschema<'s>(map: &'s Map<String, Value>, key: &str, at: &Location) -> Option<Subschema<'s>> {
    map.get(key)
        .map(|schema| Subschema::written(schema, at.child(key)))
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
) -> Result<Option<Written<u64>>, ShapeError> {
    let Some(value) = map.get(key) else {
        return Ok(None);
    };
    match value.as_number().and_then(numeric::value::count) {
        Some(value) => Ok(Some(Written {
            value,
            at: at.child(key),
        })),
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
    let min_length = count(map, "minLength", at)?;
    let max_length = count(map, "maxLength", at)?;
    let pattern = match map.get("pattern") {
        None => None,
        Some(Value::String(pattern)) => Some(written(pattern.clone(), at, "pattern")),
        Some(_) => {
            return Err(shape(at, "pattern", "`pattern` must be a string".into()));
        }
    };
    let format = map
        .get("format")
        .and_then(Value::as_str)
        .map(|format| written(format.to_string(), at, "format"));
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
    let bound = |key: &str| match map.get(key) {
        None | Some(Value::Bool(_)) => Ok(None),
        Some(Value::Number(n)) => Ok(Some(written(n.clone(), at, key))),
        Some(_) => Err(shape(at, key, format!("`{key}` must be a number"))),
    };
    let (mut minimum, mut maximum) = (bound("minimum")?, bound("maximum")?);
    let (mut exclusive_minimum, mut exclusive_maximum) =
        (bound("exclusiveMinimum")?, bound("exclusiveMaximum")?);
    if map.get("exclusiveMinimum") == Some(&Value::Bool(true)) {
        exclusive_minimum = minimum.take();
    }
    if map.get("exclusiveMaximum") == Some(&Value::Bool(true)) {
        exclusive_maximum = maximum.take();
    }
    let multiple_of = match map.get("multipleOf") {
        None => None,
        Some(Value::Number(step)) if numeric::value::sign(step) == Some(Ordering::Greater) => {
            Some(written(step.clone(), at, "multipleOf"))
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

/// The array keywords of the schema at `at`: draft-07's array-form `items` is the
/// positional schemas, and `additionalItems` beside it the schema of the items after them.
///
/// # Errors
/// A `prefixItems` that is not an array; a count that is not a count.
pub fn array<'s>(
    map: &'s Map<String, Value>,
    at: &Location,
) -> Result<ArraySchema<'s>, ShapeError> {
    let sub = |key: &str| subschema(map, key, at);
    let (prefix_key, prefix, items): (_, &[Value], _) =
        match (map.get("prefixItems"), map.get("items")) {
            (Some(Value::Array(prefix)), _) => ("prefixItems", prefix, sub("items")),
            (Some(_), _) => {
                return Err(shape(
                    at,
                    "prefixItems",
                    "`prefixItems` must be an array of schemas".into(),
                ))
            }
            (None, Some(Value::Array(prefix))) => ("items", prefix, sub("additionalItems")),
            (None, _) => ("prefixItems", &[], sub("items")),
        };
    let prefix_at = at.child(prefix_key);
    let prefix = prefix
        .iter()
        .enumerate()
        .map(|(i, schema)| Subschema::written(schema, prefix_at.index(i)))
        .collect();
    Ok(ArraySchema {
        prefix,
        prefix_at,
        items,
        unevaluated: sub("unevaluatedItems"),
        min_items: count(map, "minItems", at)?,
        max_items: count(map, "maxItems", at)?,
        unique_items: map
            .get("uniqueItems")
            .filter(|v| *v != &Value::Bool(false))
            .map(|_| at.child("uniqueItems")),
        contains: sub("contains"),
    })
}

/// The object keywords of the schema at `at`.
///
/// # Errors
/// A `properties` or `patternProperties` that is not an object; a `required` that is not
/// an array; a count that is not a count.
pub fn object<'s>(
    map: &'s Map<String, Value>,
    at: &Location,
) -> Result<ObjectSchema<'s>, ShapeError> {
    let sub = |key: &str| subschema(map, key, at);
    let keyed = |key: &str| match map.get(key) {
        None => Ok(Keyed::new(None, at.child(key))),
        Some(Value::Object(schemas)) => Ok(Keyed::new(Some(schemas), at.child(key))),
        Some(_) => Err(shape(at, key, format!("`{key}` must be an object"))),
    };
    let properties = keyed("properties")?;
    let required = match map.get("required") {
        None => Vec::new(),
        Some(Value::Array(names)) => {
            let names = names.iter().filter_map(Value::as_str);
            names.map(|name| written(name, at, "required")).collect()
        }
        Some(_) => {
            return Err(shape(
                at,
                "required",
                "`required` must be an array of names".into(),
            ))
        }
    };
    let dependencies = ["dependentRequired", "dependentSchemas", "dependencies"]
        .into_iter()
        .filter_map(|keyword| {
            let entries = map.get(keyword)?;
            let demands = Demands {
                keyword,
                entries: dependency_entries(entries),
            };
            Some(written(demands, at, keyword))
        })
        .collect();
    let dependent_schemas = map.contains_key("dependentSchemas")
        || map
            .get("dependencies")
            .and_then(Value::as_object)
            .is_some_and(|d| d.values().any(Value::is_object));
    Ok(ObjectSchema {
        properties,
        required,
        additional: sub("additionalProperties"),
        unevaluated: sub("unevaluatedProperties"),
        pattern_properties: keyed("patternProperties")?,
        property_names: sub("propertyNames"),
        min_properties: count(map, "minProperties", at)?,
        max_properties: count(map, "maxProperties", at)?,
        dependencies,
        dependent_schemas,
    })
}

/// A dependency keyword's entries as [`Dependency`]s: each an array of names, or a schema
/// of `required` names and of `not: {"required": [one name]}` beside annotations. `None`
/// when some entry is anything else.
fn dependency_entries(entries: &Value) -> Option<Vec<Dependency<'_>>> {
    const ANNOTATIONS: [&str; 5] = ["title", "description", "$comment", "examples", "default"];
    fn names(value: &Value) -> Option<Vec<&str>> {
        value.as_array()?.iter().map(Value::as_str).collect()
    }
    let mut out = Vec::new();
    for (key, entry) in entries.as_object()? {
        let mut dependency = Dependency {
            key,
            present: Vec::new(),
            absent: Vec::new(),
        };
        match entry {
            Value::Array(_) => dependency.present = names(entry)?,
            Value::Object(schema) => {
                for (keyword, value) in schema {
                    match keyword.as_str() {
                        "required" => dependency.present = names(value)?,
                        "not" => {
                            let not = value.as_object()?;
                            let [name] = names(not.get("required")?)?[..] else {
                                return None;
                            };
                            if not
                                .keys()
                                .any(|k| k != "required" && !ANNOTATIONS.contains(&k.as_str()))
                            {
                                return None;
                            }
                            dependency.absent.push(name);
                        }
                        annotation if ANNOTATIONS.contains(&annotation) => {}
                        _ => return None,
                    }
                }
            }
            Value::Bool(true) => {}
            _ => return None,
        }
        out.push(dependency);
    }
    Some(out)
}

/// The values `enum` and `const` allow, as written: `enum`'s, or those of them equal to
/// `const` when both are written; empty when neither is.
///
/// # Errors
/// An `enum` that is not an array.
pub fn literals<'s>(
    map: &'s Map<String, Value>,
    at: &Location,
) -> Result<Vec<&'s Value>, ShapeError> {
    let mut values: Vec<&Value> = match map.get("enum") {
        None => Vec::new(),
        Some(Value::Array(values)) => values.iter().collect(),
        Some(_) => return Err(shape(at, "enum", "`enum` must be an array".into())),
    };
    if let Some(only) = map.get("const") {
        if map.contains_key("enum") {
            values.retain(|v| json_equal(v, only));
        } else {
            values.push(only);
        }
    }
    Ok(values)
}

/// `type`: every type when it is absent.
///
/// # Errors
/// A `type` that is not a type name or an array of them (with a hint for a misspelt name).
pub fn types(map: &Map<String, Value>, at: &Location) -> Result<Types, ShapeError> {
    let named: &[Value] = match map.get("type") {
        None => return Ok(Types::all()),
        Some(one @ Value::String(_)) => std::slice::from_ref(one),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(shape(
                at,
                "type",
                "`type` must be a string or an array of strings".into(),
            ))
        }
    };
    if !named.iter().all(Value::is_string) {
        return Err(shape(at, "type", "`type` entries must be strings".into()));
    }
    let mut types = Vec::with_capacity(named.len());
    for name in named.iter().filter_map(Value::as_str) {
        let Some(t) = JsonType::named(name) else {
            let hint = keywords::suggest(name, TYPES)
                .map(|s| format!("; did you mean \"{s}\"?"))
                .unwrap_or_default();
            return Err(shape(
                at,
                "type",
                format!(
                    "unknown type \"{name}\" (the types are {}){hint}",
                    TYPES.join(", ")
                ),
            ));
        };
        types.push(t);
    }
    Ok(Types::of(types))
}

/// Everything a schema object without combinators says, at `at`.
///
/// # Errors
/// Any keyword of the wrong shape, whichever type it constrains.
pub fn plain<'s>(
    map: &'s Map<String, Value>,
    at: &Location,
) -> Result<PlainSchema<'s>, ShapeError> {
    let if_at = map.contains_key("if").then(|| at.child("if"));
    Ok(PlainSchema {
        types: types(map, at)?,
        literals: ["enum", "const"]
            .into_iter()
            .find(|key| map.contains_key(*key))
            .map(|key| {
                Ok::<_, ShapeError>(Literals {
                    values: literals(map, at)?,
                    keyword: written(key, at, key),
                })
            })
            .transpose()?,
        not: map
            .get("not")
            .map(|not| written(not, at, "not"))
            .into_iter()
            .collect(),
        conditional: if_at.is_some() && (map.contains_key("then") || map.contains_key("else")),
        if_at,
        string: string(map, at)?,
        number: number(map, at)?,
        array: array(map, at)?,
        object: object(map, at)?,
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

    /// `value`, written under `key` at [`at`].
    fn w<T>(value: T, key: &str) -> Option<Written<T>> {
        Some(written(value, &at(), key))
    }

    #[test]
    fn counts_are_integers_by_value_and_saturate() {
        let m = map(json!({"a": 2.0, "b": 1e30, "c": -1, "d": 1.5, "e": "3"}));
        assert_eq!(count(&m, "a", &at()), Ok(w(2, "a")));
        assert_eq!(count(&m, "b", &at()), Ok(w(u64::MAX, "b")));
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
                min_length: w(1, "minLength"),
                max_length: w(3, "maxLength"),
                pattern: w("^a".into(), "pattern"),
                format: w("date".into(), "format"),
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
        assert_eq!(n.exclusive_minimum, w(Number::from(1), "minimum"));
        assert_eq!(n.maximum, w(Number::from(9), "maximum"));
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
            n.minimum.unwrap().value.to_string(),
            "123456789012345678901234567890"
        );
        assert_eq!(n.multiple_of.unwrap().value.to_string(), "0.01");
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

    #[test]
    fn draft7_array_items_are_the_positional_schemas() {
        let m =
            map(json!({"items": [{"type": "string"}], "additionalItems": false, "minItems": 1}));
        let a = array(&m, &at()).unwrap();
        assert_eq!(a.prefix.len(), 1);
        assert_eq!(a.prefix[0].place().pointer, "/properties/x/items/0");
        assert_eq!(a.prefix_at.pointer, "/properties/x/items");
        let items = a.items.unwrap();
        assert_eq!(items.members()[0].value, &json!(false));
        assert_eq!(items.place().pointer, "/properties/x/additionalItems");
        assert_eq!((a.min_items, a.max_items), (w(1, "minItems"), None));
    }

    #[test]
    fn arrays_read_every_keyword() {
        let m = map(json!({
            "prefixItems": [{}, true], "items": {"type": "integer"}, "unevaluatedItems": false,
            "maxItems": 4, "uniqueItems": true, "contains": {"const": 1}
        }));
        let a = array(&m, &at()).unwrap();
        assert_eq!(a.prefix[1].place().pointer, "/properties/x/prefixItems/1");
        assert_eq!(a.items.unwrap().place().pointer, "/properties/x/items");
        assert_eq!(a.unevaluated.unwrap().members()[0].value, &json!(false));
        assert_eq!(a.max_items, w(4, "maxItems"));
        assert_eq!(a.unique_items, Some(at().child("uniqueItems")));
        assert_eq!(
            a.contains.unwrap().place().pointer,
            "/properties/x/contains"
        );
        let not_unique = map(json!({"uniqueItems": false}));
        assert_eq!(array(&not_unique, &at()).unwrap().unique_items, None);
        // Without positional schemas, `items` is every item's schema.
        let plain = map(json!({"items": {"type": "string"}}));
        let a = array(&plain, &at()).unwrap();
        assert!(a.prefix.is_empty());
        assert_eq!(a.items.unwrap().place().pointer, "/properties/x/items");
    }

    #[test]
    fn bad_array_keywords_name_their_place() {
        for (schema, key) in [
            (json!({"prefixItems": {}}), "prefixItems"),
            (json!({"minItems": -1}), "minItems"),
            (json!({"maxItems": 1.5}), "maxItems"),
        ] {
            let err = array(&map(schema), &at()).unwrap_err();
            assert_eq!(err.at.pointer, format!("/properties/x/{key}"));
        }
    }

    #[test]
    fn objects_read_every_keyword() {
        let m = map(json!({
            "properties": {"b": {"type": "null"}, "a": true}, "required": ["a", 3, "c"],
            "additionalProperties": false, "unevaluatedProperties": {"type": "string"},
            "patternProperties": {"^x": {}}, "propertyNames": {"maxLength": 3},
            "minProperties": 1, "maxProperties": 5, "dependentRequired": {"a": ["b"]}
        }));
        let o = object(&m, &at()).unwrap();
        let properties: Vec<(&str, String)> = o
            .properties
            .iter()
            .map(|(name, sub)| (name, sub.place().pointer.clone()))
            .collect();
        assert_eq!(
            properties,
            [
                ("b", "/properties/x/properties/b".to_string()),
                ("a", "/properties/x/properties/a".to_string())
            ]
        );
        assert!(o.properties.declares("a") && !o.properties.declares("c"));
        let required: Vec<&str> = o.required.iter().map(|r| r.value).collect();
        assert_eq!(required, ["a", "c"]);
        assert_eq!(o.required[1].at, at().child("required"));
        assert_eq!(o.additional.unwrap().members()[0].value, &json!(false));
        assert_eq!(
            o.unevaluated.unwrap().place().pointer,
            "/properties/x/unevaluatedProperties"
        );
        let (pattern, schema) = o.pattern_properties.iter().next().unwrap();
        assert_eq!(
            (pattern, schema.place().pointer.as_str()),
            ("^x", "/properties/x/patternProperties/^x")
        );
        assert_eq!(
            o.property_names.unwrap().members()[0].value,
            &json!({"maxLength": 3})
        );
        assert_eq!(
            (o.min_properties, o.max_properties),
            (w(1, "minProperties"), w(5, "maxProperties"))
        );
        let demands = Demands {
            keyword: "dependentRequired",
            entries: Some(vec![Dependency {
                key: "a",
                present: vec!["b"],
                absent: Vec::new(),
            }]),
        };
        assert_eq!(
            o.dependencies,
            [written(demands, &at(), "dependentRequired")]
        );
        assert!(!o.dependent_schemas);
    }

    #[test]
    fn absent_keyed_keywords_declare_nothing() {
        let nothing = Map::new();
        let o = object(&nothing, &at()).unwrap();
        assert!(o.properties.is_empty() && !o.properties.is_written());
        assert!(!o.pattern_properties.is_written());
        assert!(o.required.is_empty() && o.dependencies.is_empty());
        let empty = map(json!({"patternProperties": {}}));
        let o = object(&empty, &at()).unwrap();
        assert!(o.pattern_properties.is_written() && o.pattern_properties.is_empty());
    }

    #[test]
    fn schema_dependencies_evaluate_properties() {
        for (schema, expected) in [
            (json!({"dependentSchemas": {"a": {}}}), true),
            (json!({"dependencies": {"a": {"required": ["b"]}}}), true),
            (json!({"dependencies": {"a": ["b"]}}), false),
        ] {
            let m = map(schema.clone());
            let o = object(&m, &at()).unwrap();
            assert_eq!(o.dependent_schemas, expected, "{schema}");
        }
    }

    #[test]
    fn bad_object_keywords_name_their_place() {
        for (schema, key) in [
            (json!({"properties": []}), "properties"),
            (json!({"patternProperties": true}), "patternProperties"),
            (json!({"required": "a"}), "required"),
            (json!({"minProperties": -1}), "minProperties"),
        ] {
            let err = object(&map(schema), &at()).unwrap_err();
            assert_eq!(err.at.pointer, format!("/properties/x/{key}"));
        }
    }

    #[test]
    fn types_are_a_set_and_integer_goes_beside_number() {
        let names = |schema: Value| -> Vec<&'static str> {
            types(&map(schema), &at())
                .unwrap()
                .iter()
                .map(JsonType::name)
                .collect()
        };
        assert_eq!(names(json!({"type": "integer"})), ["integer"]);
        assert_eq!(
            names(json!({"type": ["string", "integer", "number", "null"]})),
            ["null", "number", "string"]
        );
        assert_eq!(names(json!({})).len(), 6);
        let types = types(&map(json!({"type": "number"})), &at()).unwrap();
        assert!(types.admits(JsonType::Integer) && !types.contains(JsonType::Integer));
        let mut all = Types::all();
        all.remove(Types::of([JsonType::Number, JsonType::Null]));
        assert_eq!(
            all.iter().map(JsonType::name).collect::<Vec<_>>(),
            ["boolean", "object", "array", "string"]
        );
    }

    #[test]
    fn bad_types_are_refused_with_a_hint() {
        for (schema, says) in [
            (json!({"type": 3}), "must be a string or an array"),
            (json!({"type": ["string", 1]}), "entries must be strings"),
            (json!({"type": "strng"}), "did you mean \"string\"?"),
        ] {
            let err = types(&map(schema), &at()).unwrap_err();
            assert_eq!(err.at.pointer, "/properties/x/type");
            assert!(err.message.contains(says), "{err:?}");
        }
    }

    #[test]
    fn a_plain_schema_reads_every_type_and_the_rest() {
        let m = map(json!({
            "type": ["string", "array"], "enum": ["a", ["b"]], "not": {"type": "null"},
            "if": {}, "else": {}, "maxLength": 2, "minItems": 1, "required": ["z"]
        }));
        let plain = plain(&m, &at()).unwrap();
        assert_eq!(plain.types.len(), 2);
        let literals = plain.literals.unwrap();
        assert_eq!(literals.values.len(), 2);
        assert_eq!(literals.keyword, written("enum", &at(), "enum"));
        assert_eq!(plain.not[0].at.pointer, "/properties/x/not");
        assert_eq!(plain.if_at, Some(at().child("if")));
        assert!(plain.conditional);
        assert_eq!(plain.string.max_length, w(2, "maxLength"));
        assert_eq!(plain.array.min_items(), 1);
        assert_eq!(plain.object.required, [written("z", &at(), "required")]);
        // A keyword of a type the schema does not allow must still be well formed.
        let malformed = map(json!({"type": "string", "minItems": -1}));
        let err = super::plain(&malformed, &at()).unwrap_err();
        assert_eq!(err.at.pointer, "/properties/x/minItems");
        let lone_if = map(json!({"if": {}}));
        let plain = super::plain(&lone_if, &at()).unwrap();
        assert!(plain.if_at.is_some() && !plain.conditional && plain.literals.is_none());
    }
}
