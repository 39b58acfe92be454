//! What a tool call came to, and the text that goes back to the model.
//!
//! A [`ToolOutcome`] is a decision that was reached: the tool answered, answered with
//! `isError`, was refused by the policy, got arguments that fail its `inputSchema`, or
//! returned output that fails its `outputSchema`. Each has a text for the OpenAI `tool`
//! message ([`ToolOutcome::content_text`]); [`tool_message_content`] does the same for
//! a failed conversation ([`McpError`]), so the loop can report every case to the model.

use serde_json::{json, Value};

use crate::mcp::{McpError, Refusal};

/// A `tools/call` result as the server sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The MCP content blocks (`{"type": "text", "text": …}`, images, resources, …).
    pub content: Vec<Value>,
    /// The `structuredContent`, if any.
    pub structured_content: Option<Value>,
    /// The server set `isError: true`.
    pub is_error: bool,
}

impl ToolResult {
    /// The content as text: text blocks as they are, embedded text resources by their
    /// text, everything else as a short `[image: image/png, 1234 bytes of base64]`-style
    /// note; blocks joined by newlines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .map(block_text)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// What the model reads: the `structuredContent` as compact JSON when there is one
    /// (it is the typed, validated form), else [`ToolResult::text`].
    pub fn model_text(&self) -> String {
        match &self.structured_content {
            Some(structured) => structured.to_string(),
            None => self.text(),
        }
    }
}

fn block_text(block: &Value) -> String {
    let field = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
    let data_note = |kind: &str, data: &str, mime: &str| {
        format!(
            "[{kind}: {}, {} bytes of base64]",
            or_unknown(mime),
            data.len()
        )
    };
    match field("type") {
        "text" => field("text").to_owned(),
        "image" | "audio" => data_note(field("type"), field("data"), field("mimeType")),
        "resource_link" => format!("[resource link: {}]", field("uri")),
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            let get = |key: &str| resource.get(key).and_then(Value::as_str);
            match (get("text"), get("blob")) {
                (Some(text), _) => text.to_owned(),
                (None, Some(blob)) => format!(
                    "[resource {}: {}, {} bytes of base64]",
                    get("uri").unwrap_or(""),
                    or_unknown(get("mimeType").unwrap_or("")),
                    blob.len()
                ),
                (None, None) => format!("[resource {}]", get("uri").unwrap_or("")),
            }
        }
        other => format!("[{} content]", or_unknown(other)),
    }
}

fn or_unknown(text: &str) -> &str {
    if text.is_empty() {
        "unknown type"
    } else {
        text
    }
}

/// What happened to a call.
#[derive(Debug, Clone, PartialEq)]
pub enum OutcomeKind {
    /// The tool ran; its output passed hop 2.
    Success(ToolResult),
    /// The tool ran and reported an error (`isError: true`).
    ToolError(ToolResult),
    /// Hop 1 failed: the arguments do not match the `inputSchema`; the tool was not
    /// called. One `$.path: message` line per problem.
    InvalidArguments(Vec<String>),
    /// Hop 2 failed: the `structuredContent` does not match the `outputSchema`. The
    /// result is kept for the user, never shown to the model as fact.
    InvalidOutput {
        /// One `$.path: message` line per problem.
        errors: Vec<String>,
        /// What the server returned.
        result: ToolResult,
    },
    /// The policy refused the call; the tool was not called.
    Refused(Refusal),
}

/// The outcome of one call of a tool, by the name the caller used.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// The tool's name as the caller called it.
    pub tool: String,
    /// What happened.
    pub kind: OutcomeKind,
}

impl ToolOutcome {
    /// Is this anything but a success (so the `tool` message reports an error)?
    pub fn is_error(&self) -> bool {
        !matches!(self.kind, OutcomeKind::Success(_))
    }

    /// Did the call reach the server?
    pub fn was_called(&self) -> bool {
        matches!(
            self.kind,
            OutcomeKind::Success(_) | OutcomeKind::ToolError(_) | OutcomeKind::InvalidOutput { .. }
        )
    }

    /// The text of the OpenAI `tool` message for this outcome.
    pub fn content_text(&self) -> String {
        let tool = &self.tool;
        match &self.kind {
            OutcomeKind::Success(result) => result.model_text(),
            OutcomeKind::ToolError(result) => {
                let text = result.model_text();
                if text.trim().is_empty() {
                    format!("error: the tool `{tool}` failed without saying why")
                } else {
                    format!("error: the tool `{tool}` failed: {text}")
                }
            }
            OutcomeKind::InvalidArguments(errors) => format!(
                "error: the arguments do not match the inputSchema of `{tool}`, so it was \
                 not called:\n{}",
                errors.join("\n")
            ),
            OutcomeKind::InvalidOutput { errors, .. } => format!(
                "error: the tool `{tool}` returned structuredContent that does not match \
                 its outputSchema, so its result was discarded:\n{}",
                errors.join("\n")
            ),
            OutcomeKind::Refused(refusal) => format!("error: {}", refusal.explain(tool)),
        }
    }
}

