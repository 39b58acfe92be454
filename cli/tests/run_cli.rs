//! `gbnfc run` as users run it, on the real default model (CPU): results on standard
//! output, in the chat.completion shape with `--openai`, stats on standard error — and
//! every bad input listed in the issue (missing model, not GGUF, truncated GGUF, context
//! too small, invalid schema, `--max-tokens 1`, …) ends with one clear message and exit
//! status 1, never a crash.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Output;

use serde_json::Value;

use common::{example, gbnfc_on_model as gbnfc, repo, stderr, stdout, Scratch};

/// Exit status 1, one `error:` message containing every word, no crash.
fn fails_with(out: &Output, words: &[&str]) {
    let err = stderr(out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "stderr: {err}\nstdout: {}",
        stdout(out)
    );
    assert!(err.starts_with("error:"), "{err}");
    for word in words {
        assert!(err.contains(word), "missing {word:?} in: {err}");
    }
    for crash in [
        "panicked",
        "RUST_BACKTRACE",
        "GGML_ASSERT",
        "internal error",
    ] {
        assert!(!err.contains(crash), "{err}");
    }
    assert!(stdout(out).is_empty(), "{}", stdout(out));
}

#[test]
fn a_schema_result_is_printed_as_json() {
    let schema = example("ticket-classification.schema.json");
    let out = gbnfc(&[
        "run",
        "--schema",
        &schema,
        "--prompt",
        "I paid for my order yesterday but it still shows as unpaid.",
        "--seed",
        "4",
        "--temperature",
        "1.0",
        "--max-tokens",
        "96",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let value: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&schema).unwrap()).unwrap();
    assert!(jsonschema::is_valid(&schema, &value), "{value}");
    assert!(
        stderr(&out).is_empty(),
        "--quiet prints nothing else: {}",
        stderr(&out)
    );
}

