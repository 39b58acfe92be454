//! Tool retrieval: the tools of a long list ranked by how well they match the conversation,
//! so that a small model is shown (and its grammar allows) only the few that matter.
//!
//! Each tool is a BM25 document (the `bm25` crate: English stemming and stop words) made of
//! its name split into words (`get_weather`, `getWeather` → `get weather`), its
//! description, and its parameters' names and descriptions. Ranking is deterministic: equal
//! scores keep the list's order.

use bm25::{Embedder, EmbedderBuilder, Language, Scorer};
use gbnfc_compiler::tools::ToolSpec;
use serde_json::Value;

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
        let embedder = EmbedderBuilder::with_fit_to_corpus(Language::English, &corpus).build();
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
        let query = self.embedder.embed(query);
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
    fn names_split_into_words() {
        assert_eq!(split_name("get_weather"), "get weather");
        assert_eq!(split_name("getCurrentTime"), "get Current Time");
        assert_eq!(split_name("git.log-v2"), "git log v2");
        assert_eq!(split_name("HTTPGet"), "HTTPGet");
    }
}
