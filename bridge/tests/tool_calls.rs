//! Tool calls on the real default model (SmolLM2-135M-Instruct, CPU), 20 seeds each at
//! temperature 1.0: `get_weather` forced (`required`), an `auto` request that needs no
//! tool, and parallel calls. Every reply must be a well-formed OpenAI assistant message
//! whose calls name a listed tool and whose arguments validate — checked here with a
//! validator built from the tool list by hand, independently of the bridge.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::engine;
use gbnfc_bridge::chat;
use gbnfc_bridge::openai::FinishReason;
use gbnfc_bridge::tool_calls::{call, CallSpec, PreparedCalls};
use gbnfc_bridge::GenerateOptions;
use gbnfc_compiler::tools::ToolChoice;
use serde_json::Value;

const SEEDS: u32 = 20;

fn weather_tools() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/weather-tools.openai.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Runs `prompt` with `choice` (and parallel calls) for every seed; returns the replies'
/// call counts, after checking each reply.
fn run(prompt: &str, choice: ToolChoice, parallel: bool, max_tokens: usize) -> Vec<usize> {
    let tools = weather_tools();
    let parameters = tools["tools"][0]["function"]["parameters"].clone();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&parameters)
        .unwrap();
    let spec = CallSpec {
        tools,
        choice: Some(choice.clone()),
        parallel: Some(parallel),
        max_calls: 3,
        ..CallSpec::default()
    };
    let prepared = PreparedCalls::new(engine(), &spec).unwrap();
    let messages = chat::conversation(None, prompt);
    let mut counts = Vec::new();
    for seed in 1..=SEEDS {
        let options = GenerateOptions {
            seed,
            temperature: 1.0,
            max_tokens,
            ..GenerateOptions::default()
        };
        let reply = call(engine(), &messages, &prepared, &options, 0)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(
            reply.attempts, 1,
            "seed {seed}: the first attempt must be valid"
        );
        let message = reply.message.to_json();
        assert_eq!(message["role"], "assistant");
        let calls = &reply.message.tool_calls;
        if choice == ToolChoice::Required {
            assert!(!calls.is_empty(), "seed {seed}: no call: {}", reply.text);
        }
        assert!(
            calls.len() <= if parallel { 3 } else { 1 },
            "seed {seed}: {} calls",
            calls.len()
        );
        assert_eq!(
            reply.finish_reason,
            if calls.is_empty() {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            }
        );
        if calls.is_empty() {
            assert!(
                message["content"].as_str().is_some_and(|c| !c.is_empty()),
                "seed {seed}: neither calls nor content: {message}"
            );
            assert!(!reply.text.contains("<tool_call>"), "{}", reply.text);
        }
        for (i, tool_call) in calls.iter().enumerate() {
            let json = &message["tool_calls"][i];
            assert!(json["id"].as_str().unwrap().starts_with("call_"));
            assert_eq!(json["type"], "function");
            assert_eq!(json["function"]["name"], "get_weather");
            let arguments: Value =
                serde_json::from_str(json["function"]["arguments"].as_str().unwrap()).unwrap();
            assert!(
                validator.is_valid(&arguments),
                "seed {seed}: invalid arguments {arguments} ({})",
                tool_call.arguments
            );
        }
        counts.push(calls.len());
    }
    counts
}

#[test]
fn forced_weather_calls_are_valid() {
    let counts = run(
        "What's the weather in Chengdu tomorrow?",
        ToolChoice::Required,
        false,
        96,
    );
    assert!(counts.iter().all(|&n| n == 1));
}

#[test]
fn auto_answers_are_prose_or_valid_calls() {
    let counts = run(
        "Say hello to me in one short sentence.",
        ToolChoice::Auto,
        false,
        48,
    );
    eprintln!(
        "auto: {} of {SEEDS} replies answered in prose",
        counts.iter().filter(|&&n| n == 0).count()
    );
}

#[test]
fn parallel_calls_are_valid() {
    let counts = run(
        "What's the weather now in Chengdu, in Beijing and in Shanghai?",
        ToolChoice::Required,
        true,
        160,
    );
    assert!(counts.iter().all(|&n| (1..=3).contains(&n)));
}

#[test]
fn calls_cut_off_on_every_attempt_are_reported_as_truncated() {
    let spec = CallSpec {
        tools: weather_tools(),
        choice: Some(ToolChoice::Required),
        ..CallSpec::default()
    };
    let prepared = PreparedCalls::new(engine(), &spec).unwrap();
    let messages = chat::conversation(None, "What is the weather in Paris?");
    // Without close-out, 6 tokens cut every call short; both attempts are retried, then
    // reported with the last one's text.
    let options = GenerateOptions {
        max_tokens: 6,
        close_out: false,
        ..GenerateOptions::default()
    };
    match call(engine(), &messages, &prepared, &options, 1) {
        Err(gbnfc_bridge::BridgeError::Truncated { tokens, text }) => {
            assert_eq!(tokens, 6);
            assert!(!text.is_empty());
        }
        other => panic!("expected Truncated, got {other:?}"),
    }
}
