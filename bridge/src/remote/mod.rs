//! Remote engines: generation on an inference server over HTTP, behind the same
//! [`Generator`](crate::generate::Generator) as the local engine, so that structured
//! output, tool calls, validation and retries run here unchanged while the server
//! samples.
//!
//! A backend is named by a URL whose scheme says which engine it is:
//! `llama-server+http://HOST:PORT` ([`llama_server`]: llama.cpp's `llama-server`, the
//! checked GBNF sent with the prompt) or `vllm+http://HOST:PORT` ([`vllm`]: vLLM's
//! OpenAI-compatible server, the grammar in XGrammar's spelling). Either way the prompt is
//! rendered here by the same chat-template code as the local engine's, and
//! [`RemoteEngine`] puts both behind one type. Plain HTTP only: gbnfc is built without
//! TLS; reach a remote engine over a private network or a tunnel.
//!
//! Several engines of one model make a [`Pool`] (`--backend` repeated; the gateway,
//! `gbnfc serve --backend …`): balanced by generations in flight per slot, failed over
//! when one is down ([`http`] says which failures mean that), health-checked.
//!
//! Close-out at the token budget ([`crate::closeout`]) steers each token locally; a remote
//! engine only reports that it stopped at the budget, so close-out is done on its text
//! afterwards ([`close_out`]): cut back to where the grammar's shortest completion fits,
//! completed. A text that cannot be closed stays [`Finish::Truncated`](crate::Finish),
//! never returned as valid, and is retried like any other failed attempt.

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use crate::chat::{self, Message};
use crate::chat_model::ChatModel;
use crate::engine::EngineOptions;
use crate::reasoning::{Reasoning, ReasoningMode};
use crate::BridgeError;

pub mod close_out;
pub mod engine;
pub mod http;
pub mod llama_server;
pub mod pool;
pub mod vllm;

pub use engine::RemoteEngine;
pub use llama_server::LlamaServer;
pub use pool::Pool;
pub use vllm::Vllm;

/// Refuses a model that would reason under `options`: reasoning does not run on remote
/// engines yet.
///
/// # Errors
/// [`BridgeError::Reasoning`] naming `url` and the way out; what resolving the reasoning
/// markers refuses.
pub(crate) fn refuse_reasoning(
    model: &dyn ChatModel,
    options: &EngineOptions,
    url: &BackendUrl,
) -> Result<(), BridgeError> {
    if options.reasoning.mode == ReasoningMode::Off {
        return Ok(());
    }
    let probe = chat::render_prompt(model, &[Message::user("Hello")]).unwrap_or_default();
    if Reasoning::resolve(&options.reasoning, model.chat_template().as_deref(), &probe)?.is_some() {
        return Err(BridgeError::Reasoning(format!(
            "the model behind {url} reasons, and reasoning does not run on remote engines \
             yet: pass --reasoning off"
        )));
    }
    Ok(())
}

/// What a request adds to a generation besides its prompt, grammar and sampling.
#[derive(Default)]
pub struct Call<'a> {
    /// Stop sequences: free text ends before the first one it contains.
    pub stop: &'a [String],
    /// When the request must be over.
    pub deadline: Option<Instant>,
    /// Receives the text as the server streams it; `false` ends the generation (the
    /// client is gone), which is then [`BridgeError::Cancelled`].
    pub on_text: Option<&'a mut dyn FnMut(&str) -> bool>,
    /// Says when the caller no longer wants the result: the generation is then streamed
    /// from the server (the caller sees it whole all the same) and dropped when this turns
    /// true, which frees the server's slot.
    pub cancelled: Option<&'a dyn Fn() -> bool>,
}

impl<'a> Call<'a> {
    /// Whether the text is passed on as it comes (and so cannot be cut back).
    pub fn passes_on(&self) -> bool {
        self.on_text.is_some()
    }

    /// Whether the server should stream: the text is passed on, or the caller may go away.
    pub fn streams(&self) -> bool {
        self.on_text.is_some() || self.cancelled.is_some()
    }

