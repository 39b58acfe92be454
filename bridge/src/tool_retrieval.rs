//! Tool retrieval: the tools of a long list ranked by how well they match the conversation,
//! so that a small model is shown (and its grammar allows) only the few that matter.
//!
//! Each tool is a BM25 document (the `bm25` crate: English stemming and stop words) made of
//! its name split into words (`get_weather`, `getWeather` → `get weather`), its
//! description, and its parameters' names and descriptions. Ranking is deterministic: equal
//! scores keep the list's order.
//!
//! [`shortlist`] is the policy: which tools one conversation is shown ([`Retrieval`]).

use bm25::{Embedder, EmbedderBuilder, Language, Scorer};
use gbnfc_compiler::tools::{ToolChoice, ToolSpec};
use serde_json::Value;

use crate::chat::{self, Message, Role};
use crate::chat_model::ChatModel;
use crate::BridgeError;

/// Tools shown when retrieval narrows the list and no number is given. Five keep the
/// five-server list (38 tools, about 5,300 tokens) near 700 tokens of prompt.
pub const DEFAULT_TOP_K: usize = 5;

/// [`Retrieval::Auto`] narrows the list when showing it whole would take more than this
/// share of the context, in percent: a quarter leaves the conversation and the answer
/// the rest.
pub const AUTO_CONTEXT_PERCENT: usize = 25;

/// Whether the model is shown every tool or the best matches for the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Retrieval {
    /// The best [`DEFAULT_TOP_K`] when the whole list would take more than
    /// [`AUTO_CONTEXT_PERCENT`] of the context; every tool otherwise.
    #[default]
    Auto,
    /// Always the best K (every tool when the list holds no more than K).
    Top(usize),
    /// Every tool.
    All,
}

/// The tools one conversation is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortlist {
    /// Their names, in the list's order.
    pub names: Vec<String>,
    /// How many tools the list holds.
    pub of: usize,
}

/// The tools of `tools` that `messages` are shown under `retrieval`, or `None` when they
/// are shown every tool (retrieval off, a list no longer than K, `auto` with a list that
/// fits — in the `compact` rendering when that is the one shown —, or `choice` `none`,
/// which shows none). A tool `choice` names is always in.
pub fn shortlist(
    model: &(impl ChatModel + ?Sized),
    tools: &[ToolSpec],
    choice: &ToolChoice,
    messages: &[Message],
    retrieval: Retrieval,
    compact: bool,
) -> Result<Option<Shortlist>, BridgeError> {
    let k = match retrieval {
        Retrieval::All => return Ok(None),
        Retrieval::Top(k) => k.max(1),
        Retrieval::Auto => {
            let prompt = chat::tools_system_prompt(&chat::tool_definitions(tools, compact));
            let tokens = model.count_tokens(&prompt)?;
            let context = model.ctx() as usize;
            if tokens * 100 <= context * AUTO_CONTEXT_PERCENT {
                return Ok(None);
            }
            DEFAULT_TOP_K
        }
    };
    let always: Vec<&str> = match choice {
        ToolChoice::None => return Ok(None),
        ToolChoice::Named(name) => vec![name.as_str()],
        ToolChoice::Auto | ToolChoice::Required => Vec::new(),
    };
    if tools.len() <= k {
        return Ok(None);
    }
    let chosen = ToolIndex::new(tools).top(&query(messages), k, &always);
    Ok(Some(Shortlist {
        names: chosen.into_iter().map(|i| tools[i].name.clone()).collect(),
        of: tools.len(),
    }))
}

/// What tools are ranked against: the conversation's user turns and tool results, in
/// order. System prompts say how to behave, not what is wanted; the assistant's own
/// turns echo the tools it was shown.
pub fn query(messages: &[Message]) -> String {
    messages
        .iter()
        .filter(|m| matches!(m.role, Role::User | Role::Tool))
        .filter_map(|m| m.content.as_deref())
        .collect::<Vec<_>>()
        .join("\n")
}

/// BM25's `b`: how much a long tool document is discounted. Tools are long mostly for
/// their parameters' schemas, not for being about more, so less than the usual 0.75. On
/// the five-server requests (`bridge/tests/retrieval.rs`) 0.25 shows the right tool
/// among five for 29 of 40, 0.75 for 27.
const LENGTH_NORMALISATION: f32 = 0.25;

/// A tool list made ready for ranking.
pub struct ToolIndex {
    names: Vec<String>,
    embedder: Embedder,
    scorer: Scorer<usize>,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("names", &self.names)
            .finish_non_exhaustive()
    }
}

