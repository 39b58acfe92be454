//! `gbnfc serve --backend` in front of llama-server, against calling llama-server
//! directly with its own JSON Schema support, side by side in one run: the gateway's
//! added latency per request, and how many outputs of the example schemas are valid on
//! each path at temperature 1.0. Prints Markdown for BENCHMARKS.md (`scripts/benchmarks`).
//!
//! One llama-server (`scripts/llama-server build` makes it) serves the default model on a
//! loopback port with one slot and 2 threads; the gateway runs in this process in front
//! of it. Both paths take the same OpenAI request on `/v1/chat/completions`: directly,
//! llama-server turns `response_format`'s schema into a grammar itself; through the
//! gateway, gbnfc compiles it, sends the GBNF, validates, retries (up to 2 more
//! attempts, the `serve` default) and closes out at the budget. Both sample alike
//! (temperature 1.0, top-p 0.95, no top-k, no min-p, no repetition penalty; llama-server
//! is told so). The two paths alternate
//! request by request, so that the machine's changing speed weighs on both alike.
//!
//! Added latency: the same free-text request of one token, 40 times on each path
//! alternately; the difference of the medians is what the gateway adds to a request
//! (its HTTP hop, prompt rendering, the engine's answer read back), beside the engine's
//! own time. Capacity: the same request 200 times on each path, this process's CPU time
//! (user and system, from `/proc/self/stat`) counted over each block; the client's share
//! is the direct block's, so the difference is the gateway's CPU per request, and one core
//! fronts about 1,000 / that many requests per second.
//!
//! With `vllm` after SEEDS, the engine is vLLM instead (`scripts/vllm start`: its CPU
//! build, the default model converted to float32), reached directly with its own
//! `response_format` (its XGrammar backend's reading of the schema) and through the gateway
//! with `--backend vllm+http://…`.
//!
//! `cargo run --release -p gbnfc-benches --bin gateway_report [SEEDS [llama-server|vllm]]`
//! (default 10 per schema, llama-server)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gbnfc_benches::quantile;
use gbnfc_bridge::engine::EngineOptions;
use gbnfc_bridge::server::{self, ServeOptions};
use gbnfc_bridge::GenerateOptions;
use serde_json::{json, Value};

/// Free-text requests of one token per path for the added latency.
const LATENCY_PAIRS: usize = 40;

/// Requests per path for the gateway's CPU time per request.
const CPU_REQUESTS: usize = 200;

/// The token budget of each schema request.
const MAX_TOKENS: u64 = 256;

/// The example schemas, each with a request for it.
const SCHEMAS: &[(&str, &str)] = &[
    (
        "ticket-classification.schema.json",
        "Classify this ticket: I paid for my order yesterday but it still shows as unpaid.",
    ),
    (
        "weather-card.schema.json",
        "A weather card for Chengdu tomorrow.",
    ),
    (
        "query-order.schema.json",
        "Find the orders of customer 4411 placed in March, newest first.",
    ),
];

/// The engine behind both paths.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EngineKind {
    LlamaServer,
    Vllm,
}

impl EngineKind {
    /// The engine's own path, as the tables name it.
    fn own_path(self) -> &'static str {
        match self {
            EngineKind::LlamaServer => "llama-server `json_schema`",
            EngineKind::Vllm => "vLLM `json_schema`",
        }
    }
}

/// The running engine, stopped when dropped: a llama-server child, or the vLLM server
/// that `scripts/vllm start` left running.
struct RunningEngine {
    child: Option<Child>,
    root: PathBuf,
}

impl Drop for RunningEngine {
    fn drop(&mut self) {
        match self.child.as_mut() {
            Some(child) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            None => {
                let _ = Command::new(self.root.join("scripts/vllm"))
                    .arg("stop")
                    .status();
            }
        }
    }
}

