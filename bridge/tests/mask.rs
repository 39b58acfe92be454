//! gbnfc's mask engine (`gbnfc_bridge::mask`) gives llama.cpp's own answers: at every
//! token position of texts sampled from the shipped grammars, the example schemas, a
//! sample of JSONSchemaBench schemas and generated grammars, tokenized by the default
//! model, the tokens it allows are exactly those llama.cpp's grammar sampler allows over
//! the whole vocabulary (control tokens aside: generation never picks them).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gbnfc_bridge::generate::grammar_sampler;
use gbnfc_bridge::mask::{MaskGrammar, Masker};
use gbnfc_bridge::Engine;
use gbnfc_compiler::gbnf::arbitrary::well_formed_grammar;
use gbnfc_compiler::gbnf::{parse, CheckedGrammar};
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::schema::{compile, Options};
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use proptest::prelude::*;
use serde_json::Value;

/// Every how many JSONSchemaBench files one is taken.
const CORPUS_STRIDE: usize = 150;

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

fn corpus_grammars() -> Vec<(String, CheckedGrammar)> {
    let mut out = Vec::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../grammars");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let grammar = CheckedGrammar::new(parse(&text).unwrap()).unwrap();
        out.push((file.display().to_string(), grammar));
    }
    let mut schemas: Vec<PathBuf> = std::fs::read_dir(shared().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".schema.json"))
        .collect();
    let corpus = shared().join("corpora/jsonschemabench");
    let mut corpus_files = Vec::new();
    for split in std::fs::read_dir(corpus).unwrap() {
        for file in std::fs::read_dir(split.unwrap().path()).unwrap() {
            corpus_files.push(file.unwrap().path());
        }
    }
    corpus_files.sort();
    schemas.sort();
    for file in schemas
        .into_iter()
        .chain(corpus_files.into_iter().step_by(CORPUS_STRIDE))
    {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let schema = doc.get("schema").unwrap_or(&doc);
        if let Ok(compiled) = compile(schema, &Options::default()) {
            out.push((file.display().to_string(), compiled.grammar));
        }
    }
    out
}

/// Positions compared and time spent by each side.
#[derive(Default)]
struct Tally {
    positions: usize,
    llama: Duration,
    ours: Duration,
}

