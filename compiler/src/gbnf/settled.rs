//! What earlier clean checks found about rules whose bodies live for the whole process
//! (the building blocks every compiled schema borrows), so that [`super::check()`] need not
//! derive it again for every grammar.
//!
//! A body's facts (whether it derives some text, whether it derives the empty text, and
//! that it takes part in no left recursion or nullable repetition) depend on its own text
//! and on every rule it reaches. They are kept per body address, with the addresses of
//! the bodies its references named then; a later grammar may use them for a rule only
//! when every rule it reaches is again a kept body whose references name the same bodies
//! as before — then everything it reaches is the same text as before, and so are the
//! answers. They are kept only from checks with no error at all.

use std::borrow::Cow;
use std::cell::RefCell;

use rustc_hash::FxHashMap;

use super::ast::{Grammar, Rule};
use super::derives::{Definitions, Derives, Facts};

/// The most bodies kept, per thread (bodies borrowed for the whole process are few, but
/// a library user could leak any number).
const MAX_KEPT: usize = 4096;

/// The most passes [`closed`] makes before giving up (and settling nothing): chains of
/// shared bodies are short.
const MAX_PASSES: usize = 16;

/// A kept body's facts, and the bodies its references named, in order.
struct Kept {
    facts: Facts,
    targets: Box<[usize]>,
}

thread_local! {
    static KEPT: RefCell<FxHashMap<usize, Kept>> = RefCell::default();
}

/// The address of a rule's body when it lives for the whole process.
fn address(rule: &Rule) -> Option<usize> {
    match &rule.body {
        Cow::Borrowed(body) => Some(std::ptr::from_ref(*body) as usize),
        Cow::Owned(_) => None,
    }
}

/// For each rule, its facts when an earlier clean check settled them and nothing it
/// reaches has changed since. `targets(i)` gives the rule each reference of rule `i`
/// names (`None`: undefined), in the order of its body.
pub(super) fn recall<'t>(
    grammar: &Grammar,
    defined: &Definitions<'_>,
    targets: impl Fn(usize) -> &'t [Option<usize>],
) -> Vec<Option<Facts>> {
    let n = grammar.rules.len();
    let addresses: Vec<Option<usize>> = grammar.rules.iter().map(address).collect();
    let mut facts = vec![None; n];
    KEPT.with_borrow(|kept| {
        if kept.is_empty() {
            return;
        }
        let candidates: Vec<bool> = (0..n)
            .map(|index| {
                let Some(kept) = addresses[index].and_then(|a| kept.get(&a)) else {
                    return false;
                };
                let names = targets(index);
                defined.is_first(index)
                    && names.len() == kept.targets.len()
                    && names
                        .iter()
                        .zip(kept.targets.iter())
                        .all(|(t, &was)| t.and_then(|t| addresses[t]) == Some(was))
            })
            .collect();
        for (index, keep) in closed(&targets, candidates).into_iter().enumerate() {
            if keep {
                facts[index] = addresses[index].and_then(|a| kept.get(&a)).map(|k| k.facts);
            }
        }
    });
    facts
}

/// Keeps the facts of every rule of a grammar with no error diagnostics whose body lives
/// for the whole process and that reaches only such rules (`recalled`: what [`recall`]
/// found for this grammar; when it found every such rule, nothing is new).
pub(super) fn remember<'t>(
    grammar: &Grammar,
    defined: &Definitions<'_>,
    targets: impl Fn(usize) -> &'t [Option<usize>],
    recalled: &[Option<Facts>],
    derived: &Derives,
) {
    let is_candidate =
        |index: usize, rule: &Rule| address(rule).is_some() && defined.is_first(index);
    let nothing_new = grammar.rules.iter().enumerate().all(|(index, rule)| {
        recalled.get(index).is_some_and(Option::is_some) || !is_candidate(index, rule)
    });
    if nothing_new {
        return;
    }
    let addresses: Vec<Option<usize>> = grammar.rules.iter().map(address).collect();
    let candidates: Vec<bool> = grammar
        .rules
        .iter()
        .enumerate()
        .map(|(index, rule)| is_candidate(index, rule))
        .collect();
    KEPT.with_borrow_mut(|kept| {
        for (index, keep) in closed(&targets, candidates).into_iter().enumerate() {
            let Some(address) = addresses[index].filter(|_| keep) else {
                continue;
            };
            if kept.len() >= MAX_KEPT || kept.contains_key(&address) {
                continue;
            }
            let bodies = targets(index)
                .iter()
                .filter_map(|t| t.and_then(|t| addresses[t]))
                .collect();
            kept.insert(
                address,
                Kept {
                    facts: Facts {
                        productive: derived.productive[index],
                        nullable: derived.nullable[index],
                    },
                    targets: bodies,
                },
            );
        }
    });
}

