//! Compares two outputs of the `corpus_dump` example where their grammars differ in text:
//! do they accept the same language? For each compilation whose grammar changed, texts
//! sampled from each grammar must be accepted by the other.
//!
//! ```text
//! cargo run --release -p gbnfc-compiler --example corpus_dump > before.txt
//! # … change the compiler …
//! cargo run --release -p gbnfc-compiler --example corpus_dump > after.txt
//! cargo run --release -p gbnfc-compiler --example corpus_compare before.txt after.txt
//! ```
//!
//! Sampling shows a difference, it does not prove equality: each compilation that differs
//! is listed, with the first text one grammar accepts and the other refuses.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use gbnfc_compiler::gbnf::parse;
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};

/// Texts sampled from each grammar.
const SAMPLES: usize = 200;

/// Each compilation's header line → its grammar text and its diagnostic lines.
fn compilations(path: &str) -> BTreeMap<String, (String, Vec<String>)> {
    let text = std::fs::read_to_string(path).expect("a corpus_dump output");
    let mut out = BTreeMap::new();
    let mut current: Option<(String, String, Vec<String>)> = None;
    for line in text.lines() {
        if let Some(header) = line.strip_prefix("=== ") {
            if let Some((h, g, d)) = current.take() {
                out.insert(h, (g, d));
            }
            current = Some((header.to_string(), String::new(), Vec::new()));
        } else if let Some((_, grammar, diagnostics)) = current.as_mut() {
            if line.starts_with("# ") {
                diagnostics.push(line.to_string());
            } else {
                grammar.push_str(line);
                grammar.push('\n');
            }
        }
    }
    if let Some((h, g, d)) = current {
        out.insert(h, (g, d));
    }
    out
}

/// The first text sampled from `from` that `by` refuses, if any.
fn refused(from: &str, by: &str) -> Result<Option<String>, String> {
    let (from, by) = (
        parse(from).map_err(|e| e.to_string())?,
        parse(by).map_err(|e| e.to_string())?,
    );
    let sampler = Sampler::new(&from).map_err(|e| format!("{e:?}"))?;
    let recognizer = Recognizer::new(&by).map_err(|e| format!("{e:?}"))?;
    let texts = sampler.samples(1, SAMPLES, SampleOptions::default());
    Ok(texts
        .into_iter()
        .find(|text| !recognizer.recognize(text).accepted))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [before, after] = &args[..] else {
        eprintln!("usage: corpus_compare BEFORE AFTER");
        std::process::exit(2);
    };
    let (before, after) = (compilations(before), compilations(after));
    let (mut same, mut text_only, mut diagnostics, mut different) = (0, 0, 0, 0);
    for (header, (grammar, notes)) in &before {
        let Some((new_grammar, new_notes)) = after.get(header) else {
            println!("only before: {header}");
            continue;
        };
        if notes != new_notes {
            diagnostics += 1;
        }
        if grammar == new_grammar {
            same += 1;
            continue;
        }
        if grammar.starts_with("ERR") || new_grammar.starts_with("ERR") {
            different += 1;
            println!("{header}\n  before: {}  after: {}", grammar, new_grammar);
            continue;
        }
        let lost = refused(grammar, new_grammar);
        let gained = refused(new_grammar, grammar);
        match (lost, gained) {
            (Ok(None), Ok(None)) => text_only += 1,
            (lost, gained) => {
                different += 1;
                println!("{header}\n  refused now: {lost:?}\n  accepted now: {gained:?}");
            }
        }
    }
    println!(
        "{} compilations: {same} grammars unchanged, {text_only} changed in text only \
         (no sampled text told them apart), {different} changed in language; \
         {diagnostics} with other diagnostics",
        before.len()
    );
}
