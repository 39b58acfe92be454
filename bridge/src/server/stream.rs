//! Streamed answers: Server-Sent Events of `chat.completion.chunk` objects, as OpenAI
//! sends them.
//!
//! One generation (no retries: what was sent cannot be taken back) whose text arrives as
//! it grows. Content goes out as `delta.content` (and a reasoning model's thinking before
//! it as `delta.reasoning_content`, as the OpenAI-compatible servers send it); under
//! tools, the text is read incrementally ([`CallStream`]): prose as content, each call as
//! a first delta with its `index`, `id`, `type` and `function.name`, then
//! `function.arguments` fragments. When the generation ends, the whole text is validated
//! as a non-streamed answer would be; then comes the chunk with `finish_reason`, the
//! `usage` chunk when `stream_options.include_usage` asked for it, and `data: [DONE]`.
//!
//! **A stream that cannot end valid ends with an error event**: `data: {"error": {...}}`
//! in OpenAI's error shape (the OpenAI SDKs raise it as an `APIError`) and no `[DONE]` —
//! when the text fails a keyword the grammar enforces by validation only, when the
//! budget cut a constrained answer, when the request's time ran out, or on an engine
//! failure. A client that goes away ends the stream's task, whose dropped receiver ends
//! the generation at the engine's next step.

use std::convert::Infallible;

use axum::response::sse::{Event, KeepAlive, Sse};
use gbnfc_compiler::tools::{CallParseError, CallStream, StreamEvent};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;

use super::api_error::ApiError;
use super::cache::Compiled;
use super::completion::Admitted;
use super::scheduler::{CancelFlag, CancelOnDrop, Job, Piece};
use crate::chat;
use crate::generate::{Finish, Generation};
use crate::openai::{self, FinishReason, Usage};
use crate::BridgeError;

/// Events buffered between the stream's task and the connection.
const EVENT_BUFFER: usize = 64;

/// The SSE response for an admitted streaming request.
pub fn respond(admitted: Admitted) -> impl axum::response::IntoResponse {
    let (events, receiver) = mpsc::channel(EVENT_BUFFER);
    tokio::spawn(run(admitted, events));
    Sse::new(ReceiverStream::new(receiver)).keep_alive(KeepAlive::default())
}

/// The chunks' common fields.
struct Chunks {
    id: String,
    created: u64,
    model: String,
}

impl Chunks {
    fn chunk(&self, delta: Value, finish: Option<FinishReason>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{
                "index": 0,
                "delta": delta,
                "logprobs": null,
                "finish_reason": finish.map(FinishReason::as_str),
            }],
        })
    }
}

/// Sends one `data:` event; `false` when the client is gone.
async fn send(events: &mpsc::Sender<Result<Event, Infallible>>, data: &Value) -> bool {
    events
        .send(Ok(Event::default().data(data.to_string())))
        .await
        .is_ok()
}

/// The stream's task: submits the generation, forwards its text as chunks, then closes
/// the stream.
async fn run(admitted: Admitted, events: mpsc::Sender<Result<Event, Infallible>>) {
    let Admitted {
        request,
        compiled,
        model,
        engines,
        deadline,
        permit,
        in_flight,
        ..
    } = admitted;
    let _held = (permit, in_flight);
    let chunks = Chunks {
        id: format!("chatcmpl-{}", openai::random_id(24)),
        created: openai::unix_time(),
        model,
    };
    let param = request.output.param();
    let fail = |error: ApiError| {
        let events = events.clone();
        async move {
            let _ = send(&events, &error.body()).await;
        }
    };
    let entry = compiled.clone();
    let grammar = compiled.as_ref().and_then(|entry| entry.grammar.clone());
    let compiled = compiled.as_deref().map(|entry| &entry.compiled);
    let (conversation, mut calls) = match compiled {
        None => (request.messages.clone(), None),
        Some(Compiled::Structured(prepared)) => {
            (prepared.conversation(&request.messages, true), None)
        }
        Some(Compiled::Tools(prepared)) => (
            prepared.conversation(&request.messages),
            Some(Calls {
                reader: CallStream::new(
                    prepared.compiled.syntax,
                    prepared.compiled.choice != gbnfc_compiler::tools::ToolChoice::None,
                ),
            }),
        ),
    };
    let prompt = match chat::render_prompt(engines.model(), &conversation) {
        Ok(prompt) => prompt,
        Err(e) => return fail(ApiError::from_bridge(&e, param)).await,
    };
    let (text_sender, mut text) = mpsc::unbounded_channel();
    let (reply, generation) = oneshot::channel();
    let cancel = CancelFlag::default();
    let _withdraw = CancelOnDrop(cancel.clone());
    let job = Job {
        prompt,
        grammar,
        options: request.options,
        text: Some(text_sender),
        reply,
        cancel,
        deadline: Some(deadline),
        stop: request.stop.clone(),
    };
    if let Err(e) = engines.submit(job, entry) {
        return fail(ApiError::from_bridge(&e, param)).await;
    }
    if !send(
        &events,
        &chunks.chunk(json!({"role": "assistant", "content": ""}), None),
    )
    .await
    {
        return;
    }
    let (mut sent, mut sent_reasoning) = (String::new(), String::new());
    while let Some(piece) = text.recv().await {
        let piece = match piece {
            Piece::Reasoning(piece) => {
                sent_reasoning.push_str(&piece);
                if !send(
                    &events,
                    &chunks.chunk(json!({"reasoning_content": piece}), None),
                )
                .await
                {
                    return;
                }
                continue;
            }
            Piece::Answer(piece) => piece,
        };
        sent.push_str(&piece);
        match forward(&mut calls, &piece) {
            Ok(deltas) => {
                for delta in deltas {
                    if !send(&events, &chunks.chunk(delta, None)).await {
                        return;
                    }
                }
            }
            Err(error) => return fail(error).await,
        }
    }
    let generation: Generation = match generation.await {
        Ok(Ok(generation)) => generation,
        Ok(Err(e)) => return fail(ApiError::from_bridge(&e, param)).await,
        Err(_) => {
            let e = BridgeError::EngineStopped("it dropped a job".into());
            return fail(ApiError::from_bridge(&e, param)).await;
        }
    };
    // Text the engine held back (a possible stop sequence or closing marker that was not
    // one, the end of a cut character) comes last.
    let reasoning_rest = generation
        .reasoning
        .as_deref()
        .and_then(|r| r.get(sent_reasoning.len()..))
        .unwrap_or_default();
    if !reasoning_rest.is_empty()
        && !send(
            &events,
            &chunks.chunk(json!({"reasoning_content": reasoning_rest}), None),
        )
        .await
    {
        return;
    }
    let rest = generation
        .text
        .get(sent.len()..)
        .unwrap_or_default()
        .to_string();
    let mut deltas = match forward(&mut calls, &rest) {
        Ok(deltas) => deltas,
        Err(error) => return fail(error).await,
    };
    if let Some(calls) = calls.as_mut() {
        match calls.reader.finish() {
            Ok(events) => deltas.extend(calls.deltas(events)),
            Err(e) => return fail(unreadable_calls(&e)).await,
        }
    }
    for delta in deltas {
        if !send(&events, &chunks.chunk(delta, None)).await {
            return;
        }
    }
    let finish = match judge(compiled, &generation) {
        Ok(finish) => finish,
        Err(error) => return fail(error).await,
    };
    if !send(&events, &chunks.chunk(json!({}), Some(finish))).await {
        return;
    }
    if request.include_usage {
        let usage = Usage::of(&generation.stats);
        let mut last = chunks.chunk(json!({}), None);
        last["choices"] = json!([]);
        last["usage"] = usage.to_json();
        if !send(&events, &last).await {
            return;
        }
    }
    let _ = events.send(Ok(Event::default().data("[DONE]"))).await;
}

