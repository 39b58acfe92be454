//! `gbnfc`: JSON Schemas and tool lists to GBNF grammars, and grammar tools.
//!
//! The binary is thin: it parses flags with clap, calls the libraries and prints. Exit
//! codes: 0 success, 1 rejected input (or a failed check), 2 a usage error.

mod call_command;
mod conformance_command;
mod conversation_args;
mod engine_args;
mod fuzz_command;
mod grammar_commands;
mod input;
mod mcp_command;
mod retrieval_args;
mod run_command;
mod schema_commands;
mod serve_command;
mod tools_command;

use std::process::ExitCode;

/// mimalloc rather than the system allocator: compiling a schema makes many small trees
/// (the measurement is beside the dependency, in the workspace's Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand, ValueEnum};
use gbnfc_compiler::gbnf::Target;
use gbnfc_compiler::reasoning::ReasoningMarkers;
use gbnfc_compiler::schema::Whitespace;

/// An error to show the user: what went wrong and, where known, what to do.
pub struct Failure {
    message: String,
    help: Option<String>,
    /// The message was already rendered in full (with its own `error:` header).
    rendered: bool,
}

impl Failure {
    /// A plain error message.
    pub fn new(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            help: None,
            rendered: false,
        }
    }

    /// A message that is already fully rendered, e.g. a diagnostic with its source line.
    pub fn reported(message: impl Into<String>) -> Self {
        Failure {
            rendered: true,
            ..Failure::new(message)
        }
    }

    /// Adds advice.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

