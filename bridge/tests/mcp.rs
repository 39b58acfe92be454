//! The MCP client against real servers: the repository's fault-injection server
//! (`src/bin/gbnfc-mcp-fault-server.rs`) for every way a server can misbehave, and the
//! reference servers from npm (`npx -y`, pinned to the versions of the captured fixtures
//! in `compiler/tests/fixtures/mcp/`) for the real thing.
//!
//! Every test also checks that no process it started is left behind (Linux `/proc`).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gbnfc_bridge::mcp::{
    tool_message, McpError, McpHub, McpServer, OutcomeKind, Refusal, ServerOptions, ToolPolicy,
};
use serde_json::{json, Value};

/// The npm packages, at the versions the fixtures record.
const FILESYSTEM: &str = "@modelcontextprotocol/server-filesystem@2026.8.31";
const EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";

fn fault_command(mode: &str) -> String {
    let path = env!("CARGO_BIN_EXE_gbnfc-mcp-fault-server");
    format!("{} {mode}", shlex::try_quote(path).unwrap())
}

/// Short deadlines for the local fault server.
fn fast() -> ServerOptions {
    ServerOptions {
        startup_timeout: Duration::from_secs(20),
        list_timeout: Duration::from_secs(10),
        call_timeout: Duration::from_secs(10),
        shutdown_grace: Duration::from_millis(500),
        ..ServerOptions::default()
    }
}

/// Room for a first `npx -y` download.
fn npx() -> ServerOptions {
    ServerOptions {
        startup_timeout: Duration::from_secs(300),
        list_timeout: Duration::from_secs(30),
        call_timeout: Duration::from_secs(30),
        ..ServerOptions::default()
    }
}

fn fault(mode: &str) -> McpServer {
    McpServer::spawn(&fault_command(mode), &fast()).unwrap()
}

/// `/proc/PID/stat` fields after the command: state, ppid, pgrp.
fn stat(pid: u32) -> Option<(char, u32, u32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, ppid, pgrp))
}

/// Is the process running (zombies waiting for a parent that is not us do not count)?
fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|(state, _, _)| state != 'Z')
}

/// Live processes in the process group `pgid`.
fn group_members(pgid: u32) -> Vec<u32> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Some((state, _, pgrp)) = stat(pid) {
            if pgrp == pgid && state != 'Z' {
                members.push(pid);
            }
        }
    }
    members
}

/// Live processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(marker) && alive(pid) {
            found.push(pid);
        }
    }
    found
}

