//! Tool calls on a model, local or remote: the tool list compiled to the grammar of its calls
//! (`gbnfc_compiler::tools`), the tools shown to the model the way its family was
//! trained, constrained generation, the calls read back and every call's arguments
//! validated against its tool's schema, with retries that feed the errors back. What comes
//! out is an OpenAI assistant message: `tool_calls` (ids `call_…`, `arguments` as a JSON
//! string) or, when `auto` let the model answer, prose `content`.

use gbnfc_compiler::tools::{
    compile_tools, parse_reply, read_tools, CompiledTools, Syntax, ToolChoice, ToolOptions,
    ToolSpec,
};
use serde_json::Value;

use crate::attempts::{self, Verdict};
use crate::chat::{self, Message, ToolCall};
use crate::chat_model::ChatModel;
use crate::generate::{Finish, GenerateOptions, Generator, Stats};
use crate::openai::{self, FinishReason, Usage};
use crate::tool_retrieval::{self, Retrieval, Shortlist};
use crate::validate::Validator;
use crate::BridgeError;

/// The sampling temperature of tool calls where the caller gives none (`call`, `mcp`, and
/// requests with `tools` to `serve`), instead of the 0.8 of other outputs. Which tool
/// and which argument values are decisions, not prose: on the README's command ("What's
/// the weather in Chengdu tomorrow?", weather tools, SmolLM2-135M) the call names Chengdu
/// on 13 of the seeds 1–20 at 0.8 ("Sinbad, China", "Sydney", "welders" on others) and
/// on all 20 at 0.2 (`cli/tests/call_cli.rs`).
pub const TOOL_CALL_TEMPERATURE: f32 = 0.2;

/// What to compile and how to run it.
#[derive(Debug, Clone)]
pub struct CallSpec {
    /// The tool list, in any shape `gbnfc_compiler::tools` reads (OpenAI, legacy
    /// functions, MCP, Anthropic, a chat request body).
    pub tools: Value,
    /// `tool_choice`; `None`: the input's, else `auto`.
    pub choice: Option<ToolChoice>,
    /// Parallel calls; `None`: the input's `parallel_tool_calls`, else one call.
    pub parallel: Option<bool>,
    /// The most calls in one reply, with parallel calls.
    pub max_calls: u32,
    /// The call syntax; `None`: the one the model's chat template uses ([`chat::syntax_for`]).
    pub syntax: Option<Syntax>,
    /// Absent `additionalProperties` means `false` in argument schemas, so the model
    /// writes only declared arguments. Sound either way; on by default, because extra
    /// keys are what a small model invents and what tools rarely accept.
    pub closed: bool,
    /// Further attempts when a call fails validation or the output is cut off.
    pub retries: usize,
    /// Which tools a conversation is shown ([`PreparedCalls::for_conversation`]).
    pub retrieval: Retrieval,
    /// Show the tools in the compact rendering ([`crate::compact_tools`]).
    pub compact: bool,
}

impl Default for CallSpec {
    fn default() -> Self {
        CallSpec {
            tools: Value::Null,
            choice: None,
            parallel: None,
            max_calls: gbnfc_compiler::tools::DEFAULT_MAX_CALLS,
            syntax: None,
            closed: true,
            retries: 2,
            retrieval: Retrieval::Auto,
            compact: false,
        }
    }
}

/// A tool list compiled for one model.
#[derive(Debug)]
pub struct PreparedCalls {
    /// The compiled tools, grammar and settings.
    pub compiled: CompiledTools,
    /// One validator per tool, in the order of `compiled.tools`.
    validators: Vec<Validator>,
    /// The `response_format` answer's validator, when one came with the tools.
    answer: Option<Validator>,
    /// The tools as shown to the model (OpenAI function definitions).
    pub definitions: Value,
    /// The tools retrieval chose, when it narrowed the list.
    pub shortlist: Option<Shortlist>,
}

/// The tools `messages` are shown under `spec.retrieval` ([`tool_retrieval::shortlist`]),
/// or `None` for every tool.
///
/// # Errors
/// [`BridgeError::Tools`] for a tool list that cannot be read; a remote engine's failure
/// to count tokens.
pub fn shortlist(
    model: &(impl ChatModel + ?Sized),
    spec: &CallSpec,
    messages: &[Message],
) -> Result<Option<Shortlist>, BridgeError> {
    if spec.retrieval == Retrieval::All {
        return Ok(None);
    }
    let list = read_tools(&spec.tools, None).map_err(|e| BridgeError::Tools(e.to_string()))?;
    let choice = spec.choice.clone().or(list.choice).unwrap_or_default();
    tool_retrieval::shortlist(
        model,
        &list.tools,
        &choice,
        messages,
        spec.retrieval,
        spec.compact,
    )
}

