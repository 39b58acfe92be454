//! `gbnfc call`: a constrained tool call on a local model, printed as an OpenAI assistant
//! message.

use std::process::ExitCode;

use clap::Args;
use gbnfc_bridge::tool_calls::{self, CallSpec, PreparedCalls};
use gbnfc_bridge::ChatModel;
use gbnfc_compiler::tools::{Syntax, ToolChoice};
use serde_json::{json, Value};

use crate::conversation_args::ConversationArgs;
use crate::engine_args::{failure, EngineArgs};
use crate::retrieval_args::{shown_line, shown_stats, RetrievalArgs};
use crate::run_command::{print_json, print_stats};
use crate::schema_commands::read_json;
use crate::Failure;

/// `gbnfc call` flags.
#[derive(Args, Debug)]
pub struct CallArgs {
    /// The tool list: OpenAI tools, legacy functions, MCP tools/list, Anthropic tools, or a
    /// chat request body (`-`: standard input).
    #[arg(long, value_name = "FILE")]
    pub tools: String,
    #[command(flatten)]
    pub conversation: ConversationArgs,
    /// Tool choice: auto (prose or calls), required, none, or a tool's name [default: the
    /// input's tool_choice, else auto].
    #[arg(long)]
    pub choice: Option<String>,
    /// Allow several calls in one reply (1 to --max-calls).
    #[arg(long)]
    pub parallel: bool,
    /// The most calls in one reply, with --parallel.
    #[arg(long, value_name = "N", default_value_t = gbnfc_compiler::tools::DEFAULT_MAX_CALLS)]
    pub max_calls: u32,
    /// Call syntax: json, hermes, llama3 or mistral [default: the one the model's chat
    /// template uses; hermes for ChatML models such as SmolLM2 and Qwen].
    #[arg(long)]
    pub syntax: Option<String>,
    /// Let the model add arguments no schema declares where `additionalProperties` is
    /// absent (by default such objects are closed: only declared arguments).
    #[arg(long)]
    pub open_objects: bool,
    /// Print a whole OpenAI chat.completion object instead of the assistant message.
    #[arg(long)]
    pub openai: bool,
    /// Print timing and token counts as JSON on standard error.
    #[arg(long)]
    pub stats: bool,
    /// Further attempts when a call fails validation (the errors are fed back).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub retries: usize,
    #[command(flatten)]
    pub retrieval: RetrievalArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Runs `gbnfc call`.
pub fn run(args: &CallArgs) -> Result<ExitCode, Failure> {
    let tools = read_json(&args.tools)?;
    let syntax = match args.syntax.as_deref() {
        None => None,
        Some(name) => Some(
            name.parse::<Syntax>()
                .map_err(|e| Failure::new(e.to_string()))?,
        ),
    };
    let choice = match args.choice.as_deref() {
        None => None,
        Some(name) => Some(
            name.parse::<ToolChoice>()
                .map_err(|e| Failure::new(e.to_string()))?,
        ),
    };
    let spec = CallSpec {
        tools,
        choice,
        parallel: args.parallel.then_some(true),
        max_calls: args.max_calls,
        syntax,
        closed: !args.open_objects,
        retries: args.retries,
        retrieval: args.retrieval.retrieval(),
        compact: args.retrieval.compact_tools,
    };
    let messages = args.conversation.conversation()?;
    let engine = args.engine.load()?;
    let prepared = PreparedCalls::for_conversation(&engine, &spec, &messages).map_err(failure)?;
    let shown: Vec<String> = prepared
        .compiled
        .tools
        .iter()
        .map(|t| t.spec.name.clone())
        .collect();
    let listed = prepared.shortlist.as_ref().map_or(shown.len(), |s| s.of);
    if !args.engine.quiet {
        for d in &prepared.compiled.diagnostics {
            eprintln!("{d}");
        }
    }
    if args.engine.verbose {
        eprintln!("{}", shown_line(&shown, listed));
    }
    let reply = tool_calls::call(
        &engine,
        &messages,
        &prepared,
        &args.engine.tool_call_options(),
        spec.retries,
    )
    .map_err(failure)?;
    if args.stats {
        print_stats(
            &engine,
            &reply.stats,
            reply.attempts,
            shown_stats(json!(shown), listed),
        );
    }
    let output: Value = if args.openai {
        reply.chat_completion(&engine.name())
    } else {
        reply.message.to_json()
    };
    print_json(&output)?;
    Ok(ExitCode::SUCCESS)
}
