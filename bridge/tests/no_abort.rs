//! No input aborts the process. The engine (default model, CPU) is driven with every
//! grammar the project has — the shipped ones, the compiler's valid and invalid test
//! grammars (the fuzzer's seed directories, and its working corpus when one is on disk) —
//! with adversarial grammars, and with generated ones. Each run ends with a result or an
//! error value; llama.cpp's `GGML_ASSERT`s and aborts are never reached (they would kill
//! this test process).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use gbnfc_bridge::chat;
use gbnfc_bridge::engine::{Engine, EngineOptions};
use gbnfc_bridge::generate::GrammarEngine;
use gbnfc_bridge::{generate, BridgeError, Finish, GenerateOptions, Generation};
use gbnfc_compiler::gbnf::arbitrary::{any_grammar, well_formed_grammar};
use gbnfc_compiler::gbnf::{check, is_clean, parse, CheckedGrammar, Expr, Grammar, Pos, Rule};
use gbnfc_compiler::recognize::Recognizer;
use proptest::prelude::*;

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        Engine::load(&EngineOptions {
            threads: Some(2),
            ctx: 512,
            ..EngineOptions::default()
        })
        .unwrap_or_else(|e| {
            panic!("{e} (the tests need the default model: run scripts/fetch-model)")
        })
    })
}

fn prompt() -> &'static str {
    static PROMPT: OnceLock<String> = OnceLock::new();
    PROMPT.get_or_init(|| {
        chat::render_prompt(
            engine(),
            &chat::conversation(None, "Answer in the required form."),
        )
        .unwrap()
    })
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A short run: a few tokens at temperature 1, on the default grammar engine.
fn run(grammar: &Grammar, seed: u32) -> Result<Generation, BridgeError> {
    run_on(grammar, seed, GrammarEngine::default())
}

/// A short run on the given grammar engine, of the grammar as the bridge takes it: checked
/// first (a refusal is [`BridgeError::GrammarCheck`]).
fn run_on(
    grammar: &Grammar,
    seed: u32,
    grammar_engine: GrammarEngine,
) -> Result<Generation, BridgeError> {
    let options = GenerateOptions {
        seed,
        temperature: 1.0,
        max_tokens: 6,
        grammar_engine,
        ..GenerateOptions::default()
    };
    let checked = CheckedGrammar::new(grammar.clone())?;
    generate(engine(), prompt(), Some(&checked), &options)
}

/// A grammar that passes `check` runs: a complete text the grammar accepts, a truncated
/// one (only when close-out cannot follow the grammar), or a budget error.
fn expect_runs(grammar: &Grammar, what: &str) {
    match run(grammar, 1) {
        Ok(g) if g.finish == Finish::Stop => {
            let text_ok = grammar_has_tokens(grammar)
                || Recognizer::new(grammar)
                    .unwrap()
                    .recognize(&g.text)
                    .accepted;
            assert!(text_ok, "{what}: the grammar does not accept {:?}", g.text);
        }
        Ok(g) => assert!(
            !g.stats.close_out || mentions_nul(grammar),
            "{what}: truncated despite close-out: {g:?}"
        ),
        Err(
            BridgeError::BudgetTooSmall { .. }
            | BridgeError::DeadEnd { .. }
            | BridgeError::GrammarTooAmbiguous { .. },
        ) => {}
        Err(e) => panic!("{what}: {e}"),
    }
}

/// A literal with U+0000 in it, or a class of that character alone. llama.cpp reads a
/// token's text as a C string, so no token ever yields that character: where a grammar
/// needs it to finish, close-out cannot finish either, and the run ends truncated.
fn mentions_nul(grammar: &Grammar) -> bool {
    grammar_has(grammar, |e| match e {
        Expr::Literal(text) => text.contains('\0'),
        Expr::Class {
            negated: false,
            ranges,
        } => ranges.iter().all(|r| r.lo == '\0' && r.hi == '\0'),
        _ => false,
    })
}

fn grammar_has_tokens(grammar: &Grammar) -> bool {
    grammar_has(grammar, |e| matches!(e, Expr::Token { .. }))
}

/// Does some expression of some rule satisfy `test`?
fn grammar_has(grammar: &Grammar, test: impl Fn(&Expr) -> bool) -> bool {
    let mut found = false;
    for rule in &grammar.rules {
        rule.body.walk(|e| found |= test(e));
    }
    found
}

