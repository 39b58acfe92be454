//! Constrained generation: llama.cpp samples, the grammar decides.
//!
//! Each step samples a token *without* the grammar (repetition penalty, temperature,
//! top-p, then a draw — or greedy at temperature 0) and checks only that token against
//! llama.cpp's grammar sampler, on a one-element candidate list. Only when the grammar
//! rejects it is the grammar applied to the whole vocabulary and the token drawn again
//! from what is left, temperature and top-p coming after the grammar. Checking one token
//! is cheap; masking the vocabulary is not, and most tokens a model picks inside a good
//! grammar pass. The grammar sampler accepts each token exactly once.
//!
//! Nothing here can abort or hang the process: a grammar comes as a
//! [`CheckedGrammar`], which only passing [`gbnf::check()`](gbnfc_compiler::gbnf::check())
//! makes; llama.cpp's parse stacks are followed here first
//! ([`gbnf::llama_stacks`](gbnfc_compiler::gbnf::llama_stacks)), and a token that would make them explode ends the run with
//! [`BridgeError::GrammarTooAmbiguous`] before llama.cpp does that work;
//! end-of-generation is only picked when the grammar sampler allows it (llama.cpp allows
//! it only when the grammar is complete); every llama.cpp failure is a [`BridgeError`]. A
//! run that hits the token budget before the grammar is complete ends
//! [`Finish::Truncated`] — never a valid result.
//!
//! Small models loop (a 135M model can write one string for a thousand tokens). The
//! defence is [`crate::closeout`]: while the budget allows, the model writes; when its
//! next token would leave too few tokens for the shortest completion of the grammar,
//! that completion is written instead, so the run ends complete and within budget. An
//! optional repetition penalty ([`GenerateOptions::repeat_penalty`]) works earlier.

use std::time::Instant;

use gbnfc_compiler::gbnf::CheckedGrammar;
use llama_cpp_2::context::session::LlamaStateSeqFlags;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::token::LlamaToken;

use crate::chat_model::ChatModel;
use crate::engine::{Engine, PromptCache, PROMPT_CACHE_SIZE};
use crate::BridgeError;

mod grammar;
mod options;
mod run;

pub use grammar::{grammar_sampler, ReadyGrammar};
pub(crate) use grammar::{has_token_refs, GrammarState};
pub use options::{Finish, GenerateOptions, Generation, GrammarEngine, Stats, PENALTY_WINDOW};
use run::ms_since;
pub(crate) use run::{Run, Step};

/// Generates text from a templated prompt: the engine itself, one generation at a time
/// ([`generate`]), or the server's scheduler, which decodes several together. The retry
/// loop ([`crate::attempts`]), structured output and tool calls run on any, and read the
/// model only as a [`ChatModel`].
pub trait Generator: ChatModel {
    /// Generates from `prompt` under `grammar`, as [`generate`] does.
    ///
    /// # Errors
    /// As [`generate`]; a scheduler adds its own (cancelled, timed out).
    fn generate(
        &self,
        prompt: &str,
        grammar: Option<&CheckedGrammar>,
        options: &GenerateOptions,
    ) -> Result<Generation, BridgeError>;
}

impl Generator for Engine {
    fn generate(
        &self,
        prompt: &str,
        grammar: Option<&CheckedGrammar>,
        options: &GenerateOptions,
    ) -> Result<Generation, BridgeError> {
        generate(self, prompt, grammar, options)
    }
}

