//! Which tool a small model calls, with and without tool retrieval, with and without the
//! call grammar, on the default model. Prints Markdown for BENCHMARKS.md
//! (`scripts/benchmarks`).
//!
//! Two suites:
//! - **five servers**: the tools of five common MCP servers (filesystem, git, memory, time,
//!   fetch: 38 tools, `compiler/tests/fixtures/mcp`) in one list, and the 40 requests of
//!   `benches/data/five-servers/prompts.json`, each with the tool it needs first. Without
//!   retrieval the list alone is about 5,300 tokens, so the engine runs with an
//!   8,192-token context; retrieval is the default policy (the best 5 when the list takes
//!   more than a quarter of the context).
//! - **BFCL** (with `--bfcl DIR`): the Berkeley Function Calling Leaderboard's `multiple`
//!   (one call, 2–4 candidate functions) and `parallel_multiple` (several calls) from the
//!   gorilla repository (`berkeley-function-call-leaderboard/bfcl_eval/data`: DIR holds
//!   `BFCL_v4_*.json` and `possible_answer/`). Their lists are short, so the default
//!   policy shows every tool; retrieval here is the best 2 (`Top(2)`).
//!
//! Every case runs once per configuration, at the default tool-call settings (temperature
//! 0.2, seed 1), `tool_choice` `required`, no retries. A case is *selected* when the calls
//! name exactly the expected functions (as a multiset), *valid* when the output reads as
//! calls and every call's arguments pass its schema; *shown* when retrieval kept every
//! expected function. Without the grammar the model writes freely and the same reader
//! judges it.
//!
//! `cargo run --release -p gbnfc-benches --bin tool_eval -- [--bfcl DIR] [--limit N]
//! [--free-limit N] [--bfcl-only]` (`--limit`: the first N cases of each suite; default
//! all: 40, 200 and 200; `--free-limit`: the first N of those in the configurations
//! without the grammar, which take twice as long per case and, at 50 cases a suite, never
//! gave a readable call; `--bfcl-only` leaves the five-server suite out).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../../bridge/tests/common/five_servers.rs"]
mod five_servers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use gbnfc_bridge::chat::{self, Message};
use gbnfc_bridge::engine::{Engine, EngineOptions};
use gbnfc_bridge::generate::Generator;
use gbnfc_bridge::tool_calls::{CallSpec, PreparedCalls, TOOL_CALL_TEMPERATURE};
use gbnfc_bridge::tool_retrieval::Retrieval;
use gbnfc_bridge::GenerateOptions;
use gbnfc_compiler::tools::ToolChoice;
use serde_json::{json, Value};

/// One request and what it should call.
struct Case {
    /// The tool list (any shape `read_tools` reads).
    tools: Value,
    /// The conversation.
    messages: Vec<Message>,
    /// The functions the calls should name, sorted (a multiset).
    expected: Vec<String>,
    /// Several calls may be expected.
    parallel: bool,
}

/// How one configuration did on one suite.
#[derive(Default)]
struct Tally {
    cases: usize,
    selected: usize,
    valid: usize,
    shown: usize,
    prompt_tokens: Vec<usize>,
    seconds: f64,
}

fn main() {
    let mut bfcl: Option<PathBuf> = None;
    let mut limit = usize::MAX;
    let mut free_limit = usize::MAX;
    let mut five = true;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bfcl" => bfcl = Some(PathBuf::from(args.next().expect("--bfcl DIR"))),
            "--limit" => limit = args.next().and_then(|n| n.parse().ok()).expect("--limit N"),
            "--free-limit" => {
                free_limit = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--free-limit N")
            }
            "--bfcl-only" => five = false,
            other => panic!(
                "unknown argument {other}: use --bfcl DIR, --limit N, --free-limit N, --bfcl-only"
            ),
        }
    }
    let engine = Engine::load(&EngineOptions {
        ctx: 8192,
        ..EngineOptions::default()
    })
    .expect("the default model (scripts/fetch-model)");

    println!(
        "Default model, `tool_choice` `required`, temperature {TOOL_CALL_TEMPERATURE}, seed 1, \
         no retries; {} threads.\n",
        engine.threads()
    );
    println!("| suite | tools shown | grammar | cases | right tool | valid calls | right tool shown | prompt tokens (median / max) | s per case |");
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|");
    if five {
        let cases: Vec<Case> = five_servers().into_iter().take(limit).collect();
        suite(
            &engine,
            "five MCP servers",
            &cases,
            free_limit,
            Retrieval::Auto,
            "best 5 (default)",
        );
    }
    if let Some(dir) = bfcl {
        for category in ["multiple", "parallel_multiple"] {
            let cases = bfcl_cases(&dir, category, limit);
            let label = format!("BFCL {category}");
            suite(
                &engine,
                &label,
                &cases,
                free_limit,
                Retrieval::Top(2),
                "best 2",
            );
        }
    }
}

/// Runs `cases` under the four configurations and prints a row for each; the
/// configurations without the grammar run the first `free_limit` cases only.
fn suite(
    engine: &Engine,
    label: &str,
    cases: &[Case],
    free_limit: usize,
    retrieval: Retrieval,
    narrowed: &str,
) {
    for (shown, retrieval) in [(narrowed, retrieval), ("all", Retrieval::All)] {
        for grammar in [true, false] {
            eprintln!(
                "tool_eval: {label}, {shown} tools, grammar {}",
                if grammar { "on" } else { "off" }
            );
            let cases = if grammar {
                cases
            } else {
                &cases[..free_limit.min(cases.len())]
            };
            let tally = run(engine, cases, retrieval, grammar);
            let mut tokens = tally.prompt_tokens.clone();
            tokens.sort_unstable();
            let median = tokens.get(tokens.len() / 2).copied().unwrap_or(0);
            let max = tokens.last().copied().unwrap_or(0);
            let percent =
                |n: usize| format!("{n} ({:.0}%)", 100.0 * n as f64 / tally.cases.max(1) as f64);
            println!(
                "| {label} | {shown} | {} | {} | {} | {} | {} | {median} / {max} | {:.1} |",
                if grammar { "on" } else { "off" },
                tally.cases,
                percent(tally.selected),
                percent(tally.valid),
                percent(tally.shown),
                tally.seconds / tally.cases.max(1) as f64,
            );
        }
    }
}

