//! Several compiled grammars (one per tool, and the `response_format` answer) as the
//! rules of one grammar.
//!
//! A rule is *shared* — kept under its own name and emitted once — when every grammar
//! that defines the name gives it the same body, every rule it refers to is shared too,
//! and the name is not already taken (by `root` or the call rules around the units).
//! That keeps the building blocks (`string`, `char`, `value`, `ws`, `fmt-date`, …) single
//! while a rule whose name means different things in two tools is renamed in both. Every
//! other rule gets the unit's prefix: `root` becomes the unit's entry name and `x` becomes
//! `{prefix}-x`, numbered through [`Names`] on a clash. Units are processed in order and
//! rules in grammar order, so the result is deterministic.

use std::collections::{HashMap, HashSet};

use crate::gbnf::{Expr, Grammar, Rule};

use super::names::Names;

/// One grammar to merge in.
pub(crate) struct Unit<'g> {
    /// Prefix for its renamed rules.
    pub prefix: String,
    /// The name its `root` should get (made unique).
    pub entry: String,
    /// The grammar; its start rule is `root`.
    pub grammar: &'g Grammar,
}

/// A unit's rules after merging.
pub(crate) struct Merged {
    /// The name its `root` got.
    pub entry: String,
    /// Its rules, renamed; shared rules appear with the first unit that has them.
    pub rules: Vec<Rule>,
}

/// Merges `units`, taking names from `names` (whose reserved names no rule keeps).
pub(crate) fn combine(units: &[Unit<'_>], names: &mut Names) -> Vec<Merged> {
    let shared = shared_names(units, names);
    for name in &shared {
        names.reserve(name);
    }
    let mut emitted: HashSet<&str> = HashSet::new();
    let mut merged = Vec::with_capacity(units.len());
    for unit in units {
        let mut renames: HashMap<&str, String> = HashMap::new();
        let entry = names.fresh(&unit.entry);
        renames.insert("root", entry.clone());
        for rule in &unit.grammar.rules {
            if rule.name != "root"
                && !shared.contains(rule.name.as_str())
                && !renames.contains_key(rule.name.as_str())
            {
                let name = names.fresh(&format!("{}-{}", unit.prefix, rule.name));
                renames.insert(&rule.name, name);
            }
        }
        let mut rules = Vec::with_capacity(unit.grammar.rules.len());
        for rule in &unit.grammar.rules {
            let name = match renames.get(rule.name.as_str()) {
                Some(name) => name.as_str().into(),
                None => {
                    if !emitted.insert(&rule.name) {
                        continue;
                    }
                    rule.name.clone()
                }
            };
            let mut body = rule.body.clone();
            body.rename_refs(|name| renames.get(name).map(|new| new.as_str().into()));
            rules.push(Rule {
                name,
                body,
                pos: rule.pos,
            });
        }
        merged.push(Merged { entry, rules });
    }
    merged
}

/// The names kept as they are: defined alike everywhere, referring only to kept names,
/// not `root`, not reserved.
fn shared_names<'g>(units: &[Unit<'g>], names: &Names) -> HashSet<&'g str> {
    let mut bodies: HashMap<&'g str, Vec<&'g Expr>> = HashMap::new();
    for unit in units {
        for rule in &unit.grammar.rules {
            bodies.entry(&rule.name).or_default().push(&rule.body);
        }
    }
    let mut shared: HashSet<&'g str> = bodies
        .iter()
        .filter(|(name, defs)| {
            **name != "root" && !names.is_taken(name) && defs.windows(2).all(|w| w[0] == w[1])
        })
        .map(|(name, _)| *name)
        .collect();
    loop {
        let dropped: Vec<&'g str> = shared
            .iter()
            .copied()
            .filter(|name| {
                bodies.get(name).is_some_and(|defs| {
                    defs.iter().any(|body| {
                        let mut outside = false;
                        body.walk(|e| {
                            if let Expr::Ref { name, .. } = e {
                                outside |= !shared.contains(name.as_str());
                            }
                        });
                        outside
                    })
                })
            })
            .collect();
        if dropped.is_empty() {
            return shared;
        }
        for name in dropped {
            shared.remove(name);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::gbnf;

    fn merge(grammars: &[&str]) -> String {
        let parsed: Vec<Grammar> = grammars.iter().map(|g| gbnf::parse(g).unwrap()).collect();
        let units: Vec<Unit<'_>> = parsed
            .iter()
            .enumerate()
            .map(|(i, g)| Unit {
                prefix: format!("t{i}"),
                entry: format!("t{i}-args"),
                grammar: g,
            })
            .collect();
        let mut names = Names::new();
        names.reserve("root");
        let mut out = Grammar::default();
        let merged = combine(&units, &mut names);
        out.push(
            "root",
            Expr::alt(merged.iter().map(|m| Expr::rule(m.entry.clone()))),
        );
        for m in merged {
            out.rules.extend(m.rules);
        }
        assert!(gbnf::check(&out).is_empty(), "{out}");
        out.to_string()
    }

    #[test]
    fn identical_rules_are_shared_and_different_ones_prefixed() {
        let a = "root ::= \"{\" loc \"}\"\nloc ::= string\nstring ::= \"\\\"\" char* \"\\\"\"\nchar ::= [a-z]\n";
        let b = "root ::= \"[\" loc \"]\"\nloc ::= \"x\" string\nstring ::= \"\\\"\" char* \"\\\"\"\nchar ::= [a-z]\n";
        let out = merge(&[a, b]);
        assert_eq!(
            out,
            "root ::= t0-args | t1-args\n\
             t0-args ::= \"{\" t0-loc \"}\"\n\
             t0-loc ::= string\n\
             string ::= \"\\\"\" char* \"\\\"\"\n\
             char ::= [a-z]\n\
             t1-args ::= \"[\" t1-loc \"]\"\n\
             t1-loc ::= \"x\" string\n"
        );
    }

    #[test]
    fn a_rule_over_a_renamed_rule_is_renamed_too() {
        // `string` has the same text in both, but its `char` differs: both are renamed.
        let a = "root ::= string\nstring ::= char+\nchar ::= [a-z]\n";
        let b = "root ::= string\nstring ::= char+\nchar ::= [0-9]\n";
        let out = merge(&[a, b]);
        assert!(out.contains("t0-string ::= t0-char+"), "{out}");
        assert!(out.contains("t1-string ::= t1-char+"), "{out}");
    }

    #[test]
    fn reserved_and_clashing_names_are_numbered() {
        // Unit 0's own `t1-args` rule would clash with unit 1's entry name.
        let a = "root ::= t1-args\nt1-args ::= \"a\"\n";
        let b = "root ::= \"b\"\n";
        let out = merge(&[a, b]);
        assert_eq!(
            out,
            "root ::= t0-args | t1-args-2\nt0-args ::= t1-args\nt1-args ::= \"a\"\nt1-args-2 ::= \"b\"\n"
        );
    }
}
