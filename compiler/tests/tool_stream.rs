//! `CallStream`: tool-call replies read piece by piece agree with `parse_reply`.
//!
//! For every seed tool list in ../shared/examples/ (and a chat request with a
//! `response_format`), every real MCP server fixture under tests/fixtures/mcp/, every
//! call syntax, every tool choice (auto, required, none, each tool by name) and one or
//! several calls, texts sampled from the compiled grammar are cut into pieces (whole,
//! one character each, and random cuts from a seeded RNG) and streamed. The events must
//! say what `parse_reply` says of the whole text: the content pieces add up to its
//! `content`, the calls start in order with its names, each call's argument fragments
//! come between its start and the next and add up to the arguments exactly as written
//! (which parse to its `arguments`), and with one-character pieces every character of
//! the arguments comes out at the push that brought it; every sampled text parses. Then hand-written replies (prose before a call, trigger prefixes in prose,
//! escapes in names), broken calls (errors, never panics) and a proptest over texts
//! built from pieces of the call syntaxes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};

use gbnfc_compiler::gbnf::Grammar;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::tools::{
    compile_tools, parse_reply, read_tools, CallParseError, CallStream, StreamEvent, Syntax,
    ToolChoice, ToolOptions,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

use common::{examples, read, seed_examples};

/// Texts sampled per grammar.
const SAMPLES: usize = 40;
/// Random cuts per text (besides whole and one character per piece).
const CUTS: usize = 3;
/// Length the sampler aims to stay under.
const MAX_LEN: u64 = 300;
/// The most calls with parallel calls.
const MAX_CALLS: u32 = 3;

/// The tool lists of tests/tools.rs: the seed examples that are tool lists, a chat
/// request with a `response_format`, and the MCP fixtures.
fn tool_lists() -> Vec<(String, Value)> {
    let mut lists: Vec<(String, Value)> = seed_examples()
        .into_iter()
        .filter(|(_, _, schema)| !schema)
        .map(|(name, value, _)| (name, value))
        .collect();
    let weather = read(&examples().join("weather-tools.openai.json"));
    let card = read(&examples().join("weather-card.response-format.json"));
    lists.push((
        "chat request".to_string(),
        json!({"tools": weather["tools"], "tool_choice": "auto", "response_format": card}),
    ));
    let fixtures = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mcp"));
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let fixture = read(&path);
        lists.push((
            fixture["server"].as_str().unwrap().to_string(),
            fixture["result"].clone(),
        ));
    }
    assert!(lists.len() >= 8, "{:?}", lists.iter().map(|l| &l.0));
    lists
}

fn samples(grammar: &Grammar, seed: u64) -> Vec<String> {
    Sampler::new(grammar).unwrap().samples(
        seed,
        SAMPLES,
        SampleOptions {
            max_len: MAX_LEN,
            ..SampleOptions::default()
        },
    )
}

/// Streams `pieces` then finishes; the events of every push and of `finish`, in order.
fn stream(
    syntax: Syntax,
    calls: bool,
    pieces: &[&str],
) -> Result<Vec<Vec<StreamEvent>>, CallParseError> {
    let mut reader = CallStream::new(syntax, calls);
    let mut out = Vec::with_capacity(pieces.len() + 1);
    for piece in pieces {
        out.push(reader.push(piece)?);
    }
    out.push(reader.finish()?);
    Ok(out)
}

/// `text` cut into pieces: whole, one character each, and `CUTS` random cuts.
fn cuts<'t>(text: &'t str, rng: &mut ChaCha8Rng) -> Vec<Vec<&'t str>> {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let mut all = vec![
        vec![text],
        bounds.windows(2).map(|w| &text[w[0]..w[1]]).collect(),
    ];
    for n in 0..CUTS {
        let longest = [3, 12, 40][n % 3];
        let mut pieces = Vec::new();
        let mut at = 0;
        while at + 1 < bounds.len() {
            let next = (at + rng.random_range(1..=longest)).min(bounds.len() - 1);
            pieces.push(&text[bounds[at]..bounds[next]]);
            at = next;
        }
        all.push(pieces);
    }
    all
}

