//! The host loop end to end on the real default model and a real MCP server from npm:
//! `@modelcontextprotocol/server-filesystem` on a temporary directory holding a file with
//! known content. The model is asked for the file (its first turn must call
//! `read_text_file`); the call must reach the server with valid arguments, the result
//! must come back as a `tool` message answering that call's id, and the final answer must
//! hold the file's real content.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use gbnfc_bridge::chat::{self, Role};
use gbnfc_bridge::engine::{Engine, EngineOptions};
use gbnfc_bridge::mcp::{McpHub, ServerOptions};
use gbnfc_bridge::mcp_loop::{run_loop, LoopEvent, LoopOptions};
use gbnfc_bridge::GenerateOptions;
use gbnfc_compiler::tools::ToolChoice;
use serde_json::Value;

const FILESYSTEM: &str = "@modelcontextprotocol/server-filesystem@2026.8.31";
const CONTENT: &str = "buy oat milk and call Ada";

#[test]
fn the_model_reads_a_file_through_the_filesystem_server() {
    let dir = std::env::temp_dir().join("notes");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("todo.txt");
    std::fs::write(&file, format!("{CONTENT}\n")).unwrap();
    let mut hub = McpHub::start(
        [format!("npx -y {FILESYSTEM} {}", dir.display())],
        &ServerOptions::default(),
    )
    .unwrap();
    let engine = Engine::load(&EngineOptions {
        threads: Some(2),
        ctx: 4096,
        ..EngineOptions::default()
    })
    .unwrap_or_else(|e| panic!("{e} (the tests need the default model: run scripts/fetch-model)"));
    let messages = chat::conversation(
        None,
        &format!("Read the file {} and tell me what it says.", file.display()),
    );
    // Greedy first; a 135M model does not always restate what a tool returned, so two
    // sampled runs follow if the greedy answer does not. Every run must make the call
    // right; one answer at least must hold the content.
    let mut answers = Vec::new();
    for (seed, temperature) in [(1, 0.0), (2, 0.7), (3, 0.7)] {
        let options = LoopOptions {
            max_turns: 3,
            generate: GenerateOptions {
                seed,
                temperature,
                max_tokens: 200,
                ..GenerateOptions::default()
            },
            first_choice: Some(ToolChoice::Named("read_text_file".into())),
            ..LoopOptions::default()
        };
        let mut events = Vec::new();
        let result = run_loop(&engine, &mut hub, &messages, &options, |e| {
            events.push(e.clone())
        })
        .unwrap();

        // The call reached the server with valid arguments, and its result came back.
        let Some(LoopEvent::Call { name, arguments }) = events.first() else {
            panic!("no call: {events:?}");
        };
        assert_eq!(name, "read_text_file");
        assert_eq!(arguments["path"], Value::from(file.display().to_string()));
        let Some(LoopEvent::Result {
            content, is_error, ..
        }) = events.get(1)
        else {
            panic!("no result: {events:?}");
        };
        assert!(!is_error, "{content}");
        assert!(content.contains(CONTENT), "{content}");

        // The transcript: user, assistant with the call, tool answering its id, answer.
        let transcript = &result.transcript;
        let call = transcript
            .iter()
            .find(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
            .unwrap();
        let tool = transcript.iter().find(|m| m.role == Role::Tool).unwrap();
        assert_eq!(
            tool.tool_call_id.as_deref(),
            Some(call.tool_calls[0].id.as_str())
        );
        assert!(call.tool_calls[0].id.starts_with("call_"));
        let answer = result.answer.expect("the model answered");
        if answer.contains(CONTENT) {
            std::fs::remove_dir_all(&dir).ok();
            return;
        }
        answers.push(answer);
    }
    std::fs::remove_dir_all(&dir).ok();
    panic!("no answer holds the file's content: {answers:#?}");
}
