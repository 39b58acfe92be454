//! Tool calls on the real default model (SmolLM2-135M-Instruct, CPU), 20 seeds each at
//! temperature 1.0: `get_weather` forced (`required`), an `auto` request that needs no
//! tool, and parallel calls. Every reply must be a well-formed OpenAI assistant message
//! whose calls name a listed tool and whose arguments validate — checked here with a
//! validator built from the tool list by hand, independently of the bridge. And a chat
//! history shows earlier calls in each family's own call syntax.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::engine;
use gbnfc_bridge::chat;
use gbnfc_bridge::openai::FinishReason;
use gbnfc_bridge::tool_calls::{call, CallSpec, PreparedCalls};
use gbnfc_bridge::GenerateOptions;
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::tools::{self, compile_tools, write_calls, Syntax, ToolChoice, ToolOptions};
use llama_cpp_2::model::LlamaChatTemplate;
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

/// A history with an earlier call and its result, rendered under llama.cpp's Mistral and
/// Llama 3 templates and the default model's own (ChatML): the call appears exactly as
/// that family's call grammar makes the model write it (the grammar accepts it, and no
/// Hermes block is left in another family's prompt), and the result as the family reads
/// results.
#[test]
fn history_shows_earlier_calls_in_each_familys_syntax() {
    let tools = weather_tools();
    let mut turn = chat::Message::assistant("");
    turn.tool_calls.push(chat::ToolCall {
        id: "call_abcdefghijklmnopqrstuvwx".into(),
        name: "get_weather".into(),
        arguments: r#"{"location": "Chengdu, China", "extensions": "base"}"#.into(),
    });
    let messages = [
        chat::Message::user("What is the weather in Chengdu?"),
        turn,
        chat::Message::tool(
            "call_abcdefghijklmnopqrstuvwx",
            "get_weather",
            "21 C, sunny",
        ),
    ];
    for (template, syntax, result) in [
        (
            Some("mistral-v7"),
            Syntax::Mistral,
            r#"[TOOL_RESULTS]{"content": "21 C, sunny", "call_id": "pqrstuvwx"}[/TOOL_RESULTS]"#,
        ),
        (
            Some("llama3"),
            Syntax::Llama3,
            "<|start_header_id|>ipython<|end_header_id|>\n\n21 C, sunny",
        ),
        (
            None,
            Syntax::Hermes,
            "<tool_response>\n21 C, sunny\n</tool_response>",
        ),
    ] {
        let template = template.map(|name| LlamaChatTemplate::new(name).unwrap());
        let prompt =
            chat::render_prompt_with(engine(), template.as_ref(), Some(syntax), &messages).unwrap();
        let compiled = compile_tools(
            &tools,
            &ToolOptions {
                syntax,
                choice: Some(ToolChoice::Required),
                ..ToolOptions::default()
            },
        )
        .unwrap();
        let grammar = compiled.grammar.as_ref().unwrap();
        let written = write_calls(
            syntax,
            &[tools::ToolCall {
                name: "get_weather".into(),
                arguments: serde_json::json!({"location": "Chengdu, China", "extensions": "base"}),
                id: Some("pqrstuvwx".into()),
            }],
        );
        assert!(prompt.contains(&written), "{syntax}: {prompt}");
        assert!(
            Recognizer::new(grammar)
                .unwrap()
                .recognize(&written)
                .accepted,
            "{syntax}: the call grammar rejects the history's call {written}"
        );
        assert!(prompt.contains(result), "{syntax}: {prompt}");
        assert_eq!(
            prompt.contains("<tool_call>"),
            syntax == Syntax::Hermes,
            "{syntax}: {prompt}"
        );
    }
}
