//! A tool list's calls as an XGrammar structural tag: the JSON that vLLM and SGLang take to
//! enforce `tool_choice` with their XGrammar backend.
//!
//! Each offered tool is a `tag`: its `begin` is the call's text up to the arguments (the
//! syntax's wrapper and `{"name": "…", "arguments": `), its `content` the arguments'
//! grammar — gbnfc's own, in XGrammar's spelling, so the arguments are enforced as exactly
//! as by the GBNF (`{"type": "grammar"}`, not XGrammar's conversion of the schema) — and
//! its `end` the rest of the call. `required` and a named tool give `tags_with_separator`
//! (calls only, separated as the syntax separates them); `auto` gives `triggered_tags`
//! (free text, and a call wherever the syntax's trigger word starts one). One call unless
//! parallel calls are allowed (`stop_after_first`).
//!
//! The Mistral syntax puts its calls in one bracketed list and gives each an id: the calls
//! are then the `content` of one more tag, `[TOOL_CALLS][` … `]`, which `auto` triggers on
//! `[TOOL_CALLS]`; each call's content is its arguments, then `, "id": "` and the id's nine
//! letters or digits (a `regex`), and its end `"}`.
//!
//! What the structural tag cannot say, it refuses rather than loosen: tool choice `none`
//! (no calls), a `response_format` beside `auto` (its answer is not free text). Parallel
//! calls have no upper bound there: `max_calls` holds only in the GBNF.

use serde_json::{json, Value};

use super::{CompiledTools, ToolChoice, ToolsError, MISTRAL_ID_LEN};
use crate::gbnf::Target;

/// The structural tag of `tools`' calls (see the module documentation).
///
/// # Errors
/// [`ToolsError::BadOption`] for what a structural tag cannot express: tool choice
/// `none`, a `response_format` beside `auto`.
pub fn structural_tag(tools: &CompiledTools) -> Result<Value, ToolsError> {
    let refuse = |what: &str| {
        Err(ToolsError::BadOption(format!(
            "a structural tag cannot express {what}; use the grammar (`--emit gbnf` or `--emit json`)"
        )))
    };
    let shown: Vec<_> = match &tools.choice {
        ToolChoice::None => return refuse("tool choice none (no call may be made)"),
        ToolChoice::Auto if tools.response_format.is_some() => {
            return refuse(
                "a response_format beside tool choice auto (the answer is not free text)",
            )
        }
        ToolChoice::Named(name) => tools
            .tools
            .iter()
            .filter(|t| &t.spec.name == name)
            .collect(),
        ToolChoice::Auto | ToolChoice::Required => tools.tools.iter().collect(),
    };
    let syntax = tools.syntax;
    let (wrap_open, wrap_close) = syntax.wrap();
    let mut tags = Vec::with_capacity(shown.len());
    for tool in shown {
        let grammar = Target::Xgrammar
            .render(&tool.arguments)
            .map_err(|e| ToolsError::BadOption(e.to_string()))?;
        let arguments = json!({"type": "grammar", "grammar": grammar});
        let (content, end) = if syntax.has_id() {
            let content = json!({"type": "sequence", "elements": [
                arguments,
                {"type": "const_string", "value": ", \"id\": \""},
                {"type": "regex", "pattern": format!("[0-9A-Za-z]{{{MISTRAL_ID_LEN}}}")},
            ]});
            (content, format!("\"}}{wrap_close}"))
        } else {
            (arguments, format!("}}{wrap_close}"))
        };
        tags.push(json!({
            "type": "tag",
            "begin": format!("{wrap_open}{}", syntax.call_head(&tool.spec.name)),
            "content": content,
            "end": end,
        }));
    }
    let calls = json!({
        "type": "tags_with_separator",
        "tags": tags,
        "separator": syntax.separator(),
        "at_least_one": true,
        "stop_after_first": !tools.parallel,
    });
    // The syntax's list around the calls, when it has one (Mistral); its opening starts
    // with the syntax's trigger, as `triggered_tags` requires of a tag's begin.
    let listed = (!syntax.open().is_empty()).then(
        || json!({"type": "tag", "begin": syntax.open(), "content": calls, "end": syntax.close()}),
    );
    let format = match (&tools.choice, listed) {
        (ToolChoice::Auto, None) => json!({
            "type": "triggered_tags",
            "triggers": [syntax.trigger()],
            "tags": tags,
            "at_least_one": false,
            "stop_after_first": !tools.parallel,
        }),
        (ToolChoice::Auto, Some(list)) => json!({
            "type": "triggered_tags",
            "triggers": [syntax.trigger()],
            "tags": [list],
            "at_least_one": false,
            "stop_after_first": true,
        }),
        (_, Some(list)) => list,
        (_, None) => calls,
    };
    Ok(json!({"type": "structural_tag", "format": format}))
}
