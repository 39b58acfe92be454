//! The engine a command runs on: the local one, or the remote ones named by `--backend`.

use gbnfc_compiler::gbnf::CheckedGrammar;
use serde_json::{json, Value};

use crate::chat_model::ChatModel;
use crate::engine::{Engine, EngineOptions};
use crate::generate::{GenerateOptions, Generation, Generator};
use crate::reasoning::Reasoning;
use crate::remote::{BackendUrl, Pool};
use crate::BridgeError;

/// The local engine or a remote one, as one [`Generator`].
#[derive(Debug)]
pub enum AnyEngine {
    /// The model loaded in this process.
    Local(Engine),
    /// Remote engines reached over HTTP (one or more, balanced and failed over).
    Remote(Pool),
}

impl AnyEngine {
    /// Loads the local model under `options`, or, given backend URLs, connects to those
    /// engines (of `options`, only the chat template and reasoning apply there).
    ///
    /// # Errors
    /// As [`Engine::load`] or [`Pool::connect`].
    pub fn open(
        backends: &[BackendUrl],
        options: &EngineOptions,
    ) -> Result<AnyEngine, BridgeError> {
        if backends.is_empty() {
            Engine::load(options).map(AnyEngine::Local)
        } else {
            Pool::connect(backends, options).map(AnyEngine::Remote)
        }
    }

    /// Where and how it runs, for `--stats`: the local engine's threads, context and
    /// offload; the remote engines' URLs, builds and slots, and the context.
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
            AnyEngine::Remote(pool) => vec![
                ("backends", pool.status()),
                ("ctx", json!(ChatModel::ctx(pool))),
            ],
        }
    }

    fn model(&self) -> &dyn Generator {
        match self {
            AnyEngine::Local(engine) => engine,
            AnyEngine::Remote(pool) => pool,
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
