//! gbnfc's recognizer and sampler against llama.cpp's grammar engine, on the same grammars,
//! in one process.
//!
//! - **Recognition**: does the grammar accept this text? gbnfc's `Recognizer::recognize`
//!   over the characters, against llama.cpp's grammar sampler (`LlamaSampler::grammar`)
//!   accepting the text's tokens one by one (`try_accept`), tokenised by the default
//!   model's vocabulary. Both grammars are built before the clock starts.
//! - **Sampling**: a random text the grammar accepts. gbnfc's `Sampler` (random
//!   derivations), against llama.cpp's grammar sampler choosing uniformly among the tokens
//!   it allows (the whole vocabulary, every logit equal) until end of generation.
//!
//! Each figure is the minimum of 5 runs; throughput is bytes of text per second. Prints a
//! Markdown table with the ratio gbnfc / llama.cpp (above 1: gbnfc is faster).
//!
//! Run: `cargo run --release -p gbnfc-benches --bin throughput_report` (the default model
//! must be present: `scripts/fetch-model`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use gbnfc_benches::JSON_GRAMMAR;
use gbnfc_compiler::gbnf;
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::schema::{compile, Options};
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const RUNS: usize = 5;

fn min_time(mut f: impl FnMut()) -> Duration {
    (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn per_second(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / time.as_secs_f64().max(1e-9)
}

/// A JSON document of about `target` bytes: an array of records with strings, numbers,
/// booleans, nulls and nested arrays.
fn large_json(target: usize) -> String {
    let mut text = String::from("[");
    let mut i = 0u64;
    while text.len() < target {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"id":{i},"name":"item number {i}","price":{}.{:02},"tags":["a","bc","def"],"active":{},"note":null}}"#,
            i * 7 % 1000,
            i % 100,
            i.is_multiple_of(2)
        ));
        i += 1;
    }
    text.push(']');
    text
}

fn load_model() -> LlamaModel {
    let backend = gbnfc_bridge::backend::backend().unwrap();
    let path = gbnfc_bridge::model_path::resolve(None).unwrap();
    let params = LlamaModelParams::default().with_vocab_only(true);
    LlamaModel::load_from_file(backend, path, &params).unwrap()
}

/// One recognition row: (bytes, gbnfc bytes/s, llama.cpp bytes/s).
fn recognition(model: &LlamaModel, grammar_text: &str, text: &str) -> (usize, f64, f64) {
    let grammar = gbnf::parse(grammar_text).unwrap();
    let recognizer = Recognizer::new(&grammar).unwrap();
    assert!(recognizer.recognize(text).accepted);
    let ours = min_time(|| {
        black_box(recognizer.recognize(black_box(text)));
    });
    let tokens = model.vocab().tokenize(text.as_bytes(), false, false);
    let printed = grammar.to_string();
    let theirs = (0..RUNS)
        .map(|_| {
            let mut sampler = LlamaSampler::grammar(model, &printed, "root").unwrap();
            let start = Instant::now();
            for &token in &tokens {
                sampler.try_accept(token).unwrap();
            }
            start.elapsed()
        })
        .min()
        .unwrap_or_default();
    (
        text.len(),
        per_second(text.len(), ours),
        per_second(text.len(), theirs),
    )
}

/// One sampling row: (texts, gbnfc bytes/s, llama.cpp bytes/s).
fn sampling(model: &LlamaModel, grammar_text: &str, texts: usize) -> (usize, f64, f64) {
    let grammar = gbnf::parse(grammar_text).unwrap();
    let sampler = Sampler::new(&grammar).unwrap();
    let options = SampleOptions {
        max_len: 256,
        ..SampleOptions::default()
    };
    let mut ours_bytes = 0;
    let ours = min_time(|| {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        ours_bytes = (0..texts)
            .map(|_| sampler.sample(&mut rng, options).len())
            .sum();
    });
    let printed = grammar.to_string();
    let vocab = model.vocab();
    let n_vocab = vocab.n_tokens();
    let mut theirs_bytes = 0;
    let theirs = min_time(|| {
        theirs_bytes = 0;
        for seed in 0..texts {
            let mut chain = LlamaSampler::chain_simple([
                LlamaSampler::grammar(model, &printed, "root").unwrap(),
                LlamaSampler::dist(seed as u32),
            ]);
            for _ in 0..256 {
                let mut candidates = LlamaTokenDataArray::from_iter(
                    (0..n_vocab)
                        .map(|t| LlamaTokenData::new(llama_cpp_2::token::LlamaToken(t), 0.0, 0.0)),
                    false,
                );
                candidates.apply_sampler(&mut chain);
                let Some(token) = candidates.selected_token() else {
                    break;
                };
                if vocab.is_eog(token) {
                    break;
                }
                chain.accept(token);
                theirs_bytes += vocab.token_to_piece(token, true, None).len();
            }
        }
    });
    (
        texts,
        per_second(ours_bytes, ours),
        per_second(theirs_bytes, theirs),
    )
}

fn main() {
    let model = load_model();
    let weather: serde_json::Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/examples/weather-card.schema.json"
    )))
    .unwrap();
    let weather_grammar = compile(&weather, &Options::default())
        .unwrap()
        .grammar
        .to_string();
    let weather_texts: String = {
        let sampler = Sampler::new(&gbnf::parse(&weather_grammar).unwrap()).unwrap();
        sampler.samples(3, 1, SampleOptions::default()).concat()
    };

    println!("| recognition: grammar / text | bytes | gbnfc MB/s | llama.cpp MB/s | ratio |");
    println!("|---|---|---|---|---|");
    for (name, grammar, text) in [
        (
            "grammars/json.gbnf / 64 KB JSON array",
            JSON_GRAMMAR.to_string(),
            large_json(64 << 10),
        ),
        (
            "grammars/json.gbnf / 512 KB JSON array",
            JSON_GRAMMAR.to_string(),
            large_json(512 << 10),
        ),
        (
            "weather-card schema / one sample",
            weather_grammar.clone(),
            weather_texts,
        ),
    ] {
        let (bytes, ours, theirs) = recognition(&model, &grammar, &text);
        println!(
            "| {name} | {bytes} | {:.2} | {:.2} | {:.2} |",
            ours / 1e6,
            theirs / 1e6,
            ours / theirs
        );
    }
    println!();
    println!("| sampling: grammar | texts | gbnfc KB/s | llama.cpp KB/s | ratio |");
    println!("|---|---|---|---|---|");
    for (name, grammar) in [
        ("grammars/json.gbnf", JSON_GRAMMAR.to_string()),
        ("weather-card schema", weather_grammar),
    ] {
        let (texts, ours, theirs) = sampling(&model, &grammar, 5);
        println!(
            "| {name} | {texts} | {:.1} | {:.1} | {:.1} |",
            ours / 1e3,
            theirs / 1e3,
            ours / theirs
        );
    }
}
