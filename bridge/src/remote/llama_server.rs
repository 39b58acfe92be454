//! llama.cpp's `llama-server` as a remote engine.
//!
//! Connecting reads the model's metadata from `GET /props`: its file (the model's name,
//! as the local engine names it), its chat template (prompts are rendered here from it,
//! by the local engine's code, [`crate::chat::render_prompt`]), the context of one slot
//! and the BOS token the server adds. A generation is one `POST /completion` with the
//! rendered prompt, the checked GBNF (`grammar`), `n_predict`, `seed`, `temperature` and
//! `top_p`, and the local sampling chain's other settings (no top-k, no min-p, the
//! repetition penalty over the same window): the server's grammar sampler is llama.cpp's,
//! so it accepts what gbnfc's checked grammar means. Token counts for tool retrieval
//! come from `POST /tokenize`. A generation that stops at its budget is closed out on
//! its text ([`super::close_out`]), the text's tokens read back from `POST /tokenize`.

use std::path::Path;
use std::time::Duration;

use gbnfc_compiler::gbnf::CheckedGrammar;
use serde_json::{json, Value};

use super::close_out::{close_text, ClosedText};
use super::BackendUrl;
use crate::chat::{self, Message};
use crate::chat_model::ChatModel;
use crate::closeout::Closer;
use crate::engine::EngineOptions;
use crate::generate::{Finish, GenerateOptions, Generation, Generator, Stats, PENALTY_WINDOW};
use crate::reasoning::{Reasoning, ReasoningMode};
use crate::BridgeError;

/// How long connecting to the server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one request may take, generation included: past it the request fails rather
/// than waiting on a server that stopped answering.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(600);

/// A `llama-server` and what gbnfc read of its model.
#[derive(Debug)]
pub struct LlamaServer {
    url: BackendUrl,
    client: reqwest::blocking::Client,
    name: String,
    template: Option<String>,
    ctx: u32,
    slots: usize,
    /// The BOS token's text, when the server puts one before every prompt.
    bos: Option<String>,
    build: String,
}

