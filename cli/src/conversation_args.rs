//! The conversation flags `gbnfc run`, `gbnfc call` and `gbnfc mcp` share.

use clap::Args;
use gbnfc_bridge::chat::{self, Message};
use gbnfc_bridge::BridgeError;

use crate::schema_commands::read_json;
use crate::Failure;

/// Where the conversation comes from: a request, or an OpenAI messages array; a system
/// prompt goes before either.
#[derive(Args, Debug, Clone)]
pub struct ConversationArgs {
    /// The user's request.
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,
    /// An OpenAI messages array (or a chat request with `messages`) as JSON.
    #[arg(long, value_name = "FILE")]
    pub messages: Option<String>,
    /// A system prompt, put before the conversation.
    #[arg(long, value_name = "TEXT")]
    pub system: Option<String>,
}

impl ConversationArgs {
    /// The conversation: `--system`, then `--prompt` or the `--messages` file.
    ///
    /// # Errors
    /// Neither `--prompt` nor `--messages`; an unreadable or malformed messages file.
    pub fn conversation(&self) -> Result<Vec<Message>, Failure> {
        let mut conversation = match (&self.prompt, &self.messages) {
            (Some(prompt), _) => chat::conversation(None, prompt),
            (None, Some(path)) => {
                let value = read_json(path)?;
                chat::messages_from_json(&value).map_err(|e: BridgeError| {
                    Failure::new(format!("{path}: {e}"))
                        .help("give an array of {\"role\": ..., \"content\": ...} objects")
                })?
            }
            (None, None) => return Err(Failure::new("one of --prompt or --messages is required")),
        };
        if let Some(system) = &self.system {
            conversation.insert(0, Message::system(system.clone()));
        }
        Ok(conversation)
    }
}
