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
//! What the structural tag cannot say, it refuses rather than loosen: tool choice `none`
//! (no calls), a `response_format` beside `auto` (its answer is not free text), the
//! Mistral syntax (its calls sit in one bracketed list and carry an `id`). Parallel calls
//! have no upper bound there: `max_calls` holds only in the GBNF.

use serde_json::{json, Value};

use super::{CompiledTools, Syntax, ToolChoice, ToolsError};
use crate::gbnf::Target;

/// The structural tag of `tools`' calls (see the module documentation).
///
/// # Errors
/// [`ToolsError::BadOption`] for what a structural tag cannot express: tool choice
/// `none`, a `response_format` beside `auto`, the Mistral syntax.
pub fn structural_tag(tools: &CompiledTools) -> Result<Value, ToolsError> {
    let refuse = |what: &str| {
        Err(ToolsError::BadOption(format!(
            "a structural tag cannot express {what}; use the grammar (`--emit gbnf` or `--emit json`)"
        )))
    };
    if tools.syntax == Syntax::Mistral {
        return refuse("the mistral syntax (one bracketed list of calls, each with an id)");
    }
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
    let (open, close) = tools.syntax.wrap();
    let mut tags = Vec::with_capacity(shown.len());
    for tool in shown {
        let grammar = Target::Xgrammar
            .render(&tool.arguments)
            .map_err(|e| ToolsError::BadOption(e.to_string()))?;
        tags.push(json!({
            "type": "tag",
            "begin": format!("{open}{}", tools.syntax.call_head(&tool.spec.name)),
            "content": {"type": "grammar", "grammar": grammar},
            "end": format!("}}{close}"),
        }));
    }
    let format = match tools.choice {
        ToolChoice::Auto => json!({
            "type": "triggered_tags",
            "triggers": [tools.syntax.trigger()],
            "tags": tags,
            "at_least_one": false,
            "stop_after_first": !tools.parallel,
        }),
        _ => json!({
            "type": "tags_with_separator",
            "tags": tags,
            "separator": tools.syntax.separator(),
            "at_least_one": true,
            "stop_after_first": !tools.parallel,
        }),
    };
    Ok(json!({"type": "structural_tag", "format": format}))
}