/// Waits (a little) until `check` holds; killed processes take a moment to vanish.
fn eventually(what: &str, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < Duration::from_secs(5), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Drops the server and checks that its whole process group is gone.
fn drop_and_check_gone(server: McpServer) {
    let pid = server.pid().unwrap();
    drop(server);
    assert!(
        !alive(pid),
        "the server process {pid} outlived its McpServer"
    );
    eventually(
        &format!("process group {pid} outlived its McpServer"),
        || group_members(pid).is_empty(),
    );
}

fn text_of(outcome: &gbnfc_bridge::mcp::ToolOutcome) -> String {
    match &outcome.kind {
        OutcomeKind::Success(result) | OutcomeKind::ToolError(result) => result.text(),
        other => panic!("no result in {other:?}"),
    }
}

fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

#[test]
fn lists_every_page_and_calls_a_tool() {
    let mut server = fault("ok");
    assert_eq!(server.name(), "gbnfc-mcp-fault");
    assert_eq!(
        server.server_info().unwrap()["name"],
        "gbnfc-mcp-fault-server"
    );
    // One tool per page: two pages, both followed.
    let tools = server.list_tools().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["echo", "call_count"]);
    assert_eq!(tools[0]["outputSchema"]["required"], json!(["text"]));
    assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);

    let outcome = server.call_tool("echo", json!({"text": "hi"})).unwrap();
    match &outcome.kind {
        OutcomeKind::Success(result) => {
            assert_eq!(result.structured_content, Some(json!({"text": "hi"})));
            assert_eq!(result.text(), "hi");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(outcome.content_text(), r#"{"text":"hi"}"#);
    assert_eq!(
        text_of(&server.call_tool("call_count", Value::Null).unwrap()),
        "1"
    );
    assert!(matches!(
        server.call_tool("nope", json!({})),
        Err(McpError::UnknownTool { known, .. }) if known == ["echo", "call_count"]
    ));
    drop_and_check_gone(server);
}

#[test]
fn invalid_arguments_never_reach_the_server() {
    let mut server = fault("ok");
    let cases = [
        (json!({"text": 5}), "$.text: 5 is not of type \"string\""),
        (json!({}), "$: \"text\" is a required property"),
        (json!({"text": "x".repeat(101)}), "$.text: "),
        (
            json!({"text": "a", "extra": 1}),
            "$: Additional properties are not allowed",
        ),
        (
            json!(["hi"]),
            "$: the arguments must be a JSON object, not an array",
        ),
        (
            json!("hi"),
            "$: the arguments must be a JSON object, not a string",
        ),
    ];
    for (arguments, expected) in cases {
        let outcome = server.call_tool("echo", arguments.clone()).unwrap();
        let OutcomeKind::InvalidArguments(errors) = &outcome.kind else {
            panic!("{arguments} was not refused: {outcome:?}");
        };
        assert!(
            errors.iter().any(|e| e.starts_with(expected)),
            "{arguments}: {errors:?}"
        );
        assert!(!outcome.was_called());
        assert!(outcome.content_text().contains("so it was not called"));
    }
    // The server saw none of them.
    assert_eq!(
        text_of(&server.call_tool("call_count", json!({})).unwrap()),
        "0"
    );
    drop_and_check_gone(server);
}

#[test]
fn a_server_that_exits_mid_call_is_reported() {
    let mut server = fault("exit-mid-call");
    let pid = server.pid().unwrap();
    let start = Instant::now();
    let error = server.call_tool("crash", json!({})).unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}: the exit must be noticed, not timed out",
        start.elapsed()
    );
    let McpError::Exited {
        status,
        stderr,
        request,
        ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(status, "exit status: 3");
    assert_eq!(request, "tools/call `crash`");
    assert!(stderr.contains("crashing mid-call"), "{stderr}");
    assert!(error.server_exited());
    assert!(
        error.to_string().contains("exited (exit status: 3)"),
        "{error}"
    );
    // Later calls fail at once, the same way.
    let start = Instant::now();
    let again = server
        .call_tool("echo", json!({"text": "still there?"}))
        .unwrap_err();
    assert!(again.server_exited(), "{again:?}");
    assert!(start.elapsed() < Duration::from_secs(1));
    let message = tool_message("call_7", "crash", &Err(error));
    assert_eq!(message["tool_call_id"], "call_7");
    assert!(message["content"]
        .as_str()
        .unwrap()
        .starts_with("error: MCP server"));
    assert!(!alive(pid));
    drop_and_check_gone(server);
}

#[test]
fn a_server_that_never_answers_times_out() {
    let options = ServerOptions {
        call_timeout: Duration::from_secs(2),
        ..fast()
    };
    let mut server = McpServer::spawn(&fault_command("hang"), &options).unwrap();
    let start = Instant::now();
    let error = server.call_tool("hang", json!({})).unwrap_err();
    let took = start.elapsed();
    assert!(
        matches!(&error, McpError::Timeout { timeout, .. } if *timeout == Duration::from_secs(2)),
        "{error:?}"
    );
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(4),
        "{took:?}"
    );
    assert_eq!(
        error.to_string(),
        "MCP server `gbnfc-mcp-fault` did not answer tools/call `hang` within 2s"
    );
    // The server itself is still fine: the next call works.
    assert_eq!(
        text_of(&server.call_tool("echo", json!({"text": "after"})).unwrap()),
        "after"
    );
    drop_and_check_gone(server);
}

