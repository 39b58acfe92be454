//! Reading tool lists in every vendor's shape.
//!
//! [`read_tools`] finds the tools, each with its name, argument schema and the JSON
//! pointer of both, plus the settings that travel with them:
//!
//! - OpenAI: `{"tools": [{"type": "function", "function": {name, description?,
//!   parameters, strict?}}]}` or a bare array of such tools (the Responses API's flat
//!   `{"type": "function", name, parameters}` too); a whole chat request body, whose
//!   `tool_choice`, `parallel_tool_calls` and `response_format` are taken along.
//! - Legacy OpenAI: `{"functions": [{name, description?, parameters}], "function_call"?}`.
//! - MCP: a `tools/list` result `{"tools": [{name, inputSchema, outputSchema?,
//!   annotations?}]}`, the whole JSON-RPC response around it, or one tool object.
//! - Anthropic: `[{name, description?, input_schema}]` (or `{"tools": […],
//!   "tool_choice"?}`).
//!
//! The shape is detected from the container and the tools' keys; [`InputFormat`] forces
//! one. Every tool is checked here — a string name, unique, an argument schema that is an
//! object schema — so later stages see only well-formed tools.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use super::params::argument_schema;
use super::{ToolChoice, ToolsError};

/// The vendor shape of a tool list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputFormat {
    /// OpenAI `tools` (a request body, `{"tools": […]}` or a bare array).
    OpenAi,
    /// OpenAI's legacy `functions`.
    Functions,
    /// MCP `tools/list` (result, JSON-RPC response, or one tool).
    Mcp,
    /// Anthropic `tools` with `input_schema`.
    Anthropic,
}

impl InputFormat {
    /// Every format.
    pub const ALL: [InputFormat; 4] = [
        InputFormat::OpenAi,
        InputFormat::Functions,
        InputFormat::Mcp,
        InputFormat::Anthropic,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::OpenAi => "openai",
            InputFormat::Functions => "functions",
            InputFormat::Mcp => "mcp",
            InputFormat::Anthropic => "anthropic",
        }
    }

    /// The key holding a tool's argument schema.
    pub fn schema_key(self) -> &'static str {
        match self {
            InputFormat::OpenAi | InputFormat::Functions => "parameters",
            InputFormat::Mcp => "inputSchema",
            InputFormat::Anthropic => "input_schema",
        }
    }

    fn missing_schema_help(self) -> &'static str {
        match self {
            InputFormat::OpenAi | InputFormat::Functions => {
                "OpenAI reads a function without `parameters` as one that takes no arguments; gbnfc asks you to say so: \"parameters\": {\"type\": \"object\", \"properties\": {}}"
            }
            InputFormat::Mcp => {
                "MCP requires an `inputSchema`; for a tool without arguments write \"inputSchema\": {\"type\": \"object\"}"
            }
            InputFormat::Anthropic => {
                "write \"input_schema\": {\"type\": \"object\", \"properties\": {…}} (for no arguments, {\"type\": \"object\"})"
            }
        }
    }
}

impl fmt::Display for InputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for InputFormat {
    type Err = ToolsError;

    /// `openai`, `functions`, `mcp` or `anthropic`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        InputFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| ToolsError::UnknownInputFormat(s.to_string()))
    }
}

/// One tool, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name a call gives.
    pub name: String,
    /// Its description, if any.
    pub description: Option<String>,
    /// The effective argument schema: an object schema with explicit `type`, under OpenAI
    /// `strict` with every property required and objects closed. Validate arguments
    /// against this.
    pub parameters: Value,
    /// JSON pointer to the tool in the input.
    pub pointer: String,
    /// JSON pointer to its argument schema in the input.
    pub parameters_pointer: String,
    /// OpenAI `"strict": true`.
    pub strict: bool,
    /// MCP `outputSchema`: what `structuredContent` of its result must match.
    pub output_schema: Option<Value>,
    /// MCP `annotations` (`readOnlyHint`, `destructiveHint`, …).
    pub annotations: Option<Value>,
}