/// Compares the two engines at every token position of `texts` under `grammar`; `false`
/// when llama.cpp's sampler cannot take the grammar (too many stacks) or ours cannot.
fn compare(
    engine: &Engine,
    name: &str,
    grammar: &CheckedGrammar,
    texts: &[String],
    tally: &mut Tally,
) {
    let Ok((sampler, stacks)) = grammar_sampler(engine, grammar) else {
        return;
    };
    let Some(mask_grammar) = MaskGrammar::new(grammar, engine.mask_vocab()) else {
        panic!("{name}: the mask engine refused the grammar");
    };
    let n_vocab = engine.model().n_vocab();
    let control: Vec<bool> = (0..n_vocab)
        .map(|t| {
            let vocab = engine.model().vocab();
            vocab.is_control(LlamaToken(t)) && !vocab.is_eog(LlamaToken(t))
        })
        .collect();
    let everything: Vec<LlamaTokenData> = (0..n_vocab)
        .map(|id| LlamaTokenData::new(LlamaToken(id), 0.0, 0.0))
        .collect();
    for text in texts {
        let (mut sampler, mut stacks) = (sampler.clone(), stacks.clone());
        let mut masker = Masker::new(mask_grammar.clone());
        let mut pending: Vec<u8> = Vec::new();
        for token in engine.tokenize_text(text) {
            let mut full = LlamaTokenDataArray::new(everything.clone(), false);
            let started = Instant::now();
            full.apply_sampler(&mut sampler);
            tally.llama += started.elapsed();
            let llama: Vec<i32> = full
                .data
                .iter()
                .filter(|d| d.logit() > f32::NEG_INFINITY && !control[d.id().0 as usize])
                .map(|d| d.id().0)
                .collect();
            let started = Instant::now();
            let mask = masker.mask().unwrap();
            tally.ours += started.elapsed();
            let ours: Vec<i32> = (0..n_vocab)
                .filter(|&t| mask.is_allowed(t as u32))
                .collect();
            if llama != ours {
                let only = |a: &[i32], b: &[i32]| -> Vec<String> {
                    a.iter()
                        .filter(|t| !b.contains(t))
                        .take(8)
                        .map(|&t| {
                            format!(
                                "{t}:{:?}",
                                String::from_utf8_lossy(&engine.piece(LlamaToken(t)))
                            )
                        })
                        .collect()
                };
                panic!(
                    "{name}: text {text:?}, after {:?}: llama.cpp only {:?}, gbnfc only {:?}",
                    String::from_utf8_lossy(&pending),
                    only(&llama, &ours),
                    only(&ours, &llama),
                );
            }
            tally.positions += 1;
            if !llama.contains(&token.0) {
                // The tokenizer does not give every text back byte for byte (a character
                // no token spells is dropped): the text ends here.
                break;
            }
            pending.extend_from_slice(&engine.piece(token));
            let valid = match std::str::from_utf8(&pending) {
                Ok(_) => pending.len(),
                Err(e) => e.valid_up_to(),
            };
            let rest = pending.split_off(valid);
            let chars = String::from_utf8(std::mem::replace(&mut pending, rest)).unwrap();
            if !matches!(stacks.accept(token.0 as u32, &chars), Ok(true))
                || sampler.try_accept(token).is_err()
            {
                break;
            }
            assert!(masker.accept(token.0 as u32), "{name}: {text:?}");
        }
    }
}

#[test]
fn masks_equal_llama_cpp_on_corpus_grammars() {
    let engine = common::engine();
    let mut tally = Tally::default();
    for (name, grammar) in corpus_grammars() {
        let texts = Sampler::new(&grammar)
            .unwrap()
            .samples(7, 2, SampleOptions::default());
        compare(engine, &name, &grammar, &texts, &mut tally);
    }
    assert!(tally.positions > 1000, "only {} positions", tally.positions);
    eprintln!(
        "{} positions: llama.cpp {:.3} ms, gbnfc {:.3} ms per mask on average",
        tally.positions,
        tally.llama.as_secs_f64() * 1000.0 / tally.positions as f64,
        tally.ours.as_secs_f64() * 1000.0 / tally.positions as f64
    );
}

proptest! {
    // The cases are drawn from a fixed seed. On some random grammars llama.cpp's own masking
    // (`llama_grammar_reject_candidates`, recursing once per character of every token over
    // stacks it does not deduplicate) runs for tens of minutes: a CI run was killed at 90
    // minutes inside it (stop 33), and one on 2026-12-04 was still in it after 20 minutes
    // (gdb backtrace in the issue 25 note). The oracle hangs, not gbnfc; until the test
    // bounds llama.cpp's work per position, a fixed seed keeps CI finite. Shrinking stops
    // after a minute: each case masks the whole vocabulary on both engines.
    #![proptest_config(ProptestConfig {
        cases: 48,
        max_shrink_time: 60_000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(1),
        ..ProptestConfig::default()
    })]

    #[test]
    fn masks_equal_llama_cpp_on_generated_grammars(grammar in well_formed_grammar(), seed in 0u64..1000) {
        let grammar = CheckedGrammar::new(grammar).map_err(|r| TestCaseError::fail(r.to_string()))?;
        let Ok(sampler) = Sampler::new(&grammar) else { return Ok(()) };
        let texts = sampler.samples(seed, 2, SampleOptions { max_len: 48, ..SampleOptions::default() });
        let mut tally = Tally::default();
        compare(common::engine(), &grammar.to_string(), &grammar, &texts, &mut tally);
    }
}
