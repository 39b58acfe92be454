//! The grammars under `tests/data/`: every `valid/` grammar parses, passes `check` and
//! round-trips through the printer; every `invalid/` grammar fails with the diagnostic
//! code and line:column its first line announces (`# expect: CODE LINE:COLUMN`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use gbnfc_compiler::gbnf::{check, is_clean, parse, Expr};
use gbnfc_compiler::Diagnostic;

fn files(kind: &str) -> Vec<(PathBuf, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(kind);
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "gbnf"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no grammars in {}", dir.display());
    out
}

#[test]
fn valid_grammars_pass_check_and_round_trip() {
    for (path, text) in files("valid") {
        let grammar = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let diagnostics = check(&grammar);
        assert!(
            is_clean(&diagnostics),
            "{}: {diagnostics:?}",
            path.display()
        );
        let printed = grammar.to_string();
        assert_eq!(
            parse(&printed).unwrap(),
            grammar,
            "{}:\n{printed}",
            path.display()
        );
    }
}

#[test]
fn invalid_grammars_fail_with_the_announced_diagnostic() {
    for (path, text) in files("invalid") {
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| {
                panic!(
                    "{}: first line must be `# expect: CODE L:C`",
                    path.display()
                )
            });
        let (code, at) = expect.split_once(' ').unwrap();
        let errors: Vec<Diagnostic> = match parse(&text) {
            Err(e) => vec![e.diagnostic],
            Ok(grammar) => check(&grammar)
                .into_iter()
                .filter(|d| d.is_error())
                .collect(),
        };
        assert!(
            errors.iter().any(|d| d.code == code
                && d.pos.map(|p| format!("{}:{}", p.line, p.column)).as_deref() == Some(at)),
            "{}: expected {code} at {at}, got {:#?}",
            path.display(),
            errors
                .iter()
                .map(|d| format!(
                    "{} at {:?}: {}",
                    d.code,
                    d.pos.map(|p| p.to_string()),
                    d.message
                ))
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn ten_thousand_nested_parentheses_are_a_clear_error() {
    let text = format!(
        "root ::= {}\"x\"{}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let error = parse(&text).unwrap_err();
    assert_eq!(error.diagnostic.code, "too-deep");
    assert_eq!(error.diagnostic.pos.unwrap().line, 1);
}

#[test]
fn long_postfix_chains_are_a_clear_error() {
    let text = format!("root ::= \"x\"{}\n", "?".repeat(10_000));
    assert_eq!(parse(&text).unwrap_err().diagnostic.code, "too-deep");
}

#[test]
fn a_five_megabyte_grammar_is_checked() {
    // 40,000 rules chained by reference, each with a long literal: about 5 MB.
    let mut text = String::from("root ::= r0\n");
    let filler = "y".repeat(100);
    for i in 0..40_000 {
        if i + 1 < 40_000 {
            text.push_str(&format!(
                "r{i} ::= \"{filler}\" r{} | [a-z]{{1,3}}\n",
                i + 1
            ));
        } else {
            text.push_str(&format!("r{i} ::= \"end\"\n"));
        }
    }
    assert!(text.len() > 5_000_000);
    let started = std::time::Instant::now();
    let grammar = parse(&text).unwrap();
    let diagnostics = check(&grammar);
    assert!(
        is_clean(&diagnostics),
        "{:?}",
        &diagnostics[..diagnostics.len().min(3)]
    );
    assert!(
        started.elapsed().as_secs() < 60,
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_five_megabyte_literal_is_parsed() {
    let text = format!("root ::= \"{}\"\n", "z".repeat(5_000_000));
    let grammar = parse(&text).unwrap();
    assert!(is_clean(&check(&grammar)));
}

#[test]
fn a_long_single_line_parses_in_linear_time() {
    // 100,000 optionals on one line (about 500 KB): columns must not be recounted from
    // the start of the line for every node.
    let text = format!("root ::= {}\n", "\"a\"? ".repeat(100_000));
    let started = std::time::Instant::now();
    let grammar = parse(&text).unwrap();
    assert_eq!(grammar.rules.len(), 1);
    assert!(
        started.elapsed().as_secs() < 5,
        "took {:?}",
        started.elapsed()
    );
    let Expr::Seq(items) = &grammar.rules[0].body else {
        panic!("expected a sequence")
    };
    let Expr::Repeat { pos, .. } = &items[99_999] else {
        panic!("expected a repetition")
    };
    assert_eq!((pos.line, pos.column), (1, 10 + 99_999 * 5 + 3));
}

/// Found by fuzzing: quotes and brackets inside token text opened a literal or class in
/// the parser's lexical pre-scan.
#[test]
fn token_text_may_hold_quotes_and_brackets() {
    for text in [
        "y ::= <\"> [\"\"]\n",
        "y ::= <[> \"x\"\n",
        "r ::= <\">#\"\n",
    ] {
        let grammar = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        let printed = grammar.to_string();
        assert_eq!(parse(&printed).unwrap(), grammar, "{printed}");
    }
}
