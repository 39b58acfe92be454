//! The tool-call text formats local models are trained on, byte for byte.
//!
//! | syntax | one call | several calls |
//! |---|---|---|
//! | `json` | `{"name": "f", "arguments": {…}}` | calls separated by `\n` |
//! | `hermes` | `<tool_call>\n{"name": "f", "arguments": {…}}\n</tool_call>` | blocks separated by `\n` |
//! | `llama3` | `{"name": "f", "parameters": {…}}` | calls separated by `\n` |
//! | `mistral` | `[TOOL_CALLS][{"name": "f", "arguments": {…}, "id": "a1B2c3D4e"}]` | `[TOOL_CALLS][call, call]` (`, `) |
//!
//! The call object has one space after each colon and comma of its own, and the
//! arguments are the compiled schema's JSON (compact unless flexible whitespace was
//! asked for) — the shapes of CONTEXT.md and of `grammars/tool-call-*.gbnf`. Where the
//! formats say nothing, gbnfc chooses: plain JSON and Llama 3 put parallel calls one per
//! line (JSON Lines, so every call starts with the trigger), Hermes blocks are separated
//! by one newline (the Qwen 2.5 template), and a Mistral id is exactly nine ASCII letters
//! and digits (what `mistral_common` checks).

use std::fmt;
use std::str::FromStr;

use super::ToolsError;

/// The length of a Mistral call id.
pub const MISTRAL_ID_LEN: usize = 9;

/// A tool-call text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Syntax {
    /// `{"name": …, "arguments": {…}}`.
    #[default]
    Json,
    /// `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>` (Hermes, Qwen 2.5, SmolLM2).
    Hermes,
    /// `{"name": …, "parameters": {…}}` (Llama 3.x JSON tool calling).
    Llama3,
    /// `[TOOL_CALLS][{"name": …, "arguments": {…}, "id": "abcdefghi"}]`.
    Mistral,
}

impl Syntax {
    /// Every syntax.
    pub const ALL: [Syntax; 4] = [
        Syntax::Json,
        Syntax::Hermes,
        Syntax::Llama3,
        Syntax::Mistral,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Syntax::Json => "json",
            Syntax::Hermes => "hermes",
            Syntax::Llama3 => "llama3",
            Syntax::Mistral => "mistral",
        }
    }

    /// The text every call sequence starts with: the trigger word of the lazy grammar, and
    /// what the prose branch of `auto` may never contain.
    ///
    /// For `json` and `llama3` it is `{"name": "` — with the space, which compact JSON
    /// (a `response_format` answer) never has outside strings, where `"` is escaped.
    pub fn trigger(self) -> &'static str {
        match self {
            Syntax::Json | Syntax::Llama3 => "{\"name\": \"",
            Syntax::Hermes => "<tool_call>",
            Syntax::Mistral => "[TOOL_CALLS]",
        }
    }

    /// The key of the arguments object: `parameters` for Llama 3, else `arguments`.
    pub fn arguments_key(self) -> &'static str {
        match self {
            Syntax::Llama3 => "parameters",
            _ => "arguments",
        }
    }

    /// Does each call carry an `id`?
    pub fn has_id(self) -> bool {
        self == Syntax::Mistral
    }

    /// Text before the first call of a sequence.
    pub fn open(self) -> &'static str {
        match self {
            Syntax::Mistral => "[TOOL_CALLS][",
            _ => "",
        }
    }

    /// Text after the last call of a sequence.
    pub fn close(self) -> &'static str {
        match self {
            Syntax::Mistral => "]",
            _ => "",
        }
    }

    /// Text between two calls.
    pub fn separator(self) -> &'static str {
        match self {
            Syntax::Mistral => ", ",
            _ => "\n",
        }
    }

    /// Text around each call object: `<tool_call>\n` … `\n</tool_call>` for Hermes.
    pub fn wrap(self) -> (&'static str, &'static str) {
        match self {
            Syntax::Hermes => ("<tool_call>\n", "\n</tool_call>"),
            _ => ("", ""),
        }
    }

    /// The call object up to its arguments: `{"name": "get_weather", "arguments": `.
    pub fn call_head(self, tool_name: &str) -> String {
        format!(
            "{{\"name\": {}, \"{}\": ",
            json_string(tool_name),
            self.arguments_key()
        )
    }
}

/// A string as serde_json spells it (the canonical JSON spelling).
pub(crate) fn json_string(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

impl fmt::Display for Syntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Syntax {
    type Err = ToolsError;

    /// `json`, `hermes`, `llama3` or `mistral` (ASCII case ignored).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Syntax::ALL
            .into_iter()
            .find(|syntax| syntax.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| ToolsError::UnknownSyntax(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for syntax in Syntax::ALL {
            assert_eq!(syntax.name().parse::<Syntax>(), Ok(syntax));
        }
        assert!(matches!(
            "chatml".parse::<Syntax>(),
            Err(ToolsError::UnknownSyntax(s)) if s == "chatml"
        ));
    }

    #[test]
    fn every_call_starts_with_the_trigger() {
        for syntax in Syntax::ALL {
            let start = format!(
                "{}{}{}",
                syntax.open(),
                syntax.wrap().0,
                syntax.call_head("f")
            );
            assert!(start.starts_with(syntax.trigger()), "{syntax}: {start}");
        }
    }
}