impl LlamaServer {
    /// Connects to the server at `url` and reads its model's metadata. Of `options`, the
    /// chat template given over the model's own applies; the model, context, threads and
    /// offload are the server's own.
    ///
    /// # Errors
    /// [`BridgeError::Remote`] when the server cannot be reached or its answers are not
    /// llama-server's; [`BridgeError::Reasoning`] when the model would reason (not yet
    /// run on remote engines: `--reasoning off`).
    pub fn connect(url: &BackendUrl, options: &EngineOptions) -> Result<LlamaServer, BridgeError> {
        let client = reqwest::blocking::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| remote(url, format!("cannot make an HTTP client: {e}")))?;
        let mut server = LlamaServer {
            url: url.clone(),
            client,
            name: String::new(),
            template: None,
            ctx: 0,
            slots: 0,
            bos: None,
            build: String::new(),
        };
        let props = server.get("/props")?;
        let field = |pointer: &str| {
            props.pointer(pointer).ok_or_else(|| {
                remote(
                    url,
                    format!("its /props has no `{pointer}`: is it llama.cpp's llama-server?"),
                )
            })
        };
        server.ctx = field("/default_generation_settings/n_ctx")?
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0);
        server.slots = field("/total_slots")?.as_u64().unwrap_or(1) as usize;
        server.name = model_name(field("/model_path")?.as_str().unwrap_or_default());
        server.build = props["build_info"].as_str().unwrap_or_default().to_string();
        server.template = match &options.chat_template {
            Some(given) => Some(given.clone()),
            None => props["chat_template"]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(str::to_string),
        };
        let with_bos = server.post("/tokenize", &json!({"content": "", "add_special": true}))?;
        if with_bos["tokens"].as_array().is_some_and(|t| !t.is_empty()) {
            server.bos = props["bos_token"]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(str::to_string);
        }
        if options.reasoning.mode != ReasoningMode::Off {
            let probe = chat::render_prompt(&server, &[Message::user("Hello")]).unwrap_or_default();
            if Reasoning::resolve(&options.reasoning, server.template.as_deref(), &probe)?.is_some()
            {
                return Err(BridgeError::Reasoning(format!(
                    "the model behind {url} reasons, and reasoning does not run on remote \
                     engines yet: pass --reasoning off"
                )));
            }
        }
        Ok(server)
    }

    /// The backend URL it was reached at.
    pub fn url(&self) -> &BackendUrl {
        &self.url
    }

    /// How many requests the server decodes at once (`--parallel`, its slots).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The server's llama.cpp build (`b<number>-<commit>`).
    pub fn build(&self) -> &str {
        &self.build
    }

    fn get(&self, path: &str) -> Result<Value, BridgeError> {
        let response = self.client.get(format!("{}{path}", self.url.base)).send();
        self.read(path, response)
    }

    fn post(&self, path: &str, body: &Value) -> Result<Value, BridgeError> {
        let response = self
            .client
            .post(format!("{}{path}", self.url.base))
            .json(body)
            .send();
        self.read(path, response)
    }

    /// The JSON body of a 2xx answer; anything else as [`BridgeError::Remote`], with the
    /// server's own error message when it gave one.
    fn read(
        &self,
        path: &str,
        response: reqwest::Result<reqwest::blocking::Response>,
    ) -> Result<Value, BridgeError> {
        let response = response.map_err(|e| {
            let what = if e.is_connect() {
                "cannot connect (is the server running? scripts/llama-server starts one)"
            } else if e.is_timeout() {
                "no answer in time"
            } else {
                "the request failed"
            };
            remote(&self.url, format!("{path}: {what}: {e}"))
        })?;
        let status = response.status();
        let text = response
            .text()
            .map_err(|e| remote(&self.url, format!("{path}: the answer was cut: {e}")))?;
        let value: Option<Value> = serde_json::from_str(&text).ok();
        if !status.is_success() {
            let message = value
                .as_ref()
                .and_then(|v| v.pointer("/error/message"))
                .and_then(Value::as_str)
                .map_or_else(|| text.chars().take(300).collect(), str::to_string);
            return Err(remote(
                &self.url,
                format!("{path}: HTTP {status}: {message}"),
            ));
        }
        value.ok_or_else(|| {
            remote(
                &self.url,
                format!("{path}: the answer is not JSON: is it llama.cpp's llama-server?"),
            )
        })
    }
}

impl ChatModel for LlamaServer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn chat_template(&self) -> Option<String> {
        self.template.clone()
    }

    fn ctx(&self) -> u32 {
        self.ctx
    }

    fn count_tokens(&self, text: &str) -> Result<usize, BridgeError> {
        let answer = self.post(
            "/tokenize",
            &json!({"content": text, "add_special": false, "parse_special": false}),
        )?;
        answer["tokens"]
            .as_array()
            .map(Vec::len)
            .ok_or_else(|| remote(&self.url, "/tokenize: the answer has no `tokens`".into()))
    }

    fn reasoning(&self) -> Option<&Reasoning> {
        None
    }
}

