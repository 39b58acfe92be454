//! The ready-made grammars in `grammars/`: every file parses, passes `check` with no
//! errors, prints and re-parses to the same tree, and accepts everything its own sampler
//! draws; and every file has a table of texts it must accept and texts it must reject,
//! chosen to hit the edges of its language. A grammar file without a table fails
//! [`every_grammar_file_has_a_table`], so new grammars cannot land untested.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use gbnfc_compiler::gbnf::{check, parse, Grammar};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};

/// Where the grammar files live.
const GRAMMARS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../grammars");

/// Seeds for the sampling test; `SAMPLES_PER_SEED` texts each (300 in all).
const SEEDS: [u64; 3] = [1, 0x5EED, 0xC0FFEE];
const SAMPLES_PER_SEED: usize = 100;

/// Fewest accepted and rejected texts a table must list.
const MIN_CASES: usize = 5;

/// The file names (`x.gbnf`) in `grammars/`, sorted.
fn grammar_files() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(GRAMMARS_DIR)
        .unwrap_or_else(|e| panic!("cannot list {GRAMMARS_DIR}: {e}"))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".gbnf"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no *.gbnf files in {GRAMMARS_DIR}");
    names
}

/// The source text of `grammars/{file}`.
fn source(file: &str) -> String {
    let path: PathBuf = [GRAMMARS_DIR, file].iter().collect();
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `grammars/{file}`, parsed.
fn load(file: &str) -> Grammar {
    let text = source(file);
    parse(&text).unwrap_or_else(|e| {
        panic!(
            "grammars/{file} does not parse:\n{}",
            e.diagnostic.render(&text, file)
        )
    })
}

/// What a table's accepted texts are, as JSON: the parts that must be valid JSON.
#[derive(Clone, Copy)]
enum AsJson {
    /// Not JSON.
    No,
    /// The whole text is one JSON value.
    Whole,
    /// The text is this prefix, then one JSON value.
    AfterPrefix(&'static str),
    /// Hermes blocks: the line between each `<tool_call>` and `</tool_call>` is JSON.
    HermesBlocks,
}

/// The explicit tests of one grammar file.
struct Table {
    file: &'static str,
    accept: Vec<String>,
    reject: Vec<String>,
    /// `accept` lists the grammar's whole language (for grammars with fewer than
    /// [`MIN_CASES`] texts); every sample must then be one of them.
    whole_language: bool,
    json: AsJson,
}

impl Table {
    fn new(file: &'static str, accept: &[&str], reject: &[&str]) -> Table {
        Table {
            file,
            accept: accept.iter().map(|s| (*s).to_owned()).collect(),
            reject: reject.iter().map(|s| (*s).to_owned()).collect(),
            whole_language: false,
            json: AsJson::No,
        }
    }

    fn accept_also(mut self, texts: impl IntoIterator<Item = String>) -> Table {
        self.accept.extend(texts);
        self
    }

    fn reject_also(mut self, texts: impl IntoIterator<Item = String>) -> Table {
        self.reject.extend(texts);
        self
    }

    fn json(mut self, json: AsJson) -> Table {
        self.json = json;
        self
    }

    fn whole_language(mut self) -> Table {
        self.whole_language = true;
        self
    }
}

/// `depth` objects nested in one another, pretty-printed with `unit` as one level of
/// indentation: the innermost member sits at `depth` units.
fn nested_pretty(depth: usize, unit: &str) -> String {
    let mut text = String::new();
    for level in 0..depth {
        text.push_str("{\n");
        text.push_str(&unit.repeat(level + 1));
        text.push_str("\"a\": ");
    }
    text.push('1');
    for level in (0..depth).rev() {
        text.push('\n');
        text.push_str(&unit.repeat(level));
        text.push('}');
    }
    text
}

/// A tool name of `n` characters.
fn name_of_len(n: usize) -> String {
    "abcdefghijklmnopqrstuvwxyz_-0123456789"
        .chars()
        .cycle()
        .take(n)
        .collect()
}

/// A Hermes block for one call.
fn hermes(name: &str, arguments: &str) -> String {
    format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {arguments}}}\n</tool_call>")
}

