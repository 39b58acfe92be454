//! `gbnfc serve` driven by the official OpenAI Python SDK, as a user's client would drive
//! it: the real binary serves the default model on a free port, and
//! `scripts/openai_sdk_check.py` runs in the venv `scripts/setup` makes
//! (`target/openai-venv`, the SDK at a pinned version) against it — structured outputs
//! (`json_schema` strict on every seed schema, `parse` with a Pydantic model,
//! `json_object`), tool calls (`required`, named, `auto`, a tool-result turn), streaming
//! (content and tool calls, usage last), concurrent requests and OpenAI-shaped errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Mutex;

use common::repo;
use common::serve::{api_key, run_sdk_script, venv_python, Server};

/// Held while a check runs, so that one server at a time has the machine's cores.
/// Two servers decoding at once on a 2-core CI machine oversubscribe llama.cpp's worker
/// threads, which spin while waiting for each other: requests that take seconds alone
/// took over the SDK's 120 s timeout there.
static ONE_SERVER_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs scripts/openai_sdk_check.py against a server started with `extra` flags (and
/// `GBNFC_REASONING=1` when `reasoning`).
fn sdk_check(extra: &[&str], reasoning: bool) {
    // A check that failed poisons the lock; the next one runs all the same.
    let _alone = ONE_SERVER_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    venv_python();
    let examples = repo().join("../shared/examples");
    assert!(
        examples.is_dir(),
        "{} is missing: CI lays ../shared beside the clone",
        examples.display()
    );
    let key = api_key();
    let mut server = Server::start(&key, extra);
    let url = server.url();
    run_sdk_script(&mut server, &url, &key, reasoning);
}

#[test]
fn openai_python_sdk_against_gbnfc_serve() {
    sdk_check(&[], false);
}

/// The default model under a real reasoning model's chat template (DeepSeek-R1-Distill's):
/// `reasoning_content` beside `content` in answers and as its own stream deltas,
/// `reasoning_effort` honoured, the answer valid.
#[test]
fn openai_python_sdk_sees_reasoning_content() {
    let template =
        repo().join("bridge/tests/fixtures/deepseek-r1-distill-qwen-7b.chat_template.jinja");
    let template = template.to_str().unwrap();
    sdk_check(
        &["--chat-template", template, "--reasoning-budget", "32"],
        true,
    );
}
