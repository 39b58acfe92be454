//! Free text bounded by a marker (a tool-call trigger, the end of a reasoning section), as
//! grammar rules built from the marker's Knuth–Morris–Pratt automaton: [`avoiding`] texts
//! never contain the marker, [`through`] texts end at its first occurrence.
//!
//! State `i` means "the text so far ends with the first `i` characters of the marker, and
//! no longer prefix". State 0 loops on a negated class (`[^<]*` for `<tool_call>`), the
//! other states are right-recursive with one arm per move, so llama.cpp's stacks stay flat
//! and the recognizer stays linear.

use crate::gbnf::{Expr, Rule};

/// The marker's automaton: its characters and, for each prefix, its longest proper border.
#[derive(Debug, Clone)]
pub(crate) struct Automaton {
    marker: Vec<char>,
    fail: Vec<usize>,
    /// The marker's distinct characters, in order of first appearance.
    alphabet: Vec<char>,
}

impl Automaton {
    /// The automaton of `marker` (an empty one has no states to step through).
    pub(crate) fn new(marker: &str) -> Automaton {
        let t: Vec<char> = marker.chars().collect();
        let mut fail = vec![0usize; t.len()];
        for i in 1..t.len() {
            let mut k = fail[i - 1];
            while k > 0 && t[i] != t[k] {
                k = fail[k - 1];
            }
            if t[i] == t[k] {
                k += 1;
            }
            fail[i] = k;
        }
        let mut alphabet: Vec<char> = Vec::new();
        for &c in &t {
            if !alphabet.contains(&c) {
                alphabet.push(c);
            }
        }
        Automaton {
            marker: t,
            fail,
            alphabet,
        }
    }

    /// The marker's length in characters.
    pub(crate) fn len(&self) -> usize {
        self.marker.len()
    }

    /// The marker's `i`th character.
    pub(crate) fn char_at(&self, i: usize) -> char {
        self.marker[i]
    }

    /// The state after reading `c` in state `i` (the marker's length: it was read whole).
    pub(crate) fn step(&self, mut i: usize, c: char) -> usize {
        loop {
            if self.marker[i] == c {
                return i + 1;
            }
            if i == 0 {
                return 0;
            }
            i = self.fail[i - 1];
        }
    }

    /// From state `i`: the class of the characters that lead back to state 0, and each
    /// other character with the state it leads to.
    fn moves(&self, i: usize) -> (Expr, Vec<(char, usize)>) {
        let onward: Vec<(char, usize)> = self
            .alphabet
            .iter()
            .map(|&c| (c, self.step(i, c)))
            .filter(|&(_, target)| target > 0)
            .collect();
        let mut excluded: Vec<char> = onward.iter().map(|&(c, _)| c).collect();
        excluded.sort_unstable();
        let back = Expr::class(true, excluded.into_iter().map(|c| (c, c)));
        (back, onward)
    }
}

/// Rules for the texts that do not contain `marker` (non-empty: the marker is): `entry`
/// accepts the non-empty ones, `states[0]` every one (the empty text too); `states` holds
/// one name per character of the marker.
pub(crate) fn avoiding(marker: &str, entry: &str, states: &[String]) -> Vec<Rule> {
    let automaton = Automaton::new(marker);
    let n = automaton.marker.len();
    let arm = |c: char, target: usize| {
        Expr::seq([
            Expr::literal(c.to_string()),
            Expr::rule(states[target].clone()),
        ])
    };
    let arms = |i: usize| -> (Expr, Vec<Expr>) {
        let (back, onward) = automaton.moves(i);
        let arms = onward.into_iter().filter(|&(_, t)| t < n);
        (back, arms.map(|(c, t)| arm(c, t)).collect())
    };
    let (back0, arms0) = arms(0);
    let mut entry_arms = vec![Expr::seq([back0.clone(), Expr::rule(states[0].clone())])];
    entry_arms.extend(arms0.iter().cloned());
    let mut rules = vec![rule(entry, Expr::alt(entry_arms))];
    let mut state0 = vec![Expr::repeat(back0, 0, None)];
    if !arms0.is_empty() {
        state0.push(Expr::repeat(Expr::alt(arms0), 0, Some(1)));
    }
    rules.push(rule(&states[0], Expr::seq(state0)));
    for (i, name) in states.iter().enumerate().take(n).skip(1) {
        let (back, onward) = arms(i);
        let mut all = vec![Expr::seq([back, Expr::rule(states[0].clone())])];
        all.extend(onward);
        rules.push(rule(name, Expr::repeat(Expr::alt(all), 0, Some(1))));
    }
    rules
}

