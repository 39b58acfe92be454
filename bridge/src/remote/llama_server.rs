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
//!
//! Streamed ([`Call::on_text`]), the text arrives as the server's events and cannot be
//! cut back once passed on: a streamed generation under a grammar keeps a reserve of its
//! budget back ([`super::close_out::stream_reserve`]) and is closed out within it by
//! appending alone.

use std::path::Path;
use std::time::{Duration, Instant};

use gbnfc_compiler::gbnf::CheckedGrammar;
use serde_json::{json, Value};

use super::close_out::{Ending, TextCloseOut};
use super::http::{refused, Http};
use super::{refuse_reasoning, BackendUrl, Call};
use crate::chat_model::ChatModel;
use crate::engine::EngineOptions;
use crate::generate::{GenerateOptions, Generation, Stats, PENALTY_WINDOW};
use crate::reasoning::Reasoning;
use crate::BridgeError;

/// How long reading the server's metadata may take.
const METADATA_TIMEOUT: Duration = Duration::from_secs(30);

/// A `llama-server` and what gbnfc read of its model.
#[derive(Debug)]
pub struct LlamaServer {
    http: Http,
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
        let mut server = LlamaServer {
            http: Http::new(url)?,
            name: String::new(),
            template: None,
            ctx: 0,
            slots: 0,
            bos: None,
            build: String::new(),
        };
        let props = server.http.get("/props", METADATA_TIMEOUT)?;
        let field = |pointer: &str| {
            props.pointer(pointer).ok_or_else(|| {
                refused(
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
        let with_bos = server.http.post(
            "/tokenize",
            &json!({"content": "", "add_special": true}),
            None,
        )?;
        if with_bos["tokens"].as_array().is_some_and(|t| !t.is_empty()) {
            server.bos = props["bos_token"]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(str::to_string);
        }
        refuse_reasoning(&server, options, url)?;
        Ok(server)
    }

    /// The backend URL it was reached at.
    pub fn url(&self) -> &BackendUrl {
        self.http.url()
    }

    /// How many requests the server decodes at once (`--parallel`, its slots).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The server's llama.cpp build (`b<number>-<commit>`).
    pub fn build(&self) -> &str {
        &self.build
    }

    /// Whether the server answers `GET /health` with 200 within `timeout`.
    pub fn healthy(&self, timeout: Duration) -> bool {
        self.http.answers("/health", timeout)
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
        let answer = self.http.post(
            "/tokenize",
            &json!({"content": text, "add_special": false, "parse_special": false}),
            None,
        )?;
        answer["tokens"]
            .as_array()
            .map(Vec::len)
            .ok_or_else(|| refused(self.url(), "/tokenize: the answer has no `tokens`".into()))
    }

    fn reasoning(&self) -> Option<&Reasoning> {
        None
    }
}

impl LlamaServer {
    /// Generates on the server: `prompt` under `grammar` and `options`, with what `call`
    /// adds (stop sequences, a deadline, the text as it streams).
    ///
    /// # Errors
    /// [`BridgeError::BackendDown`] when the server cannot be reached or the connection
    /// breaks; [`BridgeError::Remote`] when it refuses the request;
    /// [`BridgeError::Cancelled`] when `call.on_text` or `call.cancelled` ended it.
    pub fn complete(
        &self,
        prompt: &str,
        grammar: Option<&CheckedGrammar>,
        options: &GenerateOptions,
        call: Call<'_>,
    ) -> Result<Generation, BridgeError> {
        // The server puts the BOS token before every prompt; the local engine adds it only
        // when the template has not written it. Either way the model sees one.
        let prompt = match &self.bos {
            Some(bos) => prompt.strip_prefix(bos.as_str()).unwrap_or(prompt),
            None => prompt,
        };
        // Text passed on as it comes cannot be cut back: its close-out appends only.
        let passed_on = call.passes_on();
        let streamed = call.streams();
        let mut close_out = TextCloseOut::new(grammar, options, passed_on);
        let mut body = json!({
            "prompt": prompt,
            "n_predict": close_out.tokens_to_ask(),
            "seed": options.seed,
            "temperature": options.temperature,
            "top_p": options.top_p,
            "top_k": 0,
            "min_p": 0.0,
            "typical_p": 1.0,
            "repeat_penalty": options.repeat_penalty,
            "repeat_last_n": PENALTY_WINDOW,
            "stream": streamed,
        });
        match grammar {
            Some(grammar) => body["grammar"] = json!(grammar.to_string()),
            None if !call.stop.is_empty() => body["stop"] = json!(call.stop),
            None => {}
        }
        let (text, answer) = if streamed {
            self.stream(&body, call.deadline, &mut call.into_forward())?
        } else {
            let answer = self.http.post("/completion", &body, call.deadline)?;
            let text = answer["content"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| {
                    refused(
                        self.url(),
                        "/completion: the answer has no `content`".into(),
                    )
                })?;
            (text, answer)
        };
        let count = |key: &str| answer[key].as_u64().unwrap_or(0) as usize;
        let ms = |key: &str| answer["timings"][key].as_f64().unwrap_or(0.0);
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
        // `truncated` means the context ran out, not the budget: nothing to close within.
        let ending = match (
            answer["stop_type"].as_str(),
            answer["truncated"] == json!(true),
        ) {
            (_, true) => Ending::Cut,
            (Some("eos" | "word"), _) => Ending::Stopped,
            (Some("limit"), _) => Ending::AtBudget,
            _ => Ending::Cut,
        };
        let (text, finish) = close_out.finish(
            text,
            ending,
            &mut stats,
            |text| self.pieces(text).map(Some),
            |completion| self.count_tokens(completion),
        )?;
        Ok(Generation {
            text,
            reasoning: None,
            finish,
            stats,
        })
    }

    /// A streamed `/completion`: each event's `content` (empty for some) to `on_text`,
    /// which ends it by answering `false`; the text gathered, and the last event (whose
    /// fields are the non-streamed answer's).
    fn stream(
        &self,
        body: &Value,
        deadline: Option<Instant>,
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<(String, Value), BridgeError> {
        let mut text = String::new();
        let mut last = None;
        let cancelled = self
            .http
            .post_events("/completion", body, deadline, |event| {
                let piece = event["content"].as_str().unwrap_or_default();
                text.push_str(piece);
                let go_on = on_text(piece);
                if event["stop"] == json!(true) {
                    last = Some(event);
                    return false;
                }
                go_on
            })?;
        match last {
            Some(last) => Ok((text, last)),
            None if cancelled => Err(BridgeError::Cancelled),
            None => Err(super::http::down(
                self.url(),
                "/completion: the event stream ended before the generation did".into(),
            )),
        }
    }

    /// The byte pieces of `text`'s tokens, as the server's tokenizer splits it.
    fn pieces(&self, text: &str) -> Result<Vec<Vec<u8>>, BridgeError> {
        let answer = self.http.post(
            "/tokenize",
            &json!({"content": text, "add_special": false, "parse_special": false, "with_pieces": true}),
            None,
        )?;
        let malformed = || {
            refused(
                self.url(),
                "/tokenize: the answer has no `tokens` with pieces".into(),
            )
        };
        let tokens = answer["tokens"].as_array().ok_or_else(malformed)?;
        tokens
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
            .ok_or_else(malformed)
    }
}

/// The model's name as the local engine gives it: the file name without `.gguf`.
fn model_name(path: &str) -> String {
    Path::new(path)
        .file_stem()
        .map_or_else(|| "model".to_string(), |s| s.to_string_lossy().into_owned())
}
