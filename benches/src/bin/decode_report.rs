//! The cost of the grammar during generation, on the default model: tokens per second
//! without a grammar, with gbnfc's grammar, and with the grammar llama.cpp's own converter
//! (`json_schema_to_grammar`) makes from the same schema — same prompt, same seeds, same
//! token budget, interleaved in one process.
//!
//! Each schema in `../shared/examples` that is a plain schema or a `response_format`
//! gets one row; each configuration runs with seeds 1..=3 at temperature 1.0 and the
//! median of their tokens/s counts (tokens generated / milliseconds from the first sampled
//! token to the end, prompt evaluation excluded). Generation runs as the product runs it:
//! with a grammar, close-out writes the shortest completion when the budget nears, so
//! outputs end complete. Also reported: how many of the three outputs parse as JSON that
//! validates against the schema.
//!
//! Run: `cargo run --release -p gbnfc-benches --bin decode_report` (the default model must
//! be present: `scripts/fetch-model`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use gbnfc_bridge::chat::{conversation, render_prompt};
use gbnfc_bridge::validate::Validator;
use gbnfc_bridge::{generate, Engine, EngineOptions, GenerateOptions};
use gbnfc_compiler::gbnf::{self, Grammar};
use gbnfc_compiler::schema::{compile, Options};
use serde_json::Value;

const SEEDS: u32 = 3;
const MAX_TOKENS: usize = 160;

/// (tokens/s median, outputs valid).
fn measure(
    engine: &Engine,
    prompt: &str,
    grammar: Option<&Grammar>,
    validator: &Validator,
) -> (f64, u32) {
    let mut rates = Vec::new();
    let mut valid = 0;
    for seed in 1..=SEEDS {
        let options = GenerateOptions {
            seed,
            temperature: 1.0,
            top_p: 1.0,
            max_tokens: MAX_TOKENS,
            repeat_penalty: 1.0,
            close_out: true,
        };
        let generation = generate(engine, prompt, grammar, &options).unwrap();
        rates.push(generation.stats.tokens_per_second());
        if serde_json::from_str::<Value>(generation.text.trim())
            .is_ok_and(|v| validator.is_valid(&v))
        {
            valid += 1;
        }
    }
    rates.sort_by(f64::total_cmp);
    (rates[rates.len() / 2], valid)
}

fn main() {
    let engine = Engine::load(&EngineOptions::default()).unwrap();
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/examples");
    let mut files: Vec<_> = std::fs::read_dir(examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.ends_with(".schema.json") || name.ends_with(".response-format.json")
        })
        .collect();
    files.sort();
    println!(
        "| schema | unconstrained tok/s | gbnfc tok/s | gbnfc / unconstrained | llama.cpp converter tok/s | gbnfc / converter | valid of {SEEDS}: none / gbnfc / converter |"
    );
    println!("|---|---|---|---|---|---|---|");
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let input: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let validator = Validator::new(&input).unwrap();
        let schema = gbnfc_bridge::validate::schema_of(&input).unwrap();
        let ours = compile(&input, &Options::default()).unwrap().grammar;
        let theirs = llama_cpp_2::json_schema_to_grammar(&schema.to_string())
            .ok()
            .and_then(|text| gbnf::parse(&text).ok());
        let prompt = render_prompt(
            &engine,
            &conversation(
                Some(&format!(
                    "Answer with one JSON value that satisfies this JSON Schema:\n{schema}"
                )),
                "Give an example for a weather or support ticket app.",
            ),
        )
        .unwrap();
        let (free, free_valid) = measure(&engine, &prompt, None, &validator);
        let (ours_rate, ours_valid) = measure(&engine, &prompt, Some(&ours), &validator);
        let (theirs_cell, ratio_cell, theirs_valid) = match &theirs {
            Some(grammar) if gbnf::is_clean(&gbnf::check(grammar)) => {
                let (rate, valid) = measure(&engine, &prompt, Some(grammar), &validator);
                (
                    format!("{rate:.1}"),
                    format!("{:.2}", ours_rate / rate),
                    valid.to_string(),
                )
            }
            _ => ("(no grammar)".into(), "—".into(), "—".into()),
        };
        println!(
            "| {name} | {free:.1} | {ours_rate:.1} | {:.2} | {theirs_cell} | {ratio_cell} | {free_valid} / {ours_valid} / {theirs_valid} |",
            ours_rate / free
        );
    }
}
