//! Reading a `/v1/chat/completions` body: every field OpenAI's chat API takes, and
//! llama.cpp's `grammar` extension, and gbnfc's `tools_top_k` (tool retrieval) and
//! `reasoning_budget`, into a [`ChatRequest`].
//!
//! A field the server cannot honour (`n` above 1, `logprobs`, a penalty, `logit_bias`, …)
//! is a 400 that names it; a field OpenAI does not know is a 400 too (as OpenAI answers
//! it). Nothing is ignored in silence, except `user` and `metadata`, which only label a
//! request. Choices where OpenAI's reference is silent: `model` may be left out (the
//! served model answers); `parallel_tool_calls` defaults to `true`, as OpenAI's does;
//! `stop` applies to free text only, since cutting a constrained output would break it.

use serde_json::{Map, Value};

use super::api_error::ApiError;
use crate::chat::Message;
use crate::generate::GenerateOptions;
use crate::tool_retrieval::Retrieval;

/// Fields read but never acted on: they label a request.
const LABELS: &[&str] = &["user", "metadata"];

/// What the output must be.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Free text.
    Text,
    /// A `response_format` of type `json_schema` or `json_object` (or llama.cpp's
    /// `json_schema` field, wrapped as one).
    Schema(Value),
    /// llama.cpp's `grammar` extension: GBNF text.
    Grammar(String),
    /// A tool list with `tool_choice`, `parallel_tool_calls` and `response_format`, as a
    /// chat request body `gbnfc_compiler::tools` reads.
    Tools(Value),
}

impl Output {
    /// The request field whose content makes the grammar (for error messages).
    pub fn param(&self) -> Option<&'static str> {
        match self {
            Output::Text => None,
            Output::Schema(_) => Some("response_format"),
            Output::Grammar(_) => Some("grammar"),
            Output::Tools(_) => Some("tools"),
        }
    }

    /// The text that determines the compiled grammar: the grammar cache's key.
    pub fn cache_key(&self) -> Option<String> {
        match self {
            Output::Text => None,
            Output::Schema(value) => Some(format!("schema:{value}")),
            Output::Grammar(text) => Some(format!("grammar:{text}")),
            Output::Tools(value) => Some(format!("tools:{value}")),
        }
    }
}

/// A chat completion request, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The model name to echo back.
    pub model: Option<String>,
    /// The conversation.
    pub messages: Vec<Message>,
    /// What constrains the answer.
    pub output: Output,
    /// Sampling and budget (the server's defaults where the request is silent).
    pub options: GenerateOptions,
    /// Stop sequences (free text only).
    pub stop: Vec<String>,
    /// Answer as Server-Sent Events.
    pub stream: bool,
    /// With `stream`: a last chunk with `usage`.
    pub include_usage: bool,
    /// The `tools_top_k` extension: the best K tools shown, or every tool (`0`); `None`:
    /// the server's setting.
    pub retrieval: Option<Retrieval>,
}

