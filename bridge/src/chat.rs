//! Conversations: OpenAI-shaped messages, and the prompt the model's own chat template
//! makes of them.
//!
//! Messages have the hosted APIs' shape (`role` system / user / assistant / tool,
//! `content`, `tool_calls`, `tool_call_id`, `name`). The prompt comes from the chat
//! template in the GGUF file, applied by llama.cpp. Earlier tool calls are written into
//! the assistant's text in the call syntax of the model's family ([`syntax_for`]), byte
//! for byte as the call grammar makes the model write them: `<tool_call>` blocks for
//! Hermes / Qwen 2.5 / SmolLM2, `[TOOL_CALLS][…]` for Mistral, JSON objects with
//! `parameters` for Llama 3. Tool results go inside `<tool_response>` tags (Hermes),
//! `[TOOL_RESULTS]…[/TOOL_RESULTS]` (Mistral) or an `ipython` turn (Llama 3). The tool
//! list is a `<tools>` block in the system prompt ([`tools_system_prompt`],
//! [`with_tools`]).

use gbnfc_compiler::tools::{self, mistral_id, write_calls, Syntax, ToolSpec};
use llama_cpp_2::model::LlamaChatTemplate;
use serde_json::{json, Map, Value};

use crate::chat_model::ChatModel;
use crate::BridgeError;
use crate::{chat_template, compact_tools};

/// Who speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

impl Role {
    /// The role's name in messages and templates.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// Reads a role name (`developer` is OpenAI's newer name for `system`).
    pub fn parse(name: &str) -> Option<Role> {
        match name {
            "system" | "developer" => Some(Role::System),
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "tool" | "function" => Some(Role::Tool),
            _ => None,
        }
    }
}

/// One call the assistant made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The call's id (`call_…`); a tool result names it in `tool_call_id`.
    pub id: String,
    /// The function's name.
    pub name: String,
    /// The arguments as JSON text (OpenAI sends them as a string).
    pub arguments: String,
}

impl ToolCall {
    /// The OpenAI form: `{"id", "type": "function", "function": {"name", "arguments"}}`.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        })
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// The text (`None` for an assistant message that only calls tools).
    pub content: Option<String>,
    /// Calls made by an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the id of the call it answers.
    pub tool_call_id: Option<String>,
    /// For a tool result: the tool's name.
    pub name: Option<String>,
    /// An assistant's thinking before its answer (`reasoning_content`, as the
    /// OpenAI-compatible servers return it). Never part of a prompt: templates of reasoning
    /// models drop the thinking of earlier turns.
    pub reasoning_content: Option<String>,
}

