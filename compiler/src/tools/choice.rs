//! `tool_choice`: may the model answer in prose, must it call, and which tool.
//!
//! Read from the options (`auto`, `required`, `none` or a tool name) or from the input in
//! any vendor's spelling: OpenAI's `"auto" | "required" | "none" | {"type": "function",
//! "function": {"name": …}}` (and the Responses API's `{"type": "function", "name": …}`),
//! the legacy `function_call` (`"auto" | "none" | {"name": …}`), and Anthropic's
//! `{"type": "auto" | "any" | "tool" | "none", "name"?: …}`.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use super::ToolsError;

/// Which calls the grammar allows.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum ToolChoice {
    /// Prose (or the `response_format` answer) or calls; also a lazy grammar with triggers.
    #[default]
    Auto,
    /// At least one call, of any tool.
    Required,
    /// No tool grammar: only the `response_format` answer, if there is one.
    None,
    /// Calls of this tool only.
    Named(String),
}

impl fmt::Display for ToolChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolChoice::Auto => f.write_str("auto"),
            ToolChoice::Required => f.write_str("required"),
            ToolChoice::None => f.write_str("none"),
            ToolChoice::Named(name) => f.write_str(name),
        }
    }
}

impl FromStr for ToolChoice {
    type Err = ToolsError;

    /// `auto`, `required`, `none`, or any other non-empty text as a tool name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(ToolChoice::Auto),
            "required" => Ok(ToolChoice::Required),
            "none" => Ok(ToolChoice::None),
            "" => Err(ToolsError::UnknownChoice {
                pointer: None,
                found: "\"\" (empty)".to_string(),
            }),
            name => Ok(ToolChoice::Named(name.to_string())),
        }
    }
}

impl ToolChoice {
    /// Reads a `tool_choice` (or legacy `function_call`) value found at `pointer`.
    ///
    /// ```
    /// use gbnfc_compiler::tools::ToolChoice;
    /// use serde_json::json;
    /// let forced = json!({"type": "function", "function": {"name": "get_weather"}});
    /// assert_eq!(
    ///     ToolChoice::from_json(&forced, "/tool_choice").unwrap(),
    ///     ToolChoice::Named("get_weather".into())
    /// );
    /// assert_eq!(ToolChoice::from_json(&json!({"type": "any"}), "").unwrap(), ToolChoice::Required);
    /// assert!(ToolChoice::from_json(&json!("sometimes"), "/tool_choice").is_err());
    /// ```
    ///
    /// # Errors
    /// [`ToolsError::UnknownChoice`] for anything else.
    pub fn from_json(value: &Value, pointer: &str) -> Result<ToolChoice, ToolsError> {
        let unknown = || ToolsError::UnknownChoice {
            pointer: Some(pointer.to_string()),
            found: clip(&value.to_string()),
        };
        let named = |name: Option<&Value>| match name.and_then(Value::as_str) {
            Some(name) if !name.is_empty() => Ok(ToolChoice::Named(name.to_string())),
            _ => Err(unknown()),
        };
        match value {
            Value::String(s) => match s.as_str() {
                "auto" => Ok(ToolChoice::Auto),
                "required" | "any" => Ok(ToolChoice::Required),
                "none" => Ok(ToolChoice::None),
                _ => Err(unknown()),
            },
            Value::Object(map) => match map.get("type").and_then(Value::as_str) {
                Some("auto") => Ok(ToolChoice::Auto),
                Some("any" | "required") => Ok(ToolChoice::Required),
                Some("none") => Ok(ToolChoice::None),
                Some("function") => match map.get("function") {
                    Some(function) => named(function.get("name")),
                    None => named(map.get("name")),
                },
                Some("tool") => named(map.get("name")),
                Some(_) => Err(unknown()),
                // Legacy `function_call: {"name": …}`.
                None => named(map.get("name")),
            },
            _ => Err(unknown()),
        }
    }
}

/// At most 80 characters of a value's text, for messages.
fn clip(text: &str) -> String {
    if text.chars().count() <= 80 {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(80).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn every_vendor_spelling() {
        let cases = [
            (json!("auto"), ToolChoice::Auto),
            (json!("required"), ToolChoice::Required),
            (json!("none"), ToolChoice::None),
            (json!({"type": "auto"}), ToolChoice::Auto),
            (json!({"type": "none"}), ToolChoice::None),
            (
                json!({"type": "tool", "name": "f"}),
                ToolChoice::Named("f".into()),
            ),
            (
                json!({"type": "function", "name": "f"}),
                ToolChoice::Named("f".into()),
            ),
            (json!({"name": "f"}), ToolChoice::Named("f".into())),
        ];
        for (value, want) in cases {
            assert_eq!(ToolChoice::from_json(&value, "/x"), Ok(want), "{value}");
        }
        for bad in [
            json!(1),
            json!({"type": "function"}),
            json!({"type": "allowed_tools"}),
            json!({"type": "tool", "name": ""}),
        ] {
            let err = ToolChoice::from_json(&bad, "/tool_choice").unwrap_err();
            assert_eq!(err.pointer(), Some("/tool_choice"), "{bad}");
        }
    }

    #[test]
    fn option_text() {
        assert_eq!("none".parse::<ToolChoice>(), Ok(ToolChoice::None));
        assert_eq!("f".parse::<ToolChoice>(), Ok(ToolChoice::Named("f".into())));
        assert!("".parse::<ToolChoice>().is_err());
        assert_eq!(ToolChoice::Named("f".into()).to_string(), "f");
    }
}
