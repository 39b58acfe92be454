//! The prose branch of `tool_choice: auto`: any non-empty text that never contains the
//! call trigger, so a reply is either prose or calls and never both half-way.
//!
//! The rules are the states of the Knuth–Morris–Pratt automaton for the trigger: state
//! `i` means "the text so far ends with the first `i` characters of the trigger, and no
//! longer prefix"; reading the trigger's last character in its last state is the only
//! move left out. State 0 loops on a negated class (`[^<]*` for `<tool_call>`), the other
//! states are right-recursive with one arm per move, so llama.cpp's stacks stay flat and
//! the recognizer stays linear.

use crate::gbnf::{Expr, Grammar, Rule};

use super::names::Names;

/// The rules of the prose branch, named through `names`; the first is the entry
/// (non-empty texts), the others its states.
pub(crate) fn prose_rules(trigger: &str, names: &mut Names) -> Vec<Rule> {
    let t: Vec<char> = trigger.chars().collect();
    let entry = names.fresh("prose");
    if t.is_empty() {
        // No text avoids the empty word; read as "no restriction": any non-empty text.
        return vec![rule(entry, Expr::repeat(Expr::Any, 1, None))];
    }
    let n = t.len();
    // fail[i]: the longest proper border of t[..=i].
    let mut fail = vec![0usize; n];
    for i in 1..n {
        let mut k = fail[i - 1];
        while k > 0 && t[i] != t[k] {
            k = fail[k - 1];
        }
        if t[i] == t[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let step = |mut i: usize, c: char| -> usize {
        loop {
            if t[i] == c {
                return i + 1;
            }
            if i == 0 {
                return 0;
            }
            i = fail[i - 1];
        }
    };
    let mut alphabet: Vec<char> = Vec::new();
    for &c in &t {
        if !alphabet.contains(&c) {
            alphabet.push(c);
        }
    }
    let state_names: Vec<String> = (0..n)
        .map(|i| names.fresh(&format!("{entry}-{i}")))
        .collect();
    // Per state: the class of characters back to state 0, and the other moves.
    let moves = |i: usize| -> (Expr, Vec<Expr>) {
        let mut excluded: Vec<char> = Vec::new();
        let mut arms = Vec::new();
        for &c in &alphabet {
            let target = step(i, c);
            if target == 0 {
                continue;
            }
            excluded.push(c);
            if target < n {
                arms.push(Expr::seq([
                    Expr::literal(c.to_string()),
                    Expr::rule(state_names[target].clone()),
                ]));
            }
        }
        excluded.sort_unstable();
        (
            Expr::class(true, excluded.into_iter().map(|c| (c, c))),
            arms,
        )
    };
    let (back0, arms0) = moves(0);
    let mut rules = Vec::with_capacity(n + 1);
    let mut entry_arms = vec![Expr::seq([
        back0.clone(),
        Expr::rule(state_names[0].clone()),
    ])];
    entry_arms.extend(arms0.iter().cloned());
    rules.push(rule(entry, Expr::alt(entry_arms)));
    let mut state0 = vec![Expr::repeat(back0, 0, None)];
    if !arms0.is_empty() {
        state0.push(Expr::repeat(Expr::alt(arms0), 0, Some(1)));
    }
    rules.push(rule(state_names[0].clone(), Expr::seq(state0)));
    for (i, name) in state_names.iter().enumerate().skip(1) {
        let (back, arms) = moves(i);
        let mut all = vec![Expr::seq([back, Expr::rule(state_names[0].clone())])];
        all.extend(arms);
        rules.push(rule(name.clone(), Expr::repeat(Expr::alt(all), 0, Some(1))));
    }
    rules
}

fn rule(name: String, body: Expr) -> Rule {
    Rule {
        name: name.into(),
        body,
        pos: Default::default(),
    }
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

    /// Every text over the trigger's alphabet (plus one other character) up to a length:
    /// the grammar accepts exactly those that are non-empty and avoid the trigger.
    #[test]
    fn exact_on_all_short_texts() {
        for trigger in [
            "<tool_call>",
            "aab",
            "abab",
            "aaa",
            "x",
            "[TOOL_CALLS]",
            "{\"name\": \"",
        ] {
            let grammar = prose_grammar(trigger);
            assert!(gbnf::check(&grammar).is_empty(), "{trigger}\n{grammar}");
            let recognizer = Recognizer::new(&grammar).unwrap();
            let mut alphabet: Vec<char> = trigger.chars().collect();
            alphabet.sort_unstable();
            alphabet.dedup();
            alphabet.truncate(3);
            alphabet.push('z');
            let mut texts = vec![String::new()];
            for _ in 0..6 {
                let mut next = Vec::new();
                for text in &texts {
                    for &c in &alphabet {
                        next.push(format!("{text}{c}"));
                    }
                }
                for text in &next {
                    let want = !text.contains(trigger);
                    assert_eq!(
                        recognizer.recognize(text).accepted,
                        want,
                        "{trigger:?} {text:?}"
                    );
                }
                texts = next;
            }
            assert!(!recognizer.recognize("").accepted);
            let with = format!("a{trigger}b");
            assert!(!recognizer.recognize(&with).accepted);
        }
    }

    #[test]
    fn empty_trigger_accepts_any_non_empty_text() {
        let recognizer = Recognizer::new(&prose_grammar("")).unwrap();
        assert!(recognizer.recognize("a\0b").accepted);
        assert!(!recognizer.recognize("").accepted);
    }
}
