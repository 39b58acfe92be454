//! Reading tool calls back from model output: the one parser the bridge and the tests
//! share.
//!
//! [`parse_tool_calls`] takes text that should be calls in a [`Syntax`] — what a grammar
//! from [`compile_tools`](super::compile_tools) produces — and returns each call's name,
//! arguments (a JSON value) and id. It reads the JSON parts with serde_json, so
//! whitespace inside them does not matter, but the markers (`<tool_call>`,
//! `[TOOL_CALLS]`) and the call object's keys must be exactly the syntax's. Text that is
//! not a call at all gets [`CallParseError::NoCall`]; [`parse_reply`] splits prose from
//! calls for the `auto` and lazy grammars.

use serde_json::Value;
use thiserror::Error;

use super::Syntax;

/// One call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// The arguments object.
    pub arguments: Value,
    /// The call's id, where the syntax carries one (Mistral).
    pub id: Option<String>,
}

/// Why text could not be read as tool calls.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum CallParseError {
    /// The text does not start like a call of this syntax.
    #[error("the text is no {syntax} tool call: a call starts with `{expected}`, but the text starts with `{found}`")]
    NoCall {
        /// The syntax.
        syntax: Syntax,
        /// How a call starts.
        expected: String,
        /// The start of the text (at most 40 characters).
        found: String,
    },
    /// A call's JSON does not parse.
    #[error("call {call}: invalid JSON at byte {offset}: {message}")]
    Json {
        /// 1-based call number.
        call: usize,
        /// Byte offset in the text.
        offset: usize,
        /// serde_json's message.
        message: String,
    },
    /// A call's JSON is not a call object of this syntax.
    #[error("call {call}: {message}")]
    Shape {
        /// 1-based call number.
        call: usize,
        /// What is wrong.
        message: String,
    },
    /// Something other than a call after the calls.
    #[error("unexpected text after the calls at byte {offset}: `{found}`")]
    Trailing {
        /// Byte offset in the text.
        offset: usize,
        /// The text found (at most 40 characters).
        found: String,
    },
}

/// Reads the tool calls in `text` (leading and trailing whitespace ignored).
///
/// ```
/// use gbnfc_compiler::tools::{parse_tool_calls, Syntax};
/// let text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\":\"Chengdu\"}}\n</tool_call>";
/// let calls = parse_tool_calls(Syntax::Hermes, text).unwrap();
/// assert_eq!(calls[0].name, "get_weather");
/// assert_eq!(calls[0].arguments["location"], "Chengdu");
/// assert!(parse_tool_calls(Syntax::Hermes, "It is sunny.").is_err());
/// ```
///
/// # Errors
/// [`CallParseError::NoCall`] when the text does not start like a call; the other
/// variants for a call that is broken.
pub fn parse_tool_calls(syntax: Syntax, text: &str) -> Result<Vec<ToolCall>, CallParseError> {
    let body = text.trim_end();
    let start = body.len() - body.trim_start().len();
    let first = match syntax {
        Syntax::Json | Syntax::Llama3 => "{",
        Syntax::Hermes => "<tool_call>",
        Syntax::Mistral => "[TOOL_CALLS]",
    };
    if !body[start..].starts_with(first) {
        return Err(CallParseError::NoCall {
            syntax,
            expected: first.to_string(),
            found: clip(&body[start..]),
        });
    }
    let mut reader = Reader {
        syntax,
        text: body,
        at: start,
        calls: Vec::new(),
    };
    match syntax {
        Syntax::Json | Syntax::Llama3 => reader.json_lines()?,
        Syntax::Hermes => reader.hermes()?,
        Syntax::Mistral => reader.mistral()?,
    }
    Ok(reader.calls)
}

/// A reply split into prose and calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The text before the first call (trimmed), if there is any.
    pub content: Option<String>,
    /// The calls, from the first trigger on; empty when there is none.
    pub calls: Vec<ToolCall>,
}

