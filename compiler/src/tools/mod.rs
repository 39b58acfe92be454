//! Tool lists → GBNF: grammars that force a local model's tool calls into the exact text
//! its chat template expects, with arguments that match each tool's schema.
//!
//! [`compile_tools`] reads a tool list in any vendor's shape ([`input`]), compiles each
//! tool's argument schema with [`crate::schema::compile`], and wraps the argument
//! grammars in a call [`Syntax`] under a [`ToolChoice`]:
//!
//! - `required`: one call (with parallel calls, 1 to `max_calls`), of any tool;
//! - a tool's name: calls of that tool only;
//! - `auto`: prose that never contains the call trigger ([`prose`]) — or the
//!   `response_format` answer when one came with the tools — *or* calls; plus a lazy
//!   grammar (the calls alone) and its trigger words, for llama.cpp's lazy grammar
//!   sampler;
//! - `none`: no tool grammar (the `response_format` answer's grammar, if any).
//!
//! The per-tool grammars are merged into one (`combine.rs`): rule names come from the
//! sanitised tool names ([`names`]), building blocks shared by several tools appear once,
//! and the result passes [`crate::gbnf::check()`] — it is checked here, before anyone sees
//! it. Schema diagnostics come back with pointers into the input and the tool's name.
//! [`parse_tool_calls`] reads calls back from text; [`CallStream`] ([`stream`]) reads them
//! while they are generated, as events for a streaming server.
//!
//! ```
//! use gbnfc_compiler::tools::{compile_tools, parse_tool_calls, Syntax, ToolChoice, ToolOptions};
//! use gbnfc_compiler::recognize::Recognizer;
//! let tools = serde_json::json!({"tools": [{"type": "function", "function": {
//!     "name": "get_weather",
//!     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
//! }}]});
//! let options = ToolOptions { syntax: Syntax::Hermes, choice: Some(ToolChoice::Required), ..ToolOptions::default() };
//! let compiled = compile_tools(&tools, &options).unwrap();
//! let grammar = compiled.grammar.unwrap();
//! let text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Chengdu\"}}\n</tool_call>";
//! assert!(Recognizer::new(&grammar).unwrap().recognize(text).accepted);
//! assert_eq!(parse_tool_calls(Syntax::Hermes, text).unwrap()[0].arguments["city"], "Chengdu");
//! ```

pub mod choice;
mod combine;
pub mod error;
pub mod input;
pub mod names;
mod params;
pub mod parse;
pub mod prose;
pub mod stream;
pub mod structural_tag;
pub mod syntax;
mod write;

use std::fmt;

use serde_json::Value;

use crate::gbnf::{CheckedGrammar, Expr, Grammar};
use crate::schema::{
    self, CompileError, Compiled, KeywordStatus, Options, SchemaDiagnostic, Whitespace,
};

pub use choice::ToolChoice;
pub use error::ToolsError;
pub use input::{read_tools, InputFormat, ResponseFormat, ToolList, ToolSpec};
pub use parse::{parse_reply, parse_tool_calls, CallParseError, Reply, ToolCall};
pub use prose::prose_grammar;
pub use stream::{CallStream, StreamEvent};
pub use syntax::{Syntax, MISTRAL_ID_LEN};
pub use write::{mistral_id, write_calls};

use combine::{combine, Unit};
use names::Names;

/// Parallel calls allowed by default.
pub const DEFAULT_MAX_CALLS: u32 = 8;

/// The most parallel calls a grammar may allow (llama.cpp's repetition limit).
pub const MAX_CALLS: u32 = 2000;

/// How to compile a tool list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOptions {
    /// The call text format.
    pub syntax: Syntax,
    /// The tool choice; `None`: the input's `tool_choice`, else `auto`.
    pub choice: Option<ToolChoice>,
    /// Parallel calls; `None`: the input's `parallel_tool_calls`, else one call.
    pub parallel: Option<bool>,
    /// The most calls in one reply, with parallel calls (1 to [`MAX_CALLS`]).
    pub max_calls: u32,
    /// Read the input as this format instead of detecting it.
    pub input_format: Option<InputFormat>,
    /// Keywords only validation can enforce are errors.
    pub strict: bool,
    /// Absent `additionalProperties` means `false` in every schema (it does anyway for
    /// OpenAI tools with `"strict": true`).
    pub closed: bool,
    /// Whitespace inside the arguments (the call envelope is always exact).
    pub whitespace: Whitespace,
    /// Tool retrieval: only the tools named here are offered — in the grammar and in
    /// [`CompiledTools::tools`] — in the list's order. Every tool's schema is compiled all
    /// the same. `None`: every tool.
    pub shown: Option<Vec<String>>,
}

