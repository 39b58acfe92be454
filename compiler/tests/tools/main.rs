//! Tool lists → GBNF, end to end.
//!
//! For every seed tool list in ../shared/examples/ (and a chat request body built from
//! them, with a `response_format`), every real MCP server fixture under
//! tests/fixtures/mcp/, every call syntax, every tool choice (auto, required, none, and
//! each tool forced by name) and one or several calls: the grammar passes `check`, and
//! each of 200 sampled texts is read back with `parse_tool_calls` — every call names a
//! tool of the list (the forced one when one is forced), the number of calls is 1 (or 1
//! to `max_calls` with parallel calls), Mistral ids are nine letters and digits, and the
//! arguments validate against the tool's schema under the `jsonschema` crate (samples of
//! tools whose schema has validation-only keywords are counted apart, as in the schema
//! property tests). Under `auto`, texts without the trigger are prose (or the
//! `response_format` answer, validated against its schema), and the prose branch accepts
//! ordinary answers and rejects every text containing the trigger.
//!
//! Bad input ends in a clear error that names the tool and the JSON pointer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gbnfc_compiler::gbnf::{self, Grammar};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::schema::KeywordStatus;
use gbnfc_compiler::tools::{
    compile_tools, parse_tool_calls, prose_grammar, read_tools, write_calls, CompiledTools,
    InputFormat, Syntax, ToolCall, ToolChoice, ToolOptions, ToolsError, MISTRAL_ID_LEN,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

use common::{examples, read, seed_examples};

mod errors;
mod shown;
mod structural_tag;

/// Texts sampled per grammar.
const SAMPLES: usize = 200;
/// Length the sampler aims to stay under.
const MAX_LEN: u64 = 400;
/// The most calls with parallel calls, small enough that samples reach it.
const MAX_CALLS: u32 = 3;

fn fixtures() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mcp")).to_path_buf()
}

/// The seed examples that are tool lists, by file name. The others are schemas and
/// response formats, which `read_tools` must refuse.
fn seed_tool_lists() -> Vec<(String, Value)> {
    let mut lists = Vec::new();
    for (name, value, schema) in seed_examples() {
        if schema {
            assert!(
                read_tools(&value, None).is_err(),
                "{name} is not a tool list"
            );
        } else {
            read_tools(&value, None).unwrap_or_else(|e| panic!("{name}: {e}"));
            lists.push((name, value));
        }
    }
    assert!(lists.len() >= 5, "seed tool lists: {lists:?}");
    lists
}

/// An OpenAI chat request body: the weather tools, a strict twin of `get_weather`, the
/// forecast tool, and the weather card as `response_format`.
fn chat_request() -> Value {
    let weather = read(&examples().join("weather-tools.openai.json"));
    let forecast = read(&examples().join("forecast.tools.json"));
    let card = read(&examples().join("weather-card.response-format.json"));
    let mut strict = weather["tools"][0].clone();
    strict["function"]["name"] = json!("get_weather_strict");
    strict["function"]["strict"] = json!(true);
    let mut tools = weather["tools"].as_array().unwrap().clone();
    tools.push(strict);
    tools.extend(forecast["tools"].as_array().unwrap().iter().cloned());
    json!({
        "model": "local",
        "messages": [{"role": "user", "content": "Weather in Chengdu tomorrow?"}],
        "tools": tools,
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "response_format": card,
    })
}

/// The captured `tools/list` results, each as a JSON-RPC response around the result (as
/// a client receives it) and as the bare result.
fn mcp_fixtures() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let fixture = read(&path);
        let server = fixture["server"].as_str().unwrap();
        let version = fixture["version"].as_str().unwrap();
        assert!(!version.is_empty() && fixture["captured"].is_string());
        let result = fixture["result"].clone();
        assert!(result["tools"].as_array().is_some_and(|t| !t.is_empty()));
        out.push((
            format!("{server}@{version}"),
            json!({"jsonrpc": "2.0", "id": 2, "result": result}),
        ));
    }
    let servers: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
    for want in [
        "@modelcontextprotocol/server-filesystem@",
        "@modelcontextprotocol/server-everything@",
        "mcp-server-time@",
        "@modelcontextprotocol/server-memory@",
        "mcp-server-git@",
        "mcp-server-fetch@",
    ] {
        assert!(
            servers.iter().any(|s| s.starts_with(want)),
            "{want} missing: {servers:?}"
        );
    }
    out
}

#[derive(Default)]
struct Stats {
    grammars: usize,
    samples: usize,
    calls: usize,
    prose: usize,
    answers: usize,
    needing_validation: usize,
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|e| panic!("jsonschema refuses {schema}: {e}"))
}