#[test]
fn output_that_breaks_its_schema_is_not_passed_on() {
    let mut server = fault("bad-output");
    let outcome = server.call_tool("bad_output", json!({})).unwrap();
    let OutcomeKind::InvalidOutput { errors, result } = &outcome.kind else {
        panic!("{outcome:?}");
    };
    assert_eq!(errors, &["$.count: \"many\" is not of type \"integer\""]);
    assert_eq!(result.structured_content, Some(json!({"count": "many"})));
    let text = outcome.content_text();
    assert!(
        text.starts_with("error: the tool `bad_output` returned structuredContent"),
        "{text}"
    );
    assert!(
        !text.contains(r#"{"count":"many"}"#),
        "the bad value reached the model's text: {text}"
    );
    assert!(outcome.is_error() && outcome.was_called());

    let outcome = server.call_tool("no_structured", json!({})).unwrap();
    let OutcomeKind::InvalidOutput { errors, .. } = &outcome.kind else {
        panic!("{outcome:?}");
    };
    assert_eq!(
        errors,
        &["$: the tool declares an outputSchema but returned no structuredContent"]
    );
    drop_and_check_gone(server);
}

#[test]
fn is_error_results_are_tool_errors() {
    let mut server = fault("error");
    let outcome = server.call_tool("fail", json!({})).unwrap();
    assert!(matches!(&outcome.kind, OutcomeKind::ToolError(r) if r.is_error));
    assert_eq!(
        outcome.content_text(),
        "error: the tool `fail` failed: the disk is on fire"
    );
    drop_and_check_gone(server);
}

#[test]
fn destructive_tools_need_permission() {
    let mut hub = McpHub::start([fault_command("destructive")], &fast()).unwrap();
    // One server: names are not namespaced.
    let names: Vec<&str> = hub.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "call_count", "delete_everything", "peek"]);
    let delete = json!({"path": "/"});

    let refused = hub.call_tool("delete_everything", delete.clone()).unwrap();
    assert_eq!(refused.kind, OutcomeKind::Refused(Refusal::Destructive));
    assert!(refused
        .content_text()
        .contains("--allow-tool delete_everything"));
    assert!(matches!(
        hub.call_tool("peek", json!({})).unwrap().kind,
        OutcomeKind::Success(_)
    ));

    hub.set_policy(ToolPolicy {
        allow: vec!["delete_everything".into()],
        ..ToolPolicy::default()
    });
    assert_eq!(
        text_of(&hub.call_tool("delete_everything", delete.clone()).unwrap()),
        "deleted /"
    );
    hub.set_policy(ToolPolicy {
        yes: true,
        ..ToolPolicy::default()
    });
    assert_eq!(
        text_of(&hub.call_tool("delete_everything", delete.clone()).unwrap()),
        "deleted /"
    );

    hub.set_policy(ToolPolicy {
        yes: true,
        read_only: true,
        ..ToolPolicy::default()
    });
    let refused = hub.call_tool("delete_everything", delete.clone()).unwrap();
    assert_eq!(refused.kind, OutcomeKind::Refused(Refusal::NotReadOnly));
    assert!(matches!(
        hub.call_tool("peek", json!({})).unwrap().kind,
        OutcomeKind::Success(_)
    ));

    hub.set_policy(ToolPolicy {
        deny: vec!["peek".into()],
        yes: true,
        ..ToolPolicy::default()
    });
    assert_eq!(
        hub.call_tool("peek", json!({})).unwrap().kind,
        OutcomeKind::Refused(Refusal::Denied)
    );
    // A refusal is decided before validation: even invalid arguments are just refused.
    assert_eq!(
        hub.call_tool("peek", json!(7)).unwrap().kind,
        OutcomeKind::Refused(Refusal::Denied)
    );

    // The server saw exactly the allowed calls: peek, delete, delete, peek.
    assert_eq!(
        text_of(&hub.call_tool("call_count", json!({})).unwrap()),
        "4"
    );
    let pid = hub.servers()[0].pid().unwrap();
    drop(hub);
    eventually("the hub's server outlived it", || {
        group_members(pid).is_empty()
    });
}