#[derive(Parser)]
#[command(
    name = "gbnfc",
    version,
    about = "JSON Schemas and LLM tool lists to GBNF grammars for llama.cpp, and tools to check, test and sample grammars",
    after_help = "Example:\n  gbnfc check grammars/json.gbnf\n  gbnfc sample grammars/json.gbnf -n 3 --seed 7"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a grammar for everything llama.cpp would refuse or choke on.
    #[command(
        after_help = "Exit status: 0 when there is no error (warnings allowed), 1 otherwise.\n\nExample:\n  gbnfc check grammars/json.gbnf\n  cat my.gbnf | gbnfc check -"
    )]
    Check {
        /// The grammar file, or `-` for standard input.
        file: String,
    },
    /// Print a grammar in canonical form (one rule per line, minimal escapes).
    #[command(after_help = "Example:\n  gbnfc fmt grammars/json.gbnf > json.canonical.gbnf")]
    Fmt {
        /// The grammar file, or `-` for standard input.
        file: String,
    },
    /// Does the grammar accept a text? Exit 0 if it does, 1 if not.
    #[command(
        after_help = "TEXT is taken exactly as given; without it, all of standard input is the text \
(a trailing newline included, so prefer `printf` to `echo`).\n\nExample:\n  gbnfc accepts grammars/json.gbnf '{\"a\":[1,2]}'\n  printf '%s\\n' '\"{}\"' '\"{\"' | gbnfc accepts grammars/json.gbnf --jsonl"
    )]
    Accepts {
        /// The grammar file.
        grammar: String,
        /// The text to test (default: standard input).
        text: Option<String>,
        /// Read one JSON string literal per line from standard input and print `accept` or
        /// `reject` for each.
        #[arg(long, conflicts_with = "text")]
        jsonl: bool,
    },
    /// Compile a JSON Schema (or an OpenAI response_format) to a GBNF grammar.
    #[command(
        after_help = "Keywords the grammar cannot enforce exactly are reported on standard error as \"enforced by validation only\" (errors with --strict).\n\nExample:\n  gbnfc compile ../shared/examples/weather-card.schema.json -o weather.gbnf\n  echo '{\"type\":\"integer\",\"minimum\":1}' | gbnfc compile - --explain"
    )]
    Compile {
        /// The schema file, or `-` for standard input.
        schema: String,
        /// Write the grammar here instead of standard output.
        #[arg(short = 'o', long)]
        output: Option<std::path::PathBuf>,
        /// Fail on keywords that can only be enforced by validation.
        #[arg(long)]
        strict: bool,
        /// Treat an absent `additionalProperties` as `false`.
        #[arg(long)]
        closed: bool,
        /// Whitespace between JSON tokens.
        #[arg(long, value_enum, default_value_t = WhitespaceArg::Compact)]
        whitespace: WhitespaceArg,
        /// Resolve remote `$ref`s (`http://host/path`) from DIR/path.
        #[arg(long, value_name = "DIR")]
        ref_dir: Option<std::path::PathBuf>,
        /// List every keyword with its status: enforced, validation-only, restricted, annotation, unknown.
        #[arg(long)]
        explain: bool,
        /// Put a reasoning section before the answer: the opening marker, free text up to the
        /// first closing marker, the closing marker, then the schema's value (for example
        /// `<think>,</think>`; the grammar never constrains the reasoning).
        #[arg(long, value_name = "OPEN,CLOSE", value_parser = ReasoningMarkers::parse)]
        reasoning_markers: Option<ReasoningMarkers>,
        /// With --reasoning-markers: the prompt has written the opening marker already, so
        /// the grammar starts inside the reasoning.
        #[arg(long, requires = "reasoning_markers")]
        reasoning_opened: bool,
        /// Write the grammar in an engine's spelling: llama (llama.cpp's GBNF), xgrammar
        /// (XGrammar's EBNF: vLLM, SGLang) or lark (llguidance's Lark: vLLM, SGLang).
        #[arg(long, value_name = "ENGINE", default_value = "llama", value_parser = Target::parse)]
        target: Target,
    },
    /// Compile a tool list (OpenAI tools or functions, MCP tools/list, Anthropic tools, a chat request) to the grammar of its calls.
    #[command(
        after_help = "The input format is detected (--input-format forces one); tool_choice, parallel_tool_calls and response_format are taken from a chat request body unless the flags say otherwise.\n\nSyntaxes, byte for byte:\n  json     {\"name\": \"f\", \"arguments\": {...}}              (parallel: one per line)\n  hermes   <tool_call>\\n{\"name\": \"f\", \"arguments\": {...}}\\n</tool_call>  (parallel: one per line)\n  llama3   {\"name\": \"f\", \"parameters\": {...}}             (parallel: one per line)\n  mistral  [TOOL_CALLS][{\"name\": \"f\", \"arguments\": {...}, \"id\": \"a1B2c3D4e\"}, ...]\n\nExample:\n  gbnfc tools ../shared/examples/weather-tools.openai.json --syntax hermes --choice required\n  gbnfc tools mcp-tools.json --choice auto --parallel --emit json -o tools.json"
    )]
    Tools {
        /// The tool list file, or `-` for standard input.
        file: String,
        /// Write the output here instead of standard output.
        #[arg(short = 'o', long)]
        output: Option<std::path::PathBuf>,
        /// Call syntax: json, hermes, llama3 or mistral.
        #[arg(long, default_value = "json")]
        syntax: String,
        /// Tool choice: auto (prose or calls), required, none, or a tool's name [default: the input's tool_choice, else auto].
        #[arg(long)]
        choice: Option<String>,
        /// Allow several calls in one reply (1 to --max-calls) [default: the input's parallel_tool_calls, else one call].
        #[arg(long, overrides_with = "no_parallel")]
        parallel: bool,
        /// Exactly one call per reply, whatever the input says.
        #[arg(long, overrides_with = "parallel")]
        no_parallel: bool,
        /// The most calls in one reply, with parallel calls.
        #[arg(long, value_name = "N", default_value_t = gbnfc_compiler::tools::DEFAULT_MAX_CALLS)]
        max_calls: u32,
        /// Output: the grammar (gbnf), JSON with the grammar, the lazy grammar, its trigger words and the diagnostics (json), or the calls as an XGrammar structural tag for vLLM and SGLang (structural-tag).
        #[arg(long, value_enum, default_value_t = EmitArg::Gbnf)]
        emit: EmitArg,
        /// Read the input as openai, functions, mcp or anthropic instead of detecting it.
        #[arg(long, value_name = "F")]
        input_format: Option<String>,
        /// Fail on keywords that can only be enforced by validation.
        #[arg(long)]
        strict: bool,
        /// Treat an absent `additionalProperties` as `false` in every schema.
        #[arg(long)]
        closed: bool,
        /// Whitespace between JSON tokens inside the arguments (the call itself is exact).
        #[arg(long, value_enum, default_value_t = WhitespaceArg::Compact)]
        whitespace: WhitespaceArg,
        /// Put a reasoning section before the calls (for example `<think>,</think>`): free
        /// text up to the first closing marker, never constrained. No lazy grammar then: its
        /// trigger words could appear in the thinking.
        #[arg(long, value_name = "OPEN,CLOSE", value_parser = ReasoningMarkers::parse)]
        reasoning_markers: Option<ReasoningMarkers>,
        /// With --reasoning-markers: the prompt has written the opening marker already.
        #[arg(long, requires = "reasoning_markers")]
        reasoning_opened: bool,
        /// Write the grammars in an engine's spelling: llama (llama.cpp's GBNF), xgrammar
        /// (XGrammar's EBNF: vLLM, SGLang) or lark (llguidance's Lark: vLLM, SGLang).
        #[arg(long, value_name = "ENGINE", default_value = "llama", value_parser = Target::parse)]
        target: Target,
    },
    /// Print the canonical text of a JSON value under a schema (what compiled grammars produce).
    #[command(after_help = "Example:\n  gbnfc canon schema.json '{\"b\":1.0,\"a\":\"x\"}'")]
    Canon {
        /// The schema file.
        schema: String,
        /// The value (default: standard input).
        value: Option<String>,
        /// Resolve remote `$ref`s from DIR.
        #[arg(long, value_name = "DIR")]
        ref_dir: Option<std::path::PathBuf>,
    },
    /// Check compiled grammars against test corpora: every valid instance accepted, every invalid one rejected.
    #[command(
        after_help = "Example:\n  gbnfc conformance ../shared/corpora/json-schema-test-suite/draft2020-12 \\\n    --remotes ../shared/corpora/json-schema-test-suite/remotes --anchors ../shared/corpora/anchors"
    )]
    Conformance {
        /// Test-suite draft folders or MaskBench split folders.
        #[arg(required = true)]
        dirs: Vec<std::path::PathBuf>,
        /// Where the test suite's remote references live.
        #[arg(long, value_name = "DIR")]
        remotes: Option<std::path::PathBuf>,
        /// Write per-schema results (in the anchors' JSON form).
        #[arg(long, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
        /// Write the Markdown report.
        #[arg(long, value_name = "FILE")]
        markdown: Option<std::path::PathBuf>,
        /// llguidance's recorded results, to compare with.
        #[arg(long, value_name = "DIR")]
        anchors: Option<std::path::PathBuf>,
        /// Exit 1 if a split passes fewer instances, or has more schemas with a
        /// validation-only keyword, than this baseline file records.
        #[arg(long, value_name = "FILE")]
        baseline: Option<std::path::PathBuf>,
        /// Write the pass and validation-only counts as a new baseline file.
        #[arg(long, value_name = "FILE")]
        write_baseline: Option<std::path::PathBuf>,
    },
    /// Print random texts the grammar accepts, one per line.
    #[command(
        after_help = "The same seed always gives the same texts.\n\nExample:\n  gbnfc sample grammars/json.gbnf -n 5 --seed 42 --max-len 80 --jsonl"
    )]
    Sample {
        /// The grammar file.
        grammar: String,
        /// How many texts.
        #[arg(short = 'n', long = "count", default_value_t = 5)]
        count: usize,
        /// Random seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Length (in characters) the texts aim to stay under.
        #[arg(long, default_value_t = 256)]
        max_len: u64,
        /// Print each text as a JSON string literal (texts may contain newlines).
        #[arg(long)]
        jsonl: bool,
    },
    /// Generate output that satisfies a JSON Schema, response_format or grammar, on a local model.
    #[command(
        after_help = "Prints the JSON result (with --openai, a whole chat.completion object). Every result is validated against the schema; an invalid or truncated one is retried (--retries) with the errors fed back, then reported with exit status 1.\n\nExample:\n  gbnfc run --schema ../shared/examples/ticket-classification.schema.json \\\n    --prompt 'I paid but my order still says unpaid' --seed 7 --stats\n  gbnfc run --response-format ../shared/examples/weather-card.response-format.json \\\n    --prompt 'Weather card for Chengdu tomorrow' --openai"
    )]
    Run(Box<run_command::RunArgs>),
    /// Make a tool call on a local model: an OpenAI assistant message with tool_calls (or prose, when --choice auto lets the model answer).
    #[command(
        after_help = "The tools are shown to the model the way its family was trained (a <tools> block for SmolLM2, Qwen and Hermes models) and the call is constrained by the tool list's grammar; every call's arguments are validated against the tool's schema, and invalid ones are retried (--retries) with the errors fed back.\n\nExample:\n  gbnfc call --tools examples/weather-tools.openai.json \\\n    --prompt \"What's the weather in Chengdu tomorrow?\" --choice required --seed 1"
    )]
    Call(Box<call_command::CallArgs>),
    /// Answer a request with the tools of MCP servers: the model calls tools under a grammar, each call is validated, executed with tools/call and fed back, until the model answers.
    #[command(
        after_help = "Destructive tools (annotations destructiveHint: true) are refused unless --allow-tool names them or --yes is given; --read-only refuses every tool not marked readOnlyHint: true. Refusals, invalid arguments or results, errors and timeouts go back to the model as tool errors and are shown on standard error.\n\nExample:\n  gbnfc mcp --server 'npx -y @modelcontextprotocol/server-filesystem /tmp/notes' \\\n    --prompt 'What does /tmp/notes/todo.txt say?' --transcript chat.json"
    )]
    Mcp(Box<mcp_command::McpArgs>),
    /// Fuzz a schema or tool list: many outputs (grammar samples, or model generations with --with-model), each validated against the source; exit 1 on any invalid one.
    #[command(
        after_help = "Prints the share of valid outputs, how many are distinct, the median length, and each invalid output with its validation error.\n\nExample:\n  gbnfc fuzz ../shared/examples/weather-card.schema.json -n 500\n  gbnfc fuzz examples/weather-tools.openai.json -n 20 --with-model --temperature 1.2"
    )]
    Fuzz(Box<fuzz_command::FuzzArgs>),
    /// Serve the OpenAI chat completions API on a local model, with exact structured outputs and tool calls.
    #[command(
        after_help = "Endpoints: GET /health, GET /v1/models, POST /v1/chat/completions (response_format, tools, tool_choice, stream, and llama.cpp's `grammar`), GET /metrics. The model and sampling flags set every request's defaults. Binds 127.0.0.1:8080 and prints the URL on standard error when the model is loaded.\n\nExample:\n  gbnfc serve --port 8080 --parallel 4\n  curl http://127.0.0.1:8080/v1/chat/completions -H 'Content-Type: application/json' \\\n    -d '{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"response_format\": {\"type\": \"json_object\"}}'"
    )]
    Serve(Box<serve_command::ServeArgs>),
}

