//! One remote engine, whichever it is: what the [`Pool`](super::Pool) holds and
//! generates on.

use std::time::Duration;

use gbnfc_compiler::gbnf::CheckedGrammar;

use super::{BackendUrl, Call, EngineKind, LlamaServer, Vllm};
use crate::chat_model::ChatModel;
use crate::engine::EngineOptions;
use crate::generate::{GenerateOptions, Generation};
use crate::reasoning::Reasoning;
use crate::BridgeError;

/// A remote engine, as its URL's scheme names it.
#[derive(Debug)]
pub enum RemoteEngine {
    /// llama.cpp's `llama-server`.
    LlamaServer(LlamaServer),
    /// vLLM's OpenAI-compatible server.
    Vllm(Vllm),
}

impl RemoteEngine {
    /// Connects to the engine at `url` and reads its model's metadata.
    ///
    /// # Errors
    /// As [`LlamaServer::connect`] or [`Vllm::connect`].
    pub fn connect(url: &BackendUrl, options: &EngineOptions) -> Result<RemoteEngine, BridgeError> {
        Ok(match url.kind {
            EngineKind::LlamaServer => {
                RemoteEngine::LlamaServer(LlamaServer::connect(url, options)?)
            }
            EngineKind::Vllm => RemoteEngine::Vllm(Vllm::connect(url, options)?),
        })
    }

    /// The model as prompts are rendered for it.
    fn model(&self) -> &dyn ChatModel {
        match self {
            RemoteEngine::LlamaServer(server) => server,
            RemoteEngine::Vllm(server) => server,
        }
    }

    /// The backend URL it was reached at.
    pub fn url(&self) -> &BackendUrl {
        match self {
            RemoteEngine::LlamaServer(server) => server.url(),
            RemoteEngine::Vllm(server) => server.url(),
        }
    }

    /// How many generations it decodes at once.
    pub fn slots(&self) -> usize {
        match self {
            RemoteEngine::LlamaServer(server) => server.slots(),
            RemoteEngine::Vllm(server) => server.slots(),
        }
    }

    /// Its build or version.
    pub fn build(&self) -> &str {
        match self {
            RemoteEngine::LlamaServer(server) => server.build(),
            RemoteEngine::Vllm(server) => server.build(),
        }
    }

    /// Whether it answers `GET /health` within `timeout`.
    pub fn healthy(&self, timeout: Duration) -> bool {
        match self {
            RemoteEngine::LlamaServer(server) => server.healthy(timeout),
            RemoteEngine::Vllm(server) => server.healthy(timeout),
        }
    }

    /// Generates `prompt` under `grammar` and `options`, with what `call` adds.
    ///
    /// # Errors
    /// As [`LlamaServer::complete`] or [`Vllm::complete`].
    pub fn complete(
        &self,
        prompt: &str,
        grammar: Option<&CheckedGrammar>,
        options: &GenerateOptions,
        call: Call<'_>,
    ) -> Result<Generation, BridgeError> {
        match self {
            RemoteEngine::LlamaServer(server) => server.complete(prompt, grammar, options, call),
            RemoteEngine::Vllm(server) => server.complete(prompt, grammar, options, call),
        }
    }
}

impl ChatModel for RemoteEngine {
    fn name(&self) -> String {
        self.model().name()
    }

    fn chat_template(&self) -> Option<String> {
        self.model().chat_template()
    }

    fn ctx(&self) -> u32 {
        self.model().ctx()
    }

    fn count_tokens(&self, text: &str) -> Result<usize, BridgeError> {
        self.model().count_tokens(text)
    }

    fn reasoning(&self) -> Option<&Reasoning> {
        None
    }
}