impl PreparedCalls {
    /// Compiles `spec` for the call syntax of `model`, every tool shown.
    ///
    /// # Errors
    /// [`BridgeError::Tools`] for a bad tool list or option; [`BridgeError::Schema`] when
    /// a tool's schema is one `jsonschema` cannot use.
    pub fn new(
        model: &(impl ChatModel + ?Sized),
        spec: &CallSpec,
    ) -> Result<PreparedCalls, BridgeError> {
        PreparedCalls::narrowed(model, spec, None)
    }

    /// Compiles `spec` with the tools `messages` are shown under `spec.retrieval`.
    ///
    /// # Errors
    /// As [`PreparedCalls::new`].
    pub fn for_conversation(
        model: &(impl ChatModel + ?Sized),
        spec: &CallSpec,
        messages: &[Message],
    ) -> Result<PreparedCalls, BridgeError> {
        let chosen = shortlist(model, spec, messages)?;
        PreparedCalls::narrowed(model, spec, chosen)
    }

    /// Compiles `spec` showing the tools of `shortlist` (every tool when `None`).
    ///
    /// # Errors
    /// As [`PreparedCalls::new`]; [`BridgeError::Tools`] when the shortlist names a tool
    /// the list lacks or leaves out a forced one.
    pub fn narrowed(
        model: &(impl ChatModel + ?Sized),
        spec: &CallSpec,
        shortlist: Option<Shortlist>,
    ) -> Result<PreparedCalls, BridgeError> {
        let syntax = spec
            .syntax
            .unwrap_or_else(|| chat::syntax_for(model.chat_template().as_deref()));
        let options = ToolOptions {
            syntax,
            choice: spec.choice.clone(),
            parallel: spec.parallel,
            max_calls: spec.max_calls,
            closed: spec.closed,
            shown: shortlist.as_ref().map(|s| s.names.clone()),
            ..ToolOptions::default()
        };
        let compiled =
            compile_tools(&spec.tools, &options).map_err(|e| BridgeError::Tools(e.to_string()))?;
        let validators = compiled
            .tools
            .iter()
            .map(|t| Validator::new(&t.spec.parameters))
            .collect::<Result<Vec<_>, _>>()?;
        let answer = compiled
            .response_format
            .as_ref()
            .map(|format| Validator::new(&format.value))
            .transpose()?;
        let specs: Vec<ToolSpec> = compiled.tools.iter().map(|t| t.spec.clone()).collect();
        let definitions = chat::tool_definitions(&specs, spec.compact);
        Ok(PreparedCalls {
            compiled,
            validators,
            answer,
            definitions,
            shortlist,
        })
    }

    /// `messages` as the model gets them: the tools shown in the system prompt, unless
    /// the choice is `none`.
    pub fn conversation(&self, messages: &[Message]) -> Vec<Message> {
        if self.compiled.choice == ToolChoice::None {
            messages.to_vec()
        } else {
            chat::with_tools(messages, &self.definitions)
        }
    }

    /// Reads a finished reply: prose and calls, each call's arguments validated. Returns
    /// the problems (empty when the reply is good) and the reply.
    pub fn check(&self, text: &str) -> (Vec<String>, Option<String>, Vec<ToolCall>) {
        if self.compiled.choice == ToolChoice::None {
            // No tools this turn: the whole text is the answer.
            let answer = text.trim().to_string();
            return (self.answer_problems(&answer), Some(answer), Vec::new());
        }
        let reply = match parse_reply(self.compiled.syntax, text) {
            Ok(reply) => reply,
            Err(e) => {
                return (
                    vec![format!("the tool call cannot be read: {e}")],
                    None,
                    Vec::new(),
                )
            }
        };
        let mut problems = Vec::new();
        let mut calls = Vec::new();
        for call in reply.calls {
            let index = self
                .compiled
                .tools
                .iter()
                .position(|t| t.spec.name == call.name);
            match index {
                None => problems.push(format!("`{}` is not one of the tools", call.name)),
                Some(i) => {
                    problems.extend(
                        self.validators[i]
                            .errors(&call.arguments)
                            .into_iter()
                            .map(|e| format!("{}: arguments {e}", call.name)),
                    );
                }
            }
            calls.push(ToolCall {
                id: openai::call_id(),
                name: call.name,
                arguments: call.arguments.to_string(),
            });
        }
        if calls.is_empty() && self.compiled.choice != ToolChoice::Auto {
            problems.push("a tool call is required, but the answer makes none".to_string());
        }
        if calls.is_empty() {
            let answer = reply.content.clone().unwrap_or_default();
            problems.extend(self.answer_problems(&answer));
        }
        (problems, reply.content, calls)
    }