/// The arguments of each call as written in `text`, found after each call's head.
fn written_arguments(syntax: Syntax, text: &str, names: &[String]) -> Vec<String> {
    let Some(mut from) = text.find(syntax.trigger()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in names {
        let head = format!(
            "{{\"name\": {}, \"{}\": ",
            serde_json::to_string(name).unwrap(),
            syntax.arguments_key()
        );
        let start = from + text[from..].find(&head).unwrap() + head.len();
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        values.next().unwrap().unwrap();
        let end = start + values.byte_offset();
        out.push(text[start..end].to_string());
        from = end;
    }
    out
}

/// How the arguments of a text are known.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// The grammars' exact layout: the arguments as written are found after each head.
    Exact,
    /// Any layout `parse_reply` reads: the fragments must add up to a part of the text
    /// that parses to the arguments.
    Lenient,
}

/// Checks the events of one streamed text against `parse_reply` (or, without calls,
/// against the trimmed text). `one_char`: the pieces were single characters.
fn agree(
    syntax: Syntax,
    calls: bool,
    text: &str,
    pushes: &[Vec<StreamEvent>],
    (layout, one_char): (Layout, bool),
    label: &str,
) {
    let (content, names, values) = if calls {
        let reply = parse_reply(syntax, text).unwrap();
        let names: Vec<String> = reply.calls.iter().map(|c| c.name.clone()).collect();
        let values: Vec<Value> = reply.calls.into_iter().map(|c| c.arguments).collect();
        (reply.content.unwrap_or_default(), names, values)
    } else {
        (text.trim().to_string(), Vec::new(), Vec::new())
    };
    let mut got_content = String::new();
    let mut got_names: Vec<String> = Vec::new();
    let mut got_arguments: Vec<String> = Vec::new();
    let mut fragments = 0;
    for event in pushes.iter().flatten() {
        match event {
            StreamEvent::Content(piece) => {
                assert!(!piece.is_empty(), "{label}: empty content");
                assert!(got_names.is_empty(), "{label}: content after a call");
                got_content.push_str(piece);
            }
            StreamEvent::CallStart { index, name } => {
                assert_eq!(*index, got_names.len(), "{label}: {text:?}");
                got_names.push(name.clone());
                got_arguments.push(String::new());
            }
            StreamEvent::Arguments { index, fragment } => {
                assert!(!fragment.is_empty(), "{label}: empty fragment");
                assert_eq!(
                    *index + 1,
                    got_names.len(),
                    "{label}: fragment out of order"
                );
                got_arguments[*index].push_str(fragment);
                fragments += 1;
            }
        }
    }
    assert_eq!(got_content, content, "{label}: content of {text:?}");
    assert_eq!(got_names, names, "{label}: names in {text:?}");
    for (got, value) in got_arguments.iter().zip(&values) {
        let parsed: Value = serde_json::from_str(got).unwrap();
        assert_eq!(&parsed, value, "{label}: arguments in {text:?}");
        assert!(
            text.contains(got.as_str()),
            "{label}: {got:?} not in {text:?}"
        );
    }
    let arguments = match layout {
        Layout::Exact => {
            let written = written_arguments(syntax, text, &names);
            assert_eq!(got_arguments, written, "{label}: arguments in {text:?}");
            written
        }
        Layout::Lenient => got_arguments,
    };
    if one_char {
        let chars: usize = arguments.iter().map(|a| a.chars().count()).sum();
        assert_eq!(fragments, chars, "{label}: arguments held back in {text:?}");
    }
}

/// Streams `text` cut every way of `cuts` and checks each against the whole text.
fn check_text(
    syntax: Syntax,
    calls: bool,
    (text, layout): (&str, Layout),
    rng: &mut ChaCha8Rng,
    label: &str,
) {
    for (n, pieces) in cuts(text, rng).iter().enumerate() {
        let pushes = stream(syntax, calls, pieces)
            .unwrap_or_else(|e| panic!("{label}: {e}\ntext: {text:?}\npieces: {pieces:?}"));
        agree(syntax, calls, text, &pushes, (layout, n == 1), label);
    }
}

#[derive(Default)]
struct Stats {
    texts: usize,
    calls: usize,
    content: usize,
}

