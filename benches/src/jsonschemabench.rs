//! JSONSchemaBench inputs and the two JSON Schema → GBNF converters compared on them:
//! gbnfc's [`gbnfc_compiler::schema::compile`] and llama.cpp's own
//! `json_schema_to_grammar` (through `llama-cpp-2`), run in the same process.
//!
//! Both converters get the same input, the schema as compact JSON text, and return GBNF
//! text, so the timed work is the same on both sides: parse the JSON, convert, print.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use gbnfc_compiler::gbnf;
use gbnfc_compiler::schema::{compile, CompileError, Options};
use serde_json::Value;

/// Where the corpus lives: one folder per split, one JSON file per schema, whose
/// `schema` field is the schema.
pub const CORPUS_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/corpora/jsonschemabench"
);

/// Schemas that crash llama.cpp's converter (abort the process), so they are never given
/// to it. One `Split/file.json` per line; `#` starts a comment.
pub const LLAMA_CPP_CRASHES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/llama-cpp-crashes.txt");

/// One schema of the corpus.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The file name inside its split's folder.
    pub name: String,
    /// The schema as compact JSON text (object keys in file order).
    pub text: String,
}

/// A split of the corpus, loaded.
#[derive(Debug, Clone)]
pub struct Split {
    /// The folder name (`Github_easy`, …).
    pub name: String,
    /// Its schemas, sorted by file name.
    pub schemas: Vec<Schema>,
    /// Files that are not JSON or have no `schema` field: `(file name, why)`.
    pub unreadable: Vec<(String, String)>,
}

/// The split names (folders of [`CORPUS_DIR`]), sorted.
///
/// # Errors
/// When the corpus folder cannot be read.
pub fn split_names() -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(CORPUS_DIR)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// Loads one split: every `*.json` file, sorted by name.
///
/// # Errors
/// When the split's folder cannot be read.
pub fn load_split(name: &str) -> io::Result<Split> {
    let dir = Path::new(CORPUS_DIR).join(name);
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<io::Result<_>>()?;
    paths.retain(|p| p.extension().is_some_and(|e| e == "json"));
    paths.sort();
    let mut split = Split {
        name: name.to_owned(),
        schemas: Vec::new(),
        unreadable: Vec::new(),
    };
    for path in paths {
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = fs::read_to_string(&path)?;
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(mut doc)) => match doc.remove("schema") {
                Some(schema) => split.schemas.push(Schema {
                    name: file,
                    text: schema.to_string(),
                }),
                None => split
                    .unreadable
                    .push((file, "no `schema` field".to_owned())),
            },
            Ok(_) => split
                .unreadable
                .push((file, "not a JSON object".to_owned())),
            Err(e) => split.unreadable.push((file, e.to_string())),
        }
    }
    Ok(split)
}

/// The schemas listed in [`LLAMA_CPP_CRASHES`], as `Split/file.json`; empty when the file
/// does not exist.
pub fn llama_cpp_crashes() -> HashSet<String> {
    fs::read_to_string(LLAMA_CPP_CRASHES)
        .unwrap_or_default()
        .lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Why gbnfc failed, in one word (the [`CompileError`] variant), or `"json"` when the
/// text is not JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GbnfcFailure {
    /// The variant: `Invalid`, `Unsatisfiable`, `Unresolved`, `Strict`, `TooLarge`, `json`.
    pub kind: &'static str,
    /// The message.
    pub message: String,
}

/// gbnfc with default [`Options`] (compact whitespace, absent `additionalProperties`
/// means any other property is allowed, no remote references): see [`gbnfc_with`].
///
/// # Errors
/// When the text is not JSON or the schema does not compile.
pub fn gbnfc(schema_json: &str) -> Result<String, GbnfcFailure> {
    gbnfc_with(schema_json, &Options::default())
}

/// gbnfc with `closed` set: an absent `additionalProperties` means `false`, which is what
/// llama.cpp's converter does, so the grammars describe closer languages.
///
/// # Errors
/// When the text is not JSON or the schema does not compile.
pub fn gbnfc_closed(schema_json: &str) -> Result<String, GbnfcFailure> {
    gbnfc_with(
        schema_json,
        &Options {
            closed: true,
            ..Options::default()
        },
    )
}

/// gbnfc: parse the JSON text, compile, print the grammar.
///
/// # Errors
/// When the text is not JSON or the schema does not compile.
pub fn gbnfc_with(schema_json: &str, options: &Options<'_>) -> Result<String, GbnfcFailure> {
    let value: Value = serde_json::from_str(schema_json).map_err(|e| GbnfcFailure {
        kind: "json",
        message: e.to_string(),
    })?;
    match compile(&value, options) {
        Ok(compiled) => Ok(compiled.grammar.to_string()),
        Err(e) => Err(GbnfcFailure {
            kind: match e {
                CompileError::Invalid { .. } => "Invalid",
                CompileError::Unsatisfiable { .. } => "Unsatisfiable",
                CompileError::Unresolved { .. } => "Unresolved",
                CompileError::Strict { .. } => "Strict",
                CompileError::TooLarge { .. } => "TooLarge",
            },
            message: e.to_string(),
        }),
    }
}

/// The work of the self-check inside [`compile`] (it runs [`gbnf::check()`] on the grammar
/// it built), replayed on a parsed grammar. Timing it estimates how much of gbnfc's time
/// that check takes.
pub fn self_check_work(grammar: &gbnf::Grammar) -> usize {
    gbnf::check(grammar).len()
}

/// The schema as gbnfc reads it by default, spelled out for llama.cpp: every object schema
/// with `properties` and no `additionalProperties` gets `"additionalProperties": true`
/// (absent means allowed, as the spec says; llama.cpp's converter reads absent as `false`).
/// Given this text, llama.cpp's converter builds its own extra-key exclusion, so both
/// converters describe the same objects. Returns the input when it is not JSON.
pub fn open_reading(schema_json: &str) -> String {
    fn walk(schema: &mut Value, depth: usize) {
        let Value::Object(map) = schema else {
            return;
        };
        if depth > 200 {
            return;
        }
        if map.contains_key("properties") && !map.contains_key("additionalProperties") {
            map.insert("additionalProperties".to_owned(), Value::Bool(true));
        }
        for (key, child) in map.iter_mut() {
            match key.as_str() {
                "properties" | "patternProperties" | "$defs" | "definitions"
                | "dependentSchemas" => {
                    if let Value::Object(children) = child {
                        children.values_mut().for_each(|c| walk(c, depth + 1));
                    }
                }
                "allOf" | "anyOf" | "oneOf" | "prefixItems" | "items" => match child {
                    Value::Array(items) => items.iter_mut().for_each(|c| walk(c, depth + 1)),
                    other => walk(other, depth + 1),
                },
                "additionalProperties"
                | "additionalItems"
                | "contains"
                | "not"
                | "if"
                | "then"
                | "else"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems" => walk(child, depth + 1),
                _ => {}
            }
        }
    }
    match serde_json::from_str::<Value>(schema_json) {
        Ok(mut schema) => {
            walk(&mut schema, 0);
            schema.to_string()
        }
        Err(_) => schema_json.to_owned(),
    }
}

/// llama.cpp's `json_schema_to_grammar` (it parses the JSON text itself). C++ exceptions
/// become errors; an abort inside llama.cpp still ends the process (see
/// [`LLAMA_CPP_CRASHES`]).
///
/// # Errors
/// When llama.cpp's converter throws (its message is not passed through).
pub fn llama_cpp(schema_json: &str) -> Result<String, String> {
    llama_cpp_2::json_schema_to_grammar(schema_json).map_err(|e| e.to_string())
}
