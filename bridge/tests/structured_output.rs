//! Structured output on the real default model (SmolLM2-135M-Instruct, CPU): for each
//! example schema, 20 seeds at temperature 1.0 all give valid results — checked here with
//! a validator built independently of the bridge's — and the same prompts without the
//! grammar do not. `scripts/fetch-model` fetches the model.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use gbnfc_bridge::chat::{self, Message};
use gbnfc_bridge::engine::{Engine, EngineOptions};
use gbnfc_bridge::structured::{self, OutputSpec, Prepared, StructuredOptions};
use gbnfc_bridge::{generate, BridgeError, Finish, GenerateOptions};
use serde_json::Value;

const SEEDS: u32 = 20;

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        Engine::load(&EngineOptions {
            threads: Some(2),
            ctx: 2048,
            ..EngineOptions::default()
        })
        .unwrap_or_else(|e| {
            panic!("{e} (the tests need the default model: run scripts/fetch-model)")
        })
    })
}

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

fn example(name: &str) -> Value {
    let path = shared().join("examples").join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (CI lays ../shared beside the clone)",
            path.display()
        )
    }))
    .unwrap()
}

/// A validator built here, from the schema alone (a response_format is unwrapped by hand).
fn independent_validator(input: &Value) -> jsonschema::Validator {
    let schema = if input.get("type").and_then(Value::as_str) == Some("json_schema") {
        input["json_schema"]["schema"].clone()
    } else {
        input.clone()
    };
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

fn options(seed: u32, max_tokens: usize) -> StructuredOptions {
    StructuredOptions {
        generate: GenerateOptions {
            seed,
            temperature: 1.0,
            top_p: 0.95,
            max_tokens,
            ..GenerateOptions::default()
        },
        ..StructuredOptions::default()
    }
}

/// Runs `SEEDS` seeds and checks every result; returns the values.
fn all_seeds_valid(file: &str, prompt: &str, max_tokens: usize) -> Vec<Value> {
    let input = example(file);
    let validator = independent_validator(&input);
    let prepared = Prepared::new(&OutputSpec::Schema(input)).unwrap();
    let messages = chat::conversation(None, prompt);
    let started = Instant::now();
    let mut values = Vec::new();
    let (mut closed_out, mut tokens) = (0, 0);
    for seed in 0..SEEDS {
        let result =
            structured::run_prepared(engine(), &messages, &prepared, &options(seed, max_tokens))
                .unwrap_or_else(|e| panic!("{file}, seed {seed}: {e}"));
        let value: Value = serde_json::from_str(&result.text)
            .unwrap_or_else(|e| panic!("{file}, seed {seed}: not JSON ({e}): {}", result.text));
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{file}, seed {seed}: {errors:?}\n{}",
            result.text
        );
        assert_eq!(
            result.attempts, 1,
            "{file}, seed {seed}: the grammar alone should give a valid result"
        );
        assert!(result.stats.generated_tokens <= max_tokens);
        closed_out += usize::from(result.stats.closed_out_tokens > 0);
        tokens += result.stats.generated_tokens;
        values.push(value);
    }
    eprintln!(
        "{file}: {SEEDS} valid of {SEEDS}; {closed_out} closed out; {tokens} tokens in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    values
}

#[test]
fn weather_card_schema_is_valid_for_every_seed() {
    all_seeds_valid(
        "weather-card.schema.json",
        "Make a weather card for Chengdu for tomorrow, with commute advice.",
        160,
    );
}

#[test]
fn weather_card_response_format_is_valid_for_every_seed() {
    let values = all_seeds_valid(
        "weather-card.response-format.json",
        "Make a weather card for Chengdu for tomorrow, with commute advice.",
        160,
    );
    for value in values {
        assert!(value["weather"]["temp_high"].is_number(), "{value}");
    }
}

#[test]
fn ticket_classification_is_valid_for_every_seed() {
    let values = all_seeds_valid(
        "ticket-classification.schema.json",
        "Classify this support ticket: I paid for order O20240517000123 yesterday but it still shows as unpaid.",
        96,
    );
    for value in values {
        let confidence = value["confidence"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&confidence), "{value}");
    }
}

#[test]
fn query_order_is_valid_for_every_seed() {
    let values = all_seeds_valid(
        "query-order.schema.json",
        "Where is my order O202405170001234? Please include the shipping status.",
        96,
    );
    for value in values {
        // The pattern, the const and the length bounds, checked by hand as well.
        assert_eq!(value["schemaVersion"], "query_order_v1");
        let id = value["orderId"].as_str().unwrap();
        assert!(id.starts_with('O') && (13..=21).contains(&id.len()), "{id}");
        assert!(id[1..].bytes().all(|b| b.is_ascii_digit()), "{id}");
        let key = value["idempotencyKey"].as_str().unwrap().chars().count();
        assert!((16..=80).contains(&key), "{value}");
        assert!(value["includeLogistics"].is_boolean());
    }
}