fn gbnf_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn shipped_and_valid_test_grammars_run() {
    let mut count = 0;
    for dir in ["grammars", "compiler/tests/data/valid"] {
        for path in gbnf_files(&repo().join(dir)) {
            let grammar = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
            expect_runs(&grammar, &path.display().to_string());
            count += 1;
        }
    }
    assert!(count >= 15, "only {count} grammars");
}

#[test]
fn invalid_test_grammars_are_refused_before_llama_cpp() {
    let mut refused = 0;
    for path in gbnf_files(&repo().join("compiler/tests/data/invalid")) {
        let Ok(grammar) = parse(&std::fs::read_to_string(&path).unwrap()) else {
            continue; // a parse error: nothing reaches the engine
        };
        match run(&grammar, 1) {
            Err(BridgeError::GrammarCheck(_)) => refused += 1,
            other => panic!("{}: expected a check error, got {other:?}", path.display()),
        }
    }
    assert!(
        refused >= 10,
        "only {refused} invalid grammars reached the engine"
    );
}

/// The fuzzer's inputs: its seed directories (`grammars/`, the compiler's valid test
/// grammars) plus the invalid ones, and its git-ignored working corpus when one is on
/// disk. Whatever the text: a parse error, a check error, or a run.
#[test]
fn fuzz_seeds_and_corpus_never_abort() {
    let mut files = Vec::new();
    for dir in [
        "grammars",
        "compiler/tests/data/valid",
        "compiler/tests/data/invalid",
    ] {
        files.extend(gbnf_files(&repo().join(dir)));
    }
    let corpus = repo().join("fuzz/corpus/gbnf_text");
    if corpus.is_dir() {
        files.extend(gbnf_files(&corpus).into_iter().take(300));
    }
    let mut ran = 0;
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(grammar) = parse(&text) else { continue };
        if is_clean(&check(&grammar)) {
            expect_runs(&grammar, &path.display().to_string());
            ran += 1;
        } else {
            assert!(
                matches!(run(&grammar, 2), Err(BridgeError::GrammarCheck(_))),
                "{}",
                path.display()
            );
        }
    }
    assert!(ran >= 15, "only {ran} grammars ran");
}

fn deep_group(depth: usize) -> Grammar {
    let mut expr = Expr::literal("a");
    for _ in 0..depth {
        expr = Expr::Group(Box::new(expr));
    }
    Grammar {
        rules: vec![Rule {
            name: "root".into(),
            body: expr,
            pos: Pos::default(),
        }],
    }
}

