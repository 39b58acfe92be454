//! The `gbnfc` binary as users run it: exit codes, messages with line:column, standard
//! input, and inputs built to break it (deep nesting, megabytes of grammar).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Output;

use common::{gbnfc_fed, repo};

/// `gbnfc args`, with `stdin` (or nothing) on its standard input.
fn gbnfc(args: &[&str], stdin: Option<&str>) -> Output {
    gbnfc_fed(args, stdin.unwrap_or(""))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn check_passes_every_shipped_grammar() {
    let mut count = 0;
    for entry in std::fs::read_dir(repo().join("grammars")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "gbnf") {
            let out = gbnfc(&["check", path.to_str().unwrap()], None);
            assert!(
                out.status.success(),
                "{}: {}",
                path.display(),
                text(&out.stderr)
            );
            count += 1;
        }
    }
    assert!(count >= 3);
}

#[test]
fn check_fails_with_line_and_column() {
    let cases = [
        ("undefined.gbnf", "3:14", "never defined"),
        ("left-recursion-direct.gbnf", "2:1", "left-recursive"),
        ("left-recursion-indirect.gbnf", "3:1", "a → b → a"),
        ("repeat-3000.gbnf", "2:13", "above llama.cpp's limit"),
        ("underscore.gbnf", "3:1", "`my_rule` contains `_`"),
        (
            "unterminated-literal.gbnf",
            "3:14",
            "unterminated string literal",
        ),
        ("missing-root.gbnf", "1:1", "no `root` rule"),
    ];
    for (file, at, words) in cases {
        let path = format!("compiler/tests/data/invalid/{file}");
        let out = gbnfc(&["check", &path], None);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{file}: {stderr}");
        assert!(
            stderr.contains(&format!("{path}:{at}")),
            "{file}: want {at} in:\n{stderr}"
        );
        assert!(
            stderr.contains(words),
            "{file}: want {words:?} in:\n{stderr}"
        );
        assert!(
            stderr.contains('^'),
            "{file}: want a caret under the column:\n{stderr}"
        );
    }
}

