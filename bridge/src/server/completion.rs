//! `POST /v1/chat/completions`: read the body, admit the request, compile (through the
//! cache), then answer — whole, after validation and retries, or streamed
//! ([`super::stream`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use gbnfc_compiler::gbnf;
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;

use super::api_error::ApiError;
use super::cache::{Compiled, Entry};
use super::engines::{Engines, RequestScope};
use super::request::{self, ChatRequest, Output};
use super::scheduler::{CancelFlag, CancelOnDrop};
use super::{stream, AppState, Ready};
use crate::chat::{self, Message};
use crate::generate::{Generator, GrammarEngine};
use crate::openai::{self, FinishReason, Usage};
use crate::structured::{self, OutputSpec, Prepared, StructuredOptions};
use crate::tool_calls::{self, CallSpec, PreparedCalls};
use crate::tool_retrieval::Shortlist;
use crate::BridgeError;

/// The loaded model, or 503 while it loads.
///
/// # Errors
/// 503 before the model is ready.
pub fn ready(state: &AppState) -> Result<&Ready, ApiError> {
    state.ready.get().ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "the model is still loading; try again when GET /health answers 200",
        )
    })
}

/// One admitted request: what it asked, what it compiled to, and its place in the server.
pub struct Admitted {
    /// The request.
    pub request: ChatRequest,
    /// Its compiled output (`None` for free text).
    pub compiled: Option<Arc<Entry>>,
    /// The model name to answer with.
    pub model: String,
    /// What it generates on.
    pub engines: Engines,
    /// When it must be over, and the limit that sets it.
    pub deadline: (Instant, Duration),
    /// Its admission permit (released when dropped).
    pub permit: OwnedSemaphorePermit,
    /// Counts the request in flight until dropped.
    pub in_flight: InFlight,
    /// Retries for a non-streamed answer.
    pub retries: usize,
}

/// One request in flight, for `/metrics`.
pub struct InFlight(Arc<super::metrics::Metrics>);

impl InFlight {
    fn new(metrics: &Arc<super::metrics::Metrics>) -> InFlight {
        metrics.add_in_flight(1);
        InFlight(Arc::clone(metrics))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.add_in_flight(-1);
    }
}

/// The handler.
pub async fn chat_completions(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let admitted = match admit(&state, body).await {
        Ok(admitted) => admitted,
        Err(error) => return error.into_response(),
    };
    if admitted.request.stream {
        stream::respond(admitted).into_response()
    } else {
        match complete(admitted).await {
            Ok(value) => Json(value).into_response(),
            Err(error) => error.into_response(),
        }
    }
}

/// Reads, checks, admits and compiles a request.
async fn admit(
    state: &Arc<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Admitted, ApiError> {
    let started = Instant::now();
    let ready = ready(state)?;
    let bytes = body.map_err(|rejection| {
        let status = rejection.status();
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::body_too_large(state.options.max_body)
        } else {
            ApiError::bad_request(format!("cannot read the request body: {rejection}"), None)
        }
    })?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::bad_request(
            format!(
                "the request body is not valid JSON: {e} (at line {}, column {})",
                e.line(),
                e.column()
            ),
            None,
        )
    })?;
    if let Some(error) = ready.engines.unavailable() {
        return Err(ApiError::from_bridge(&error, None));
    }
    let reasons = ready.engines.model().reasoning().is_some();
    let request = request::read(
        &value,
        &state.options.defaults,
        &state.options.tool_defaults,
        reasons,
    )?;
    super::fault::handler(request.model.as_deref());
    let permit = Arc::clone(&state.admission)
        .try_acquire_owned()
        .map_err(|_| {
            ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_error",
                format!(
                    "the server is busy: {} generations run and {} wait; retry after a second",
                    state.options.parallel, state.options.queue
                ),
            )
            .with_code("queue_full")
        })?;
    let in_flight = InFlight::new(&state.metrics);
    let limit = state.options.request_timeout;
    let compiled = match request.output.cache_key() {
        None => None,
        Some(key) => {
            let task_state = Arc::clone(state);
            let output = request.output.clone();
            let messages = request.messages.clone();
            let retrieval = request.retrieval.unwrap_or(state.options.retrieval);
            let compact = state.options.compact_tools;
            let engines = ready.engines.clone();
            let retries = state.options.retries;
            let kind = state.options.defaults.grammar_engine;
            let compiling = tokio::task::spawn_blocking(move || {
                let model = engines.model();
                let spec = match &output {
                    Output::Tools(body) => Some(CallSpec {
                        tools: body.clone(),
                        retries,
                        retrieval,
                        compact,
                        ..CallSpec::default()
                    }),
                    _ => None,
                };
                let shortlist = match &spec {
                    Some(spec) => tool_calls::shortlist(model, spec, &messages)
                        .map_err(|e| ApiError::from_bridge(&e, output.param()))?,
                    None => None,
                };
                // Each shortlist is its own grammar.
                let key = match &shortlist {
                    Some(shown) => format!("{key}\nshown:{}", shown.names.join(",")),
                    None => key,
                };
                task_state.cache.get_or_compile(&key, || {
                    compile(&engines, &output, spec.as_ref(), shortlist, kind)
                })
            });
            let (compiled, hit) = match tokio::time::timeout(limit, compiling).await {
                Err(_) => return Err(timed_out(limit)),
                Ok(Err(_)) => {
                    return Err(ApiError::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "server_error",
                        "compiling the request's output failed inside the server",
                    ))
                }
                Ok(Ok(result)) => result?,
            };
            state.metrics.count_cache(hit);
            Some(compiled)
        }
    };
    Ok(Admitted {
        model: request.model.clone().unwrap_or_else(|| ready.model.clone()),
        request,
        compiled,
        engines: ready.engines.clone(),
        deadline: (started + limit, limit),
        permit,
        in_flight,
        retries: state.options.retries,
    })
}

