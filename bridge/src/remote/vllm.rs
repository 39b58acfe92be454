//! vLLM's OpenAI-compatible server as a remote engine.
//!
//! Connecting reads the served model's name and context from `GET /v1/models`, vLLM's
//! version from `GET /version`, and the chat template from `GET /tokenizer_info` (served
//! when vLLM runs with `--enable-tokenizer-info-endpoint`) unless one is given with
//! `--chat-template`: prompts are rendered here by the local engine's code, as for
//! llama-server, so the model sees what it would see locally. A generation is one
//! `POST /v1/completions` with the rendered prompt and the checked grammar in XGrammar's
//! spelling ([`Target::Xgrammar`]) as `structured_outputs.grammar` — vLLM's default
//! structured-output backend takes it as it is (its older `guided_grammar` field is ignored
//! by current vLLM: never sent) — and the local sampling chain's settings (no top-k, no
//! min-p; vLLM's repetition penalty has no window). A generation that stops at its budget
//! is closed out on its text ([`super::close_out`]), the pieces read back from
//! `POST /tokenize`'s token strings.
//!
//! vLLM does not report how many sequences it decodes at once; gbnfc counts as its slots
//! how many sequences of the whole context its KV cache holds (`/metrics`'
//! `kv_cache_max_concurrency`), the most it can always run together.

use std::time::{Duration, Instant};

use gbnfc_compiler::gbnf::{CheckedGrammar, Target};
use serde_json::{json, Value};

use super::close_out::{Ending, TextCloseOut};
use super::http::{down, refused, Http};
use super::{refuse_reasoning, BackendUrl, Call};
use crate::chat_model::ChatModel;
use crate::engine::EngineOptions;
use crate::generate::{GenerateOptions, Generation, Stats};
use crate::reasoning::Reasoning;
use crate::BridgeError;

/// How long reading the server's metadata may take.
const METADATA_TIMEOUT: Duration = Duration::from_secs(30);

/// A vLLM server and what gbnfc read of its model.
#[derive(Debug)]
pub struct Vllm {
    http: Http,
    name: String,
    template: Option<String>,
    ctx: u32,
    slots: usize,
    /// The BOS token's text, when the server puts one before every prompt.
    bos: Option<String>,
    build: String,
}