/// The candidates whose references all name candidates, and whose referenced rules' do,
/// and so on: the largest such subset. Nothing after [`MAX_PASSES`] passes.
fn closed<'t>(targets: &impl Fn(usize) -> &'t [Option<usize>], mut keep: Vec<bool>) -> Vec<bool> {
    for _ in 0..MAX_PASSES {
        let mut changed = false;
        for index in 0..keep.len() {
            if keep[index] && !targets(index).iter().all(|t| t.is_some_and(|t| keep[t])) {
                keep[index] = false;
                changed = true;
            }
        }
        if !changed {
            return keep;
        }
    }
    vec![false; keep.len()]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::borrow::Cow;

    use crate::gbnf::{check, is_clean, parse, Expr, Grammar, Pos, Rule};

    /// A body that lives for the whole process, from GBNF text.
    fn leaked(text: &str) -> &'static Expr {
        let mut grammar = parse(&format!("r ::= {text}\n")).unwrap();
        Box::leak(Box::new(grammar.rules.remove(0).body.into_owned()))
    }

    fn grammar(rules: Vec<(&str, Cow<'static, Expr>)>) -> Grammar {
        Grammar {
            rules: rules
                .into_iter()
                .map(|(name, body)| Rule {
                    name: name.into(),
                    body,
                    pos: Pos::default(),
                })
                .collect(),
        }
    }

    fn owned(text: &str) -> Cow<'static, Expr> {
        Cow::Owned(leaked(text).clone())
    }

    fn codes(grammar: &Grammar) -> Vec<&'static str> {
        check(grammar).iter().map(|d| d.code).collect()
    }

    /// Is rule `a` reported as matching nothing?
    fn a_is_empty(grammar: &Grammar) -> bool {
        check(grammar)
            .iter()
            .any(|d| d.code == "empty-language" && d.message.contains("rule `a`"))
    }

    #[test]
    fn kept_facts_serve_only_where_everything_reached_is_unchanged() {
        let a = leaked("b \"a\"");
        let b = leaked("\"b\"");
        let clean = grammar(vec![
            ("root", owned("a")),
            ("a", Cow::Borrowed(a)),
            ("b", Cow::Borrowed(b)),
        ]);
        assert!(is_clean(&check(&clean)));
        // Checked again from the kept facts: the same answer.
        assert!(is_clean(&check(&clean)));
        // `a` again, but the `b` it names is now a rule of this grammar with no base case.
        let owned_b = grammar(vec![
            ("root", owned("a")),
            ("a", Cow::Borrowed(a)),
            ("b", owned("b \"x\" | \"y\" b")),
        ]);
        assert!(a_is_empty(&owned_b));
        // Or another body that lives as long, also with no base case.
        let other_b = grammar(vec![
            ("root", owned("a")),
            ("a", Cow::Borrowed(a)),
            ("b", Cow::Borrowed(leaked("\"y\" b"))),
        ]);
        assert!(a_is_empty(&other_b));
        // Or missing.
        let no_b = grammar(vec![("root", owned("a")), ("a", Cow::Borrowed(a))]);
        assert!(codes(&no_b).contains(&"undefined-rule"));
    }

    #[test]
    fn kept_facts_still_show_left_recursion_through_other_rules() {
        let maybe = leaked("\"m\"?");
        let clean = grammar(vec![("root", owned("m")), ("m", Cow::Borrowed(maybe))]);
        assert!(is_clean(&check(&clean)));
        // `m` is settled as matching the empty text, so `c` is left-recursive.
        let recursive = grammar(vec![
            ("root", owned("c")),
            ("c", owned("m c \"x\" | \"y\"")),
            ("m", Cow::Borrowed(maybe)),
        ]);
        assert!(codes(&recursive).contains(&"left-recursion"));
        let repeated = grammar(vec![("root", owned("m*")), ("m", Cow::Borrowed(maybe))]);
        assert!(codes(&repeated).contains(&"nullable-repeat"));
    }

    #[test]
    fn kept_facts_follow_the_bodies_their_references_named() {
        let a = leaked("b");
        let b = leaked("\"b\"");
        let maybe_b = leaked("\"b\"?");
        // `a` is settled as never empty (its `b` is not), and the other `b` as maybe empty.
        let with_b = grammar(vec![
            ("root", owned("a")),
            ("a", Cow::Borrowed(a)),
            ("b", Cow::Borrowed(b)),
        ]);
        assert!(is_clean(&check(&with_b)));
        let maybe = grammar(vec![("root", owned("b")), ("b", Cow::Borrowed(maybe_b))]);
        assert!(is_clean(&check(&maybe)));
        // With the other `b`, `a` may be empty, so `c` is left-recursive.
        let recursive = grammar(vec![
            ("root", owned("c")),
            ("c", owned("a c \"x\" | \"y\"")),
            ("a", Cow::Borrowed(a)),
            ("b", Cow::Borrowed(maybe_b)),
        ]);
        assert!(codes(&recursive).contains(&"left-recursion"));
    }
}
