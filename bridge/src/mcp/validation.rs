//! The two hops of validation around a tool call, with the `jsonschema` crate (through
//! [`crate::validate::Validator`], so messages read like every other validation message
//! of gbnfc: `$.path: what is wrong`).
//!
//! - Hop 1, before the call: the model's arguments against the tool's `inputSchema`.
//!   Arguments that fail never reach the server.
//! - Hop 2, after the call: the tool's `structuredContent` against its `outputSchema`.
//!   A tool that declares an `outputSchema` must return `structuredContent` matching it;
//!   a result that does not is never passed on as fact.
//!
//! ```
//! use gbnfc_bridge::mcp::validation::ToolSchemas;
//! use serde_json::json;
//! let input = json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
//! let output = json!({"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]});
//! let schemas = ToolSchemas::new("fs", "stat", &input, Some(&output)).unwrap();
//! assert!(schemas.check_arguments(&json!({"path": "/tmp"})).is_empty());
//! assert_eq!(schemas.check_arguments(&json!({})), ["$: \"path\" is a required property"]);
//! assert_eq!(schemas.check_output(Some(&json!({"size": "big"}))), ["$.size: \"big\" is not of type \"integer\""]);
//! ```

use serde_json::Value;

use crate::mcp::McpError;
use crate::validate::Validator;
use crate::BridgeError;

/// The compiled validators of one tool.
#[derive(Debug)]
pub struct ToolSchemas {
    input: Validator,
    output: Option<Validator>,
}

impl ToolSchemas {
    /// Compiles a tool's `inputSchema` and, if it has one, its `outputSchema`.
    ///
    /// # Errors
    /// [`McpError::Schema`] when either is not a schema the validator can use.
    pub fn new(
        server: &str,
        tool: &str,
        input_schema: &Value,
        output_schema: Option<&Value>,
    ) -> Result<ToolSchemas, McpError> {
        let compile = |which: &'static str, schema: &Value| {
            Validator::new(schema).map_err(|e| McpError::Schema {
                server: server.to_owned(),
                tool: tool.to_owned(),
                which,
                reason: match e {
                    BridgeError::Schema(reason) => reason,
                    other => other.to_string(),
                },
            })
        };
        Ok(ToolSchemas {
            input: compile("inputSchema", input_schema)?,
            output: output_schema
                .map(|schema| compile("outputSchema", schema))
                .transpose()?,
        })
    }

    /// Hop 1: every way `arguments` fails the `inputSchema` (MCP arguments are always a
    /// JSON object); empty when the call may go ahead.
    pub fn check_arguments(&self, arguments: &Value) -> Vec<String> {
        if !arguments.is_object() {
            return vec![format!(
                "$: the arguments must be a JSON object, not {}",
                kind_of(arguments)
            )];
        }
        self.input.errors(arguments)
    }

    /// Does the tool declare an `outputSchema`?
    pub fn has_output_schema(&self) -> bool {
        self.output.is_some()
    }

    /// Hop 2: every way a result's `structuredContent` fails the `outputSchema` (a
    /// missing `structuredContent` fails it too); empty when the tool has no
    /// `outputSchema` or the content matches it.
    pub fn check_output(&self, structured_content: Option<&Value>) -> Vec<String> {
        match (&self.output, structured_content) {
            (None, _) => Vec::new(),
            (Some(_), None) => vec![
                "$: the tool declares an outputSchema but returned no structuredContent".into(),
            ],
            (Some(validator), Some(content)) => validator.errors(content),
        }
    }
}

/// `an array`, `a string`, … for messages.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    #[test]
    fn arguments_must_be_an_object_matching_the_schema() {
        let input = json!({
            "type": "object",
            "properties": {"priority": {"enum": ["LOW", "HIGH"]}, "n": {"type": "integer", "minimum": 1}},
            "required": ["priority"],
            "additionalProperties": false
        });
        let schemas = ToolSchemas::new("s", "t", &input, None).unwrap();
        assert!(!schemas.has_output_schema());
        assert!(schemas
            .check_arguments(&json!({"priority": "LOW", "n": 2}))
            .is_empty());
        assert_eq!(
            schemas.check_arguments(&json!([1])),
            ["$: the arguments must be a JSON object, not an array"]
        );
        let errors = schemas.check_arguments(&json!({"priority": "URGENT", "n": 0, "x": 1}));
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors.iter().any(|e| e.starts_with("$.priority: ")));
        assert!(errors.iter().any(|e| e.starts_with("$.n: ")));
        // Without an outputSchema every result passes hop 2.
        assert!(schemas.check_output(None).is_empty());
        assert!(schemas.check_output(Some(&json!(42))).is_empty());
    }

    #[test]
    fn unusable_schemas_are_errors_naming_the_tool() {
        let bad = json!({"type": "object", "properties": {"x": {"pattern": "("}}});
        let error =
            ToolSchemas::new("srv", "tool", &json!({"type": "object"}), Some(&bad)).unwrap_err();
        assert!(
            matches!(
                &error,
                McpError::Schema {
                    which: "outputSchema",
                    ..
                }
            ),
            "{error}"
        );
        assert!(
            error.to_string().contains("`tool` of MCP server `srv`"),
            "{error}"
        );
    }
}