impl Default for ToolOptions {
    fn default() -> Self {
        ToolOptions {
            syntax: Syntax::default(),
            choice: None,
            parallel: None,
            max_calls: DEFAULT_MAX_CALLS,
            input_format: None,
            strict: false,
            closed: false,
            whitespace: Whitespace::default(),
            shown: None,
        }
    }
}

/// A schema diagnostic of one tool (or of the `response_format`), its pointer into the
/// whole input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDiagnostic {
    /// The tool's name; `None` for the `response_format`.
    pub tool: Option<String>,
    /// The diagnostic; its `pointer` starts at the input's root
    /// (`/tools/0/function/parameters/properties/n/multipleOf`).
    pub diagnostic: SchemaDiagnostic,
}

impl fmt::Display for ToolDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tool {
            Some(tool) => write!(f, "{} (tool `{tool}`)", self.diagnostic),
            None => write!(f, "{} (response_format)", self.diagnostic),
        }
    }
}

/// One tool as compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledTool {
    /// The tool as read.
    pub spec: ToolSpec,
    /// The prefix of its rules' names in the grammars.
    pub rule_prefix: String,
    /// Some keyword of its schema is enforced by validation only: validate its arguments
    /// after generation.
    pub needs_validation: bool,
    /// The grammar of its arguments alone (the object after `"arguments": `).
    pub arguments: CheckedGrammar,
}

/// The grammars for a tool list.
#[derive(Debug, Clone)]
pub struct CompiledTools {
    /// The grammar to sample under; `None` for choice `none` without a `response_format`.
    pub grammar: Option<CheckedGrammar>,
    /// For `auto`: the calls alone, to apply from a trigger word on.
    pub lazy_grammar: Option<CheckedGrammar>,
    /// For `auto`: the words that start the lazy grammar (literal text, not patterns).
    pub triggers: Vec<String>,
    /// Schema diagnostics of the tools in the grammar (and of the `response_format`).
    pub diagnostics: Vec<ToolDiagnostic>,
    /// The tools offered, in order: every tool of the list, or those [`ToolOptions::shown`]
    /// names.
    pub tools: Vec<CompiledTool>,
    /// The call syntax.
    pub syntax: Syntax,
    /// The tool choice in force.
    pub choice: ToolChoice,
    /// Whether several calls may come in one reply.
    pub parallel: bool,
    /// The most calls in one reply (1 unless `parallel`).
    pub max_calls: u32,
    /// The input's format.
    pub format: InputFormat,
    /// The `response_format` that came with the tools, if any.
    pub response_format: Option<ResponseFormat>,
    /// The `response_format`'s schema is in the grammar and has validation-only keywords.
    pub answer_needs_validation: bool,
}

impl CompiledTools {
    /// The tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&CompiledTool> {
        self.tools.iter().find(|t| t.spec.name == name)
    }

    /// Some output of the grammar must be validated after generation.
    pub fn needs_validation(&self) -> bool {
        self.answer_needs_validation
            || self
                .diagnostics
                .iter()
                .any(|d| d.diagnostic.status == KeywordStatus::ValidationOnly)
    }
}

