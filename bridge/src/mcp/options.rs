//! How an MCP server is started and how long each wait may take.

use std::time::Duration;

/// Settings for one MCP server: its name and the deadline of every wait.
///
/// The defaults suit `npx`-launched servers: a first `npx -y` may download the package,
/// so startup gets a minute; a tool call gets 20 seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerOptions {
    /// The server's name (sanitised); `None`: derived from the command
    /// ([`crate::mcp::names::server_name`]).
    pub name: Option<String>,
    /// Spawning the process and the `initialize` handshake, together.
    pub startup_timeout: Duration,
    /// Each `tools/list` page.
    pub list_timeout: Duration,
    /// Each `tools/call`.
    pub call_timeout: Duration,
    /// How long a server may take to exit by itself once its stdin is closed; after that
    /// its process group gets `SIGTERM`, then `SIGKILL`.
    pub shutdown_grace: Duration,
    /// Copy the server's stderr to ours as it arrives (its last lines are kept for error
    /// messages either way).
    pub echo_stderr: bool,
}

/// Default startup deadline: room for `npx -y` to download a package.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// Default deadline for one `tools/list` page.
pub const DEFAULT_LIST_TIMEOUT: Duration = Duration::from_secs(20);
/// Default deadline for one `tools/call`.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(20);
/// Default time a server gets to exit after its stdin closes.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            name: None,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            list_timeout: DEFAULT_LIST_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            echo_stderr: false,
        }
    }
}
