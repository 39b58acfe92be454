//! `gbnfc tools` as users run it: grammars for the seed tool lists in every output form,
//! and one clear message with exit status 1 for every bad tool list or option — naming
//! the tool and the JSON pointer where there is one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use gbnfc_compiler::gbnf;
use gbnfc_compiler::recognize::Recognizer;
use serde_json::Value;

use common::{example, gbnfc_fed as gbnfc, stderr, stdout};

/// A grammar printed by `gbnfc tools`: parses, passes `check` with no finding.
fn grammar(text: &str) -> gbnf::Grammar {
    let grammar = gbnf::parse(text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    assert!(gbnf::check(&grammar).is_empty(), "{text}");
    grammar
}

#[test]
fn seed_tool_lists_compile_in_every_syntax() {
    for file in [
        "weather-tools.openai.json",
        "forecast.tools.json",
        "localtion-weather.functions.json",
        "file-tools.mcp-list.json",
        "get-ticket.mcp-tool.json",
    ] {
        for syntax in ["json", "hermes", "llama3", "mistral"] {
            let out = gbnfc(
                &[
                    "tools",
                    &example(file),
                    "--syntax",
                    syntax,
                    "--choice",
                    "required",
                ],
                "",
            );
            assert!(out.status.success(), "{file} {syntax}: {}", stderr(&out));
            grammar(&stdout(&out));
        }
    }
    let out = gbnfc(
        &[
            "tools",
            &example("weather-tools.openai.json"),
            "--syntax",
            "hermes",
            "--choice",
            "get_weather",
        ],
        "",
    );
    let g = grammar(&stdout(&out));
    let call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\":\"Chengdu\",\"extensions\":\"all\"}}\n</tool_call>";
    assert!(Recognizer::new(&g).unwrap().recognize(call).accepted);
}

#[test]
fn standard_input_parallel_calls_and_output_file() {
    let tools = std::fs::read_to_string(example("file-tools.mcp-list.json")).unwrap();
    let out_file = std::env::temp_dir().join(format!("gbnfc-tools-{}.gbnf", std::process::id()));
    let out = gbnfc(
        &[
            "tools",
            "-",
            "--syntax",
            "mistral",
            "--choice",
            "required",
            "--parallel",
            "--max-calls",
            "2",
            "-o",
            out_file.to_str().unwrap(),
        ],
        &tools,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    let text = std::fs::read_to_string(&out_file).unwrap();
    std::fs::remove_file(&out_file).unwrap();
    let r = Recognizer::new(&grammar(&text)).unwrap();
    let one = r#"{"name": "search_files", "arguments": {"pattern":"x"}, "id": "a1B2c3D4e"}"#;
    assert!(r.recognize(&format!("[TOOL_CALLS][{one}]")).accepted);
    assert!(r.recognize(&format!("[TOOL_CALLS][{one}, {one}]")).accepted);
    assert!(
        !r.recognize(&format!("[TOOL_CALLS][{one}, {one}, {one}]"))
            .accepted
    );
}

#[test]
fn structural_tag_emits_one_tag_per_tool_and_refuses_what_it_cannot_say() {
    let weather = example("weather-tools.openai.json");
    let out = gbnfc(
        &[
            "tools",
            &weather,
            "--syntax",
            "hermes",
            "--choice",
            "required",
            "--emit",
            "structural-tag",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let tag: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(tag["type"], "structural_tag", "{tag}");
    let format = &tag["format"];
    assert_eq!(format["type"], "tags_with_separator", "{tag}");
    assert_eq!(format["at_least_one"], true, "{tag}");
    let first = &format["tags"][0];
    assert!(
        first["begin"]
            .as_str()
            .unwrap()
            .starts_with("<tool_call>\n{\"name\": \""),
        "{tag}"
    );
    assert_eq!(first["end"], "}\n</tool_call>", "{tag}");
    assert_eq!(first["content"]["type"], "grammar", "{tag}");

    // Mistral's calls sit in one list: one more tag around them.
    let out = gbnfc(
        &[
            "tools",
            &weather,
            "--syntax",
            "mistral",
            "--choice",
            "required",
            "--emit",
            "structural-tag",
        ],
        "",
    );
    let tag: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    let list = &tag["format"];
    assert_eq!(list["type"], "tag", "{tag}");
    assert_eq!(list["begin"], "[TOOL_CALLS][", "{tag}");
    assert_eq!(list["end"], "]", "{tag}");
    assert_eq!(list["content"]["type"], "tags_with_separator", "{tag}");
    assert_eq!(list["content"]["tags"][0]["end"], "\"}", "{tag}");

    let out = gbnfc(
        &[
            "tools",
            &weather,
            "--choice",
            "none",
            "--emit",
            "structural-tag",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("tool choice none"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty());

    let out = gbnfc(
        &[
            "tools",
            &weather,
            "--emit",
            "structural-tag",
            "--target",
            "lark",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--target lark"), "{}", stderr(&out));
}

#[test]
fn auto_emits_json_with_the_lazy_grammar_and_triggers() {
    let out = gbnfc(
        &[
            "tools",
            &example("weather-tools.openai.json"),
            "--syntax",
            "hermes",
            "--emit",
            "json",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["triggers"], serde_json::json!(["<tool_call>"]));
    assert_eq!(json["diagnostics"], serde_json::json!([]));
    let full = Recognizer::new(&grammar(json["grammar"].as_str().unwrap())).unwrap();
    let lazy = Recognizer::new(&grammar(json["lazy_grammar"].as_str().unwrap())).unwrap();
    let call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\":\"Chengdu\",\"extensions\":\"base\"}}\n</tool_call>";
    assert!(full.recognize("It is sunny in Chengdu.").accepted);
    assert!(
        !full
            .recognize("Let me check: <tool_call> get_weather")
            .accepted
    );
    assert!(full.recognize(call).accepted && lazy.recognize(call).accepted);
    assert!(!lazy.recognize("It is sunny in Chengdu.").accepted);

    // The legacy form's `function_call` and a forced `none`.
    let out = gbnfc(
        &[
            "tools",
            &example("localtion-weather.functions.json"),
            "--choice",
            "none",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    assert!(
        stderr(&out).contains("no grammar applies"),
        "{}",
        stderr(&out)
    );
    let out = gbnfc(
        &[
            "tools",
            &example("localtion-weather.functions.json"),
            "--choice",
            "none",
            "--emit",
            "json",
        ],
        "",
    );
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(json["grammar"].is_null() && json["lazy_grammar"].is_null());
}

#[test]
fn reasoning_markers_put_free_thinking_before_the_calls_and_drop_the_lazy_grammar() {
    let out = gbnfc(
        &[
            "tools",
            &example("weather-tools.openai.json"),
            "--syntax",
            "hermes",
            "--choice",
            "required",
            "--emit",
            "json",
            "--reasoning-markers",
            "<think>,</think>",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(json["lazy_grammar"].is_null(), "{json}");
    assert_eq!(json["triggers"], serde_json::json!([]));
    let full = Recognizer::new(&grammar(json["grammar"].as_str().unwrap())).unwrap();
    let call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\":\"Chengdu\",\"extensions\":\"base\"}}\n</tool_call>";
    let thinking = "<think>I could write <tool_call> get_weather here.</think>\n";
    assert!(full.recognize(&format!("{thinking}{call}")).accepted);
    assert!(!full.recognize(call).accepted, "the section comes first");
    assert!(!full.recognize(&format!("{thinking}Sunny.")).accepted);
}

#[test]
fn diagnostics_name_the_tool_and_the_pointer() {
    let tools = r#"{"tools": [{"name": "tag", "inputSchema": {"type": "object",
        "properties": {"tags": {"type": "array", "uniqueItems": true}}}}]}"#;
    let out = gbnfc(&["tools", "-", "--choice", "required"], tools);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("/tools/0/inputSchema/properties/tags/uniqueItems")
            && err.contains("tool `tag`"),
        "{err}"
    );
    let out = gbnfc(
        &["tools", "-", "--choice", "required", "--emit", "json"],
        tools,
    );
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["diagnostics"][0]["tool"], "tag");
    assert_eq!(json["diagnostics"][0]["status"], "validation-only");
    let out = gbnfc(&["tools", "-", "--strict"], tools);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("tool `tag`"));
}

fn fails_with(input: &str, args: &[&str], words: &[&str]) {
    let mut all = vec!["tools", "-"];
    all.extend_from_slice(args);
    let out = gbnfc(&all, input);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{input} {args:?}: {err}");
    assert!(stdout(&out).is_empty());
    for w in words {
        assert!(err.contains(w), "{input} {args:?}: want {w:?} in:\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_tool_lists_and_options_exit_1_with_a_clear_message() {
    let ok = r#"{"tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]}"#;
    fails_with(r#"{"tools": []}"#, &[], &["/tools", "empty"]);
    fails_with(
        r#"[{"name": "a", "input_schema": {"type": "object"}}, {"name": "a", "input_schema": {"type": "object"}}]"#,
        &[],
        &["/1:", "tool `a` is listed twice", "/0"],
    );
    fails_with(
        r#"{"tools": [{"type": "function", "function": {"name": "get_weather"}}]}"#,
        &[],
        &[
            "/tools/0/function:",
            "tool `get_weather`",
            "no `parameters`",
        ],
    );
    fails_with(
        r#"{"tools": [{"name": "read"}]}"#,
        &[],
        &["/tools/0:", "tool `read`", "no `inputSchema`"],
    );
    fails_with(
        r#"{"tools": [{"name": "read", "inputSchema": {"type": "string"}}]}"#,
        &[],
        &[
            "/tools/0/inputSchema/type:",
            "tool `read`",
            "not an object schema",
        ],
    );
    fails_with(
        r#"{"tools": [{"name": ["read"], "inputSchema": {"type": "object"}}]}"#,
        &[],
        &["/tools/0/name:", "the tool at /tools/0", "as its name"],
    );
    fails_with(
        ok,
        &["--syntax", "chatml"],
        &["unknown tool-call syntax `chatml`", "hermes"],
    );
    fails_with(
        r#"{"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}], "tool_choice": "often"}"#,
        &[],
        &["/tool_choice:", "unknown tool choice \"often\""],
    );
    fails_with(ok, &["--choice", ""], &["unknown tool choice"]);
    fails_with(
        ok,
        &["--choice", "get_wether"],
        &[
            "forced tool `get_wether` is not in the tool list",
            "get_weather",
        ],
    );
    fails_with(
        ok,
        &["--input-format", "yaml"],
        &["unknown tool-list format `yaml`"],
    );
    fails_with(
        ok,
        &["--input-format", "mcp"],
        &["<stdin>: /tools/0/name:", "has no `name`"],
    );
    fails_with(ok, &["--parallel", "--max-calls", "0"], &["max_calls is 0"]);
    fails_with("{\"tools\": [", &[], &["<stdin>:1:", "invalid JSON"]);
    fails_with(
        r#"{"tools": [{"name": "n", "inputSchema": {"type": "object", "properties": {"x": {"type": "strng"}}}}]}"#,
        &[],
        &["/tools/0/inputSchema/properties/x/type:", "tool `n`"],
    );
}

#[test]
fn help_has_the_syntaxes_and_an_example() {
    let out = gbnfc(&["tools", "--help"], "");
    assert!(out.status.success());
    let help = stdout(&out);
    for want in [
        "Example:",
        "[TOOL_CALLS]",
        "<tool_call>",
        "--max-calls",
        "--input-format",
    ] {
        assert!(help.contains(want), "want {want} in:\n{help}");
    }
}

#[test]
fn usage_errors_exit_2() {
    let out = gbnfc(&["tools"], "");
    assert_eq!(out.status.code(), Some(2));
    let out = gbnfc(&["tools", "-", "--emit", "yaml"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn targets_spell_both_grammars_for_the_engine() {
    let args = |target: &'static str| {
        [
            "tools",
            "../shared/examples/weather-tools.openai.json",
            "--syntax",
            "hermes",
            "--emit",
            "json",
            "--target",
            target,
        ]
    };
    let spelled = |target| {
        let out = gbnfc(&args(target), "");
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()
    };
    let llama = spelled("llama");
    let lark = spelled("lark");
    let xgrammar = spelled("xgrammar");
    assert!(llama["grammar"].as_str().unwrap().starts_with("root ::= "));
    for key in ["grammar", "lazy_grammar"] {
        let text = lark[key].as_str().unwrap();
        assert!(
            text.starts_with("start: ") && !text.contains("::="),
            "{text}"
        );
        let text = xgrammar[key].as_str().unwrap();
        assert!(
            text.starts_with("root ::= ") && !text.contains(" . "),
            "{text}"
        );
    }
    assert_eq!(lark["triggers"], llama["triggers"]);
    let unknown = gbnfc(&args("vllm"), "");
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("use llama, xgrammar or lark"));
}
