//! The process-wide llama.cpp backend.
//!
//! llama.cpp's backend may be initialised once per process; every model in gbnfc shares
//! this one. Its logs are silenced unless `GBNFC_LLAMA_LOG` is set or [`set_verbose`] was
//! called before first use (the CLI's `-v`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use llama_cpp_2::llama_backend::LlamaBackend;

use crate::BridgeError;

static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Lets llama.cpp's own logs through to standard error. Takes effect only before the
/// backend is first used.
pub fn set_verbose(verbose: bool) {
    VERBOSE.store(verbose, Ordering::Relaxed);
}

/// The shared backend, initialised on first use.
///
/// # Errors
/// [`BridgeError::Backend`] when llama.cpp cannot start (for instance when another
/// library in the process initialised it first).
pub fn backend() -> Result<&'static LlamaBackend, BridgeError> {
    BACKEND
        .get_or_init(|| {
            let mut backend = LlamaBackend::init().map_err(|e| e.to_string())?;
            if std::env::var_os("GBNFC_LLAMA_LOG").is_none() && !VERBOSE.load(Ordering::Relaxed) {
                backend.void_logs();
            }
            Ok(backend)
        })
        .as_ref()
        .map_err(|e| BridgeError::Backend(e.clone()))
}
