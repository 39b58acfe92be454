//! Every diagnostic names a place the user wrote: over every schema of the shared corpora
//! (JSONSchemaBench splits and JSON-Schema-Test-Suite draft2020-12), each diagnostic's
//! pointer — and an unsatisfiable or invalid schema's — resolves in the schema, or its
//! parent does (a keyword left out, such as an absent `additionalProperties`). Merging
//! (`allOf`, `$ref` siblings, `anyOf` branches) compiles made-up schema objects; their
//! places must not leak into messages.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use gbnfc_compiler::schema::{compile, CompileError, Options};
use serde_json::Value;

/// Whether `pointer` (in the input document) names a place written in `schema`.
fn written(schema: &Value, pointer: &str) -> bool {
    schema.pointer(pointer).is_some()
        || pointer
            .rsplit_once('/')
            .is_some_and(|(parent, _)| schema.pointer(parent).is_some())
}

#[test]
fn every_diagnostic_names_a_place_in_the_schema() {
    let schemas = common::corpus_schemas();
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
