//! The full-vocabulary token mask, in the MaskBench manner: for JSONSchemaBench schemas
//! and their valid test instances, the time to compute which tokens the grammar allows at
//! every token position of the instance's canonical text, on each model's vocabulary.
//!
//! The grammar is gbnfc's for the schema. Two engines mask at the same positions: gbnfc's
//! own ([`gbnfc_bridge::mask`], one prepared grammar per schema shared by its instances,
//! as the server shares it between requests, so masks found before are reused), and
//! llama.cpp's grammar sampler applied to every token of the vocabulary (all logits equal,
//! the array built before the clock starts). Each engine masks an instance's positions in
//! one pass, accepting the instance's own token after each mask, and the two must agree
//! on whether that token is allowed. The schemas are taken in a fixed shuffled order across all splits
//! until the positions reach the budget, so both vocabularies see the same schemas.
//! Prints one Markdown row per model and engine: mean, median, p99 and worst mask time,
//! and for gbnfc the time to prepare a grammar for masking.
//!
//! Run: `cargo run --release -p gbnfc-benches --bin mask_report [POSITIONS] [MODEL.gguf ...]`
//! (default 2000 positions; by default the default model: `scripts/fetch-model`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use gbnfc_benches::jsonschemabench::{split_names, CORPUS_DIR};
use gbnfc_benches::quantile;
use gbnfc_bridge::generate::grammar_sampler;
use gbnfc_bridge::mask::{MaskGrammar, Masker};
use gbnfc_bridge::{Engine, EngineOptions};
use gbnfc_compiler::schema::document::Document;
use gbnfc_compiler::schema::{canon, compile, Options};
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

/// Token positions measured per model unless told otherwise.
const DEFAULT_POSITIONS: usize = 2000;

/// What one model's run found.
#[derive(Default)]
struct Tally {
    /// llama.cpp's mask times, microseconds.
    masks: Vec<f64>,
    /// gbnfc's mask times at the same positions, microseconds.
    ours: Vec<f64>,
    /// Time to prepare each grammar for gbnfc's masks, microseconds.
    prepare: Vec<f64>,
    schemas: usize,
    /// Schemas gbnfc does not compile, or whose grammar the bridge refuses.
    skipped: usize,
    /// Instances whose tokens left the grammar (a tokenization the grammar does not
    /// follow token by token); their positions up to there count.
    cut: usize,
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    let positions = match args.peek().and_then(|a| a.parse::<usize>().ok()) {
        Some(n) => {
            args.next();
            n
        }
        None => DEFAULT_POSITIONS,
    };
    let models: Vec<Option<PathBuf>> = match args.map(PathBuf::from).collect::<Vec<_>>() {
        paths if paths.is_empty() => vec![None],
        paths => paths.into_iter().map(Some).collect(),
    };
    let files = shuffled_corpus();
    println!("| model (vocabulary) | engine | schemas | token positions | mask µs: mean / median / p99 / worst | grammar preparation µs: mean / worst |");
    println!("|---|---|---|---|---|---|");
    for model in models {
        let engine = Engine::load(&EngineOptions {
            model,
            ctx: 512,
            ..EngineOptions::default()
        })
        .unwrap();
        let tally = measure(&engine, &files, positions);
        let row = |name: &str, times: &[f64], prepare: &[f64]| {
            let mut times = times.to_vec();
            times.sort_by(f64::total_cmp);
            let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
            let prepared = if prepare.is_empty() {
                "—".to_string()
            } else {
                format!(
                    "{:.0} / {:.0}",
                    prepare.iter().sum::<f64>() / prepare.len() as f64,
                    prepare.iter().copied().fold(0.0, f64::max)
                )
            };
            println!(
                "| {} ({}) | {name} | {} | {} | {mean:.1} / {:.1} / {:.1} / {:.0} | {prepared} |",
                engine.name(),
                engine.model().n_vocab(),
                tally.schemas,
                times.len(),
                quantile(&times, 0.5),
                quantile(&times, 0.99),
                times.last().copied().unwrap_or(0.0),
            );
        };
        row("gbnfc", &tally.ours, &tally.prepare);
        row("llama.cpp", &tally.masks, &[]);
        eprintln!(
            "mask_report: {}: {} schemas skipped (no grammar), {} instances cut short",
            engine.name(),
            tally.skipped,
            tally.cut
        );
    }
}