impl Message {
    /// A message with text only.
    pub fn new(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
            reasoning_content: None,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Message {
        Message::new(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Message {
        Message::new(Role::User, content)
    }

    /// An assistant message with text.
    pub fn assistant(content: impl Into<String>) -> Message {
        Message::new(Role::Assistant, content)
    }

    /// The message with the thinking that came before it (`None`: there was none).
    pub fn with_reasoning(self, reasoning: Option<String>) -> Message {
        Message {
            reasoning_content: reasoning,
            ..self
        }
    }

    /// A tool result answering the call `tool_call_id`.
    pub fn tool(
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Message {
        Message {
            tool_call_id: Some(tool_call_id.into()),
            name: Some(name.into()),
            ..Message::new(Role::Tool, content)
        }
    }

    /// Reads one OpenAI message. `content` may be a string, `null`, or an array of parts
    /// (`{"type": "text", "text": …}`), whose texts are joined; `arguments` may be a
    /// string (OpenAI) or an object.
    ///
    /// # Errors
    /// [`BridgeError::Messages`] naming the field that is wrong.
    pub fn from_json(value: &Value) -> Result<Message, BridgeError> {
        let bad = |what: &str| BridgeError::Messages(format!("{what} in message {value}"));
        let object = value.as_object().ok_or_else(|| bad("not an object"))?;
        let role_name = object
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no \"role\" string"))?;
        let role = Role::parse(role_name).ok_or_else(|| {
            bad(&format!(
                "unknown role `{role_name}` (use system, user, assistant or tool)"
            ))
        })?;
        let content = match object.get("content") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(parts)) => {
                let mut text = String::new();
                for part in parts {
                    match part.get("text").and_then(Value::as_str) {
                        Some(t) => text.push_str(t),
                        None => return Err(bad("a content part without \"text\"")),
                    }
                }
                Some(text)
            }
            Some(_) => return Err(bad("\"content\" that is not a string, null or array")),
        };
        let mut tool_calls = Vec::new();
        if let Some(calls) = object.get("tool_calls").filter(|c| !c.is_null()) {
            let calls = calls
                .as_array()
                .ok_or_else(|| bad("\"tool_calls\" that is not an array"))?;
            for (i, call) in calls.iter().enumerate() {
                let function = call.get("function").unwrap_or(call);
                let name = function
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad(&format!("tool call {i} without a function name")))?;
                let arguments = match function.get("arguments") {
                    None | Some(Value::Null) => "{}".to_string(),
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                };
                let id = call
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("call_{i}"), str::to_string);
                tool_calls.push(ToolCall {
                    id,
                    name: name.to_string(),
                    arguments,
                });
            }
        }
        let text_field = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_string);
        if content.is_none() && tool_calls.is_empty() {
            return Err(bad("no \"content\" and no \"tool_calls\""));
        }
        Ok(Message {
            role,
            content,
            tool_calls,
            tool_call_id: text_field("tool_call_id"),
            name: text_field("name"),
            reasoning_content: text_field("reasoning_content"),
        })
    }

    /// The OpenAI form of the message.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("role".into(), json!(self.role.as_str()));
        object.insert(
            "content".into(),
            self.content.as_ref().map_or(Value::Null, |c| json!(c)),
        );
        if !self.tool_calls.is_empty() {
            object.insert(
                "tool_calls".into(),
                Value::Array(self.tool_calls.iter().map(ToolCall::to_json).collect()),
            );
        }
        if let Some(id) = &self.tool_call_id {
            object.insert("tool_call_id".into(), json!(id));
        }
        if let Some(name) = &self.name {
            object.insert("name".into(), json!(name));
        }
        if let Some(reasoning) = &self.reasoning_content {
            object.insert("reasoning_content".into(), json!(reasoning));
        }
        Value::Object(object)
    }

    /// The role the chat template gets for this message in `syntax`'s family. A tool
    /// result is an `ipython` turn for Llama 3 (its templates' tool role) and a `user`
    /// turn for Mistral: llama.cpp's Mistral templates know no tool role and would close
    /// it like an answer, so the model would not answer after it.
    pub fn template_role(&self, syntax: Syntax) -> &'static str {
        match (self.role, syntax) {
            (Role::Tool, Syntax::Llama3) => "ipython",
            (Role::Tool, Syntax::Mistral) => "user",
            (role, _) => role.as_str(),
        }
    }

    /// The text the chat template gets for this message in `syntax`'s family: the
    /// content, then the tool calls as the model writes them ([`write_calls`]); a tool
    /// result wrapped as that family reads results.
    pub fn template_content(&self, syntax: Syntax) -> String {
        let content = self.content.clone().unwrap_or_default();
        match self.role {
            Role::Tool => match syntax {
                Syntax::Llama3 => content,
                Syntax::Mistral => format!(
                    "[TOOL_RESULTS]{{\"content\": {}, \"call_id\": {}}}[/TOOL_RESULTS]",
                    Value::String(content),
                    Value::String(mistral_id(self.tool_call_id.as_deref().unwrap_or_default()))
                ),
                Syntax::Hermes | Syntax::Json => {
                    format!("<tool_response>\n{content}\n</tool_response>")
                }
            },
            _ if self.tool_calls.is_empty() => content,
            _ => {
                let calls: Vec<tools::ToolCall> = self
                    .tool_calls
                    .iter()
                    .map(|call| tools::ToolCall {
                        name: call.name.clone(),
                        // Arguments that are not JSON are written as a JSON string.
                        arguments: serde_json::from_str(&call.arguments)
                            .unwrap_or_else(|_| Value::String(call.arguments.clone())),
                        id: Some(call.id.clone()),
                    })
                    .collect();
                let mut text = content;
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&write_calls(syntax, &calls));
                text
            }
        }
    }
}

