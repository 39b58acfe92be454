//! The engine a command runs on: the local one, or a remote one named by `--backend`.

use gbnfc_compiler::gbnf::CheckedGrammar;
use serde_json::{json, Value};

use crate::chat_model::ChatModel;
use crate::engine::{Engine, EngineOptions};
use crate::generate::{GenerateOptions, Generation, Generator};
use crate::reasoning::Reasoning;
use crate::remote::{BackendUrl, EngineKind, LlamaServer};
use crate::BridgeError;

/// The local engine or a remote one, as one [`Generator`].
#[derive(Debug)]
pub enum AnyEngine {
    /// The model loaded in this process.
    Local(Engine),
    /// A `llama-server` reached over HTTP.
    LlamaServer(LlamaServer),
}

impl AnyEngine {
    /// Loads the local model under `options`, or, given a backend URL, connects to that
    /// engine (of `options`, only the chat template and reasoning apply there).
    ///
    /// # Errors
    /// As [`Engine::load`] or [`LlamaServer::connect`].
    pub fn open(
        backend: Option<&BackendUrl>,
        options: &EngineOptions,
    ) -> Result<AnyEngine, BridgeError> {
        match backend {
            None => Engine::load(options).map(AnyEngine::Local),
            Some(url) => match url.kind {
                EngineKind::LlamaServer => {
                    LlamaServer::connect(url, options).map(AnyEngine::LlamaServer)
                }
            },
        }
    }

    /// Where and how it runs, for `--stats`: the local engine's threads, context and
    /// offload; a remote engine's URL, build, slots and context.
    pub fn settings(&self) -> Vec<(&'static str, Value)> {
        match self {
            AnyEngine::Local(engine) => vec![
                ("threads", json!(engine.threads())),
                ("ctx", json!(engine.ctx())),
                (
                    "n_gpu_layers",
                    json!(engine.n_gpu_layers().min(i32::MAX as u32)),
                ),
            ],
            AnyEngine::LlamaServer(server) => vec![
                ("backend", json!(server.url().to_string())),
                ("backend_build", json!(server.build())),
                ("slots", json!(server.slots())),
                ("ctx", json!(ChatModel::ctx(server))),
            ],
        }
    }

    fn model(&self) -> &dyn Generator {
        match self {
            AnyEngine::Local(engine) => engine,
            AnyEngine::LlamaServer(server) => server,
        }
    }
}

impl ChatModel for AnyEngine {
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
        self.model().reasoning()
    }
}

impl Generator for AnyEngine {
    fn generate(
        &self,
        prompt: &str,
        grammar: Option<&CheckedGrammar>,
        options: &GenerateOptions,
    ) -> Result<Generation, BridgeError> {
        self.model().generate(prompt, grammar, options)
    }
}