/// Reads a request body (already parsed as JSON) with `defaults` for what it leaves out
/// (`tool_defaults` when it has `tools`); `reasons`: the served model thinks before it
/// answers ([`crate::reasoning`]).
///
/// # Errors
/// A 400 naming the field that is wrong.
pub fn read(
    body: &Value,
    defaults: &GenerateOptions,
    tool_defaults: &GenerateOptions,
    reasons: bool,
) -> Result<ChatRequest, ApiError> {
    let object = body
        .as_object()
        .ok_or_else(|| ApiError::bad_request("the request body must be a JSON object", None))?;
    for key in object.keys() {
        check_known(key, object)?;
    }
    let model = match object.get("model") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(name.clone()),
        Some(_) => return Err(wrong("model", "a string")),
    };
    let messages = read_messages(object)?;
    let output = read_output(object)?;
    let defaults = match output {
        Output::Tools(_) => tool_defaults,
        _ => defaults,
    };
    let mut options = read_options(object, defaults)?;
    options.reasoning_budget = read_reasoning_budget(object, defaults.reasoning_budget, reasons)?;
    let stop = read_stop(object)?;
    if !stop.is_empty() && output != Output::Text {
        return Err(ApiError::bad_request(
            "`stop` cannot be combined with response_format, tools or grammar: cutting \
             a constrained answer at a stop sequence would break it; leave `stop` out",
            Some("stop"),
        ));
    }
    let stream = flag(object, "stream")?.unwrap_or(false);
    let include_usage = match object.get("stream_options") {
        None | Some(Value::Null) => false,
        Some(Value::Object(options)) => {
            if !stream {
                return Err(ApiError::bad_request(
                    "`stream_options` is only allowed with `stream: true`",
                    Some("stream_options"),
                ));
            }
            for key in options.keys() {
                if key != "include_usage" {
                    return Err(ApiError::bad_request(
                        format!("unknown stream option `{key}` (known: include_usage)"),
                        Some("stream_options"),
                    ));
                }
            }
            match options.get("include_usage") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(wrong("stream_options.include_usage", "true or false")),
            }
        }
        Some(_) => return Err(wrong("stream_options", "an object")),
    };
    let retrieval = match object.get("tools_top_k") {
        None | Some(Value::Null) => None,
        Some(value) => match value.as_u64() {
            Some(0) => Some(Retrieval::All),
            Some(k) => Some(Retrieval::Top(usize::try_from(k).unwrap_or(usize::MAX))),
            None => {
                return Err(wrong(
                    "tools_top_k",
                    "a whole number: the tools shown, or 0 for every tool",
                ))
            }
        },
    };
    Ok(ChatRequest {
        model,
        messages,
        output,
        options,
        stop,
        stream,
        include_usage,
        retrieval,
    })
}

/// Accepts a known field whose value the server honours; refuses the rest.
fn check_known(key: &str, object: &Map<String, Value>) -> Result<(), ApiError> {
    let value = &object[key];
    let unsupported = |why: &str| {
        Err(ApiError::bad_request(
            format!("`{key}` is not supported by this server: {why}"),
            Some(key),
        ))
    };
    match key {
        "messages"
        | "model"
        | "tools"
        | "tool_choice"
        | "parallel_tool_calls"
        | "response_format"
        | "max_tokens"
        | "max_completion_tokens"
        | "temperature"
        | "top_p"
        | "seed"
        | "stop"
        | "stream"
        | "stream_options"
        | "grammar"
        | "json_schema"
        | "tools_top_k" => Ok(()),
        _ if LABELS.contains(&key) => Ok(()),
        "n" => match value.as_u64() {
            Some(1) => Ok(()),
            _ if value.is_null() => Ok(()),
            _ => unsupported("it generates one choice per request; send `n: 1` or leave it out"),
        },
        "logprobs" => match value {
            Value::Null | Value::Bool(false) => Ok(()),
            _ => unsupported("log probabilities are not reported"),
        },
        "top_logprobs" => match value {
            Value::Null => Ok(()),
            _ => unsupported("log probabilities are not reported"),
        },
        "frequency_penalty" | "presence_penalty" => match value.as_f64() {
            Some(0.0) => Ok(()),
            _ if value.is_null() => Ok(()),
            _ => unsupported("only 0 is honoured; use the server's --repeat-penalty"),
        },
        "logit_bias" => match value {
            Value::Null => Ok(()),
            Value::Object(map) if map.is_empty() => Ok(()),
            _ => unsupported("token biases are not applied"),
        },
        "store" => match value {
            Value::Null | Value::Bool(false) => Ok(()),
            _ => unsupported("completions are not stored"),
        },
        "modalities" => match value.as_array().map(Vec::as_slice) {
            Some([only]) if only == "text" => Ok(()),
            _ if value.is_null() => Ok(()),
            _ => unsupported("only text is generated"),
        },
        "service_tier" => match value.as_str() {
            Some("auto" | "default") => Ok(()),
            _ if value.is_null() => Ok(()),
            _ => unsupported("there is one tier"),
        },
        "functions" | "function_call" => unsupported(
            "the legacy function-calling fields are not served; send `tools` and `tool_choice`",
        ),
        "reasoning_effort" | "reasoning_budget" => Ok(()),
        "audio" | "prediction" | "web_search_options" | "verbosity" | "prompt_cache_key"
        | "safety_identifier" => match value {
            Value::Null => Ok(()),
            _ => unsupported("this server does not implement it"),
        },
        _ => Err(ApiError::bad_request(
            format!("unrecognized request field `{key}`"),
            Some(key),
        )),
    }
}

