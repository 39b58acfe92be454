//! Rule names from tool names.
//!
//! llama.cpp reads rule names made of `[a-zA-Z0-9-]` only, while tool names may hold
//! anything (`get_weather`, `files.read`, `天气`). [`sanitize`] maps a tool name into that
//! alphabet; [`Names`] hands out names that are unique in one grammar, resolving
//! collisions (`get_weather` and `get-weather` both sanitise to `get-weather`) by numbering
//! in the order of the requests, so the same input always gives the same names.

use std::collections::HashSet;

/// The longest prefix taken from a tool name (before numbering).
pub const MAX_PREFIX: usize = 40;

/// A tool name mapped to `[a-zA-Z0-9-]`: every other character becomes `-`, runs of `-`
/// collapse, `-` is trimmed from both ends, and the result is cut to [`MAX_PREFIX`]
/// characters; a name with no letter or digit becomes `tool`.
///
/// ```
/// use gbnfc_compiler::tools::names::sanitize;
/// assert_eq!(sanitize("get_weather"), "get-weather");
/// assert_eq!(sanitize("files.read/v2"), "files-read-v2");
/// assert_eq!(sanitize("天气"), "tool");
/// ```
pub fn sanitize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out = out.trim_end_matches('-').to_string();
    if out.len() > MAX_PREFIX {
        out.truncate(MAX_PREFIX);
        out = out.trim_end_matches('-').to_string();
    }
    if out.is_empty() {
        "tool".to_string()
    } else {
        out
    }
}

/// The names taken in one grammar.
#[derive(Debug, Clone, Default)]
pub struct Names {
    taken: HashSet<String>,
}

impl Names {
    /// No name taken yet.
    pub fn new() -> Self {
        Names::default()
    }

    /// Takes `name` as it is; `false` if it was taken already.
    pub fn reserve(&mut self, name: &str) -> bool {
        self.taken.insert(name.to_string())
    }

    /// Is `name` taken?
    pub fn is_taken(&self, name: &str) -> bool {
        self.taken.contains(name)
    }

    /// Takes `base` if it is free, else the first free `base-2`, `base-3`, …
    pub fn fresh(&mut self, base: &str) -> String {
        if self.reserve(base) {
            return base.to_string();
        }
        let mut n = 2u64;
        loop {
            let name = format!("{base}-{n}");
            if self.reserve(&name) {
                return name;
            }
            n += 1;
        }
    }
}

/// One rule-name prefix per tool, in order: the [`sanitize`]d name, numbered where two
/// tools would share one.
///
/// ```
/// use gbnfc_compiler::tools::names::rule_prefixes;
/// assert_eq!(
///     rule_prefixes(&["get_weather", "get-weather", "search"]),
///     ["get-weather", "get-weather-2", "search"]
/// );
/// ```
pub fn rule_prefixes(tool_names: &[&str]) -> Vec<String> {
    let mut names = Names::new();
    tool_names
        .iter()
        .map(|name| names.fresh(&sanitize(name)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitised_names_use_llama_cpp_alphabet() {
        for name in [
            "a_b",
            "--x--",
            "ü-ß",
            "a..b",
            "x".repeat(100).as_str(),
            "_",
            "",
        ] {
            let s = sanitize(name);
            assert!(!s.is_empty());
            assert!(s.len() <= MAX_PREFIX);
            assert!(s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
            assert!(!s.starts_with('-') && !s.ends_with('-') && !s.contains("--"));
        }
        assert_eq!(sanitize("--x--"), "x");
    }

    #[test]
    fn collisions_are_numbered_in_order() {
        assert_eq!(
            rule_prefixes(&["a", "a_", "a-2", "A"]),
            ["a", "a-2", "a-2-2", "A"]
        );
        let mut names = Names::new();
        assert!(names.reserve("root"));
        assert_eq!(names.fresh("root"), "root-2");
        assert!(names.is_taken("root-2"));
    }
}
