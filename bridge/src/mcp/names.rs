//! Names: splitting a server's command line, deriving a server's name from it, and
//! namespacing tool names (`server__tool`) when several servers share one tool list.
//!
//! ```
//! use gbnfc_bridge::mcp::names::{server_name, split_command};
//! let argv = split_command("npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /tmp/x").unwrap();
//! assert_eq!(server_name(&argv), "filesystem");
//! assert_eq!(server_name(&split_command("uvx mcp-server-time").unwrap()), "time");
//! ```

use crate::mcp::McpError;

/// The separator between a server's name and a tool's name in namespaced tool names.
pub const NAMESPACE_SEPARATOR: &str = "__";

/// Splits a command line into words the way a POSIX shell would (quotes and backslash
/// escapes; no expansion).
///
/// # Errors
/// [`McpError::Command`] for unbalanced quotes or an empty line.
pub fn split_command(line: &str) -> Result<Vec<String>, McpError> {
    let words = shlex::split(line).ok_or_else(|| McpError::Command {
        command: line.to_owned(),
        reason: "unbalanced quotes or a trailing backslash".into(),
    })?;
    if words.is_empty() {
        return Err(McpError::Command {
            command: line.to_owned(),
            reason: "the command is empty".into(),
        });
    }
    Ok(words)
}

/// Programs that run another program named by their first non-option argument.
const LAUNCHERS: &[&str] = &[
    "npx", "bunx", "pnpx", "uvx", "pipx", "uv", "node", "nodejs", "deno", "bun", "python",
    "python3", "npm", "pnpm", "yarn", "docker", "podman",
];

/// Launcher subcommands that come before the program's name (`uv run x`, `pnpm dlx x`).
const SUBCOMMANDS: &[&str] = &["run", "exec", "dlx", "x", "tool"];

/// Affixes that say nothing about which server it is (compared with `_` read as `-`).
const PREFIXES: &[&str] = &["mcp-server-", "server-", "mcp-"];
const SUFFIXES: &[&str] = &["-mcp-server", "-server", "-mcp"];

/// A short name for the server a command line starts: the package or program it runs,
/// without launcher, scope, version, extension and `mcp-server-`-like affixes, sanitised
/// with [`sanitize`] (`npx -y @scope/server-filesystem@1.0 /tmp` → `filesystem`).
pub fn server_name(argv: &[String]) -> String {
    let Some(program) = argv.first() else {
        return sanitize("");
    };
    let mut subject = base_name(program);
    if LAUNCHERS.contains(&subject.as_str()) {
        if let Some(target) = argv
            .iter()
            .skip(1)
            .find(|a| !a.starts_with('-') && !SUBCOMMANDS.contains(&a.as_str()))
        {
            subject = package_name(target);
        }
    }
    sanitize(&strip_affixes(&subject))
}

/// The last path segment of a program, without its extension.
fn base_name(path: &str) -> String {
    let last = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match last.rsplit_once('.') {
        Some((stem, ext))
            if !stem.is_empty() && matches!(ext, "js" | "mjs" | "cjs" | "ts" | "py" | "exe") =>
        {
            stem.to_owned()
        }
        _ => last.to_owned(),
    }
}

/// A package spec's name: `@scope/name@1.2` → `name`; a path → its base name.
fn package_name(spec: &str) -> String {
    let unversioned = match spec.rfind('@') {
        Some(at) if at > 0 => &spec[..at],
        _ => spec,
    };
    base_name(unversioned)
}

fn strip_affixes(name: &str) -> String {
    let mut name = name.to_owned();
    for prefix in PREFIXES {
        let normal = name.replace('_', "-").to_ascii_lowercase();
        if normal.starts_with(prefix) && normal.len() > prefix.len() {
            name = name[prefix.len()..].to_owned();
            break;
        }
    }
    for suffix in SUFFIXES {
        let normal = name.replace('_', "-").to_ascii_lowercase();
        if normal.ends_with(suffix) && normal.len() > suffix.len() {
            name.truncate(name.len() - suffix.len());
            break;
        }
    }
    name
}

/// A server name safe inside tool names: characters outside `[A-Za-z0-9_-]` become `_`,
/// runs of `_` collapse to one (so a server name never contains the `__` separator),
/// leading and trailing `_`/`-` go; an empty result is `server`.
pub fn sanitize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    let trimmed = out.trim_matches(['_', '-']);
    if trimmed.is_empty() {
        "server".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// Makes names unique in order: the first keeps its name, later ones get `_2`, `_3`, …
pub fn unique_names(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        let mut candidate = name.clone();
        let mut n = 2;
        while out.contains(&candidate) {
            candidate = format!("{name}_{n}");
            n += 1;
        }
        out.push(candidate);
    }
    out
}

/// `server__tool`.
pub fn namespaced(server: &str, tool: &str) -> String {
    format!("{server}{NAMESPACE_SEPARATOR}{tool}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn name_of(line: &str) -> String {
        server_name(&split_command(line).unwrap())
    }

    #[test]
    fn names_come_from_the_package_or_program() {
        assert_eq!(
            name_of("npx -y @modelcontextprotocol/server-everything@2026.8.31"),
            "everything"
        );
        assert_eq!(
            name_of("npx -y @modelcontextprotocol/server-filesystem /tmp/x"),
            "filesystem"
        );
        assert_eq!(name_of("uvx mcp-server-time --local-timezone UTC"), "time");
        assert_eq!(name_of("python3 -m mcp_server_git"), "git");
        assert_eq!(name_of("uv run weather.py"), "weather");
        assert_eq!(name_of("docker run -i --rm mcp/fetch"), "fetch");
        assert_eq!(name_of("/opt/bin/github-mcp-server stdio"), "github");
        assert_eq!(name_of("node /srv/tools/notes.mjs"), "notes");
        assert_eq!(name_of("'./my server' --flag"), "my_server");
        assert_eq!(name_of("npx"), "npx");
        assert_eq!(name_of("npx -y @@@"), "server");
    }

    #[test]
    fn sanitised_names_never_hold_the_separator() {
        assert_eq!(sanitize("a__b"), "a_b");
        assert_eq!(sanitize("a.b c"), "a_b_c");
        assert_eq!(sanitize("__x__"), "x");
        assert_eq!(sanitize("é"), "server");
        assert!(!sanitize("x___y...z").contains(NAMESPACE_SEPARATOR));
    }

    #[test]
    fn collisions_are_numbered_in_order() {
        let names: Vec<String> = ["fs", "fs", "time", "fs", "fs_2"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            unique_names(&names),
            ["fs", "fs_2", "time", "fs_3", "fs_2_2"]
        );
    }

    #[test]
    fn bad_command_lines_are_errors() {
        assert!(matches!(split_command("  "), Err(McpError::Command { .. })));
        assert!(matches!(
            split_command("npx 'open"),
            Err(McpError::Command { .. })
        ));
        assert_eq!(split_command("a 'b c' d\\ e").unwrap(), ["a", "b c", "d e"]);
    }
}