/// One path's results for one schema.
#[derive(Default)]
struct Tally {
    valid: usize,
    requests: usize,
    /// HTTP errors (a schema the path refuses, an output it rejects), by status and code.
    errors: Vec<String>,
    seconds: Vec<f64>,
    tokens: u64,
}

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .map_or(10, |n| n.parse().expect("SEEDS"));
    let kind = match std::env::args().nth(2).as_deref() {
        None | Some("llama-server") => EngineKind::LlamaServer,
        Some("vllm") => EngineKind::Vllm,
        Some(other) => panic!("unknown engine {other}: llama-server or vllm"),
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let port = free_port();
    let _engine = match kind {
        EngineKind::LlamaServer => start_llama_server(&root, port),
        EngineKind::Vllm => start_vllm(&root, port),
    };
    let direct = format!("http://127.0.0.1:{port}");
    let scheme = match kind {
        EngineKind::LlamaServer => "llama-server",
        EngineKind::Vllm => "vllm",
    };
    let gateway = start_gateway(&format!("{scheme}+{direct}"));
    let engine_name = match kind {
        EngineKind::LlamaServer => "llama-server",
        EngineKind::Vllm => "vLLM",
    };
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(600))
        .build()
        .unwrap();
    let post = |base: &str, body: &Value| -> (u16, Value, f64) {
        let started = Instant::now();
        let response = client
            .post(format!("{base}/v1/chat/completions"))
            .json(body)
            .send()
            .unwrap();
        let status = response.status().as_u16();
        let answer = response.json().unwrap_or(Value::Null);
        (status, answer, started.elapsed().as_secs_f64())
    };

    // Added latency: one-token free text, alternating.
    let one_token = json!({
        "messages": [{"role": "user", "content": "Say hello."}],
        "max_tokens": 1,
        "temperature": 0.0,
    });
    let (mut on_direct, mut on_gateway) = (Vec::new(), Vec::new());
    for _ in 0..LATENCY_PAIRS {
        on_direct.push(post(&direct, &one_token).2 * 1000.0);
        on_gateway.push(post(&gateway, &one_token).2 * 1000.0);
    }
    let (direct_p50, gateway_p50) = (quantile(&on_direct, 0.5), quantile(&on_gateway, 0.5));
    println!("| one-token request ({LATENCY_PAIRS} each, alternating) | p50 (ms) | p95 (ms) |");
    println!("|---|---|---|");
    println!(
        "| {engine_name} directly | {direct_p50:.1} | {:.1} |",
        quantile(&on_direct, 0.95)
    );
    println!(
        "| through the gateway | {gateway_p50:.1} | {:.1} |",
        quantile(&on_gateway, 0.95)
    );
    println!(
        "| added by the gateway | {:.1} | |",
        gateway_p50 - direct_p50
    );
    println!();
    let cpu_per_request = |base: &str| {
        let before = cpu_ms();
        for _ in 0..CPU_REQUESTS {
            post(base, &one_token);
        }
        (cpu_ms() - before) / CPU_REQUESTS as f64
    };
    let (client, both) = (cpu_per_request(&direct), cpu_per_request(&gateway));
    let gateway_cpu = both - client;
    println!("| CPU of this process per one-token request ({CPU_REQUESTS} each) | ms |");
    println!("|---|---|");
    println!("| client alone (direct path) | {client:.2} |");
    println!("| client and gateway | {both:.2} |");
    println!(
        "| the gateway | {gateway_cpu:.2} (≈ {:.0} requests/s per core) |",
        1000.0 / gateway_cpu.max(0.01)
    );
    println!();

    // Validity at temperature 1.0.
    println!("| schema (temperature 1.0, {MAX_TOKENS} tokens) | path | valid | HTTP errors | request p50 (s) | ms per token |");
    println!("|---|---|---|---|---|---|");
    for (file, prompt) in SCHEMAS {
        let schema: Value = serde_json::from_str(
            &std::fs::read_to_string(root.join("../shared/examples").join(file)).unwrap(),
        )
        .unwrap();
        let (mut own, mut through) = (Tally::default(), Tally::default());
        for seed in 1..=seeds {
            let body = json!({
                "messages": [{"role": "user", "content": prompt}],
                "response_format": {"type": "json_schema", "json_schema": {"name": "out", "strict": true, "schema": schema}},
                "temperature": 1.0,
                "top_p": 0.95,
                "seed": seed,
                "max_tokens": MAX_TOKENS,
            });
            // The engine's sampling chain set to the gateway's: no top-k, no min-p.
            let mut own_body = body.clone();
            own_body["top_k"] = json!(0);
            own_body["min_p"] = json!(0.0);
            for (base, body, tally) in [
                (&direct, &own_body, &mut own),
                (&gateway, &body, &mut through),
            ] {
                let (status, answer, seconds) = post(base, body);
                tally.requests += 1;
                if status != 200 {
                    let code = answer["error"]["code"].as_str().unwrap_or("no code");
                    tally.errors.push(format!("{status} {code}"));
                    continue;
                }
                tally.seconds.push(seconds);
                tally.tokens += answer["usage"]["completion_tokens"].as_u64().unwrap_or(0);
                let valid = answer["choices"][0]["message"]["content"]
                    .as_str()
                    .and_then(|c| serde_json::from_str::<Value>(c).ok())
                    .is_some_and(|value| jsonschema::is_valid(&schema, &value));
                tally.valid += usize::from(valid);
            }
        }
        for (path, tally) in [(kind.own_path(), &own), ("gateway", &through)] {
            let seconds: f64 = tally.seconds.iter().sum();
            let per_token = if tally.tokens > 0 {
                format!("{:.1}", seconds * 1000.0 / tally.tokens as f64)
            } else {
                "–".into()
            };
            let p50 = if tally.seconds.is_empty() {
                "–".into()
            } else {
                format!("{:.2}", quantile(&tally.seconds, 0.5))
            };
            let errors = if tally.errors.is_empty() {
                "0".to_string()
            } else {
                format!("{} ({})", tally.errors.len(), tally.errors.join(", "))
            };
            println!(
                "| {file} | {path} | {}/{} | {errors} | {p50} | {per_token} |",
                tally.valid, tally.requests
            );
        }
    }
}