/// A `response_format` found beside the tools.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseFormat {
    /// The `response_format` value (`json_schema` or `json_object`).
    pub value: Value,
    /// Where it is in the input.
    pub pointer: String,
}

/// A tool list and the settings that came with it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolList {
    /// The shape it was read as.
    pub format: InputFormat,
    /// The tools, in input order; never empty, names unique.
    pub tools: Vec<ToolSpec>,
    /// `tool_choice` (or legacy `function_call`), if given.
    pub choice: Option<ToolChoice>,
    /// Where the choice was given.
    pub choice_pointer: Option<String>,
    /// `parallel_tool_calls` (or Anthropic's `disable_parallel_tool_use`), if given.
    pub parallel: Option<bool>,
    /// A `response_format` other than `text`, if given.
    pub response_format: Option<ResponseFormat>,
}

/// Reads a tool list in any of the shapes above, or in `format` when given.
///
/// ```
/// use gbnfc_compiler::tools::{read_tools, InputFormat};
/// let mcp = serde_json::json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [
///     {"name": "get_ticket", "inputSchema": {"type": "object"}}
/// ]}});
/// let list = read_tools(&mcp, None).unwrap();
/// assert_eq!(list.format, InputFormat::Mcp);
/// assert_eq!(list.tools[0].parameters_pointer, "/result/tools/0/inputSchema");
/// ```
///
/// # Errors
/// See [`ToolsError`]: not a tool list, an empty list, a bad or duplicate name, a missing
/// or non-object argument schema, a non-function tool, an unknown `tool_choice`, a
/// JSON-RPC error response.
pub fn read_tools(input: &Value, format: Option<InputFormat>) -> Result<ToolList, ToolsError> {
    let (container, base) = unwrap_json_rpc(input)?;
    let mut choice = None;
    let mut choice_pointer = None;
    let mut parallel = None;
    let mut response_format = None;
    let mut container_format = None;
    let (entries, list_pointer): (Vec<&Value>, String) = match container {
        Value::Array(items) => (items.iter().collect(), base.clone()),
        Value::Object(map) => {
            let key = if map.contains_key("tools") {
                "tools"
            } else if map.contains_key("functions") {
                container_format = Some(InputFormat::Functions);
                "functions"
            } else if map.contains_key("name") {
                ""
            } else {
                return Err(not_a_list(&base, container));
            };
            if key.is_empty() {
                (vec![container], base.clone())
            } else {
                let pointer = format!("{base}/{key}");
                let Some(Value::Array(items)) = map.get(key) else {
                    return Err(ToolsError::NotToolList {
                        pointer,
                        message: format!("`{key}` must be an array of tools"),
                    });
                };
                for (setting, at) in [
                    ("tool_choice", "tool_choice"),
                    ("function_call", "function_call"),
                ] {
                    if let Some(value) = map.get(setting) {
                        let pointer = format!("{base}/{at}");
                        choice = Some(ToolChoice::from_json(value, &pointer)?);
                        if value.get("disable_parallel_tool_use") == Some(&Value::Bool(true)) {
                            parallel = Some(false);
                        }
                        choice_pointer = Some(pointer);
                    }
                }
                if let Some(value) = map.get("parallel_tool_calls") {
                    parallel = Some(value.as_bool().ok_or_else(|| ToolsError::NotToolList {
                        pointer: format!("{base}/parallel_tool_calls"),
                        message: format!(
                            "`parallel_tool_calls` must be true or false, found {value}"
                        ),
                    })?);
                }
                if let Some(value) = map.get("response_format") {
                    if value.get("type").and_then(Value::as_str) != Some("text") {
                        response_format = Some(ResponseFormat {
                            value: value.clone(),
                            pointer: format!("{base}/response_format"),
                        });
                    }
                }
                let entries = items.iter().collect();
                (entries, pointer)
            }
        }
        other => return Err(not_a_list(&base, other)),
    };
    if entries.is_empty() {
        return Err(ToolsError::Empty {
            pointer: list_pointer,
        });
    }
    let single = matches!(container, Value::Object(map) if !map.contains_key("tools") && !map.contains_key("functions"));
    let pointer_of = |i: usize| {
        if single {
            list_pointer.clone()
        } else {
            format!("{list_pointer}/{i}")
        }
    };
    let format = format
        .or(container_format)
        .or_else(|| entries.iter().find_map(|e| detect(e)))
        .unwrap_or(InputFormat::Mcp);
    let mut tools = Vec::with_capacity(entries.len());
    let mut seen: HashMap<String, String> = HashMap::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let tool = read_tool(entry, &pointer_of(i), format)?;
        if let Some(first) = seen.get(&tool.name) {
            return Err(ToolsError::DuplicateName {
                pointer: tool.pointer.clone(),
                name: tool.name.clone(),
                first: first.clone(),
            });
        }
        seen.insert(tool.name.clone(), tool.pointer.clone());
        tools.push(tool);
    }
    Ok(ToolList {
        format,
        tools,
        choice,
        choice_pointer,
        parallel,
        response_format,
    })
}

