//! One MCP server: a child process spoken to over stdio through `rmcp`, with a
//! synchronous API and a deadline on every wait.
//!
//! The server owns a small tokio runtime (one worker thread, which also keeps the
//! connection serviced between calls) and blocks on it, so callers — like the engine —
//! stay synchronous. Its process runs in a process group of its own; dropping the server
//! closes the connection, gives the process [`ServerOptions::shutdown_grace`] to exit, and
//! then signals the whole group, so no child outlives it.
//!
//! ```no_run
//! use gbnfc_bridge::mcp::{McpServer, ServerOptions};
//! let mut server = McpServer::spawn(
//!     "npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /tmp",
//!     &ServerOptions::default(),
//! )?;
//! let tools = server.list_tools()?; // MCP tool objects, ready for `compile_tools`
//! let outcome = server.call_tool("list_directory", serde_json::json!({"path": "/tmp"}))?;
//! println!("{}", outcome.content_text());
//! # Ok::<(), gbnfc_bridge::mcp::McpError>(())
//! ```

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
    PaginatedRequestParams, Tool,
};
use rmcp::service::{Peer, RunningService, ServiceError};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Map, Value};
use tokio::runtime::Runtime;

use crate::mcp::outcome::{OutcomeKind, ToolOutcome, ToolResult};
use crate::mcp::process::{self, ServerProcess};
use crate::mcp::validation::ToolSchemas;
use crate::mcp::{names, McpError, ServerOptions};

/// At most this many `tools/list` pages are followed (a server whose cursors never end
/// is an error, not a loop).
pub const MAX_LIST_PAGES: usize = 10_000;

/// How long a process that closed its connection gets to be reaped before the error
/// says "connection closed" instead of how it exited.
const EXIT_WAIT: Duration = Duration::from_secs(1);

/// How long closing the connection may take when the server is dropped.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// One tool as the server lists it (MCP `tools/list` shape).
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// The tool's name on its server.
    pub name: String,
    /// What it does, for the model.
    pub description: Option<String>,
    /// The JSON Schema of its arguments (an object schema).
    pub input_schema: Value,
    /// The JSON Schema of its `structuredContent`, if it declares one.
    pub output_schema: Option<Value>,
    /// Its MCP annotations (`readOnlyHint`, `destructiveHint`, …), if any.
    pub annotations: Option<Value>,
}

impl McpTool {
    fn from_rmcp(tool: &Tool) -> McpTool {
        McpTool {
            name: tool.name.to_string(),
            description: tool.description.as_ref().map(|d| d.to_string()),
            input_schema: Value::Object((*tool.input_schema).clone()),
            output_schema: tool
                .output_schema
                .as_ref()
                .map(|schema| Value::Object((**schema).clone())),
            annotations: tool
                .annotations
                .as_ref()
                .and_then(|a| serde_json::to_value(a).ok()),
        }
    }

    /// The tool as an MCP tool object, `{name, description?, inputSchema, outputSchema?,
    /// annotations?}`, under `name` (the hub passes namespaced names here).
    pub fn to_json_named(&self, name: &str) -> Value {
        let mut object = Map::new();
        object.insert("name".into(), json!(name));
        if let Some(description) = &self.description {
            object.insert("description".into(), json!(description));
        }
        object.insert("inputSchema".into(), self.input_schema.clone());
        if let Some(schema) = &self.output_schema {
            object.insert("outputSchema".into(), schema.clone());
        }
        if let Some(annotations) = &self.annotations {
            object.insert("annotations".into(), annotations.clone());
        }
        Value::Object(object)
    }

    /// The tool as an MCP tool object under its own name.
    pub fn to_json(&self) -> Value {
        self.to_json_named(&self.name)
    }
}