/// Everything about one compiled tool list needed to judge its samples.
struct Judge<'c> {
    label: String,
    compiled: &'c CompiledTools,
    validators: &'c BTreeMap<String, jsonschema::Validator>,
    answer: Option<&'c jsonschema::Validator>,
    /// The compiled grammar's recognizer.
    recognizer: &'c Recognizer,
}

impl Judge<'_> {
    /// The calls written back as a chat history shows them (`write_calls`): the grammar
    /// accepts that text, and it reads back as the same calls.
    fn written_back(&self, calls: &[ToolCall], text: &str) {
        let syntax = self.compiled.syntax;
        let written = write_calls(syntax, calls);
        assert!(
            self.recognizer.recognize(&written).accepted,
            "{}: the grammar rejects the calls written back
sample: {text}
written: {written}",
            self.label
        );
        let again = parse_tool_calls(syntax, &written).unwrap();
        assert_eq!(again, calls, "{}: {written}", self.label);
    }

    /// Judges a text of calls; returns how many calls it has.
    fn calls(&self, text: &str, stats: &mut Stats) -> u32 {
        let calls = match parse_tool_calls(self.compiled.syntax, text) {
            Ok(calls) => calls,
            Err(e) => panic!("{}: a sample is no call: {e}\n{text}", self.label),
        };
        exact_layout(self.compiled.syntax, text, &calls, &self.label);
        self.written_back(&calls, text);
        let n = calls.len() as u32;
        assert!(
            n >= 1 && n <= self.compiled.max_calls,
            "{}: {n} calls\n{text}",
            self.label
        );
        if !self.compiled.parallel {
            assert_eq!(n, 1, "{}", self.label);
        }
        for call in calls {
            stats.calls += 1;
            if let ToolChoice::Named(forced) = &self.compiled.choice {
                assert_eq!(&call.name, forced, "{}: {text}", self.label);
            }
            let tool = self
                .compiled
                .tool(&call.name)
                .unwrap_or_else(|| panic!("{}: unknown tool {}\n{text}", self.label, call.name));
            match (self.compiled.syntax, &call.id) {
                (Syntax::Mistral, Some(id)) => assert!(
                    id.len() == MISTRAL_ID_LEN && id.chars().all(|c| c.is_ascii_alphanumeric()),
                    "{}: id {id}",
                    self.label
                ),
                (Syntax::Mistral, None) => panic!("{}: no id\n{text}", self.label),
                (_, id) => assert!(id.is_none()),
            }
            let validator = &self.validators[&call.name];
            if !validator.is_valid(&call.arguments) {
                if tool.needs_validation {
                    stats.needing_validation += 1;
                    continue;
                }
                let error = validator.validate(&call.arguments).unwrap_err();
                panic!(
                    "{}: arguments of `{}` violate its schema ({} at {}), and no keyword is validation-only\ntext: {text}\nschema: {}",
                    self.label,
                    call.name,
                    error,
                    error.instance_path(),
                    tool.spec.parameters
                );
            }
        }
        n
    }

    /// A text of the non-call branch of `auto` (or of `none`).
    fn answer(&self, text: &str, stats: &mut Stats) {
        match self.answer {
            Some(validator) => {
                stats.answers += 1;
                let value: Value = serde_json::from_str(text)
                    .unwrap_or_else(|e| panic!("{}: answer is not JSON ({e}): {text}", self.label));
                if !validator.is_valid(&value) {
                    assert!(
                        self.compiled.answer_needs_validation,
                        "{}: answer violates the response_format: {text}",
                        self.label
                    );
                    stats.needing_validation += 1;
                }
            }
            None => {
                stats.prose += 1;
                assert!(!text.is_empty());
                assert!(
                    !text.contains(self.compiled.syntax.trigger()),
                    "{}",
                    self.label
                );
                assert!(
                    parse_tool_calls(self.compiled.syntax, text).is_err(),
                    "{}: {text}",
                    self.label
                );
            }
        }
    }
}

