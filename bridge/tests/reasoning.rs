//! Reasoning on the real default model (SmolLM2-135M-Instruct, CPU) under a real reasoning
//! model's chat template (DeepSeek-R1-Distill-Qwen's, `tests/fixtures`): the markers are
//! found in the template, the model thinks freely, and the answer is exact. Every example
//! schema and tool list of `../shared/examples`, 20 seeds at temperature 1.0, reasoning
//! budgets of 0 (no thinking), 3 (too few tokens for a sentence), 16 and 48 in turn: every
//! answer validates (checked here with validators built by hand, independently of the
//! bridge), every section is closed, every budget is kept.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use gbnfc_bridge::engine::{Engine, EngineOptions};
use gbnfc_bridge::reasoning::{ReasoningMode, ReasoningRequest};
use gbnfc_bridge::structured::{self, OutputSpec, Prepared, StructuredOptions};
use gbnfc_bridge::tool_calls::{call, CallSpec, PreparedCalls};
use gbnfc_bridge::{chat, GenerateOptions, Stats};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::tools::ToolChoice;
use serde_json::Value;

const SEEDS: u32 = 20;

/// The reasoning budgets the seeds take in turn.
const BUDGETS: [usize; 4] = [0, 3, 16, 48];

fn fixture_template() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/deepseek-r1-distill-qwen-7b.chat_template.jinja");
    std::fs::read_to_string(path).unwrap()
}

/// The default model under the reasoning template.
fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        Engine::load(&EngineOptions {
            threads: Some(2),
            ctx: 2048,
            chat_template: Some(fixture_template()),
            ..EngineOptions::default()
        })
        .unwrap_or_else(|e| {
            panic!("{e} (the tests need the default model: run scripts/fetch-model)")
        })
    })
}

fn example(name: &str) -> Value {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/examples")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (CI lays ../shared beside the clone)",
            path.display()
        )
    }))
    .unwrap()
}

fn sampling(seed: u32, max_tokens: usize) -> GenerateOptions {
    GenerateOptions {
        seed,
        temperature: 1.0,
        max_tokens,
        reasoning_budget: BUDGETS[seed as usize % BUDGETS.len()],
        ..GenerateOptions::default()
    }
}

/// Tokens of the two markers, which the budget does not count.
fn marker_tokens() -> usize {
    let markers = engine().reasoning().unwrap().markers();
    engine().tokenize_text(markers.open()).len() + engine().tokenize_text(markers.close()).len()
}

/// The section closed and its budget kept: the model drew at most `budget` tokens in it.
fn check_section(what: &str, reasoning: Option<&str>, stats: &Stats, budget: usize) {
    let reasoning = reasoning.unwrap_or_else(|| panic!("{what}: no reasoning section"));
    let close = engine().reasoning().unwrap().markers().close();
    assert!(!reasoning.contains(close), "{what}: {reasoning:?}");
    assert!(
        stats.reasoning_tokens <= budget + marker_tokens(),
        "{what}: {} reasoning tokens over a budget of {budget}: {reasoning:?}",
        stats.reasoning_tokens
    );
    assert!(
        stats.reasoning_tokens < stats.generated_tokens,
        "{what}: no answer"
    );
    if budget == 0 {
        assert_eq!(reasoning, "", "{what}");
    }
}

/// The reasoning the answer grammar rejects, among those seen: evidence that the grammar
/// never applied inside the section.
fn rejected_by(recognizer: &Recognizer, reasoning: Option<&str>) -> usize {
    reasoning.map_or(0, |r| {
        usize::from(!r.is_empty() && !recognizer.recognize(r).accepted)
    })
}

fn schema_of(input: &Value) -> Value {
    if input.get("type").and_then(Value::as_str) == Some("json_schema") {
        input["json_schema"]["schema"].clone()
    } else {
        input.clone()
    }
}

fn all_seeds_answer_the_schema(file: &str, prompt: &str) {
    let input = example(file);
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema_of(&input))
        .unwrap();
    let prepared = Prepared::new(&OutputSpec::Schema(input)).unwrap();
    let recognizer = Recognizer::new(&prepared.grammar).unwrap();
    let messages = chat::conversation(None, prompt);
    let mut free = 0;
    for seed in 0..SEEDS {
        let options = StructuredOptions {
            generate: sampling(seed, 192),
            retries: 0,
            ..StructuredOptions::default()
        };
        let what = format!("{file}, seed {seed}");
        let result = structured::run_prepared(engine(), &messages, &prepared, &options)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let value: Value = serde_json::from_str(&result.text)
            .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {}", result.text));
        assert!(validator.is_valid(&value), "{what}: {value}");
        check_section(
            &what,
            result.reasoning.as_deref(),
            &result.stats,
            options.generate.reasoning_budget,
        );
        let message = result.chat_completion("m")["choices"][0]["message"].clone();
        assert_eq!(message["content"].as_str(), Some(result.text.as_str()));
        assert_eq!(
            message["reasoning_content"].as_str(),
            result.reasoning.as_deref()
        );
        free += rejected_by(&recognizer, result.reasoning.as_deref());
    }
    assert!(
        free > 0,
        "{file}: no seed thought in text the answer grammar rejects"
    );
}