#[test]
fn no_process_outlives_its_server() {
    // This server ignores end of input and has a child of its own: only signals to its
    // whole process group end both.
    let mut server = fault("spawn-child");
    let pid = server.pid().unwrap();
    let grandchild: u32 = text_of(&server.call_tool("child_pid", json!({})).unwrap())
        .parse()
        .unwrap();
    assert!(alive(pid) && alive(grandchild));
    assert_eq!(
        stat(grandchild).unwrap().2,
        pid,
        "the grandchild is in the server's group"
    );
    let start = Instant::now();
    drop(server);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "drop took {:?}",
        start.elapsed()
    );
    assert!(!alive(pid));
    eventually("the grandchild outlived the server", || !alive(grandchild));
    assert!(group_members(pid).is_empty());
}

#[test]
fn startup_failures_are_clear_and_leave_nothing_behind() {
    let error = McpServer::spawn(&fault_command("exit-at-start"), &fast()).unwrap_err();
    let McpError::Exited {
        request,
        status,
        stderr,
        ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(
        (request.as_str(), status.as_str()),
        ("initialize", "exit status: 7")
    );
    assert!(stderr.contains("refusing to start"), "{stderr}");

    let marker = unique("never-initialized");
    let options = ServerOptions {
        startup_timeout: Duration::from_secs(1),
        ..fast()
    };
    let start = Instant::now();
    let error =
        McpServer::spawn(&format!("{} {marker}", fault_command("no-init")), &options).unwrap_err();
    assert!(
        matches!(error, McpError::StartupTimeout { .. }),
        "{error:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        error.to_string(),
        "MCP server `gbnfc-mcp-fault` did not finish starting within 1s"
    );
    eventually("a server that failed to start is still running", || {
        processes_with(&marker).is_empty()
    });

    let error = McpServer::spawn("/nonexistent/weather-mcp --stdio", &fast()).unwrap_err();
    assert!(
        matches!(&error, McpError::Spawn { server, .. } if server == "weather"),
        "{error:?}"
    );
    assert!(matches!(
        McpServer::spawn("npx 'unterminated", &fast()),
        Err(McpError::Command { .. })
    ));
}

#[test]
fn a_hub_namespaces_tools_and_routes_calls() {
    let mut hub = McpHub::start([fault_command("ok"), fault_command("error")], &fast()).unwrap();
    assert_eq!(hub.server_names(), ["gbnfc-mcp-fault", "gbnfc-mcp-fault_2"]);
    let names: Vec<&str> = hub.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "gbnfc-mcp-fault__echo",
            "gbnfc-mcp-fault__call_count",
            "gbnfc-mcp-fault_2__echo",
            "gbnfc-mcp-fault_2__call_count",
            "gbnfc-mcp-fault_2__fail",
        ]
    );
    let fail = hub.resolve("gbnfc-mcp-fault_2__fail").unwrap();
    assert_eq!(
        (fail.server.as_str(), fail.tool.name.as_str()),
        ("gbnfc-mcp-fault_2", "fail")
    );

    // The list feeds the compiler as it is.
    let list = hub.tools_list();
    let read = gbnfc_compiler::tools::read_tools(&list, None).unwrap();
    assert_eq!(read.tools.len(), 5);
    assert!(read.tools[0].output_schema.is_some());
    assert_eq!(
        read.tools[0].annotations.as_ref().unwrap()["readOnlyHint"],
        true
    );
    gbnfc_compiler::tools::compile_tools(&list, &Default::default()).unwrap();

    let outcome = hub.call_tool("gbnfc-mcp-fault_2__fail", json!({})).unwrap();
    assert_eq!(outcome.tool, "gbnfc-mcp-fault_2__fail");
    assert!(outcome
        .content_text()
        .starts_with("error: the tool `gbnfc-mcp-fault_2__fail` failed"));
    hub.call_tool("gbnfc-mcp-fault__echo", json!({"text": "one"}))
        .unwrap();
    // Each call went to its own server.
    assert_eq!(
        text_of(
            &hub.call_tool("gbnfc-mcp-fault__call_count", json!({}))
                .unwrap()
        ),
        "1"
    );
    assert_eq!(
        text_of(
            &hub.call_tool("gbnfc-mcp-fault_2__call_count", json!({}))
                .unwrap()
        ),
        "1"
    );
    assert!(matches!(
        hub.call_tool("echo", json!({})),
        Err(McpError::UnknownTool { .. })
    ));
    let pids: Vec<u32> = hub.servers().iter().map(|s| s.pid().unwrap()).collect();
    drop(hub);
    for pid in pids {
        eventually("a hub's server outlived it", || {
            group_members(pid).is_empty()
        });
    }
}

