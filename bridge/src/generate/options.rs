//! What a generation is asked for (sampling settings, the grammar engine) and what it
//! returns (text, how it finished, its costs).

use serde_json::{json, Value};

use crate::reasoning::DEFAULT_REASONING_BUDGET;

/// How many tokens back the repetition penalty looks.
pub const PENALTY_WINDOW: i32 = 64;

/// Sampling settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GenerateOptions {
    /// Seed of the draw (the same seed, prompt and model give the same output).
    pub seed: u32,
    /// Temperature; 0 is greedy.
    pub temperature: f32,
    /// Nucleus (top-p) threshold; 1 keeps every token.
    pub top_p: f32,
    /// The token budget for the output.
    pub max_tokens: usize,
    /// Repetition penalty over the last [`PENALTY_WINDOW`] tokens; 1 is off.
    pub repeat_penalty: f32,
    /// Close out with the shortest completion when the budget nears ([`crate::closeout`]).
    pub close_out: bool,
    /// Which engine checks tokens against the grammar.
    pub grammar_engine: GrammarEngine,
    /// On an engine that reasons ([`crate::reasoning`]): the tokens the model may think
    /// before the closing marker is written for it. The answer keeps `max_tokens` of its
    /// own after the section.
    pub reasoning_budget: usize,
}

/// Which engine checks tokens against the grammar and masks the vocabulary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GrammarEngine {
    /// gbnfc's own ([`crate::mask`]): the same answers as llama.cpp's, masks in a fraction
    /// of the time, no grammar refused for its ambiguity. Grammars that name tokens
    /// (`<|name|>`, `<[id]>`) still run on llama.cpp's.
    #[default]
    Gbnfc,
    /// llama.cpp's grammar sampler, its parse stacks followed in Rust and bounded
    /// ([`gbnf::llama_stacks`](gbnfc_compiler::gbnf::llama_stacks)).
    Llama,
}

impl GrammarEngine {
    /// The name the command line uses: `gbnfc` or `llama`.
    pub fn name(self) -> &'static str {
        match self {
            GrammarEngine::Gbnfc => "gbnfc",
            GrammarEngine::Llama => "llama",
        }
    }
}

impl Default for GenerateOptions {
    /// Seed 0, temperature 0.8, top-p 0.95, 512 tokens, no repetition penalty, close-out on,
    /// gbnfc's grammar engine, [`DEFAULT_REASONING_BUDGET`] tokens of reasoning.
    fn default() -> Self {
        GenerateOptions {
            seed: 0,
            temperature: 0.8,
            top_p: 0.95,
            max_tokens: 512,
            repeat_penalty: 1.0,
            close_out: true,
            grammar_engine: GrammarEngine::Gbnfc,
            reasoning_budget: DEFAULT_REASONING_BUDGET,
        }
    }
}

/// How a generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The model ended it (end-of-generation, allowed only once the grammar is complete),
    /// or the grammar allows nothing more.
    Stop,
    /// The token budget (or the context) ran out first: the text is incomplete.
    Truncated,
}

impl Finish {
    /// The OpenAI `finish_reason`: `stop` or `length`.
    pub fn reason(self) -> &'static str {
        match self {
            Finish::Stop => "stop",
            Finish::Truncated => "length",
        }
    }
}

