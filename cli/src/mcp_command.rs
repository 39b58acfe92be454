//! `gbnfc mcp`: MCP servers' tools, a local model choosing calls under a grammar, every
//! call executed and validated, until the model answers.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use gbnfc_bridge::mcp::{McpHub, ServerOptions, ToolPolicy};
use gbnfc_bridge::mcp_loop::{run_loop, LoopEvent, LoopOptions};
use gbnfc_compiler::tools::ToolChoice;
use serde_json::{json, Value};

use crate::conversation_args::ConversationArgs;
use crate::engine_args::{failure, EngineArgs};
use crate::retrieval_args::{shown_line, shown_stats, RetrievalArgs};
use crate::run_command::print_stats;
use crate::schema_commands::read_json;
use crate::Failure;

/// `gbnfc mcp` flags.
#[derive(Args, Debug)]
pub struct McpArgs {
    /// An MCP server to spawn over stdio, as a command line (repeat for several; their
    /// tools are then named `server__tool`).
    #[arg(long = "server", value_name = "'CMD ARGS…'", required = true)]
    pub servers: Vec<String>,
    #[command(flatten)]
    pub conversation: ConversationArgs,
    /// Model turns at most (each turn: tool calls, or the answer).
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub max_turns: usize,
    /// Allow this tool even if it is marked destructive (repeatable).
    #[arg(long = "allow-tool", value_name = "NAME")]
    pub allow: Vec<String>,
    /// Never call this tool (repeatable).
    #[arg(long = "deny-tool", value_name = "NAME")]
    pub deny: Vec<String>,
    /// Allow destructive tools without asking.
    #[arg(long)]
    pub yes: bool,
    /// Refuse every tool not marked readOnlyHint: true.
    #[arg(long)]
    pub read_only: bool,
    /// The final answer must be JSON valid under this schema (or response_format) file.
    #[arg(long, value_name = "FILE")]
    pub final_schema: Option<String>,
    /// Write the whole conversation here as an OpenAI messages array.
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    /// tool_choice for the first turn: auto, required, none, or a tool's name (later turns
    /// are auto).
    #[arg(long, default_value = "auto")]
    pub choice: String,
    /// Several calls per turn.
    #[arg(long)]
    pub parallel: bool,
    /// Seconds to wait for a tool call's result.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub call_timeout: u64,
    /// Further attempts per turn when a call fails validation.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub retries: usize,
    /// Print timing and token counts as JSON on standard error.
    #[arg(long)]
    pub stats: bool,
    #[command(flatten)]
    pub retrieval: RetrievalArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Runs `gbnfc mcp`.
pub fn run(args: &McpArgs) -> Result<ExitCode, Failure> {
    let messages = args.conversation.conversation()?;
    let final_schema = args.final_schema.as_deref().map(read_json).transpose()?;
    let options = ServerOptions {
        call_timeout: Duration::from_secs(args.call_timeout.max(1)),
        ..ServerOptions::default()
    };
    let policy = ToolPolicy {
        allow: args.allow.clone(),
        deny: args.deny.clone(),
        yes: args.yes,
        read_only: args.read_only,
    };
    let mut hub = McpHub::start(&args.servers, &options)
        .map_err(|e| {
            Failure::new(format!("MCP server: {e}"))
                .help("check the --server command line; run it by hand to see its own error")
        })?
        .with_policy(policy);
    let first_choice: ToolChoice = args
        .choice
        .parse()
        .map_err(|e: gbnfc_compiler::tools::ToolsError| Failure::new(e.to_string()))?;
    let engine = args.engine.load()?;
    let loop_options = LoopOptions {
        max_turns: args.max_turns.max(1),
        final_schema,
        generate: args.engine.tool_call_options(),
        retries: args.retries,
        parallel: args.parallel,
        first_choice: Some(first_choice),
        retrieval: args.retrieval.retrieval(),
        compact_tools: args.retrieval.compact_tools,
    };
    let quiet = args.engine.quiet;
    let verbose = args.engine.verbose;
    let mut shown_per_turn: Vec<Vec<String>> = Vec::new();
    let mut listed = 0;
    let result = run_loop(&engine, &mut hub, &messages, &loop_options, |event| {
        if let LoopEvent::Turn {
            turn,
            shown,
            listed: of,
        } = event
        {
            shown_per_turn.push(shown.clone());
            listed = *of;
            if verbose {
                eprintln!("turn {turn}: {}", shown_line(shown, *of));
            }
        }
        if quiet {
            return;
        }
        match event {
            LoopEvent::Turn { .. } => {}
            LoopEvent::Call { name, arguments } => eprintln!("→ {name} {arguments}"),
            LoopEvent::Result {
                name,
                content,
                is_error,
            } => {
                let shown: String = content.chars().take(300).collect();
                let kind = if *is_error { "error" } else { "result" };
                eprintln!("← {name} {kind}: {shown}");
            }
        }
    })
    .map_err(failure)?;
    if let Some(path) = &args.transcript {
        let transcript = Value::Array(result.transcript.iter().map(|m| m.to_json()).collect());
        let text = serde_json::to_string_pretty(&transcript)
            .map_err(|e| Failure::new(format!("cannot write the transcript: {e}")))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| Failure::new(format!("cannot write `{}`: {e}", path.display())))?;
    }
    if args.stats {
        print_stats(
            &engine,
            &result.stats,
            result.turns,
            shown_stats(json!(shown_per_turn), listed),
        );
    }
    match result.answer {
        Some(answer) => {
            println!("{answer}");
            Ok(ExitCode::SUCCESS)
        }
        None => Err(Failure::new(format!(
            "no answer after {} turns ({} tool calls)",
            result.turns, result.calls
        ))
        .help("raise --max-turns, or see the calls above (--transcript FILE keeps them)")),
    }
}