/// `gbnfc run` on the weather card's response_format with `--openai --stats`, and `extra`.
fn weather_card_openai(extra: &[&str]) -> Output {
    let format = example("weather-card.response-format.json");
    let mut args = vec![
        "run",
        "--response-format",
        &format,
        "--prompt",
        "Weather card for Chengdu tomorrow, with commute advice.",
        "--seed",
        "2",
        "--max-tokens",
        "160",
        "--openai",
        "--stats",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    gbnfc(&args)
}

#[test]
fn openai_prints_a_chat_completion_and_stats_go_to_stderr() {
    let out = weather_card_openai(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let completion: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(completion["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert_eq!(completion["object"], "chat.completion");
    assert_eq!(completion["model"], "SmolLM2-135M-Instruct.Q4_1");
    let choice = &completion["choices"][0];
    assert_eq!(choice["finish_reason"], "stop");
    assert_eq!(choice["message"]["role"], "assistant");
    let content: Value =
        serde_json::from_str(choice["message"]["content"].as_str().unwrap()).unwrap();
    assert!(content["commute_advice"]["go_to_work"]["need_umbrella"].is_boolean());
    assert!(completion["usage"]["total_tokens"].as_u64().unwrap() > 0);
    let stats: Value = serde_json::from_str(stderr(&out).trim()).unwrap();
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
    assert_eq!(stats["grammar_engine"], "gbnfc");
    assert_eq!(stats["attempts"], 1);
}

/// The default model under a real reasoning model's chat template: it thinks, the
/// thinking comes back as `reasoning_content`, the answer alone as `content`, and
/// `--stats` counts the two apart.
#[test]
fn a_reasoning_template_gives_reasoning_content_and_split_stats() {
    let template =
        repo().join("bridge/tests/fixtures/deepseek-r1-distill-qwen-7b.chat_template.jinja");
    let template = template.to_str().unwrap();
    let out = weather_card_openai(&["--chat-template", template, "--reasoning-budget", "12"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let completion: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let message = &completion["choices"][0]["message"];
    let reasoning = message["reasoning_content"].as_str().unwrap();
    assert!(!reasoning.contains("</think>"), "{reasoning}");
    let content: Value = serde_json::from_str(message["content"].as_str().unwrap()).unwrap();
    assert!(content["commute_advice"]["go_to_work"]["need_umbrella"].is_boolean());
    let stats: Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    let thinking = stats["reasoning_tokens"].as_u64().unwrap();
    let answer = stats["answer_tokens"].as_u64().unwrap();
    assert!(thinking > 0 && answer > 0, "{stats}");
    assert_eq!(
        thinking + answer,
        stats["generated_tokens"].as_u64().unwrap()
    );
    assert_eq!(
        completion["usage"]["completion_tokens_details"]["reasoning_tokens"].as_u64(),
        Some(thinking)
    );
}

#[test]
fn reasoning_on_needs_markers() {
    let schema = example("query-order.schema.json");
    let out = gbnfc(&[
        "run",
        "--schema",
        &schema,
        "--prompt",
        "x",
        "--reasoning",
        "on",
    ]);
    fails_with(&out, &["reasoning markers", "--reasoning-markers"]);
    let out = gbnfc(&[
        "run",
        "--schema",
        &schema,
        "--prompt",
        "x",
        "--reasoning",
        "maybe",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn a_grammar_and_a_messages_file_work_too() {
    let messages = Scratch::new(
        "messages.json",
        br#"[{"role":"system","content":"Answer yes or no."},{"role":"user","content":"Is the sky blue on a clear day?"}]"#,
    );
    let out = gbnfc(&[
        "run",
        "--grammar",
        "grammars/yes-no.gbnf",
        "--messages",
        messages.path(),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answer = stdout(&out);
    assert!(["yes\n", "no\n"].contains(&answer.as_str()), "{answer:?}");
}

#[test]
fn a_missing_model_file_is_an_error() {
    let out = gbnfc(&[
        "run",
        "--model",
        "/no/such/model.gguf",
        "--schema",
        &example("query-order.schema.json"),
        "--prompt",
        "x",
    ]);
    fails_with(&out, &["no model found", "/no/such/model.gguf", "--model"]);
}

#[test]
fn a_file_that_is_not_gguf_is_an_error() {
    let out = gbnfc(&[
        "run",
        "--model",
        "Cargo.toml",
        "--schema",
        &example("query-order.schema.json"),
        "--prompt",
        "x",
    ]);
    fails_with(&out, &["not a GGUF model file", "Cargo.toml"]);
    let empty = Scratch::new("empty.gguf", b"");
    let out = gbnfc(&[
        "run",
        "--model",
        empty.path(),
        "--schema",
        &example("query-order.schema.json"),
        "--prompt",
        "x",
    ]);
    fails_with(&out, &["not a GGUF model file", "empty"]);
}

#[test]
fn a_truncated_gguf_is_an_error() {
    let model = std::fs::read(repo().join("models/SmolLM2-135M-Instruct.Q4_1.gguf"))
        .expect("the default model: run scripts/fetch-model");
    // Cut in the header, in the metadata, and in the tensor data near its end.
    for (name, len) in [
        ("header", 12),
        ("metadata", 200_000),
        ("data", model.len() - 1000),
    ] {
        let cut = Scratch::new(&format!("cut-{name}.gguf"), &model[..len]);
        let out = gbnfc(&[
            "run",
            "--model",
            cut.path(),
            "--schema",
            &example("query-order.schema.json"),
            "--prompt",
            "x",
        ]);
        fails_with(&out, &["truncated", "fetch"]);
    }
    // A whole GGUF file with no model in it: llama.cpp's refusal comes back as an error.
    let mut bare = b"GGUF".to_vec();
    bare.extend_from_slice(&3u32.to_le_bytes());
    bare.extend_from_slice(&0u64.to_le_bytes());
    bare.extend_from_slice(&0u64.to_le_bytes());
    let bare = Scratch::new("bare.gguf", &bare);
    let out = gbnfc(&[
        "run",
        "--model",
        bare.path(),
        "--schema",
        &example("query-order.schema.json"),
        "--prompt",
        "x",
    ]);
    fails_with(&out, &["could not load"]);
}

#[test]
fn a_context_too_small_for_the_prompt_is_an_error() {
    let prompt = "Tell me about the weather in Chengdu. ".repeat(60);
    let out = gbnfc(&[
        "run",
        "--ctx",
        "64",
        "--schema",
        &example("query-order.schema.json"),
        "--prompt",
        &prompt,
        "--quiet",
    ]);
    fails_with(&out, &["the prompt is", "--ctx"]);
}

#[test]
fn invalid_schemas_are_errors() {
    let typo = Scratch::new("typo.json", br#"{"type":"obejct"}"#);
    let out = gbnfc(&["run", "--schema", typo.path(), "--prompt", "x"]);
    fails_with(&out, &["invalid schema", "obejct"]);
    let impossible = Scratch::new(
        "impossible.json",
        br#"{"type":"integer","minimum":5,"maximum":1}"#,
    );
    let out = gbnfc(&["run", "--schema", impossible.path(), "--prompt", "x"]);
    fails_with(&out, &["accepts no value"]);
    let not_json = Scratch::new("not-json.json", b"{\"type\":");
    let out = gbnfc(&["run", "--schema", not_json.path(), "--prompt", "x"]);
    fails_with(&out, &["invalid JSON"]);
    let text = Scratch::new("text.json", br#"{"type":"text"}"#);
    let out = gbnfc(&["run", "--response-format", text.path(), "--prompt", "x"]);
    fails_with(&out, &["constrains nothing"]);
    let out = gbnfc(&["run", "--grammar", "Cargo.toml", "--prompt", "x"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn a_grammar_too_ambiguous_for_llama_cpp_runs_on_gbnfcs_engine_only() {
    // 2^13 ways to start: llama.cpp would keep a parse stack for each.
    let grammar = repo().join("compiler/tests/fixtures/doubling.gbnf");
    let path = grammar.to_str().unwrap();
    let out = gbnfc(&[
        "run",
        "--grammar",
        path,
        "--prompt",
        "x",
        "--max-tokens",
        "64",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for words in [
        "warning[too-ambiguous]",
        "doubling.gbnf:1:1",
        "4096 parse stacks",
        "help: rewrite",
    ] {
        assert!(err.contains(words), "missing {words:?} in: {err}");
    }
    assert!(!stdout(&out).trim().is_empty());
    let out = gbnfc(&[
        "run",
        "--grammar",
        path,
        "--prompt",
        "x",
        "--grammar-engine",
        "llama",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("too ambiguous for llama.cpp's sampler"),
        "{err}"
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn max_tokens_1_is_a_truncation_error() {
    let out = gbnfc(&[
        "run",
        "--schema",
        &example("query-order.schema.json"),
        "--prompt",
        "Where is my order?",
        "--max-tokens",
        "1",
        "--quiet",
    ]);
    fails_with(&out, &["truncated", "--max-tokens"]);
}

#[test]
fn bad_messages_and_bad_flags_are_refused() {
    let bad = Scratch::new("bad-messages.json", br#"[{"role":"robot","content":"hi"}]"#);
    let out = gbnfc(&[
        "run",
        "--schema",
        &example("query-order.schema.json"),
        "--messages",
        bad.path(),
    ]);
    fails_with(&out, &["unknown role `robot`"]);
    let empty = Scratch::new("no-messages.json", b"[]");
    let out = gbnfc(&[
        "run",
        "--schema",
        &example("query-order.schema.json"),
        "--messages",
        empty.path(),
    ]);
    fails_with(&out, &["empty"]);
    // Usage errors: exit status 2.
    for args in [
        vec!["run", "--prompt", "x"],
        vec!["run", "--schema", "s.json"],
        vec![
            "run",
            "--schema",
            "s.json",
            "--grammar",
            "g.gbnf",
            "--prompt",
            "x",
        ],
        vec![
            "run",
            "--schema",
            "s.json",
            "--prompt",
            "x",
            "--temperature",
            "-1",
        ],
        vec!["run", "--schema", "s.json", "--prompt", "x", "--top-p", "0"],
        vec![
            "run",
            "--schema",
            "s.json",
            "--prompt",
            "x",
            "--max-tokens",
            "0",
        ],
    ] {
        let out = gbnfc(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
}