fn property(label: &str, input: &Value, stats: &mut Stats) {
    let list = read_tools(input, None).unwrap();
    let mut choices = vec![ToolChoice::Auto, ToolChoice::Required, ToolChoice::None];
    choices.extend(list.tools.iter().map(|t| ToolChoice::Named(t.name.clone())));
    let mut seed = 0u64;
    for syntax in Syntax::ALL {
        for choice in &choices {
            for parallel in [false, true] {
                seed += 1;
                let label = format!("{label} {syntax} {choice} parallel={parallel}");
                let options = ToolOptions {
                    syntax,
                    choice: Some(choice.clone()),
                    parallel: Some(parallel),
                    max_calls: MAX_CALLS,
                    ..ToolOptions::default()
                };
                let compiled = compile_tools(input, &options).unwrap();
                let Some(grammar) = &compiled.grammar else {
                    continue;
                };
                let calls = *choice != ToolChoice::None;
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                for text in samples(grammar, seed) {
                    stats.texts += 1;
                    if calls {
                        // Every sample parses: serde_json keeps numbers' text, so even
                        // an unconstrained `1e999` is a number.
                        let reply = parse_reply(syntax, &text)
                            .unwrap_or_else(|e| panic!("{label}: {e}\n{text:?}"));
                        stats.calls += reply.calls.len();
                        stats.content += usize::from(reply.content.is_some());
                    } else {
                        stats.content += 1;
                    }
                    check_text(syntax, calls, (&text, Layout::Exact), &mut rng, &label);
                }
            }
        }
    }
}

#[test]
fn sampled_replies_streamed_in_any_pieces_agree_with_parse_reply() {
    let mut stats = Stats::default();
    for (label, input) in tool_lists() {
        property(&label, &input, &mut stats);
    }
    eprintln!(
        "{} texts, {} calls, {} with content",
        stats.texts, stats.calls, stats.content
    );
    assert!(stats.calls > 1000 && stats.content > 100);
}

/// All events of `pieces`, flattened; panics on an error.
fn events(syntax: Syntax, pieces: &[&str]) -> Vec<StreamEvent> {
    stream(syntax, true, pieces)
        .unwrap_or_else(|e| panic!("{pieces:?}: {e}"))
        .concat()
}

fn content(text: &str) -> StreamEvent {
    StreamEvent::Content(text.to_string())
}

fn start(index: usize, name: &str) -> StreamEvent {
    StreamEvent::CallStart {
        index,
        name: name.to_string(),
    }
}

fn args(index: usize, fragment: &str) -> StreamEvent {
    StreamEvent::Arguments {
        index,
        fragment: fragment.to_string(),
    }
}

#[test]
fn prose_then_a_call() {
    let mut reader = CallStream::new(Syntax::Hermes, true);
    assert_eq!(reader.push("  Let me ").unwrap(), [content("Let me")]);
    assert_eq!(reader.push("look.\n<tool").unwrap(), [content(" look.")]);
    assert_eq!(reader.push("_call>\n{\"na").unwrap(), []);
    assert_eq!(
        reader
            .push("me\": \"get_weather\", \"arguments\": {\"city\": \"Che")
            .unwrap(),
        [start(0, "get_weather"), args(0, "{\"city\": \"Che")]
    );
    assert_eq!(
        reader.push("ngdu}\\\"\"}").unwrap(),
        [args(0, "ngdu}\\\"\"}")]
    );
    assert_eq!(reader.push("}\n</tool_call>\n").unwrap(), []);
    assert_eq!(reader.finish().unwrap(), []);

    let text = "Checking. [TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"x\":[1,{}]}, \"id\": \"a1B2c3D4e\"}, {\"name\": \"b\", \"arguments\": {}, \"id\": \"123456789\"}]";
    assert_eq!(
        events(Syntax::Mistral, &[text]),
        [
            content("Checking."),
            start(0, "a"),
            args(0, "{\"x\":[1,{}]}"),
            start(1, "b"),
            args(1, "{}")
        ]
    );
    // A marker inside a string is text.
    let text =
        "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"q\": \"</tool_call>\"}}\n</tool_call>";
    assert_eq!(
        events(Syntax::Hermes, &[text]),
        [start(0, "f"), args(0, "{\"q\": \"</tool_call>\"}")]
    );
    let text = "Two:\n{\"name\": \"a\", \"parameters\": {\"q\": \"{\\\"name\\\": \\\"\"}}\n{\"name\": \"b\", \"parameters\": {}}\n";
    assert_eq!(
        events(Syntax::Llama3, &[text]),
        [
            content("Two:"),
            start(0, "a"),
            args(0, "{\"q\": \"{\\\"name\\\": \\\"\"}"),
            start(1, "b"),
            args(1, "{}")
        ]
    );
}

