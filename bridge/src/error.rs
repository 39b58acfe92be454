//! Errors from the bridge: every llama.cpp failure comes back as a value, never an abort.

use std::path::PathBuf;

use thiserror::Error;

/// What went wrong talking to llama.cpp.
#[derive(Debug, Error)]
pub enum BridgeError {
    /// No model file could be found.
    #[error("no model found: {0}")]
    NoModel(String),
    /// The model file exists but llama.cpp could not load it.
    #[error("llama.cpp could not load the model `{path}`: {reason}")]
    ModelLoad {
        /// The file.
        path: PathBuf,
        /// llama.cpp's reason.
        reason: String,
    },
    /// llama.cpp's backend could not be initialised.
    #[error("llama.cpp's backend could not be initialised: {0}")]
    Backend(String),
    /// llama.cpp refused a grammar.
    #[error("llama.cpp refused the grammar: {0}")]
    GrammarRefused(String),
}
