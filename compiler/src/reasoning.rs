//! Reasoning sections: a model thinks in free text between two markers (`<think>` and
//! `</think>`, or its template's own), then answers under the grammar. [`with_reasoning`]
//! puts the section before any grammar: the thinking is never constrained (only the
//! closing marker ends it) and the answer always is.

use std::fmt;

use crate::gbnf::{Expr, Grammar, Rule};
use crate::marker;
use crate::tools::names::Names;

/// The markers around a reasoning section, as a chat template writes them. Neither is
/// empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReasoningMarkers {
    open: String,
    close: String,
}

/// The markers current chat templates write around reasoning, in the order
/// [`ReasoningMarkers::in_template`] looks for them: Qwen3, QwQ and the DeepSeek-R1
/// distills; Magistral; Command A Reasoning; Seed-OSS.
pub const KNOWN_MARKERS: [(&str, &str); 4] = [
    ("<think>", "</think>"),
    ("[THINK]", "[/THINK]"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<seed:think>", "</seed:think>"),
];

/// Why markers given as text could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkersError(String);

impl fmt::Display for MarkersError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MarkersError {}

impl ReasoningMarkers {
    /// The markers `open` and `close`.
    ///
    /// # Errors
    /// Either is empty, or they are the same text (the section could not be told closed).
    pub fn new(open: &str, close: &str) -> Result<ReasoningMarkers, MarkersError> {
        if open.is_empty() || close.is_empty() {
            return Err(MarkersError(format!(
                "reasoning markers {open:?} and {close:?}: neither may be empty; give both, as OPEN,CLOSE (for example <think>,</think>)"
            )));
        }
        if open == close {
            return Err(MarkersError(format!(
                "reasoning markers: the opening and closing marker are both {open:?}; give two different texts"
            )));
        }
        Ok(ReasoningMarkers {
            open: open.to_string(),
            close: close.to_string(),
        })
    }

    /// Markers written `OPEN,CLOSE` (as `--reasoning-markers` takes them): the text up to
    /// the first comma opens, the rest closes.
    ///
    /// # Errors
    /// No comma, or a marker that [`ReasoningMarkers::new`] refuses.
    ///
    /// ```
    /// use gbnfc_compiler::reasoning::ReasoningMarkers;
    /// let markers = ReasoningMarkers::parse("<think>,</think>").unwrap();
    /// assert_eq!((markers.open(), markers.close()), ("<think>", "</think>"));
    /// assert!(ReasoningMarkers::parse("<think>").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<ReasoningMarkers, MarkersError> {
        let Some((open, close)) = text.split_once(',') else {
            return Err(MarkersError(format!(
                "reasoning markers {text:?}: expected OPEN,CLOSE with a comma between them (for example <think>,</think>)"
            )));
        };
        ReasoningMarkers::new(open, close)
    }

    /// The markers a chat template writes: the first of [`KNOWN_MARKERS`] whose closing
    /// marker it holds; `None` when it holds none (a model that does not reason). The
    /// opening marker need not be there: the first DeepSeek-R1 distills write it
    /// themselves, and their template names only the closing one, to cut the thinking out
    /// of earlier turns.
    pub fn in_template(template: &str) -> Option<ReasoningMarkers> {
        KNOWN_MARKERS
            .iter()
            .find(|(_, close)| template.contains(close))
            .map(|&(open, close)| ReasoningMarkers {
                open: open.to_string(),
                close: close.to_string(),
            })
    }

    /// The opening marker.
    pub fn open(&self) -> &str {
        &self.open
    }

    /// The closing marker.
    pub fn close(&self) -> &str {
        &self.close
    }
}

/// The most spaces and newlines allowed between the closing marker and the answer
/// (templates write `</think>\n\n`).
pub const MAX_GAP: u32 = 3;

