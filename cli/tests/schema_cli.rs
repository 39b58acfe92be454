//! The schema commands as users run them, on good and bad input: every bad input ends
//! with one clear message (what, where as a JSON pointer or line:column, what to do) and
//! exit status 1 — never a crash.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{gbnfc_fed as gbnfc, repo, stderr};

fn fails_with(schema: &str, args: &[&str], words: &[&str]) {
    let mut all = vec!["compile", "-"];
    all.extend_from_slice(args);
    let out = gbnfc(&all, schema);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{schema}: {err}");
    for w in words {
        assert!(err.contains(w), "{schema}: want {w:?} in:\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_schemas_get_clear_errors() {
    fails_with(
        "{\"type\": \"object\",\n \"properties\": {\"a\": }}",
        &[],
        &["<stdin>:2:", "invalid JSON"],
    );
    fails_with(
        r#"{"properties":{"n":{"type":"strng"}}}"#,
        &[],
        &["/properties/n/type", "did you mean \"string\""],
    );
    fails_with(
        r##"{"$ref":"#/$defs/missing"}"##,
        &[],
        &["/$ref", "#/$defs/missing"],
    );
    fails_with(
        r#"{"$ref":"http://example.com/other.json"}"#,
        &[],
        &["--ref-dir"],
    );
    fails_with("false", &[], &["accepts no value"]);
    fails_with(r#"{"enum":[]}"#, &[], &["accepts no value"]);
    fails_with(
        r#"{"type":"integer","minimum":5,"maximum":1}"#,
        &[],
        &["accepts no value"],
    );
    fails_with(
        r##"{"type":"object","properties":{"next":{"$ref":"#"}},"required":["next"]}"##,
        &[],
        &["accepts no value"],
    );
    fails_with(
        r#"{"type":"string","pattern":"(?<=a)b"}"#,
        &["--strict"],
        &["/pattern", "strict"],
    );
    fails_with(r#"{"type":"text"}"#, &[], &["type"]);
}

#[test]
fn validation_only_keywords_are_reported_not_dropped() {
    let out = gbnfc(
        &["compile", "-"],
        r#"{"type":"array","items":{"type":"string","pattern":"(?=x)"},"uniqueItems":true}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("/uniqueItems") && err.contains("validation only"),
        "{err}"
    );
    assert!(err.contains("/items/pattern"), "{err}");
    let explain = gbnfc(
        &["compile", "-", "--explain"],
        r#"{"type":"integer","title":"n","minimum":1,"colour":2}"#,
    );
    let listing = stderr(&explain);
    for want in [
        "enforced",
        "/minimum",
        "annotation",
        "/title",
        "unknown",
        "/colour",
    ] {
        assert!(listing.contains(want), "want {want} in:\n{listing}");
    }
}

#[test]
fn diagnostics_inside_merged_schemas_name_where_the_keyword_was_written() {
    // allOf merges its members, and the anyOf branches are each merged with the `not`:
    // the compiled objects are made up, the pointers must still be the user's.
    let out = gbnfc(
        &["compile", "-"],
        r#"{"allOf":[{"anyOf":[{"type":"integer"},{"type":"string","colour":1}]},{"not":{"const":3}}]}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("/allOf/1/not: `not`"), "{err}");
    assert!(err.contains("/allOf/0/anyOf/1/colour: unknown"), "{err}");
    assert!(!err.contains("/anyOf/1/not"), "{err}");
    // A property whose name a pattern matches satisfies both schemas.
    let out = gbnfc(
        &["compile", "-"],
        r#"{"type":"object","properties":{"day":{"type":"string"}},"patternProperties":{"^d":{"type":"string","format":"date","pattern":"^2"}}}"#,
    );
    let err = stderr(&out);
    assert!(err.contains("/patternProperties/^d/format"), "{err}");
}

#[test]
fn deep_and_huge_schemas_end_with_a_result_or_an_error() {
    let deep = format!("{}{{}}{}", "{\"items\":".repeat(10_000), "}".repeat(10_000));
    let out = gbnfc(&["compile", "-"], &deep);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("recursion limit"), "{}", stderr(&out));

    // About 50 MB: 12,500 properties, each with a long description.
    let description = "d".repeat(4_000);
    let mut big = String::from("{\"type\":\"object\",\"properties\":{");
    for i in 0..12_500 {
        if i > 0 {
            big.push(',');
        }
        big.push_str(&format!(
            "\"p{i}\":{{\"type\":\"integer\",\"description\":\"{description}\"}}"
        ));
    }
    big.push_str("}}");
    assert!(big.len() > 50_000_000);
    let out = gbnfc(&["compile", "-"], &big);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"\\\"p12499\\\"\""));
}

#[test]
fn compiled_examples_accept_their_canonical_values() {
    let schema = repo().join("../shared/examples/weather-card.schema.json");
    let grammar = std::env::temp_dir().join(format!("gbnfc-weather-{}.gbnf", std::process::id()));
    let out = gbnfc(
        &[
            "compile",
            schema.to_str().unwrap(),
            "-o",
            grammar.to_str().unwrap(),
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let value = r#"{"weather":{"temp_low":3,"summary":"rain","temp_high":9.5,"condition":"wet"},"location":"Chengdu","date":"2025-03-01","commute_advice":{"go_to_work":{"need_umbrella":true,"text":"t"},"back_home":{"need_umbrella":false,"text":"u"}}}"#;
    let canon = gbnfc(&["canon", schema.to_str().unwrap(), value], "");
    let text = String::from_utf8_lossy(&canon.stdout)
        .trim_end()
        .to_string();
    assert!(
        text.starts_with(
            r#"{"location":"Chengdu","date":"2025-03-01","weather":{"summary":"rain""#
        ),
        "{text}"
    );
    let accepted = gbnfc(&["accepts", grammar.to_str().unwrap(), &text], "");
    assert!(
        accepted.status.success(),
        "{}",
        String::from_utf8_lossy(&accepted.stdout)
    );
    let bad_date = text.replace("2025-03-01", "2025-02-30");
    let rejected = gbnfc(&["accepts", grammar.to_str().unwrap(), &bad_date], "");
    assert_eq!(rejected.status.code(), Some(1));
    std::fs::remove_file(grammar).unwrap();
}

#[test]
fn response_formats_compile() {
    let rf = repo().join("../shared/examples/weather-card.response-format.json");
    let out = gbnfc(&["compile", rf.to_str().unwrap()], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let any_object = gbnfc(&["compile", "-"], r#"{"type":"json_object"}"#);
    assert!(any_object.status.success());
    let grammar = String::from_utf8_lossy(&any_object.stdout);
    assert!(grammar.starts_with("root ::= object"), "{grammar}");
}

#[test]
fn a_reasoning_section_goes_before_the_value_and_is_never_constrained() {
    let grammar = std::env::temp_dir().join(format!("gbnfc-think-{}.gbnf", std::process::id()));
    let grammar_path = grammar.to_str().unwrap();
    let schema = r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#;
    let args = [
        "compile",
        "-",
        "--reasoning-markers",
        "<think>,</think>",
        "-o",
        grammar_path,
    ];
    let out = gbnfc(&args, schema);
    assert!(out.status.success(), "{}", stderr(&out));
    let accepts = |text: &str| gbnfc(&["accepts", grammar_path, text], "").status.code();
    assert_eq!(
        accepts("<think>{\"n\": \"not a number\"}</think>\n\n{\"n\":3}"),
        Some(0)
    );
    assert_eq!(accepts("<think>ok</think>{\"n\":\"3\"}"), Some(1));
    assert_eq!(accepts("{\"n\":3}"), Some(1), "the section is required");
    let opened = gbnfc(&[&args[..], &["--reasoning-opened"]].concat(), schema);
    assert!(opened.status.success(), "{}", stderr(&opened));
    assert_eq!(accepts("Sure.\n</think>\n{\"n\":-1}"), Some(0));
    std::fs::remove_file(grammar).unwrap();
    // Bad markers are usage errors (clap's exit status 2), saying what to give.
    for (markers, words) in [("<think>", "OPEN,CLOSE"), ("x,x", "two different texts")] {
        let out = gbnfc(&["compile", "-", "--reasoning-markers", markers], "{}");
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(words), "{}", stderr(&out));
    }
}

#[test]
fn targets_spell_the_same_grammar_for_each_engine() {
    let schema = r#"{"type":"object","properties":{"n":{"type":"integer","minimum":10,"maximum":250}},"required":["n"]}"#;
    let compiled = |extra: &[&str]| {
        let out = gbnfc(&[&["compile", "-"], extra].concat(), schema);
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let llama = compiled(&[]);
    assert_eq!(compiled(&["--target", "llama"]), llama);
    let xgrammar = compiled(&["--target", "xgrammar"]);
    assert!(xgrammar.starts_with("root ::= "), "{xgrammar}");
    let lark = compiled(&["--target", "lark"]);
    assert!(
        lark.starts_with("start: ") && lark.contains("/[1-9]/"),
        "{lark}"
    );
    // With a reasoning section the whole grammar is respelled.
    let thinking = compiled(&[
        "--reasoning-markers",
        "<think>,</think>",
        "--target",
        "lark",
    ]);
    assert!(
        thinking.contains("\"<\" \"t\" \"h\" \"i\" \"n\" \"k\" \">\""),
        "{thinking}"
    );
    let out = gbnfc(&["compile", "-", "--target", "gbnf"], schema);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("use llama, xgrammar or lark"));
}
