//! llama.cpp's parse stacks, as `LlamaStacks` follows them, agree with the recognizer on
//! generated grammars: along a sampled text some stack survives every character and one
//! is empty (complete) at the end; on a text with a character changed, the stacks die
//! exactly where the recognizer's longest viable prefix ends.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use gbnfc_compiler::gbnf::arbitrary::well_formed_grammar;
use gbnfc_compiler::gbnf::llama_stacks::{Limits, LlamaStacks};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Generous limits: only grammars whose stacks truly explode on a text are skipped.
const LIMITS: Limits = Limits {
    stacks: 20_000,
    work: 50_000_000,
};

/// How far the stacks get through `text`, one character per token: the bytes consumed
/// while some stack survived, and whether one is complete at the end. `None`: the limits
/// were passed.
fn follow(stacks: &mut LlamaStacks, text: &str) -> Option<(usize, bool)> {
    let mut consumed = 0;
    for c in text.chars() {
        if !stacks.accept(0, c.encode_utf8(&mut [0; 4])).ok()? {
            return Some((consumed, false));
        }
        consumed += c.len_utf8();
    }
    Some((consumed, stacks.is_complete()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn llama_stacks_agree_with_the_recognizer(grammar in well_formed_grammar(), seed in any::<u64>()) {
        let recognizer = Recognizer::new(&grammar).unwrap();
        let sampler = Sampler::new(&grammar).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..3 {
            let sample = sampler.sample(&mut rng, SampleOptions { max_len: 32, ..SampleOptions::default() });
            let mut changed: Vec<char> = sample.chars().collect();
            if !changed.is_empty() {
                let at = rng.random_range(0..changed.len());
                changed[at] = rng.random_range('!'..='~');
            }
            let changed: String = changed.into_iter().collect();
            for text in [sample, changed] {
                let Ok(mut stacks) = LlamaStacks::new(&grammar, |_| None, LIMITS) else {
                    continue;
                };
                let Some((consumed, complete)) = follow(&mut stacks, &text) else {
                    continue;
                };
                let result = recognizer.recognize(&text);
                prop_assert_eq!(consumed, result.viable_prefix.min(text.len()), "{:?} in\n{}", text, grammar);
                prop_assert_eq!(complete, result.accepted, "{:?} in\n{}", text, grammar);
            }
        }
    }
}