#[test]
fn deep_nesting_is_a_clear_error_not_a_crash() {
    let grammar = format!(
        "root ::= {}\"x\"{}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    for command in ["check", "fmt"] {
        let out = gbnfc(&[command, "-"], Some(&grammar));
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert!(
            text(&out.stderr).contains("nested more than"),
            "{}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_five_megabyte_grammar_file_is_checked() {
    let mut grammar = String::from("root ::= r0\n");
    for i in 0..50_000 {
        let next = if i + 1 < 50_000 {
            format!(" r{}", i + 1)
        } else {
            String::new()
        };
        grammar.push_str(&format!("r{i} ::= \"{}\"{next} | [0-9]+\n", "w".repeat(80)));
    }
    assert!(grammar.len() > 5_000_000);
    let dir = std::env::temp_dir().join(format!("gbnfc-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.gbnf");
    std::fs::write(&path, &grammar).unwrap();
    let out = gbnfc(&["check", path.to_str().unwrap()], None);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("50001 rules"));
}

#[test]
fn accepts_reports_where_a_text_goes_wrong() {
    let ok = gbnfc(&["accepts", "grammars/json.gbnf", r#"{"a":[1,2]}"#], None);
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(text(&ok.stdout).trim(), "accept");
    let bad = gbnfc(&["accepts", "grammars/json.gbnf", r#"{"a":[1,02]}"#], None);
    assert_eq!(bad.status.code(), Some(1));
    let said = text(&bad.stdout);
    assert!(
        said.contains("1:10") && said.contains("unexpected '2'"),
        "{said}"
    );
    let from_stdin = gbnfc(&["accepts", "grammars/json.gbnf"], Some("[true,null]"));
    assert_eq!(from_stdin.status.code(), Some(0));
    let trailing_newline = gbnfc(&["accepts", "grammars/json.gbnf"], Some("[true]\n"));
    assert_eq!(trailing_newline.status.code(), Some(1));
    assert!(text(&trailing_newline.stdout).contains("longest accepted prefix is 6 bytes"));
}

#[test]
fn accepts_jsonl_answers_each_line() {
    let out = gbnfc(
        &["accepts", "grammars/json.gbnf", "--jsonl"],
        Some("\"{}\"\n\"{\"\n\"[1,\\\"\\\\n\\\"]\"\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "accept\nreject\naccept\n");
    let bad = gbnfc(
        &["accepts", "grammars/json.gbnf", "--jsonl"],
        Some("not json\n\"1\"\n"),
    );
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(text(&bad.stdout), "invalid\naccept\n");
    assert!(text(&bad.stderr).contains("line 1"));
}

#[test]
fn sample_is_deterministic_and_accepted() {
    let args = [
        "sample",
        "grammars/json.gbnf",
        "-n",
        "50",
        "--seed",
        "11",
        "--jsonl",
    ];
    let first = gbnfc(&args, None);
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert_eq!(text(&first.stdout), text(&gbnfc(&args, None).stdout));
    assert_eq!(text(&first.stdout).lines().count(), 50);
    let verdicts = gbnfc(
        &["accepts", "grammars/json.gbnf", "--jsonl"],
        Some(&text(&first.stdout)),
    );
    assert_eq!(text(&verdicts.stdout), "accept\n".repeat(50));
    let other_seed = gbnfc(
        &[
            "sample",
            "grammars/json.gbnf",
            "-n",
            "50",
            "--seed",
            "12",
            "--jsonl",
        ],
        None,
    );
    assert_ne!(text(&first.stdout), text(&other_seed.stdout));
}

#[test]
fn grammar_commands_refuse_grammars_that_fail_check() {
    for args in [
        vec![
            "sample",
            "compiler/tests/data/invalid/left-recursion-direct.gbnf",
        ],
        vec![
            "accepts",
            "compiler/tests/data/invalid/left-recursion-direct.gbnf",
            "1",
        ],
    ] {
        let out = gbnfc(&args, None);
        assert_eq!(out.status.code(), Some(1));
        assert!(text(&out.stderr).contains("left-recursive"));
    }
}

#[test]
fn check_warns_of_a_grammar_that_starts_llama_cpp_with_too_many_stacks() {
    // 2^13 ways to start: llama.cpp would keep a parse stack for each. gbnfc's engine runs
    // the grammar, so `check` passes it, with a warning for llama.cpp's users.
    let grammar =
        std::fs::read_to_string(repo().join("compiler/tests/fixtures/doubling.gbnf")).unwrap();
    let out = gbnfc(&["check", "-"], Some(&grammar));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for words in [
        "warning[too-ambiguous]",
        "--grammar-engine llama",
        "<stdin>:1:1",
        "4096 parse stacks",
        "help: rewrite",
    ] {
        assert!(stderr.contains(words), "want {words:?} in:\n{stderr}");
    }
    // Twelve levels (4,096 stacks) are within the limits.
    let twelve = grammar
        .replace("r12 ::= r13 | r13 \"y\"\n", "")
        .replace("r13 ::=", "r12 ::=");
    let out = gbnfc(&["check", "-"], Some(&twelve));
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn fmt_prints_canonical_text() {
    let out = gbnfc(
        &["fmt", "-"],
        Some("root ::=   ( \"a\"\n | b )  # c\nb ::= [x-z]{2,}\n"),
    );
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), "root ::= (\"a\" | b)\nb ::= [x-z]{2,}\n");
}

#[test]
fn bad_usage_and_missing_files_are_clear() {
    assert_eq!(gbnfc(&["frobnicate"], None).status.code(), Some(2));
    let missing = gbnfc(&["check", "no/such/file.gbnf"], None);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("cannot read `no/such/file.gbnf`"));
    let nul = gbnfc(&["check", "-"], Some("root ::= \"a\u{0}\"\n"));
    assert_eq!(nul.status.code(), Some(1));
    assert!(
        text(&nul.stderr).contains("<stdin>:1:12"),
        "{}",
        text(&nul.stderr)
    );
    let escaped = gbnfc(&["check", "-"], Some("root ::= \"a\\x00\"\n"));
    assert!(escaped.status.success(), "{}", text(&escaped.stderr));
}

#[test]
fn every_subcommand_has_an_example_in_its_help() {
    for command in ["check", "fmt", "accepts", "sample"] {
        let out = gbnfc(&[command, "--help"], None);
        assert!(out.status.success());
        assert!(text(&out.stdout).contains("Example:"), "{command}");
    }
}
