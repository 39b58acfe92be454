//! Validation of results against their schema, with the `jsonschema` crate.
//!
//! The grammar already guarantees every keyword `compile` reports as enforced; validation
//! catches the rest (validation-only keywords) and is the independent check that makes a
//! result trustworthy. Errors read like `$.priority: "URGENT" is not one of …`, the form
//! that is fed back to the model when it retries.

use gbnfc_compiler::schema::document::{unescape_token, Document};
use serde_json::Value;

use crate::BridgeError;

/// A compiled JSON Schema validator (formats are checked, not just annotations).
pub struct Validator {
    inner: jsonschema::Validator,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validator").finish_non_exhaustive()
    }
}

impl Validator {
    /// Builds a validator for `schema` (a schema, or an OpenAI `response_format`, which
    /// is unwrapped first).
    ///
    /// # Errors
    /// [`BridgeError::Schema`] when the schema is not one `jsonschema` can use.
    pub fn new(schema: &Value) -> Result<Validator, BridgeError> {
        let schema = schema_of(schema)?;
        let inner = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .map_err(|e| {
                BridgeError::Schema(format!("{}: {e}", json_path(e.schema_path().as_str())))
            })?;
        Ok(Validator { inner })
    }

    /// Every way `instance` fails the schema, one line each (`$.path: message`); empty
    /// when it is valid.
    pub fn errors(&self, instance: &Value) -> Vec<String> {
        self.inner
            .iter_errors(instance)
            .map(|e| format!("{}: {e}", json_path(e.instance_path().as_str())))
            .collect()
    }

    /// Is `instance` valid?
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.inner.is_valid(instance)
    }
}

/// The schema inside `input`: an OpenAI `response_format` is unwrapped
/// (`json_schema.schema`; `json_object` means any object), anything else is the schema.
///
/// # Errors
/// [`BridgeError::Schema`] for a `response_format` that carries no schema (`text`).
pub fn schema_of(input: &Value) -> Result<Value, BridgeError> {
    let document =
        Document::from_input(input, None).map_err(|e| BridgeError::Schema(e.to_string()))?;
    document
        .get(&document.root())
        .ok_or_else(|| BridgeError::Schema("the input holds no schema".into()))
}

/// A JSON pointer as a path for messages: `/a/0/b` → `$.a[0].b`, `` → `$`.
pub fn json_path(pointer: &str) -> String {
    let mut path = String::from("$");
    for token in pointer.split('/').skip(1) {
        let key = unescape_token(token);
        if !key.is_empty() && key.bytes().all(|b| b.is_ascii_digit()) {
            path.push_str(&format!("[{key}]"));
        } else if !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            path.push('.');
            path.push_str(&key);
        } else {
            path.push_str(&format!("[{}]", Value::String(key.into_owned())));
        }
    }
    path
}