impl Generator for LlamaServer {
    fn generate(
        &self,
        prompt: &str,
        grammar: Option<&CheckedGrammar>,
        options: &GenerateOptions,
    ) -> Result<Generation, BridgeError> {
        // The server puts the BOS token before every prompt; the local engine adds it only
        // when the template has not written it. Either way the model sees one.
        let prompt = match &self.bos {
            Some(bos) => prompt.strip_prefix(bos.as_str()).unwrap_or(prompt),
            None => prompt,
        };
        let mut body = json!({
            "prompt": prompt,
            "n_predict": options.max_tokens,
            "seed": options.seed,
            "temperature": options.temperature,
            "top_p": options.top_p,
            "top_k": 0,
            "min_p": 0.0,
            "typical_p": 1.0,
            "repeat_penalty": options.repeat_penalty,
            "repeat_last_n": PENALTY_WINDOW,
            "stream": false,
        });
        if let Some(grammar) = grammar {
            body["grammar"] = json!(grammar.to_string());
        }
        let answer = self.post("/completion", &body)?;
        let count = |key: &str| answer[key].as_u64().unwrap_or(0) as usize;
        let ms = |key: &str| answer["timings"][key].as_f64().unwrap_or(0.0);
        let text = answer["content"]
            .as_str()
            .ok_or_else(|| remote(&self.url, "/completion: the answer has no `content`".into()))?;
        let mut stats = Stats {
            prompt_tokens: count("tokens_evaluated"),
            generated_tokens: count("tokens_predicted"),
            prompt_ms: ms("prompt_ms"),
            prompt_cached: count("tokens_cached") > 0,
            decode_ms: ms("predicted_ms"),
            generation_ms: ms("predicted_ms"),
            grammar_engine: if grammar.is_some() { "llama" } else { "" },
            budget: options.max_tokens,
            repeat_penalty: options.repeat_penalty,
            ..Stats::default()
        };
        let stopped = matches!(answer["stop_type"].as_str(), Some("eos" | "word"));
        // `truncated` means the context ran out, not the budget: nothing to close within.
        let at_budget = answer["stop_type"] == json!("limit") && answer["truncated"] != json!(true);
        let mut closer = match grammar {
            Some(grammar) if options.close_out => Closer::new(grammar),
            _ => None,
        };
        stats.close_out = closer.is_some();
        let (text, finish) = match closer.as_mut() {
            Some(closer) if at_budget => match self.close_out(closer, text, options.max_tokens)? {
                Some(closed) => {
                    stats.closed_out_tokens = self.count_tokens(&closed.completion)?;
                    stats.generated_tokens = closed.kept_tokens + stats.closed_out_tokens;
                    (closed.text, Finish::Stop)
                }
                None => (text.to_string(), Finish::Truncated),
            },
            _ if stopped && answer["truncated"] != json!(true) => (text.to_string(), Finish::Stop),
            _ => (text.to_string(), Finish::Truncated),
        };
        Ok(Generation {
            text,
            reasoning: None,
            finish,
            stats,
        })
    }
}

impl LlamaServer {
    /// Closes out `text`, cut at `budget` tokens: its tokens (as the server's tokenizer
    /// splits it) are read back, then [`close_text`] cuts and completes it.
    fn close_out(
        &self,
        closer: &mut Closer,
        text: &str,
        budget: usize,
    ) -> Result<Option<ClosedText>, BridgeError> {
        let answer = self.post(
            "/tokenize",
            &json!({"content": text, "add_special": false, "parse_special": false, "with_pieces": true}),
        )?;
        let malformed = || {
            remote(
                &self.url,
                "/tokenize: the answer has no `tokens` with pieces".into(),
            )
        };
        let tokens = answer["tokens"].as_array().ok_or_else(malformed)?;
        let pieces = tokens
            .iter()
            .map(|token| match &token["piece"] {
                Value::String(piece) => Some(piece.as_bytes().to_vec()),
                Value::Array(bytes) => bytes
                    .iter()
                    .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                    .collect(),
                _ => None,
            })
            .collect::<Option<Vec<Vec<u8>>>>()
            .ok_or_else(malformed)?;
        Ok(close_text(closer, &pieces, budget))
    }
}

/// The model's name as the local engine gives it: the file name without `.gguf`.
fn model_name(path: &str) -> String {
    Path::new(path)
        .file_stem()
        .map_or_else(|| "model".to_string(), |s| s.to_string_lossy().into_owned())
}

fn remote(url: &BackendUrl, reason: String) -> BridgeError {
    BridgeError::Remote {
        url: url.to_string(),
        reason,
    }
}