#[test]
fn adversarial_grammars_are_errors_not_aborts() {
    let refused_by_check = [
        ("huge repetition", "root ::= \"a\"{3000}\n"),
        (
            "repetition product",
            "root ::= ((\"a\"{1000}){1000}){1000}\n",
        ),
        ("empty language", "root ::= a\na ::= \"x\" a\n"),
        ("left recursion", "root ::= root \"a\" | \"b\"\n"),
        (
            "indirect left recursion",
            "root ::= a \"x\"\na ::= b? root\nb ::= \"y\"\n",
        ),
        ("undefined rule", "root ::= missing\n"),
        ("no root", "start ::= \"x\"\n"),
        ("underscore name", "root ::= my_rule\nmy_rule ::= \"x\"\n"),
        ("nullable star", "root ::= (\"a\"?)*\n"),
    ];
    for (what, text) in refused_by_check {
        let grammar = parse(text).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        match run(&grammar, 0) {
            Err(BridgeError::GrammarCheck(_)) => {}
            other => panic!("{what}: expected a check error, got {other:?}"),
        }
    }
    // A tree deeper than any parser builds (hand-made) is refused before any recursion
    // (5,000 levels: deeper trees would overflow this test's own recursive drop).
    assert!(CheckedGrammar::new(deep_group(5_000))
        .unwrap_err()
        .has("too-deep"));
    // Deep but parseable nesting runs.
    let nested = format!("root ::= {}\"a\"{}\n", "(".repeat(90), ")".repeat(90));
    expect_runs(&parse(&nested).unwrap(), "90 nested groups");
    // A character no token yields (U+0000, found by the generated grammars below): the
    // run ends truncated, with no abort.
    let nul = parse("root ::= (\"aqu\\\\\" \"by\\x00\")*\n").unwrap();
    expect_runs(&nul, "a NUL the model cannot write");
    // A character the vocabulary has no bytes for (SmolLM2 has no token for 0xF1): once a
    // completion would need it, close-out must already have closed by the other way
    // (found by the generated grammars below: runs ended truncated).
    let unwritable =
        parse("root ::= \"a\" | [^a] (root \"\\U00040000\" | (\"a\" \"a\")*)\n").unwrap();
    for seed in [1, 4, 9, 16] {
        match run(&unwritable, seed) {
            Ok(g) => assert_eq!(g.finish, Finish::Stop, "seed {seed}: {g:?}"),
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    // Stacks that multiply (found by the generated grammars below: llama.cpp spent hours
    // on one token): on llama.cpp's engine, refused mid-run, before llama.cpp does the
    // work; gbnfc's engine keeps no stacks and runs them.
    let exploding = parse(
        "root ::= Alpha Alpha list-of-things | \"y\" ([e-x] | \"r2f\" | \"p\"){2} | [\\n- ] ([^b-nx-\\x92]){0,2}\n\
         item-2 ::= Alpha | [r-\\x91x-\\x83] | ([a-uq-\\x8D])\n\
         Alpha ::= (\"$\" list-of-things r5)* | [^l-n] root{1}{1,2}\n\
         r5 ::= list-of-things | \"qt\\x1F\" | \"m\" | [^x-\\x9B] [^c-}i-\\x86] item-2 (root)\n\
         list-of-things ::= [p-ta-|m-q] | . | [^b-~\\]-\\x83] r5{2} | [^p] item-2\n",
    )
    .unwrap();
    let on_llama = run_on(&exploding, 1, GrammarEngine::Llama);
    assert!(
        matches!(
            on_llama,
            Err(BridgeError::GrammarTooAmbiguous { generated, .. }) if generated > 0
        ),
        "{on_llama:?}"
    );
    expect_runs(&exploding, "stacks that multiply, on gbnfc's engine");
    // Stacks that multiply before the first token (2^13 ways to start): llama.cpp's engine
    // refuses them before llama.cpp parses the grammar; gbnfc's runs them.
    let doubling = parse(
        &std::fs::read_to_string(repo().join("compiler/tests/fixtures/doubling.gbnf")).unwrap(),
    )
    .unwrap();
    assert!(matches!(
        run_on(&doubling, 0, GrammarEngine::Llama),
        Err(BridgeError::GrammarTooAmbiguous { generated: 0, .. })
    ));
    expect_runs(&doubling, "2^13 ways to start, on gbnfc's engine");
    // Tokens the model does not have: llama.cpp refuses the text form; an id beyond the
    // vocabulary is a grammar nothing can satisfy — a dead end, reported.
    let unknown_text = parse("root ::= <|no-such-token|> \"x\"\n").unwrap();
    assert!(
        matches!(run(&unknown_text, 0), Err(BridgeError::GrammarRefused(_))),
        "unknown token text"
    );
    let unknown_id = parse("root ::= <[99999999]>\n").unwrap();
    assert!(
        matches!(run(&unknown_id, 0), Err(BridgeError::DeadEnd { .. })),
        "unknown token id"
    );
    // End-of-generation as the grammar's only token: llama.cpp never lets it be drawn
    // before the grammar is complete, so this is a dead end, not an abort.
    let eog_only = parse("root ::= <[2]>\n").unwrap();
    assert!(matches!(
        run(&eog_only, 0),
        Err(BridgeError::DeadEnd { .. })
    ));
    // The empty text: the grammar is complete at once; generation stops at once.
    let empty = run(&parse("root ::= \"\"\n").unwrap(), 0).unwrap();
    assert_eq!((empty.text.as_str(), empty.finish), ("", Finish::Stop));
    // A control token the grammar names is allowed (only unnamed ones are masked).
    let control = run(&parse("root ::= <|im_start|> \"a\"\n").unwrap(), 0).unwrap();
    assert_eq!(control.text, "<|im_start|>a");
}

proptest! {
    // Shrinking stops after a minute: each case runs the model.
    #![proptest_config(ProptestConfig { cases: 40, max_shrink_time: 60_000, ..ProptestConfig::default() })]

    #[test]
    fn generated_well_formed_grammars_run(grammar in well_formed_grammar(), seed in 0u32..1000) {
        let _ = seed;
        expect_runs(&grammar, &grammar.to_string());
    }

    #[test]
    fn arbitrary_trees_run_or_are_refused(grammar in any_grammar(), seed in 0u32..1000) {
        let result = run(&grammar, seed);
        if is_clean(&check(&grammar)) {
            prop_assert!(
                !matches!(result, Err(BridgeError::GrammarCheck(_))),
                "{grammar}: {result:?}"
            );
        } else {
            prop_assert!(matches!(result, Err(BridgeError::GrammarCheck(_))), "{grammar}: {result:?}");
        }
    }
}