impl Vllm {
    /// Connects to the server at `url` and reads its model's metadata. Of `options`, the
    /// chat template given over the model's own applies; the rest is the server's own.
    ///
    /// # Errors
    /// [`BridgeError::BackendDown`] when the server cannot be reached;
    /// [`BridgeError::Remote`] when its answers are not vLLM's or it does not tell its
    /// chat template and none is given; [`BridgeError::Reasoning`] when the model would
    /// reason (not yet run on remote engines: `--reasoning off`).
    pub fn connect(url: &BackendUrl, options: &EngineOptions) -> Result<Vllm, BridgeError> {
        let http = Http::new(url)?;
        let models = http.get("/v1/models", METADATA_TIMEOUT)?;
        let model = models.pointer("/data/0").ok_or_else(|| {
            refused(
                url,
                "its /v1/models lists no model: is it vLLM's OpenAI-compatible server?".into(),
            )
        })?;
        let name = model["id"].as_str().unwrap_or_default().to_string();
        let ctx = model["max_model_len"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                refused(
                    url,
                    "its /v1/models gives no `max_model_len`: is it vLLM?".into(),
                )
            })?;
        let version = http.get("/version", METADATA_TIMEOUT)?;
        let build = format!("vLLM {}", version["version"].as_str().unwrap_or("?"));
        let template = match &options.chat_template {
            Some(given) => Some(given.clone()),
            None => Some(served_template(&http)?),
        };
        let mut server = Vllm {
            http,
            name,
            template,
            ctx,
            slots: 1,
            bos: None,
            build,
        };
        server.slots = server.concurrency().unwrap_or(1);
        let with_bos = server.http.post(
            "/tokenize",
            &json!({"model": server.name, "prompt": "", "add_special_tokens": true}),
            None,
        )?;
        if let Some(tokens) = with_bos["tokens"].as_array().filter(|t| !t.is_empty()) {
            let text = server.http.post(
                "/detokenize",
                &json!({"model": server.name, "tokens": tokens}),
                None,
            )?;
            server.bos = text["prompt"]
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

    /// How many sequences of the whole context it runs at once (see the module's notes).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The server's version (`vLLM 0.32.0`).
    pub fn build(&self) -> &str {
        &self.build
    }

    /// Whether the server answers `GET /health` with 200 within `timeout`.
    pub fn healthy(&self, timeout: Duration) -> bool {
        self.http.answers("/health", timeout)
    }

    /// How many sequences of the whole context the KV cache holds, from `/metrics`.
    fn concurrency(&self) -> Option<usize> {
        let metrics = self.http.get_text("/metrics", METADATA_TIMEOUT).ok()?;
        let (_, rest) = metrics.split_once("kv_cache_max_concurrency=\"")?;
        let value: f64 = rest.split('"').next()?.parse().ok()?;
        Some((value.floor() as usize).max(1))
    }

    /// Generates on the server: `prompt` under `grammar` and `options`, with what `call`
    /// adds (stop sequences, a deadline, the text as it streams).
    ///
    /// # Errors
    /// [`BridgeError::BackendDown`] when the server cannot be reached or the connection
    /// breaks; [`BridgeError::Remote`] when it refuses the request or the grammar has no
    /// XGrammar spelling; [`BridgeError::Cancelled`] when `call.on_text` or
    /// `call.cancelled` ended it.
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
        let passed_on = call.passes_on();
        let streamed = call.streams();
        let mut close_out = TextCloseOut::new(grammar, options, passed_on);
        let mut body = json!({
            "model": self.name,
            "prompt": prompt,
            "max_tokens": close_out.tokens_to_ask(),
            "seed": options.seed,
            "temperature": options.temperature,
            "top_p": options.top_p,
            "top_k": 0,
            "min_p": 0.0,
            "repetition_penalty": options.repeat_penalty,
            "stream": streamed,
        });
        if streamed {
            body["stream_options"] = json!({"include_usage": true});
        }
        match grammar {
            Some(grammar) => {
                let text = Target::Xgrammar.render(grammar).map_err(|e| {
                    refused(
                        self.url(),
                        format!("the grammar has no XGrammar spelling: {e}"),
                    )
                })?;
                body["structured_outputs"] = json!({ "grammar": text });
            }
            None if !call.stop.is_empty() => body["stop"] = json!(call.stop),
            None => {}
        }
        let started = Instant::now();
        let answer = if streamed {
            self.stream(&body, call.deadline, &mut call.into_forward())?
        } else {
            let answer = self.http.post("/v1/completions", &body, call.deadline)?;
            Answer {
                text: answer
                    .pointer("/choices/0/text")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| {
                        refused(
                            self.url(),
                            "/v1/completions: the answer has no `choices[0].text`".into(),
                        )
                    })?,
                finish_reason: answer
                    .pointer("/choices/0/finish_reason")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                usage: answer["usage"].clone(),
            }
        };
        let count = |key: &str| answer.usage[key].as_u64().unwrap_or(0) as usize;
        // vLLM reports no timings: the request's wall time, prompt included.
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        let mut stats = Stats {
            prompt_tokens: count("prompt_tokens"),
            generated_tokens: count("completion_tokens"),
            prompt_cached: answer.usage["prompt_tokens_details"]["cached_tokens"]
                .as_u64()
                .is_some_and(|n| n > 0),
            generation_ms: elapsed_ms,
            grammar_engine: if grammar.is_some() { "xgrammar" } else { "" },
            budget: options.max_tokens,
            repeat_penalty: options.repeat_penalty,
            ..Stats::default()
        };
        let ending = match answer.finish_reason.as_deref() {
            Some("stop") => Ending::Stopped,
            Some("length") => Ending::AtBudget,
            _ => Ending::Cut,
        };
        let (text, finish) = close_out.finish(
            answer.text,
            ending,
            &mut stats,
            |text| self.pieces(text),
            |completion| self.count_tokens(completion),
        )?;
        Ok(Generation {
            text,
            reasoning: None,
            finish,
            stats,
        })
    }

    /// A streamed `/v1/completions`: each event's text to `on_text`, which ends it by
    /// answering `false`; the text gathered, how it finished and its usage.
    fn stream(
        &self,
        body: &Value,
        deadline: Option<Instant>,
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Answer, BridgeError> {
        let mut answer = Answer {
            text: String::new(),
            finish_reason: None,
            usage: Value::Null,
        };
        let cancelled = self
            .http
            .post_events("/v1/completions", body, deadline, |event| {
                if let Some(usage) = event.get("usage").filter(|u| !u.is_null()) {
                    answer.usage = usage.clone();
                }
                let Some(choice) = event.pointer("/choices/0") else {
                    return true;
                };
                let piece = choice["text"].as_str().unwrap_or_default();
                answer.text.push_str(piece);
                if let Some(reason) = choice["finish_reason"].as_str() {
                    answer.finish_reason = Some(reason.to_string());
                }
                on_text(piece)
            })?;
        match answer.finish_reason {
            Some(_) => Ok(answer),
            None if cancelled => Err(BridgeError::Cancelled),
            None => Err(down(
                self.url(),
                "/v1/completions: the event stream ended before the generation did".into(),
            )),
        }
    }

    /// The byte pieces of `text`'s tokens as the server's tokenizer splits it, from their
    /// token strings; `None` when those are in neither spelling [`token_bytes`] reads, or
    /// do not spell `text`.
    fn pieces(&self, text: &str) -> Result<Option<Vec<Vec<u8>>>, BridgeError> {
        let answer = self.http.post(
            "/tokenize",
            &json!({"model": self.name, "prompt": text, "add_special_tokens": false, "return_token_strs": true}),
            None,
        )?;
        let strings: Option<Vec<&str>> = answer["token_strs"]
            .as_array()
            .map(|strings| strings.iter().filter_map(Value::as_str).collect());
        Ok(strings.and_then(|strings| token_bytes(&strings, text)))
    }
}