/// Without the grammar, the same prompts (schema shown in the system prompt, as in the
/// constrained runs) often give output that is not valid: the grammar is what makes it so.
#[test]
fn without_the_grammar_the_same_prompts_are_often_invalid() {
    let cases = [
        (
            "weather-card.schema.json",
            "Make a weather card for Chengdu for tomorrow, with commute advice.",
        ),
        (
            "ticket-classification.schema.json",
            "Classify this support ticket: I paid for order O20240517000123 yesterday but it still shows as unpaid.",
        ),
        (
            "query-order.schema.json",
            "Where is my order O202405170001234? Please include the shipping status.",
        ),
    ];
    let (mut runs, mut invalid) = (0, 0);
    for (file, prompt) in cases {
        let input = example(file);
        let validator = independent_validator(&input);
        let messages = structured::with_schema_instruction(
            &chat::conversation(None, prompt),
            &gbnfc_bridge::validate::schema_of(&input).unwrap(),
        );
        let text_prompt = chat::render_prompt(engine(), &messages).unwrap();
        for seed in 0..5 {
            let options = GenerateOptions {
                seed,
                temperature: 1.0,
                max_tokens: 160,
                ..GenerateOptions::default()
            };
            let generation = generate(engine(), &text_prompt, None, &options).unwrap();
            runs += 1;
            let valid = generation.finish == Finish::Stop
                && serde_json::from_str::<Value>(&generation.text)
                    .is_ok_and(|v| validator.is_valid(&v));
            invalid += usize::from(!valid);
        }
    }
    eprintln!("without the grammar: {invalid} of {runs} outputs invalid");
    assert!(invalid > 0, "every unconstrained output was valid");
}

#[test]
fn a_budget_too_small_is_an_error_never_a_result() {
    let prepared = Prepared::new(&OutputSpec::Schema(example("query-order.schema.json"))).unwrap();
    let messages = chat::conversation(None, "Where is my order?");
    let tiny = options(0, 1);
    match structured::run_prepared(engine(), &messages, &prepared, &tiny) {
        Err(BridgeError::BudgetTooSmall { shortest, budget }) => {
            assert_eq!(budget, 1);
            assert!(shortest > 10, "{shortest}");
        }
        other => panic!("expected BudgetTooSmall, got {other:?}"),
    }
    // Without close-out a small budget cuts the output, which is reported as truncated.
    let mut no_close_out = options(0, 12);
    no_close_out.generate.close_out = false;
    match structured::run_prepared(engine(), &messages, &prepared, &no_close_out) {
        Err(BridgeError::Truncated { tokens, text }) => {
            assert_eq!(tokens, 12);
            assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");
        }
        other => panic!("expected Truncated, got {other:?}"),
    }
}