impl ToolIndex {
    /// Indexes `tools`.
    pub fn new(tools: &[ToolSpec]) -> ToolIndex {
        let texts: Vec<String> = tools.iter().map(tool_text).collect();
        let corpus: Vec<&str> = texts.iter().map(String::as_str).collect();
        let embedder = EmbedderBuilder::with_fit_to_corpus(Language::English, &corpus)
            .b(LENGTH_NORMALISATION)
            .build();
        let mut scorer = Scorer::new();
        for (i, text) in texts.iter().enumerate() {
            scorer.upsert(&i, embedder.embed(text));
        }
        ToolIndex {
            names: tools.iter().map(|t| t.name.clone()).collect(),
            embedder,
            scorer,
        }
    }

    /// Every tool's index in the list, the best match for `query` first; equal scores
    /// (tools that share no word with the query among them) in the list's order.
    pub fn rank(&self, query: &str) -> Vec<usize> {
        let query = self.embedder.embed(&with_implied_words(query));
        let mut scored: Vec<(usize, f32)> = (0..self.names.len())
            .map(|i| (i, self.scorer.score(&i, &query).unwrap_or(0.0)))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.into_iter().map(|(i, _)| i).collect()
    }

    /// The `k` tools that best match `query`, with every tool named in `always` among them
    /// whatever its rank (so more than `k` when `always` names more), as indices into the
    /// list, in the list's order.
    pub fn top(&self, query: &str, k: usize, always: &[&str]) -> Vec<usize> {
        let mut chosen: Vec<usize> = (0..self.names.len())
            .filter(|&i| always.contains(&self.names[i].as_str()))
            .collect();
        for i in self.rank(query) {
            if chosen.len() >= k.max(1) {
                break;
            }
            if !chosen.contains(&i) {
                chosen.push(i);
            }
        }
        chosen.sort_unstable();
        chosen
    }
}

/// `query` with the words its values imply by their shape, as tool lists name such
/// values: a URL implies `url`, a file path `file path`, a clock time `time`. Requests
/// hold the values themselves ("what does https://… say?"), tools name their kind.
fn with_implied_words(query: &str) -> String {
    let mut implied: Vec<&str> = Vec::new();
    for word in query.split_whitespace() {
        let word = word
            .trim_matches(|c: char| matches!(c, '`' | '\'' | '"' | '(' | ')' | ',' | '?' | '!'));
        let words: &[&str] = if word.contains("://") {
            &["url"]
        } else if word.starts_with('/')
            || word.starts_with("~/")
            || word.starts_with("./")
            || has_file_extension(word)
        {
            &["file", "path"]
        } else if is_clock_time(word) {
            &["time"]
        } else {
            &[]
        };
        for w in words {
            if !implied.contains(w) {
                implied.push(w);
            }
        }
    }
    if implied.is_empty() {
        return query.to_string();
    }
    format!("{query}\n{}", implied.join(" "))
}

/// `notes.txt`, `main.rs`, `report.pdf.`: a name of two characters or more (`e.g.` is
/// not a file), a dot, and an extension of one to four letters or digits, not all digits
/// (`3.14` is a number).
fn has_file_extension(word: &str) -> bool {
    let word = word.trim_end_matches(['.', ';', ':']);
    let Some((name, extension)) = word.rsplit_once('.') else {
        return false;
    };
    name.chars().count() >= 2
        && (1..=4).contains(&extension.len())
        && extension.bytes().all(|b| b.is_ascii_alphanumeric())
        && !extension.bytes().all(|b| b.is_ascii_digit())
}

/// `9:30`, `15:00`, `18:00.`: hours and minutes.
fn is_clock_time(word: &str) -> bool {
    let word = word.trim_end_matches(['.', ';']);
    let Some((hours, minutes)) = word.split_once(':') else {
        return false;
    };
    (1..=2).contains(&hours.len())
        && minutes.len() == 2
        && hours
            .bytes()
            .chain(minutes.bytes())
            .all(|b| b.is_ascii_digit())
}

/// The words a tool is found by: its name split into words, its description, and its
/// parameters' names and descriptions (nested objects' too).
fn tool_text(tool: &ToolSpec) -> String {
    let mut words = vec![split_name(&tool.name)];
    words.extend(tool.description.clone());
    parameter_words(&tool.parameters, &mut words);
    words.join("\n")
}

