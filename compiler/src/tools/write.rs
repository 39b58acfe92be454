//! Tool calls written back as text, the inverse of [`super::parse`]: what a model of a
//! syntax writes for given calls, laid out as the call grammar lays it out. A chat history
//! shows a model its earlier calls this way, in its own syntax.

use super::parse::ToolCall;
use super::syntax::{json_string, MISTRAL_ID_LEN};
use super::Syntax;

/// The text of `calls` in `syntax`, byte for byte as the call grammar writes it:
/// arguments as compact JSON, Mistral ids through [`mistral_id`]. For calls whose
/// arguments satisfy their tools' schemas, the call grammar accepts the text and
/// [`super::parse_tool_calls`] reads the same calls back.
///
/// ```
/// use gbnfc_compiler::tools::{write_calls, Syntax, ToolCall};
/// let call = ToolCall { name: "f".into(), arguments: serde_json::json!({"x": 1}), id: None };
/// assert_eq!(write_calls(Syntax::Llama3, &[call]), "{\"name\": \"f\", \"parameters\": {\"x\":1}}");
/// ```
pub fn write_calls(syntax: Syntax, calls: &[ToolCall]) -> String {
    let (before, after) = syntax.wrap();
    let mut text = String::from(syntax.open());
    for (index, call) in calls.iter().enumerate() {
        if index > 0 {
            text.push_str(syntax.separator());
        }
        text.push_str(before);
        text.push_str(&syntax.call_head(&call.name));
        // Compact JSON, as the call grammar writes arguments.
        text.push_str(&call.arguments.to_string());
        if syntax.has_id() {
            let id = mistral_id(call.id.as_deref().unwrap_or_default());
            text.push_str(", \"id\": ");
            text.push_str(&json_string(&id));
        }
        text.push('}');
        text.push_str(after);
    }
    text.push_str(syntax.close());
    text
}

/// A Mistral call id made from any id (an OpenAI `call_…` one, say): its last
/// [`MISTRAL_ID_LEN`] ASCII letters and digits, padded in front with `0` when it has
/// fewer. The same id always gives the same Mistral id, so a call and the result that
/// answers it keep matching.
pub fn mistral_id(id: &str) -> String {
    let kept: Vec<char> = id.chars().filter(char::is_ascii_alphanumeric).collect();
    let tail = &kept[kept.len().saturating_sub(MISTRAL_ID_LEN)..];
    let mut out = "0".repeat(MISTRAL_ID_LEN - tail.len());
    out.extend(tail);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::{json, Value};

    use super::*;
    use crate::tools::parse_tool_calls;

    fn call(name: &str, arguments: Value, id: Option<&str>) -> ToolCall {
        ToolCall {
            name: name.into(),
            arguments,
            id: id.map(str::to_string),
        }
    }

    #[test]
    fn every_syntax_reads_back_what_it_writes() {
        let calls = [
            call(
                "get_weather",
                json!({"city": "Chengdu", "days": 3}),
                Some("a1B2c3D4e"),
            ),
            call("lookup", json!({}), Some("zzzzzzzzz")),
        ];
        for syntax in Syntax::ALL {
            let text = write_calls(syntax, &calls);
            let back = parse_tool_calls(syntax, &text).unwrap();
            assert_eq!(back.len(), 2, "{syntax}: {text}");
            for (read, written) in back.iter().zip(&calls) {
                assert_eq!(read.name, written.name, "{syntax}: {text}");
                assert_eq!(read.arguments, written.arguments, "{syntax}: {text}");
                let id = syntax.has_id().then(|| written.id.clone()).flatten();
                assert_eq!(read.id, id, "{syntax}: {text}");
            }
        }
        assert_eq!(
            write_calls(Syntax::Mistral, &calls[1..]),
            "[TOOL_CALLS][{\"name\": \"lookup\", \"arguments\": {}, \"id\": \"zzzzzzzzz\"}]"
        );
        assert_eq!(
            write_calls(Syntax::Hermes, &calls[1..]),
            "<tool_call>\n{\"name\": \"lookup\", \"arguments\": {}}\n</tool_call>"
        );
    }

    #[test]
    fn mistral_ids_are_nine_letters_and_digits_from_the_end() {
        assert_eq!(mistral_id("call_abcdefghijklmnopqrstuvwx"), "pqrstuvwx");
        assert_eq!(mistral_id("a-b_c"), "000000abc");
        assert_eq!(mistral_id(""), "000000000");
        assert_eq!(mistral_id("é9"), "000000009");
    }
}