/// Rules for the texts that end at the first occurrence of `marker` (non-empty): the
/// marker itself, `x</think>` for `</think>`, but not `</think></think>`. `states` holds
/// one name per character of the marker; the first is the entry.
pub(crate) fn through(marker: &str, states: &[String]) -> Vec<Rule> {
    let automaton = Automaton::new(marker);
    let n = automaton.marker.len();
    let arms = |i: usize| -> (Expr, Vec<Expr>) {
        let (back, onward) = automaton.moves(i);
        let arms = onward.into_iter().map(|(c, target)| match target {
            // The marker is read: the text ends here.
            t if t == n => Expr::literal(c.to_string()),
            t => Expr::seq([Expr::literal(c.to_string()), Expr::rule(states[t].clone())]),
        });
        (back, arms.collect())
    };
    let mut rules = Vec::with_capacity(n);
    let (back0, arms0) = arms(0);
    rules.push(rule(
        &states[0],
        Expr::seq([Expr::repeat(back0, 0, None), Expr::alt(arms0)]),
    ));
    for (i, name) in states.iter().enumerate().take(n).skip(1) {
        let (back, onward) = arms(i);
        let mut all = vec![Expr::seq([back, Expr::rule(states[0].clone())])];
        all.extend(onward);
        rules.push(rule(name, Expr::alt(all)));
    }
    rules
}

fn rule(name: &str, body: Expr) -> Rule {
    Rule {
        name: name.into(),
        body,
        pos: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::gbnf::{self, Grammar};
    use crate::recognize::Recognizer;

    const MARKERS: [&str; 7] = ["</think>", "aab", "abab", "aaa", "x", "[/THINK]", "abcab"];

    /// `check`s every text over the marker's alphabet (three characters of it and one
    /// other) up to six characters, and the marker alone, inside a text and twice.
    fn each_short_text(marker: &str, mut check: impl FnMut(&str)) {
        let mut alphabet: Vec<char> = marker.chars().collect();
        alphabet.sort_unstable();
        alphabet.dedup();
        alphabet.truncate(3);
        alphabet.push('z');
        let mut texts = vec![String::new()];
        check("");
        for _ in 0..6 {
            let mut next = Vec::new();
            for text in &texts {
                for &c in &alphabet {
                    next.push(format!("{text}{c}"));
                }
            }
            for text in &next {
                check(text);
            }
            texts = next;
        }
        check(marker);
        check(&format!("a{marker}b"));
        check(&format!("{marker}{marker}"));
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("s-{i}")).collect()
    }

    /// A recognizer of `rules` from `entry`; `checked`: the grammar passes every lint
    /// (an entry that leaves some rules unused does not).
    fn grammar(entry: &str, rules: Vec<gbnf::Rule>, checked: bool) -> Recognizer {
        let mut grammar = Grammar::default();
        grammar.push("root", Expr::rule(entry));
        grammar.rules.extend(rules);
        assert!(!checked || gbnf::check(&grammar).is_empty(), "{grammar}");
        Recognizer::new(&grammar).unwrap()
    }

    #[test]
    fn avoiding_accepts_exactly_the_texts_without_the_marker() {
        for marker in MARKERS {
            let states = names(marker.chars().count());
            let entry = grammar("entry", avoiding(marker, "entry", &states), true);
            let any = grammar("s-0", avoiding(marker, "entry", &states), false);
            each_short_text(marker, |text| {
                let avoids = !text.contains(marker);
                let accepted = entry.recognize(text).accepted;
                assert_eq!(accepted, avoids && !text.is_empty(), "{marker:?} {text:?}");
                assert_eq!(any.recognize(text).accepted, avoids, "{marker:?} {text:?}");
            });
        }
    }

    #[test]
    fn through_accepts_exactly_the_texts_whose_first_marker_ends_them() {
        for marker in MARKERS {
            let states = names(marker.chars().count());
            let recognizer = grammar("s-0", through(marker, &states), true);
            each_short_text(marker, |text| {
                let want =
                    text.ends_with(marker) && text.find(marker) == Some(text.len() - marker.len());
                let accepted = recognizer.recognize(text).accepted;
                assert_eq!(accepted, want, "{marker:?} {text:?}");
            });
        }
    }
}