/// A fresh directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let path = std::env::temp_dir().join(unique("gbnfc-mcp-test"));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path.canonicalize().unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_filesystem_server_reads_a_file() {
    let dir = TempDir::new();
    let file = dir.0.join("note.txt");
    let content = "The launch code is 0451.\nSecond line.\n";
    std::fs::write(&file, content).unwrap();
    let command = format!(
        "npx -y {FILESYSTEM} {}",
        shlex::try_quote(dir.0.to_str().unwrap()).unwrap()
    );
    let mut server = McpServer::spawn(&command, &npx()).unwrap();
    assert_eq!(server.name(), "filesystem");
    let tools = server.list_tools().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let read = ["read_text_file", "read_file"]
        .into_iter()
        .find(|n| names.contains(n))
        .unwrap_or_else(|| panic!("no read tool in {names:?}"));
    gbnfc_compiler::tools::compile_tools(&json!({ "tools": tools }), &Default::default()).unwrap();

    let outcome = server
        .call_tool(read, json!({"path": file.to_str().unwrap()}))
        .unwrap();
    let OutcomeKind::Success(result) = &outcome.kind else {
        panic!("{outcome:?}");
    };
    // read_text_file declares an outputSchema: the content passed hop 2.
    assert!(server.tool(read).unwrap().output_schema.is_some());
    assert_eq!(
        result.structured_content.as_ref().unwrap()["content"],
        content
    );
    assert!(outcome.content_text().contains("The launch code is 0451."));

    // Hop 1: wrong arguments are refused before the server sees them.
    let outcome = server.call_tool(read, json!({"path": 42})).unwrap();
    assert!(
        matches!(&outcome.kind, OutcomeKind::InvalidArguments(e) if e == &["$.path: 42 is not of type \"string\""]),
        "{outcome:?}"
    );
    let outcome = server.call_tool(read, json!({"file": "note.txt"})).unwrap();
    assert!(
        matches!(&outcome.kind, OutcomeKind::InvalidArguments(_)),
        "{outcome:?}"
    );

    // A path outside the allowed directory: the server's own error, reported as such.
    let outcome = server
        .call_tool(read, json!({"path": "/etc/hostname"}))
        .unwrap();
    assert!(outcome.is_error() && outcome.was_called(), "{outcome:?}");
    drop_and_check_gone(server);
}

#[test]
fn the_everything_server_validates_structured_content() {
    let mut server = McpServer::spawn(&format!("npx -y {EVERYTHING}"), &npx()).unwrap();
    assert_eq!(server.name(), "everything");
    let tools = server.list_tools().unwrap();
    let structured = tools
        .iter()
        .find(|t| t["name"] == "get-structured-content")
        .expect("get-structured-content is listed");
    let output_schema = structured["outputSchema"].clone();
    assert_eq!(
        output_schema["required"],
        json!(["temperature", "conditions", "humidity"])
    );

    let outcome = server
        .call_tool("get-structured-content", json!({"location": "Chicago"}))
        .unwrap();
    let OutcomeKind::Success(result) = &outcome.kind else {
        panic!("{outcome:?}");
    };
    let content = result.structured_content.clone().unwrap();
    // Independently of the client: the content does match the schema.
    assert!(jsonschema::is_valid(&output_schema, &content), "{content}");
    assert_eq!(outcome.content_text(), content.to_string());

    // Hop 1 on a real schema: an enum value the tool does not offer.
    let outcome = server
        .call_tool("get-structured-content", json!({"location": "Paris"}))
        .unwrap();
    assert!(
        matches!(&outcome.kind, OutcomeKind::InvalidArguments(e) if e[0].starts_with("$.location: ")),
        "{outcome:?}"
    );

    // A tool without an outputSchema: its text comes back as it is.
    let outcome = server
        .call_tool("echo", json!({"message": "hello there"}))
        .unwrap();
    assert!(
        matches!(&outcome.kind, OutcomeKind::Success(_)),
        "{outcome:?}"
    );
    assert!(outcome.content_text().contains("hello there"));
    drop_and_check_gone(server);
}