/// One Mistral call object.
fn mistral(name: &str, arguments: &str, id: &str) -> String {
    format!("{{\"name\": \"{name}\", \"arguments\": {arguments}, \"id\": \"{id}\"}}")
}

/// `n` Markdown list items.
fn list_items(n: usize) -> String {
    (1..=n).map(|i| format!("- item {i}\n")).collect()
}

/// Every table; one per grammar file.
fn tables() -> Vec<Table> {
    let serde_pretty = serde_json::to_string_pretty(&serde_json::json!({
        "name": "Ada",
        "tags": ["math", "poetry", {"nested": [1, 2.5, -3e-7, null]}],
        "empty": {},
        "none": [],
        "ok": true
    }))
    .unwrap();
    let name64 = name_of_len(64);
    let name65 = name_of_len(65);
    vec![
        Table::new(
            "json.gbnf",
            &[
                "{}",
                "[]",
                "-0",
                "1e5",
                "-12.5E-3",
                "1E+2",
                "0.0",
                "\"\"",
                r#""\u00e9\uD83D\uDE00 caf\u00E9""#,
                r#""\"\\\/\b\f\n\r\t""#,
                "\"héllo ✓ 😀\"",
                "[[[]],[1,[2,[3,[]]]]]",
                r#"{"a":{"b":[null,true,false]},"":""}"#,
                "true",
                "null",
            ],
            &[
                "",
                "01",
                "-01",
                "00",
                ".5",
                "1.",
                "+1",
                "1e",
                "-",
                "[1,]",
                r#"{"a":1,}"#,
                "[,1]",
                "\"a\u{1}b\"",
                "\"tab\there\"",
                "\"line\nbreak\"",
                r#""\u12""#,
                r#""\x41""#,
                r#""\U0041""#,
                "\"unterminated",
                "{'a':1}",
                "{a:1}",
                r#"{"a"}"#,
                "[1, 2]",
                " {}",
                "{}\n",
                "{}{}",
                "True",
                "nul",
                "NaN",
                "Infinity",
            ],
        )
        .json(AsJson::Whole),
        Table::new(
            "json-ws.gbnf",
            &[
                "{}",
                "{ }",
                "[\n]",
                "\n{\"a\": 1}\n",
                "{\"a\": 1, \"b\": [1, 2, 3]}",
                "[1 , 2]",
                "[\n\t1,\n\t{\n\t\t\"x\": null\n\t}\n]",
                "{\n    \"four\": [\n        true\n    ]\n}",
                " -0 ",
                "\"  spaces inside strings are not whitespace: \\u0020                                                  \"",
            ],
            &[
                "",
                "   ",
                "{ \n}",
                "{\n\n}",
                "{\r\n}",
                "[1, ]",
                "[01]",
                "{\"a\" 1}",
                "\"a\nb\"",
                "{} {}",
            ],
        )
        .accept_also([
            serde_pretty.clone(),
            nested_pretty(20, "  "),
            nested_pretty(10, "    "),
            nested_pretty(40, "\t"),
            format!("[{}1]", " ".repeat(40)),
            format!("[\n{}1]", " ".repeat(40)),
        ])
        .reject_also([
            format!("[{}]", " ".repeat(100)),
            format!("{{}}{}", " ".repeat(100)),
            format!("{}{{}}", " ".repeat(100)),
            format!("[{}1]", " ".repeat(41)),
            nested_pretty(21, "  "),
        ])
        .json(AsJson::Whole),
        Table::new(
            "json_arr.gbnf",
            &[
                "[]",
                "[1]",
                "[[],[[]]]",
                r#"[{"a":1},"x",null,true,false,-0.5e-3]"#,
                r#"["\u0041",""]"#,
                "[-0,0,1e5]",
            ],
            &[
                "",
                "{}",
                "1",
                "\"[]\"",
                "[1,]",
                "[,1]",
                "[ ]",
                "[1, 2]",
                "[1]\n",
                "[01]",
                "[1][2]",
                "[",
            ],
        )
        .json(AsJson::Whole),
        Table::new(
            "json-object.gbnf",
            &[
                "{}",
                r#"{"a":1}"#,
                r#"{"":""}"#,
                r#"{"a":{"b":{"c":[1,{"d":null}]}}}"#,
                r#"{"k\u00e9y":-0,"x":1e5,"y":[]}"#,
                r#"{"a":1,"a":2}"#,
            ],
            &[
                "",
                "[]",
                "null",
                "\"{}\"",
                "{ }",
                r#"{"a":1,}"#,
                "{a:1}",
                r#"{"a" :1}"#,
                r#"{"a": 1}"#,
                r#"{"a":01}"#,
                "{\"a\":1}\n",
                r#"{"a"}"#,
                "{1:2}",
                "{}{}",
            ],
        )
        .json(AsJson::Whole),
        Table::new(
            "tool-call-json.gbnf",
            &[
                r#"{"name": "get_weather", "arguments": {"city":"Paris"}}"#,
                r#"{"name": "f", "arguments": {}}"#,
                r#"{"name": "a-b_C9", "arguments": {"x":[1,{"y":null}],"z":"line\nnext"}}"#,
                r#"{"name": "_", "arguments": {"a":true,"b":-0.5,"c":"\u00e9"}}"#,
                r#"{"name": "search", "arguments": {"q":"a \"quoted\" word"}}"#,
            ],
            &[
                "",
                r#"{"name":"f","arguments":{}}"#,
                r#"{"name": "f", "arguments": {"city": "Paris"}}"#,
                r#"{"name": "", "arguments": {}}"#,
                r#"{"name": "get.weather", "arguments": {}}"#,
                r#"{"name": "get weather", "arguments": {}}"#,
                r#"{"name": "héllo", "arguments": {}}"#,
                r#"{"name": "f", "arguments": []}"#,
                r#"{"name": "f", "arguments": "{}"}"#,
                r#"{"arguments": {}, "name": "f"}"#,
                r#"{"name": "f", "parameters": {}}"#,
                "{\"name\": \"f\", \"arguments\": {}}\n",
                r#"{"name": f, "arguments": {}}"#,
            ],
        )
        .accept_also([format!(r#"{{"name": "{name64}", "arguments": {{}}}}"#)])
        .reject_also([format!(r#"{{"name": "{name65}", "arguments": {{}}}}"#)])
        .json(AsJson::Whole),
        Table::new(
            "tool-call-hermes.gbnf",
            &[
                "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}\n</tool_call>",
                "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
            ],
            &[
                "",
                // missing newline after <tool_call>
                "<tool_call>{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
                // missing newline before </tool_call>
                "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}</tool_call>",
                // missing closing tag
                "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n",
                // trailing newline after the last call
                "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\n",
                // leading newline
                "\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
                // compact outer object
                "<tool_call>\n{\"name\":\"f\",\"arguments\":{}}\n</tool_call>",
                // llama3's key
                "<tool_call>\n{\"name\": \"f\", \"parameters\": {}}\n</tool_call>",
                // arguments not an object
                "<tool_call>\n{\"name\": \"f\", \"arguments\": null}\n</tool_call>",
            ],
        )
        .accept_also([
            format!("{}\n{}", hermes("a", "{}"), hermes("b", r#"{"x":[1,2]}"#)),
            [
                hermes("one", r#"{"n":1}"#),
                hermes("two", r#"{"n":{"deep":[true,null,"s"]}}"#),
                hermes("three-3_x", "{}"),
            ]
            .join("\n"),
            hermes(&name64, r#"{"k":"v"}"#),
        ])
        .reject_also([
            // calls not separated
            format!("{}{}", hermes("a", "{}"), hermes("b", "{}")),
            // blank line between calls
            format!("{}\n\n{}", hermes("a", "{}"), hermes("b", "{}")),
            // separated by a space
            format!("{} {}", hermes("a", "{}"), hermes("b", "{}")),
            hermes(&name65, "{}"),
            hermes("bad name", "{}"),
        ])
        .json(AsJson::HermesBlocks),
        Table::new(
            "tool-call-llama3.gbnf",
            &[
                r#"{"name": "get_weather", "parameters": {"city":"Paris"}}"#,
                r#"{"name": "f", "parameters": {}}"#,
                r#"{"name": "brave_search", "parameters": {"query":"rust gbnf","count":10}}"#,
                r#"{"name": "x-y", "parameters": {"a":[[],{}],"b":"\t"}}"#,
                r#"{"name": "Z9", "parameters": {"n":-1.5e-10}}"#,
            ],
            &[
                "",
                r#"{"name": "f", "arguments": {}}"#,
                r#"{"name":"f","parameters":{}}"#,
                r#"{"name": "f", "parameters": {"a": 1}}"#,
                r#"<|python_tag|>{"name": "f", "parameters": {}}"#,
                r#"{"name": "f", "parameters": {}}<|eom_id|>"#,
                r#"{"name": "", "parameters": {}}"#,
                r#"{"name": "f", "parameters": [1]}"#,
                r#"{"parameters": {}, "name": "f"}"#,
                "{\"name\": \"f\", \"parameters\": {}} ",
            ],
        )
        .accept_also([format!(r#"{{"name": "{name64}", "parameters": {{}}}}"#)])
        .reject_also([format!(r#"{{"name": "{name65}", "parameters": {{}}}}"#)])
        .json(AsJson::Whole),
        Table::new("tool-call-mistral.gbnf", &[], &["", "[TOOL_CALLS][]", "[TOOL_CALLS]"])
            .accept_also([
                format!(
                    "[TOOL_CALLS][{}]",
                    mistral("get_weather", r#"{"city":"Paris"}"#, "a1B2c3D4e")
                ),
                format!("[TOOL_CALLS][{}]", mistral("f", "{}", "000000000")),
                format!(
                    "[TOOL_CALLS][{}, {}]",
                    mistral("a", r#"{"x":1}"#, "AAAAAAAAA"),
                    mistral("b", r#"{"y":[null]}"#, "zzzzzzzzz")
                ),
                format!(
                    "[TOOL_CALLS][{}, {}, {}]",
                    mistral("one", "{}", "abcdefghi"),
                    mistral("two_2", r#"{"s":"\u00e9"}"#, "123456789"),
                    mistral("three-3", r#"{"o":{"p":{}}}"#, "XyZ987aBc")
                ),
                format!("[TOOL_CALLS][{}]", mistral(&name64, "{}", "abcdefghi")),
            ])
            .reject_also([
                // id of 8 and 10 characters
                format!("[TOOL_CALLS][{}]", mistral("f", "{}", "abcdefgh")),
                format!("[TOOL_CALLS][{}]", mistral("f", "{}", "abcdefghij")),
                // id with a character outside [a-zA-Z0-9]
                format!("[TOOL_CALLS][{}]", mistral("f", "{}", "abcd_fghi")),
                // no [TOOL_CALLS] prefix
                format!("[{}]", mistral("f", "{}", "abcdefghi")),
                // space after [TOOL_CALLS]
                format!("[TOOL_CALLS] [{}]", mistral("f", "{}", "abcdefghi")),
                // calls separated by "," without a space
                format!(
                    "[TOOL_CALLS][{},{}]",
                    mistral("a", "{}", "abcdefghi"),
                    mistral("b", "{}", "abcdefghi")
                ),
                // trailing separator
                format!("[TOOL_CALLS][{}, ]", mistral("f", "{}", "abcdefghi")),
                // no id
                r#"[TOOL_CALLS][{"name": "f", "arguments": {}}]"#.to_owned(),
                // id before arguments
                r#"[TOOL_CALLS][{"name": "f", "id": "abcdefghi", "arguments": {}}]"#.to_owned(),
                // id not a string
                r#"[TOOL_CALLS][{"name": "f", "arguments": {}, "id": 123456789}]"#.to_owned(),
                format!("[TOOL_CALLS][{}]", mistral(&name65, "{}", "abcdefghi")),
            ])
            .json(AsJson::AfterPrefix("[TOOL_CALLS]")),
        Table::new(
            "yes-no.gbnf",
            &["yes", "no"],
            &[
                "", "Yes", "YES", "No", "yes\n", " yes", "yes.", "y", "ye", "n", "nope", "yesno",
                "no!",
            ],
        )
        .whole_language(),
        Table::new(
            "list.gbnf",
            &[
                "- a\n",
                "- first\n- second\n",
                "- a - b - c\n",
                "- **bold** and `code`, ünïcödé ✓\n",
                "- trailing spaces   \n- x\n",
                "- 1. not a nested list\n",
            ],
            &[
                "",
                "\n",
                "- a",
                "- a\n- b",
                "- \n",
                "-  a\n",
                "-\ta\n",
                "-a\n",
                "* a\n",
                "1. a\n",
                "  - a\n",
                "\n- a\n",
                "- a\n\n",
                "- a\r\n",
                "- a\rb\n",
            ],
        )
        .accept_also([list_items(20)])
        .reject_also([list_items(21)]),
        Table::new(
            "integer.gbnf",
            &[
                "0",
                "-0",
                "7",
                "-42",
                "123456789012345678",
                "-999999999999999999",
                "100",
            ],
            &[
                "",
                "-",
                "01",
                "00",
                "-01",
                "+1",
                "--1",
                "1.0",
                "1.",
                "1e5",
                " 1",
                "1 ",
                "1\n",
                "1_000",
                "0x10",
                "1234567890123456789",
                "-1234567890123456789",
            ],
        )
        .json(AsJson::Whole),
        Table::new(
            "iso-date.gbnf",
            &[
                "2024-02-29",
                "2000-02-29",
                "1600-02-29",
                "0000-02-29",
                "2023-02-28",
                "2023-04-30",
                "2023-12-31",
                "2023-01-31",
                "0001-01-01",
                "9999-12-31",
                "2020-02-29",
                "2012-02-29",
            ],
            &[
                "",
                "2023-02-29",
                "1900-02-29",
                "2100-02-29",
                "2023-02-30",
                "2024-02-30",
                "2023-04-31",
                "2023-06-31",
                "2023-09-31",
                "2023-11-31",
                "2023-01-32",
                "2023-13-01",
                "2023-00-10",
                "2023-01-00",
                "23-01-01",
                "12023-01-01",
                "2023-1-01",
                "2023-01-1",
                "2023/01/01",
                "20230101",
                "2023-01-01T00:00:00Z",
                "2023-01-01\n",
                " 2023-01-01",
            ],
        ),
    ]
}

/// Shortens a text for a failure message.
fn show(text: &str) -> String {
    const MAX: usize = 200;
    if text.chars().count() <= MAX {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(MAX).collect();
        format!("{head:?}… ({} chars)", text.chars().count())
    }
}

/// Panics listing every failure, if there are any.
#[track_caller]
fn report(what: &str, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} {what}:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

#[test]
fn every_grammar_file_has_a_table() {
    let files: BTreeSet<String> = grammar_files().into_iter().collect();
    let tables = tables();
    let mut failures = Vec::new();
    let mut seen = BTreeSet::new();
    for table in &tables {
        if !seen.insert(table.file) {
            failures.push(format!("{}: two tables", table.file));
        }
        if !files.contains(table.file) {
            failures.push(format!(
                "{}: has a table but no file grammars/{}",
                table.file, table.file
            ));
        }
        if table.accept.len() < MIN_CASES && !table.whole_language {
            failures.push(format!(
                "{}: only {} texts to accept (at least {MIN_CASES})",
                table.file,
                table.accept.len()
            ));
        }
        if table.reject.len() < MIN_CASES {
            failures.push(format!(
                "{}: only {} texts to reject (at least {MIN_CASES})",
                table.file,
                table.reject.len()
            ));
        }
    }
    for file in &files {
        if !seen.contains(file.as_str()) {
            failures.push(format!(
                "grammars/{file} has no accept/reject table: add one to `tables()` in {}",
                file!()
            ));
        }
    }
    report("problems with the grammar tables", &failures);
}

#[test]
fn grammar_files_are_clean_and_round_trip() {
    let mut failures = Vec::new();
    for file in grammar_files() {
        let text = source(&file);
        let grammar = match parse(&text) {
            Ok(g) => g,
            Err(e) => {
                failures.push(format!(
                    "grammars/{file} does not parse:\n{}",
                    e.diagnostic.render(&text, &file)
                ));
                continue;
            }
        };
        for diagnostic in check(&grammar).iter().filter(|d| d.is_error()) {
            failures.push(format!(
                "grammars/{file} fails `check`:\n{}",
                diagnostic.render(&text, &file)
            ));
        }
        if !text.lines().next().is_some_and(|l| l.starts_with('#')) {
            failures.push(format!(
                "grammars/{file} does not start with a `#` comment saying what it accepts"
            ));
        }
        let printed = grammar.to_string();
        match parse(&printed) {
            Ok(again) if again == grammar => {}
            Ok(_) => failures.push(format!(
                "grammars/{file}: parse(print(g)) != g; printed:\n{printed}"
            )),
            Err(e) => failures.push(format!(
                "grammars/{file}: its print does not parse:\n{}\nprinted:\n{printed}",
                e.diagnostic.render(&printed, "<printed>")
            )),
        }
    }
    report("grammar files broken", &failures);
}

#[test]
fn samples_are_accepted() {
    let tables = tables();
    let mut failures = Vec::new();
    for file in grammar_files() {
        let grammar = load(&file);
        let recognizer = Recognizer::new(&grammar)
            .unwrap_or_else(|e| panic!("grammars/{file}: no recognizer: {e}"));
        let sampler =
            Sampler::new(&grammar).unwrap_or_else(|e| panic!("grammars/{file}: no sampler: {e}"));
        let language = tables
            .iter()
            .find(|t| t.file == file && t.whole_language)
            .map(|t| &t.accept);
        for seed in SEEDS {
            let samples = sampler.samples(seed, SAMPLES_PER_SEED, SampleOptions::default());
            assert_eq!(samples.len(), SAMPLES_PER_SEED);
            for text in samples {
                let r = recognizer.recognize(&text);
                if !r.accepted {
                    failures.push(format!(
                        "grammars/{file} (seed {seed}): rejects its own sample {}, going wrong at byte {}",
                        show(&text),
                        r.viable_prefix
                    ));
                }
                if language.is_some_and(|l| !l.contains(&text)) {
                    failures.push(format!(
                        "grammars/{file} (seed {seed}): sample {} is not in the table's whole language",
                        show(&text)
                    ));
                }
            }
        }
    }
    report("sampled texts rejected", &failures);
}

#[test]
fn grammars_accept_and_reject_their_tables() {
    let mut failures = Vec::new();
    for table in tables() {
        let file = table.file;
        let grammar = load(file);
        let recognizer = Recognizer::new(&grammar)
            .unwrap_or_else(|e| panic!("grammars/{file}: no recognizer: {e}"));
        for text in &table.accept {
            let r = recognizer.recognize(text);
            if !r.accepted {
                let good = text.get(..r.viable_prefix).unwrap_or(text);
                let bad = text.get(r.viable_prefix..).unwrap_or("");
                failures.push(format!(
                    "grammars/{file} should accept {} but rejects it: goes wrong at byte {} (after {}, at {})",
                    show(text),
                    r.viable_prefix,
                    show(good),
                    show(&bad.chars().take(20).collect::<String>()),
                ));
            }
        }
        for text in &table.reject {
            if recognizer.recognize(text).accepted {
                failures.push(format!(
                    "grammars/{file} should reject {} but accepts it",
                    show(text)
                ));
            }
        }
    }
    report("table texts misjudged", &failures);
}

/// The tables' accepted texts of JSON-shaped grammars really are JSON (as serde_json reads
/// it): a check on the tables themselves, so that they test what they claim to.
#[test]
fn json_tables_hold_real_json() {
    let mut failures = Vec::new();
    for table in tables() {
        for text in &table.accept {
            let pieces: Vec<&str> = match table.json {
                AsJson::No => continue,
                AsJson::Whole => vec![text.as_str()],
                AsJson::AfterPrefix(prefix) => vec![text.strip_prefix(prefix).unwrap_or(text)],
                AsJson::HermesBlocks => text
                    .split("<tool_call>\n")
                    .filter(|s| !s.is_empty())
                    .map(|block| block.split("\n</tool_call>").next().unwrap_or(block))
                    .collect(),
            };
            for piece in pieces {
                if let Err(e) = serde_json::from_str::<serde_json::Value>(piece) {
                    failures.push(format!(
                        "{}: accepted text {} holds {} which is not JSON: {e}",
                        table.file,
                        show(text),
                        show(piece)
                    ));
                }
            }
        }
    }
    report("table texts that should be JSON but are not", &failures);
}