fn read_messages(object: &Map<String, Value>) -> Result<Vec<Message>, ApiError> {
    let Some(value) = object.get("messages") else {
        return Err(ApiError::bad_request(
            "`messages` is required: an array of chat messages",
            Some("messages"),
        ));
    };
    let Some(array) = value.as_array() else {
        return Err(wrong("messages", "an array"));
    };
    if array.is_empty() {
        return Err(ApiError::bad_request(
            "`messages` is empty: send at least one message",
            Some("messages"),
        ));
    }
    array
        .iter()
        .enumerate()
        .map(|(i, m)| {
            Message::from_json(m)
                .map_err(|e| ApiError::bad_request(e.to_string(), Some(&format!("messages[{i}]"))))
        })
        .collect()
}

/// What constrains the answer: tools, a `response_format`, llama.cpp's `grammar` or
/// `json_schema`, or nothing.
fn read_output(object: &Map<String, Value>) -> Result<Output, ApiError> {
    let present = |key: &str| object.get(key).is_some_and(|v| !v.is_null());
    let tools = match object.get("tools") {
        None | Some(Value::Null) => None,
        Some(Value::Array(list)) if list.is_empty() => None,
        Some(Value::Array(list)) => Some(list),
        Some(_) => return Err(wrong("tools", "an array of tools")),
    };
    if tools.is_none() {
        for key in ["tool_choice", "parallel_tool_calls"] {
            if present(key) {
                return Err(ApiError::bad_request(
                    format!("`{key}` is only allowed when `tools` are given"),
                    Some(key),
                ));
            }
        }
    }
    let response_format = match object.get("response_format") {
        None | Some(Value::Null) => None,
        Some(format) => match format.get("type").and_then(Value::as_str) {
            Some("text") => None,
            Some("json_schema" | "json_object") => Some(format.clone()),
            _ => {
                return Err(ApiError::bad_request(
                    "`response_format.type` must be `text`, `json_object` or `json_schema`",
                    Some("response_format"),
                ))
            }
        },
    };
    let llama_schema = match object.get("json_schema") {
        None | Some(Value::Null) => None,
        Some(schema) => Some(schema.clone()),
    };
    let grammar = match object.get("grammar") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(_) => return Err(wrong("grammar", "a GBNF string")),
    };
    // Tools may come with a `response_format` (the answer when no tool is called); a
    // grammar or llama.cpp's schema constrains the whole answer, so it comes alone.
    let others = [tools.is_some(), response_format.is_some()];
    let whole = [llama_schema.is_some(), grammar.is_some()];
    let given = |flags: &[bool]| flags.iter().filter(|&&f| f).count();
    if given(&whole) > 0 && given(&whole) + given(&others) > 1 {
        return Err(ApiError::bad_request(
            "`grammar` and `json_schema` each constrain the whole answer: send one of them, \
             without tools or response_format",
            Some(if grammar.is_some() {
                "grammar"
            } else {
                "json_schema"
            }),
        ));
    }
    if let Some(list) = tools {
        let mut body = Map::new();
        body.insert("tools".into(), Value::Array(list.clone()));
        for key in ["tool_choice", "parallel_tool_calls"] {
            if let Some(value) = object.get(key).filter(|v| !v.is_null()) {
                body.insert(key.into(), value.clone());
            }
        }
        body.entry("parallel_tool_calls")
            .or_insert(Value::Bool(true));
        if let Some(format) = response_format {
            body.insert("response_format".into(), format);
        }
        return Ok(Output::Tools(Value::Object(body)));
    }
    if let Some(format) = response_format {
        return Ok(Output::Schema(format));
    }
    if let Some(schema) = llama_schema {
        return Ok(Output::Schema(schema));
    }
    if let Some(text) = grammar {
        return Ok(Output::Grammar(text));
    }
    Ok(Output::Text)
}