/// The text of the OpenAI `tool` message for a call's result, whether the call reached
/// an outcome or failed (`error: …` with the failure's message).
pub fn tool_message_content(result: &Result<ToolOutcome, McpError>) -> String {
    match result {
        Ok(outcome) => outcome.content_text(),
        Err(error) => format!("error: {error}"),
    }
}

/// The OpenAI `tool` message answering the call `tool_call_id` of the tool `name`:
/// `{"role": "tool", "tool_call_id": …, "name": …, "content": …}`.
pub fn tool_message(
    tool_call_id: &str,
    name: &str,
    result: &Result<ToolOutcome, McpError>,
) -> Value {
    json!({
        "role": "tool",
        "tool_call_id": tool_call_id,
        "name": name,
        "content": tool_message_content(result),
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn result(content: Value, structured: Option<Value>, is_error: bool) -> ToolResult {
        ToolResult {
            content: content.as_array().cloned().unwrap_or_default(),
            structured_content: structured,
            is_error,
        }
    }

    #[test]
    fn content_becomes_text() {
        let r = result(
            json!([
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource_link", "uri": "file:///x", "name": "x"},
                {"type": "resource", "resource": {"uri": "file:///y", "text": "inside"}},
                {"type": "resource", "resource": {"uri": "file:///z", "blob": "AA", "mimeType": "application/gzip"}},
                {"type": "audio", "data": "AAAAAA"},
                {"type": "hologram"}
            ]),
            None,
            false,
        );
        assert_eq!(
            r.text(),
            "hello\n[image: image/png, 4 bytes of base64]\n[resource link: file:///x]\ninside\n\
             [resource file:///z: application/gzip, 2 bytes of base64]\n\
             [audio: unknown type, 6 bytes of base64]\n[hologram content]"
        );
        assert_eq!(r.model_text(), r.text());
        let s = result(
            json!([{"type": "text", "text": "{\"a\": 1}"}]),
            Some(json!({"a": 1})),
            false,
        );
        assert_eq!(s.model_text(), "{\"a\":1}");
    }

    #[test]
    fn every_outcome_has_a_message() {
        let ok = ToolOutcome {
            tool: "cat".into(),
            kind: OutcomeKind::Success(result(
                json!([{"type": "text", "text": "meow"}]),
                None,
                false,
            )),
        };
        assert!(!ok.is_error() && ok.was_called());
        assert_eq!(ok.content_text(), "meow");

        let failed = ToolOutcome {
            tool: "cat".into(),
            kind: OutcomeKind::ToolError(result(
                json!([{"type": "text", "text": "no such file"}]),
                None,
                true,
            )),
        };
        assert!(failed.is_error() && failed.was_called());
        assert_eq!(
            failed.content_text(),
            "error: the tool `cat` failed: no such file"
        );

        let invalid = ToolOutcome {
            tool: "cat".into(),
            kind: OutcomeKind::InvalidArguments(vec!["$.path: 3 is not of type \"string\"".into()]),
        };
        assert!(invalid.is_error() && !invalid.was_called());
        assert!(invalid
            .content_text()
            .ends_with("not called:\n$.path: 3 is not of type \"string\""));

        let bad_output = ToolOutcome {
            tool: "cat".into(),
            kind: OutcomeKind::InvalidOutput {
                errors: vec!["$.n: \"x\" is not of type \"integer\"".into()],
                result: result(json!([]), Some(json!({"n": "x"})), false),
            },
        };
        assert!(bad_output.is_error() && bad_output.was_called());
        let text = bad_output.content_text();
        assert!(
            text.contains("discarded") && !text.contains("{\"n\""),
            "{text}"
        );

        let refused = ToolOutcome {
            tool: "rm".into(),
            kind: OutcomeKind::Refused(Refusal::Destructive),
        };
        assert!(refused.is_error() && !refused.was_called());
        assert!(refused
            .content_text()
            .starts_with("error: the tool `rm` was not called"));

        let timeout: Result<ToolOutcome, McpError> = Err(McpError::Timeout {
            server: "s".into(),
            request: "tools/call `slow`".into(),
            timeout: Duration::from_secs(2),
        });
        assert_eq!(
            tool_message("call_1", "slow", &timeout),
            json!({"role": "tool", "tool_call_id": "call_1", "name": "slow",
                   "content": "error: MCP server `s` did not answer tools/call `slow` within 2s"})
        );
    }
}