/// The text is byte for byte the syntax's layout of these calls: the markers, the call
/// objects' keys with one space after each colon and comma, the separators — read
/// independently of `parse_tool_calls`, which forgives whitespace.
fn exact_layout(syntax: Syntax, text: &str, calls: &[ToolCall], label: &str) {
    // (open, separator, before each call, arguments key, after each call, close), as
    // CONTEXT.md and grammars/tool-call-*.gbnf give them.
    let (open, separator, before, key, after, close) = match syntax {
        Syntax::Json => ("", "\n", "", "arguments", "", ""),
        Syntax::Hermes => ("", "\n", "<tool_call>\n", "arguments", "\n</tool_call>", ""),
        Syntax::Llama3 => ("", "\n", "", "parameters", "", ""),
        Syntax::Mistral => ("[TOOL_CALLS][", ", ", "", "arguments", "", "]"),
    };
    let mut rest = text;
    let expect = |want: &str, rest: &mut &str| {
        assert!(
            rest.starts_with(want),
            "{label}: expected {want:?} at {rest:?}\nin {text:?}"
        );
        *rest = &rest[want.len()..];
    };
    expect(open, &mut rest);
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            expect(separator, &mut rest);
        }
        expect(before, &mut rest);
        let name = serde_json::to_string(&call.name).unwrap();
        expect(&format!("{{\"name\": {name}, \"{key}\": "), &mut rest);
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        assert!(
            matches!(stream.next(), Some(Ok(Value::Object(_)))),
            "{label}: {text:?}"
        );
        rest = &rest[stream.byte_offset()..];
        if syntax == Syntax::Mistral {
            let id = call.id.as_deref().unwrap_or_default();
            expect(&format!(", \"id\": \"{id}\""), &mut rest);
        }
        expect("}", &mut rest);
        expect(after, &mut rest);
    }
    expect(close, &mut rest);
    assert!(rest.is_empty(), "{label}: trailing {rest:?}");
}

fn clean(grammar: &Grammar, label: &str) {
    let findings = gbnf::check(grammar);
    assert!(findings.is_empty(), "{label}: {findings:?}\n{grammar}");
    for rule in &grammar.rules {
        assert!(
            rule.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "{label}: {}",
            rule.name
        );
    }
}

fn samples(grammar: &Grammar, seed: u64, n: usize) -> Vec<String> {
    Sampler::new(grammar).unwrap().samples(
        seed,
        n,
        SampleOptions {
            max_len: MAX_LEN,
            ..SampleOptions::default()
        },
    )
}

/// Ordinary answers the prose branch must accept.
const ORDINARY: &[&str] = &[
    "It is 21 °C and sunny in Chengdu.",
    "Sure!\n\n1. Take an umbrella.\n2. Leave early.",
    "天气晴朗，适合出行。",
    "The JSON you want is {\"name\":\"Ada\"} — compact, as asked.",
    "Use <b>bold</b> or [links](http://x.y) as you like.",
    "Almost a trigger: <tool_cal [TOOL_CALL {\"name\":",
    "x",
];

/// Runs the whole property over one tool list: every syntax, choice and parallelism.
fn property(label: &str, input: &Value, stats: &mut Stats) {
    let list = read_tools(input, None).unwrap();
    let mut choices = vec![ToolChoice::Auto, ToolChoice::Required, ToolChoice::None];
    choices.extend(list.tools.iter().map(|t| ToolChoice::Named(t.name.clone())));
    let validators: BTreeMap<String, jsonschema::Validator> = list
        .tools
        .iter()
        .map(|t| (t.name.clone(), validator(&t.parameters)))
        .collect();
    let answer_schema = list.response_format.as_ref().map(|rf| {
        let mut schema = rf.value["json_schema"]["schema"].clone();
        if rf.value["json_schema"]["strict"] == true {
            close(&mut schema);
        }
        schema
    });
    let answer_validator = answer_schema.as_ref().map(validator);
    let mut seed = 0u64;
    for syntax in Syntax::ALL {
        let mut most_calls = 0;
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
                let compiled =
                    compile_tools(input, &options).unwrap_or_else(|e| panic!("{label}: {e}"));
                let again = compile_tools(input, &options).unwrap();
                assert_eq!(
                    compiled.grammar.as_ref().map(ToString::to_string),
                    again.grammar.as_ref().map(ToString::to_string),
                    "{label}: not deterministic"
                );
                let Some(grammar) = &compiled.grammar else {
                    assert_eq!(*choice, ToolChoice::None, "{label}");
                    assert!(answer_schema.is_none());
                    assert!(compiled.lazy_grammar.is_none() && compiled.triggers.is_empty());
                    continue;
                };
                let recognizer = Recognizer::new(grammar).unwrap();
                let judge = Judge {
                    label: label.clone(),
                    compiled: &compiled,
                    validators: &validators,
                    answer: answer_validator.as_ref(),
                    recognizer: &recognizer,
                };
                stats.grammars += 1;
                clean(grammar, &label);
                let lazy = match choice {
                    ToolChoice::Auto => {
                        let lazy = compiled
                            .lazy_grammar
                            .as_ref()
                            .expect("auto has a lazy grammar");
                        clean(lazy, &label);
                        let trigger = match syntax {
                            Syntax::Json | Syntax::Llama3 => "{\"name\": \"",
                            Syntax::Hermes => "<tool_call>",
                            Syntax::Mistral => "[TOOL_CALLS]",
                        };
                        assert_eq!(compiled.triggers, [trigger]);
                        Some(Recognizer::new(lazy).unwrap())
                    }
                    _ => {
                        assert!(compiled.lazy_grammar.is_none() && compiled.triggers.is_empty());
                        None
                    }
                };
                let mut calls_seen = 0;
                for text in samples(grammar, seed, SAMPLES) {
                    stats.samples += 1;
                    let is_call = match choice {
                        ToolChoice::None => false,
                        ToolChoice::Auto => text.starts_with(syntax.trigger()),
                        _ => true,
                    };
                    if is_call {
                        calls_seen += 1;
                        let n = judge.calls(&text, stats);
                        if parallel {
                            most_calls = most_calls.max(n);
                        }
                        if let Some(lazy) = &lazy {
                            assert!(
                                lazy.recognize(&text).accepted,
                                "{label}: lazy grammar rejects {text}"
                            );
                        }
                    } else {
                        judge.answer(&text, stats);
                    }
                }
                if *choice != ToolChoice::None {
                    assert!(calls_seen > 0, "{label}: no call in {SAMPLES} samples");
                }
                if let Some(lazy) = &compiled.lazy_grammar {
                    for text in samples(lazy, seed + 10_000, SAMPLES / 4) {
                        stats.samples += 1;
                        assert!(text.starts_with(syntax.trigger()), "{label}: {text}");
                        judge.calls(&text, stats);
                    }
                }
                if *choice == ToolChoice::Auto {
                    prose_branch(&compiled, grammar, answer_schema.is_some(), seed, &label);
                }
            }
        }
        assert!(
            most_calls >= 2,
            "{label} {syntax}: parallel samples never had two calls"
        );
    }
}

