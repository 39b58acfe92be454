//! `gbnfc run` and `gbnfc call` on a remote engine, `--backend llama-server+http://…`: a
//! real llama-server (built by `scripts/llama-server build`, which `scripts/test` runs)
//! with the default model on a loopback port. The outputs have the local path's shapes
//! and pass their schemas, `--stats` says where they ran, and a bad or unreachable backend
//! is one clear error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use common::{example, gbnfc, repo, stats_of, stderr, stdout};

/// A llama-server on 127.0.0.1, stopped when dropped.
struct Instance {
    child: Child,
    port: u16,
}

impl Instance {
    /// Starts one with the default model, 2 threads, a 4,096-token context.
    fn start() -> Instance {
        let binary = repo().join("target/llama-server/bin/llama-server");
        assert!(
            binary.is_file(),
            "{} is missing: run scripts/llama-server build (scripts/test does)",
            binary.display()
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let model = repo().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
        let child = Command::new(binary)
            .args(["--model", model.to_str().unwrap(), "--host", "127.0.0.1"])
            .args(["--port", &port.to_string(), "--no-webui", "--threads", "2"])
            .args(["--ctx-size", "4096", "--parallel", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut instance = Instance { child, port };
        let started = Instant::now();
        while !instance.healthy() {
            assert!(
                instance.child.try_wait().unwrap().is_none(),
                "llama-server on port {port} stopped while starting"
            );
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "llama-server on port {port} not up after 120 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        instance
    }

    /// Whether `GET /health` answers 200.
    fn healthy(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let request = format!(
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            self.port
        );
        let mut answer = String::new();
        stream.write_all(request.as_bytes()).is_ok()
            && stream.read_to_string(&mut answer).is_ok()
            && answer.starts_with("HTTP/1.1 200")
    }

    /// Its `--backend` URL.
    fn url(&self) -> String {
        format!("llama-server+http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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
    let server = Instance::start();
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
        assert_eq!(stats["backend"], json!(url), "{stats}");
        assert_eq!(stats["close_out"], json!(true), "{stats}");
        assert_eq!(stats["grammar_engine"], json!("llama"), "{stats}");
        assert_eq!(
            stats["model"],
            json!("SmolLM2-135M-Instruct.Q4_1"),
            "{stats}"
        );
    }

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