/// Every corpus file, in one fixed shuffled order.
fn shuffled_corpus() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for split in split_names().unwrap() {
        for entry in std::fs::read_dir(Path::new(CORPUS_DIR).join(split)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
    }
    files.sort();
    files.shuffle(&mut ChaCha8Rng::seed_from_u64(0));
    files
}

/// Masks at every position of the files' valid instances until `positions` are timed.
fn measure(engine: &Engine, files: &[PathBuf], positions: usize) -> Tally {
    let everything: Vec<LlamaTokenData> = (0..engine.model().n_vocab())
        .map(|id| LlamaTokenData::new(LlamaToken(id), 0.0, 0.0))
        .collect();
    let mut tally = Tally::default();
    // The vocabulary's trie is built once per model, on first use: not a grammar's cost.
    let started = Instant::now();
    engine.mask_vocab();
    eprintln!(
        "mask_report: {}: token trie built in {:.0} ms",
        engine.name(),
        started.elapsed().as_secs_f64() * 1e3
    );
    for file in files {
        if tally.masks.len() >= positions {
            break;
        }
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let schema = &doc["schema"];
        let options = Options::default();
        let Ok(compiled) = compile(schema, &options) else {
            tally.skipped += 1;
            continue;
        };
        let Ok((sampler, stacks)) = grammar_sampler(engine, &compiled.grammar) else {
            tally.skipped += 1;
            continue;
        };
        let Ok(document) = Document::from_input(schema, options.remote) else {
            tally.skipped += 1;
            continue;
        };
        let started = Instant::now();
        let mask_grammar = MaskGrammar::new(&compiled.grammar, engine.mask_vocab()).unwrap();
        tally.prepare.push(started.elapsed().as_secs_f64() * 1e6);
        tally.schemas += 1;
        let instances = doc["tests"].as_array().map_or(&[][..], Vec::as_slice);
        for instance in instances.iter().filter(|t| t["valid"] == true) {
            let text = canon::canonical_text(&instance["data"], &document);
            let tokens = engine.tokenize_text(&text);
            // gbnfc's pass over the instance, then llama.cpp's over the same positions:
            // each engine's masks one after another, as a sampler computes them, rather
            // than interleaved with the other engine's work on the same caches.
            let mut masker = Masker::new(mask_grammar.clone());
            let mut ours = Vec::with_capacity(tokens.len());
            for token in &tokens {
                let started = Instant::now();
                let mask = masker.mask().unwrap();
                tally.ours.push(started.elapsed().as_secs_f64() * 1e6);
                let allowed = mask.is_allowed(token.0 as u32);
                ours.push(allowed);
                if !allowed || !masker.accept(token.0 as u32) {
                    break;
                }
            }
            let (mut sampler, mut stacks) = (sampler.clone(), stacks.clone());
            let mut pending = Vec::new();
            for (token, ours) in tokens.iter().zip(&ours) {
                let mut array = LlamaTokenDataArray::new(everything.clone(), false);
                let started = Instant::now();
                array.apply_sampler(&mut sampler);
                tally.masks.push(started.elapsed().as_secs_f64() * 1e6);
                let allowed = array
                    .data
                    .iter()
                    .any(|d| d.id() == *token && d.logit() > f32::NEG_INFINITY);
                assert_eq!(allowed, *ours, "{}", file.display());
                pending.extend_from_slice(&engine.piece(*token));
                let chars = take_whole_chars(&mut pending);
                if !allowed
                    || !matches!(stacks.accept(token.0 as u32, &chars), Ok(true))
                    || sampler.try_accept(*token).is_err()
                {
                    tally.cut += 1;
                    break;
                }
            }
            assert_eq!(tally.ours.len(), tally.masks.len(), "{}", file.display());
        }
    }
    tally
}

/// Takes the whole UTF-8 characters from the front of `bytes`, leaving the start of an
/// unfinished one.
fn take_whole_chars(bytes: &mut Vec<u8>) -> String {
    let valid = match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(e) => e.valid_up_to(),
    };
    let rest = bytes.split_off(valid);
    let text = String::from_utf8_lossy(bytes).into_owned();
    *bytes = rest;
    text
}