/// OpenAI strict mode as the compiler reads a `response_format`: objects closed.
fn close(schema: &mut Value) {
    if let Value::Object(map) = schema {
        if map.get("type") == Some(&json!("object")) && !map.contains_key("additionalProperties") {
            map.insert("additionalProperties".into(), json!(false));
        }
        for (key, child) in map.iter_mut() {
            match key.as_str() {
                "properties" => {
                    if let Value::Object(props) = child {
                        props.values_mut().for_each(close);
                    }
                }
                "items" => close(child),
                _ => {}
            }
        }
    }
}

/// The prose branch of `auto`: ordinary answers in, the trigger anywhere out.
fn prose_branch(
    compiled: &CompiledTools,
    grammar: &Grammar,
    has_answer: bool,
    seed: u64,
    label: &str,
) {
    let recognizer = Recognizer::new(grammar).unwrap();
    let trigger = compiled.syntax.trigger();
    if has_answer {
        assert!(
            !recognizer.recognize(ORDINARY[0]).accepted,
            "{label}: prose beside a response_format"
        );
        return;
    }
    for text in ORDINARY {
        assert!(
            recognizer.recognize(text).accepted,
            "{label}: rejects {text:?}"
        );
    }
    let prose = samples(&prose_grammar(trigger), seed, 20);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for text in prose
        .iter()
        .map(String::as_str)
        .chain(ORDINARY.iter().copied())
    {
        // Insert the trigger past the first character: a call starts with the trigger,
        // so the result can only be prose, which must not contain it.
        let chars: Vec<char> = text.chars().collect();
        let at = rng.random_range(1..=chars.len());
        let mut with: String = chars[..at].iter().collect();
        with.push_str(trigger);
        with.extend(&chars[at..]);
        if with.starts_with(trigger) {
            continue;
        }
        assert!(
            !recognizer.recognize(&with).accepted,
            "{label}: accepts {with:?}"
        );
    }
}

#[test]
fn seed_examples_every_syntax_choice_and_parallelism() {
    let mut stats = Stats::default();
    for (name, input) in seed_tool_lists() {
        property(&name, &input, &mut stats);
    }
    property("chat request", &chat_request(), &mut stats);
    eprintln!(
        "seed examples: {} grammars, {} samples, {} calls, {} prose, {} answers, {} needing validation",
        stats.grammars, stats.samples, stats.calls, stats.prose, stats.answers, stats.needing_validation
    );
    assert!(stats.answers > 0 && stats.prose > 0 && stats.calls > 0);
}

#[test]
fn real_mcp_servers_every_syntax_choice_and_parallelism() {
    let mut stats = Stats::default();
    for (name, input) in mcp_fixtures() {
        property(&name, &input, &mut stats);
    }
    eprintln!(
        "MCP servers: {} grammars, {} samples, {} calls, {} prose, {} needing validation",
        stats.grammars, stats.samples, stats.calls, stats.prose, stats.needing_validation
    );
}
