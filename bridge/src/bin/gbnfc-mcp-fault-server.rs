//! A tiny MCP server that misbehaves on demand, for gbnfc's MCP client tests.
//!
//! It speaks newline-delimited JSON-RPC 2.0 on stdin/stdout by hand (no SDK: the point
//! is to break the protocol in controlled ways) and lists its tools one per page, so
//! every client that uses it also follows `nextCursor`.
//!
//! Usage: `gbnfc-mcp-fault-server MODE`. Every mode offers `echo` (with an
//! `outputSchema`) and `call_count` (how many `tools/call` requests came before it);
//! each mode adds its fault:
//!
//! - `ok`: nothing more;
//! - `exit-mid-call`: `crash` exits (status 3) when it is called, without answering;
//! - `hang`: `hang` never answers;
//! - `bad-output`: `bad_output` returns `structuredContent` that breaks its
//!   `outputSchema`, `no_structured` returns none despite declaring one;
//! - `destructive`: `delete_everything` (`destructiveHint: true`) and `peek`
//!   (`readOnlyHint: true`);
//! - `error`: `fail` answers with `isError: true`;
//! - `spawn-child`: starts a `sleep` grandchild at startup (`child_pid` tells its pid)
//!   and ignores end of input, so only signals end it;
//! - `duplicate-tool`: lists `echo` twice;
//! - `cursor-loop`: every `tools/list` page points to the same next page;
//! - `no-init`: never answers `initialize`;
//! - `exit-at-start`: writes to stderr and exits (status 7) before reading anything;
//! - `relay`: not a fault but a chain: `find_city` says where a person lives and that
//!   the forecast comes from `get_forecast`, so a tool result brings in a tool the
//!   request alone does not match (tool retrieval ranks again every turn).

use std::io::{BufRead, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

const MODES: &[&str] = &[
    "ok",
    "exit-mid-call",
    "hang",
    "bad-output",
    "destructive",
    "error",
    "spawn-child",
    "duplicate-tool",
    "cursor-loop",
    "no-init",
    "exit-at-start",
    "relay",
];

fn main() -> ExitCode {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "ok".to_owned());
    if !MODES.contains(&mode.as_str()) {
        eprintln!(
            "fault server: unknown mode `{mode}`; modes: {}",
            MODES.join(", ")
        );
        return ExitCode::from(2);
    }
    if mode == "exit-at-start" {
        eprintln!("fault server: refusing to start (exit-at-start)");
        return ExitCode::from(7);
    }
    let grandchild = if mode == "spawn-child" {
        match Command::new("sleep")
            .arg("600")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(child) => Some(child.id()),
            Err(e) => {
                eprintln!("fault server: cannot start sleep: {e}");
                return ExitCode::from(4);
            }
        }
    } else {
        None
    };
    let mut server = Server {
        mode,
        calls: 0,
        grandchild,
    };
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(&line) {
            Ok(message) => {
                if let Some(reply) = server.handle(&message) {
                    if send(&reply).is_err() {
                        return ExitCode::from(5);
                    }
                }
            }
            Err(e) => {
                let reply = json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32700, "message": format!("parse error: {e}")}});
                if send(&reply).is_err() {
                    return ExitCode::from(5);
                }
            }
        }
    }
    if server.mode == "spawn-child" {
        eprintln!("fault server: stdin closed, staying up anyway");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    ExitCode::SUCCESS
}

fn send(message: &Value) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{message}")?;
    out.flush()
}

struct Server {
    mode: String,
    calls: u64,
    grandchild: Option<u32>,
}

