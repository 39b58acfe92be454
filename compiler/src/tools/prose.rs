//! The prose branch of `tool_choice: auto`: any non-empty text that never contains the
//! call trigger, so a reply is either prose or calls and never both half-way
//! (the rules of `marker::avoiding`).

use crate::gbnf::{Expr, Grammar, Rule};
use crate::marker;

use super::names::Names;

/// The rules of the prose branch, named through `names`; the first is the entry
/// (non-empty texts), the others its states.
pub(crate) fn prose_rules(trigger: &str, names: &mut Names) -> Vec<Rule> {
    let entry = names.fresh("prose");
    if trigger.is_empty() {
        // No text avoids the empty word; read as "no restriction": any non-empty text.
        let body = Expr::repeat(Expr::Any, 1, None);
        return vec![Rule {
            name: entry.into(),
            body,
            pos: Default::default(),
        }];
    }
    let states: Vec<String> = (0..trigger.chars().count())
        .map(|i| names.fresh(&format!("{entry}-{i}")))
        .collect();
    marker::avoiding(trigger, &entry, &states)
}

/// A grammar whose `root` accepts every non-empty text that does not contain `trigger`
/// (an empty trigger: every non-empty text).
///
/// ```
/// use gbnfc_compiler::{recognize::Recognizer, tools::prose_grammar};
/// let prose = Recognizer::new(&prose_grammar("<tool_call>")).unwrap();
/// assert!(prose.recognize("It is sunny in Chengdu <tool_cal").accepted);
/// assert!(!prose.recognize("Let me check. <tool_call>").accepted);
/// assert!(!prose.recognize("").accepted);
/// ```
pub fn prose_grammar(trigger: &str) -> Grammar {
    let mut names = Names::new();
    names.reserve("root");
    let rules = prose_rules(trigger, &mut names);
    let mut grammar = Grammar::default();
    if let Some(entry) = rules.first() {
        grammar.push("root", Expr::rule(entry.name.clone()));
    }
    grammar.rules.extend(rules);
    grammar
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::gbnf;
    use crate::recognize::Recognizer;

    /// Exactness is `marker`'s test; here, the grammars of every call syntax's
    /// trigger pass the lints and reject a text holding the trigger.
    #[test]
    fn every_trigger_gives_a_clean_grammar() {
        for trigger in ["<tool_call>", "[TOOL_CALLS]", "{\"name\": \""] {
            let grammar = prose_grammar(trigger);
            assert!(gbnf::check(&grammar).is_empty(), "{trigger}\n{grammar}");
            let recognizer = Recognizer::new(&grammar).unwrap();
            assert!(recognizer.recognize("Sunny, 21 °C.").accepted, "{trigger}");
            let with = format!("a{trigger}b");
            assert!(!recognizer.recognize(&with).accepted, "{trigger}");
        }
    }

    #[test]
    fn empty_trigger_accepts_any_non_empty_text() {
        let recognizer = Recognizer::new(&prose_grammar("")).unwrap();
        assert!(recognizer.recognize("a\0b").accepted);
        assert!(!recognizer.recognize("").accepted);
    }
}