/// The incremental reader of a tool-call reply.
struct Calls {
    reader: CallStream,
}

impl Calls {
    /// The deltas for what the reader found.
    fn deltas(&mut self, events: Vec<StreamEvent>) -> Vec<Value> {
        events
            .into_iter()
            .map(|event| match event {
                StreamEvent::Content(text) => json!({"content": text}),
                StreamEvent::CallStart { index, name } => {
                    json!({"tool_calls": [{
                        "index": index,
                        "id": openai::call_id(),
                        "type": "function",
                        "function": {"name": name, "arguments": ""},
                    }]})
                }
                StreamEvent::Arguments { index, fragment } => json!({"tool_calls": [{
                    "index": index,
                    "function": {"arguments": fragment},
                }]}),
            })
            .collect()
    }
}

/// The deltas for the next piece of text.
fn forward(calls: &mut Option<Calls>, piece: &str) -> Result<Vec<Value>, ApiError> {
    if piece.is_empty() {
        return Ok(Vec::new());
    }
    match calls {
        None => Ok(vec![json!({"content": piece})]),
        Some(calls) => match calls.reader.push(piece) {
            Ok(events) => Ok(calls.deltas(events)),
            Err(e) => Err(unreadable_calls(&e)),
        },
    }
}

/// The error that ends a stream whose tool calls cannot be read (the grammar allows
/// only readable ones: this is a failure inside the server).
fn unreadable_calls(error: &CallParseError) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::INTERNAL_SERVER_ERROR,
        "server_error",
        format!("the tool calls cannot be read: {error}"),
    )
}

/// The finished text judged as a non-streamed answer would be: its `finish_reason`, or the
/// error that ends the stream.
fn judge(compiled: Option<&Compiled>, generation: &Generation) -> Result<FinishReason, ApiError> {
    let invalid = |problems: Vec<String>| {
        ApiError::from_bridge(
            &BridgeError::Invalid {
                attempts: 1,
                errors: problems,
            },
            None,
        )
    };
    let truncated = || {
        ApiError::from_bridge(
            &BridgeError::Truncated {
                tokens: generation.stats.generated_tokens,
                text: generation.text.clone(),
            },
            None,
        )
    };
    match compiled {
        None => Ok(FinishReason::from(generation.finish)),
        Some(Compiled::Structured(prepared)) => {
            if generation.finish == Finish::Truncated {
                return Err(truncated());
            }
            let (problems, _) = prepared.check(&generation.text);
            if problems.is_empty() {
                Ok(FinishReason::Stop)
            } else {
                Err(invalid(problems))
            }
        }
        Some(Compiled::Tools(prepared)) => {
            if generation.finish == Finish::Truncated {
                return if prepared.compiled.grammar.is_none() {
                    Ok(FinishReason::Length)
                } else {
                    Err(truncated())
                };
            }
            let (problems, _, calls) = prepared.check(&generation.text);
            if !problems.is_empty() {
                return Err(invalid(problems));
            }
            Ok(if calls.is_empty() {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            })
        }
    }
}
