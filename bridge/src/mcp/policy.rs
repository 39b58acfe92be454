//! Which tool calls may run at all: a pure function of the tool's names and its MCP
//! `annotations`, decided before any validation or call.
//!
//! The rules, in order:
//! 1. a tool named in `deny` is always refused;
//! 2. with `read_only`, every tool not marked `readOnlyHint: true` is refused (naming it
//!    in `allow` does not lift this: read-only is the stronger promise);
//! 3. a tool marked `destructiveHint: true` is refused unless `allow` names it or `yes`
//!    is set;
//! 4. everything else may run.
//!
//! Names match either the name the model sees (namespaced `server__tool` with several
//! servers) or the tool's own name on its server, so `deny: ["write_file"]` covers every
//! server's `write_file`. Only an explicit `destructiveHint: true` counts as destructive:
//! tools that say nothing are not refused (the MCP spec's default of `true` would refuse
//! every unannotated tool).
//!
//! ```
//! use gbnfc_bridge::mcp::{Decision, Refusal, ToolPolicy};
//! let annotations = serde_json::json!({"destructiveHint": true});
//! let policy = ToolPolicy::default();
//! assert_eq!(policy.decide("fs__write_file", "write_file", Some(&annotations)),
//!            Decision::Refuse(Refusal::Destructive));
//! let policy = ToolPolicy { allow: vec!["write_file".into()], ..ToolPolicy::default() };
//! assert_eq!(policy.decide("fs__write_file", "write_file", Some(&annotations)), Decision::Allow);
//! ```

use std::fmt;

use serde_json::Value;

/// The user's rules for tool calls (the CLI's `--allow-tool`, `--deny-tool`, `--yes`,
/// `--read-only`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolPolicy {
    /// Destructive tools that may run anyway.
    pub allow: Vec<String>,
    /// Tools that never run.
    pub deny: Vec<String>,
    /// Every destructive tool may run.
    pub yes: bool,
    /// Only tools marked `readOnlyHint: true` may run.
    pub read_only: bool,
}

/// What the policy says about one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The call may go ahead (to validation, then the server).
    Allow,
    /// The call must not run; the model is told why.
    Refuse(Refusal),
}

/// Why a call was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The tool is on the deny list.
    Denied,
    /// The tool is marked `destructiveHint: true` and was not allowed.
    Destructive,
    /// Read-only mode, and the tool is not marked `readOnlyHint: true`.
    NotReadOnly,
}

impl ToolPolicy {
    /// Decides whether the tool `name` (as the model sees it; `tool` on its server) with
    /// these MCP `annotations` may be called.
    pub fn decide(&self, name: &str, tool: &str, annotations: Option<&Value>) -> Decision {
        let listed = |list: &[String]| list.iter().any(|n| n == name || n == tool);
        let hint = |key: &str| {
            annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        if listed(&self.deny) {
            Decision::Refuse(Refusal::Denied)
        } else if self.read_only && !hint("readOnlyHint") {
            Decision::Refuse(Refusal::NotReadOnly)
        } else if hint("destructiveHint") && !self.yes && !listed(&self.allow) {
            Decision::Refuse(Refusal::Destructive)
        } else {
            Decision::Allow
        }
    }
}

impl Refusal {
    /// The explanation for the model and the user, naming the tool.
    pub fn explain(self, name: &str) -> String {
        match self {
            Refusal::Denied => {
                format!("the tool `{name}` was not called: the user denied it (--deny-tool)")
            }
            Refusal::Destructive => format!(
                "the tool `{name}` was not called: it is marked destructive \
                 (destructiveHint: true) and the user did not allow it \
                 (--allow-tool {name}, or --yes for every tool)"
            ),
            Refusal::NotReadOnly => format!(
                "the tool `{name}` was not called: only tools marked read-only \
                 (readOnlyHint: true) may run (--read-only)"
            ),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::Denied => "denied by the user",
            Refusal::Destructive => "destructive and not allowed",
            Refusal::NotReadOnly => "not read-only",
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn policy(allow: &[&str], deny: &[&str], yes: bool, read_only: bool) -> ToolPolicy {
        ToolPolicy {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
            yes,
            read_only,
        }
    }

    #[test]
    fn the_rules_apply_in_order() {
        let destructive = json!({"readOnlyHint": false, "destructiveHint": true});
        let read_only = json!({"readOnlyHint": true});
        let harmless = json!({"readOnlyHint": false, "destructiveHint": false});
        let d = Some(&destructive);
        let r = Some(&read_only);
        let h = Some(&harmless);
        let refuse = Decision::Refuse;

        let default = ToolPolicy::default();
        assert_eq!(default.decide("rm", "rm", d), refuse(Refusal::Destructive));
        assert_eq!(default.decide("cat", "cat", r), Decision::Allow);
        assert_eq!(default.decide("touch", "touch", h), Decision::Allow);
        assert_eq!(default.decide("plain", "plain", None), Decision::Allow);

        assert_eq!(
            policy(&["rm"], &[], false, false).decide("rm", "rm", d),
            Decision::Allow
        );
        assert_eq!(
            policy(&[], &[], true, false).decide("rm", "rm", d),
            Decision::Allow
        );
        assert_eq!(
            policy(&["other"], &[], false, false).decide("rm", "rm", d),
            refuse(Refusal::Destructive)
        );

        // Deny beats allow and yes; it matches either name.
        let deny = policy(&["cat"], &["cat"], true, false);
        assert_eq!(deny.decide("fs__cat", "cat", r), refuse(Refusal::Denied));
        let deny = policy(&[], &["fs__cat"], false, false);
        assert_eq!(deny.decide("fs__cat", "cat", r), refuse(Refusal::Denied));
        assert_eq!(deny.decide("web__cat", "cat", r), Decision::Allow);

        // Read-only refuses everything not marked read-only, allowed or not.
        let ro = policy(&["rm", "touch"], &[], true, true);
        assert_eq!(ro.decide("cat", "cat", r), Decision::Allow);
        assert_eq!(ro.decide("rm", "rm", d), refuse(Refusal::NotReadOnly));
        assert_eq!(ro.decide("touch", "touch", h), refuse(Refusal::NotReadOnly));
        assert_eq!(
            ro.decide("plain", "plain", None),
            refuse(Refusal::NotReadOnly)
        );
        let fake = json!({"readOnlyHint": "true"});
        assert_eq!(
            ro.decide("cat", "cat", Some(&fake)),
            refuse(Refusal::NotReadOnly)
        );
    }

    #[test]
    fn refusals_explain_themselves() {
        assert!(Refusal::Destructive
            .explain("rm")
            .contains("--allow-tool rm"));
        assert!(Refusal::Denied.explain("rm").contains("`rm`"));
        assert!(Refusal::NotReadOnly.explain("rm").contains("readOnlyHint"));
    }
}