    /// What is wrong with an answer under the `response_format` (nothing without one).
    fn answer_problems(&self, answer: &str) -> Vec<String> {
        let Some(validator) = &self.answer else {
            return Vec::new();
        };
        match serde_json::from_str::<Value>(answer) {
            Ok(value) => validator.errors(&value),
            Err(e) => vec![format!("the answer is not JSON: {e}")],
        }
    }
}

/// The assistant's reply.
#[derive(Debug, Clone)]
pub struct CallReply {
    /// The assistant message (`content` and/or `tool_calls`).
    pub message: Message,
    /// `tool_calls` when it calls tools, `stop` for a complete answer, `length` for free
    /// prose cut off by the token budget.
    pub finish_reason: FinishReason,
    /// The raw text the model wrote (the last attempt).
    pub text: String,
    /// Attempts made (1 when the first was good).
    pub attempts: usize,
    /// Costs of all attempts together.
    pub stats: Stats,
}

impl CallReply {
    /// Token counts for `usage`.
    pub fn usage(&self) -> Usage {
        Usage::of(&self.stats)
    }

    /// The reply as an OpenAI `chat.completion` object.
    pub fn chat_completion(&self, model: &str) -> Value {
        openai::chat_completion(model, &self.message, self.finish_reason, self.usage())
    }
}

/// Runs `messages` with the tools of `prepared` to an assistant reply whose calls are
/// valid (or prose, where `auto` allows it).
///
/// # Errors
/// [`BridgeError::Truncated`] when every attempt ran out of tokens,
/// [`BridgeError::Invalid`] listing each attempt's problems otherwise; any engine error.
pub fn call(
    generator: &(impl Generator + ?Sized),
    messages: &[Message],
    prepared: &PreparedCalls,
    options: &GenerateOptions,
    retries: usize,
) -> Result<CallReply, BridgeError> {
    let conversation = prepared.conversation(messages);
    let grammar = prepared.compiled.grammar.as_ref();
    attempts::with_retries(
        generator,
        conversation,
        grammar,
        Some(prepared.compiled.syntax),
        options,
        retries,
        |generation, attempt| match generation.finish {
            // Free prose (no tools offered, no response_format): like the hosted APIs, a
            // cut-off answer comes back as it is, with finish_reason `length`.
            Finish::Truncated if grammar.is_none() => Verdict::Accept(CallReply {
                message: Message::assistant(generation.text.trim().to_string())
                    .with_reasoning(generation.reasoning.clone()),
                finish_reason: FinishReason::Length,
                text: generation.text.clone(),
                attempts: attempt.number,
                stats: attempt.stats.clone(),
            }),
            Finish::Truncated => {
                Verdict::Retry(vec![attempts::cut_off(generation.stats.generated_tokens)])
            }
            Finish::Stop => {
                let (problems, content, calls) = prepared.check(&generation.text);
                if !problems.is_empty() {
                    return Verdict::Retry(problems);
                }
                let finish_reason = if calls.is_empty() {
                    FinishReason::Stop
                } else {
                    FinishReason::ToolCalls
                };
                let message = Message {
                    content: if calls.is_empty() {
                        Some(content.unwrap_or_else(|| generation.text.trim().to_string()))
                    } else {
                        content
                    },
                    tool_calls: calls,
                    reasoning_content: generation.reasoning.clone(),
                    ..Message::assistant("")
                };
                Verdict::Accept(CallReply {
                    message,
                    finish_reason,
                    text: generation.text.clone(),
                    attempts: attempt.number,
                    stats: attempt.stats.clone(),
                })
            }
        },
    )
}
