//! `gbnfc tools`: a tool list (OpenAI, legacy functions, MCP, Anthropic, a chat request
//! body) to the grammar of its calls.

use std::path::Path;
use std::process::ExitCode;

use gbnfc_compiler::gbnf::{CheckedGrammar, Target};
use gbnfc_compiler::reasoning::ReasoningMarkers;
use gbnfc_compiler::schema::{KeywordStatus, Whitespace};
use gbnfc_compiler::tools::{self, InputFormat, Syntax, ToolChoice, ToolOptions};
use serde_json::{json, Value};

use crate::schema_commands::{after_reasoning, read_json, spelled};
use crate::Failure;

/// What `gbnfc tools` prints.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Emit {
    /// The grammar as text, in the target's spelling.
    Gbnf,
    /// `{"grammar", "lazy_grammar", "triggers", "diagnostics"}`, the grammars in the
    /// target's spelling.
    Json,
    /// The calls as an XGrammar structural tag ([`tools::structural_tag`]); diagnostics
    /// on standard error.
    StructuralTag,
}

/// The flags of `gbnfc tools`, as given.
pub struct ToolsArgs<'a> {
    /// The tool list file, or `-`.
    pub file: &'a str,
    /// Where to write the output instead of standard output.
    pub output: Option<&'a Path>,
    /// `json`, `hermes`, `llama3` or `mistral`.
    pub syntax: &'a str,
    /// `auto`, `required`, `none` or a tool name; `None`: the input's, else auto.
    pub choice: Option<&'a str>,
    /// `Some(true)` for `--parallel`, `Some(false)` for `--no-parallel`.
    pub parallel: Option<bool>,
    /// The most calls with parallel calls.
    pub max_calls: u32,
    /// What to print.
    pub emit: Emit,
    /// Force an input format.
    pub input_format: Option<&'a str>,
    /// Validation-only keywords are errors.
    pub strict: bool,
    /// Absent `additionalProperties` means `false`.
    pub closed: bool,
    /// Whitespace inside the arguments.
    pub whitespace: Whitespace,
    /// A reasoning section before the calls: its markers, and whether the prompt opened it.
    pub reasoning: Option<(&'a ReasoningMarkers, bool)>,
    /// The engine whose spelling the grammars are written in.
    pub target: Target,
}

/// Runs `gbnfc tools`.
pub fn run(args: &ToolsArgs<'_>) -> Result<ExitCode, Failure> {
    let path = args.file;
    let origin = if path == "-" { "<stdin>" } else { path };
    let fail = |e: tools::ToolsError| Failure::new(format!("{origin}: {e}"));
    let syntax: Syntax = args.syntax.parse().map_err(fail)?;
    let choice = args
        .choice
        .map(str::parse::<ToolChoice>)
        .transpose()
        .map_err(fail)?;
    let input_format = args
        .input_format
        .map(str::parse::<InputFormat>)
        .transpose()
        .map_err(fail)?;
    let input = read_json(path)?;
    let options = ToolOptions {
        syntax,
        choice,
        parallel: args.parallel,
        max_calls: args.max_calls,
        input_format,
        strict: args.strict,
        closed: args.closed,
        whitespace: args.whitespace,
        shown: None,
    };
    let mut compiled = tools::compile_tools(&input, &options).map_err(fail)?;
    if let Some(reasoning) = args.reasoning {
        // The thinking may hold any trigger word: a lazy grammar would wake inside it, so
        // with reasoning only the whole grammar applies.
        compiled.grammar = compiled
            .grammar
            .map(|g| after_reasoning(origin, &g, reasoning))
            .transpose()?;
        compiled.lazy_grammar = None;
        compiled.triggers.clear();
    }
    let diagnostics: Vec<_> = compiled
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.status != KeywordStatus::Annotation)
        .collect();
    let text = match args.emit {
        Emit::StructuralTag => {
            if args.reasoning.is_some() {
                return Err(Failure::new(
                    "a structural tag has no reasoning section: --emit structural-tag cannot go with reasoning markers",
                ));
            }
            if args.target == Target::Lark {
                return Err(Failure::new(
                    "a structural tag is XGrammar's: its grammars are in XGrammar's spelling, and --target lark does not apply to it",
                ));
            }
            for d in &diagnostics {
                eprintln!("{d}");
            }
            let tag = tools::structural_tag::structural_tag(&compiled).map_err(fail)?;
            let mut text = serde_json::to_string_pretty(&tag)
                .map_err(|e| Failure::new(format!("cannot write JSON: {e}")))?;
            text.push('\n');
            text
        }
        Emit::Gbnf => {
            for d in &diagnostics {
                eprintln!("{d}");
            }
            match &compiled.grammar {
                Some(grammar) => {
                    if !compiled.triggers.is_empty() {
                        eprintln!(
                            "note: tool choice auto: the grammar allows prose or calls; `--emit json` also gives the lazy grammar and its trigger words"
                        );
                    }
                    spelled(origin, grammar, args.target)?
                }
                None => {
                    eprintln!(
                        "note: tool choice none and no response_format: no grammar applies (the model answers freely); nothing written"
                    );
                    return Ok(ExitCode::SUCCESS);
                }
            }
        }
        Emit::Json => {
            let diagnostics: Vec<Value> = diagnostics
                .iter()
                .map(|d| {
                    json!({
                        "tool": d.tool,
                        "pointer": d.diagnostic.pointer,
                        "keyword": d.diagnostic.keyword,
                        "status": d.diagnostic.status.to_string(),
                        "message": d.diagnostic.message,
                    })
                })
                .collect();
            let spell = |grammar: Option<&CheckedGrammar>| {
                grammar.map(|g| spelled(origin, g, args.target)).transpose()
            };
            let out = json!({
                "grammar": spell(compiled.grammar.as_ref())?,
                "lazy_grammar": spell(compiled.lazy_grammar.as_ref())?,
                "triggers": compiled.triggers,
                "diagnostics": diagnostics,
            });
            let mut text = serde_json::to_string_pretty(&out)
                .map_err(|e| Failure::new(format!("cannot write JSON: {e}")))?;
            text.push('\n');
            text
        }
    };
    match args.output {
        Some(out) => std::fs::write(out, text)
            .map_err(|e| Failure::new(format!("cannot write `{}`: {e}", out.display())))?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