#[test]
fn failed_validation_is_retried_with_the_errors_then_reported() {
    // `uniqueItems` over a range of integers is enforced by validation only; this grammar
    // can only make [1,1].
    let schema = serde_json::json!({
        "type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 1},
        "minItems": 2, "maxItems": 2, "uniqueItems": true
    });
    let prepared = Prepared::new(&OutputSpec::Schema(schema)).unwrap();
    assert_eq!(prepared.diagnostics.len(), 1, "{:?}", prepared.diagnostics);
    let messages = chat::conversation(None, "Two numbers, please.");
    match structured::run_prepared(engine(), &messages, &prepared, &options(3, 16)) {
        Err(BridgeError::Invalid { attempts, errors }) => {
            assert_eq!(attempts, 3);
            assert_eq!(errors.len(), 3, "{errors:?}");
            assert!(errors[0].starts_with("attempt 1: $:"), "{errors:?}");
            assert!(errors[2].contains("unique"), "{errors:?}");
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
    // The feedback the model gets names the error.
    let feedback = structured::feedback(&["$.priority: \"URGENT\" is not one of …".into()]);
    assert!(feedback.contains("- $.priority:"));
}

#[test]
fn the_same_seed_gives_the_same_output_and_greedy_ignores_the_seed() {
    let prepared = Prepared::new(&OutputSpec::Schema(example(
        "ticket-classification.schema.json",
    )))
    .unwrap();
    let messages = chat::conversation(None, "My package never arrived.");
    let first = structured::run_prepared(engine(), &messages, &prepared, &options(11, 80)).unwrap();
    let again = structured::run_prepared(engine(), &messages, &prepared, &options(11, 80)).unwrap();
    assert_eq!(first.text, again.text);
    assert!(
        again.stats.prompt_cached,
        "the second run reuses the evaluated prompt"
    );
    let greedy = |seed| {
        let mut o = options(seed, 80);
        o.generate.temperature = 0.0;
        structured::run_prepared(engine(), &messages, &prepared, &o)
            .unwrap()
            .text
    };
    assert_eq!(greedy(1), greedy(2));
}

#[test]
fn results_come_in_the_chat_completion_shape_with_stats() {
    let prepared = Prepared::new(&OutputSpec::Schema(example(
        "ticket-classification.schema.json",
    )))
    .unwrap();
    let messages = vec![
        Message::system("You sort support tickets."),
        Message::user("I cannot log in to my account."),
    ];
    let result = structured::run_prepared(engine(), &messages, &prepared, &options(5, 96)).unwrap();
    let completion = result.chat_completion("SmolLM2");
    assert!(completion["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert_eq!(completion["object"], "chat.completion");
    assert!(completion["created"].as_u64().unwrap() > 1_600_000_000);
    assert_eq!(completion["choices"][0]["message"]["role"], "assistant");
    assert_eq!(completion["choices"][0]["message"]["content"], result.text);
    assert_eq!(completion["choices"][0]["finish_reason"], "stop");
    let usage = &completion["usage"];
    assert_eq!(
        usage["total_tokens"].as_u64(),
        Some(
            usage["prompt_tokens"].as_u64().unwrap() + usage["completion_tokens"].as_u64().unwrap()
        )
    );
    let stats = result.stats.to_json();
    for key in [
        "prompt_tokens",
        "generated_tokens",
        "decode_ms",
        "sampling_ms",
        "grammar_ms",
        "tokens_per_second",
    ] {
        assert!(stats[key].as_f64().unwrap() > 0.0, "{key}: {stats}");
    }
}

#[test]
fn a_context_too_small_for_the_prompt_is_an_error() {
    let small = Engine::load(&EngineOptions {
        threads: Some(2),
        ctx: 32,
        ..EngineOptions::default()
    })
    .unwrap();
    // llama.cpp rounds small contexts up (to 256 tokens); the prompt is longer still.
    let messages = chat::conversation(None, &"Tell me about the weather. ".repeat(100));
    let prompt = chat::render_prompt(&small, &messages).unwrap();
    match generate(&small, &prompt, None, &GenerateOptions::default()) {
        Err(BridgeError::ContextTooSmall {
            prompt_tokens,
            ctx,
            needed,
        }) => {
            assert!((32..=512).contains(&ctx), "{ctx}");
            assert!(prompt_tokens >= ctx as usize && needed > prompt_tokens);
        }
        other => panic!("expected ContextTooSmall, got {other:?}"),
    }
}

#[test]
fn the_chat_template_renders_roles_tool_calls_results_and_tools() {
    let request = serde_json::json!({"messages": [
        {"role": "user", "content": [{"type": "text", "text": "Weather in "}, {"type": "text", "text": "Chengdu?"}]},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"location\":\"Chengdu\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"temp\":21}"},
    ]});
    let messages = chat::messages_from_json(&request).unwrap();
    assert_eq!(messages[0].content.as_deref(), Some("Weather in Chengdu?"));
    assert_eq!(
        messages[1].to_json()["tool_calls"][0]["function"]["arguments"],
        "{\"location\":\"Chengdu\"}"
    );
    assert_eq!(messages[2].to_json()["tool_call_id"], "call_1");
    let tools = example("weather-tools.openai.json")["tools"].clone();
    let with_tools = chat::with_tools(&messages, &tools);
    assert_eq!(with_tools.len(), 4);
    let prompt = chat::render_prompt(engine(), &with_tools).unwrap();
    assert!(
        prompt.starts_with("<|im_start|>system\n# Tools"),
        "{prompt}"
    );
    assert!(
        prompt.contains("<tools>\n{\"type\":\"function\""),
        "{prompt}"
    );
    assert!(
        prompt.contains("<|im_start|>user\nWeather in Chengdu?<|im_end|>"),
        "{prompt}"
    );
    assert!(
        prompt.contains("<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\":\"Chengdu\"}}\n</tool_call><|im_end|>"),
        "{prompt}"
    );
    assert!(
        prompt.contains(
            "<|im_start|>tool\n<tool_response>\n{\"temp\":21}\n</tool_response><|im_end|>"
        ),
        "{prompt}"
    );
    assert!(prompt.ends_with("<|im_start|>assistant\n"), "{prompt}");
    // Bad messages are errors that say what is wrong.
    for (bad, words) in [
        (
            serde_json::json!([{"role": "robot", "content": "x"}]),
            "unknown role",
        ),
        (serde_json::json!([{"role": "user"}]), "no \"content\""),
        (serde_json::json!({"model": "x"}), "expected an array"),
        (serde_json::json!([]), "empty"),
    ] {
        let error = chat::messages_from_json(&bad).unwrap_err().to_string();
        assert!(error.contains(words), "{error}");
    }
}
