//! gbnfc's bridge to llama.cpp, through the `llama-cpp-2` crate.
//!
//! This crate is the only place gbnfc touches llama.cpp. It finds and loads models
//! ([`model_path`], [`gguf`], [`engine`]), builds prompts with the model's chat template
//! ([`chat`], [`chat_template`]), reads a model only as a [`ChatModel`] above generation
//! (the seam where the local engine or a remote one generates), runs grammar-constrained generation ([`generate`](mod@generate), with [`closeout`]
//! keeping small models within their token budget), and turns schemas into validated
//! results in the hosted APIs' shapes ([`structured`], [`validate`], [`openai`]), retrying
//! with the problems fed back ([`attempts`], shared with tool calls). It also
//! asks llama.cpp itself whether it accepts a grammar ([`vocab::Vocab::llama_accepts`]),
//! and talks to MCP servers ([`mcp`]): tool lists, calls, both hops of validation.
//! [`tool_calls`] runs constrained tool calls (OpenAI assistant messages), and
//! [`mcp_loop`] is the host loop joining the model and MCP servers. [`server`] is
//! `gbnfc serve`, the OpenAI-compatible HTTP server.
pub mod any_engine;
pub mod attempts;
pub mod backend;
pub mod chat;
pub mod chat_model;
pub mod chat_template;
pub(crate) mod close_plan;
pub mod closeout;
pub mod compact_tools;
pub mod context_size;
pub mod engine;
pub mod error;
pub mod generate;
pub mod gguf;
pub mod mask;
pub mod mcp;
pub mod mcp_loop;
pub mod model_path;
pub mod openai;
pub mod reasoning;
pub mod remote;
pub mod server;
pub mod structured;
pub mod tool_calls;
pub mod tool_retrieval;
pub mod validate;
pub mod vocab;

pub use any_engine::AnyEngine;
pub use chat_model::ChatModel;
pub use engine::{Engine, EngineOptions};
pub use error::BridgeError;
pub use generate::{generate, Finish, GenerateOptions, Generation, Stats};
pub use vocab::Vocab;
