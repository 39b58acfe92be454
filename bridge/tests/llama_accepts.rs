//! The promise of `gbnfc check`: every grammar it passes, llama.cpp accepts. Each grammar
//! here goes to llama.cpp's own grammar sampler, built against the default model's
//! vocabulary (`scripts/fetch-model` fetches the model): the files in `grammars/`, the
//! valid grammars of the compiler's test suite, and thousands of generated grammars.
//! The grammars `check` refuses for reasons llama.cpp shares are refused by llama.cpp too,
//! and every grammar the schema compiler produces for the corpora is accepted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use gbnfc_bridge::{model_path, Vocab};
use gbnfc_compiler::gbnf::arbitrary::{any_grammar, well_formed_grammar};
use gbnfc_compiler::gbnf::{check, is_clean, parse, Expr, Grammar, TokenRef};
use proptest::prelude::*;

fn vocab() -> &'static Vocab {
    static VOCAB: OnceLock<Vocab> = OnceLock::new();
    VOCAB.get_or_init(|| {
        let path = model_path::resolve(None).unwrap_or_else(|e| {
            panic!("{e} (the tests need the default model: run scripts/fetch-model)")
        });
        Vocab::load(&path).unwrap()
    })
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn gbnf_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "gbnf"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no grammars in {}", dir.display());
    files
}

/// The file passes `check`, and llama.cpp accepts both the file as written and its
/// canonical print.
fn assert_checked_and_accepted(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let grammar = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let diagnostics = check(&grammar);
    assert!(
        is_clean(&diagnostics),
        "{}: {diagnostics:?}",
        path.display()
    );
    vocab()
        .llama_accepts(&text)
        .unwrap_or_else(|e| panic!("{} as written: {e}", path.display()));
    vocab()
        .llama_accepts(&grammar.to_string())
        .unwrap_or_else(|e| panic!("{} printed: {e}\n{grammar}", path.display()));
}

#[test]
fn llama_cpp_accepts_every_shipped_grammar() {
    for path in gbnf_files(&repo().join("grammars")) {
        assert_checked_and_accepted(&path);
    }
}

#[test]
fn llama_cpp_accepts_every_valid_test_grammar() {
    for path in gbnf_files(&repo().join("compiler/tests/data/valid")) {
        assert_checked_and_accepted(&path);
    }
}

/// `check` is at least as strict as llama.cpp where both can see the problem.
#[test]
fn llama_cpp_refuses_what_check_refuses_for_its_reasons() {
    let shared = [
        "undefined.gbnf",
        "left-recursion-direct.gbnf",
        "left-recursion-indirect.gbnf",
        "repeat-min-2001.gbnf",
        "underscore.gbnf",
        "unterminated-literal.gbnf",
        "missing-root.gbnf",
        "bad-escape.gbnf",
        "repeat-product.gbnf",
        "zero-repeat-chain.gbnf",
        "newline-before-bar.gbnf",
    ];
    // Not listed: `nullable-star.gbnf`, `("a"?)*`. llama.cpp's left-recursion check sees
    // only rules with a literally empty alternative as nullable, so it accepts this
    // grammar and would then recurse without end while sampling; `check` refuses it.
    let dir = repo().join("compiler/tests/data/invalid");
    for name in shared {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(
            vocab().llama_accepts(&text).is_err(),
            "llama.cpp accepted {name}, which check refuses"
        );
    }
}

fn has_text_token(grammar: &Grammar) -> bool {
    let mut found = false;
    for rule in &grammar.rules {
        rule.body.walk(|e| {
            if let Expr::Token {
                token: TokenRef::Text(_),
                ..
            } = e
            {
                found = true;
            }
        });
    }
    found
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn llama_cpp_accepts_generated_well_formed_grammars(grammar in well_formed_grammar()) {
        prop_assert!(is_clean(&check(&grammar)));
        let text = grammar.to_string();
        prop_assert!(vocab().llama_accepts(&text).is_ok(), "llama.cpp refused:\n{}", text);
    }

}

/// Arbitrary trees: most fail `check`; every one that passes must satisfy llama.cpp.
/// (Token references by text are left out: whether a text is one token is up to the
/// model, which `check` cannot see.)
#[test]
fn llama_cpp_accepts_whatever_check_passes() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = any_grammar();
    let mut clean = 0;
    for _ in 0..20_000 {
        let grammar = strategy.new_tree(&mut runner).unwrap().current();
        if has_text_token(&grammar) || !is_clean(&check(&grammar)) {
            continue;
        }
        clean += 1;
        let text = grammar.to_string();
        assert!(
            vocab().llama_accepts(&text).is_ok(),
            "llama.cpp refused:\n{text}"
        );
    }
    eprintln!("{clean} of 20000 generated grammars passed check; llama.cpp accepted each");
    assert!(clean >= 100, "only {clean} generated grammars passed check");
}

/// Compiled schemas are grammars llama.cpp takes unchanged: every example schema and
/// every JSONSchemaBench schema that compiles.
#[test]
fn llama_cpp_accepts_compiled_schemas() {
    use gbnfc_compiler::schema::{compile, Options};
    let corpora = repo().join("../shared/corpora/jsonschemabench");
    let mut schemas: Vec<(String, serde_json::Value)> = Vec::new();
    for path in json_files(&repo().join("../shared/examples")) {
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        schemas.push((path.display().to_string(), value));
    }
    let mut splits: Vec<PathBuf> = std::fs::read_dir(&corpora)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    splits.sort();
    for split in splits {
        for path in json_files(&split) {
            let doc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            schemas.push((path.display().to_string(), doc["schema"].clone()));
        }
    }
    let mut compiled = 0;
    for (name, schema) in &schemas {
        let Ok(result) = compile(schema, &Options::default()) else {
            continue;
        };
        compiled += 1;
        let text = result.grammar.to_string();
        assert!(
            vocab().llama_accepts(&text).is_ok(),
            "llama.cpp refused the grammar of {name}:\n{text}"
        );
    }
    eprintln!("llama.cpp accepted all {compiled} compiled grammars");
    assert!(compiled > 7_000, "only {compiled} schemas compiled");
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}
