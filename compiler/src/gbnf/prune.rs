//! Removing the parts of a grammar that derive nothing, without changing its language.
//!
//! A rule whose every alternative needs itself (`loop ::= "{" loop "}"`), an undefined
//! rule, or an impossible class derives no text. llama.cpp cannot finish inside such a
//! rule, and [`super::check()`] reports it; but where it sits behind an alternative or an
//! optional part, the grammar as a whole is fine without it. [`prune`] drops those parts:
//! arms that derive nothing, optional repetitions of them, the rules themselves, and then
//! every rule `root` no longer reaches. The language is the same; only dead ends go.

use super::ast::{Expr, Grammar, Rule};
use super::derives::{self, Definitions};
use super::flat::LowerError;

/// What [`prune`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pruned {
    /// The grammar now has no part that derives nothing; this many rules were removed.
    Rules(usize),
    /// `root` itself derives nothing (or is missing): no text is in the language.
    EmptyLanguage,
}

/// Prunes `grammar` in place (see the module documentation).
///
/// ```
/// use gbnfc_compiler::gbnf::{parse, prune::{prune, Pruned}};
/// let mut g = parse("root ::= \"a\" | loop\nloop ::= \"(\" loop \")\"\n").unwrap();
/// assert_eq!(prune(&mut g).unwrap(), Pruned::Rules(1));
/// assert_eq!(g.to_string(), "root ::= \"a\"\n");
/// ```
///
/// # Errors
/// [`LowerError`] for grammars too large to analyse.
pub fn prune(grammar: &mut Grammar) -> Result<Pruned, LowerError> {
    let defined = derives::definitions(grammar);
    let derived = derives::derives(grammar, &defined)?;
    let productive: Vec<bool> = derived.productive;
    if !defined.get("root").is_some_and(|&root| productive[root]) {
        return Ok(Pruned::EmptyLanguage);
    }
    let before = grammar.rules.len();
    let mut kept: Vec<Rule> = Vec::with_capacity(before);
    for (index, rule) in grammar.rules.iter().enumerate() {
        if !productive[index] || !defined.is_first(index) {
            continue;
        }
        if let Some(body) = live(&rule.body, &defined, &productive) {
            kept.push(Rule {
                name: rule.name.clone(),
                body,
                pos: rule.pos,
            });
        }
    }
    grammar.rules = kept;
    drop_unreached(grammar);
    Ok(Pruned::Rules(before - grammar.rules.len()))
}

/// `expr` without its parts that derive nothing; `None` when it derives nothing itself.
fn live(expr: &Expr, defined: &Definitions<'_>, productive: &[bool]) -> Option<Expr> {
    match expr {
        Expr::Seq(items) => items
            .iter()
            .map(|item| live(item, defined, productive))
            .collect::<Option<Vec<Expr>>>()
            .map(Expr::seq),
        Expr::Alt(arms) => {
            let arms: Vec<Expr> = arms
                .iter()
                .filter_map(|arm| live(arm, defined, productive))
                .collect();
            (!arms.is_empty()).then(|| Expr::alt(arms))
        }
        Expr::Ref { name, .. } => defined
            .get(name.as_str())
            .is_some_and(|&index| productive[index])
            .then(|| expr.clone()),
        Expr::Class { negated, ranges } => {
            derives::class_matches_something(*negated, ranges).then(|| expr.clone())
        }
        Expr::Literal(_) | Expr::Any | Expr::Token { .. } => Some(expr.clone()),
        Expr::Group(inner) => live(inner, defined, productive).map(|e| match e {
            e @ (Expr::Seq(_) | Expr::Alt(_)) => Expr::Group(Box::new(e)),
            e => e,
        }),
        Expr::Repeat {
            expr: inner,
            min,
            max,
            pos,
        } => match live(inner, defined, productive) {
            Some(inner) => Some(Expr::Repeat {
                expr: Box::new(inner),
                min: *min,
                max: *max,
                pos: *pos,
            }),
            None if *min == 0 || *max == Some(0) => Some(Expr::empty()),
            None => None,
        },
    }
}

/// Removes the rules `root` does not reach.
fn drop_unreached(grammar: &mut Grammar) {
    let defined = derives::definitions(grammar);
    let mut reached = vec![false; grammar.rules.len()];
    let mut queue: Vec<usize> = defined.get("root").copied().into_iter().collect();
    for &root in &queue {
        reached[root] = true;
    }
    while let Some(index) = queue.pop() {
        grammar.rules[index].body.walk(|e| {
            if let Expr::Ref { name, .. } = e {
                if let Some(&target) = defined.get(name.as_str()) {
                    if !reached[target] {
                        reached[target] = true;
                        queue.push(target);
                    }
                }
            }
        });
    }
    let mut index = 0;
    grammar.rules.retain(|_| {
        index += 1;
        reached[index - 1]
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::gbnf::{check, is_clean, parse};

    fn pruned(text: &str) -> (Pruned, String) {
        let mut g = parse(text).unwrap();
        let result = prune(&mut g).unwrap();
        (result, g.to_string())
    }

    #[test]
    fn dead_arms_optional_parts_and_their_rules_go() {
        let (result, text) = pruned(
            "root ::= \"{\" (\",\" loop)? more* \"}\"\nloop ::= \"[\" loop \"]\"\nmore ::= \"x\" | missing\n",
        );
        assert_eq!(result, Pruned::Rules(1));
        assert_eq!(text, "root ::= \"{\" more* \"}\"\nmore ::= \"x\"\n");
        assert!(is_clean(&check(&parse(&text).unwrap())));
    }

    #[test]
    fn a_root_that_derives_nothing_is_reported() {
        assert_eq!(
            pruned("root ::= \"a\" loop\nloop ::= loop \"b\"\n").0,
            Pruned::EmptyLanguage
        );
        assert_eq!(pruned("start ::= \"a\"\n").0, Pruned::EmptyLanguage);
    }

    #[test]
    fn the_language_is_unchanged() {
        let text = "root ::= a | b\na ::= \"x\" a?\nb ::= [^\\x00-\\U0010FFFF] | c\nc ::= \"y\"\n";
        let (_, after) = pruned(text);
        let before = crate::recognize::Recognizer::new(&parse(text).unwrap()).unwrap();
        let after = crate::recognize::Recognizer::new(&parse(&after).unwrap()).unwrap();
        for sample in ["x", "xx", "y", "", "z", "xy"] {
            assert_eq!(
                before.recognize(sample).accepted,
                after.recognize(sample).accepted,
                "{sample}"
            );
        }
    }
}