/// Compiles a tool list (in any shape [`read_tools`] reads) into grammars for its calls.
///
/// Every tool's schema is compiled, also those a forced choice, `none` or
/// [`ToolOptions::shown`] leaves out of the grammar, so a bad list fails the same way
/// whatever the choice and the retrieval. The input's
/// `tool_choice` and `parallel_tool_calls` apply where `options` leave them `None`.
///
/// # Errors
/// See [`ToolsError`]: a bad tool list, a tool schema or `response_format` that does not
/// compile, a forced tool not in the list (or not shown), a shown name not in the list,
/// `max_calls` out of range, or a combined grammar beyond llama.cpp's limits.
pub fn compile_tools(input: &Value, options: &ToolOptions) -> Result<CompiledTools, ToolsError> {
    if options.max_calls == 0 || options.max_calls > MAX_CALLS {
        return Err(ToolsError::BadOption(format!(
            "max_calls is {}: it must be between 1 and {MAX_CALLS}",
            options.max_calls
        )));
    }
    let list = read_tools(input, options.input_format)?;
    let (choice, choice_pointer) = match &options.choice {
        Some(choice) => (choice.clone(), None),
        None => (
            list.choice.clone().unwrap_or_default(),
            list.choice_pointer.clone(),
        ),
    };
    if let ToolChoice::Named(name) = &choice {
        if !list.tools.iter().any(|t| &t.name == name) {
            let known: Vec<&str> = list.tools.iter().map(|t| t.name.as_str()).collect();
            return Err(ToolsError::UnknownTool {
                pointer: choice_pointer,
                name: name.clone(),
                known: known.join(", "),
            });
        }
    }
    let offered = offered_tools(&list, &choice, options.shown.as_deref())?;
    let parallel = options.parallel.or(list.parallel).unwrap_or(false);
    let max_calls = if parallel { options.max_calls } else { 1 };

    let tool_names: Vec<&str> = list.tools.iter().map(|t| t.name.as_str()).collect();
    let prefixes = names::rule_prefixes(&tool_names);
    let mut compiled = Vec::with_capacity(list.tools.len());
    for spec in &list.tools {
        let schema_options = Options {
            strict: options.strict,
            closed: options.closed || spec.strict,
            whitespace: options.whitespace,
            remote: None,
            explain: false,
        };
        let result = schema::compile(&spec.parameters, &schema_options).map_err(|e| {
            let (pointer, message) = locate(&e, &spec.parameters_pointer);
            ToolsError::Schema {
                pointer,
                tool: spec.name.clone(),
                message,
            }
        })?;
        compiled.push(result);
    }
    let answer = match &list.response_format {
        Some(format) => Some(compile_answer(format, options)?),
        None => None,
    };

    let in_grammar: Vec<usize> = match &choice {
        ToolChoice::None => Vec::new(),
        ToolChoice::Named(name) => offered
            .iter()
            .copied()
            .filter(|&i| &list.tools[i].name == name)
            .collect(),
        ToolChoice::Auto | ToolChoice::Required => offered.clone(),
    };
    let parts: Vec<ToolPart<'_>> = in_grammar
        .iter()
        .map(|&i| ToolPart {
            name: &list.tools[i].name,
            prefix: &prefixes[i],
            grammar: &compiled[i].grammar,
        })
        .collect();
    let calls = Calls {
        syntax: options.syntax,
        parallel,
        max_calls,
    };
    let answer_in_grammar = matches!(choice, ToolChoice::Auto | ToolChoice::None);
    let (grammar, lazy_grammar, triggers) = match &choice {
        ToolChoice::None => (
            answer.as_ref().map(|(a, _)| a.grammar.clone()),
            None,
            Vec::new(),
        ),
        ToolChoice::Auto => {
            let branch = match &answer {
                Some((a, _)) => Branch::Answer(&a.grammar),
                None => Branch::Prose,
            };
            let full = assemble(&calls, &parts, branch)?;
            let lazy = assemble(&calls, &parts, Branch::Nothing)?;
            (
                Some(full),
                Some(lazy),
                vec![options.syntax.trigger().to_string()],
            )
        }
        ToolChoice::Required | ToolChoice::Named(_) => (
            Some(assemble(&calls, &parts, Branch::Nothing)?),
            None,
            Vec::new(),
        ),
    };

    let mut diagnostics = Vec::new();
    for &i in &in_grammar {
        let spec = &list.tools[i];
        diagnostics.extend(compiled[i].diagnostics.iter().map(|d| ToolDiagnostic {
            tool: Some(spec.name.clone()),
            diagnostic: rebase(d, &spec.parameters_pointer),
        }));
    }
    let mut answer_needs_validation = false;
    if let (Some((answer, base)), true) = (&answer, answer_in_grammar) {
        answer_needs_validation = answer.needs_validation();
        diagnostics.extend(answer.diagnostics.iter().map(|d| ToolDiagnostic {
            tool: None,
            diagnostic: rebase(d, base),
        }));
    }
    let tools = offered
        .iter()
        .map(|&i| CompiledTool {
            spec: list.tools[i].clone(),
            rule_prefix: prefixes[i].clone(),
            needs_validation: compiled[i].needs_validation(),
            arguments: compiled[i].grammar.clone(),
        })
        .collect();
    Ok(CompiledTools {
        grammar,
        lazy_grammar,
        triggers,
        diagnostics,
        tools,
        syntax: options.syntax,
        choice,
        parallel,
        max_calls,
        format: list.format,
        response_format: list.response_format,
        answer_needs_validation,
    })
}

