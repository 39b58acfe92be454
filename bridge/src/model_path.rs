//! Where the model comes from: `--model PATH`, else `GBNFC_MODEL`, else the default model
//! that `scripts/fetch-model` puts in the repository's `models/`.

use std::path::{Path, PathBuf};

use crate::BridgeError;

/// The default model's file name (SmolLM2-135M-Instruct, Q4_1).
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// The environment variable naming a model file.
pub const MODEL_ENV: &str = "GBNFC_MODEL";

/// Resolves the model file: `explicit` if given, else `$GBNFC_MODEL`, else
/// `models/SmolLM2-135M-Instruct.Q4_1.gguf` in the current directory or in this
/// repository's checkout.
///
/// # Errors
/// [`BridgeError::NoModel`] naming what was tried and how to fix it.
pub fn resolve(explicit: Option<&Path>) -> Result<PathBuf, BridgeError> {
    if let Some(path) = explicit {
        return existing(path.to_path_buf(), "--model");
    }
    if let Some(path) = std::env::var_os(MODEL_ENV) {
        return existing(PathBuf::from(path), MODEL_ENV);
    }
    let candidates = [
        PathBuf::from("models").join(DEFAULT_MODEL_FILE),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("models")
            .join(DEFAULT_MODEL_FILE),
    ];
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| {
            BridgeError::NoModel(format!(
                "{} is not in ./models or the repository's models/; run scripts/fetch-model, \
                 or pass --model PATH, or set {MODEL_ENV}",
                DEFAULT_MODEL_FILE
            ))
        })
}

fn existing(path: PathBuf, from: &str) -> Result<PathBuf, BridgeError> {
    if path.is_file() {
        Ok(path)
    } else {
        Err(BridgeError::NoModel(format!(
            "{} (from {from}) is not a file",
            path.display()
        )))
    }
}