/// Splits a reply at the first occurrence of the syntax's trigger: what comes before is
/// prose, what comes from it on must be calls.
///
/// ```
/// use gbnfc_compiler::tools::{parse_reply, Syntax};
/// let reply = parse_reply(Syntax::Mistral, "Checking. [TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}, \"id\": \"a1B2c3D4e\"}]").unwrap();
/// assert_eq!(reply.content.as_deref(), Some("Checking."));
/// assert_eq!(reply.calls[0].id.as_deref(), Some("a1B2c3D4e"));
/// assert!(parse_reply(Syntax::Mistral, "Just prose.").unwrap().calls.is_empty());
/// ```
///
/// # Errors
/// What [`parse_tool_calls`] returns for the part from the trigger on.
pub fn parse_reply(syntax: Syntax, text: &str) -> Result<Reply, CallParseError> {
    let (prose, calls) = match text.find(syntax.trigger()) {
        Some(at) => (&text[..at], parse_tool_calls(syntax, &text[at..])?),
        None => (text, Vec::new()),
    };
    let prose = prose.trim();
    Ok(Reply {
        content: (!prose.is_empty()).then(|| prose.to_string()),
        calls,
    })
}

struct Reader<'t> {
    syntax: Syntax,
    text: &'t str,
    at: usize,
    calls: Vec<ToolCall>,
}

impl Reader<'_> {
    fn skip_whitespace(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start().len();
    }

    fn trailing(&self) -> CallParseError {
        CallParseError::Trailing {
            offset: self.at,
            found: clip(&self.text[self.at..]),
        }
    }

    /// JSON values one after another from `at`, separated by whitespace.
    fn json_lines(&mut self) -> Result<(), CallParseError> {
        while self.at < self.text.len() {
            if !self.text[self.at..].starts_with('{') {
                return Err(self.trailing());
            }
            let value = self.json_value()?;
            self.call(value)?;
            self.skip_whitespace();
        }
        Ok(())
    }

    /// `<tool_call>` JSON `</tool_call>` blocks separated by whitespace.
    fn hermes(&mut self) -> Result<(), CallParseError> {
        const OPEN: &str = "<tool_call>";
        const CLOSE: &str = "</tool_call>";
        while self.at < self.text.len() {
            if !self.text[self.at..].starts_with(OPEN) {
                return Err(self.trailing());
            }
            self.at += OPEN.len();
            let call = self.calls.len() + 1;
            if !self.text[self.at..].contains(CLOSE) {
                return Err(CallParseError::Shape {
                    call,
                    message: "`<tool_call>` without `</tool_call>`".to_string(),
                });
            }
            // The call object first: its strings may hold `</tool_call>` themselves.
            self.skip_whitespace();
            let value = self.json_value()?;
            self.skip_whitespace();
            if !self.text[self.at..].starts_with(CLOSE) {
                let rest = &self.text[self.at..];
                let end = rest.find(CLOSE).unwrap_or(rest.len());
                return Err(CallParseError::Shape {
                    call,
                    message: format!("unexpected `{}` before `</tool_call>`", clip(&rest[..end])),
                });
            }
            self.call(value)?;
            self.at += CLOSE.len();
            self.skip_whitespace();
        }
        Ok(())
    }

    /// `[TOOL_CALLS]` and one JSON array of call objects.
    fn mistral(&mut self) -> Result<(), CallParseError> {
        self.at += "[TOOL_CALLS]".len();
        self.skip_whitespace();
        let value = self.json_value()?;
        let Value::Array(items) = value else {
            return Err(CallParseError::Shape {
                call: 1,
                message: "`[TOOL_CALLS]` must be followed by a JSON array of calls".to_string(),
            });
        };
        if items.is_empty() {
            return Err(CallParseError::Shape {
                call: 1,
                message: "the array after `[TOOL_CALLS]` has no call".to_string(),
            });
        }
        for item in items {
            self.call(item)?;
        }
        self.skip_whitespace();
        if self.at < self.text.len() {
            return Err(self.trailing());
        }
        Ok(())
    }

    /// One JSON value starting at `at`; `at` moves past it.
    fn json_value(&mut self) -> Result<Value, CallParseError> {
        let rest = &self.text[self.at..];
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        let call = self.calls.len() + 1;
        match stream.next() {
            Some(Ok(value)) => {
                self.at += stream.byte_offset();
                Ok(value)
            }
            Some(Err(e)) => Err(CallParseError::Json {
                call,
                offset: self.at + offset_of(rest, e.line(), e.column()),
                message: e.to_string(),
            }),
            None => Err(CallParseError::Json {
                call,
                offset: self.at,
                message: "a call object was expected".to_string(),
            }),
        }
    }

    /// Checks one call object and records it.
    fn call(&mut self, value: Value) -> Result<(), CallParseError> {
        let call = self.calls.len() + 1;
        let shape = |message: String| CallParseError::Shape { call, message };
        let Value::Object(mut map) = value else {
            return Err(shape(format!(
                "a call must be a JSON object, found {}",
                clip(&value.to_string())
            )));
        };
        let key = self.syntax.arguments_key();
        let name = match map.remove("name") {
            Some(Value::String(name)) if !name.is_empty() => name,
            Some(other) => {
                return Err(shape(format!(
                    "`name` must be a non-empty string, found {other}"
                )))
            }
            None => return Err(shape("the call has no `name`".to_string())),
        };
        let arguments = match map.remove(key) {
            Some(arguments @ Value::Object(_)) => arguments,
            Some(other) => {
                return Err(shape(format!(
                    "`{key}` of `{name}` must be a JSON object, found {}",
                    clip(&other.to_string())
                )))
            }
            None => return Err(shape(format!("the call of `{name}` has no `{key}`"))),
        };
        let id = if self.syntax.has_id() {
            match map.remove("id") {
                Some(Value::String(id)) => Some(id),
                Some(other) => return Err(shape(format!("`id` must be a string, found {other}"))),
                None => None,
            }
        } else {
            None
        };
        if let Some(extra) = map.keys().next() {
            return Err(shape(format!(
                "unexpected key `{extra}` in the call of `{name}` (a {} call has `name` and `{key}`{})",
                self.syntax,
                if self.syntax.has_id() { " and `id`" } else { "" }
            )));
        }
        self.calls.push(ToolCall {
            name,
            arguments,
            id,
        });
        Ok(())
    }
}

