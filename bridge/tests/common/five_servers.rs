//! The tools of five common MCP servers (filesystem, git, memory, time, fetch: 38 tools,
//! as `scripts/capture-mcp-fixtures` captured them into `compiler/tests/fixtures/mcp`) in
//! one list, the way a host with all five connected offers them, and the 40 requests of
//! `benches/data/five-servers/prompts.json` with the tool each needs first.
#![allow(clippy::unwrap_used, clippy::panic, dead_code)]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// The five servers, in the order a host would list them.
pub const SERVERS: [&str; 5] = [
    "server-filesystem",
    "mcp-server-git",
    "server-memory",
    "mcp-server-time",
    "mcp-server-fetch",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The five servers' tools, as MCP tool objects (`name`, `description`, `inputSchema`).
pub fn mcp_tools() -> Vec<Value> {
    let mut tools = Vec::new();
    for server in SERVERS {
        let fixture = read(&repo().join(format!("compiler/tests/fixtures/mcp/{server}.json")));
        tools.extend(
            fixture["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .cloned(),
        );
    }
    tools
}

/// The same tools as OpenAI function tools.
pub fn openai_tools() -> Value {
    Value::Array(
        mcp_tools()
            .into_iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool["name"],
                    "description": tool["description"],
                    "parameters": tool["inputSchema"],
                }})
            })
            .collect(),
    )
}

/// The requests and the tool each needs first.
pub fn prompts() -> Vec<(String, String)> {
    read(&repo().join("benches/data/five-servers/prompts.json"))
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["prompt"].as_str().unwrap().to_string(),
                p["tool"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