/// A running MCP server (see the module documentation).
pub struct McpServer {
    name: String,
    command: String,
    options: ServerOptions,
    service: Option<RunningService<RoleClient, ClientConfig>>,
    process: ServerProcess,
    tools: Option<Vec<McpTool>>,
    schemas: HashMap<String, Arc<ToolSchemas>>,
    // Declared last: dropped after everything that runs on it.
    runtime: Runtime,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("command", &self.command)
            .field("pid", &self.process.pid())
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// Starts the server `command_line` (split like a shell would, e.g.
    /// `npx -y @modelcontextprotocol/server-filesystem /tmp/x`) and completes the MCP
    /// `initialize` handshake within [`ServerOptions::startup_timeout`].
    ///
    /// # Errors
    /// [`McpError::Command`] for a line that cannot be split, [`McpError::Spawn`] when the
    /// program cannot be started, [`McpError::StartupTimeout`], [`McpError::Exited`] or
    /// [`McpError::Initialize`] when the handshake does not complete (the process is
    /// ended then), [`McpError::InsideRuntime`] when called from async code.
    pub fn spawn(command_line: &str, options: &ServerOptions) -> Result<McpServer, McpError> {
        check_not_async()?;
        let argv = names::split_command(command_line)?;
        let name = match &options.name {
            Some(name) => names::sanitize(name),
            None => names::server_name(&argv),
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(format!("mcp-{name}"))
            .enable_all()
            .build()
            .map_err(|source| McpError::Runtime {
                server: name.clone(),
                source,
            })?;
        let spawned = {
            let _context = runtime.enter();
            process::spawn(&argv, options.echo_stderr)
        };
        let (process, stdout, stdin) = spawned.map_err(|source| McpError::Spawn {
            server: name.clone(),
            command: command_line.to_owned(),
            source,
        })?;
        let mut server = McpServer {
            name,
            command: command_line.to_owned(),
            options: options.clone(),
            service: None,
            process,
            tools: None,
            schemas: HashMap::new(),
            runtime,
        };
        // From here on, an error drops `server`, which ends the process.
        server.initialize(stdout, stdin)?;
        Ok(server)
    }

    fn initialize(
        &mut self,
        stdout: tokio::process::ChildStdout,
        stdin: tokio::process::ChildStdin,
    ) -> Result<(), McpError> {
        let config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("gbnfc", env!("CARGO_PKG_VERSION")),
        );
        let timeout = self.options.startup_timeout;
        let started = self.runtime.block_on(async move {
            // The timer must be made inside the runtime.
            tokio::time::timeout(timeout, config.serve((stdout, stdin))).await
        });
        match started {
            Ok(Ok(service)) => {
                self.service = Some(service);
                Ok(())
            }
            Err(_elapsed) => Err(McpError::StartupTimeout {
                server: self.name.clone(),
                timeout,
                stderr: self.process.stderr_tail(),
            }),
            Ok(Err(error)) => {
                let status = self
                    .runtime
                    .block_on(self.process.exit_status_within(EXIT_WAIT));
                let stderr = self.process.stderr_tail();
                Err(match status {
                    Some(status) => McpError::Exited {
                        server: self.name.clone(),
                        request: "initialize".into(),
                        status: process::describe(Some(status)),
                        stderr,
                    },
                    None => McpError::Initialize {
                        server: self.name.clone(),
                        reason: error.to_string(),
                        stderr,
                    },
                })
            }
        }
    }

    /// The server's name: [`ServerOptions::name`], or derived from the command
    /// ([`names::server_name`]).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The command line it was started with.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The options it was started with.
    pub fn options(&self) -> &ServerOptions {
        &self.options
    }

    /// The process id (on Unix also the id of its process group).
    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    /// What the server said about itself in `initialize` (`{"name": …, "version": …}`).
    pub fn server_info(&self) -> Option<Value> {
        let info = self.service.as_ref()?.peer().peer_info()?;
        let implementation = info.server_info.as_ref()?;
        serde_json::to_value(implementation).ok()
    }

