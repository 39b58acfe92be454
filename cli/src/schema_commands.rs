//! The schema subcommands: `compile` and `canon`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gbnfc_compiler::gbnf::{CheckedGrammar, Grammar, Target};
use gbnfc_compiler::reasoning::{with_reasoning, ReasoningMarkers};
use gbnfc_compiler::schema::{self, canon, document::Document, KeywordStatus, Options, Whitespace};
use serde_json::Value;

use crate::input::read;
use crate::Failure;

/// Reads a JSON document, reporting a syntax error with its line and column.
pub fn read_json(path: &str) -> Result<Value, Failure> {
    let source = read(path)?;
    parse_json(&source.text, &source.origin)
}

/// Parses JSON text, reporting a syntax error with its line and column.
pub fn parse_json(text: &str, origin: &str) -> Result<Value, Failure> {
    serde_json::from_str(text).map_err(|e| {
        Failure::new(format!(
            "{origin}:{}:{}: invalid JSON: {e}",
            e.line(),
            e.column()
        ))
        .help("fix the JSON syntax at that position")
    })
}

/// A resolver for remote `$ref`s from a directory: `scheme://host/path` → `DIR/path`.
pub fn ref_dir_resolver(dir: PathBuf) -> impl Fn(&str) -> Option<Value> {
    move |uri: &str| {
        let path = match uri.split_once("://") {
            Some((_, rest)) => rest.split_once('/').map_or("", |(_, p)| p),
            None => uri.rsplit(':').next().unwrap_or(uri),
        };
        let file = dir.join(path.trim_start_matches('/'));
        let file = if file.starts_with(&dir) {
            file
        } else {
            return None;
        };
        let text = std::fs::read_to_string(file).ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// The flags shared by `compile` and `canon`.
pub struct SchemaFlags {
    /// Validation-only keywords are errors.
    pub strict: bool,
    /// Absent `additionalProperties` means `false`.
    pub closed: bool,
    /// Whitespace between tokens.
    pub whitespace: Whitespace,
    /// Where remote `$ref`s resolve from.
    pub ref_dir: Option<PathBuf>,
}

/// `grammar` after a reasoning section with `markers` (left open when the prompt `opened`
/// it), for `compile` and `tools`.
pub fn after_reasoning(
    path: &str,
    grammar: &Grammar,
    (markers, opened): (&ReasoningMarkers, bool),
) -> Result<CheckedGrammar, Failure> {
    CheckedGrammar::new(with_reasoning(grammar, markers, opened)).map_err(|rejected| {
        Failure::new(format!(
            "{path}: the grammar with a reasoning section fails its checks: {rejected}"
        ))
        .help("try other reasoning markers")
    })
}

/// `grammar` in `target`'s spelling, for `compile` and `tools`.
pub fn spelled(path: &str, grammar: &Grammar, target: Target) -> Result<String, Failure> {
    target.render(grammar).map_err(|e| {
        Failure::new(format!("{path}: {e}")).help("use --target llama, which spells everything")
    })
}

/// `gbnfc compile SCHEMA`: prints the grammar in `target`'s spelling (or writes it to
/// `out`), after a reasoning section when `reasoning` gives its markers (and whether the
/// prompt opened it).
pub fn compile(
    path: &str,
    out: Option<&Path>,
    flags: &SchemaFlags,
    explain: bool,
    reasoning: Option<(&ReasoningMarkers, bool)>,
    target: Target,
) -> Result<ExitCode, Failure> {
    let schema = read_json(path)?;
    let resolver = flags.ref_dir.clone().map(ref_dir_resolver);
    let options = Options {
        strict: flags.strict,
        closed: flags.closed,
        whitespace: flags.whitespace,
        remote: resolver
            .as_ref()
            .map(|r| r as &dyn Fn(&str) -> Option<Value>),
        explain,
    };
    let compiled = schema::compile(&schema, &options).map_err(|e| {
        Failure::new(format!("{path}: {e}")).help("fix the schema at that JSON pointer")
    })?;
    if explain {
        for d in &compiled.explain {
            let pointer = if d.pointer.is_empty() {
                "/"
            } else {
                &d.pointer
            };
            let note = if d.message.is_empty() {
                String::new()
            } else {
                format!(" — {}", d.message)
            };
            eprintln!("{:<16} {pointer}{note}", d.status.to_string());
        }
    } else {
        for d in compiled
            .diagnostics
            .iter()
            .filter(|d| d.status != KeywordStatus::Annotation)
        {
            eprintln!("{d}");
        }
    }
    let text = match reasoning {
        Some(reasoning) => {
            let grammar = after_reasoning(path, &compiled.grammar, reasoning)?;
            spelled(path, &grammar, target)?
        }
        None => spelled(path, &compiled.grammar, target)?,
    };
    match out {
        Some(out) => std::fs::write(out, text)
            .map_err(|e| Failure::new(format!("cannot write `{}`: {e}", out.display())))?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `gbnfc canon SCHEMA [VALUE]`: prints the canonical text of a value under a schema.
pub fn canon_command(
    schema_path: &str,
    value: Option<&str>,
    ref_dir: Option<PathBuf>,
) -> Result<ExitCode, Failure> {
    let schema = read_json(schema_path)?;
    let value = match value {
        None | Some("-") => read_json("-")?,
        Some(text) => parse_json(text, "VALUE")?,
    };
    let resolver = ref_dir.map(ref_dir_resolver);
    let remote = resolver
        .as_ref()
        .map(|r| r as &dyn Fn(&str) -> Option<Value>);
    let doc = Document::from_input(&schema, remote)
        .map_err(|e| Failure::new(format!("{schema_path}: {e}")))?;
    println!("{}", canon::canonical_text(&value, &doc));
    Ok(ExitCode::SUCCESS)
}
