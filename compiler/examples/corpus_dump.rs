//! Prints what `schema::compile` makes of every JSONSchemaBench schema, so that a change
//! to the compiler can be checked to leave its output as it was:
//!
//! ```text
//! cargo run --release -p gbnfc-compiler --example corpus_dump > before.txt
//! # … change the compiler …
//! cargo run --release -p gbnfc-compiler --example corpus_dump > after.txt
//! cmp before.txt after.txt
//! ```
//!
//! For each file (in path order) and each of the default and the `closed` options: the
//! grammar and its diagnostics, or the error. An argument names another corpus folder
//! (one folder per split, one JSON file per schema, the schema under `"schema"`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use gbnfc_compiler::schema::{compile, Options};
use serde_json::Value;

fn main() {
    let root = std::env::args().nth(1).map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/jsonschemabench"),
        PathBuf::from,
    );
    let mut files = Vec::new();
    for split in std::fs::read_dir(&root).expect("the corpus folder") {
        for file in std::fs::read_dir(split.unwrap().path()).unwrap() {
            files.push(file.unwrap().path());
        }
    }
    files.sort();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let Ok(wrapped) = serde_json::from_str::<Value>(&text) else {
            writeln!(out, "=== {} is not JSON", file.display()).unwrap();
            continue;
        };
        let schema = wrapped.get("schema").unwrap_or(&wrapped);
        for closed in [false, true] {
            writeln!(out, "=== {} closed={closed}", file.display()).unwrap();
            match compile(
                schema,
                &Options {
                    closed,
                    ..Options::default()
                },
            ) {
                Ok(compiled) => {
                    writeln!(out, "{}", compiled.grammar).unwrap();
                    for diagnostic in &compiled.diagnostics {
                        writeln!(out, "# {diagnostic:?}").unwrap();
                    }
                }
                Err(err) => writeln!(out, "ERR {err}").unwrap(),
            }
        }
    }
}