/// The indices of the tools offered: every tool, or those `shown` names (a forced tool
/// among them).
fn offered_tools(
    list: &ToolList,
    choice: &ToolChoice,
    shown: Option<&[String]>,
) -> Result<Vec<usize>, ToolsError> {
    let Some(shown) = shown else {
        return Ok((0..list.tools.len()).collect());
    };
    if let Some(unknown) = shown
        .iter()
        .find(|name| !list.tools.iter().any(|t| &&t.name == name))
    {
        return Err(ToolsError::BadOption(format!(
            "the shown tool `{unknown}` is not in the list"
        )));
    }
    if let ToolChoice::Named(name) = choice {
        if !shown.contains(name) {
            return Err(ToolsError::BadOption(format!(
                "tool_choice forces `{name}`, but it is not among the shown tools"
            )));
        }
    }
    Ok((0..list.tools.len())
        .filter(|&i| shown.contains(&list.tools[i].name))
        .collect())
}

/// Compiles the `response_format` answer; returns it with the pointer its schema's
/// diagnostics are relative to.
fn compile_answer(
    format: &ResponseFormat,
    options: &ToolOptions,
) -> Result<(Compiled, String), ToolsError> {
    let at = &format.pointer;
    let error = |pointer: String, message: String| ToolsError::ResponseFormat { pointer, message };
    let (schema, base, strict) = match format.value.get("type").and_then(Value::as_str) {
        Some("json_schema") => {
            let Some(inner) = format.value.get("json_schema").and_then(Value::as_object) else {
                return Err(error(
                    format!("{at}/json_schema"),
                    "a response_format of type json_schema needs a `json_schema` object with a `schema`".to_string(),
                ));
            };
            let schema = inner.get("schema").cloned().unwrap_or(Value::Bool(true));
            let strict = inner.get("strict") == Some(&Value::Bool(true));
            (schema, format!("{at}/json_schema/schema"), strict)
        }
        Some("json_object") => (serde_json::json!({"type": "object"}), at.clone(), false),
        other => {
            return Err(error(
                format!("{at}/type"),
                format!(
                "unknown response_format type {}: use \"json_schema\", \"json_object\" or \"text\"",
                other.map_or_else(|| "(none)".to_string(), |t| format!("`{t}`"))
            ),
            ))
        }
    };
    let schema_options = Options {
        strict: options.strict,
        closed: options.closed || strict,
        whitespace: options.whitespace,
        remote: None,
        explain: false,
    };
    let compiled = schema::compile(&schema, &schema_options).map_err(|e| {
        let (pointer, message) = locate(&e, &base);
        error(pointer, message)
    })?;
    Ok((compiled, base))
}

/// A compile error's pointer (prefixed with `base`) and its message without the pointer.
fn locate(error: &CompileError, base: &str) -> (String, String) {
    let inner = match error {
        CompileError::Invalid { pointer, .. }
        | CompileError::Unsatisfiable { pointer, .. }
        | CompileError::Unresolved { pointer, .. }
        | CompileError::Strict { pointer, .. }
        | CompileError::TooLarge { pointer, .. } => pointer,
    };
    let text = error.to_string();
    let shown = if inner.is_empty() {
        "/"
    } else {
        inner.as_str()
    };
    let message = text
        .strip_prefix(&format!("{shown}: "))
        .unwrap_or(&text)
        .to_string();
    (format!("{base}{inner}"), message)
}

/// `diagnostic` with its pointer prefixed by `base`.
fn rebase(diagnostic: &SchemaDiagnostic, base: &str) -> SchemaDiagnostic {
    SchemaDiagnostic {
        pointer: format!("{base}{}", diagnostic.pointer),
        ..diagnostic.clone()
    }
}

/// A tool in a grammar being assembled.
struct ToolPart<'a> {
    name: &'a str,
    prefix: &'a str,
    grammar: &'a Grammar,
}

/// How calls are laid out.
struct Calls {
    syntax: Syntax,
    parallel: bool,
    max_calls: u32,
}

/// What `root` offers besides calls.
#[derive(Clone, Copy)]
enum Branch<'a> {
    /// Calls only.
    Nothing,
    /// Prose without the trigger.
    Prose,
    /// The `response_format` answer.
    Answer(&'a Grammar),
}

