//! What the layers above generation read of a model, wherever it runs: its name, the chat
//! template its prompts are rendered with, its context and its token counts.
//!
//! Structured output, tool calls and their retrieval, the MCP loop and the server read the
//! model only through [`ChatModel`], and generate only through
//! [`Generator`](crate::generate::Generator), which extends it: the local [`Engine`] is
//! one implementation, a remote engine another, and everything above works unchanged on
//! either.

use crate::engine::Engine;
use crate::reasoning::Reasoning;
use crate::BridgeError;

/// A model as conversations are rendered for it.
pub trait ChatModel {
    /// The model's name for results (`model` of a chat completion).
    fn name(&self) -> String;

    /// The chat template in use: the one given over the model's own, else the model's,
    /// if it has one (prompts without one are ChatML). Read to render prompts, to pick the
    /// call syntax the model was trained on ([`crate::chat::syntax_for`]) and to find
    /// reasoning markers.
    fn chat_template(&self) -> Option<String>;

    /// The tokens one sequence may hold, prompt and output together.
    fn ctx(&self) -> u32;

    /// How many tokens `text` takes as plain text (no special tokens, no BOS).
    ///
    /// # Errors
    /// A remote engine's failure to answer.
    fn count_tokens(&self, text: &str) -> Result<usize, BridgeError>;

    /// How generations reason; `None` when they do not.
    fn reasoning(&self) -> Option<&Reasoning>;
}

impl ChatModel for Engine {
    fn name(&self) -> String {
        Engine::name(self)
    }

    fn chat_template(&self) -> Option<String> {
        if let Some(text) = self.chat_template_override() {
            return Some(text.to_string());
        }
        self.model()
            .chat_template(None)
            .ok()
            .and_then(|t| t.to_string().ok())
    }

    fn ctx(&self) -> u32 {
        Engine::ctx(self)
    }

    fn count_tokens(&self, text: &str) -> Result<usize, BridgeError> {
        Ok(self.tokenize_text(text).len())
    }

    fn reasoning(&self) -> Option<&Reasoning> {
        Engine::reasoning(self)
    }
}
