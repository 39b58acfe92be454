//! Close-out's promise, checked without a model: for every prefix of every text a grammar
//! accepts, the completion `Closer` proposes makes a text the grammar accepts (checked by
//! the compiler's independent Earley recognizer), it is empty exactly when the prefix is
//! already complete, and it is no longer than the shortest text of the grammar.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use gbnfc_bridge::closeout::Closer;
use gbnfc_compiler::gbnf::arbitrary::well_formed_grammar;
use gbnfc_compiler::gbnf::{parse, Grammar};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::schema::{compile, Options};
use proptest::prelude::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn shared() -> PathBuf {
    repo().join("..").join("shared")
}

/// Checks every prefix of `text` (accepted by `grammar`); returns a failure message.
fn check_prefixes(grammar: &Grammar, text: &str) -> Result<(), String> {
    let recognizer = Recognizer::new(grammar).unwrap();
    let mut closer = Closer::new(grammar).ok_or("no closer")?;
    let shortest = closer.completion(usize::MAX).ok_or("no shortest text")?;
    if !recognizer.recognize(&shortest).accepted {
        return Err(format!("shortest text {shortest:?} is rejected"));
    }
    let mut prefix = String::new();
    for c in text.chars() {
        if !closer.push(c) {
            return Err(format!("closer refuses {c:?} after {prefix:?}"));
        }
        prefix.push(c);
        let completion = closer
            .completion(usize::MAX)
            .ok_or_else(|| format!("no completion after {prefix:?}"))?;
        let whole = format!("{prefix}{completion}");
        if !recognizer.recognize(&whole).accepted {
            return Err(format!("{prefix:?} + {completion:?} is rejected"));
        }
        let complete = recognizer.recognize(&prefix).accepted;
        if complete != closer.is_complete() || complete != completion.is_empty() {
            return Err(format!(
                "after {prefix:?}: complete {complete}, closer says {}, completion {completion:?}",
                closer.is_complete()
            ));
        }
    }
    // Rolling back gives the same answers as never having gone on.
    let half = closer.len() / 2;
    closer.truncate(half);
    let again: String = text.chars().take(half).collect();
    let mut fresh = Closer::new(grammar).unwrap();
    assert!(fresh.push_str(&again));
    if closer.completion(usize::MAX) != fresh.completion(usize::MAX) {
        return Err(format!("truncating to {half} chars changes the completion"));
    }
    Ok(())
}

fn check_grammar(grammar: &Grammar, name: &str, samples: usize) {
    let sampler = Sampler::new(grammar).unwrap();
    let options = SampleOptions {
        max_len: 200,
        ..SampleOptions::default()
    };
    for (i, text) in sampler.samples(7, samples, options).iter().enumerate() {
        if let Err(message) = check_prefixes(grammar, text) {
            panic!("{name}, sample {i} {text:?}: {message}");
        }
    }
}

#[test]
fn every_shipped_grammar_closes_from_every_prefix() {
    let mut count = 0;
    for entry in std::fs::read_dir(repo().join("grammars")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "gbnf") {
            let grammar = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
            check_grammar(&grammar, &path.display().to_string(), 20);
            count += 1;
        }
    }
    assert!(count >= 5, "only {count} grammars in grammars/");
}

#[test]
fn compiled_example_schemas_close_from_every_prefix() {
    for name in [
        "weather-card.schema.json",
        "weather-card.response-format.json",
        "ticket-classification.schema.json",
        "query-order.schema.json",
    ] {
        let path = shared().join("examples").join(name);
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let compiled = compile(&schema, &Options::default()).unwrap();
        check_grammar(&compiled.grammar, name, 10);
    }
}

#[test]
fn completions_are_the_shortest_and_rejections_change_nothing() {
    let grammar =
        parse("root ::= \"{\\\"a\\\":\" (\"true\" | \"[\" [0-9]+ \"]\") \"}\"\n").unwrap();
    let mut closer = Closer::new(&grammar).unwrap();
    // `[0]` is one character shorter than `true`.
    assert_eq!(closer.completion(100).as_deref(), Some("{\"a\":[0]}"));
    assert!(closer.push_str("{\"a\":["));
    assert_eq!(closer.completion(100).as_deref(), Some("0]}"));
    assert_eq!(
        closer.completion(2),
        None,
        "a completion over the cap is refused"
    );
    assert!(!closer.push('x'));
    assert!(closer.push('7'));
    assert_eq!(closer.completion(100).as_deref(), Some("]}"));
    assert!(closer.can_continue());
    assert!(closer.push_str("]}"));
    assert!(closer.is_complete());
    assert!(!closer.can_continue());
    assert_eq!(closer.completion(0).as_deref(), Some(""));
}

#[test]
fn grammars_with_token_references_are_not_followed() {
    let grammar = parse("root ::= <[2]> \"a\"\n").unwrap();
    assert!(Closer::new(&grammar).is_none());
}

proptest! {
    // Shrinking stops after a minute, so a failure is reported in bounded time.
    #![proptest_config(ProptestConfig { cases: 300, max_shrink_time: 60_000, ..ProptestConfig::default() })]

    #[test]
    fn generated_grammars_close_from_every_prefix(grammar in well_formed_grammar(), seed in 0u64..1000) {
        let sampler = Sampler::new(&grammar).unwrap();
        let options = SampleOptions { max_len: 60, ..SampleOptions::default() };
        for text in sampler.samples(seed, 3, options) {
            if let Err(message) = check_prefixes(&grammar, &text) {
                prop_assert!(false, "{}\n{:?}: {}", grammar, text, message);
            }
        }
    }
}
