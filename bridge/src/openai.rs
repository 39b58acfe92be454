//! Results in the shape the hosted APIs return: an OpenAI `chat.completion` object, with
//! its ids (`chatcmpl-…`, and `call_…` for tool calls).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::chat::Message;
use crate::generate::{Finish, Stats};

/// Token counts of a completion (all attempts of a retried request together).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens evaluated.
    pub prompt_tokens: usize,
    /// Tokens generated.
    pub completion_tokens: usize,
    /// Of those, the reasoning section's.
    pub reasoning_tokens: usize,
}

impl Usage {
    /// The token counts of `stats`.
    pub fn of(stats: &Stats) -> Usage {
        Usage {
            prompt_tokens: stats.prompt_tokens,
            completion_tokens: stats.generated_tokens,
            reasoning_tokens: stats.reasoning_tokens,
        }
    }

    /// The OpenAI `usage` object; with reasoning, `completion_tokens_details` says how
    /// many of the completion's tokens were thinking.
    pub fn to_json(self) -> Value {
        let mut usage = json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        });
        if self.reasoning_tokens > 0 {
            usage["completion_tokens_details"] = json!({"reasoning_tokens": self.reasoning_tokens});
        }
        usage
    }
}

/// How a choice ended, as OpenAI names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// The answer is complete.
    Stop,
    /// The token budget cut it.
    Length,
    /// The answer is one or more tool calls.
    ToolCalls,
}

impl FinishReason {
    /// `stop`, `length` or `tool_calls`.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
        }
    }
}

impl From<Finish> for FinishReason {
    fn from(finish: Finish) -> Self {
        match finish {
            Finish::Stop => FinishReason::Stop,
            Finish::Truncated => FinishReason::Length,
        }
    }
}

/// A whole `chat.completion` object with one choice.
pub fn chat_completion(
    model: &str,
    message: &Message,
    finish_reason: FinishReason,
    usage: Usage,
) -> Value {
    json!({
        "id": format!("chatcmpl-{}", random_id(24)),
        "object": "chat.completion",
        "created": unix_time(),
        "model": model,
        "choices": [{
            "index": 0,
            "message": message.to_json(),
            "logprobs": null,
            "finish_reason": finish_reason.as_str(),
        }],
        "usage": usage.to_json(),
    })
}

/// A fresh tool-call id: `call_` and 24 letters and digits.
pub fn call_id() -> String {
    format!("call_{}", random_id(24))
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn unix_time() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `n` random letters and digits (ids only need to be unique, not secret).
pub fn random_id(n: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut id = String::with_capacity(n);
    let mut bits = 0u64;
    let mut left = 0u32;
    while id.len() < n {
        if left < 6 {
            let mut hasher = RandomState::new().build_hasher();
            hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
            hasher.write_u128(
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            bits = hasher.finish();
            left = 64;
        }
        id.push(char::from(
            ALPHABET[(bits % ALPHABET.len() as u64) as usize],
        ));
        bits /= ALPHABET.len() as u64;
        left -= 6;
    }
    id
}