#[test]
fn trigger_prefixes_in_prose_are_held_then_released() {
    let mut reader = CallStream::new(Syntax::Hermes, true);
    assert_eq!(reader.push("see <tool").unwrap(), [content("see")]);
    assert_eq!(
        reader.push("s and <tool_cal").unwrap(),
        [content(" <tools and")]
    );
    assert_eq!(reader.finish().unwrap(), [content(" <tool_cal")]);

    let mut reader = CallStream::new(Syntax::Mistral, true);
    assert_eq!(
        reader.push("[TOOL_CALL [TOOL_").unwrap(),
        [content("[TOOL_CALL")]
    );
    assert_eq!(reader.push("CALL").unwrap(), []);
    assert_eq!(reader.push("S x").unwrap(), [content(" [TOOL_CALLS x")]);
    assert_eq!(reader.finish().unwrap(), []);

    // `{"name":` without the space is compact JSON, not the trigger.
    let text = "The JSON is {\"name\":\"Ada\"} — {\"name\": \"f\", \"arguments\": {}}";
    assert_eq!(
        events(Syntax::Json, &[text]),
        [
            content("The JSON is {\"name\":\"Ada\"} —"),
            start(0, "f"),
            args(0, "{}")
        ]
    );
    // A prefix of the trigger that overlaps itself: `{"name": {"name": "`.
    let text = "{\"name\": {\"name\": \"f\", \"arguments\": {}}";
    let reply = parse_reply(Syntax::Json, text).unwrap();
    assert_eq!(reply.content.as_deref(), Some("{\"name\":"));
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    check_text(
        Syntax::Json,
        true,
        (text, Layout::Exact),
        &mut rng,
        "overlap",
    );
    for text in [
        "  \n ",
        "",
        "x",
        " 天气 <tool_call",
        "a\u{3000}\n b\t",
        "{\"name\": ",
        "[TOOL_CALLS",
    ] {
        for syntax in Syntax::ALL {
            if !text.contains(syntax.trigger()) {
                check_text(syntax, true, (text, Layout::Exact), &mut rng, "prose");
            }
            check_text(syntax, false, (text, Layout::Exact), &mut rng, "prose");
        }
    }
}

#[test]
fn without_calls_everything_is_content() {
    let text = " <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call> ";
    for syntax in Syntax::ALL {
        let pushes = stream(syntax, false, &[text]).unwrap();
        assert_eq!(pushes.concat(), [content(text.trim())]);
    }
}