/// What a generation cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Tokens in the prompt.
    pub prompt_tokens: usize,
    /// Tokens generated (closing-out tokens included).
    pub generated_tokens: usize,
    /// Of those, the reasoning section's, its markers included (0 when the engine does not
    /// reason).
    pub reasoning_tokens: usize,
    /// Milliseconds evaluating the prompt (or restoring it from the cache).
    pub prompt_ms: f64,
    /// The prompt's evaluation came from the engine's cache (same prompt as last time).
    pub prompt_cached: bool,
    /// Milliseconds evaluating generated tokens.
    pub decode_ms: f64,
    /// Milliseconds in the sampler chain (penalty, temperature, top-p, draw).
    pub sampling_ms: f64,
    /// Milliseconds in the grammar: checks, full-vocabulary masks, accepts, close-out.
    pub grammar_ms: f64,
    /// Milliseconds from the first sampled token to the end.
    pub generation_ms: f64,
    /// Tokens the grammar rejected, so the token was drawn again from the masked vocabulary.
    pub resampled: usize,
    /// Tokens written by close-out (0 when the model finished by itself).
    pub closed_out_tokens: usize,
    /// Whether close-out was available for this grammar.
    pub close_out: bool,
    /// The most parse stacks llama.cpp's grammar sampler held at once (see
    /// [`gbnf::llama_stacks`](gbnfc_compiler::gbnf::llama_stacks); a grammar is stopped past 4,096). 0 under gbnfc's engine,
    /// which keeps no stacks.
    pub peak_stacks: usize,
    /// The grammar engine that ran (`gbnfc` or `llama`; empty without a grammar).
    pub grammar_engine: &'static str,
    /// The token budget in force (the requested one, or what the context left).
    pub budget: usize,
    /// The repetition penalty in force (1: off).
    pub repeat_penalty: f32,
}

impl Stats {
    /// Generated tokens per second of generation.
    pub fn tokens_per_second(&self) -> f64 {
        if self.generation_ms > 0.0 {
            self.generated_tokens as f64 * 1000.0 / self.generation_ms
        } else {
            0.0
        }
    }

    /// Adds another generation's costs (for totals over retries).
    pub fn add(&mut self, other: &Stats) {
        self.prompt_tokens += other.prompt_tokens;
        self.generated_tokens += other.generated_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.prompt_ms += other.prompt_ms;
        self.prompt_cached |= other.prompt_cached;
        self.decode_ms += other.decode_ms;
        self.sampling_ms += other.sampling_ms;
        self.grammar_ms += other.grammar_ms;
        self.generation_ms += other.generation_ms;
        self.resampled += other.resampled;
        self.closed_out_tokens += other.closed_out_tokens;
        self.close_out |= other.close_out;
        self.peak_stacks = self.peak_stacks.max(other.peak_stacks);
        if !other.grammar_engine.is_empty() {
            self.grammar_engine = other.grammar_engine;
        }
        self.budget = self.budget.max(other.budget);
        self.repeat_penalty = other.repeat_penalty;
    }

    /// The stats as JSON (what `--stats` prints), times rounded to 0.01 ms.
    pub fn to_json(&self) -> Value {
        let ms = |x: f64| (x * 100.0).round() / 100.0;
        json!({
            "prompt_tokens": self.prompt_tokens,
            "generated_tokens": self.generated_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "answer_tokens": self.generated_tokens - self.reasoning_tokens,
            "prompt_ms": ms(self.prompt_ms),
            "prompt_cached": self.prompt_cached,
            "decode_ms": ms(self.decode_ms),
            "sampling_ms": ms(self.sampling_ms),
            "grammar_ms": ms(self.grammar_ms),
            "generation_ms": ms(self.generation_ms),
            "tokens_per_second": ms(self.tokens_per_second()),
            "resampled": self.resampled,
            "close_out": self.close_out,
            "closed_out_tokens": self.closed_out_tokens,
            "peak_stacks": self.peak_stacks,
            "grammar_engine": self.grammar_engine,
            "budget": self.budget,
            "repeat_penalty": (f64::from(self.repeat_penalty) * 1000.0).round() / 1000.0,
        })
    }
}

/// The text a generation produced, how it ended, and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// The output text (lossily decoded if a truncated run ended inside a character): on
    /// an engine that reasons, the answer alone, after the reasoning section.
    pub text: String,
    /// On an engine that reasons, the thinking between the markers.
    pub reasoning: Option<String>,
    /// How it ended.
    pub finish: Finish,
    /// Costs.
    pub stats: Stats,
}
