//! The host loop: MCP servers' tools offered to a local model under a grammar, each call
//! executed through `tools/call`, each result fed back, until the model answers.
//!
//! Each turn the model either calls tools — the grammar makes every call well formed, and
//! the two hops of validation ([`crate::mcp`]) check the arguments before a tool runs and
//! the `structuredContent` after — or answers: in prose, or in the `final_schema`'s JSON
//! when one is given. Refused, failed, hung or crashed calls go back to the model as tool
//! errors, and to the caller through [`LoopEvent`]s; nothing is passed on as fact that
//! failed validation. The last of `max_turns` turns offers no tools, so the loop always
//! ends with an answer. Tool retrieval ([`crate::tool_retrieval`]) ranks the tools again
//! every turn, against the conversation so far: a tool result can bring in a tool the
//! request alone did not.

use serde_json::{json, Value};

use crate::chat::Message;
use crate::generate::{GenerateOptions, Generator, Stats};
use crate::mcp::{tool_message_content, McpHub};
use crate::tool_calls::{call, CallSpec, PreparedCalls, TOOL_CALL_TEMPERATURE};
use crate::tool_retrieval::Retrieval;
use crate::BridgeError;
use gbnfc_compiler::tools::ToolChoice;

/// How the loop runs.
#[derive(Debug, Clone)]
pub struct LoopOptions {
    /// Model turns at most (each turn is one generation: calls or the answer; the last
    /// one offers no tools, so it is the answer).
    pub max_turns: usize,
    /// The answer must be JSON valid under this schema (or `response_format`); `None`: prose.
    pub final_schema: Option<Value>,
    /// Sampling (by default at [`TOOL_CALL_TEMPERATURE`]).
    pub generate: GenerateOptions,
    /// Further attempts per turn when a call fails validation.
    pub retries: usize,
    /// Parallel calls in one turn.
    pub parallel: bool,
    /// `tool_choice` for the first turn (`required`, or a tool's name, makes the model
    /// call before it answers); later turns are `auto`. `None`: `auto` throughout.
    pub first_choice: Option<ToolChoice>,
    /// Which tools each turn is shown.
    pub retrieval: Retrieval,
    /// Show them in the compact rendering ([`crate::compact_tools`]).
    pub compact_tools: bool,
}

impl Default for LoopOptions {
    fn default() -> Self {
        LoopOptions {
            max_turns: 6,
            final_schema: None,
            generate: GenerateOptions {
                temperature: TOOL_CALL_TEMPERATURE,
                ..GenerateOptions::default()
            },
            retries: 2,
            parallel: false,
            first_choice: None,
            retrieval: Retrieval::Auto,
            compact_tools: false,
        }
    }
}

/// Something the caller may want to show as it happens.
#[derive(Debug, Clone)]
pub enum LoopEvent {
    /// A turn begins, the model shown these tools (in the list's order; none on the last
    /// turn, which must answer).
    Turn {
        /// The turn's number, from 1.
        turn: usize,
        /// The tools shown.
        shown: Vec<String>,
        /// How many tools the hubs offer.
        listed: usize,
    },
    /// The model called a tool with these arguments.
    Call {
        /// The tool's (hub) name.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
    /// The call's result as the model will see it, and whether it is an error (refused,
    /// invalid, failed, timed out, crashed).
    Result {
        /// The tool's name.
        name: String,
        /// The `tool` message content.
        content: String,
        /// An error rather than a result.
        is_error: bool,
    },
}

/// How the loop ended.
#[derive(Debug, Clone)]
pub struct LoopResult {
    /// The whole conversation as OpenAI messages, the answer last (if there is one).
    pub transcript: Vec<Message>,
    /// The model's answer: prose, or the `final_schema` JSON text (`None` only when
    /// `max_turns` is 0).
    pub answer: Option<String>,
    /// Model turns taken.
    pub turns: usize,
    /// Tool calls made (refused ones included).
    pub calls: usize,
    /// Generation costs of every turn.
    pub stats: Stats,
}

/// Runs the loop over `messages` with the hub's tools (see the module documentation).
/// `on_event` sees each call and result as it happens.
///
/// # Errors
/// [`BridgeError::Tools`] when the hub's tools cannot be compiled; an engine error, or a
/// turn whose every attempt failed validation ([`BridgeError::Invalid`]) or ran out of
/// tokens ([`BridgeError::Truncated`]).
pub fn run_loop(
    generator: &(impl Generator + ?Sized),
    hub: &mut McpHub,
    messages: &[Message],
    options: &LoopOptions,
    mut on_event: impl FnMut(&LoopEvent),
) -> Result<LoopResult, BridgeError> {
    let mut input = hub.tools_list();
    if let Some(schema) = &options.final_schema {
        input["response_format"] = response_format(schema);
    }
    let spec = CallSpec {
        tools: input,
        parallel: Some(options.parallel),
        retries: options.retries,
        retrieval: options.retrieval,
        compact: options.compact_tools,
        ..CallSpec::default()
    };
    let listed = hub.tools().len();
    let mut transcript = messages.to_vec();
    let mut stats = Stats::default();
    let mut calls = 0;
    for turn in 1..=options.max_turns {
        let turn_options = GenerateOptions {
            seed: options.generate.seed.wrapping_add(1000 * turn as u32),
            ..options.generate
        };
        // The last turn offers no tools, so the loop always ends with an answer.
        let choice = match &options.first_choice {
            _ if turn == options.max_turns => Some(ToolChoice::None),
            Some(first) if turn == 1 => Some(first.clone()),
            _ => None,
        };
        let this_turn = PreparedCalls::for_conversation(
            generator,
            &CallSpec {
                choice,
                ..spec.clone()
            },
            &transcript,
        )?;
        let shown = if this_turn.compiled.choice == ToolChoice::None {
            Vec::new()
        } else {
            this_turn
                .compiled
                .tools
                .iter()
                .map(|t| t.spec.name.clone())
                .collect()
        };
        on_event(&LoopEvent::Turn {
            turn,
            shown,
            listed,
        });
        let reply = call(
            generator,
            &transcript,
            &this_turn,
            &turn_options,
            options.retries,
        )?;
        stats.add(&reply.stats);
        if reply.message.tool_calls.is_empty() {
            let answer = reply.message.content.clone().unwrap_or_default();
            transcript.push(reply.message);
            return Ok(LoopResult {
                transcript,
                answer: Some(answer),
                turns: turn,
                calls,
                stats,
            });
        }
        let requested = reply.message.tool_calls.clone();
        transcript.push(reply.message);
        for tool_call in requested {
            calls += 1;
            let arguments: Value =
                serde_json::from_str(&tool_call.arguments).unwrap_or(Value::Null);
            on_event(&LoopEvent::Call {
                name: tool_call.name.clone(),
                arguments: arguments.clone(),
            });
            let outcome = hub.call_tool(&tool_call.name, arguments);
            let is_error = outcome.as_ref().map_or(true, |o| o.is_error());
            let content = tool_message_content(&outcome);
            on_event(&LoopEvent::Result {
                name: tool_call.name.clone(),
                content: content.clone(),
                is_error,
            });
            transcript.push(Message::tool(tool_call.id, tool_call.name, content));
        }
    }
    Ok(LoopResult {
        transcript,
        answer: None,
        turns: options.max_turns,
        calls,
        stats,
    })
}

/// A schema as a `response_format` (one already in that shape is kept).
fn response_format(schema: &Value) -> Value {
    if schema.get("type").and_then(Value::as_str) == Some("json_schema") {
        return schema.clone();
    }
    json!({"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}})
}