#[test]
fn names_are_decoded_and_whitespace_is_forgiven_where_parse_reply_forgives_it() {
    let texts = [
        (Syntax::Json, "{\"name\": \"say \\\"hi\\\" \\u5929\", \"arguments\": {\"a\":\"}\"}}"),
        (Syntax::Json, "{\"name\": \"a\" ,\n \"arguments\" :{ }\t}\n\n  { \"name\":\"b\",\"arguments\":{}}  "),
        (Syntax::Hermes, "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\u{3000}<tool_call>\n\n{\"name\": \"b\", \"arguments\": {\"x\": [\"]\"]}}  \n</tool_call>\n"),
        (Syntax::Mistral, "[TOOL_CALLS] [ {\"name\": \"a\", \"arguments\": {} } ,{\"name\": \"b\", \"arguments\": {}, \"id\" : \"x\"}]\n"),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for (syntax, text) in texts {
        check_text(syntax, true, (text, Layout::Lenient), &mut rng, text);
    }
    let got = events(Syntax::Json, &[texts[0].1]);
    assert_eq!(got[0], start(0, "say \"hi\" 天"));
}

#[test]
fn broken_calls_are_errors() {
    let cases = [
        (
            Syntax::Hermes,
            "<tool_call>hello</tool_call>",
            "expected `{`",
        ),
        (
            Syntax::Hermes,
            "Sure. <tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_cal",
            "ends inside the call",
        ),
        (
            Syntax::Hermes,
            "<tool_call>\n{\"name\": \"a\", \"arguments\": {}} x</tool_call>",
            "expected `</tool_call>`",
        ),
        (
            Syntax::Hermes,
            "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call> and more",
            "unexpected text after the calls",
        ),
        (
            Syntax::Json,
            "{\"name\": \"a\", \"parameters\": {}}",
            "expected `\"arguments\"`",
        ),
        (
            Syntax::Llama3,
            "{\"name\": \"a\", \"parameters\": []}",
            "must be a JSON object",
        ),
        (
            Syntax::Json,
            "{\"name\": \"\", \"arguments\": {}}",
            "non-empty string",
        ),
        (
            Syntax::Json,
            "{\"name\": \"a\\x\", \"arguments\": {}}",
            "invalid JSON",
        ),
        (
            Syntax::Json,
            "{\"name\": \"a\", \"arguments\": {\"x\": tru}}",
            "invalid JSON",
        ),
        (
            Syntax::Json,
            "{\"name\": \"a\", \"arguments\": {}, \"id\": \"x\"}",
            "expected `}` after `arguments`",
        ),
        (
            Syntax::Json,
            "{\"name\": \"a\", \"arguments\": {\"x\": 1}",
            "ends inside the call",
        ),
        (
            Syntax::Json,
            "{\"name\": \"a\", \"arguments\": {}} and more",
            "unexpected text after the calls",
        ),
        (Syntax::Mistral, "[TOOL_CALLS][]", "expected `{`"),
        (
            Syntax::Mistral,
            "[TOOL_CALLS]{\"name\": \"a\", \"arguments\": {}}",
            "expected `[`",
        ),
        (
            Syntax::Mistral,
            "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}, \"id\": 1}]",
            "`id` must be a string",
        ),
        (
            Syntax::Mistral,
            "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}",
            "ends inside the call",
        ),
        (
            Syntax::Mistral,
            "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}] x",
            "unexpected text after the calls",
        ),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for (syntax, text, words) in cases {
        assert!(
            parse_reply(syntax, text).is_err(),
            "parse_reply accepts {text:?}"
        );
        for pieces in cuts(text, &mut rng) {
            let err = stream(syntax, true, &pieces).unwrap_err().to_string();
            assert!(err.contains(words), "{text:?} in {pieces:?}: {err}");
        }
    }
    // The error stays.
    let mut reader = CallStream::new(Syntax::Hermes, true);
    let err = reader.push("<tool_call>x").unwrap_err();
    assert_eq!(reader.push("more").unwrap_err(), err);
    assert_eq!(reader.finish().unwrap_err(), err);
}

/// Pieces of the call syntaxes, to build texts that are often almost calls.
const PIECES: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<tool_",
    "[TOOL_CALLS]",
    "[TOOL_",
    "{\"name\": \"",
    "{\"name\":",
    "\"name\"",
    "\"arguments\"",
    "\"parameters\"",
    "\"id\"",
    ", \"arguments\": ",
    ", \"parameters\": ",
    ", \"id\": \"a1B2c3D4e\"",
    "f\"",
    "\"",
    "\\",
    "\\\"",
    "{",
    "}",
    "[",
    "]",
    ":",
    ", ",
    ",",
    " ",
    "\n",
    "\t",
    "\u{3000}",
    "x",
    "1",
    "1e999",
    "tru",
    "天",
    "é",
];

/// Strings for names and argument values: escapes, brackets and markers inside strings.
const WORDS: &[&str] = &[
    "f",
    "get_weather",
    "say \"hi\"",
    "天气",
    "a\\b",
    "}",
    "]}",
    "{\"name\": \"",
    "<tool_call>",
    "[TOOL_CALLS]",
    "line\nbreak",
    "\u{1F600}",
    "",
];

fn random_value(rng: &mut ChaCha8Rng, depth: u32) -> Value {
    match rng.random_range(0..if depth == 0 { 4 } else { 6 }) {
        0 => Value::Null,
        1 => json!(rng.random_bool(0.5)),
        2 => json!(rng.random_range(-1000..1000) as f64 / 8.0),
        3 => json!(WORDS[rng.random_range(0..WORDS.len())]),
        4 => Value::Array(
            (0..rng.random_range(0..3))
                .map(|_| random_value(rng, depth - 1))
                .collect(),
        ),
        _ => random_object(rng, depth - 1),
    }
}

fn random_object(rng: &mut ChaCha8Rng, depth: u32) -> Value {
    let mut map = serde_json::Map::new();
    for _ in 0..rng.random_range(0..3) {
        let key = WORDS[rng.random_range(0..WORDS.len())].to_string();
        map.insert(key, random_value(rng, depth));
    }
    Value::Object(map)
}

/// A reply in the grammars' exact layout: maybe prose, then one to three calls.
fn random_reply(syntax: Syntax, rng: &mut ChaCha8Rng) -> String {
    let mut text = String::new();
    if rng.random_bool(0.5) {
        for _ in 0..rng.random_range(0..8) {
            text.push_str(PIECES[rng.random_range(0..PIECES.len())]);
        }
        text.push(' ');
    }
    let (open, close) = (syntax.open(), syntax.close());
    let (before, after) = syntax.wrap();
    text.push_str(open);
    for i in 0..rng.random_range(1..=3) {
        if i > 0 {
            text.push_str(syntax.separator());
        }
        let name = WORDS[rng.random_range(0..WORDS.len() - 1)];
        let arguments = random_object(rng, 2);
        let arguments = if rng.random_bool(0.5) {
            serde_json::to_string(&arguments).unwrap()
        } else {
            serde_json::to_string_pretty(&arguments).unwrap()
        };
        text.push_str(before);
        text.push_str(&syntax.call_head(name));
        text.push_str(&arguments);
        if syntax.has_id() {
            text.push_str(", \"id\": \"a1B2c3D4e\"");
        }
        text.push('}');
        text.push_str(after);
    }
    text.push_str(close);
    text
}

/// `text` with one piece inserted, or one character removed, somewhere.
fn mutate(text: &str, rng: &mut ChaCha8Rng) -> String {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let at = bounds[rng.random_range(0..bounds.len())];
    let mut out = text[..at].to_string();
    if rng.random_bool(0.5) {
        out.push_str(PIECES[rng.random_range(0..PIECES.len())]);
        out.push_str(&text[at..]);
    } else {
        out.extend(text[at..].chars().skip(1));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn replies_and_their_mutations_in_any_pieces(syntax in 0..4usize, seed in any::<u64>()) {
        let syntax = Syntax::ALL[syntax];
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let text = random_reply(syntax, &mut rng);
        let mut texts = vec![(text.clone(), true)];
        texts.extend((0..3).map(|_| (mutate(&text, &mut rng), false)));
        for (text, exact) in texts {
            let reply = Some(parse_reply(syntax, &text));
            if exact {
                // Some prose pieces contain the trigger: then the text is no reply of a grammar.
                let Some(Ok(_)) = reply else { continue };
                check_text(syntax, true, (&text, Layout::Exact), &mut rng, "random reply");
                continue;
            }
            let whole = stream(syntax, true, &[&text]);
            for (n, pieces) in cuts(&text, &mut rng).iter().enumerate() {
                let result = stream(syntax, true, pieces);
                prop_assert_eq!(whole.is_ok(), result.is_ok(), "{:?}", pieces);
                if let (Some(Ok(_)), Ok(pushes)) = (&reply, result) {
                    agree(syntax, true, &text, &pushes, (Layout::Lenient, n == 1), "mutation");
                }
            }
        }
    }

    #[test]
    fn any_text_in_any_pieces_never_panics_and_agrees_when_both_accept(
        picks in proptest::collection::vec(0..PIECES.len(), 0..40),
        syntax in 0..4usize,
        calls in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let syntax = Syntax::ALL[syntax];
        let text: String = picks.iter().map(|&i| PIECES[i]).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let accepted = !calls || matches!(Some(parse_reply(syntax, &text)), Some(Ok(_)));
        let whole = stream(syntax, calls, &[&text]);
        for (n, pieces) in cuts(&text, &mut rng).iter().enumerate() {
            let result = stream(syntax, calls, pieces);
            // The verdict does not depend on the cut.
            prop_assert_eq!(whole.is_ok(), result.is_ok(), "{:?}", pieces);
            if let (true, Ok(pushes)) = (accepted, result) {
                agree(syntax, calls, &text, &pushes, (Layout::Lenient, n == 1), "proptest");
            }
        }
    }
}