fn parameter_words(schema: &Value, words: &mut Vec<String>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        words.push(split_name(name));
        if let Some(description) = property.get("description").and_then(Value::as_str) {
            words.push(description.to_string());
        }
        parameter_words(property, words);
        if let Some(items) = property.get("items") {
            parameter_words(items, words);
        }
    }
}

/// `get_weather`, `get-weather`, `getWeather`, `git.log` → words apart.
fn split_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            out.push(' ');
        } else {
            if c.is_uppercase() && previous.is_some_and(char::is_lowercase) {
                out.push(' ');
            }
            out.push(c);
        }
        previous = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use gbnfc_compiler::tools::read_tools;
    use serde_json::json;

    fn tools() -> Vec<ToolSpec> {
        let list = json!({"tools": [
            {"name": "read_file", "description": "Read the complete contents of a file.",
             "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
            {"name": "git_log", "description": "Show the commit logs.",
             "inputSchema": {"type": "object", "properties": {"repo_path": {"type": "string"},
                 "max_count": {"type": "integer", "description": "How many commits"}}}},
            {"name": "getCurrentTime", "description": "Get the current time in a time zone.",
             "inputSchema": {"type": "object", "properties": {"timezone": {"type": "string",
                 "description": "IANA time zone name"}}}},
            {"name": "fetch", "description": "Fetch a URL from the internet.",
             "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}},
            {"name": "create_entities", "description": "Create entities in the knowledge graph.",
             "inputSchema": {"type": "object", "properties": {"entities": {"type": "array",
                 "items": {"type": "object", "properties": {"observations": {"type": "array",
                 "description": "Facts about the entity"}}}}}}}
        ]});
        read_tools(&list, None).unwrap().tools
    }

    #[test]
    fn the_matching_tool_ranks_first() {
        let index = ToolIndex::new(&tools());
        assert_eq!(index.rank("show me the contents of notes.txt file")[0], 0);
        assert_eq!(index.rank("what are the last 3 commits?")[0], 1);
        assert_eq!(index.rank("What time is it in Tokyo's time zone?")[0], 2);
        assert_eq!(
            index.rank("download https://example.com from the internet")[0],
            3
        );
        assert_eq!(index.rank("remember this fact about Ana")[0], 4);
    }

    #[test]
    fn ranking_is_deterministic_and_ties_keep_the_list_order() {
        let index = ToolIndex::new(&tools());
        let first = index.rank("commit logs of the file");
        for _ in 0..5 {
            assert_eq!(
                ToolIndex::new(&tools()).rank("commit logs of the file"),
                first
            );
        }
        assert_eq!(index.rank("zzz qqq"), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_named_tool_is_never_dropped() {
        let index = ToolIndex::new(&tools());
        assert_eq!(index.top("what are the last commits?", 1, &[]), vec![1]);
        assert_eq!(
            index.top("what are the last commits?", 1, &["fetch"]),
            vec![3]
        );
        assert_eq!(
            index.top("what are the last commits?", 2, &["fetch"]),
            vec![1, 3]
        );
        assert_eq!(index.top("anything", 9, &[]).len(), 5);
        assert_eq!(index.top("anything", 0, &[]).len(), 1, "at least one tool");
    }

    #[test]
    fn values_imply_the_words_tools_name_them_by() {
        let implied = |q: &str| with_implied_words(q)[q.len()..].trim().to_string();
        assert_eq!(implied("What does https://example.com/a say?"), "url");
        assert_eq!(
            implied("What's in notes.txt under /srv/project?"),
            "file path"
        );
        assert_eq!(implied("Open ~/todo and ./x"), "file path");
        assert_eq!(implied("At 9:30, or 18:00."), "time");
        assert_eq!(implied("Pi is 3.14 and the score 2:1"), "");
        assert_eq!(implied("e.g. this"), "");
        assert!(has_file_extension("report.pdf."));
        assert!(!has_file_extension("v1.2"));
        assert!(!has_file_extension(".bashrc"));
    }

    #[test]
    fn the_query_is_the_user_turns_and_tool_results() {
        let messages = [
            Message::system("You are terse."),
            Message::user("Where does Ada live?"),
            Message::assistant("Let me look."),
            Message::tool("call_1", "find_city", "Lyon"),
        ];
        assert_eq!(query(&messages), "Where does Ada live?\nLyon");
    }

    #[test]
    fn names_split_into_words() {
        assert_eq!(split_name("get_weather"), "get weather");
        assert_eq!(split_name("getCurrentTime"), "get Current Time");
        assert_eq!(split_name("git.log-v2"), "git log v2");
        assert_eq!(split_name("HTTPGet"), "HTTPGet");
    }
}