/// What a completion came back with.
struct Answer {
    text: String,
    finish_reason: Option<String>,
    usage: Value,
}

/// The chat template vLLM reports at `GET /tokenizer_info`.
fn served_template(http: &Http) -> Result<String, BridgeError> {
    let advice = "start vLLM with --enable-tokenizer-info-endpoint, or give the template with \
                  --chat-template";
    let info = http
        .get("/tokenizer_info", METADATA_TIMEOUT)
        .map_err(|e| match e {
            BridgeError::Remote { url, reason } => BridgeError::Remote {
                url,
                reason: format!("it does not tell its chat template ({reason}): {advice}"),
            },
            other => other,
        })?;
    info["chat_template"]
        .as_str()
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .ok_or_else(|| {
            refused(
                http.url(),
                format!("its /tokenizer_info has no chat template: {advice}"),
            )
        })
}

impl ChatModel for Vllm {
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
            &json!({"model": self.name, "prompt": text, "add_special_tokens": false}),
            None,
        )?;
        answer["count"]
            .as_u64()
            .map(|n| n as usize)
            .ok_or_else(|| refused(self.url(), "/tokenize: the answer has no `count`".into()))
    }

    fn reasoning(&self) -> Option<&Reasoning> {
        None
    }
}

/// The bytes of each token string, read in the spelling of byte-level BPE (GPT-2's: each
/// byte a printable character) or of SentencePiece (`▁` a space, `<0xNN>` a byte), the one
/// whose pieces spell `text` (SentencePiece's leading space before the first piece
/// dropped); `None` when neither does.
pub fn token_bytes(strings: &[&str], text: &str) -> Option<Vec<Vec<u8>>> {
    let spells = |pieces: &Vec<Vec<u8>>| pieces.concat() == text.as_bytes();
    let byte_level: Option<Vec<Vec<u8>>> = strings.iter().map(|s| byte_level_bytes(s)).collect();
    if let Some(pieces) = byte_level.filter(spells) {
        return Some(pieces);
    }
    let mut pieces: Vec<Vec<u8>> = strings.iter().map(|s| sentencepiece_bytes(s)).collect();
    if !spells(&pieces) && !text.starts_with(' ') {
        if let Some(first) = pieces.first_mut().filter(|p| p.first() == Some(&b' ')) {
            first.remove(0);
        }
    }
    Some(pieces).filter(spells)
}

/// A byte-level BPE token string's bytes: GPT-2's table writes the bytes `!`..`~`,
/// `¡`..`¬` and `®`..`ÿ` as themselves and the others, in order, as U+0100 onwards.
fn byte_level_bytes(token: &str) -> Option<Vec<u8>> {
    let printable = |b: u32| (33..=126).contains(&b) || (161..=172).contains(&b) || b >= 174;
    token
        .chars()
        .map(|c| {
            let c = c as u32;
            if c < 256 {
                return u8::try_from(c).ok().filter(|&b| printable(u32::from(b)));
            }
            let index = usize::try_from(c - 256).ok()?;
            (0u8..=255).filter(|&b| !printable(u32::from(b))).nth(index)
        })
        .collect()
}

/// A SentencePiece token string's bytes: `▁` is a space, `<0xNN>` the byte NN.
fn sentencepiece_bytes(token: &str) -> Vec<u8> {
    if let Some(hex) = token
        .strip_prefix("<0x")
        .and_then(|rest| rest.strip_suffix('>'))
    {
        if let Ok(byte) = u8::from_str_radix(hex, 16) {
            return vec![byte];
        }
    }
    token.replace('\u{2581}', " ").into_bytes()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn byte_level_token_strings_spell_the_text() {
        // SmolLM2's tokens of `{"a": "é 12"}\n  x`, as vLLM's /tokenize gave them.
        let strings = [
            "{\"", "a", "\":", "Ġ\"", "Ã©", "Ġ", "1", "2", "\"}", "ĊĠ", "Ġx",
        ];
        let text = "{\"a\": \"é 12\"}\n  x";
        let pieces = token_bytes(&strings, text).unwrap();
        assert_eq!(pieces.len(), strings.len());
        assert_eq!(pieces[4], "é".as_bytes());
        assert_eq!(pieces[9], b"\n ");
        assert_eq!(pieces.concat(), text.as_bytes());
    }

    #[test]
    fn sentencepiece_token_strings_spell_the_text() {
        let strings = ["▁{\"", "a", "\":", "▁\"", "<0xC3>", "<0xA9>", "\"}"];
        let text = "{\"a\": \"é\"}";
        let pieces = token_bytes(&strings, text).unwrap();
        assert_eq!(pieces[0], b"{\"");
        assert_eq!(pieces[4], vec![0xC3]);
        assert_eq!(pieces.concat(), text.as_bytes());
    }

    #[test]
    fn token_strings_that_do_not_spell_the_text_give_no_pieces() {
        assert_eq!(token_bytes(&["ab", "c"], "abd"), None);
        assert_eq!(token_bytes(&["Ġx"], "y"), None);
    }
}