/// `answer` with a reasoning section before it: the opening marker (left out when the
/// prompt has written it already: `opened`), any text up to the first closing marker, the
/// closing marker, at most [`MAX_GAP`] spaces and newlines, then what `answer` accepts.
/// `answer`'s rules keep their names but `root`, which becomes `answer` (numbered if that
/// is taken); the section's rules are `reasoning-0`, `reasoning-1`, … likewise.
///
/// ```
/// use gbnfc_compiler::{gbnf, recognize::Recognizer};
/// use gbnfc_compiler::reasoning::{with_reasoning, ReasoningMarkers};
/// let answer = gbnf::parse("root ::= \"yes\" | \"no\"\n").unwrap();
/// let markers = ReasoningMarkers::new("<think>", "</think>").unwrap();
/// let grammar = with_reasoning(&answer, &markers, false);
/// let recognizer = Recognizer::new(&grammar).unwrap();
/// assert!(recognizer.recognize("<think>Maybe {\"a\": 1}?</think>\n\nyes").accepted);
/// assert!(!recognizer.recognize("<think>hm</think>\n\nmaybe").accepted);
/// ```
pub fn with_reasoning(answer: &Grammar, markers: &ReasoningMarkers, opened: bool) -> Grammar {
    let mut names = Names::new();
    for rule in &answer.rules {
        names.reserve(&rule.name);
    }
    let answer_name = names.fresh("answer");
    let states: Vec<String> = (0..markers.close.chars().count())
        .map(|i| names.fresh(&format!("reasoning-{i}")))
        .collect();
    let gap = Expr::class(false, [(' ', ' '), ('\n', '\n')]);
    let mut root = Vec::new();
    if !opened {
        root.push(Expr::literal(markers.open.as_str()));
    }
    root.push(Expr::rule(states[0].as_str()));
    root.push(Expr::repeat(gap, 0, Some(MAX_GAP)));
    root.push(Expr::rule(answer_name.as_str()));
    let mut rules = vec![Rule {
        name: "root".into(),
        body: Expr::seq(root),
        pos: Default::default(),
    }];
    rules.extend(marker::through(&markers.close, &states));
    let mut answer = answer.clone();
    answer.rename("root", &answer_name);
    rules.extend(answer.rules);
    Grammar { rules }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::Value;

    use super::*;
    use crate::gbnf;
    use crate::recognize::Recognizer;
    use crate::sample::{SampleOptions, Sampler};
    use crate::schema::{compile, Options};

    fn think() -> ReasoningMarkers {
        ReasoningMarkers::new("<think>", "</think>").unwrap()
    }

    fn recognizer(answer: &str, opened: bool) -> Recognizer {
        let grammar = with_reasoning(&gbnf::parse(answer).unwrap(), &think(), opened);
        assert!(gbnf::check(&grammar).is_empty(), "{grammar}");
        Recognizer::new(&grammar).unwrap()
    }

    #[test]
    fn the_reasoning_passes_text_the_answer_grammar_rejects() {
        let integer = compile(&serde_json::json!({"type": "integer"}), &Options::default())
            .unwrap()
            .grammar
            .to_string();
        let r = recognizer(&integer, false);
        let accepts = |text: &str| r.recognize(text).accepted;
        assert!(accepts(
            "<think>{\"not\": an integer} </thin> <think> <</think>\n\n42"
        ));
        assert!(accepts("<think></think>-7"));
        assert!(!accepts("<think>sure</think>\n\nforty-two"));
        assert!(!accepts("<think>a</think>b</think>42"), "closed twice");
        assert!(!accepts("<think>never closed 42"));
        assert!(!accepts("42"), "the section is required");
        assert!(!accepts("<think></think>\n\n\n\n42"), "more than MAX_GAP");
    }

    #[test]
    fn a_prompt_that_opened_the_section_leaves_the_opening_marker_out() {
        let r = recognizer("root ::= \"ok\"\n", true);
        assert!(r.recognize("Let me see.\n</think>\n\nok").accepted);
        assert!(!r.recognize("<think>x</think>ok<think>").accepted);
    }

    #[test]
    fn answer_rules_keep_working_under_new_names() {
        // A recursive root, and rules already called `answer` and `reasoning-0`.
        let r = recognizer(
            "root ::= \"[\" (root | answer)? \"]\"\nanswer ::= reasoning-0\nreasoning-0 ::= \"a\"\n",
            false,
        );
        assert!(r.recognize("<think>[</think>[[a]]").accepted);
        assert!(!r.recognize("<think></think>[[a]").accepted);
    }

    /// On every example schema: samples of the wrapped grammar close their section once,
    /// and what follows is accepted by the schema's own grammar.
    #[test]
    fn samples_close_the_section_and_answer_under_the_schema() {
        let examples =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/examples");
        let mut files: Vec<_> = std::fs::read_dir(examples)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".schema.json"))
            .collect();
        files.sort();
        assert!(!files.is_empty());
        for file in files {
            let schema: Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            let answer = compile(&schema, &Options::default()).unwrap().grammar;
            let grammar = with_reasoning(&answer, &think(), false);
            assert!(gbnf::check(&grammar).is_empty(), "{}", file.display());
            let answers = Recognizer::new(&answer).unwrap();
            let options = SampleOptions {
                max_len: 400,
                ..SampleOptions::default()
            };
            for text in Sampler::new(&grammar).unwrap().samples(3, 20, options) {
                let rest = text.strip_prefix("<think>").unwrap();
                let (_, after) = rest.split_once("</think>").unwrap();
                let reply = after.trim_start_matches([' ', '\n']);
                assert!(
                    answers.recognize(reply).accepted,
                    "{}: {text:?}",
                    file.display()
                );
            }
        }
    }

    #[test]
    fn markers_come_from_the_template_or_from_text() {
        let qwen3 =
            "{%- if enable_thinking %}<|im_start|>assistant\n<think>\n{%- endif %}…</think>";
        assert_eq!(ReasoningMarkers::in_template(qwen3), Some(think()));
        let magistral = "[SYSTEM_PROMPT]… [THINK]…[/THINK]";
        assert_eq!(
            ReasoningMarkers::in_template(magistral).unwrap().close(),
            "[/THINK]"
        );
        assert_eq!(
            ReasoningMarkers::in_template("<|im_start|>{{ content }}"),
            None
        );
        let r1_distill =
            "{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}";
        assert_eq!(ReasoningMarkers::in_template(r1_distill), Some(think()));
        assert_eq!(ReasoningMarkers::parse("<think>,</think>"), Ok(think()));
        assert!(ReasoningMarkers::parse("<think>")
            .unwrap_err()
            .to_string()
            .contains("OPEN,CLOSE"));
        assert!(ReasoningMarkers::parse(",</think>").is_err());
        assert!(ReasoningMarkers::parse("x,x").is_err());
    }
}
