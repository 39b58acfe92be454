//! The MCP client: spawn Model Context Protocol servers over stdio, list their tools,
//! and call them with both hops of validation.
//!
//! The pieces, one idea per module:
//!
//! - [`server`]: [`McpServer`] — one server as a child process (in its own process
//!   group, so nothing it starts outlives it), initialized through `rmcp`, with a timeout
//!   on every wait. Its API is synchronous: it owns a small tokio runtime and blocks on it.
//! - [`hub`]: [`McpHub`] — several servers behind one tool list; with more than one
//!   server, tool names are namespaced `server__tool` ([`names`]).
//! - [`validation`]: the two hops — arguments against `inputSchema` before a call,
//!   `structuredContent` against `outputSchema` after it.
//! - [`policy`]: [`ToolPolicy`] — which calls may run at all (deny lists, destructive
//!   tools, read-only mode), a pure function of the tool's name and annotations.
//! - [`outcome`]: [`ToolOutcome`] — what a call came to, and the text that goes back to
//!   the model as the OpenAI `tool` message ([`tool_message_content`], [`tool_message`]).
//! - [`options`], [`error`], [`names`], and the child-process plumbing (`process`).
//!
//! Every failure is a value: a refused or invalid call is a [`ToolOutcome`] the model can
//! read; a server that crashes, hangs or breaks the protocol is an [`McpError`] whose
//! message says which server and what it was doing. Nothing panics and nothing waits
//! without a deadline.

pub mod error;
pub mod hub;
pub mod names;
pub mod options;
pub mod outcome;
pub mod policy;
mod process;
pub mod server;
pub mod validation;

pub use error::McpError;
pub use hub::{HubTool, McpHub};
pub use options::ServerOptions;
pub use outcome::{tool_message, tool_message_content, OutcomeKind, ToolOutcome, ToolResult};
pub use policy::{Decision, Refusal, ToolPolicy};
pub use server::{McpServer, McpTool};