/// The `result` of a JSON-RPC response (with its pointer), or the input itself.
fn unwrap_json_rpc(input: &Value) -> Result<(&Value, String), ToolsError> {
    let Value::Object(map) = input else {
        return Ok((input, String::new()));
    };
    let rpc = map.contains_key("jsonrpc")
        || (map.contains_key("id") && (map.contains_key("result") || map.contains_key("error")));
    if !rpc {
        return Ok((input, String::new()));
    }
    if let Some(error) = map.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| error.to_string(), str::to_string);
        return Err(ToolsError::JsonRpcError {
            pointer: "/error".to_string(),
            message,
        });
    }
    match map.get("result") {
        Some(result) => Ok((result, "/result".to_string())),
        None => Err(ToolsError::NotToolList {
            pointer: String::new(),
            message: "a JSON-RPC message without `result`: give the response to `tools/list`"
                .to_string(),
        }),
    }
}

fn not_a_list(pointer: &str, found: &Value) -> ToolsError {
    let found = match found {
        Value::Object(map) => {
            let keys: Vec<&str> = map.keys().map(String::as_str).take(8).collect();
            format!("an object with keys {}", keys.join(", "))
        }
        Value::Array(_) => "an array".to_string(),
        Value::String(_) => "a string".to_string(),
        Value::Number(_) => "a number".to_string(),
        Value::Bool(_) => "a boolean".to_string(),
        Value::Null => "null".to_string(),
    };
    ToolsError::NotToolList {
        pointer: pointer.to_string(),
        message: format!(
            "expected a tool list — {{\"tools\": […]}} (OpenAI, MCP, Anthropic), {{\"functions\": […]}}, a JSON-RPC tools/list response, one MCP tool, or an array of tools — but found {found}"
        ),
    }
}

/// The format a tool's keys give away, if they do.
fn detect(entry: &Value) -> Option<InputFormat> {
    let map = entry.as_object()?;
    if map.contains_key("function") || map.get("type").and_then(Value::as_str) == Some("function") {
        Some(InputFormat::OpenAi)
    } else if map.contains_key("inputSchema") {
        Some(InputFormat::Mcp)
    } else if map.contains_key("input_schema") {
        Some(InputFormat::Anthropic)
    } else if map.contains_key("parameters") {
        Some(InputFormat::Functions)
    } else {
        None
    }
}

