//! A tool's argument schema as the grammar compiles it.
//!
//! Arguments are always a JSON object, in every call syntax. So the schema must be an
//! object schema: a JSON object whose `type` is `"object"` (or `["object"]`) or absent —
//! absent `type` is made explicit, because `{"properties": …}` alone also accepts
//! strings and numbers, which no call may carry. With OpenAI's `"strict": true`, every
//! object schema inside lists all its properties in `required` and gets
//! `"additionalProperties": false` where it has none, as the hosted strict mode demands.

use serde_json::{Map, Value};

use super::ToolsError;

/// The effective argument schema of a tool: `schema` (found at `pointer`) checked to be an
/// object schema, with `type` made explicit and, under `strict`, closed objects with every
/// property required.
pub(crate) fn argument_schema(
    schema: &Value,
    strict: bool,
    tool: &str,
    pointer: &str,
) -> Result<Value, ToolsError> {
    let not_object = |at: String, message: String| ToolsError::NotObjectSchema {
        pointer: at,
        tool: tool.to_string(),
        message,
    };
    let Value::Object(map) = schema else {
        return Err(not_object(
            pointer.to_string(),
            format!(
                "found {}; tool arguments are always a JSON object: write {{\"type\": \"object\", \"properties\": {{…}}}}",
                kind(schema)
            ),
        ));
    };
    let mut map = map.clone();
    match map.get("type") {
        None => {
            map.insert("type".to_string(), Value::String("object".to_string()));
        }
        Some(Value::String(t)) if t == "object" => {}
        Some(Value::Array(types)) if types.len() == 1 && types[0] == "object" => {}
        Some(other) => {
            return Err(not_object(
                format!("{pointer}/type"),
                format!(
                    "`type` is {other}; tool arguments are always a JSON object: use \"type\": \"object\""
                ),
            ))
        }
    }
    let mut schema = Value::Object(map);
    if strict {
        close_and_require(&mut schema);
    }
    Ok(schema)
}

/// How to name a JSON value's kind in a message.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(true) => "the schema `true`",
        Value::Bool(false) => "the schema `false`",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// OpenAI strict mode on every subschema: all properties required, objects closed.
/// Walks with an explicit stack, so nesting depth cannot overflow.
fn close_and_require(schema: &mut Value) {
    let mut stack: Vec<&mut Value> = vec![schema];
    while let Some(value) = stack.pop() {
        let Value::Object(map) = value else {
            continue;
        };
        strict_object(map);
        for (key, child) in map.iter_mut() {
            match key.as_str() {
                // Maps from names to schemas.
                "properties" | "patternProperties" | "$defs" | "definitions"
                | "dependentSchemas" => {
                    if let Value::Object(children) = child {
                        stack.extend(children.values_mut());
                    }
                }
                // Lists of schemas.
                "prefixItems" | "anyOf" | "oneOf" | "allOf" => {
                    if let Value::Array(children) = child {
                        stack.extend(children.iter_mut());
                    }
                }
                // `items` is a schema, or (before 2020-12) a list of them.
                "items" => match child {
                    Value::Array(children) => stack.extend(children.iter_mut()),
                    other => stack.push(other),
                },
                "additionalProperties"
                | "unevaluatedProperties"
                | "additionalItems"
                | "unevaluatedItems"
                | "contains"
                | "not"
                | "if"
                | "then"
                | "else"
                | "propertyNames" => stack.push(child),
                _ => {}
            }
        }
    }
}

/// One schema under strict mode: an object schema requires all its properties and
/// allows no others unless it says so.
fn strict_object(map: &mut Map<String, Value>) {
    let is_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => map.contains_key("properties"),
    };
    if !is_object {
        return;
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        let all: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
        map.insert("required".to_string(), Value::Array(all));
    }
    if !map.contains_key("additionalProperties") {
        map.insert("additionalProperties".to_string(), Value::Bool(false));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn type_is_made_explicit() {
        let s = argument_schema(&json!({"properties": {}}), false, "f", "/p").unwrap();
        assert_eq!(s["type"], "object");
        let s = argument_schema(&json!({"type": ["object"]}), false, "f", "/p").unwrap();
        assert_eq!(s["type"], json!(["object"]));
    }

    #[test]
    fn non_object_schemas_are_refused() {
        for (schema, at) in [
            (json!(true), "/p"),
            (json!([]), "/p"),
            (json!({"type": "string"}), "/p/type"),
            (json!({"type": ["object", "null"]}), "/p/type"),
        ] {
            let err = argument_schema(&schema, false, "f", "/p").unwrap_err();
            assert_eq!(err.pointer(), Some(at), "{schema}");
            assert!(err.to_string().contains("tool `f`"), "{err}");
        }
    }

    #[test]
    fn strict_requires_and_closes_every_object() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "object", "properties": {"c": {"type": "integer"}}},
                "d": {"type": "array", "items": {"properties": {"e": {}}}},
                "f": {"anyOf": [{"type": "object", "additionalProperties": true}, {"type": "null"}]}
            },
            "required": ["a"],
            "$defs": {"x": {"type": "object", "properties": {"y": {"const": {"properties": 1}}}}}
        });
        let s = argument_schema(&schema, true, "f", "").unwrap();
        assert_eq!(s["required"], json!(["a", "b", "d", "f"]));
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["properties"]["b"]["required"], json!(["c"]));
        assert_eq!(s["properties"]["b"]["additionalProperties"], false);
        assert_eq!(s["properties"]["d"]["items"]["required"], json!(["e"]));
        assert_eq!(
            s["properties"]["f"]["anyOf"][0]["additionalProperties"],
            true
        );
        assert_eq!(s["$defs"]["x"]["required"], json!(["y"]));
        // `const` values are data, not schemas.
        assert_eq!(
            s["$defs"]["x"]["properties"]["y"],
            json!({"const": {"properties": 1}})
        );
        assert!(s["properties"]["a"].get("additionalProperties").is_none());
    }
}