/// Compiles a request's output; a tool list by `spec`, showing the tools of `shortlist`.
fn compile(
    engines: &Engines,
    output: &Output,
    spec: Option<&CallSpec>,
    shortlist: Option<Shortlist>,
    kind: GrammarEngine,
) -> Result<Entry, ApiError> {
    let param = output.param();
    let failed = |e: BridgeError| ApiError::from_bridge(&e, param);
    let compiled = match output {
        Output::Text => return Err(ApiError::bad_request("free text compiles to nothing", None)),
        Output::Schema(value) => {
            let param = if value.get("json_schema").is_some() {
                "response_format.json_schema.schema"
            } else if value.get("type").and_then(Value::as_str) == Some("json_object") {
                "response_format"
            } else {
                "json_schema"
            };
            return Prepared::new(&OutputSpec::Schema(value.clone()))
                .and_then(|p| engines.entry(Compiled::Structured(p), kind))
                .map_err(|e| ApiError::from_bridge(&e, Some(param)));
        }
        Output::Grammar(text) => {
            let grammar = checked_grammar(text)?;
            Prepared::new(&OutputSpec::Grammar(grammar)).map(Compiled::Structured)
        }
        Output::Tools(body) => {
            let whole = CallSpec {
                tools: body.clone(),
                ..CallSpec::default()
            };
            PreparedCalls::narrowed(engines.model(), spec.unwrap_or(&whole), shortlist)
                .map(Compiled::Tools)
        }
    };
    compiled
        .and_then(|compiled| engines.entry(compiled, kind))
        .map_err(failed)
}

/// Parses and checks a `grammar` field; errors are located as `grammar:line:column`.
fn checked_grammar(text: &str) -> Result<gbnf::CheckedGrammar, ApiError> {
    let grammar = gbnf::parse(text).map_err(|e| {
        ApiError::bad_request(
            e.diagnostic.render(text, "grammar").trim_end().to_string(),
            Some("grammar"),
        )
    })?;
    gbnf::CheckedGrammar::new(grammar).map_err(|rejected| {
        let errors: Vec<String> = rejected
            .errors()
            .map(|d| d.render(text, "grammar").trim_end().to_string())
            .collect();
        ApiError::bad_request(
            format!(
                "the grammar is not one llama.cpp can use safely:\n{}",
                errors.join("\n")
            ),
            Some("grammar"),
        )
    })
}

/// A non-streamed answer: the bridge's retry loop on a blocking task, every generation a
/// job of the engine thread. A dropped handler (its client gone) withdraws the job.
async fn complete(admitted: Admitted) -> Result<Value, ApiError> {
    let Admitted {
        request,
        compiled,
        model,
        engines,
        deadline,
        permit,
        in_flight,
        retries,
    } = admitted;
    let cancel = CancelFlag::default();
    let _withdraw = CancelOnDrop(cancel.clone());
    let param = request.output.param();
    let task = tokio::task::spawn_blocking(move || {
        let _held = (permit, in_flight);
        let generator = engines.generator(RequestScope {
            cancel,
            deadline,
            stop: request.stop.clone(),
            entry: compiled.clone(),
        });
        let compiled = compiled.as_deref().map(|entry| &entry.compiled);
        answer(&generator, &request, compiled, &model, retries)
    });
    let remaining = deadline.0.saturating_duration_since(Instant::now());
    match tokio::time::timeout(remaining, task).await {
        Err(_) => Err(timed_out(deadline.1)),
        Ok(Err(_)) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "the server failed while generating this answer; it goes on serving",
        )),
        Ok(Ok(result)) => result.map_err(|e| ApiError::from_bridge(&e, param)),
    }
}

/// Generates the whole answer as a `chat.completion` object.
fn answer(
    generator: &(impl Generator + ?Sized),
    request: &ChatRequest,
    compiled: Option<&Compiled>,
    model: &str,
    retries: usize,
) -> Result<Value, BridgeError> {
    match compiled {
        None => {
            let prompt = chat::render_prompt(generator, &request.messages)?;
            let generation = generator.generate(&prompt, None, &request.options)?;
            let usage = Usage::of(&generation.stats);
            Ok(openai::chat_completion(
                model,
                &Message::assistant(generation.text).with_reasoning(generation.reasoning),
                FinishReason::from(generation.finish),
                usage,
            ))
        }
        Some(Compiled::Structured(prepared)) => {
            let options = StructuredOptions {
                generate: request.options,
                retries,
                schema_in_prompt: true,
            };
            structured::run_prepared(generator, &request.messages, prepared, &options)
                .map(|result| result.chat_completion(model))
        }
        Some(Compiled::Tools(prepared)) => tool_calls::call(
            generator,
            &request.messages,
            prepared,
            &request.options,
            retries,
        )
        .map(|reply| reply.chat_completion(model)),
    }
}

/// The 504 for a request past its limit.
pub fn timed_out(limit: Duration) -> ApiError {
    ApiError::from_bridge(
        &BridgeError::TimedOut {
            seconds: limit.as_secs_f64(),
        },
        None,
    )
}
