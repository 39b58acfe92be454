//! Every diagnostic names a place the user wrote: over every schema of the shared corpora
//! (JSONSchemaBench splits and JSON-Schema-Test-Suite draft2020-12), each diagnostic's
//! pointer — and an unsatisfiable or invalid schema's — resolves in the schema, or its
//! parent does (a keyword left out, such as an absent `additionalProperties`). Merging
//! (`allOf`, `$ref` siblings, `anyOf` branches) compiles made-up schema objects; their
//! places must not leak into messages.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use gbnfc_compiler::schema::{compile, CompileError, Options};
use serde_json::Value;

fn corpora() -> PathBuf {
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora");
    assert!(
        corpora.is_dir(),
        "the shared corpora are missing at {}: CI lays ../shared beside the clone",
        corpora.display()
    );
    corpora
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// The schemas of the corpora, each with a name for messages.
fn schemas() -> Vec<(String, Value)> {
    let corpora = corpora();
    let mut out = Vec::new();
    let mut splits: Vec<PathBuf> = std::fs::read_dir(corpora.join("jsonschemabench"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    splits.sort();
    for split in splits {
        for file in json_files(&split) {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let Ok(mut value) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            if let Some(schema) = value.get_mut("schema").map(Value::take) {
                out.push((file.display().to_string(), schema));
            }
        }
    }
    for file in json_files(&corpora.join("json-schema-test-suite/draft2020-12")) {
        let text = std::fs::read_to_string(&file).unwrap();
        let groups: Vec<Value> = serde_json::from_str(&text).unwrap();
        for (i, mut group) in groups.into_iter().enumerate() {
            if let Some(schema) = group.get_mut("schema").map(Value::take) {
                out.push((format!("{}[{i}]", file.display()), schema));
            }
        }
    }
    out
}

/// Whether `pointer` (in the input document) names a place written in `schema`.
fn written(schema: &Value, pointer: &str) -> bool {
    schema.pointer(pointer).is_some()
        || pointer
            .rsplit_once('/')
            .is_some_and(|(parent, _)| schema.pointer(parent).is_some())
}

#[test]
fn every_diagnostic_names_a_place_in_the_schema() {
    let schemas = schemas();
    assert!(
        schemas.len() > 8_000,
        "only {} schemas found",
        schemas.len()
    );
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (name, schema) in &schemas {
        let pointers: Vec<String> = match compile(schema, &Options::default()) {
            Ok(compiled) => compiled
                .diagnostics
                .into_iter()
                .map(|d| d.pointer)
                .collect(),
            Err(
                CompileError::Unsatisfiable { pointer, .. } | CompileError::Invalid { pointer, .. },
            ) => vec![pointer],
            Err(_) => Vec::new(),
        };
        // A place in another document is written `uri#pointer`; only the input's are
        // checked here.
        for pointer in pointers.into_iter().filter(|p| !p.contains('#')) {
            checked += 1;
            if !written(schema, &pointer) {
                wrong.push(format!("{name}: {pointer}"));
            }
        }
    }
    assert!(checked > 5_000, "only {checked} diagnostics");
    assert!(
        wrong.is_empty(),
        "{} of {checked} diagnostics name no place in their schema, e.g.\n{}",
        wrong.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
}
