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
//! Beside tokens per second, the sampler's time per token (sampling and grammar, the
//! forward pass excluded; per token the model chose, close-out's written tokens left out),
//! unconstrained and with gbnfc's grammar on each grammar engine (gbnfc's own masks, the
//! default, and llama.cpp's grammar sampler): what the grammar costs where the model
//! does not.
//!
//! Run: `cargo run --release -p gbnfc-benches --bin decode_report [MODEL.gguf ...]` (by
//! default the default model, which must be present: `scripts/fetch-model`; the benches
//! also run Gemma 3 270M, `scripts/fetch-model gemma3`, for its 262k-token vocabulary).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use gbnfc_benches::quantile;
use gbnfc_bridge::chat::{conversation, render_prompt};
use gbnfc_bridge::generate::GrammarEngine;
use gbnfc_bridge::validate::Validator;
use gbnfc_bridge::{generate, Engine, EngineOptions, GenerateOptions};
use gbnfc_compiler::gbnf::{self, CheckedGrammar};
use gbnfc_compiler::schema::{compile, Options};
use serde_json::Value;
use std::path::PathBuf;

const SEEDS: u32 = 3;
const MAX_TOKENS: usize = 160;

/// What one configuration gave over [`SEEDS`] seeds.
struct Measured {
    /// Tokens per second, median.
    rate: f64,
    /// Sampler milliseconds per token the model chose, median.
    sampler_ms: f64,
    /// Outputs that validate.
    valid: u32,
}

fn measure(
    engine: &Engine,
    prompt: &str,
    grammar: Option<&CheckedGrammar>,
    grammar_engine: GrammarEngine,
    validator: &Validator,
) -> Measured {
    let mut rates = Vec::new();
    let mut sampler = Vec::new();
    let mut valid = 0;
    for seed in 1..=SEEDS {
        let options = GenerateOptions {
            seed,
            temperature: 1.0,
            top_p: 1.0,
            max_tokens: MAX_TOKENS,
            repeat_penalty: 1.0,
            close_out: true,
            grammar_engine,
            ..GenerateOptions::default()
        };
        let generation = generate(engine, prompt, grammar, &options).unwrap();
        let stats = &generation.stats;
        rates.push(stats.tokens_per_second());
        let chosen = stats
            .generated_tokens
            .saturating_sub(stats.closed_out_tokens)
            .max(1);
        sampler.push((stats.sampling_ms + stats.grammar_ms) / chosen as f64);
        if serde_json::from_str::<Value>(generation.text.trim())
            .is_ok_and(|v| validator.is_valid(&v))
        {
            valid += 1;
        }
    }
    Measured {
        rate: quantile(&rates, 0.5),
        sampler_ms: quantile(&sampler, 0.5),
        valid,
    }
}

fn main() {
    let models: Vec<Option<PathBuf>> = match std::env::args()
        .skip(1)
        .map(PathBuf::from)
        .collect::<Vec<_>>()
    {
        paths if paths.is_empty() => vec![None],
        paths => paths.into_iter().map(Some).collect(),
    };
    println!(
        "| model | schema | unconstrained tok/s | gbnfc tok/s | gbnfc / unconstrained | llama.cpp converter tok/s | gbnfc / converter | sampler ms/token: unconstrained / gbnfc / on llama.cpp's grammar engine (gbnfc ratio) | valid of {SEEDS}: none / gbnfc / converter |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for model in models {
        let engine = Engine::load(&EngineOptions {
            model,
            ..EngineOptions::default()
        })
        .unwrap();
        report(&engine);
    }
}

/// One row per example schema on `engine`'s model.
fn report(engine: &Engine) {
    let model = engine.name();
    // `GBNFC_EXAMPLES` names the folder where the binary runs apart from its checkout
    // (`scripts/gpu-bench pack`).
    let examples = std::env::var("GBNFC_EXAMPLES").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/examples").to_string()
    });
    let mut files: Vec<_> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.ends_with(".schema.json") || name.ends_with(".response-format.json")
        })
        .collect();
    files.sort();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let input: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let validator = Validator::new(&input).unwrap();
        let schema = gbnfc_bridge::validate::schema_of(&input).unwrap();
        let ours = compile(&input, &Options::default()).unwrap().grammar;
        let theirs = llama_cpp_2::json_schema_to_grammar(&schema.to_string())
            .ok()
            .and_then(|text| gbnf::parse(&text).ok())
            .and_then(|grammar| CheckedGrammar::new(grammar).ok());
        let prompt = render_prompt(
            engine,
            &conversation(
                Some(&format!(
                    "Answer with one JSON value that satisfies this JSON Schema:\n{schema}"
                )),
                "Give an example for a weather or support ticket app.",
            ),
        )
        .unwrap();
        let free = measure(engine, &prompt, None, GrammarEngine::Gbnfc, &validator);
        let ours_run = measure(
            engine,
            &prompt,
            Some(&ours),
            GrammarEngine::Gbnfc,
            &validator,
        );
        let on_llama = measure(
            engine,
            &prompt,
            Some(&ours),
            GrammarEngine::Llama,
            &validator,
        );
        let (theirs_cell, ratio_cell, theirs_valid) = match &theirs {
            Some(grammar) => {
                let theirs_run = measure(
                    engine,
                    &prompt,
                    Some(grammar),
                    GrammarEngine::Llama,
                    &validator,
                );
                (
                    format!("{:.1}", theirs_run.rate),
                    format!("{:.2}", ours_run.rate / theirs_run.rate),
                    theirs_run.valid.to_string(),
                )
            }
            None => ("(no grammar)".into(), "—".into(), "—".into()),
        };
        println!(
            "| {model} | {name} | {:.1} | {:.1} | {:.2} | {theirs_cell} | {ratio_cell} | {:.2} / {:.2} / {:.2} ({:.2}×) | {} / {} / {theirs_valid} |",
            free.rate,
            ours_run.rate,
            ours_run.rate / free.rate,
            free.sampler_ms,
            ours_run.sampler_ms,
            on_llama.sampler_ms,
            ours_run.sampler_ms / free.sampler_ms,
            free.valid,
            ours_run.valid,
        );
    }
}