fn read_options(
    object: &Map<String, Value>,
    defaults: &GenerateOptions,
) -> Result<GenerateOptions, ApiError> {
    let mut options = *defaults;
    for key in ["max_completion_tokens", "max_tokens"] {
        match object.get(key) {
            None | Some(Value::Null) => {}
            Some(value) => match value.as_u64() {
                Some(n) if n >= 1 => {
                    options.max_tokens = usize::try_from(n).unwrap_or(usize::MAX);
                    break;
                }
                _ => return Err(wrong(key, "an integer ≥ 1")),
            },
        }
    }
    if let Some(t) = number(object, "temperature")? {
        if !(0.0..=2.0).contains(&t) {
            return Err(wrong("temperature", "a number from 0 to 2"));
        }
        options.temperature = t as f32;
    }
    if let Some(p) = number(object, "top_p")? {
        if !(p > 0.0 && p <= 1.0) {
            return Err(wrong("top_p", "a number in (0, 1]"));
        }
        options.top_p = p as f32;
    }
    match object.get("seed") {
        None | Some(Value::Null) => {}
        // OpenAI's seed is a 64-bit integer; llama.cpp's draw takes 32 bits: the low ones.
        Some(value) => match value.as_i64() {
            Some(seed) => options.seed = seed as u32,
            None => return Err(wrong("seed", "an integer")),
        },
    }
    Ok(options)
}

/// The reasoning budget: `reasoning_effort` scales the server's own (`none` 0, `minimal`
/// a quarter, `low` a half, `medium` all of it, `high` twice), or gbnfc's `reasoning_budget`
/// extension gives it in tokens.
fn read_reasoning_budget(
    object: &Map<String, Value>,
    default: usize,
    reasons: bool,
) -> Result<usize, ApiError> {
    let effort = object.get("reasoning_effort").filter(|v| !v.is_null());
    let budget = object.get("reasoning_budget").filter(|v| !v.is_null());
    let asked = match (effort, budget) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request(
                "give `reasoning_effort` or `reasoning_budget`, not both",
                Some("reasoning_budget"),
            ))
        }
        (Some(effort), None) => match effort.as_str() {
            Some("none") => Some(0),
            Some("minimal") => Some(default / 4),
            Some("low") => Some(default / 2),
            Some("medium") => Some(default),
            Some("high") => Some(default.saturating_mul(2)),
            _ => {
                return Err(wrong(
                    "reasoning_effort",
                    "one of none, minimal, low, medium, high",
                ))
            }
        },
        (None, Some(budget)) => match budget.as_u64() {
            Some(n) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            None => return Err(wrong("reasoning_budget", "an integer ≥ 0")),
        },
        (None, None) => None,
    };
    match asked {
        Some(n) if n > 0 && !reasons => Err(ApiError::bad_request(
            "the served model does not reason: its chat template names no reasoning markers \
             (start the server with --reasoning-markers OPEN,CLOSE for one that does), so \
             leave reasoning_effort and reasoning_budget out",
            Some(if effort.is_some() {
                "reasoning_effort"
            } else {
                "reasoning_budget"
            }),
        )),
        Some(n) => Ok(n),
        None => Ok(default),
    }
}

fn read_stop(object: &Map<String, Value>) -> Result<Vec<String>, ApiError> {
    let stop = match object.get("stop") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|s| s.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| wrong("stop", "a string or an array of strings"))?,
        Some(_) => return Err(wrong("stop", "a string or an array of strings")),
    };
    if stop.len() > 4 || stop.iter().any(String::is_empty) {
        return Err(wrong("stop", "up to 4 non-empty strings"));
    }
    Ok(stop)
}

fn number(object: &Map<String, Value>, key: &str) -> Result<Option<f64>, ApiError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_f64()
            .map(Some)
            .ok_or_else(|| wrong(key, "a number")),
    }
}

fn flag(object: &Map<String, Value>, key: &str) -> Result<Option<bool>, ApiError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(wrong(key, "true or false")),
    }
}

