//! `gbnfc serve --backend A --backend B`: a gateway in front of two real llama-server
//! instances with the default model (`scripts/llama-server build` makes the binary). One
//! test, in phases, so that the instances load once and nothing else competes for the
//! cores: the OpenAI SDK check script passes through the gateway unchanged; 20 seeds at
//! temperature 1.0 all validate; 32 requests from 8 clients all come back valid while one
//! instance is killed among them; with both down, requests get 503 within a second.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::example;
use common::llama_server::Instance;
use common::serve::{api_key, run_sdk_script, Server};

/// The gateway's address and key, and a client for it.
struct Gateway {
    url: String,
    key: String,
    client: reqwest::blocking::Client,
}

impl Gateway {
    /// `POST /v1/chat/completions` with `body`: the status, the JSON answer, and how long
    /// it took.
    fn chat(&self, body: &Value) -> (u16, Value, Duration) {
        let started = Instant::now();
        let response = self
            .client
            .post(format!("{}/v1/chat/completions", self.url))
            .bearer_auth(&self.key)
            .json(body)
            .send()
            .unwrap();
        let status = response.status().as_u16();
        let answer: Value = response.json().unwrap_or(Value::Null);
        (status, answer, started.elapsed())
    }

    /// `GET /health`: the status and the JSON answer.
    fn health(&self) -> (u16, Value) {
        let response = self
            .client
            .get(format!("{}/health", self.url))
            .send()
            .unwrap();
        (response.status().as_u16(), response.json().unwrap())
    }
}

/// The ticket schema as a strict `response_format`, at `temperature` with `seed`.
fn ticket_request(schema: &Value, seed: u64, temperature: f64) -> Value {
    json!({
        "model": "gbnfc",
        "messages": [{"role": "user", "content": "I paid for my order yesterday but it still shows as unpaid."}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "ticket", "strict": true, "schema": schema}},
        "temperature": temperature,
        "seed": seed,
        "max_tokens": 128,
    })
}

/// Asserts a 200 whose content is valid against `schema`.
fn assert_valid(status: u16, answer: &Value, schema: &Value, what: &str) {
    assert_eq!(status, 200, "{what}: {answer}");
    let content = answer["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no content in {answer}"));
    let value: Value =
        serde_json::from_str(content).unwrap_or_else(|e| panic!("{what}: {e}: {content}"));
    assert!(
        jsonschema::is_valid(schema, &value),
        "{what}: invalid {value}"
    );
}

#[test]
fn a_gateway_over_two_llama_servers_serves_balances_and_fails_over() {
    let mut first = Instance::start(1, 2);
    let mut second = Instance::start(1, 2);
    let key = api_key();
    let (first_url, second_url) = (first.url(), second.url());
    let mut server = Server::start(&key, &["--backend", &first_url, "--backend", &second_url]);
    let gateway = Gateway {
        url: server.url(),
        key: key.clone(),
        client: reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(300))
            .build()
            .unwrap(),
    };
    let (status, health) = gateway.health();
    assert_eq!(status, 200, "{health}");
    assert_eq!(health["backends"].as_array().unwrap().len(), 2, "{health}");

    // The SDK check script, unchanged.
    run_sdk_script(&mut server, &gateway.url, &key, false);

    // Temperature 1.0: every seed validates (close-out on the engines' text).
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(example("ticket-classification.schema.json")).unwrap(),
    )
    .unwrap();
    for seed in 1..=20 {
        let (status, answer, _) = gateway.chat(&ticket_request(&schema, seed, 1.0));
        assert_valid(status, &answer, &schema, &format!("seed {seed}"));
    }

    // 32 requests from 8 clients; the second instance is killed once 8 have come back.
    let done = Arc::new(AtomicUsize::new(0));
    let gateway = Arc::new(gateway);
    let schema = Arc::new(schema);
    let clients: Vec<_> = (0..8u64)
        .map(|client| {
            let (gateway, schema, done) =
                (Arc::clone(&gateway), Arc::clone(&schema), Arc::clone(&done));
            std::thread::spawn(move || {
                for i in 0..4 {
                    let seed = 100 + client * 4 + i;
                    let (status, answer, _) = gateway.chat(&ticket_request(&schema, seed, 0.8));
                    assert_valid(status, &answer, &schema, &format!("load seed {seed}"));
                    done.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let started = Instant::now();
    while done.load(Ordering::SeqCst) < 8 {
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "8 requests not answered in 10 minutes"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    second.kill();
    for client in clients {
        client.join().expect("a client saw a request fail");
    }
    assert_eq!(done.load(Ordering::SeqCst), 32);
    let (status, health) = gateway.health();
    assert_eq!(status, 200, "{health}");
    assert_eq!(health["backends"][1]["up"], json!(false), "{health}");

    // Both down: 503 at once, not a hang.
    first.kill();
    for attempt in 0..3 {
        let (status, answer, took) = gateway.chat(&ticket_request(&schema, 1, 0.0));
        assert_eq!(status, 503, "attempt {attempt}: {answer}");
        assert_eq!(
            answer["error"]["code"],
            json!("backend_unavailable"),
            "{answer}"
        );
        assert!(
            took < Duration::from_secs(1),
            "attempt {attempt}: 503 after {took:?}"
        );
    }
    let (status, health) = gateway.health();
    assert_eq!(status, 503, "{health}");
}
