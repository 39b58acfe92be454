//! A compact rendering of tool definitions for small contexts (`--compact-tools`):
//! descriptions longer than [`LONG_DESCRIPTION`] characters cut to their first sentence,
//! and the keywords that only repeat what the prompt already says (`title`, `$schema`,
//! `$id`, `examples`, `$comment`) left out, in the tool and in every schema under it.
//! The grammar and validation are untouched: they read the full schemas; only what the
//! model is shown gets shorter.

use serde_json::{Map, Value};

/// Descriptions longer than this, in characters, are cut to their first sentence.
pub const LONG_DESCRIPTION: usize = 120;

/// Keywords left out of a compact definition.
const DROPPED: &[&str] = &["title", "$schema", "$id", "examples", "$comment"];

/// `definition` (an OpenAI function tool, or any JSON) with long descriptions cut and the
/// keywords the module documentation names left out, at every depth. A property *named*
/// `title` is kept: only keywords of schemas are dropped.
pub fn compact(definition: &Value) -> Value {
    match definition {
        Value::Object(map) => Value::Object(compact_object(map)),
        Value::Array(items) => Value::Array(items.iter().map(compact).collect()),
        other => other.clone(),
    }
}

fn compact_object(map: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in map {
        let value = match (key.as_str(), value) {
            (key, _) if DROPPED.contains(&key) => continue,
            ("description", Value::String(text)) => Value::String(first_sentence(text)),
            // Values, not schemas: kept as they are.
            ("enum" | "const" | "default", value) => value.clone(),
            // The names under `properties` are property names, not keywords: keep them
            // all and compact their schemas.
            (
                "properties" | "patternProperties" | "$defs" | "definitions",
                Value::Object(named),
            ) => Value::Object(
                named
                    .iter()
                    .map(|(name, schema)| (name.clone(), compact(schema)))
                    .collect(),
            ),
            (_, value) => compact(value),
        };
        out.insert(key.clone(), value);
    }
    out
}

/// `text` cut to its first sentence when longer than [`LONG_DESCRIPTION`] characters: up
/// to the first `.`, `!` or `?` followed by whitespace (or a line break), kept whole when
/// there is none.
fn first_sentence(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= LONG_DESCRIPTION {
        return text.to_string();
    }
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends = matches!(c, '.' | '!' | '?')
            && chars.peek().is_some_and(|&(_, next)| next.is_whitespace());
        if ends || c == '\n' {
            return text[..i + c.len_utf8()].trim_end().to_string();
        }
    }
    text.to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn long_descriptions_keep_their_first_sentence() {
        let long = format!("Fetches a URL. {}", "More words here. ".repeat(10));
        assert_eq!(first_sentence(&long), "Fetches a URL.");
        assert_eq!(first_sentence("Short. Kept whole."), "Short. Kept whole.");
        let no_stop = "x".repeat(200);
        assert_eq!(first_sentence(&no_stop), no_stop);
        let version = format!("Uses v1.2 of the API here\nthen {}", "y".repeat(150));
        assert_eq!(first_sentence(&version), "Uses v1.2 of the API here");
    }

    #[test]
    fn titles_go_but_a_property_or_a_value_named_title_stays() {
        let tool = json!({"type": "function", "function": {"name": "note",
            "parameters": {"title": "noteArguments", "type": "object", "properties": {
                "title": {"title": "Title", "type": "string"},
                "tags": {"type": "array", "items": {"title": "Tag", "type": "string"}},
                "kind": {"const": {"title": "data"}, "default": {"title": "data"}}}}}});
        assert_eq!(
            compact(&tool),
            json!({"type": "function", "function": {"name": "note",
                "parameters": {"type": "object", "properties": {
                    "title": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "kind": {"const": {"title": "data"}, "default": {"title": "data"}}}}}})
        );
    }
}
