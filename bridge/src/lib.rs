//! gbnfc's bridge to llama.cpp, through the `llama-cpp-2` crate.
//!
//! This crate is the only place gbnfc touches llama.cpp. Today it finds and loads models
//! ([`model_path`], [`backend`]) and asks llama.cpp itself whether it accepts a grammar
//! ([`vocab::Vocab::llama_accepts`]), which is how the test suite proves that every grammar
//! passing `gbnfc check` is one llama.cpp takes. Constrained generation builds on it.

pub mod backend;
pub mod error;
pub mod model_path;
pub mod vocab;

pub use error::BridgeError;
pub use vocab::Vocab;