    /// What a streamed generation does with each piece of the server's text: passes it on
    /// (an empty piece goes nowhere) and says whether to go on — not once the caller is
    /// gone.
    pub fn into_forward(self) -> impl FnMut(&str) -> bool + 'a {
        let Call {
            mut on_text,
            cancelled,
            ..
        } = self;
        move |piece: &str| {
            !cancelled.is_some_and(|c| c())
                && (piece.is_empty() || on_text.as_mut().is_none_or(|f| f(piece)))
        }
    }
}

/// Which engine a backend URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// llama.cpp's `llama-server` (`llama-server+http://`).
    LlamaServer,
    /// vLLM's OpenAI-compatible server (`vllm+http://`).
    Vllm,
}

impl EngineKind {
    /// The name a backend URL's scheme starts with.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::LlamaServer => "llama-server",
            EngineKind::Vllm => "vllm",
        }
    }

    /// The engine in words, for errors.
    pub fn describe(self) -> &'static str {
        match self {
            EngineKind::LlamaServer => "llama.cpp's llama-server",
            EngineKind::Vllm => "vLLM's OpenAI-compatible server",
        }
    }
}

/// A backend URL: the engine, and the HTTP address it answers on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendUrl {
    /// Which engine.
    pub kind: EngineKind,
    /// Its address: `http://HOST:PORT`, with any path the URL gave and no trailing `/`.
    pub base: String,
}

impl fmt::Display for BackendUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}+{}", self.kind.name(), self.base)
    }
}

impl FromStr for BackendUrl {
    type Err = String;

    /// Reads `ENGINE+http://HOST[:PORT][/PATH]`.
    fn from_str(text: &str) -> Result<BackendUrl, String> {
        let known = "llama-server+http://HOST:PORT or vllm+http://HOST:PORT";
        let Some((engine, address)) = text.split_once('+') else {
            return Err(format!(
                "`{text}` names no engine: write the engine before the address, as in {known}"
            ));
        };
        let kind = match engine {
            "llama-server" => EngineKind::LlamaServer,
            "vllm" => EngineKind::Vllm,
            other => {
                return Err(format!(
                    "`{other}` in `{text}` is not an engine gbnfc knows: use {known}"
                ))
            }
        };
        let Some(rest) = address.strip_prefix("http://") else {
            return Err(if address.starts_with("https://") {
                format!(
                    "`{text}`: gbnfc is built without TLS; reach the engine over plain http on a \
                     private network or through a tunnel"
                )
            } else {
                format!("`{text}` is not an http address: use {known}")
            });
        };
        let host = rest.split('/').next().unwrap_or_default();
        if host.is_empty() {
            return Err(format!("`{text}` has no host: use {known}"));
        }
        Ok(BackendUrl {
            kind,
            base: format!("http://{}", rest.trim_end_matches('/')),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_backend_url_names_the_engine_and_its_address() {
        let url: BackendUrl = "llama-server+http://127.0.0.1:8080/".parse().unwrap();
        assert_eq!(url.kind, EngineKind::LlamaServer);
        assert_eq!(url.base, "http://127.0.0.1:8080");
        assert_eq!(url.to_string(), "llama-server+http://127.0.0.1:8080");
        let url: BackendUrl = "vllm+http://10.0.0.2:8000".parse().unwrap();
        assert_eq!(url.kind, EngineKind::Vllm);
        assert_eq!(url.to_string(), "vllm+http://10.0.0.2:8000");
    }

    #[test]
    fn a_url_without_engine_tls_or_host_is_refused_with_the_fix() {
        for (text, says) in [
            ("http://127.0.0.1:8080", "names no engine"),
            ("ollama+http://127.0.0.1:8080", "not an engine gbnfc knows"),
            ("llama-server+https://example.invalid", "without TLS"),
            ("llama-server+ftp://x", "not an http address"),
            ("llama-server+http://", "has no host"),
        ] {
            let error = text.parse::<BackendUrl>().unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
        }
    }
}