impl Server {
    /// The reply to one message, if it gets one.
    fn handle(&mut self, message: &Value) -> Option<Value> {
        let id = message.get("id")?.clone();
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let result = match method {
            "initialize" => {
                if self.mode == "no-init" {
                    return None;
                }
                let version = params
                    .get("protocolVersion")
                    .cloned()
                    .unwrap_or(json!("2025-06-18"));
                json!({"protocolVersion": version, "capabilities": {"tools": {}},
                       "serverInfo": {"name": "gbnfc-mcp-fault-server", "version": "1.0.0"}})
            }
            "ping" => json!({}),
            "tools/list" => self.list(&params),
            "tools/call" => return self.call(&params).map(|result| reply(id, result)),
            _ => {
                return Some(json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": format!("method not found: {method}")}}))
            }
        };
        Some(reply(id, result))
    }

    fn tools(&self) -> Vec<Value> {
        let object = |properties: Value, required: Value| {
            json!({"type": "object", "properties": properties, "required": required,
                   "additionalProperties": false})
        };
        let read_only = json!({"readOnlyHint": true, "destructiveHint": false});
        let mut tools = vec![
            json!({"name": "echo", "description": "Echoes the text back.",
                   "inputSchema": object(json!({"text": {"type": "string", "maxLength": 100}}), json!(["text"])),
                   "outputSchema": object(json!({"text": {"type": "string"}}), json!(["text"])),
                   "annotations": read_only}),
            json!({"name": "call_count", "description": "How many tools/call requests came before this one.",
                   "inputSchema": object(json!({}), json!([])), "annotations": read_only}),
        ];
        let count_schema = object(
            json!({"count": {"type": "integer", "minimum": 0}}),
            json!(["count"]),
        );
        match self.mode.as_str() {
            "exit-mid-call" => tools.push(
                json!({"name": "crash", "description": "Exits without answering.",
                "inputSchema": object(json!({}), json!([])), "annotations": read_only}),
            ),
            "hang" => tools.push(json!({"name": "hang", "description": "Never answers.",
                "inputSchema": object(json!({}), json!([])), "annotations": read_only})),
            "bad-output" => {
                tools.push(
                    json!({"name": "bad_output", "description": "Counts, badly.",
                    "inputSchema": object(json!({}), json!([])), "outputSchema": count_schema,
                    "annotations": read_only}),
                );
                tools.push(
                    json!({"name": "no_structured", "description": "Forgets its structuredContent.",
                    "inputSchema": object(json!({}), json!([])), "outputSchema": count_schema,
                    "annotations": read_only}),
                );
            }
            "destructive" => {
                tools.push(
                    json!({"name": "delete_everything", "description": "Deletes a path.",
                    "inputSchema": object(json!({"path": {"type": "string"}}), json!(["path"])),
                    "annotations": {"readOnlyHint": false, "destructiveHint": true}}),
                );
                tools.push(
                    json!({"name": "peek", "description": "Looks, touches nothing.",
                    "inputSchema": object(json!({}), json!([])), "annotations": read_only}),
                );
            }
            "error" => tools.push(json!({"name": "fail", "description": "Always fails.",
                "inputSchema": object(json!({}), json!([])), "annotations": read_only})),
            "spawn-child" => tools.push(
                json!({"name": "child_pid", "description": "The grandchild's pid.",
                "inputSchema": object(json!({}), json!([])), "annotations": read_only}),
            ),
            "duplicate-tool" => tools.push(tools[0].clone()),
            "relay" => {
                tools.push(json!({"name": "find_city",
                    "description": "Look up the city a person lives in.",
                    "inputSchema": object(json!({"person": {"type": "string", "maxLength": 40}}), json!(["person"])),
                    "annotations": read_only}));
                tools.push(json!({"name": "get_forecast",
                    "description": "The weather forecast for a city.",
                    "inputSchema": object(json!({"city": {"type": "string", "maxLength": 40}}), json!(["city"])),
                    "annotations": read_only}));
            }
            _ => {}
        }
        tools
    }

    /// One tool per page; the cursor is the next tool's index.
    fn list(&self, params: &Value) -> Value {
        let tools = self.tools();
        let start: usize = params
            .get("cursor")
            .and_then(Value::as_str)
            .and_then(|c| c.strip_prefix("page-"))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let page: Vec<Value> = tools.iter().skip(start).take(1).cloned().collect();
        if self.mode == "cursor-loop" {
            json!({"tools": page, "nextCursor": "page-1"})
        } else if start + 1 < tools.len() {
            json!({"tools": page, "nextCursor": format!("page-{}", start + 1)})
        } else {
            json!({"tools": page})
        }
    }

    fn call(&mut self, params: &Value) -> Option<Value> {
        let before = self.calls;
        self.calls += 1;
        let name = params.get("name").and_then(Value::as_str).unwrap_or("");
        let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
        let text = |t: String| json!({"content": [{"type": "text", "text": t}]});
        Some(match name {
            "echo" => {
                let said = arguments
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                json!({"content": [{"type": "text", "text": said}], "structuredContent": {"text": said}})
            }
            "call_count" => text(before.to_string()),
            "crash" => {
                eprintln!("fault server: crashing mid-call");
                std::process::exit(3);
            }
            "hang" => return None,
            "bad_output" => json!({"content": [{"type": "text", "text": "{\"count\": \"many\"}"}],
                                   "structuredContent": {"count": "many"}}),
            "no_structured" => text("12".to_owned()),
            "delete_everything" => {
                let path = arguments.get("path").and_then(Value::as_str).unwrap_or("");
                text(format!("deleted {path}"))
            }
            "peek" => text("nothing to see".to_owned()),
            "fail" => {
                json!({"content": [{"type": "text", "text": "the disk is on fire"}], "isError": true})
            }
            "find_city" => text(
                "Ada lives in Lyon. Rain is in the weather forecast for the city: \
                 get_forecast gives it."
                    .to_owned(),
            ),
            "get_forecast" => text("Lyon: rain, 14 °C.".to_owned()),
            "child_pid" => text(self.grandchild.map(|p| p.to_string()).unwrap_or_default()),
            _ => {
                json!({"content": [{"type": "text", "text": format!("unknown tool: {name}")}], "isError": true})
            }
        })
    }
}

fn reply(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}
