//! Properties of the GBNF core over generated grammars:
//! printing round-trips, well-formed grammars pass `check`, and every sample a grammar
//! produces is accepted by the recognizer (at least 10,000 grammars).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use gbnfc_compiler::gbnf::arbitrary::{any_grammar, well_formed_grammar};
use gbnfc_compiler::gbnf::{check, is_clean, parse};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    #[test]
    fn printing_round_trips(grammar in any_grammar()) {
        let text = grammar.to_string();
        let reparsed = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&reparsed, &grammar, "printed as:\n{}", text);
        prop_assert_eq!(reparsed.to_string(), text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn samples_are_accepted(grammar in well_formed_grammar(), seed in any::<u64>()) {
        let diagnostics = check(&grammar);
        prop_assert!(is_clean(&diagnostics), "check refused a well-formed grammar: {:?}\n{}", diagnostics, grammar);
        let recognizer = Recognizer::new(&grammar).unwrap();
        let sampler = Sampler::new(&grammar).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..3 {
            let text = sampler.sample(&mut rng, SampleOptions { max_len: 64, ..SampleOptions::default() });
            let result = recognizer.recognize(&text);
            prop_assert!(result.accepted, "sample {:?} rejected at byte {} by\n{}", text, result.viable_prefix, grammar);
        }
    }
}
