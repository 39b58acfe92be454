//! Why a tool list could not be compiled: each error says where (a JSON pointer into the
//! input), which tool (by name, or by place when it has no usable name), and what to do.

use thiserror::Error;

/// A JSON pointer for messages: the root is `/` rather than the empty string.
fn show(pointer: &str) -> &str {
    if pointer.is_empty() {
        "/"
    } else {
        pointer
    }
}

/// Where a setting came from: a pointer into the input, or the caller's options.
fn origin(pointer: &Option<String>) -> String {
    match pointer {
        Some(p) => format!("{}: ", show(p)),
        None => String::new(),
    }
}

/// Why a tool list could not be compiled.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ToolsError {
    /// The input is none of the tool-list shapes gbnfc reads.
    #[error("{}: {message}", show(pointer))]
    NotToolList {
        /// Where.
        pointer: String,
        /// What was found and what is expected.
        message: String,
    },
    /// The tool list has no tool.
    #[error(
        "{}: the tool list is empty: there is nothing to call; add a tool, or ask for no tool grammar (tool choice `none`)",
        show(pointer)
    )]
    Empty {
        /// Where the list is.
        pointer: String,
    },
    /// Two tools share a name.
    #[error(
        "{}: tool `{name}` is listed twice (first at {first}): a call names its tool, so names must be unique; rename or remove one",
        show(pointer)
    )]
    DuplicateName {
        /// Where the second tool is.
        pointer: String,
        /// The name.
        name: String,
        /// Where the first tool with that name is.
        first: String,
    },
    /// A tool whose name is missing, not a string, or empty.
    #[error(
        "{}: the tool at {tool} has {found}: a tool needs a non-empty string `name`",
        show(pointer)
    )]
    BadName {
        /// Where the name is (or should be).
        pointer: String,
        /// The tool's pointer (it has no usable name).
        tool: String,
        /// What was found: ``no `name` ``, `` `3` as its name``, …
        found: String,
    },
    /// A tool without an argument schema.
    #[error("{}: tool `{tool}` has no `{key}`: {help}", show(pointer))]
    MissingParameters {
        /// The tool's pointer.
        pointer: String,
        /// The tool's name.
        tool: String,
        /// The key expected (`parameters`, `inputSchema`, `input_schema`).
        key: String,
        /// What to do.
        help: String,
    },
    /// An argument schema that does not describe a JSON object.
    #[error(
        "{}: tool `{tool}`: the argument schema is not an object schema: {message}",
        show(pointer)
    )]
    NotObjectSchema {
        /// Where the schema (or its `type`) is.
        pointer: String,
        /// The tool's name.
        tool: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// A tool that is not a function (a built-in or server tool of some vendor).
    #[error("{}: tool `{tool}`: {message}", show(pointer))]
    UnsupportedTool {
        /// The tool's pointer.
        pointer: String,
        /// The tool's name (or its pointer when it has none).
        tool: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// The argument schema of a tool does not compile.
    #[error("{}: tool `{tool}`: {message}", show(pointer))]
    Schema {
        /// Where in the input (the tool's schema pointer and the pointer inside it).
        pointer: String,
        /// The tool's name.
        tool: String,
        /// The schema compiler's message.
        message: String,
    },
    /// The `response_format` beside the tools does not compile.
    #[error("{}: the response_format does not compile: {message}", show(pointer))]
    ResponseFormat {
        /// Where in the input.
        pointer: String,
        /// The schema compiler's message.
        message: String,
    },
    /// A JSON-RPC response that carries an error instead of a `tools/list` result.
    #[error(
        "{}: the server answered with an error, not a tool list: {message}",
        show(pointer)
    )]
    JsonRpcError {
        /// Where the error is.
        pointer: String,
        /// The server's error.
        message: String,
    },
    /// An unknown call syntax name.
    #[error("unknown tool-call syntax `{0}`: use json, hermes, llama3 or mistral")]
    UnknownSyntax(String),
    /// An unknown input format name.
    #[error("unknown tool-list format `{0}`: use openai, functions, mcp or anthropic")]
    UnknownInputFormat(String),
    /// A tool choice that is none of the known ones.
    #[error(
        "{}unknown tool choice {found}: use \"auto\", \"required\", \"none\" or a tool name (OpenAI: {{\"type\": \"function\", \"function\": {{\"name\": …}}}})",
        origin(pointer)
    )]
    UnknownChoice {
        /// Where, when it came from the input (`None`: from the options).
        pointer: Option<String>,
        /// What was found.
        found: String,
    },
    /// A forced tool that is not in the list.
    #[error(
        "{}the forced tool `{name}` is not in the tool list (tools: {known}); name one of them, or choose auto, required or none",
        origin(pointer)
    )]
    UnknownTool {
        /// Where, when it came from the input (`None`: from the options).
        pointer: Option<String>,
        /// The name asked for.
        name: String,
        /// The tools' names, comma-separated.
        known: String,
    },
    /// An option out of range (`max_calls` 0, …).
    #[error("{0}")]
    BadOption(String),
    /// The combined grammar would break one of llama.cpp's limits.
    #[error("the combined grammar would break llama.cpp's limits: {0}; use fewer tools or smaller schemas")]
    TooLarge(String),
}

impl ToolsError {
    /// The JSON pointer into the input the error is about, if any.
    pub fn pointer(&self) -> Option<&str> {
        match self {
            ToolsError::NotToolList { pointer, .. }
            | ToolsError::Empty { pointer }
            | ToolsError::DuplicateName { pointer, .. }
            | ToolsError::BadName { pointer, .. }
            | ToolsError::MissingParameters { pointer, .. }
            | ToolsError::NotObjectSchema { pointer, .. }
            | ToolsError::UnsupportedTool { pointer, .. }
            | ToolsError::Schema { pointer, .. }
            | ToolsError::ResponseFormat { pointer, .. }
            | ToolsError::JsonRpcError { pointer, .. } => Some(pointer),
            ToolsError::UnknownChoice { pointer, .. } | ToolsError::UnknownTool { pointer, .. } => {
                pointer.as_deref()
            }
            ToolsError::UnknownSyntax(_)
            | ToolsError::UnknownInputFormat(_)
            | ToolsError::BadOption(_)
            | ToolsError::TooLarge(_) => None,
        }
    }
}
