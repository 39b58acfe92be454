//! `gbnfc serve` under load, on the default model: aggregate generated tokens per second
//! with 1, 2 and 4 concurrent streaming clients, request latency and time to first token
//! (p50/p95), and the time to first token of a request under a cached grammar against
//! the same request with no grammar, interleaved in one run. Prints Markdown for
//! BENCHMARKS.md (`scripts/benchmarks`).
//!
//! The server runs in this process on a loopback port with 4 slots; the clients are
//! reqwest over real sockets. Every request streams (`stream_options.include_usage`), so
//! the first content delta times the first token and the usage chunk counts the tokens.
//!
//! The levels run twice, in the order 1, 2, 4, 4, 2, 1 with half the requests each time,
//! so that a machine slowing down or speeding up during the run weighs on every level
//! alike.
//!
//! Before the server starts, the model alone is timed decoding batches of 1, 2 and 4
//! sequences (one token each, the prompt already in each sequence's cache, the context
//! laid out as the server lays it out): `4 × step(1) / step(4)` is the most that batching
//! can give on this machine, the ceiling the server's ratio is read against. That runs in
//! a child process (this binary with `--decode-ceiling`): llama.cpp's CPU backend runs
//! its threads through OpenMP, whose thread team belongs to the thread that decodes, and
//! a decode on this thread before the server's engine thread started made every server
//! step three times slower (33 ms against 12 ms per step of one sequence, 2 cores).
//!
//! `cargo run --release -p gbnfc-benches --bin serve_report [REQUESTS_PER_LEVEL]` (even;
//! default 8)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use gbnfc_benches::quantile;
use gbnfc_bridge::chat::{conversation, render_prompt};
use gbnfc_bridge::engine::{Engine, EngineOptions};
use gbnfc_bridge::server::{self, ServeOptions};
use gbnfc_bridge::GenerateOptions;
use gbnfc_compiler::schema;
use llama_cpp_2::llama_batch::LlamaBatch;
use serde_json::{json, Value};

/// The slots of the server.
const PARALLEL: u32 = 4;

/// Pairs of (cached grammar, no grammar) requests for the time-to-first-token comparison.
const TTFT_PAIRS: usize = 12;

/// What one streamed request took.
struct Timing {
    first_token: Duration,
    total: Duration,
    tokens: u64,
}

