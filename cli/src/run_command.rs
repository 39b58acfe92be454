//! `gbnfc run`: structured output on a local model — a schema, `response_format` or
//! grammar in, a validated result out.

use std::process::ExitCode;

use clap::{ArgGroup, Args};
use gbnfc_bridge::structured::{self, OutputSpec, Prepared, StructuredOptions};
use gbnfc_bridge::{AnyEngine, ChatModel, Stats};
use serde_json::{json, Value};

use crate::conversation_args::ConversationArgs;
use crate::engine_args::{failure, EngineArgs};
use crate::input;
use crate::schema_commands::read_json;
use crate::Failure;

/// The flags of `gbnfc run`.
#[derive(Args, Debug, Clone)]
#[command(
    group(ArgGroup::new("spec").required(true).args(["schema", "response_format", "grammar"])),
    group(ArgGroup::new("input").required(true).args(["prompt", "messages"])),
)]
pub struct RunArgs {
    /// A JSON Schema file the output must satisfy (`-`: standard input).
    #[arg(long, value_name = "FILE")]
    pub schema: Option<String>,
    /// An OpenAI response_format file ({"type": "json_schema", "json_schema": {...}} or
    /// {"type": "json_object"}), or a chat request holding one.
    #[arg(long, value_name = "FILE")]
    pub response_format: Option<String>,
    /// A GBNF grammar file (start rule `root`) the output must match.
    #[arg(long, value_name = "FILE")]
    pub grammar: Option<String>,
    #[command(flatten)]
    pub conversation: ConversationArgs,
    /// Print a whole OpenAI chat.completion object instead of the bare result.
    #[arg(long)]
    pub openai: bool,
    /// Print timing and token counts as JSON on standard error.
    #[arg(long)]
    pub stats: bool,
    /// Further attempts when an output fails validation (the errors are fed back).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub retries: usize,
    /// Do not show the schema to the model in the system prompt.
    #[arg(long)]
    pub no_schema_prompt: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Runs `gbnfc run`.
pub fn run(args: &RunArgs) -> Result<ExitCode, Failure> {
    let spec = output_spec(args)?;
    let prepared = Prepared::new(&spec).map_err(failure)?;
    if !args.engine.quiet {
        for d in &prepared.diagnostics {
            eprintln!("{d}");
        }
    }
    let messages = args.conversation.conversation()?;
    let engine = args.engine.load()?;
    let options = StructuredOptions {
        generate: args.engine.generate_options(),
        retries: args.retries,
        schema_in_prompt: !args.no_schema_prompt,
    };
    let outcome = structured::run_prepared(&engine, &messages, &prepared, &options);
    let result = match outcome {
        Ok(result) => result,
        Err(error) => return Err(failure(error)),
    };
    if args.stats {
        print_stats(&engine, &result.stats, result.attempts, Vec::new());
    }
    if args.openai {
        print_json(&result.chat_completion(&engine.name()))?;
    } else {
        println!("{}", result.text);
    }
    Ok(ExitCode::SUCCESS)
}

/// The schema, response_format or grammar the flags name.
fn output_spec(args: &RunArgs) -> Result<OutputSpec, Failure> {
    if let Some(path) = &args.schema {
        return Ok(OutputSpec::Schema(read_json(path)?));
    }
    if let Some(path) = &args.response_format {
        let value = read_json(path)?;
        let format = value.get("response_format").cloned().unwrap_or(value);
        return match format.get("type").and_then(Value::as_str) {
            Some("json_schema" | "json_object") => Ok(OutputSpec::Schema(format)),
            Some("text") => Err(Failure::new(format!(
                "{path}: a response_format of type `text` constrains nothing"
            ))
            .help("use {\"type\": \"json_schema\", ...} or {\"type\": \"json_object\"}")),
            _ => Err(Failure::new(format!(
                "{path}: not an OpenAI response_format (no \"type\": \"json_schema\" or \"json_object\")"
            ))
            .help("pass a plain JSON Schema with --schema")),
        };
    }
    if let Some(path) = &args.grammar {
        return Ok(OutputSpec::Grammar(input::checked_grammar(path)?));
    }
    Err(Failure::new(
        "one of --schema, --response-format or --grammar is required",
    ))
}

/// `--stats`: the generation's costs and the engine's settings, and `more` fields, as
/// JSON on standard error.
pub fn print_stats(engine: &AnyEngine, stats: &Stats, attempts: usize, more: Vec<(&str, Value)>) {
    let mut stats = stats.to_json();
    if let Value::Object(map) = &mut stats {
        for (key, value) in more {
            map.insert(key.into(), value);
        }
        map.insert("attempts".into(), json!(attempts));
        map.insert("model".into(), json!(engine.name()));
        for (key, value) in engine.settings() {
            map.insert(key.into(), value);
        }
    }
    eprintln!("{stats}");
}

/// Prints a JSON value, pretty, on standard output.
pub fn print_json(value: &Value) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Failure::new(format!("cannot print the result: {e}")))?;
    println!("{text}");
    Ok(())
}
