//! `gbnfc call` as users run it, on the real default model (CPU): the README's first
//! command, and tool retrieval over a long list — the five-server list (filesystem, git,
//! memory, time, fetch: 38 tools, about 5,300 tokens) narrowed to fit the context, the
//! tools shown named by `--stats` and `-v`, a chosen tool never dropped.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../../bridge/tests/common/five_servers.rs"]
mod five_servers;

use std::process::Output;

use serde_json::{json, Value};

use common::{gbnfc_on_model as gbnfc, repo, stats_of, stderr, stdout, Scratch};

/// The five servers' tools (as captured in `compiler/tests/fixtures/mcp`) as one MCP
/// `tools/list` result in a scratch file named after `name` (each test its own).
fn five_servers(name: &str) -> Scratch {
    let tools = five_servers::mcp_tools();
    assert_eq!(tools.len(), 38);
    Scratch::new(
        &format!("five-servers-{name}.json"),
        json!({"tools": tools}).to_string().as_bytes(),
    )
}

/// `gbnfc call --tools LIST --prompt PROMPT` and `extra` flags.
fn call(list: &Scratch, prompt: &str, extra: &[&str]) -> Output {
    let mut args = vec!["call", "--tools", list.path(), "--prompt", prompt];
    args.extend_from_slice(extra);
    gbnfc(&args)
}

/// The names of the calls in a printed assistant message.
fn called(out: &Output) -> Vec<String> {
    let message: Value = serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)));
    message["tool_calls"]
        .as_array()
        .unwrap_or_else(|| panic!("no calls: {message}"))
        .iter()
        .map(|c| c["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// The README's first command, as the README spells it, from `target/release/gbnfc` on.
fn readme_call() -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.trim_start().starts_with("scripts/setup && "))
        .expect("the README opens with `scripts/setup && …`");
    let command = line.split_once("&& ").unwrap().1;
    let mut words = Vec::new();
    let mut rest = command.trim();
    while !rest.is_empty() {
        let (word, after) = if let Some(quoted) = rest.strip_prefix('"') {
            quoted.split_once('"').unwrap()
        } else {
            rest.split_once(' ').unwrap_or((rest, ""))
        };
        words.push(word.to_string());
        rest = after.trim_start();
    }
    assert_eq!(words[0], "target/release/gbnfc", "{command}");
    words.remove(0);
    words
}

/// The README's first command asks for Chengdu's weather: with the default flags the
/// call names Chengdu on every seed from 1 to 20.
#[test]
fn the_readme_call_names_chengdu_on_seeds_1_to_20() {
    let mut args = readme_call();
    assert_eq!(args[0], "call");
    let at = args.iter().position(|a| a == "--seed").unwrap();
    args.drain(at..at + 2);
    let mut wrong = Vec::new();
    for seed in 1..=20 {
        let seed = seed.to_string();
        let mut run: Vec<&str> = args.iter().map(String::as_str).collect();
        run.extend(["--seed", &seed, "-q"]);
        let out = gbnfc(&run);
        assert!(out.status.success(), "seed {seed}: {}", stderr(&out));
        let message: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let arguments = message["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap()
            .to_string();
        if !arguments.contains("Chengdu") {
            wrong.push(format!("seed {seed}: {arguments}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// By default a list too long for a quarter of the context is narrowed to the best five,
/// so the call fits; `--stats` names the tools shown and `-v` says so in words.
#[test]
fn a_long_tool_list_is_narrowed_to_fit_the_context() {
    let list = five_servers("narrowed");
    let out = call(
        &list,
        "Show me the commit log of the git repository at /srv/project.",
        &[
            "--choice", "required", "--ctx", "4096", "--seed", "1", "--stats", "-v",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let stats = stats_of(&out);
    let shown: Vec<&str> = stats["tools_shown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(shown.len(), 5, "{stats}");
    assert_eq!(stats["tools_listed"], 38);
    assert!(shown.contains(&"git_log"), "{shown:?}");
    assert!(stats["prompt_tokens"].as_u64().unwrap() < 2048, "{stats}");
    let called = called(&out);
    assert!(
        called.iter().all(|c| shown.contains(&c.as_str())),
        "{called:?} not in {shown:?}"
    );
    assert!(
        stderr(&out).contains(&format!("tools shown: {} (5 of 38)", shown.join(", "))),
        "{}",
        stderr(&out)
    );

    // A list that fits is shown whole.
    let out = gbnfc(&[
        "call",
        "--tools",
        "examples/weather-tools.openai.json",
        "--prompt",
        "What's the weather in Chengdu tomorrow?",
        "--choice",
        "required",
        "--stats",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let whole = stats_of(&out);
    assert_eq!(whole["tools_shown"], json!(["get_weather"]), "{whole}");
    assert_eq!(whole["tools_listed"], 1, "{whole}");
    // With no --ctx, the default model's trained context (memory allows it here).
    assert_eq!(whole["ctx"], 8192, "{whole}");
}

/// `--tools-top-k` sets how many; a tool `--choice` names is in whatever its rank, and is
/// the one called; `--all-tools` shows all 38, which a 4,096-token context cannot hold
/// unless `--compact-tools` shortens them.
#[test]
fn top_k_the_chosen_tool_and_all_tools() {
    let list = five_servers("top-k");
    let ask = "What time is it in Tokyo?";
    let out = call(
        &list,
        ask,
        &[
            "--tools-top-k",
            "2",
            "--choice",
            "git_log",
            "--seed",
            "1",
            "--stats",
            "-q",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let stats = stats_of(&out);
    let shown = stats["tools_shown"].as_array().unwrap();
    assert_eq!(shown.len(), 2, "{stats}");
    assert!(shown.contains(&json!("git_log")), "{stats}");
    assert_eq!(called(&out), ["git_log"]);

    let out = call(
        &list,
        ask,
        &["--all-tools", "--ctx", "4096", "--seed", "1", "-q"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("context holds 4096"), "{err}");
    let whole: usize = err
        .split("the prompt is ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no prompt size in: {err}"));

    // The compact rendering shows all 38 in about 30% fewer tokens: within 4,096.
    let out = call(
        &list,
        ask,
        &[
            "--all-tools",
            "--compact-tools",
            "--ctx",
            "4096",
            "--max-tokens",
            "64",
            "--choice",
            "required",
            "--seed",
            "1",
            "--stats",
            "-q",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let compact = stats_of(&out)["prompt_tokens"].as_u64().unwrap() as usize;
    assert!(compact * 10 < whole * 8, "{compact} against {whole}");
    assert_eq!(stats_of(&out)["tools_shown"].as_array().unwrap().len(), 38);

    for bad in [
        vec!["--tools-top-k", "0"],
        vec!["--tools-top-k", "2", "--all-tools"],
    ] {
        let out = call(&list, ask, &bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", stderr(&out));
    }
}