/// One grammar: `root`, the call sequence, the calls, the tools' argument rules.
fn assemble(
    calls: &Calls,
    tools: &[ToolPart<'_>],
    branch: Branch<'_>,
) -> Result<CheckedGrammar, ToolsError> {
    let syntax = calls.syntax;
    let mut names = Names::new();
    names.reserve("root");
    let sequence = (calls.parallel || !syntax.open().is_empty()).then(|| names.fresh("tool-calls"));
    let call = names.fresh("tool-call");
    let id = syntax.has_id().then(|| names.fresh("call-id"));
    let prose = match branch {
        Branch::Prose => prose::prose_rules(syntax.trigger(), &mut names),
        Branch::Nothing | Branch::Answer(_) => Vec::new(),
    };
    let call_rules: Vec<String> = tools
        .iter()
        .map(|t| names.fresh(&format!("{}-call", t.prefix)))
        .collect();
    let mut units = Vec::with_capacity(tools.len() + 1);
    if let Branch::Answer(grammar) = branch {
        units.push(Unit {
            prefix: "answer".to_string(),
            entry: "answer".to_string(),
            grammar,
        });
    }
    units.extend(tools.iter().map(|t| Unit {
        prefix: t.prefix.to_string(),
        entry: format!("{}-args", t.prefix),
        grammar: t.grammar,
    }));
    let mut merged = combine(&units, &mut names).into_iter();

    let mut grammar = Grammar::default();
    let all_calls = Expr::rule(sequence.clone().unwrap_or_else(|| call.clone()));
    let answer = match branch {
        Branch::Answer(_) => merged.next(),
        Branch::Nothing | Branch::Prose => None,
    };
    let root = match (&answer, prose.first()) {
        (Some(answer), _) => Expr::alt([Expr::rule(answer.entry.clone()), all_calls]),
        (None, Some(prose)) => Expr::alt([Expr::rule(prose.name.clone()), all_calls]),
        (None, None) => all_calls,
    };
    grammar.push("root", root);
    if let Some(sequence) = sequence {
        let one = Expr::rule(call.clone());
        let mut items = vec![Expr::literal(syntax.open()), one.clone()];
        if calls.max_calls > 1 {
            items.push(Expr::repeat(
                Expr::seq([Expr::literal(syntax.separator()), one]),
                0,
                Some(calls.max_calls - 1),
            ));
        }
        items.push(Expr::literal(syntax.close()));
        grammar.push(sequence, Expr::seq(items));
    }
    let any_tool = Expr::alt(call_rules.iter().map(|name| Expr::rule(name.clone())));
    let (before, after) = syntax.wrap();
    let body = if before.is_empty() && after.is_empty() {
        any_tool
    } else {
        Expr::seq([Expr::literal(before), any_tool, Expr::literal(after)])
    };
    grammar.push(call, body);
    if let Some(id) = &id {
        grammar.push(
            id.clone(),
            Expr::seq([
                Expr::literal("\""),
                Expr::repeat(
                    Expr::class(false, [('0', '9'), ('A', 'Z'), ('a', 'z')]),
                    MISTRAL_ID_LEN as u32,
                    Some(MISTRAL_ID_LEN as u32),
                ),
                Expr::literal("\""),
            ]),
        );
    }
    grammar.rules.extend(prose);
    if let Some(answer) = answer {
        grammar.rules.extend(answer.rules);
    }
    for ((tool, call_rule), unit) in tools.iter().zip(call_rules).zip(merged) {
        let tail = match &id {
            Some(id) => Expr::seq([
                Expr::literal(", \"id\": "),
                Expr::rule(id.clone()),
                Expr::literal("}"),
            ]),
            None => Expr::literal("}"),
        };
        grammar.push(
            call_rule,
            Expr::seq([
                Expr::literal(syntax.call_head(tool.name)),
                Expr::rule(unit.entry),
                tail,
            ]),
        );
        grammar.rules.extend(unit.rules);
    }
    verify(grammar)
}

/// The grammar, if it passes `check`; its first error otherwise.
fn verify(grammar: Grammar) -> Result<CheckedGrammar, ToolsError> {
    CheckedGrammar::new(grammar).map_err(|rejected| {
        let first = rejected.errors().next().map(|d| d.message.clone());
        ToolsError::TooLarge(first.unwrap_or_default())
    })
}
