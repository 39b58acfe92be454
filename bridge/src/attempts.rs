//! Generation with retries, shared by structured output ([`crate::structured`]) and tool
//! calls ([`crate::tool_calls`]): each attempt renders the conversation, generates (retry
//! `n` with seed `seed + n`) and is judged; a rejected attempt's answer and its problems
//! join the conversation before the next one. When every attempt is rejected, the error
//! is [`BridgeError::Truncated`] if each of them ran out of tokens, else
//! [`BridgeError::Invalid`] with every attempt's problems.

use gbnfc_compiler::gbnf::CheckedGrammar;
use gbnfc_compiler::tools::Syntax;

use crate::chat::{self, Message};
use crate::generate::{Finish, GenerateOptions, Generation, Generator, Stats};
use crate::structured::feedback;
use crate::BridgeError;

/// What the judge of an attempt decided.
pub enum Verdict<T> {
    /// The attempt gave the result.
    Accept(T),
    /// Try again, telling the model these problems.
    Retry(Vec<String>),
}

/// One attempt, as its judge sees it.
pub struct Attempt<'s> {
    /// Which attempt it is, from 1.
    pub number: usize,
    /// The costs of every attempt so far, this one's included.
    pub stats: &'s Stats,
}

/// The problem of an attempt cut off by the token budget after `tokens` tokens.
pub fn cut_off(tokens: usize) -> String {
    format!("the answer was cut off after {tokens} tokens, before it was complete")
}

/// Runs up to `retries + 1` attempts of `conversation` under `grammar`, each judged by
/// `judge`, to the first accepted result. Earlier tool calls in the conversation are shown
/// in `syntax` (`None`: the chat template's, [`chat::syntax_for`]).
///
/// # Errors
/// Any engine error; [`BridgeError::Truncated`] (the last attempt's text) when every
/// attempt ran out of tokens; [`BridgeError::Invalid`] listing each attempt's problems
/// otherwise.
pub fn with_retries<T>(
    generator: &(impl Generator + ?Sized),
    mut conversation: Vec<Message>,
    grammar: Option<&CheckedGrammar>,
    syntax: Option<Syntax>,
    options: &GenerateOptions,
    retries: usize,
    mut judge: impl FnMut(&Generation, &Attempt<'_>) -> Verdict<T>,
) -> Result<T, BridgeError> {
    let mut stats = Stats::default();
    let mut errors = Vec::new();
    let mut truncations = 0;
    let mut last_truncated = None;
    for attempt in 0..=retries {
        let prompt = chat::render_prompt_with(generator, None, syntax, &conversation)?;
        let attempt_options = GenerateOptions {
            seed: options.seed.wrapping_add(attempt as u32),
            ..*options
        };
        let generation = generator.generate(&prompt, grammar, &attempt_options)?;
        stats.add(&generation.stats);
        let seen = Attempt {
            number: attempt + 1,
            stats: &stats,
        };
        let problems = match judge(&generation, &seen) {
            Verdict::Accept(result) => return Ok(result),
            Verdict::Retry(problems) => problems,
        };
        if generation.finish == Finish::Truncated {
            truncations += 1;
            last_truncated = Some((generation.stats.generated_tokens, generation.text.clone()));
        }
        errors.extend(
            problems
                .iter()
                .map(|p| format!("attempt {}: {p}", attempt + 1)),
        );
        conversation.push(Message::assistant(generation.text));
        conversation.push(Message::user(feedback(&problems)));
    }
    match last_truncated {
        Some((tokens, text)) if truncations == retries + 1 => {
            Err(BridgeError::Truncated { tokens, text })
        }
        _ => Err(BridgeError::Invalid {
            attempts: retries + 1,
            errors,
        }),
    }
}
