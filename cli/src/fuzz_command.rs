//! `gbnfc fuzz`: many outputs for a schema or tool list, every one validated against its
//! source — samples of the grammar without a model, generations at high temperature
//! (`--temperature`, at least 1.0) with one. Seeds run from `--seed` upwards.

use std::collections::HashSet;
use std::process::ExitCode;

use clap::Args;
use gbnfc_bridge::chat;
use gbnfc_bridge::generate::Generator;
use gbnfc_bridge::structured::{self, OutputSpec, Prepared};
use gbnfc_bridge::tool_calls::{CallSpec, PreparedCalls};
use gbnfc_bridge::validate::Validator;
use gbnfc_bridge::{ChatModel, Finish, GenerateOptions};
use gbnfc_compiler::gbnf::CheckedGrammar;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::schema::{compile, Options};
use gbnfc_compiler::tools::{
    compile_tools, parse_reply, CompiledTools, Syntax, ToolChoice, ToolOptions,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

use crate::engine_args::{failure, EngineArgs};
use crate::schema_commands::read_json;
use crate::Failure;

/// `gbnfc fuzz` flags.
#[derive(Args, Debug)]
pub struct FuzzArgs {
    /// A JSON Schema, response_format or tool list (any format `gbnfc tools` reads).
    pub input: String,
    /// How many outputs.
    #[arg(short = 'n', long, default_value_t = 100)]
    pub count: usize,
    /// Generate with the default model instead of sampling the grammar (`--model PATH`
    /// picks another model and `--backend URL` a remote engine; both imply this).
    #[arg(long)]
    pub with_model: bool,
    /// Longest sample, in characters, without a model.
    #[arg(long, default_value_t = 2000)]
    pub max_len: u64,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// What is being fuzzed.
enum Target {
    /// A schema: outputs are JSON values.
    Schema {
        grammar: CheckedGrammar,
        validator: Validator,
    },
    /// A tool list: outputs are calls.
    Tools {
        compiled: Box<CompiledTools>,
        validators: Vec<Validator>,
    },
}

/// One output's verdict.
enum Verdict {
    Valid,
    /// Holds a number serde_json cannot read (beyond f64): not judged.
    Unjudged,
    Invalid(String),
}

fn is_tool_list(input: &Value) -> bool {
    match input {
        Value::Array(_) => true,
        Value::Object(map) => [
            "tools",
            "functions",
            "inputSchema",
            "input_schema",
            "jsonrpc",
        ]
        .iter()
        .any(|k| map.contains_key(*k)),
        _ => false,
    }
}

impl Target {
    fn new(input: &Value, syntax: Syntax) -> Result<Target, Failure> {
        if is_tool_list(input) {
            let options = ToolOptions {
                syntax,
                choice: Some(ToolChoice::Required),
                ..ToolOptions::default()
            };
            let compiled =
                compile_tools(input, &options).map_err(|e| Failure::new(e.to_string()))?;
            let validators = compiled
                .tools
                .iter()
                .map(|t| Validator::new(&t.spec.parameters))
                .collect::<Result<Vec<_>, _>>()
                .map_err(failure)?;
            return Ok(Target::Tools {
                compiled: Box::new(compiled),
                validators,
            });
        }
        let compiled =
            compile(input, &Options::default()).map_err(|e| Failure::new(e.to_string()))?;
        for d in &compiled.diagnostics {
            eprintln!("{d}");
        }
        Ok(Target::Schema {
            grammar: compiled.grammar,
            validator: Validator::new(input).map_err(failure)?,
        })
    }

    fn grammar(&self) -> Option<&CheckedGrammar> {
        match self {
            Target::Schema { grammar, .. } => Some(grammar),
            Target::Tools { compiled, .. } => compiled.grammar.as_ref(),
        }
    }

    fn judge(&self, text: &str) -> Verdict {
        match self {
            Target::Schema { validator, .. } => judge_json(validator, text.trim()),
            Target::Tools {
                compiled,
                validators,
            } => {
                let reply = match parse_reply(compiled.syntax, text) {
                    Ok(reply) => reply,
                    Err(e) if e.to_string().contains(BEYOND_F64) => return Verdict::Unjudged,
                    Err(e) => return Verdict::Invalid(format!("not a call: {e}")),
                };
                if reply.calls.is_empty() {
                    return Verdict::Invalid("no call".into());
                }
                for call in reply.calls {
                    let Some(i) = compiled.tools.iter().position(|t| t.spec.name == call.name)
                    else {
                        return Verdict::Invalid(format!("`{}` is not a listed tool", call.name));
                    };
                    let errors = validators[i].errors(&call.arguments);
                    if !errors.is_empty() {
                        return Verdict::Invalid(format!("{}: {}", call.name, errors.join("; ")));
                    }
                }
                Verdict::Valid
            }
        }
    }
}

/// serde_json's message for a number beyond f64 range (valid JSON it cannot hold).
const BEYOND_F64: &str = "number out of range";

fn judge_json(validator: &Validator, text: &str) -> Verdict {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => {
            let errors = validator.errors(&value);
            if errors.is_empty() {
                Verdict::Valid
            } else {
                Verdict::Invalid(errors.join("; "))
            }
        }
        Err(e) if e.to_string().contains(BEYOND_F64) => Verdict::Unjudged,
        Err(e) => Verdict::Invalid(format!("not JSON: {e}")),
    }
}

/// Runs `gbnfc fuzz`.
pub fn run(args: &FuzzArgs) -> Result<ExitCode, Failure> {
    let input = read_json(&args.input)?;
    let with_model =
        args.with_model || args.engine.model.is_some() || !args.engine.backend.is_empty();
    let engine = if with_model {
        Some(args.engine.load()?)
    } else {
        None
    };
    // Calls are written in the model's own syntax (JSON without a model).
    let syntax = engine.as_ref().map_or(Syntax::Json, |engine| {
        chat::syntax_for(engine.chat_template().as_deref())
    });
    let target = Target::new(&input, syntax)?;
    let Some(grammar) = target.grammar() else {
        return Err(Failure::new(
            "the input gives no grammar to fuzz (tool_choice none)",
        ));
    };
    let bar = if args.engine.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(args.count as u64)
    };
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}") {
        bar.set_style(style.progress_chars("=> "));
    }
    let mut outputs: Vec<String> = Vec::with_capacity(args.count);
    if let Some(engine) = &engine {
        bar.set_message("generating");
        let (prompt, grammar) = match &target {
            Target::Schema { .. } => {
                let prepared =
                    Prepared::new(&OutputSpec::Schema(input.clone())).map_err(failure)?;
                let schema = prepared.schema.clone().unwrap_or(Value::Bool(true));
                let messages = structured::with_schema_instruction(
                    &chat::conversation(None, "Give one example."),
                    &schema,
                );
                (
                    chat::render_prompt(engine, &messages).map_err(failure)?,
                    prepared.grammar,
                )
            }
            Target::Tools { .. } => {
                let spec = CallSpec {
                    tools: input.clone(),
                    choice: Some(ToolChoice::Required),
                    syntax: Some(syntax),
                    closed: false,
                    ..CallSpec::default()
                };
                let prepared = PreparedCalls::new(engine, &spec).map_err(failure)?;
                let messages = chat::with_tools(
                    &chat::conversation(None, "Call one of the tools."),
                    &prepared.definitions,
                );
                let grammar = prepared
                    .compiled
                    .grammar
                    .clone()
                    .ok_or_else(|| Failure::new("no call grammar"))?;
                (
                    chat::render_prompt(engine, &messages).map_err(failure)?,
                    grammar,
                )
            }
        };
        let base = args.engine.generate_options();
        for i in 0..args.count {
            let options = GenerateOptions {
                seed: base.seed.wrapping_add(i as u32),
                temperature: base.temperature.max(1.0),
                ..base
            };
            let generation = engine
                .generate(&prompt, Some(&grammar), &options)
                .map_err(failure)?;
            let text = match generation.finish {
                Finish::Stop => generation.text,
                Finish::Truncated => format!("{} [truncated]", generation.text),
            };
            outputs.push(text);
            bar.inc(1);
        }
    } else {
        bar.set_message("sampling");
        let sampler = Sampler::new(grammar).map_err(|e| Failure::new(e.to_string()))?;
        let options = SampleOptions {
            max_len: args.max_len,
            ..SampleOptions::default()
        };
        for i in 0..args.count {
            let seed = u64::from(args.engine.seed).wrapping_add(i as u64);
            outputs.extend(sampler.samples(seed, 1, options));
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    report(&target, &outputs)
}

/// Prints the summary; exit 1 when any output is invalid.
fn report(target: &Target, outputs: &[String]) -> Result<ExitCode, Failure> {
    let mut valid = 0;
    let mut unjudged = 0;
    let mut failures = Vec::new();
    for text in outputs {
        let verdict = if text.ends_with(" [truncated]") {
            Verdict::Invalid("truncated at the token budget".into())
        } else {
            target.judge(text)
        };
        match verdict {
            Verdict::Valid => valid += 1,
            Verdict::Unjudged => unjudged += 1,
            Verdict::Invalid(why) => failures.push((text, why)),
        }
    }
    let distinct: HashSet<&String> = outputs.iter().collect();
    let mut lengths: Vec<usize> = outputs.iter().map(|t| t.chars().count()).collect();
    lengths.sort_unstable();
    let median = lengths.get(lengths.len() / 2).copied().unwrap_or(0);
    let judged = outputs.len() - unjudged;
    println!(
        "{valid} of {judged} outputs valid ({:.1}%); {} distinct; median length {median} characters",
        100.0 * valid as f64 / judged.max(1) as f64,
        distinct.len()
    );
    if unjudged > 0 {
        println!(
            "{unjudged} outputs hold numbers beyond f64 range, which serde_json cannot read: not judged"
        );
    }
    for (text, why) in &failures {
        let shown: String = text.chars().take(400).collect();
        println!("INVALID: {why}\n  {shown}");
    }
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