/// `--emit` values.
#[derive(Clone, Copy, ValueEnum)]
enum EmitArg {
    /// The grammar as GBNF text.
    Gbnf,
    /// JSON: grammar, lazy grammar, trigger words, diagnostics.
    Json,
    /// The calls as an XGrammar structural tag (vLLM, SGLang), arguments in gbnfc's
    /// grammar.
    StructuralTag,
}

/// `--whitespace` values.
#[derive(Clone, Copy, ValueEnum)]
enum WhitespaceArg {
    /// No whitespace: compact JSON.
    Compact,
    /// Bounded whitespace between tokens.
    Flexible,
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::Compile {
            schema,
            output,
            strict,
            closed,
            whitespace,
            ref_dir,
            explain,
            reasoning_markers,
            reasoning_opened,
            target,
        } => {
            let flags = schema_commands::SchemaFlags {
                strict,
                closed,
                whitespace: match whitespace {
                    WhitespaceArg::Compact => Whitespace::Compact,
                    WhitespaceArg::Flexible => Whitespace::Flexible,
                },
                ref_dir,
            };
            let reasoning = reasoning_markers
                .as_ref()
                .map(|markers| (markers, reasoning_opened));
            schema_commands::compile(
                &schema,
                output.as_deref(),
                &flags,
                explain,
                reasoning,
                target,
            )
        }
        Command::Tools {
            file,
            output,
            syntax,
            choice,
            parallel,
            no_parallel,
            max_calls,
            emit,
            input_format,
            strict,
            closed,
            whitespace,
            reasoning_markers,
            reasoning_opened,
            target,
        } => tools_command::run(&tools_command::ToolsArgs {
            file: &file,
            output: output.as_deref(),
            syntax: &syntax,
            choice: choice.as_deref(),
            parallel: if parallel {
                Some(true)
            } else if no_parallel {
                Some(false)
            } else {
                None
            },
            max_calls,
            emit: match emit {
                EmitArg::Gbnf => tools_command::Emit::Gbnf,
                EmitArg::Json => tools_command::Emit::Json,
                EmitArg::StructuralTag => tools_command::Emit::StructuralTag,
            },
            input_format: input_format.as_deref(),
            strict,
            closed,
            whitespace: match whitespace {
                WhitespaceArg::Compact => Whitespace::Compact,
                WhitespaceArg::Flexible => Whitespace::Flexible,
            },
            reasoning: reasoning_markers
                .as_ref()
                .map(|markers| (markers, reasoning_opened)),
            target,
        }),
        Command::Canon {
            schema,
            value,
            ref_dir,
        } => schema_commands::canon_command(&schema, value.as_deref(), ref_dir),
        Command::Conformance {
            dirs,
            remotes,
            out,
            markdown,
            anchors,
            baseline,
            write_baseline,
        } => conformance_command::run(&conformance_command::ConformanceArgs {
            dirs,
            remotes,
            out,
            markdown,
            anchors,
            baseline,
            write_baseline,
        }),
        Command::Check { file } => grammar_commands::check(&file),
        Command::Fmt { file } => grammar_commands::fmt(&file),
        Command::Accepts {
            grammar,
            text,
            jsonl,
        } => grammar_commands::accepts(&grammar, text.as_deref(), jsonl),
        Command::Sample {
            grammar,
            count,
            seed,
            max_len,
            jsonl,
        } => grammar_commands::sample(&grammar, count, seed, max_len, jsonl),
        Command::Run(args) => run_command::run(&args),
        Command::Call(args) => call_command::run(&args),
        Command::Mcp(args) => mcp_command::run(&args),
        Command::Fuzz(args) => fuzz_command::run(&args),
        Command::Serve(args) => serve_command::run(&args),
    }
}

/// Stack for the worker thread: generous, so that bounded recursion in parsers and
/// printers never comes near the limit whatever the input.
const STACK_SIZE: usize = 256 * 1024 * 1024;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let worker = std::thread::Builder::new()
        .stack_size(STACK_SIZE)
        .spawn(move || run(cli));
    let outcome = match worker {
        Ok(handle) => handle.join().unwrap_or_else(|_| {
            Err(Failure::new(
                "internal error: gbnfc crashed (please report this as a bug)",
            ))
        }),
        Err(e) => Err(Failure::new(format!("cannot start a worker thread: {e}"))),
    };
    match outcome {
        Ok(code) => code,
        Err(failure) => {
            if failure.rendered {
                eprintln!("{}", failure.message);
            } else {
                eprintln!("error: {}", failure.message);
            }
            if let Some(help) = failure.help {
                eprintln!("  = help: {help}");
            }
            ExitCode::from(1)
        }
    }
}
