//! `gbnfc run` and `gbnfc call` on a remote engine, `--backend llama-server+http://…`: a
//! real llama-server (built by `scripts/llama-server build`, which `scripts/test` runs)
//! with the default model on a loopback port. The outputs have the local path's shapes
//! and pass their schemas, `--stats` says where they ran, and a bad or unreachable backend
//! is one clear error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::net::TcpListener;
use std::process::Output;

use serde_json::{json, Map, Value};

use common::breaking_proxy::BreakingProxy;
use common::llama_server::Instance;
use common::{example, gbnfc, stats_of, stderr, stdout};

/// A JSON value's shape: its keys and the kinds of its values, all the way down (an
/// array by its first element).
fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), shape(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => json!([items.first().map(shape)]),
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("bool"),
        Value::Null => json!("null"),
    }
}

/// The JSON a successful run printed.
fn printed(out: &Output) -> Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_str(stdout(out).trim())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

#[test]
fn run_and_call_on_llama_server_print_what_the_local_path_prints() {
    let server = Instance::start(2, 1);
    let url = server.url();
    let schema_path = example("ticket-classification.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(&schema_path).unwrap()).unwrap();
    let run = |backend: Option<&str>, seed: &str| {
        let mut args = vec![
            "run",
            "--schema",
            &schema_path,
            "--prompt",
            "I paid for my order yesterday but it still shows as unpaid.",
            "--seed",
            seed,
            "--temperature",
            "1.0",
            "--max-tokens",
            "128",
            "--openai",
            "--stats",
            "--quiet",
        ];
        if let Some(url) = backend {
            args.extend(["--backend", url]);
        }
        gbnfc(&args)
    };
    let local = run(None, "1");
    for seed in ["1", "2", "3"] {
        let remote = run(Some(&url), seed);
        let completion = printed(&remote);
        assert_eq!(shape(&completion), shape(&printed(&local)), "{completion}");
        let content = completion["choices"][0]["message"]["content"]
            .as_str()
            .unwrap();
        let value: Value = serde_json::from_str(content).unwrap();
        assert!(jsonschema::is_valid(&schema, &value), "{value}");
        let stats = stats_of(&remote);
        assert_eq!(stats["backends"][0]["url"], json!(url), "{stats}");
        assert_eq!(stats["backends"][0]["up"], json!(true), "{stats}");
        assert_eq!(stats["close_out"], json!(true), "{stats}");
        assert_eq!(stats["grammar_engine"], json!("llama"), "{stats}");
        assert_eq!(
            stats["model"],
            json!("SmolLM2-135M-Instruct.Q4_1"),
            "{stats}"
        );
    }

    // A connection that breaks under a live engine does not fail the run: the engine
    // still answers /health, so the generation runs there again.
    let proxy = BreakingProxy::start(server.port(), "POST /completion ", 1);
    let completion = printed(&run(Some(&proxy.url()), "4"));
    assert_eq!(proxy.broken(), 1);
    let content = completion["choices"][0]["message"]["content"]
        .as_str()
        .unwrap();
    assert!(
        jsonschema::is_valid(&schema, &serde_json::from_str(content).unwrap()),
        "{content}"
    );

    // The README's call, on the server: the same message shape, Chengdu's weather.
    let call = |backend: Option<&str>| {
        let mut args = vec![
            "call",
            "--tools",
            "examples/weather-tools.openai.json",
            "--prompt",
            "What's the weather in Chengdu tomorrow?",
            "--choice",
            "required",
            "--seed",
            "1",
        ];
        if let Some(url) = backend {
            args.extend(["--backend", url]);
        }
        gbnfc(&args)
    };
    let message = printed(&call(Some(&url)));
    assert_eq!(shape(&message), shape(&printed(&call(None))), "{message}");
    let function = &message["tool_calls"][0]["function"];
    assert_eq!(function["name"], json!("get_weather"), "{message}");
    let arguments: Value = serde_json::from_str(function["arguments"].as_str().unwrap()).unwrap();
    assert!(
        arguments["location"].as_str().unwrap().contains("Chengdu"),
        "{message}"
    );
}

#[test]
fn a_bad_or_unreachable_backend_is_one_clear_error() {
    let out = gbnfc(&[
        "run",
        "--grammar",
        "grammars/json.gbnf",
        "--prompt",
        "x",
        "--backend",
        "http://127.0.0.1:9",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("names no engine"), "{}", stderr(&out));

    let out = gbnfc(&[
        "run",
        "--model",
        "models/SmolLM2-135M-Instruct.Q4_1.gguf",
        "--backend",
        "llama-server+http://127.0.0.1:9",
        "--grammar",
        "grammars/json.gbnf",
        "--prompt",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );

    // Nothing listens on a port just freed.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("llama-server+http://127.0.0.1:{port}");
    let out = gbnfc(&[
        "run",
        "--grammar",
        "grammars/json.gbnf",
        "--prompt",
        "x",
        "--backend",
        &url,
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("error:") && err.contains("cannot connect"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(stdout(&out).is_empty());
}