#[test]
fn the_template_gives_the_markers() {
    let reasoning = engine().reasoning().expect("markers found in the template");
    assert_eq!(reasoning.markers().open(), "<think>");
    assert_eq!(reasoning.markers().close(), "</think>");
    assert!(
        !reasoning.opened(),
        "llama.cpp's deepseek3 prompt ends at the Assistant tag"
    );
}

#[test]
fn query_order_schema() {
    all_seeds_answer_the_schema("query-order.schema.json", "Find order 1234 for Ana.");
}

#[test]
fn ticket_classification_schema() {
    all_seeds_answer_the_schema(
        "ticket-classification.schema.json",
        "Classify this ticket: my invoice is wrong and I was charged twice.",
    );
}

#[test]
fn weather_card_schema() {
    all_seeds_answer_the_schema(
        "weather-card.schema.json",
        "Make a weather card for Chengdu for tomorrow, with commute advice.",
    );
}

#[test]
fn weather_card_response_format() {
    all_seeds_answer_the_schema(
        "weather-card.response-format.json",
        "Make a weather card for Chengdu for tomorrow, with commute advice.",
    );
}

/// Each tool's name and argument schema, from any of the example shapes.
fn tool_schemas(tools: &Value) -> Vec<(String, Value)> {
    let list = tools
        .get("tools")
        .or_else(|| tools.get("functions"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_else(|| vec![tools.clone()]);
    list.iter()
        .map(|tool| {
            let tool = tool.get("function").unwrap_or(tool);
            let schema = tool
                .get("parameters")
                .or_else(|| tool.get("inputSchema"))
                .cloned()
                .unwrap();
            (tool["name"].as_str().unwrap().to_string(), schema)
        })
        .collect()
}

fn all_seeds_call(file: &str, prompt: &str) {
    let tools = example(file);
    let schemas = tool_schemas(&tools);
    let spec = CallSpec {
        tools,
        choice: Some(ToolChoice::Required),
        retries: 0,
        ..CallSpec::default()
    };
    let prepared = PreparedCalls::new(engine(), &spec).unwrap();
    let messages = chat::conversation(None, prompt);
    for seed in 0..SEEDS {
        let options = sampling(seed, 192);
        let what = format!("{file}, seed {seed}");
        let reply = call(engine(), &messages, &prepared, &options, 0)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            !reply.message.tool_calls.is_empty(),
            "{what}: {}",
            reply.text
        );
        for tool_call in &reply.message.tool_calls {
            let (_, schema) = schemas
                .iter()
                .find(|(name, _)| *name == tool_call.name)
                .unwrap_or_else(|| panic!("{what}: unknown tool {}", tool_call.name));
            let arguments: Value = serde_json::from_str(&tool_call.arguments).unwrap();
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(schema)
                .unwrap();
            assert!(validator.is_valid(&arguments), "{what}: {arguments}");
        }
        check_section(
            &what,
            reply.message.reasoning_content.as_deref(),
            &reply.stats,
            options.reasoning_budget,
        );
        assert_eq!(
            reply.message.to_json()["reasoning_content"].as_str(),
            reply.message.reasoning_content.as_deref()
        );
    }
}

#[test]
fn weather_tools() {
    all_seeds_call(
        "weather-tools.openai.json",
        "What's the weather in Chengdu tomorrow?",
    );
}

#[test]
fn forecast_tools() {
    all_seeds_call("forecast.tools.json", "Forecast for Chengdu, please.");
}

#[test]
fn file_tools() {
    all_seeds_call(
        "file-tools.mcp-list.json",
        "Write hello into /tmp/notes.txt.",
    );
}

#[test]
fn ticket_tool() {
    all_seeds_call("get-ticket.mcp-tool.json", "Show me ticket T-42.");
}

#[test]
fn location_weather_functions() {
    all_seeds_call(
        "localtion-weather.functions.json",
        "How humid is it in Chengdu now?",
    );
}

#[test]
fn off_applies_the_grammar_from_the_first_token() {
    let engine = Engine::load(&EngineOptions {
        threads: Some(2),
        ctx: 2048,
        chat_template: Some(fixture_template()),
        reasoning: ReasoningRequest {
            mode: ReasoningMode::Off,
            markers: None,
        },
        ..EngineOptions::default()
    })
    .unwrap();
    assert!(engine.reasoning().is_none());
    let prepared = Prepared::new(&OutputSpec::Schema(example("query-order.schema.json"))).unwrap();
    let messages = chat::conversation(None, "Find order 1234 for Ana.");
    let options = StructuredOptions {
        generate: sampling(1, 192),
        ..StructuredOptions::default()
    };
    let result = structured::run_prepared(&engine, &messages, &prepared, &options).unwrap();
    assert_eq!(result.reasoning, None);
    assert_eq!(result.stats.reasoning_tokens, 0);
    assert!(result.text.starts_with('{'), "{}", result.text);
}

#[test]
fn a_template_llama_cpp_cannot_apply_fails_where_prompts_are_made() {
    let engine = Engine::load(&EngineOptions {
        threads: Some(2),
        ctx: 512,
        chat_template: Some("{{ no family llama.cpp knows }}</think>".into()),
        ..EngineOptions::default()
    })
    .unwrap();
    assert!(engine.reasoning().is_some_and(|r| !r.opened()));
    let error = chat::render_prompt(&engine, &chat::conversation(None, "hi")).unwrap_err();
    assert!(error.to_string().contains("chat template"), "{error}");
}