/// Reads an OpenAI messages array, or an object with a `messages` array (a whole
/// request).
///
/// # Errors
/// [`BridgeError::Messages`] for anything else, or a bad message.
pub fn messages_from_json(value: &Value) -> Result<Vec<Message>, BridgeError> {
    let array = value
        .as_array()
        .or_else(|| value.get("messages").and_then(Value::as_array))
        .ok_or_else(|| {
            BridgeError::Messages(
                "expected an array of messages, or an object with a \"messages\" array".into(),
            )
        })?;
    if array.is_empty() {
        return Err(BridgeError::Messages("the message list is empty".into()));
    }
    array.iter().map(Message::from_json).collect()
}

/// The conversation for a single prompt: an optional system message, then the user's.
pub fn conversation(system: Option<&str>, prompt: &str) -> Vec<Message> {
    system
        .map(Message::system)
        .into_iter()
        .chain(std::iter::once(Message::user(prompt)))
        .collect()
}

/// The system-prompt text that presents tools to a Hermes / Qwen 2.5 / SmolLM2 model:
/// the tool definitions, one JSON object per line, in a `<tools>` block, and how to
/// answer with `<tool_call>` tags. `tools` is an array of tool definitions (any shape the
/// caller chooses to show, typically OpenAI's `{"type": "function", "function": …}`); a
/// single definition is taken as a list of one.
pub fn tools_system_prompt(tools: &Value) -> String {
    let list: Vec<&Value> = match tools {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    let mut text = String::from(
        "# Tools\n\nYou may call one or more functions to help with the user's request. \
         The functions you can call are described, one JSON object each, inside <tools></tools>:\n<tools>\n",
    );
    for tool in list {
        text.push_str(&tool.to_string());
        text.push('\n');
    }
    text.push_str(
        "</tools>\n\nTo call a function, answer with a JSON object holding its name and its \
         arguments inside <tool_call></tool_call> tags, one block per call:\n<tool_call>\n\
         {\"name\": <function-name>, \"arguments\": <arguments-object>}\n</tool_call>",
    );
    text
}

/// Tools as OpenAI function definitions (`{"type": "function", "function": {name,
/// description, parameters}}`), the form [`tools_system_prompt`] shows them in; with
/// `compact`, in [`crate::compact_tools`]' shorter rendering.
pub fn tool_definitions(tools: &[ToolSpec], compact: bool) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|tool| {
                let mut function = json!({"name": tool.name});
                if let Some(description) = &tool.description {
                    function["description"] = json!(description);
                }
                function["parameters"] = tool.parameters.clone();
                let definition = json!({"type": "function", "function": function});
                if compact {
                    compact_tools::compact(&definition)
                } else {
                    definition
                }
            })
            .collect(),
    )
}

/// `messages` with the tools block ([`tools_system_prompt`]) added to the system prompt.
pub fn with_tools(messages: &[Message], tools: &Value) -> Vec<Message> {
    with_system_text(messages, &tools_system_prompt(tools))
}

/// `messages` with `text` added to the system prompt: appended to the first system
/// message (after a blank line), or put in a new one at the start.
pub fn with_system_text(messages: &[Message], text: &str) -> Vec<Message> {
    let mut out = messages.to_vec();
    match out.iter_mut().find(|m| m.role == Role::System) {
        Some(system) => {
            let content = system.content.get_or_insert_with(String::new);
            if !content.is_empty() {
                content.push_str("\n\n");
            }
            content.push_str(text);
        }
        None => out.insert(0, Message::system(text)),
    }
    out
}

/// The call syntax a chat template was trained on: Mistral's `[TOOL_CALLS]`, Llama 3's
/// header tokens (JSON calls with `parameters`), else Hermes `<tool_call>` tags (Hermes,
/// Qwen 2.5, SmolLM2 and other ChatML models).
pub fn syntax_for(template: Option<&str>) -> Syntax {
    match template {
        Some(t) if t.contains("[TOOL_CALLS]") => Syntax::Mistral,
        Some(t) if t.contains("<|start_header_id|>") => Syntax::Llama3,
        _ => Syntax::Hermes,
    }
}