fn wrong(key: &str, expected: &str) -> ApiError {
    ApiError::bad_request(format!("`{key}` must be {expected}"), Some(key))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use serde_json::json;

    fn read_body(body: Value) -> Result<ChatRequest, ApiError> {
        read(
            &body,
            &GenerateOptions::default(),
            &GenerateOptions::default(),
            false,
        )
    }

    fn user() -> Value {
        json!([{"role": "user", "content": "hi"}])
    }

    #[test]
    fn a_plain_request_is_free_text_with_defaults() {
        let request = read_body(json!({"model": "m", "messages": user()})).unwrap();
        assert_eq!(request.output, Output::Text);
        assert_eq!(request.options, GenerateOptions::default());
        assert_eq!(request.model.as_deref(), Some("m"));
    }

    #[test]
    fn reasoning_effort_scales_the_budget_and_needs_a_model_that_reasons() {
        let defaults = GenerateOptions::default();
        let budget = |extra: Value, reasons: bool| {
            let mut body = json!({"messages": user()});
            body.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            read(&body, &defaults, &defaults, reasons).map(|r| r.options.reasoning_budget)
        };
        let base = defaults.reasoning_budget;
        assert_eq!(budget(json!({}), true).unwrap(), base);
        assert_eq!(
            budget(json!({"reasoning_effort": "none"}), true).unwrap(),
            0
        );
        assert_eq!(
            budget(json!({"reasoning_effort": "low"}), true).unwrap(),
            base / 2
        );
        assert_eq!(
            budget(json!({"reasoning_effort": "high"}), true).unwrap(),
            base * 2
        );
        assert_eq!(budget(json!({"reasoning_budget": 5}), true).unwrap(), 5);
        assert_eq!(
            budget(json!({"reasoning_effort": "none"}), false).unwrap(),
            0
        );
        let refused = |extra: Value, reasons: bool| budget(extra, reasons).unwrap_err().message;
        assert!(refused(json!({"reasoning_effort": "low"}), false).contains("does not reason"));
        assert!(refused(json!({"reasoning_effort": "max"}), true).contains("one of none"));
        assert!(refused(json!({"reasoning_budget": -1}), true).contains("integer"));
        assert!(refused(
            json!({"reasoning_budget": 1, "reasoning_effort": "low"}),
            true
        )
        .contains("not both"));
    }

    #[test]
    fn sampling_fields_override_the_defaults() {
        let request = read_body(json!({"messages": user(), "max_completion_tokens": 7,
            "temperature": 0, "top_p": 0.5, "seed": 42}))
        .unwrap();
        assert_eq!(request.options.max_tokens, 7);
        assert_eq!(request.options.temperature, 0.0);
        assert_eq!(request.options.top_p, 0.5);
        assert_eq!(request.options.seed, 42);
    }

    #[test]
    fn fields_that_cannot_be_honoured_are_named() {
        for (key, value) in [
            ("n", json!(2)),
            ("logprobs", json!(true)),
            ("frequency_penalty", json!(0.5)),
            ("logit_bias", json!({"1": 5})),
            ("functions", json!([])),
            ("bogus", json!(1)),
        ] {
            let mut body = json!({"messages": user()});
            body[key] = value;
            let error = read_body(body).unwrap_err();
            assert_eq!(error.param.as_deref(), Some(key), "{key}");
            assert_eq!(error.status, 400);
        }
    }

    #[test]
    fn tools_carry_their_choice_and_default_to_parallel() {
        let request = read_body(json!({"messages": user(),
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
            "tool_choice": "required"})).unwrap();
        let Output::Tools(body) = request.output else {
            panic!("not tools")
        };
        assert_eq!(body["tool_choice"], "required");
        assert_eq!(body["parallel_tool_calls"], true);
    }

    #[test]
    fn tool_choice_without_tools_and_two_constraints_are_refused() {
        let error = read_body(json!({"messages": user(), "tool_choice": "auto"})).unwrap_err();
        assert_eq!(error.param.as_deref(), Some("tool_choice"));
        let error = read_body(json!({"messages": user(), "grammar": "root ::= \"a\"",
            "response_format": {"type": "json_object"}}))
        .unwrap_err();
        assert_eq!(error.param.as_deref(), Some("grammar"));
    }

    #[test]
    fn stop_applies_to_free_text_only() {
        let request = read_body(json!({"messages": user(), "stop": ["\n"]})).unwrap();
        assert_eq!(request.stop, vec!["\n".to_string()]);
        let error = read_body(json!({"messages": user(), "stop": "x",
            "response_format": {"type": "json_object"}}))
        .unwrap_err();
        assert_eq!(error.param.as_deref(), Some("stop"));
    }

    #[test]
    fn bad_messages_name_their_index() {
        let error = read_body(json!({"messages": [{"role": "user", "content": "a"}, {"role": "wizard", "content": "b"}]}))
            .unwrap_err();
        assert_eq!(error.param.as_deref(), Some("messages[1]"));
        let error = read_body(json!({"messages": []})).unwrap_err();
        assert_eq!(error.param.as_deref(), Some("messages"));
    }
}
