//! `gbnfc serve` over a real loopback socket with a real HTTP client (reqwest), on the
//! default model: every endpoint, the request fields, streaming, the errors, and load.
//! Answers are validated here with validators built in the test, independently of the
//! server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use gbnfc_bridge::engine::EngineOptions;
use gbnfc_bridge::server::{self, AppState, ServeOptions};
use gbnfc_bridge::tool_calls::TOOL_CALL_TEMPERATURE;
use gbnfc_bridge::tool_retrieval::{Retrieval, ToolIndex};
use gbnfc_bridge::GenerateOptions;
use gbnfc_compiler::tools::read_tools;
use reqwest::blocking::{Client, Response};
use reqwest::StatusCode;
use serde_json::{json, Value};

mod answers;
#[path = "../common/five_servers.rs"]
mod five_servers;
mod robustness;

const KEY: &str = "test-key-1234";

/// Settings of a test server: loopback, any port, the default model on 2 threads.
fn options() -> ServeOptions {
    let defaults = GenerateOptions {
        seed: 1,
        max_tokens: 256,
        ..GenerateOptions::default()
    };
    ServeOptions {
        host: IpAddr::V4(Ipv4Addr::LOCALHOST),
        port: 0,
        api_key: Some(KEY.to_string()),
        no_auth: false,
        parallel: 2,
        queue: 64,
        max_body: 1024 * 1024,
        request_timeout: Duration::from_secs(300),
        engine: EngineOptions {
            threads: Some(2),
            ctx: 2048,
            ..EngineOptions::default()
        },
        defaults,
        tool_defaults: GenerateOptions {
            temperature: TOOL_CALL_TEMPERATURE,
            ..defaults
        },
        retries: 2,
        retrieval: Retrieval::Auto,
        compact_tools: false,
        backends: Vec::new(),
    }
}

/// A server started on its own runtime thread; stopped when dropped.
struct TestServer {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    fn start(options: ServeOptions) -> TestServer {
        let (ready, address) = std::sync::mpsc::channel::<SocketAddr>();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            let on_ready = move |address: SocketAddr, _: &server::Ready| {
                let _ = ready.send(address);
            };
            let shutdown = async move {
                let _ = stopped.await;
            };
            runtime
                .block_on(server::serve(options, on_ready, shutdown))
                .unwrap();
        });
        let address = address
            .recv_timeout(Duration::from_secs(120))
            .expect("the server did not become ready (the default model: scripts/fetch-model)");
        TestServer {
            url: format!("http://{address}"),
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The server most tests share (2 slots, key [`KEY`]).
fn main_server() -> &'static str {
    static SERVER: OnceLock<TestServer> = OnceLock::new();
    &SERVER.get_or_init(|| TestServer::start(options())).url
}

fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(300))
        .build()
        .unwrap()
}

fn post(url: &str, body: &Value) -> Response {
    client()
        .post(format!("{url}/v1/chat/completions"))
        .bearer_auth(KEY)
        .json(body)
        .send()
        .unwrap()
}

/// Posts `body` and returns the status and JSON answer.
fn chat(url: &str, body: &Value) -> (StatusCode, Value) {
    let response = post(url, body);
    let status = response.status();
    let text = response.text().unwrap();
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (status, value)
}

fn example(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/examples")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn weather_tools() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/weather-tools.openai.json");
    let value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    value["tools"].clone()
}

fn user(text: &str) -> Value {
    json!([{"role": "user", "content": text}])
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap()
}

/// Asserts a whole `chat.completion` with content that `schema` accepts.
fn assert_valid_content(answer: &Value, schema: &Value) -> Value {
    assert_eq!(answer["object"], "chat.completion", "{answer}");
    assert!(answer["id"].as_str().unwrap().starts_with("chatcmpl-"));
    let choice = &answer["choices"][0];
    assert_eq!(choice["finish_reason"], "stop", "{answer}");
    assert_eq!(choice["message"]["role"], "assistant");
    let content = choice["message"]["content"].as_str().unwrap();
    let value: Value = serde_json::from_str(content).unwrap_or_else(|e| panic!("{e}: {content}"));
    let errors: Vec<String> = validator(schema)
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{content}: {errors:?}");
    let usage = &answer["usage"];
    assert_eq!(
        usage["total_tokens"].as_u64().unwrap(),
        usage["prompt_tokens"].as_u64().unwrap() + usage["completion_tokens"].as_u64().unwrap()
    );
    assert!(usage["completion_tokens"].as_u64().unwrap() > 0);
    value
}

/// Asserts tool calls that name listed tools with arguments their schemas accept.
fn assert_valid_calls(message: &Value, tools: &Value) -> Vec<String> {
    let calls = message["tool_calls"]
        .as_array()
        .unwrap_or_else(|| panic!("{message}"));
    assert!(!calls.is_empty());
    let mut names = Vec::new();
    for call in calls {
        assert!(call["id"].as_str().unwrap().starts_with("call_"), "{call}");
        assert_eq!(call["type"], "function");
        let name = call["function"]["name"].as_str().unwrap();
        let tool = tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == name)
            .unwrap_or_else(|| panic!("`{name}` is not a listed tool"));
        let arguments: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
        let errors: Vec<String> = validator(&tool["function"]["parameters"])
            .iter_errors(&arguments)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{arguments}: {errors:?}");
        names.push(name.to_string());
    }
    names
}

/// The `data:` payloads of a stream, read to its end.
fn stream_events(response: Response) -> Vec<String> {
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    BufReader::new(response)
        .lines()
        .map(Result::unwrap)
        .filter_map(|line| line.strip_prefix("data: ").map(str::to_string))
        .collect()
}

/// Sends a request by hand: headers declaring `length` bytes, then `body` (which may be
/// less); the socket stays open for the caller.
fn raw_post(url: &str, length: usize, body: &str) -> std::net::TcpStream {
    let mut socket = std::net::TcpStream::connect(url.trim_start_matches("http://")).unwrap();
    std::io::Write::write_all(
        &mut socket,
        format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {KEY}\r\n\
             Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n{body}"
        )
        .as_bytes(),
    )
    .unwrap();
    socket
}

/// A short request answers soon: on a one-slot server, the slot is free again.
fn assert_slot_frees(url: &str) {
    let started = Instant::now();
    let (status, answer) = chat(
        url,
        &json!({"messages": user("Yes?"), "grammar": "root ::= \"yes\""}),
    );
    assert_eq!(status, 200, "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}
