//! What the bridge's model tests share: one engine on the default model per test binary.
#![allow(clippy::panic, dead_code)]

use std::sync::OnceLock;

use gbnfc_bridge::engine::{Engine, EngineOptions};

/// The default model on 2 CPU threads with a 4096-token context, loaded once.
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        Engine::load(&EngineOptions {
            threads: Some(2),
            ctx: 4096,
            ..EngineOptions::default()
        })
        .unwrap_or_else(|e| {
            panic!("{e} (the tests need the default model: run scripts/fetch-model)")
        })
    })
}