/// This process's CPU time so far (user and system, all threads), in milliseconds, from
/// `/proc/self/stat` (clock ticks of 10 ms, Linux's `USER_HZ`).
fn cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat (Linux)");
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 * 10.0
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts llama-server with the default model on `port` and waits for `/health`.
fn start_llama_server(root: &Path, port: u16) -> RunningEngine {
    let binary = root.join("target/llama-server/bin/llama-server");
    assert!(
        binary.is_file(),
        "{} is missing: run scripts/llama-server build",
        binary.display()
    );
    let model: PathBuf = root.join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    let child = Command::new(binary)
        .args(["--model", model.to_str().unwrap(), "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "--no-webui", "--threads", "2"])
        .args(["--ctx-size", "4096", "--parallel", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = RunningEngine {
        child: Some(child),
        root: root.to_path_buf(),
    };
    let started = Instant::now();
    while reqwest::blocking::get(format!("http://127.0.0.1:{port}/health"))
        .map_or(true, |r| !r.status().is_success())
    {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "llama-server not up"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

/// Starts vLLM with the default model on `port` (`scripts/vllm start`, which waits for
/// `/health`).
fn start_vllm(root: &Path, port: u16) -> RunningEngine {
    let status = Command::new(root.join("scripts/vllm"))
        .args(["start", &port.to_string()])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "scripts/vllm start failed");
    RunningEngine {
        child: None,
        root: root.to_path_buf(),
    }
}

/// Starts the gateway in this process in front of `engine` (a backend URL); returns its
/// URL.
fn start_gateway(engine: &str) -> String {
    let options = ServeOptions {
        host: IpAddr::V4(Ipv4Addr::LOCALHOST),
        port: 0,
        api_key: None,
        no_auth: false,
        parallel: 1,
        queue: 64,
        max_body: server::DEFAULT_MAX_BODY,
        request_timeout: Duration::from_secs(600),
        engine: EngineOptions::default(),
        defaults: GenerateOptions::default(),
        tool_defaults: GenerateOptions::default(),
        retries: 2,
        retrieval: gbnfc_bridge::tool_retrieval::Retrieval::Auto,
        compact_tools: false,
        backends: vec![engine.parse().unwrap()],
    };
    gbnfc_benches::serve_in_process(options, Duration::from_secs(60))
}