#[test]
fn broken_tool_lists_are_errors() {
    let error = McpHub::start([fault_command("duplicate-tool")], &fast()).unwrap_err();
    assert!(
        matches!(&error, McpError::Protocol { reason, .. } if reason == "the tool `echo` is listed twice"),
        "{error:?}"
    );
    let mut server = fault("cursor-loop");
    let error = server.list_tools().unwrap_err();
    assert!(
        matches!(&error, McpError::Protocol { request, reason, .. }
            if request == "tools/list" && reason.contains("\"page-1\" came back twice")),
        "{error:?}"
    );
    drop_and_check_gone(server);
}

#[test]
fn servers_and_hubs_can_move_between_threads() {
    fn send<T: Send>() {}
    send::<McpServer>();
    send::<McpHub>();
    let mut server = fault("ok");
    let outcome = std::thread::spawn(move || {
        let outcome = server.call_tool("echo", json!({"text": "from a thread"}));
        (outcome, server)
    })
    .join()
    .unwrap();
    assert_eq!(text_of(&outcome.0.unwrap()), "from a thread");
    drop_and_check_gone(outcome.1);
}

#[test]
fn a_hub_of_real_servers() {
    let dir = TempDir::new();
    let file = dir.0.join("todo.txt");
    std::fs::write(&file, "water the plants\n").unwrap();
    let filesystem = format!(
        "npx -y {FILESYSTEM} {}",
        shlex::try_quote(dir.0.to_str().unwrap()).unwrap()
    );
    let mut hub = McpHub::start([filesystem, format!("npx -y {EVERYTHING}")], &npx())
        .unwrap()
        .with_policy(ToolPolicy::default());
    assert_eq!(hub.server_names(), ["filesystem", "everything"]);
    for name in [
        "filesystem__read_text_file",
        "filesystem__write_file",
        "everything__get-structured-content",
    ] {
        assert!(hub.resolve(name).is_some(), "{name} missing");
    }
    // The merged list is one tool list the compiler takes.
    let list = hub.tools_list();
    let compiled = gbnfc_compiler::tools::compile_tools(&list, &Default::default()).unwrap();
    assert!(compiled.grammar.is_some());

    let path = file.to_str().unwrap();
    let outcome = hub
        .call_tool("filesystem__read_text_file", json!({"path": path}))
        .unwrap();
    assert_eq!(outcome.tool, "filesystem__read_text_file");
    assert!(
        outcome.content_text().contains("water the plants"),
        "{outcome:?}"
    );
    // write_file is marked destructive: refused, and the file is untouched.
    let write = json!({"path": path, "content": "nothing"});
    let outcome = hub
        .call_tool("filesystem__write_file", write.clone())
        .unwrap();
    assert_eq!(outcome.kind, OutcomeKind::Refused(Refusal::Destructive));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "water the plants\n"
    );
    hub.set_policy(ToolPolicy {
        allow: vec!["write_file".into()],
        ..ToolPolicy::default()
    });
    let outcome = hub.call_tool("filesystem__write_file", write).unwrap();
    assert!(!outcome.is_error(), "{outcome:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "nothing");
    let outcome = hub
        .call_tool(
            "everything__get-structured-content",
            json!({"location": "New York"}),
        )
        .unwrap();
    assert!(
        matches!(outcome.kind, OutcomeKind::Success(_)),
        "{outcome:?}"
    );
    let pids: Vec<u32> = hub.servers().iter().map(|s| s.pid().unwrap()).collect();
    drop(hub);
    for pid in pids {
        assert!(!alive(pid));
        eventually("an npx server's process group outlived the hub", || {
            group_members(pid).is_empty()
        });
    }
}
