//! A model's vocabulary alone (no weights): enough for llama.cpp to build a grammar
//! sampler, so it can tell whether it accepts a grammar.

use std::path::{Path, PathBuf};

use gbnfc_compiler::gbnf::{
    self,
    llama_stacks::{Limits, LlamaStacks},
};
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;

use crate::{backend::backend, BridgeError};

/// A model loaded with `vocab_only`: fast to load, and all a grammar sampler needs.
pub struct Vocab {
    model: LlamaModel,
    path: PathBuf,
}

impl Vocab {
    /// Loads the vocabulary of the GGUF model at `path`.
    ///
    /// # Errors
    /// [`BridgeError::ModelLoad`] when llama.cpp cannot read the file, or a backend error.
    pub fn load(path: &Path) -> Result<Self, BridgeError> {
        let backend = backend()?;
        let params = LlamaModelParams::default().with_vocab_only(true);
        let model = LlamaModel::load_from_file(backend, path, &params).map_err(|e| {
            BridgeError::ModelLoad {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
        })?;
        Ok(Vocab {
            model,
            path: path.to_path_buf(),
        })
    }

    /// The file this vocabulary came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Asks llama.cpp to build its grammar sampler for `gbnf` (start rule `root`).
    ///
    /// # Errors
    /// [`BridgeError::GrammarRefused`] when llama.cpp's parser or its left-recursion check
    /// refuses the grammar (llama.cpp prints its own reason on standard error);
    /// [`BridgeError::GrammarTooAmbiguous`], before llama.cpp is asked, for a grammar that
    /// passes `check` but would start llama.cpp with more parse stacks than it can handle.
    pub fn llama_accepts(&self, gbnf: &str) -> Result<(), BridgeError> {
        if let Ok(grammar) = gbnf::parse(gbnf) {
            if gbnf::is_clean(&gbnf::check(&grammar)) {
                LlamaStacks::new(&grammar, |t| token_id(&self.model, t), Limits::default())?;
            }
        }
        LlamaSampler::grammar(&self.model, gbnf, "root")
            .map(drop)
            .map_err(|e| BridgeError::GrammarRefused(e.to_string()))
    }
}

/// The id of the token a grammar's `<text>` reference names (`text` is what stands between
/// the angle brackets), when that text is one token, as llama.cpp requires.
pub(crate) fn token_id(model: &LlamaModel, text: &str) -> Option<u32> {
    let tokens = model
        .vocab()
        .tokenize(format!("<{text}>").as_bytes(), false, true);
    match tokens.as_slice() {
        [one] => u32::try_from(one.0).ok(),
        _ => None,
    }
}