/// Reads one tool at `pointer` as `format`.
fn read_tool(entry: &Value, pointer: &str, format: InputFormat) -> Result<ToolSpec, ToolsError> {
    let Value::Object(map) = entry else {
        return Err(ToolsError::NotToolList {
            pointer: pointer.to_string(),
            message: format!("a tool must be a JSON object, found {entry}"),
        });
    };
    // Vendors' built-in tools (`web_search`, `bash_20250124`, …) carry another `type`.
    if let Some(kind) = map
        .get("type")
        .and_then(Value::as_str)
        .filter(|k| !matches!(*k, "function" | "custom"))
    {
        return Err(unsupported(map, pointer, kind));
    }
    // Where the name and schema sit: OpenAI nests them under `function`.
    let (fields, at): (&Map<String, Value>, String) = match format {
        InputFormat::OpenAi => match map.get("function") {
            Some(Value::Object(function)) => (function, format!("{pointer}/function")),
            Some(other) => {
                return Err(ToolsError::NotToolList {
                    pointer: format!("{pointer}/function"),
                    message: format!(
                        "`function` must be an object with `name` and `parameters`, found {other}"
                    ),
                })
            }
            None => (map, pointer.to_string()),
        },
        InputFormat::Anthropic | InputFormat::Functions | InputFormat::Mcp => {
            (map, pointer.to_string())
        }
    };
    let name = match fields.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        found => {
            let found = match found {
                None => "no `name`".to_string(),
                Some(Value::String(_)) => "an empty `name`".to_string(),
                Some(other) => format!("`{other}` as its name"),
            };
            return Err(ToolsError::BadName {
                pointer: format!("{at}/name"),
                tool: pointer.to_string(),
                found,
            });
        }
    };
    let key = format.schema_key();
    let Some(schema) = fields.get(key) else {
        return Err(ToolsError::MissingParameters {
            pointer: at,
            tool: name,
            key: key.to_string(),
            help: format.missing_schema_help().to_string(),
        });
    };
    let parameters_pointer = format!("{at}/{key}");
    let strict = fields.get("strict") == Some(&Value::Bool(true));
    let parameters = argument_schema(schema, strict, &name, &parameters_pointer)?;
    Ok(ToolSpec {
        description: fields
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string),
        parameters,
        pointer: pointer.to_string(),
        parameters_pointer,
        strict,
        output_schema: fields.get("outputSchema").cloned(),
        annotations: fields.get("annotations").cloned(),
        name,
    })
}

