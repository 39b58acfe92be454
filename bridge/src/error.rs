//! Errors from the bridge: every llama.cpp failure comes back as a value, never an abort.

use std::path::PathBuf;

use gbnfc_compiler::gbnf::llama_stacks::TooAmbiguous;
use gbnfc_compiler::gbnf::Rejected;
use thiserror::Error;

/// What went wrong talking to llama.cpp, or with what it produced.
#[derive(Debug, Error)]
pub enum BridgeError {
    /// No model file could be found.
    #[error("no model found: {0}")]
    NoModel(String),
    /// The file is not a GGUF model (its first bytes are not `GGUF`).
    #[error("`{path}` is not a GGUF model file: {reason}")]
    NotGguf {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// The file starts like GGUF but is damaged: cut short, or of a version llama.cpp
    /// does not read.
    #[error("`{path}` is not a usable GGUF model: {reason}")]
    BadModelFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The model file exists but llama.cpp could not load it.
    #[error("llama.cpp could not load the model `{path}`: {reason}")]
    ModelLoad {
        /// The file.
        path: PathBuf,
        /// llama.cpp's reason, or what gbnfc found wrong with the file.
        reason: String,
    },
    /// llama.cpp's backend could not be initialised.
    #[error("llama.cpp's backend could not be initialised: {0}")]
    Backend(String),
    /// llama.cpp could not create an inference context.
    #[error("llama.cpp could not create a context of {ctx} tokens: {reason}")]
    Context {
        /// The context size asked for.
        ctx: u32,
        /// Why, as far as known.
        reason: String,
    },
    /// The prompt does not fit in the context.
    #[error(
        "the prompt is {prompt_tokens} tokens but the context holds {ctx}; \
         raise --ctx (at least {needed}) or shorten the prompt"
    )]
    ContextTooSmall {
        /// Tokens in the prompt.
        prompt_tokens: usize,
        /// The context size.
        ctx: u32,
        /// A context size that would fit the prompt and one generated token.
        needed: usize,
    },
    /// Reasoning was asked for but cannot be set up (no markers known).
    #[error("{0}")]
    Reasoning(String),
    /// The model has no chat template and none could be applied.
    #[error("cannot build the prompt with the model's chat template: {0}")]
    ChatTemplate(String),
    /// A message list that cannot be turned into a prompt.
    #[error("invalid messages: {0}")]
    Messages(String),
    /// The grammar failed gbnfc's own checks, so llama.cpp never saw it.
    #[error("the grammar is not one llama.cpp can use safely:\n{0}")]
    GrammarCheck(String),
    /// llama.cpp refused a grammar.
    #[error("llama.cpp refused the grammar: {0}")]
    GrammarRefused(String),
    /// The grammar sampler reached a state from which no token can continue.
    #[error("the grammar allows no token after {generated} generated tokens: {text:?}")]
    DeadEnd {
        /// Tokens generated so far.
        generated: usize,
        /// The text generated so far.
        text: String,
    },
    /// llama.cpp's grammar sampler would follow too many parse stacks (an ambiguous or
    /// deeply non-deterministic grammar): stopped before llama.cpp does that work.
    #[error("{reason} (after {generated} generated tokens: {text:?})")]
    GrammarTooAmbiguous {
        /// Which limit the next step would pass.
        reason: TooAmbiguous,
        /// Tokens generated so far.
        generated: usize,
        /// The text generated so far.
        text: String,
    },
    /// gbnfc's grammar engine passed its bound on the work of one token mask
    /// ([`crate::mask::MaskError`]).
    #[error("the grammar is too costly to follow: {} (after {generated} generated tokens: {text:?}); rewrite the ambiguous part, or try --grammar-engine llama", crate::mask::MaskError)]
    GrammarTooCostly {
        /// Tokens generated so far.
        generated: usize,
        /// The text generated so far.
        text: String,
    },
    /// llama.cpp failed while evaluating the model.
    #[error("llama.cpp failed to evaluate the model: {0}")]
    Decode(String),
    /// A schema that cannot be compiled to a grammar.
    #[error("invalid schema: {0}")]
    Schema(String),
    /// Generation stopped at the token budget before the grammar was complete.
    #[error(
        "the output was truncated after {tokens} tokens (the token budget) before it was \
         complete: {text:?}; raise --max-tokens"
    )]
    Truncated {
        /// Tokens generated.
        tokens: usize,
        /// The incomplete text.
        text: String,
    },
    /// Even the shortest output the grammar allows needs more tokens than the budget.
    #[error(
        "the token budget ({budget}) is smaller than the shortest complete output \
         ({shortest} tokens), so the output would be truncated; raise --max-tokens (or --ctx)"
    )]
    BudgetTooSmall {
        /// Tokens of the shortest complete output.
        shortest: usize,
        /// The budget.
        budget: usize,
    },
    /// A tool list that cannot be compiled (the message names the tool and the pointer).
    #[error("invalid tool list: {0}")]
    Tools(String),
    /// The request was withdrawn (its client went away) before its generation ended.
    #[error("the request was cancelled")]
    Cancelled,
    /// The request ran past its deadline.
    #[error("the request took longer than its {seconds} s limit")]
    TimedOut {
        /// The limit, in seconds.
        seconds: f64,
    },
    /// A failure inside gbnfc itself (a caught panic), confined to one request.
    #[error("internal error: {0}")]
    Internal(String),
    /// The server cannot start (its settings, or its address).
    #[error("{0}")]
    Serve(String),
    /// The server's engine thread is gone (it stopped, or failed to start).
    #[error("the engine is not running: {0}")]
    EngineStopped(String),
    /// A remote engine ([`crate::remote`]) could not be reached, or answered with an error
    /// or with something that is not its API.
    #[error("the engine at {url}: {reason}")]
    Remote {
        /// The backend's URL, as given (`llama-server+http://…`).
        url: String,
        /// What went wrong, and what to do.
        reason: String,
    },
    /// A remote engine is down: it cannot be reached, the connection broke, or it answers
    /// 503. Another engine may serve the same request.
    #[error("the engine at {url} is down: {reason}")]
    BackendDown {
        /// The backend's URL, as given.
        url: String,
        /// What failed.
        reason: String,
    },
    /// No remote engine of a pool is up.
    #[error("{0}")]
    NoBackend(String),
    /// Every attempt produced output that fails validation.
    #[error("no valid output after {attempts} attempt(s):\n{}", .errors.join("\n"))]
    Invalid {
        /// How many generations were tried.
        attempts: usize,
        /// What was wrong with each attempt, one line each.
        errors: Vec<String>,
    },
}

impl From<TooAmbiguous> for BridgeError {
    /// A grammar refused before any token: its initial stacks pass the limits.
    fn from(reason: TooAmbiguous) -> Self {
        BridgeError::GrammarTooAmbiguous {
            reason,
            generated: 0,
            text: String::new(),
        }
    }
}

impl From<Rejected> for BridgeError {
    /// A grammar the check refused: one line per error, and llama.cpp never sees it.
    fn from(rejected: Rejected) -> Self {
        BridgeError::GrammarCheck(rejected.to_string())
    }
}
