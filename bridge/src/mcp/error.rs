//! Errors of the MCP client: each names the server and what it was doing, so the message
//! can go as it is to the user and, as a tool error, to the model.

use std::time::Duration;

use thiserror::Error;

/// Why talking to an MCP server failed.
///
/// Outcomes of a call that did reach a decision (a refused call, invalid arguments, an
/// `isError` result, output that breaks its schema) are not errors but
/// [`crate::mcp::ToolOutcome`]s; these are the failures of the conversation itself.
#[derive(Debug, Error)]
pub enum McpError {
    /// The command line is empty or cannot be split into words.
    #[error("invalid MCP server command `{command}`: {reason}")]
    Command {
        /// The command line as given.
        command: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The process could not be started.
    #[error("could not start MCP server `{server}` (`{command}`): {source}")]
    Spawn {
        /// The server's name.
        server: String,
        /// The command line.
        command: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The internal tokio runtime could not be built.
    #[error("could not start the runtime for MCP server `{server}`: {source}")]
    Runtime {
        /// The server's name.
        server: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The server did not finish the `initialize` handshake in time.
    #[error(
        "MCP server `{server}` did not finish starting within {}{}",
        show_duration(*timeout),
        stderr_note(stderr)
    )]
    StartupTimeout {
        /// The server's name.
        server: String,
        /// The deadline that passed.
        timeout: Duration,
        /// The last lines the server wrote to stderr.
        stderr: String,
    },
    /// The `initialize` handshake failed.
    #[error(
        "MCP server `{server}` failed to initialize: {reason}{}",
        stderr_note(stderr)
    )]
    Initialize {
        /// The server's name.
        server: String,
        /// What went wrong.
        reason: String,
        /// The last lines the server wrote to stderr.
        stderr: String,
    },
    /// The server did not answer a request in time (the request was cancelled).
    #[error(
        "MCP server `{server}` did not answer {request} within {}",
        show_duration(*timeout)
    )]
    Timeout {
        /// The server's name.
        server: String,
        /// The request, e.g. ``tools/call `read_file` ``.
        request: String,
        /// The deadline that passed.
        timeout: Duration,
    },
    /// The server's process ended (before or during the request).
    #[error(
        "MCP server `{server}` exited ({status}) during {request}{}",
        stderr_note(stderr)
    )]
    Exited {
        /// The server's name.
        server: String,
        /// The request that was interrupted or could not be sent.
        request: String,
        /// How it ended, e.g. `exit status: 3`.
        status: String,
        /// The last lines the server wrote to stderr.
        stderr: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("MCP server `{server}` answered {request} with error {code}: {message}")]
    Rpc {
        /// The server's name.
        server: String,
        /// The request.
        request: String,
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: String,
    },
    /// The connection broke or the server answered something that is not MCP.
    #[error("MCP server `{server}`: {request} failed: {reason}")]
    Protocol {
        /// The server's name.
        server: String,
        /// The request.
        request: String,
        /// What went wrong.
        reason: String,
    },
    /// No server offers a tool of this name.
    #[error("there is no tool named `{name}`; the tools are: {}", known.join(", "))]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The names that exist.
        known: Vec<String>,
    },
    /// The blocking API was called from inside an async runtime (use
    /// `tokio::task::spawn_blocking` or a plain thread).
    #[error("the MCP client blocks; call it outside async code (e.g. from spawn_blocking)")]
    InsideRuntime,
    /// A tool's `inputSchema` or `outputSchema` cannot be used for validation, so the
    /// tool cannot be called safely.
    #[error("tool `{tool}` of MCP server `{server}` has a {which} that cannot be used: {reason}")]
    Schema {
        /// The server's name.
        server: String,
        /// The tool's name on its server.
        tool: String,
        /// `inputSchema` or `outputSchema`.
        which: &'static str,
        /// The validator's complaint.
        reason: String,
    },
}

impl McpError {
    /// Did the server's process end? Later requests to it fail the same way.
    pub fn server_exited(&self) -> bool {
        matches!(self, McpError::Exited { .. })
    }
}

/// A duration for messages: `2s`, `1.5s`, `250ms`.
pub fn show_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1000 {
        format!("{millis}ms")
    } else if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else {
        format!("{:.1}s", duration.as_secs_f64())
    }
}

/// `; its stderr ended with: …` when there is stderr to show.
fn stderr_note(stderr: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("; its stderr ended with:\n{trimmed}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(show_duration(Duration::from_millis(250)), "250ms");
        assert_eq!(show_duration(Duration::from_secs(2)), "2s");
        assert_eq!(show_duration(Duration::from_millis(1500)), "1.5s");
    }

    #[test]
    fn stderr_is_shown_only_when_there_is_some() {
        let quiet = McpError::StartupTimeout {
            server: "s".into(),
            timeout: Duration::from_secs(1),
            stderr: " \n".into(),
        };
        assert_eq!(
            quiet.to_string(),
            "MCP server `s` did not finish starting within 1s"
        );
        let loud = McpError::Exited {
            server: "s".into(),
            request: "tools/call `x`".into(),
            status: "exit status: 3".into(),
            stderr: "boom\n".into(),
        };
        assert_eq!(
            loud.to_string(),
            "MCP server `s` exited (exit status: 3) during tools/call `x`; its stderr ended with:\nboom"
        );
        assert!(loud.server_exited());
    }
}