fn unsupported(map: &Map<String, Value>, pointer: &str, kind: &str) -> ToolsError {
    let tool = map
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or(pointer)
        .to_string();
    ToolsError::UnsupportedTool {
        pointer: format!("{pointer}/type"),
        tool,
        message: format!(
            "a tool of type `{kind}` is run by the vendor's service, not called with arguments the model writes; gbnfc compiles function tools only: remove it"
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"a": {"type": "string"}}})
    }

    #[test]
    fn every_shape_is_detected() {
        let openai = json!({"type": "function", "function": {"name": "f", "parameters": schema()}});
        let flat = json!({"type": "function", "name": "f", "parameters": schema()});
        let mcp =
            json!({"name": "f", "inputSchema": schema(), "annotations": {"readOnlyHint": true}});
        let anthropic = json!({"name": "f", "input_schema": schema()});
        let legacy = json!({"name": "f", "parameters": schema()});
        let cases = [
            (
                json!({"tools": [openai.clone()]}),
                InputFormat::OpenAi,
                "/tools/0/function/parameters",
            ),
            (
                json!([openai]),
                InputFormat::OpenAi,
                "/0/function/parameters",
            ),
            (json!([flat]), InputFormat::OpenAi, "/0/parameters"),
            (
                json!({"functions": [legacy.clone()]}),
                InputFormat::Functions,
                "/functions/0/parameters",
            ),
            (
                json!({"tools": [mcp.clone()]}),
                InputFormat::Mcp,
                "/tools/0/inputSchema",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [mcp.clone()]}}),
                InputFormat::Mcp,
                "/result/tools/0/inputSchema",
            ),
            (mcp, InputFormat::Mcp, "/inputSchema"),
            (
                json!([anthropic.clone()]),
                InputFormat::Anthropic,
                "/0/input_schema",
            ),
            (
                json!({"tools": [anthropic]}),
                InputFormat::Anthropic,
                "/tools/0/input_schema",
            ),
            (json!([legacy]), InputFormat::Functions, "/0/parameters"),
        ];
        for (input, format, pointer) in cases {
            let list = read_tools(&input, None).unwrap();
            assert_eq!(list.format, format, "{input}");
            assert_eq!(list.tools[0].name, "f");
            assert_eq!(list.tools[0].parameters_pointer, pointer, "{input}");
        }
    }

    #[test]
    fn settings_travel_with_the_tools() {
        let body = json!({
            "model": "m", "messages": [],
            "tools": [{"type": "function", "function": {"name": "f", "strict": true, "parameters": schema()}}],
            "tool_choice": {"type": "function", "function": {"name": "f"}},
            "parallel_tool_calls": true,
            "response_format": {"type": "json_object"}
        });
        let list = read_tools(&body, None).unwrap();
        assert_eq!(list.choice, Some(ToolChoice::Named("f".into())));
        assert_eq!(list.choice_pointer.as_deref(), Some("/tool_choice"));
        assert_eq!(list.parallel, Some(true));
        assert_eq!(list.response_format.unwrap().pointer, "/response_format");
        assert!(list.tools[0].strict);
        assert_eq!(list.tools[0].parameters["required"], json!(["a"]));

        let legacy =
            json!({"functions": [{"name": "f", "parameters": schema()}], "function_call": "none"});
        assert_eq!(
            read_tools(&legacy, None).unwrap().choice,
            Some(ToolChoice::None)
        );
        let anthropic = json!({"tools": [{"name": "f", "input_schema": schema()}],
            "tool_choice": {"type": "any", "disable_parallel_tool_use": true}});
        let list = read_tools(&anthropic, None).unwrap();
        assert_eq!(
            (list.choice, list.parallel),
            (Some(ToolChoice::Required), Some(false))
        );
        let text = json!({"tools": [{"name": "f", "inputSchema": schema()}], "response_format": {"type": "text"}});
        assert!(read_tools(&text, None).unwrap().response_format.is_none());
    }

    #[test]
    fn a_forced_format_reads_every_tool_that_way() {
        let input = json!({"tools": [{"name": "f", "inputSchema": schema()}]});
        let err = read_tools(&input, Some(InputFormat::Anthropic)).unwrap_err();
        assert!(
            matches!(err, ToolsError::MissingParameters { ref key, .. } if key == "input_schema"),
            "{err}"
        );
    }

    #[test]
    fn bad_lists() {
        let cases = [
            (json!({"tools": []}), "/tools", "empty"),
            (json!([]), "/", "empty"),
            (json!({"foo": 1}), "/", "expected a tool list"),
            (json!(3), "/", "expected a tool list"),
            (json!({"tools": {}}), "/tools", "must be an array"),
            (
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}),
                "/error",
                "Method not found",
            ),
            (
                json!([{"name": "f", "inputSchema": schema()}, {"name": "f", "inputSchema": schema()}]),
                "/1",
                "`f` is listed twice (first at /0)",
            ),
            (
                json!([{"name": 7, "inputSchema": schema()}]),
                "/0/name",
                "the tool at /0 has `7` as its name",
            ),
            (
                json!([{"inputSchema": schema()}]),
                "/0/name",
                "has no `name`",
            ),
            (
                json!([{"name": "", "inputSchema": schema()}]),
                "/0/name",
                "an empty `name`",
            ),
            (
                json!({"tools": [{"type": "function", "function": {"name": "f"}}]}),
                "/tools/0/function",
                "tool `f` has no `parameters`",
            ),
            (
                json!({"tools": [{"type": "web_search"}]}),
                "/tools/0/type",
                "`web_search`",
            ),
            (
                json!({"tools": [{"name": "f", "inputSchema": {"type": "array"}}]}),
                "/tools/0/inputSchema/type",
                "not an object schema",
            ),
            (
                json!({"tools": [{"name": "f", "inputSchema": schema()}], "tool_choice": "maybe"}),
                "/tool_choice",
                "unknown tool choice",
            ),
            (
                json!({"tools": [{"name": "f", "inputSchema": schema()}], "parallel_tool_calls": 1}),
                "/parallel_tool_calls",
                "true or false",
            ),
        ];
        for (input, pointer, words) in cases {
            let err = read_tools(&input, None).unwrap_err();
            let text = err.to_string();
            assert!(text.starts_with(&format!("{pointer}: ")), "{input}: {text}");
            assert!(text.contains(words), "{input}: {text}");
        }
    }
}
