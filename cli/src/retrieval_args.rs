//! The flags of which tools the model is shown, and how, that `gbnfc call`, `gbnfc mcp`
//! and `gbnfc serve` share.

use clap::Args;
use gbnfc_bridge::tool_retrieval::Retrieval;
use serde_json::{json, Value};

/// Which tools the model is shown, and how.
#[derive(Args, Debug, Clone)]
pub struct RetrievalArgs {
    /// Show the model (and allow in the grammar) only the K tools that best match the
    /// conversation, ranked by BM25 over names, descriptions and parameters; a tool named
    /// by the choice is always in [default: the best 5 when the whole list would take
    /// more than a quarter of the context, else every tool].
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "all_tools", help_heading = "Tools")]
    pub tools_top_k: Option<u32>,
    /// Show the model every tool, however much of the context the list takes.
    #[arg(long, help_heading = "Tools")]
    pub all_tools: bool,
    /// Show the tools in a compact rendering for small contexts: descriptions over 120
    /// characters cut to their first sentence, schema titles left out. The grammar and
    /// validation still read the full schemas.
    #[arg(long, help_heading = "Tools")]
    pub compact_tools: bool,
}

impl RetrievalArgs {
    /// The retrieval the flags ask for.
    pub fn retrieval(&self) -> Retrieval {
        match (self.all_tools, self.tools_top_k) {
            (true, _) => Retrieval::All,
            (false, Some(k)) => Retrieval::Top(k as usize),
            (false, None) => Retrieval::Auto,
        }
    }
}

/// The `-v` line that says which tools were shown.
pub fn shown_line(shown: &[String], listed: usize) -> String {
    format!(
        "tools shown: {} ({} of {listed})",
        shown.join(", "),
        shown.len()
    )
}

/// The `--stats` fields that say which tools were shown: `tools_shown` (the names; for a
/// tool loop, one list per turn) and `tools_listed` (the list's length).
pub fn shown_stats(shown: Value, listed: usize) -> Vec<(&'static str, Value)> {
    vec![("tools_shown", shown), ("tools_listed", json!(listed))]
}