/// The prompt for `messages` under the model's chat template (the one given over the
/// model's own, [`EngineOptions::chat_template`](crate::EngineOptions), else the model's),
/// ending where the assistant's answer begins, with earlier tool calls in the template's
/// call syntax ([`syntax_for`]). A model without a template gets ChatML. The local and
/// the remote engines' prompts are made here alike, by llama.cpp's formatter
/// ([`chat_template::apply`]).
///
/// # Errors
/// [`BridgeError::Messages`] for text with NUL characters, [`BridgeError::ChatTemplate`]
/// when llama.cpp cannot apply the template.
pub fn render_prompt(
    model: &(impl ChatModel + ?Sized),
    messages: &[Message],
) -> Result<String, BridgeError> {
    render_prompt_with(model, None, None, messages)
}

/// [`render_prompt`] under `template` (a llama.cpp template name such as `llama3` or
/// `mistral-v7`, or a template's text) instead of the model's, and with earlier calls in
/// `syntax` instead of the template's (a `--syntax` chosen over the template's).
///
/// # Errors
/// As [`render_prompt`].
pub fn render_prompt_with(
    model: &(impl ChatModel + ?Sized),
    template: Option<&LlamaChatTemplate>,
    syntax: Option<Syntax>,
    messages: &[Message],
) -> Result<String, BridgeError> {
    let own;
    let template = match template {
        Some(template) => template,
        None => {
            own = LlamaChatTemplate::new(model.chat_template().as_deref().unwrap_or("chatml"))
                .map_err(|e| BridgeError::ChatTemplate(format!("the chat template: {e}")))?;
            &own
        }
    };
    let syntax = syntax.unwrap_or_else(|| syntax_for(template.to_string().ok().as_deref()));
    let turns: Vec<(&'static str, String)> = messages
        .iter()
        .map(|m| (m.template_role(syntax), m.template_content(syntax)))
        .collect();
    let chat: Vec<(&str, &str)> = turns.iter().map(|(r, c)| (*r, c.as_str())).collect();
    chat_template::apply(template, &chat, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_picks_the_syntax() {
        assert_eq!(syntax_for(Some("{{ '[TOOL_CALLS]' }}")), Syntax::Mistral);
        assert_eq!(
            syntax_for(Some("<|start_header_id|>user<|end_header_id|>")),
            Syntax::Llama3
        );
        assert_eq!(syntax_for(Some("<|im_start|>user")), Syntax::Hermes);
        assert_eq!(syntax_for(None), Syntax::Hermes);
    }

    fn call_turn() -> Message {
        let mut turn = Message::assistant("Checking.");
        turn.tool_calls.push(ToolCall {
            id: "call_abcdefghijklmnopqrstuvwx".into(),
            name: "get_weather".into(),
            arguments: r#"{"city": "Chengdu"}"#.into(),
        });
        turn
    }

    #[test]
    fn earlier_calls_are_written_in_the_family_syntax() {
        let turn = call_turn();
        assert_eq!(
            turn.template_content(Syntax::Hermes),
            "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Chengdu\"}}\n</tool_call>"
        );
        assert_eq!(
            turn.template_content(Syntax::Mistral),
            "Checking.\n[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Chengdu\"}, \"id\": \"pqrstuvwx\"}]"
        );
        assert_eq!(
            turn.template_content(Syntax::Llama3),
            "Checking.\n{\"name\": \"get_weather\", \"parameters\": {\"city\":\"Chengdu\"}}"
        );
        assert_eq!(turn.template_role(Syntax::Mistral), "assistant");
    }

    #[test]
    fn tool_results_are_written_as_the_family_reads_them() {
        let result = Message::tool(
            "call_abcdefghijklmnopqrstuvwx",
            "get_weather",
            "21 °C, \"sunny\"",
        );
        assert_eq!(
            result.template_content(Syntax::Hermes),
            "<tool_response>\n21 °C, \"sunny\"\n</tool_response>"
        );
        assert_eq!(result.template_role(Syntax::Hermes), "tool");
        assert_eq!(
            result.template_content(Syntax::Mistral),
            "[TOOL_RESULTS]{\"content\": \"21 °C, \\\"sunny\\\"\", \"call_id\": \"pqrstuvwx\"}[/TOOL_RESULTS]"
        );
        assert_eq!(result.template_role(Syntax::Mistral), "user");
        assert_eq!(result.template_content(Syntax::Llama3), "21 °C, \"sunny\"");
        assert_eq!(result.template_role(Syntax::Llama3), "ipython");
    }
}