/// The byte offset of a 1-based line and column (in characters) in `text`.
pub(super) fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (n, l) in text.split_inclusive('\n').enumerate() {
        if n + 1 == line {
            return offset
                + l.char_indices()
                    .nth(column.saturating_sub(1))
                    .map_or(l.len(), |(i, _)| i);
        }
        offset += l.len();
    }
    text.len()
}

/// At most 40 characters of `text`, for messages.
fn clip(text: &str) -> String {
    if text.chars().count() <= 40 {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(40).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn call(name: &str, arguments: Value, id: Option<&str>) -> ToolCall {
        ToolCall {
            name: name.into(),
            arguments,
            id: id.map(str::to_string),
        }
    }

    #[test]
    fn every_syntax_one_and_several() {
        let a = call("a", json!({"x": 1}), None);
        let b = call("b", json!({}), None);
        let cases = [
            (Syntax::Json, "{\"name\": \"a\", \"arguments\": {\"x\":1}}"),
            (Syntax::Json, "{\"name\": \"a\", \"arguments\": {\"x\":1}}\n{\"name\": \"b\", \"arguments\": {}}"),
            (Syntax::Llama3, " {\"name\": \"a\", \"parameters\": {\"x\": 1}}\n{\"name\":\"b\",\"parameters\":{}}\n"),
            (Syntax::Hermes, "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\":1}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>"),
        ];
        for (syntax, text) in cases {
            let calls = parse_tool_calls(syntax, text).unwrap();
            assert_eq!(calls[0], a, "{text}");
            if calls.len() > 1 {
                assert_eq!(calls[1], b);
            }
        }
        let text = "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"x\":1}, \"id\": \"abcdefghi\"}, {\"name\": \"b\", \"arguments\": {}, \"id\": \"123456789\"}]";
        assert_eq!(
            parse_tool_calls(Syntax::Mistral, text).unwrap(),
            [
                call("a", json!({"x": 1}), Some("abcdefghi")),
                call("b", json!({}), Some("123456789"))
            ]
        );
    }

    #[test]
    fn clear_errors() {
        let cases = [
            (
                Syntax::Hermes,
                "The weather is fine.",
                "is no hermes tool call",
            ),
            (Syntax::Json, "", "is no json tool call"),
            (Syntax::Hermes, " \n\t ", "is no hermes tool call"),
            (
                Syntax::Mistral,
                "{\"name\": \"a\"}",
                "starts with `[TOOL_CALLS]`",
            ),
            (
                Syntax::Json,
                "{\"name\": \"a\", \"arguments\": {}",
                "call 1: invalid JSON",
            ),
            (
                Syntax::Json,
                "{\"name\": \"a\", \"parameters\": {}}",
                "has no `arguments`",
            ),
            (
                Syntax::Llama3,
                "{\"name\": \"a\", \"parameters\": []}",
                "must be a JSON object",
            ),
            (
                Syntax::Json,
                "{\"name\": \"a\", \"arguments\": {}, \"id\": \"x\"}",
                "unexpected key `id`",
            ),
            (
                Syntax::Json,
                "{\"name\": 3, \"arguments\": {}}",
                "`name` must be a non-empty string",
            ),
            (
                Syntax::Json,
                "{\"name\": \"a\", \"arguments\": {}} and more",
                "unexpected text after the calls",
            ),
            (
                Syntax::Hermes,
                "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}",
                "without `</tool_call>`",
            ),
            (
                Syntax::Hermes,
                "<tool_call>{\"name\": \"a\", \"arguments\": {}} x</tool_call>",
                "before `</tool_call>`",
            ),
            (Syntax::Mistral, "[TOOL_CALLS][]", "has no call"),
            (
                Syntax::Mistral,
                "[TOOL_CALLS]{\"name\": \"a\", \"arguments\": {}}",
                "JSON array",
            ),
            (
                Syntax::Mistral,
                "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}, \"id\": 1}]",
                "`id` must be a string",
            ),
        ];
        for (syntax, text, words) in cases {
            let err = parse_tool_calls(syntax, text).unwrap_err().to_string();
            assert!(err.contains(words), "{text:?}: {err}");
        }
        let err = parse_tool_calls(
            Syntax::Json,
            "{\"name\": \"a\",\n \"arguments\": {\"x\": tru}}",
        )
        .unwrap_err();
        assert!(
            matches!(err, CallParseError::Json { offset: 37, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn a_closing_tag_inside_an_argument_is_text() {
        let text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"q\": \"</tool_call>\"}}\n</tool_call>";
        let calls = parse_tool_calls(Syntax::Hermes, text).unwrap();
        assert_eq!(calls[0].arguments["q"], "</tool_call>");
        let broken = "<tool_call>\n{\"name\": \"f\", \"arguments\": {}} x\n</tool_call>";
        assert!(parse_tool_calls(Syntax::Hermes, broken).is_err());
    }

    #[test]
    fn replies_split_at_the_trigger() {
        let reply = parse_reply(
            Syntax::Hermes,
            "Let me look.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>",
        )
        .unwrap();
        assert_eq!(reply.content.as_deref(), Some("Let me look."));
        assert_eq!(reply.calls.len(), 1);
        let reply = parse_reply(Syntax::Json, "{\"name\":\"compact\"} is no call").unwrap();
        assert!(reply.calls.is_empty());
        assert!(parse_reply(Syntax::Json, "x {\"name\": \"a\"}").is_err());
    }
}
