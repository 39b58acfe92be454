//! Several MCP servers behind one tool list.
//!
//! With one server, tools keep their names. With more, every tool is named
//! `server__tool` (server names from [`names::server_name`], collisions numbered `_2`,
//! `_3`, …), and the hub maps each name back to its server and the tool's own name.
//! Calls go through the hub's [`ToolPolicy`] first, then the server's two hops of
//! validation ([`McpServer::call_tool`]).
//!
//! ```no_run
//! use gbnfc_bridge::mcp::{McpHub, ServerOptions, ToolPolicy};
//! let mut hub = McpHub::start(
//!     ["npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /tmp",
//!      "npx -y @modelcontextprotocol/server-everything@2026.8.31"],
//!     &ServerOptions::default(),
//! )?
//! .with_policy(ToolPolicy { read_only: true, ..ToolPolicy::default() });
//! let list = hub.tools_list(); // {"tools": [{"name": "filesystem__read_file", …}, …]}
//! let outcome = hub.call_tool("everything__echo", serde_json::json!({"message": "hi"}))?;
//! # Ok::<(), gbnfc_bridge::mcp::McpError>(())
//! ```

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::mcp::outcome::{OutcomeKind, ToolOutcome};
use crate::mcp::policy::{Decision, ToolPolicy};
use crate::mcp::{names, McpError, McpServer, McpTool, ServerOptions};

/// One tool of the hub.
#[derive(Debug, Clone, PartialEq)]
pub struct HubTool {
    /// The name the model sees (`server__tool` with several servers).
    pub name: String,
    /// The hub's name for its server.
    pub server: String,
    /// The tool as its server lists it (with its own name).
    pub tool: McpTool,
}

impl HubTool {
    /// The MCP tool object under the hub's name.
    pub fn to_json(&self) -> Value {
        self.tool.to_json_named(&self.name)
    }
}

/// Several servers and their tools under unique names (see the module documentation).
#[derive(Debug)]
pub struct McpHub {
    servers: Vec<McpServer>,
    server_names: Vec<String>,
    tools: Vec<HubTool>,
    /// Name → (server, position in `tools`).
    index: HashMap<String, (usize, usize)>,
    policy: ToolPolicy,
}

impl McpHub {
    /// Starts every server in `commands` with `options` (in order; a failure ends the
    /// ones already started) and lists their tools.
    ///
    /// # Errors
    /// The first server that fails to start or to list its tools, as in
    /// [`McpServer::spawn`] and [`McpServer::list_tools`].
    pub fn start<I, S>(commands: I, options: &ServerOptions) -> Result<McpHub, McpError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut servers = Vec::new();
        for command in commands {
            servers.push(McpServer::spawn(command.as_ref(), options)?);
        }
        McpHub::from_servers(servers)
    }

    /// A hub over servers already started; lists the tools of each.
    ///
    /// # Errors
    /// A server that fails to list its tools, or lists one tool name twice
    /// ([`McpError::Protocol`]).
    pub fn from_servers(mut servers: Vec<McpServer>) -> Result<McpHub, McpError> {
        let server_names = names::unique_names(
            &servers
                .iter()
                .map(|s| s.name().to_owned())
                .collect::<Vec<_>>(),
        );
        let namespaced = servers.len() > 1;
        let mut tools = Vec::new();
        let mut index = HashMap::new();
        for (s, server) in servers.iter_mut().enumerate() {
            server.list_tools()?;
            for tool in server.tools().unwrap_or_default() {
                let name = if namespaced {
                    names::namespaced(&server_names[s], &tool.name)
                } else {
                    tool.name.clone()
                };
                if index.insert(name.clone(), (s, tools.len())).is_some() {
                    return Err(McpError::Protocol {
                        server: server_names[s].clone(),
                        request: "tools/list".into(),
                        reason: format!("the tool `{}` is listed twice", tool.name),
                    });
                }
                tools.push(HubTool {
                    name,
                    server: server_names[s].clone(),
                    tool: tool.clone(),
                });
            }
        }
        Ok(McpHub {
            servers,
            server_names,
            tools,
            index,
            policy: ToolPolicy::default(),
        })
    }

    /// The hub with this policy for every call.
    pub fn with_policy(mut self, policy: ToolPolicy) -> McpHub {
        self.policy = policy;
        self
    }

    /// Replaces the policy.
    pub fn set_policy(&mut self, policy: ToolPolicy) {
        self.policy = policy;
    }

    /// The policy calls go through.
    pub fn policy(&self) -> &ToolPolicy {
        &self.policy
    }

    /// The servers, in the order they were given.
    pub fn servers(&self) -> &[McpServer] {
        &self.servers
    }

    /// The hub's names of the servers (unique; may differ from [`McpServer::name`] by a
    /// number), in the same order.
    pub fn server_names(&self) -> &[String] {
        &self.server_names
    }

    /// Every tool, server by server, in each server's order.
    pub fn tools(&self) -> &[HubTool] {
        &self.tools
    }

    /// The tools as an MCP `tools/list` result, `{"tools": […]}` under the hub's names —
    /// the input of [`gbnfc_compiler::tools::compile_tools`].
    pub fn tools_list(&self) -> Value {
        json!({"tools": self.tools.iter().map(HubTool::to_json).collect::<Vec<_>>()})
    }

    /// The tool the model knows as `name`.
    pub fn resolve(&self, name: &str) -> Option<&HubTool> {
        let &(_, t) = self.index.get(name)?;
        self.tools.get(t)
    }

    /// Calls the tool the model knows as `name`: the policy decides first (a refusal is
    /// an [`OutcomeKind::Refused`] outcome, and nothing is validated or sent), then
    /// [`McpServer::call_tool`] validates, calls and validates again. The outcome carries
    /// `name`.
    ///
    /// # Errors
    /// [`McpError::UnknownTool`] for a name no server offers, and every error of
    /// [`McpServer::call_tool`].
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Result<ToolOutcome, McpError> {
        let unknown = || McpError::UnknownTool {
            name: name.to_owned(),
            known: self.tools.iter().map(|tool| tool.name.clone()).collect(),
        };
        let Some(&(s, t)) = self.index.get(name) else {
            return Err(unknown());
        };
        let Some(hub_tool) = self.tools.get(t) else {
            return Err(unknown());
        };
        let tool_name = hub_tool.tool.name.clone();
        let decision = self
            .policy
            .decide(name, &tool_name, hub_tool.tool.annotations.as_ref());
        if let Decision::Refuse(refusal) = decision {
            return Ok(ToolOutcome {
                tool: name.to_owned(),
                kind: OutcomeKind::Refused(refusal),
            });
        }
        let Some(server) = self.servers.get_mut(s) else {
            return Err(unknown());
        };
        let mut outcome = server.call_tool(&tool_name, arguments)?;
        outcome.tool = name.to_owned();
        Ok(outcome)
    }
}