fn main() {
    let argument = std::env::args().nth(1);
    if argument.as_deref() == Some(CEILING_FLAG) {
        for (sequences, step) in decode_ceiling() {
            println!("{sequences} {step}");
        }
        return;
    }
    let per_level: usize = argument.map_or(8, |n| n.parse().expect("REQUESTS_PER_LEVEL"));
    let ceiling = decode_ceiling_apart();
    let url = start_server();
    let schema = example("weather-card.schema.json");
    let format = json!({"type": "json_schema", "json_schema": {"name": "card", "schema": schema}});
    let body = |seed: usize| {
        json!({
            "messages": [{"role": "user", "content": "A weather card for Chengdu tomorrow."}],
            "response_format": format,
            "max_tokens": 96,
            "seed": seed,
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    };
    // Warm up: compile the schema into the cache and fill the slots' prompt caches.
    for seed in 0..PARALLEL as usize {
        stream(&url, &body(seed));
    }

    println!("| clients | requests | generated tokens | aggregate tokens/s | over 1 client | latency p50 / p95 (s) | first token p50 / p95 (ms) |");
    println!("|---|---|---|---|---|---|---|");
    let mut levels: Vec<(usize, Vec<Timing>, f64)> =
        LEVELS.iter().map(|&c| (c, Vec::new(), 0.0)).collect();
    for clients in LEVELS.iter().chain(LEVELS.iter().rev()) {
        let (timings, wall) = run_level(&url, *clients, per_level / 2, &body);
        let level = levels.iter_mut().find(|l| l.0 == *clients).unwrap();
        level.1.extend(timings);
        level.2 += wall;
    }
    let rate =
        |timings: &[Timing], wall: f64| timings.iter().map(|t| t.tokens).sum::<u64>() as f64 / wall;
    let single = rate(&levels[0].1, levels[0].2);
    let mut ratios = Vec::new();
    for (clients, timings, wall) in &levels {
        let tokens: u64 = timings.iter().map(|t| t.tokens).sum();
        let rate = rate(timings, *wall);
        ratios.push((*clients, rate / single));
        let totals: Vec<f64> = timings.iter().map(|t| t.total.as_secs_f64()).collect();
        let firsts: Vec<f64> = timings
            .iter()
            .map(|t| t.first_token.as_secs_f64() * 1000.0)
            .collect();
        println!(
            "| {clients} | {} | {tokens} | {rate:.1} | {:.2}× | {:.2} / {:.2} | {:.0} / {:.0} |",
            timings.len(),
            rate / single,
            quantile(&totals, 0.5),
            quantile(&totals, 0.95),
            quantile(&firsts, 0.5),
            quantile(&firsts, 0.95),
        );
    }

    println!();
    println!("| sequences per batch | model decode step (ms) | most batching can give | the server gave |");
    println!("|---|---|---|---|");
    for (&(sequences, step), &(_, gave)) in ceiling.iter().zip(&ratios) {
        println!(
            "| {sequences} | {step:.1} | {:.2}× | {gave:.2}× |",
            sequences as f64 * ceiling[0].1 / step
        );
    }

    // The same prompt with and without a grammar (the weather card's, through the
    // `grammar` field so that the prompt does not change), interleaved, one at a time.
    let grammar = schema::compile(&schema, &schema::Options::default())
        .unwrap()
        .grammar
        .to_string();
    let plain = |seed: usize| {
        json!({
            "messages": [{"role": "user", "content": "A weather card for Chengdu tomorrow, as JSON."}],
            "max_tokens": 128,
            "seed": seed,
            "stream": true,
        })
    };
    let constrained = |seed: usize| {
        let mut body = plain(seed);
        body["grammar"] = json!(grammar);
        body
    };
    stream(&url, &constrained(0));
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for seed in 0..TTFT_PAIRS {
        with.push(stream(&url, &constrained(seed)).first_token.as_secs_f64() * 1000.0);
        without.push(stream(&url, &plain(seed)).first_token.as_secs_f64() * 1000.0);
    }
    let (with50, without50) = (quantile(&with, 0.5), quantile(&without, 0.5));
    println!();
    println!("| first token, same prompt, one client | p50 (ms) | p95 (ms) | over no grammar |");
    println!("|---|---|---|---|");
    println!(
        "| no grammar | {without50:.1} | {:.1} | 1.00× |",
        quantile(&without, 0.95)
    );
    println!(
        "| cached grammar (weather card) | {with50:.1} | {:.1} | {:.2}× |",
        quantile(&with, 0.95),
        with50 / without50
    );
}

/// The numbers of concurrent clients.
const LEVELS: [usize; 3] = [1, 2, 4];

/// `requests` streamed requests from `clients` concurrent clients; their timings and the
/// wall-clock seconds they took together.
fn run_level(
    url: &str,
    clients: usize,
    requests: usize,
    body: &(dyn Fn(usize) -> Value + Sync),
) -> (Vec<Timing>, f64) {
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    let timings = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= requests {
                            return mine;
                        }
                        mine.push(stream(url, &body(100 + i)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    (timings, started.elapsed().as_secs_f64())
}

/// The argument that makes this binary print [`decode_ceiling`] and exit.
const CEILING_FLAG: &str = "--decode-ceiling";

/// [`decode_ceiling`], measured in a child process (see the module's documentation).
fn decode_ceiling_apart() -> Vec<(usize, f64)> {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .arg(CEILING_FLAG)
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap();
    assert!(output.status.success(), "{CEILING_FLAG} failed");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (sequences, step) = line.split_once(' ').unwrap();
            (sequences.parse().unwrap(), step.parse().unwrap())
        })
        .collect()
}

/// Steps timed per batch size in [`decode_ceiling`].
const CEILING_STEPS: usize = 64;

/// The model alone: milliseconds per decode step (median of [`CEILING_STEPS`]) with 1, 2
/// and 4 sequences in the batch, in the server's own context layout
/// (`Engine::new_parallel_context`, `PARALLEL` sequences, each holding the bench's prompt).
fn decode_ceiling() -> Vec<(usize, f64)> {
    let engine = Engine::load(&engine_options()).expect("the default model: scripts/fetch-model");
    let (mut ctx, _) = engine.new_parallel_context(PARALLEL).unwrap();
    let messages = conversation(None, "A weather card for Chengdu tomorrow.");
    let prompt = engine.tokenize_prompt(&render_prompt(&engine, &messages).unwrap());
    let mut batch = LlamaBatch::new(engine.ctx() as usize, 1);
    batch.add_sequence(&prompt, 0, false).unwrap();
    ctx.decode(&mut batch).unwrap();
    for seq in 1..PARALLEL as i32 {
        ctx.kv_cache_seq_cp(0, seq, Some(0), Some(prompt.len() as u32))
            .unwrap();
    }
    let token = *prompt.last().unwrap();
    LEVELS
        .into_iter()
        .map(|sequences| {
            let mut steps = Vec::new();
            for step in 0..CEILING_STEPS {
                let position = (prompt.len() + step) as i32;
                batch.clear();
                for seq in 0..sequences as i32 {
                    batch.add(token, position, &[seq], true).unwrap();
                }
                let started = Instant::now();
                ctx.decode(&mut batch).unwrap();
                steps.push(started.elapsed().as_secs_f64() * 1000.0);
            }
            for seq in 0..PARALLEL {
                ctx.clear_kv_cache_seq(Some(seq), Some(prompt.len() as u32), None)
                    .unwrap();
            }
            (sequences, quantile(&steps, 0.5))
        })
        .collect()
}

/// The engine of the bench's server (and of [`decode_ceiling`]).
fn engine_options() -> EngineOptions {
    EngineOptions {
        ctx: 2048,
        ..EngineOptions::default()
    }
}

/// Starts `gbnfc serve` in this process on a loopback port; returns its URL.
fn start_server() -> String {
    let options = ServeOptions {
        host: IpAddr::V4(Ipv4Addr::LOCALHOST),
        port: 0,
        api_key: None,
        no_auth: false,
        parallel: PARALLEL,
        queue: 64,
        max_body: server::DEFAULT_MAX_BODY,
        request_timeout: Duration::from_secs(600),
        engine: engine_options(),
        defaults: GenerateOptions::default(),
        tool_defaults: GenerateOptions {
            temperature: gbnfc_bridge::tool_calls::TOOL_CALL_TEMPERATURE,
            ..GenerateOptions::default()
        },
        retries: 0,
        retrieval: gbnfc_bridge::tool_retrieval::Retrieval::Auto,
        compact_tools: false,
        backends: Vec::new(),
    };
    gbnfc_benches::serve_in_process(options, Duration::from_secs(300))
}

/// Streams one request; times its first content delta and its end, counts its tokens.
fn stream(url: &str, body: &Value) -> Timing {
    let started = Instant::now();
    let response = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(600))
        .build()
        .unwrap()
        .post(format!("{url}/v1/chat/completions"))
        .json(body)
        .send()
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut first_token = None;
    let mut tokens = 0;
    for line in BufReader::new(response).lines() {
        let line = line.unwrap();
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        if data == "[DONE]" {
            break;
        }
        let chunk: Value = serde_json::from_str(data).unwrap();
        assert!(chunk.get("error").is_none(), "{chunk}");
        let content = chunk["choices"][0]["delta"]["content"].as_str();
        if first_token.is_none() && content.is_some_and(|c| !c.is_empty()) {
            first_token = Some(started.elapsed());
        }
        if let Some(n) = chunk["usage"]["completion_tokens"].as_u64() {
            tokens = n;
        }
    }
    Timing {
        first_token: first_token.unwrap_or_else(|| started.elapsed()),
        total: started.elapsed(),
        tokens,
    }
}

fn example(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/examples")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}