/// One pass over `cases`.
fn run(engine: &Engine, cases: &[Case], retrieval: Retrieval, grammar: bool) -> Tally {
    let mut tally = Tally::default();
    let options = GenerateOptions {
        seed: 1,
        temperature: TOOL_CALL_TEMPERATURE,
        max_tokens: 256,
        ..GenerateOptions::default()
    };
    for case in cases {
        let started = Instant::now();
        let spec = CallSpec {
            tools: case.tools.clone(),
            choice: Some(ToolChoice::Required),
            parallel: Some(case.parallel),
            retries: 0,
            retrieval,
            ..CallSpec::default()
        };
        let prepared = PreparedCalls::for_conversation(engine, &spec, &case.messages)
            .unwrap_or_else(|e| panic!("{e}"));
        tally.cases += 1;
        let shown: Vec<&str> = prepared
            .compiled
            .tools
            .iter()
            .map(|t| t.spec.name.as_str())
            .collect();
        if case
            .expected
            .iter()
            .all(|name| shown.contains(&name.as_str()))
        {
            tally.shown += 1;
        }
        let conversation = prepared.conversation(&case.messages);
        let syntax = prepared.compiled.syntax;
        let prompt = chat::render_prompt_with(engine, None, Some(syntax), &conversation).unwrap();
        let constraint = if grammar {
            prepared.compiled.grammar.as_ref()
        } else {
            None
        };
        let generation = match engine.generate(&prompt, constraint, &options) {
            Ok(generation) => generation,
            Err(e) => {
                // A prompt the context cannot hold counts as a failed case.
                eprintln!("{e}");
                tally.seconds += started.elapsed().as_secs_f64();
                continue;
            }
        };
        tally.prompt_tokens.push(generation.stats.prompt_tokens);
        let (problems, _, calls) = prepared.check(&generation.text);
        let mut called: Vec<String> = calls.iter().map(|c| c.name.clone()).collect();
        called.sort();
        if called == case.expected {
            tally.selected += 1;
        }
        if problems.is_empty() && !calls.is_empty() {
            tally.valid += 1;
        }
        tally.seconds += started.elapsed().as_secs_f64();
    }
    tally
}

/// The five-server list and its 40 requests.
fn five_servers() -> Vec<Case> {
    let tools = json!({"tools": five_servers::mcp_tools()});
    five_servers::prompts()
        .into_iter()
        .map(|(prompt, tool)| Case {
            tools: tools.clone(),
            messages: vec![Message::user(prompt)],
            expected: vec![tool],
            parallel: false,
        })
        .collect()
}

/// The first `limit` cases of a BFCL category: questions and possible answers, line by
/// line (JSON Lines).
fn bfcl_cases(dir: &Path, category: &str, limit: usize) -> Vec<Case> {
    let lines = |path: PathBuf| -> Vec<Value> {
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let questions = lines(dir.join(format!("BFCL_v4_{category}.json")));
    let answers: BTreeMap<String, Value> =
        lines(dir.join(format!("possible_answer/BFCL_v4_{category}.json")))
            .into_iter()
            .map(|a| (a["id"].as_str().unwrap().to_string(), a))
            .collect();
    questions
        .iter()
        .take(limit)
        .map(|q| {
            let id = q["id"].as_str().unwrap();
            let functions: Vec<Value> = q["function"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    json!({"type": "function", "function": {
                        "name": openai_name(f["name"].as_str().unwrap()),
                        "description": f["description"],
                        "parameters": json_schema(&f["parameters"]),
                    }})
                })
                .collect();
            let messages = chat::messages_from_json(&q["question"][0]).unwrap();
            let mut expected: Vec<String> = answers[id]["ground_truth"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|call| call.as_object().unwrap().keys().map(|k| openai_name(k)))
                .collect();
            expected.sort();
            Case {
                tools: Value::Array(functions),
                messages,
                expected,
                parallel: category.starts_with("parallel"),
            }
        })
        .collect()
}

/// A BFCL function name as OpenAI tools spell it (BFCL's own OpenAI handler does the
/// same): `math.factorial` → `math_factorial`.
fn openai_name(name: &str) -> String {
    name.replace('.', "_")
}

/// A BFCL parameter schema in JSON Schema: its type names are Python's (`dict`, `float`,
/// `tuple`, `any`), and its `optional` markers (beside `required`, which says the same)
/// are left out.
fn json_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (key, value) in map {
                let value = match key.as_str() {
                    "optional" => continue,
                    "type" => match value.as_str() {
                        Some("dict") => json!("object"),
                        Some("float") => json!("number"),
                        Some("tuple") => json!("array"),
                        Some("any") => continue,
                        _ => value.clone(),
                    },
                    "properties" => Value::Object(
                        value
                            .as_object()
                            .unwrap()
                            .iter()
                            .map(|(name, property)| (name.clone(), json_schema(property)))
                            .collect(),
                    ),
                    "items" | "additionalProperties" => json_schema(value),
                    _ => value.clone(),
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}
