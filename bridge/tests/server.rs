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
use gbnfc_bridge::GenerateOptions;
use reqwest::blocking::{Client, Response};
use reqwest::StatusCode;
use serde_json::{json, Value};

const KEY: &str = "test-key-1234";

/// Settings of a test server: loopback, any port, the default model on 2 threads.
fn options() -> ServeOptions {
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
        defaults: GenerateOptions {
            seed: 1,
            max_tokens: 256,
            ..GenerateOptions::default()
        },
        retries: 2,
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

#[test]
fn health_models_and_metrics_answer() {
    let url = main_server();
    let health: Value = client()
        .get(format!("{url}/health"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(health["status"], "ok");
    let models = client()
        .get(format!("{url}/v1/models"))
        .bearer_auth(KEY)
        .send()
        .unwrap();
    assert_eq!(models.status(), 200);
    let models: Value = models.json().unwrap();
    assert_eq!(models["object"], "list");
    assert_eq!(models["data"][0]["id"], health["model"]);
    let metrics = client()
        .get(format!("{url}/metrics"))
        .bearer_auth(KEY)
        .send()
        .unwrap()
        .text()
        .unwrap();
    for name in [
        "gbnfc_http_requests_total",
        "gbnfc_generated_tokens_total",
        "gbnfc_queue_depth",
        "gbnfc_time_to_first_token_seconds",
        "gbnfc_grammar_cache_hits_total",
    ] {
        assert!(metrics.contains(name), "{name} missing from\n{metrics}");
    }
}

#[test]
fn health_is_503_until_the_model_is_loaded() {
    // The router alone, over a real socket, before anything loads the model.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    let state = Arc::new(AppState::new(options()));
    let app = server::routes::router(state);
    runtime.spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{address}");
    let health = client().get(format!("{url}/health")).send().unwrap();
    assert_eq!(health.status(), 503);
    let (status, body) = chat(&url, &json!({"messages": user("hi")}));
    assert_eq!(status, 503);
    assert_eq!(body["error"]["type"], "server_error");
}

#[test]
fn json_schema_answers_validate_for_every_example_schema() {
    let url = main_server();
    for name in [
        "weather-card.schema.json",
        "ticket-classification.schema.json",
        "query-order.schema.json",
    ] {
        let schema = example(name);
        let body = json!({
            "model": "my-model",
            "messages": user("Fill in a realistic example."),
            "response_format": {"type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema, "strict": true}},
            "seed": 3,
        });
        let (status, answer) = chat(url, &body);
        assert_eq!(status, 200, "{name}: {answer}");
        assert_eq!(answer["model"], "my-model");
        assert_valid_content(&answer, &schema);
    }
    let format = example("weather-card.response-format.json");
    let (status, answer) = chat(
        url,
        &json!({"messages": user("Weather in Chengdu"), "response_format": format}),
    );
    assert_eq!(status, 200, "{answer}");
    assert_valid_content(&answer, &format["json_schema"]["schema"]);
}

#[test]
fn json_object_grammar_and_text_answers() {
    let url = main_server();
    let (status, answer) = chat(
        url,
        &json!({"messages": user("A JSON object about cats."),
        "response_format": {"type": "json_object"}, "max_tokens": 64}),
    );
    assert_eq!(status, 200, "{answer}");
    let content = answer["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(
        serde_json::from_str::<Value>(content).unwrap().is_object(),
        "{content}"
    );

    let (status, answer) = chat(
        url,
        &json!({"messages": user("Yes or no?"),
        "grammar": "root ::= \"yes\" | \"no\""}),
    );
    assert_eq!(status, 200, "{answer}");
    let content = answer["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(content == "yes" || content == "no", "{content}");

    let (status, answer) = chat(
        url,
        &json!({"messages": user("Say hello."),
        "response_format": {"type": "text"}, "max_tokens": 8, "temperature": 0}),
    );
    assert_eq!(status, 200, "{answer}");
    let reason = answer["choices"][0]["finish_reason"].as_str().unwrap();
    assert!(reason == "stop" || reason == "length");
    assert!(answer["usage"]["completion_tokens"].as_u64().unwrap() <= 8);
}

#[test]
fn stop_sequences_end_free_text() {
    let url = main_server();
    let (status, answer) = chat(
        url,
        &json!({"messages": user("Count from 1 to 20, one number per line."),
        "stop": ["\n"], "max_tokens": 64, "temperature": 0}),
    );
    assert_eq!(status, 200, "{answer}");
    let content = answer["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(!content.contains('\n'), "{content:?}");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
}

#[test]
fn tool_calls_required_named_auto_and_none() {
    let url = main_server();
    let tools = weather_tools();
    let ask = user("What's the weather in Chengdu tomorrow?");
    let (status, answer) = chat(
        url,
        &json!({"messages": ask, "tools": tools, "tool_choice": "required"}),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["choices"][0]["finish_reason"], "tool_calls");
    let message = &answer["choices"][0]["message"];
    assert_valid_calls(message, &tools);

    let first = tools[0]["function"]["name"].as_str().unwrap();
    let (status, answer) = chat(
        url,
        &json!({"messages": ask, "tools": tools,
        "tool_choice": {"type": "function", "function": {"name": first}}, "parallel_tool_calls": false}),
    );
    assert_eq!(status, 200, "{answer}");
    let names = assert_valid_calls(&answer["choices"][0]["message"], &tools);
    assert_eq!(names, vec![first.to_string()]);

    let (status, answer) = chat(
        url,
        &json!({"messages": ask, "tools": tools, "tool_choice": "auto"}),
    );
    assert_eq!(status, 200, "{answer}");
    let choice = &answer["choices"][0];
    match choice["finish_reason"].as_str().unwrap() {
        "tool_calls" => {
            assert_valid_calls(&choice["message"], &tools);
        }
        "stop" => assert!(choice["message"]["content"].is_string()),
        other => panic!("finish_reason {other}"),
    }

    // The call answered, then no tools: a content answer.
    let call = &message["tool_calls"][0];
    let follow_up = json!([
        {"role": "user", "content": "What's the weather in Chengdu tomorrow?"},
        {"role": "assistant", "content": null, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "{\"forecast\": \"sunny, 25 C\"}"},
    ]);
    let (status, answer) = chat(
        url,
        &json!({"messages": follow_up, "tools": tools,
        "tool_choice": "none", "max_tokens": 48}),
    );
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer["choices"][0]["message"]["content"].is_string(),
        "{answer}"
    );
    assert!(answer["choices"][0]["message"].get("tool_calls").is_none());
}

#[test]
fn streamed_content_reassembles_and_validates() {
    let url = main_server();
    let schema = example("ticket-classification.schema.json");
    let response = post(
        url,
        &json!({"messages": user("My order is late."), "stream": true,
        "stream_options": {"include_usage": true},
        "response_format": {"type": "json_schema", "json_schema": {"name": "t", "schema": schema}}}),
    );
    let events = stream_events(response);
    assert_eq!(events.last().unwrap(), "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let mut content = String::new();
    let mut finishes = Vec::new();
    for chunk in &chunks[..chunks.len() - 1] {
        assert_eq!(chunk["object"], "chat.completion.chunk", "{chunk}");
        assert_eq!(chunk["id"], chunks[0]["id"]);
        let choice = &chunk["choices"][0];
        if let Some(text) = choice["delta"]["content"].as_str() {
            content.push_str(text);
        }
        if !choice["finish_reason"].is_null() {
            finishes.push(choice["finish_reason"].clone());
        }
    }
    assert_eq!(finishes, vec![json!("stop")]);
    assert!(
        chunks.len() > 4,
        "the content came in one piece: {chunks:?}"
    );
    let value: Value = serde_json::from_str(&content).unwrap_or_else(|e| panic!("{e}: {content}"));
    assert!(validator(&schema).is_valid(&value), "{content}");
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["completion_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn streamed_tool_calls_reassemble_and_validate() {
    let url = main_server();
    let tools = weather_tools();
    let response = post(
        url,
        &json!({"messages": user("What's the weather in Chengdu tomorrow?"),
        "tools": tools, "tool_choice": "required", "stream": true}),
    );
    let events = stream_events(response);
    assert_eq!(events.last().unwrap(), "[DONE]");
    let mut calls: Vec<Value> = Vec::new();
    let mut finish = None;
    for event in &events[..events.len() - 1] {
        let chunk: Value = serde_json::from_str(event).unwrap();
        let choice = &chunk["choices"][0];
        if !choice["finish_reason"].is_null() {
            finish = Some(choice["finish_reason"].clone());
        }
        for delta in choice["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let index = delta["index"].as_u64().unwrap() as usize;
            if index == calls.len() {
                assert!(
                    delta["id"].as_str().unwrap().starts_with("call_"),
                    "{delta}"
                );
                assert_eq!(delta["type"], "function");
                assert_eq!(delta["function"]["arguments"], "");
                calls.push(json!({"id": delta["id"], "type": "function",
                    "function": {"name": delta["function"]["name"], "arguments": ""}}));
            } else {
                assert!(delta.get("id").is_none(), "{delta}");
                let so_far = calls[index]["function"]["arguments"]
                    .as_str()
                    .unwrap()
                    .to_string();
                let more = delta["function"]["arguments"].as_str().unwrap();
                calls[index]["function"]["arguments"] = json!(so_far + more);
            }
        }
    }
    assert_eq!(finish, Some(json!("tool_calls")));
    assert_valid_calls(&json!({"tool_calls": calls}), &tools);
}

#[test]
fn bad_requests_are_400s_that_name_the_field() {
    let url = main_server();
    let bad = |body: Value, param: Option<&str>, needle: &str| {
        let (status, answer) = chat(url, &body);
        assert_eq!(status, 400, "{body}: {answer}");
        let error = &answer["error"];
        assert_eq!(error["type"], "invalid_request_error", "{answer}");
        assert_eq!(error["param"].as_str(), param, "{answer}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(needle), "{message:?} lacks {needle:?}");
    };
    bad(json!({"model": "m"}), Some("messages"), "required");
    bad(
        json!({"messages": user("x"), "n": 2}),
        Some("n"),
        "one choice",
    );
    bad(
        json!({"messages": user("x"), "logprobs": true}),
        Some("logprobs"),
        "not supported",
    );
    bad(
        json!({"messages": user("x"), "frobnicate": 1}),
        Some("frobnicate"),
        "unrecognized",
    );
    bad(
        json!({"messages": user("x"), "temperature": 9}),
        Some("temperature"),
        "0 to 2",
    );
    bad(
        json!({"messages": user("x"), "response_format": {"type": "json_schema",
            "json_schema": {"name": "n", "schema": {"type": "integer", "minimum": 5, "maximum": 1}}}}),
        Some("response_format.json_schema.schema"),
        "accepts no value",
    );
    bad(
        json!({"messages": user("x"), "response_format": {"type": "json_schema",
            "json_schema": {"name": "n", "schema": {"type": "strnig"}}}}),
        Some("response_format.json_schema.schema"),
        "/type",
    );
    bad(
        json!({"messages": user("x"), "grammar": "root ::= \"a\" missing"}),
        Some("grammar"),
        "grammar:1:",
    );
    bad(
        json!({"messages": user("x"), "tools": [{"type": "function", "function": {"parameters": {}}}]}),
        Some("tools"),
        "/tools/0",
    );
    bad(
        json!({"messages": user("x"), "tools": weather_tools(),
            "tool_choice": {"type": "function", "function": {"name": "nope"}}}),
        Some("tools"),
        "nope",
    );
    bad(
        json!({"messages": user("x"), "grammar": long_grammar(20), "max_tokens": 3}),
        Some("max_tokens"),
        "max",
    );
    // A body that is not JSON at all.
    let response = client()
        .post(format!("{url}/v1/chat/completions"))
        .bearer_auth(KEY)
        .header("content-type", "application/json")
        .body("{\"messages\": [")
        .send()
        .unwrap();
    assert_eq!(response.status(), 400);
    let answer: Value = response.json().unwrap();
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("line 1"),
        "{answer}"
    );
}

#[test]
fn hostile_bodies_do_not_take_the_server_down() {
    let url = main_server();
    // 10,000 levels of nesting: in the JSON body, and in a schema built past serde's limit.
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let response = client()
        .post(format!("{url}/v1/chat/completions"))
        .bearer_auth(KEY)
        .body(format!("{{\"messages\": {deep}}}"))
        .send()
        .unwrap();
    assert_eq!(response.status(), 400);
    let mut schema = json!({"type": "integer"});
    for _ in 0..100 {
        schema = json!({"type": "array", "items": schema});
    }
    let (status, answer) = chat(
        url,
        &json!({"messages": user("x"), "max_tokens": 8,
        "response_format": {"type": "json_schema", "json_schema": {"name": "deep", "schema": schema}}}),
    );
    assert!(status == 400 || status == 200, "{status}: {answer}");
    // A 64 MB body declared (the limit is 1 MiB here): 413 in OpenAI's shape before the
    // body is read; and a body streamed past the limit (the server may close the
    // connection while the client still writes: then the client sees a broken pipe).
    let mut socket = raw_post(url, 64 << 20, "{");
    let mut answer = String::new();
    socket
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let _ = socket.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.contains("--max-body") && answer.contains("invalid_request_error"),
        "{answer}"
    );
    let big = format!(
        "{{\"messages\": [{{\"role\": \"user\", \"content\": \"{}\"}}]}}",
        "a".repeat(2 << 20)
    );
    let chunked = reqwest::blocking::Body::new(std::io::Cursor::new(big.into_bytes()));
    let response = client()
        .post(format!("{url}/v1/chat/completions"))
        .bearer_auth(KEY)
        .body(chunked)
        .send();
    if let Ok(response) = response {
        assert_eq!(response.status(), 413);
    }
    // Still serving.
    let health = client().get(format!("{url}/health")).send().unwrap();
    assert_eq!(health.status(), 200);
}

#[test]
fn keys_routes_and_methods() {
    let url = main_server();
    for key in [None, Some("wrong")] {
        let mut request = client()
            .post(format!("{url}/v1/chat/completions"))
            .json(&json!({"messages": user("x")}));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let response = request.send().unwrap();
        assert_eq!(response.status(), 401);
        let answer: Value = response.json().unwrap();
        assert_eq!(answer["error"]["code"], "invalid_api_key");
    }
    let response = client().get(format!("{url}/v1/nothing")).send().unwrap();
    assert_eq!(response.status(), 404);
    let answer: Value = response.json().unwrap();
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("/v1/nothing"));
    let response = client()
        .get(format!("{url}/v1/chat/completions"))
        .bearer_auth(KEY)
        .send()
        .unwrap();
    assert_eq!(response.status(), 405);
    let answer: Value = response.json().unwrap();
    assert_eq!(answer["error"]["type"], "invalid_request_error");
}

#[test]
fn a_repeated_schema_is_compiled_once() {
    let url = main_server();
    let hits = || -> f64 {
        let metrics = client()
            .get(format!("{url}/metrics"))
            .bearer_auth(KEY)
            .send()
            .unwrap()
            .text()
            .unwrap();
        metrics
            .lines()
            .find(|l| l.starts_with("gbnfc_grammar_cache_hits_total"))
            .and_then(|l| l.split_whitespace().last())
            .unwrap()
            .parse()
            .unwrap()
    };
    let body = json!({"messages": user("A number."), "max_tokens": 16,
        "response_format": {"type": "json_schema", "json_schema": {"name": "n",
            "schema": {"type": "integer", "minimum": 10, "maximum": 99}}}});
    let (status, _) = chat(url, &body);
    assert_eq!(status, 200);
    let before = hits();
    let (status, answer) = chat(url, &body);
    assert_eq!(status, 200);
    assert!(hits() >= before + 1.0);
    let n: i64 = answer["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((10..=99).contains(&n));
}

/// A grammar whose only output is long: `n` times "ab, ".
fn long_grammar(n: usize) -> String {
    format!("root ::= (\"ab, \"){{{n}}}")
}

#[test]
fn a_full_queue_answers_429_and_never_5xx() {
    let server = TestServer::start(ServeOptions {
        parallel: 1,
        queue: 1,
        ..options()
    });
    let url = server.url.clone();
    let body = json!({"messages": user("Go."), "grammar": long_grammar(60), "max_tokens": 400});
    let answers: Vec<(StatusCode, Value, Option<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    let response = post(&url, &body);
                    let status = response.status();
                    let retry = response
                        .headers()
                        .get("retry-after")
                        .map(|v| v.to_str().unwrap().to_string());
                    (status, response.json::<Value>().unwrap(), retry)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let busy = answers.iter().filter(|(s, _, _)| *s == 429).count();
    assert!(busy >= 1, "{answers:?}");
    for (status, answer, retry) in &answers {
        assert!(!status.is_server_error(), "{answer}");
        if *status == 429 {
            assert_eq!(answer["error"]["type"], "rate_limit_error");
            assert_eq!(retry.as_deref(), Some("1"));
        } else {
            assert_eq!(*status, 200, "{answer}");
            let content = answer["choices"][0]["message"]["content"].as_str().unwrap();
            assert_eq!(content, "ab, ".repeat(60));
        }
    }
}

#[test]
fn a_request_past_its_timeout_is_504_and_frees_its_slot() {
    let server = TestServer::start(ServeOptions {
        parallel: 1,
        request_timeout: Duration::from_millis(1500),
        ..options()
    });
    let body = json!({"messages": user("Go."), "grammar": long_grammar(900), "max_tokens": 2000});
    let started = Instant::now();
    let (status, answer) = chat(&server.url, &body);
    assert_eq!(status, 504, "{answer}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_slot_frees(&server.url);
}

#[test]
fn a_client_dropped_mid_stream_frees_its_slot() {
    let server = TestServer::start(ServeOptions {
        parallel: 1,
        ..options()
    });
    let mut response = post(
        &server.url,
        &json!({"messages": user("Go."), "stream": true,
        "grammar": long_grammar(1500), "max_tokens": 4000}),
    );
    assert_eq!(response.status(), 200);
    let mut first = [0u8; 64];
    response.read_exact(&mut first).unwrap();
    drop(response);
    // With one slot, this runs only once the dropped stream's generation has ended.
    assert_slot_frees(&server.url);
}

#[test]
fn a_client_gone_before_its_answer_frees_its_slot() {
    let server = TestServer::start(ServeOptions {
        parallel: 1,
        ..options()
    });
    let body = json!({"messages": user("Go."), "grammar": long_grammar(1500), "max_tokens": 4000})
        .to_string();
    let socket = raw_post(&server.url, body.len(), &body);
    std::thread::sleep(Duration::from_millis(500));
    drop(socket);
    assert_slot_frees(&server.url);
}

#[test]
fn a_failure_inside_one_request_is_a_500_and_the_server_goes_on() {
    let url = main_server();
    for body in [
        json!({"model": "gbnfc-fault:handler", "messages": user("x")}),
        json!({"messages": user("gbnfc-fault:engine"), "max_tokens": 8}),
        json!({"messages": user("gbnfc-fault:engine"), "max_tokens": 8, "stream": true}),
    ] {
        let response = post(url, &body);
        let status = response.status();
        let text = response.text().unwrap();
        if status == 200 {
            // A stream has begun: the failure is its error event.
            assert!(
                text.contains("data: {\"error\"") && text.contains("server_error"),
                "{text}"
            );
            assert!(!text.contains("[DONE]"), "{text}");
        } else {
            assert_eq!(status, 500, "{body}: {text}");
            let answer: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(answer["error"]["type"], "server_error", "{answer}");
        }
        let (status, answer) = chat(
            url,
            &json!({"messages": user("Yes?"), "grammar": "root ::= \"yes\""}),
        );
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["choices"][0]["message"]["content"], "yes");
    }
}

#[test]
fn load_32_requests_from_8_clients_all_valid() {
    let url = main_server();
    let tools = weather_tools();
    let ticket = example("ticket-classification.schema.json");
    let number = json!({"type": "integer", "minimum": 1, "maximum": 1000});
    let bodies: Vec<(Value, &str)> = (0..32)
        .map(|i| match i % 4 {
            0 => (
                json!({"messages": user("My order is late."), "seed": i, "response_format":
                {"type": "json_schema", "json_schema": {"name": "t", "schema": ticket}}}),
                "ticket",
            ),
            1 => (
                json!({"messages": user("Weather in Chengdu?"), "seed": i, "tools": tools,
                "tool_choice": "required"}),
                "tools",
            ),
            2 => (
                json!({"messages": user("Pick a number."), "seed": i, "response_format":
                {"type": "json_schema", "json_schema": {"name": "n", "schema": number}}}),
                "number",
            ),
            _ => (
                json!({"messages": user("Weather in Paris?"), "seed": i, "tools": tools,
                "tool_choice": "auto", "stream": true}),
                "stream",
            ),
        })
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some((body, kind)) = bodies.get(i) else {
                    return;
                };
                match *kind {
                    "ticket" => {
                        let (status, answer) = chat(url, body);
                        assert_eq!(status, 200, "{answer}");
                        assert_valid_content(&answer, &ticket);
                    }
                    "number" => {
                        let (status, answer) = chat(url, body);
                        assert_eq!(status, 200, "{answer}");
                        assert_valid_content(&answer, &number);
                    }
                    "tools" => {
                        let (status, answer) = chat(url, body);
                        assert_eq!(status, 200, "{answer}");
                        assert_valid_calls(&answer["choices"][0]["message"], &tools);
                    }
                    _ => {
                        let events = stream_events(post(url, body));
                        assert_eq!(events.last().unwrap(), "[DONE]", "{events:?}");
                    }
                }
            });
        }
    });
}