    /// The last lines the server wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.process.stderr_tail()
    }

    /// The tools from the last [`McpServer::list_tools`], if it ran.
    pub fn tools(&self) -> Option<&[McpTool]> {
        self.tools.as_deref()
    }

    /// Lists the server's tools (`tools/list`, following `nextCursor` page by page, each
    /// page within [`ServerOptions::list_timeout`]) as MCP tool objects — the shape
    /// [`gbnfc_compiler::tools::compile_tools`] reads inside `{"tools": […]}` — and
    /// remembers them for [`McpServer::call_tool`].
    ///
    /// # Errors
    /// [`McpError::Timeout`], [`McpError::Exited`], [`McpError::Rpc`] or
    /// [`McpError::Protocol`] (also for a cursor that repeats or more than
    /// [`MAX_LIST_PAGES`] pages).
    pub fn list_tools(&mut self) -> Result<Vec<Value>, McpError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen_cursors = Vec::new();
        for _page in 0..MAX_LIST_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
            let page =
                self.request("tools/list", self.options.list_timeout, |peer| async move {
                    peer.list_tools(Some(params)).await
                })?;
            tools.extend(page.tools.iter().map(McpTool::from_rmcp));
            match page.next_cursor {
                None => {
                    let values = tools.iter().map(McpTool::to_json).collect();
                    self.tools = Some(tools);
                    self.schemas.clear();
                    return Ok(values);
                }
                Some(next) if seen_cursors.contains(&next) => {
                    return Err(
                        self.protocol("tools/list", format!("the cursor {next:?} came back twice"))
                    );
                }
                Some(next) => {
                    seen_cursors.push(next.clone());
                    cursor = Some(next);
                }
            }
        }
        Err(self.protocol(
            "tools/list",
            format!("the tool list did not end within {MAX_LIST_PAGES} pages"),
        ))
    }

    /// Calls the tool `name` with `arguments` (a JSON object; `null` means `{}`):
    /// hop 1 validates the arguments against its `inputSchema` (invalid arguments are an
    /// [`OutcomeKind::InvalidArguments`] outcome and the server never sees them), then
    /// `tools/call` runs within [`ServerOptions::call_timeout`], then hop 2 validates the
    /// `structuredContent` against its `outputSchema` if it has one (a violation is an
    /// [`OutcomeKind::InvalidOutput`] outcome). `isError` results are
    /// [`OutcomeKind::ToolError`]. Lists the tools first if that has not happened.
    ///
    /// # Errors
    /// [`McpError::UnknownTool`], [`McpError::Schema`] (a schema that cannot validate),
    /// [`McpError::Timeout`] (the request is cancelled), [`McpError::Exited`] (the server
    /// died; later calls fail the same way at once), [`McpError::Rpc`],
    /// [`McpError::Protocol`].
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Result<ToolOutcome, McpError> {
        if self.tools.is_none() {
            self.list_tools()?;
        }
        let schemas = self.schemas_of(name)?;
        let arguments = match arguments {
            Value::Null => Value::Object(Map::new()),
            other => other,
        };
        let outcome = |kind| ToolOutcome {
            tool: name.to_owned(),
            kind,
        };
        let errors = schemas.check_arguments(&arguments);
        let Value::Object(arguments) = arguments else {
            return Ok(outcome(OutcomeKind::InvalidArguments(errors)));
        };
        if !errors.is_empty() {
            return Ok(outcome(OutcomeKind::InvalidArguments(errors)));
        }
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        let request = format!("tools/call `{name}`");
        let result = self.request(&request, self.options.call_timeout, |peer| async move {
            peer.call_tool(params).await
        })?;
        let result = ToolResult {
            content: result
                .content
                .iter()
                .map(|block| serde_json::to_value(block).unwrap_or(Value::Null))
                .collect(),
            structured_content: result.structured_content,
            is_error: result.is_error == Some(true),
        };
        if result.is_error {
            return Ok(outcome(OutcomeKind::ToolError(result)));
        }
        let errors = schemas.check_output(result.structured_content.as_ref());
        if errors.is_empty() {
            Ok(outcome(OutcomeKind::Success(result)))
        } else {
            Ok(outcome(OutcomeKind::InvalidOutput { errors, result }))
        }
    }

    /// The tool `name` from the last listing.
    pub fn tool(&self, name: &str) -> Option<&McpTool> {
        self.tools.as_ref()?.iter().find(|tool| tool.name == name)
    }

    fn schemas_of(&mut self, name: &str) -> Result<Arc<ToolSchemas>, McpError> {
        if let Some(schemas) = self.schemas.get(name) {
            return Ok(Arc::clone(schemas));
        }
        let Some(tool) = self.tool(name) else {
            return Err(McpError::UnknownTool {
                name: name.to_owned(),
                known: self
                    .tools
                    .iter()
                    .flatten()
                    .map(|tool| tool.name.clone())
                    .collect(),
            });
        };
        let schemas = Arc::new(ToolSchemas::new(
            &self.name,
            name,
            &tool.input_schema,
            tool.output_schema.as_ref(),
        )?);
        self.schemas.insert(name.to_owned(), Arc::clone(&schemas));
        Ok(schemas)
    }

    /// Sends one request through `send` and waits at most `timeout` for its answer.
    fn request<T, F>(
        &mut self,
        request: &str,
        timeout: Duration,
        send: impl FnOnce(Peer<RoleClient>) -> F,
    ) -> Result<T, McpError>
    where
        F: Future<Output = Result<T, ServiceError>>,
    {
        check_not_async()?;
        if let Some(status) = self.process_status_now() {
            return Err(self.exited(request, Some(status)));
        }
        let Some(service) = &self.service else {
            return Err(self.protocol(request, "the connection is closed".into()));
        };
        if service.is_closed() {
            return Err(self.connection_lost(request));
        }
        let peer = service.peer().clone();
        match self
            .runtime
            .block_on(async move { tokio::time::timeout(timeout, send(peer)).await })
        {
            Ok(Ok(answer)) => Ok(answer),
            Err(_elapsed) => Err(McpError::Timeout {
                server: self.name.clone(),
                request: request.to_owned(),
                timeout,
            }),
            Ok(Err(ServiceError::McpError(error))) => Err(McpError::Rpc {
                server: self.name.clone(),
                request: request.to_owned(),
                code: error.code.0,
                message: error.message.into_owned(),
            }),
            Ok(Err(ServiceError::Timeout { timeout })) => Err(McpError::Timeout {
                server: self.name.clone(),
                request: request.to_owned(),
                timeout,
            }),
            Ok(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                Err(self.connection_lost(request))
            }
            Ok(Err(other)) => Err(self.protocol(request, other.to_string())),
        }
    }

    /// The error for a connection that broke: how the process ended, if it did.
    fn connection_lost(&mut self, request: &str) -> McpError {
        let status = self
            .runtime
            .block_on(self.process.exit_status_within(EXIT_WAIT));
        match status {
            Some(status) => self.exited(request, Some(status)),
            None => self.protocol(request, "the connection to the server closed".into()),
        }
    }

    fn process_status_now(&mut self) -> Option<std::process::ExitStatus> {
        self.runtime
            .block_on(self.process.exit_status_within(Duration::ZERO))
    }

    fn exited(&self, request: &str, status: Option<std::process::ExitStatus>) -> McpError {
        McpError::Exited {
            server: self.name.clone(),
            request: request.to_owned(),
            status: process::describe(status),
            stderr: self.process.stderr_tail(),
        }
    }

    fn protocol(&self, request: &str, reason: String) -> McpError {
        McpError::Protocol {
            server: self.name.clone(),
            request: request.to_owned(),
            reason,
        }
    }
}

impl Drop for McpServer {
    /// Closes the connection (the server sees end of input), gives the process
    /// [`ServerOptions::shutdown_grace`] to exit, then signals its process group
    /// (`SIGTERM`, then `SIGKILL`) and reaps it.
    fn drop(&mut self) {
        let service = self.service.take();
        if tokio::runtime::Handle::try_current().is_ok() {
            // Dropped inside async code, where blocking is not allowed: kill at once.
            drop(service);
            self.process.kill_now();
            return;
        }
        let grace = self.options.shutdown_grace;
        let process = &mut self.process;
        self.runtime.block_on(async move {
            if let Some(mut service) = service {
                let _ = service.close_with_timeout(CLOSE_WAIT).await;
            }
            process.terminate(grace).await;
        });
    }
}

/// The API blocks on a runtime of its own, which tokio forbids inside another runtime.
fn check_not_async() -> Result<(), McpError> {
    if tokio::runtime::Handle::try_current().is_ok() {
        Err(McpError::InsideRuntime)
    } else {
        Ok(())
    }
}