/// Generates from `prompt` (already templated: see [`crate::chat::render_prompt`]),
/// constrained by `grammar` when given.
///
/// # Errors
/// [`BridgeError::GrammarTooAmbiguous`] / [`BridgeError::GrammarRefused`] for the grammar,
/// [`BridgeError::ContextTooSmall`] when the prompt does not fit,
/// [`BridgeError::BudgetTooSmall`] when no complete output fits the budget, [`BridgeError::Context`]
/// / [`BridgeError::Decode`] from llama.cpp, [`BridgeError::DeadEnd`] when the grammar
/// allows no token. Truncation is not an error here: see [`Finish::Truncated`].
pub fn generate(
    engine: &Engine,
    prompt: &str,
    grammar: Option<&CheckedGrammar>,
    options: &GenerateOptions,
) -> Result<Generation, BridgeError> {
    let grammar_state = grammar
        .map(|g| GrammarState::new(engine, g, options.close_out, options.grammar_engine))
        .transpose()?;
    let mut cache = engine.lock();
    let mut ctx = engine.new_context()?;
    let n_ctx = ctx.n_ctx() as usize;
    let prompt_tokens = engine.tokenize_prompt(prompt);
    let mut run = Run::new(engine, grammar_state, &prompt_tokens, n_ctx, options)?;

    let started = Instant::now();
    let mut batch = LlamaBatch::new(prompt_tokens.len().max(1), 1);
    let (first_logits, cached) = evaluate_prompt(&mut ctx, &mut cache, &prompt_tokens, &mut batch)?;
    run.stats.prompt_cached = cached;
    run.stats.prompt_ms = ms_since(started);

    let generation_started = Instant::now();
    let mut position = prompt_tokens.len() as i32;
    let mut step = run.step(&first_logits)?;
    let finish = loop {
        let token = match step {
            Step::Decode(token) => token,
            Step::Done(finish) => break finish,
        };
        let decode_started = Instant::now();
        batch.clear();
        batch
            .add(token, position, &[0], true)
            .map_err(|e| BridgeError::Decode(e.to_string()))?;
        position += 1;
        ctx.decode(&mut batch)
            .map_err(|e| BridgeError::Decode(e.to_string()))?;
        run.stats.decode_ms += ms_since(decode_started);
        step = run.step(ctx.get_logits_ith(batch.n_tokens() - 1))?;
    };
    run.stats.generation_ms = ms_since(generation_started);
    Ok(run.into_generation(finish))
}

/// Puts the prompt into `ctx` — restored from the engine's cache when this prompt was
/// evaluated recently, else decoded (in chunks of the context's batch size: llama.cpp
/// asserts a batch fits it) and then cached — and returns the logits after its last
/// token, and whether they came from the cache.
fn evaluate_prompt(
    ctx: &mut LlamaContext<'_>,
    cache: &mut Vec<PromptCache>,
    prompt: &[LlamaToken],
    batch: &mut LlamaBatch<'_>,
) -> Result<(Vec<f32>, bool), BridgeError> {
    if let Some(i) = cache.iter().position(|c| c.tokens == prompt) {
        let entry = cache.remove(i);
        let restored = ctx.state_seq_set(&entry.state, 0).is_ok();
        let logits = entry.logits.clone();
        cache.push(entry);
        if restored {
            return Ok((logits, true));
        }
        ctx.clear_kv_cache();
    }
    let last = prompt.len() - 1;
    let chunk = (ctx.n_batch() as usize).max(1);
    for (c, tokens) in prompt.chunks(chunk).enumerate() {
        batch.clear();
        for (j, &token) in tokens.iter().enumerate() {
            let i = c * chunk + j;
            batch
                .add(token, i as i32, &[0], i == last)
                .map_err(|e| BridgeError::Decode(e.to_string()))?;
        }
        ctx.decode(batch)
            .map_err(|e| BridgeError::Decode(e.to_string()))?;
    }
    let logits = ctx.get_logits_ith(batch.n_tokens() - 1).to_vec();
    if let Ok(state) = ctx.state_seq_get(0, LlamaStateSeqFlags::empty()) {
        cache.retain(|c| c.tokens != prompt);
        if cache.len() >= PROMPT_CACHE_SIZE {
            cache.remove(0);
        }
        cache.push(PromptCache {
            tokens: prompt.to_vec(),
            state,
            logits: logits.clone(),
        });
    }
    Ok((logits, false))
}
