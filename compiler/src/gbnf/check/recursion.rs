//! What would make llama.cpp's sampler loop or accept nothing: left recursion (through
//! nullable prefixes too), repetitions of nullable bodies, rules that derive no text.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::diagnostic::Diagnostic;
use crate::gbnf::ast::{Expr, Grammar};
use crate::gbnf::derives::{self, Definitions, Derives, Graph};

/// The rules that can appear leftmost in `expr` (after a prefix that may be empty).
pub(super) fn leftmost_refs<'g>(
    expr: &'g Expr,
    defined: &Definitions<'_>,
    nullable: &[bool],
    into: &mut Vec<&'g str>,
) {
    match expr {
        Expr::Seq(items) => {
            for item in items {
                leftmost_refs(item, defined, nullable, into);
                if !derives::nullable(item, defined, nullable) {
                    break;
                }
            }
        }
        Expr::Alt(arms) => arms
            .iter()
            .for_each(|a| leftmost_refs(a, defined, nullable, into)),
        Expr::Ref { name, .. } => into.push(name),
        Expr::Group(inner) => leftmost_refs(inner, defined, nullable, into),
        Expr::Repeat { expr, max, .. } => {
            if *max != Some(0) {
                leftmost_refs(expr, defined, nullable, into);
            }
        }
        Expr::Literal(_) | Expr::Class { .. } | Expr::Any | Expr::Token { .. } => {}
    }
}

/// For each rule, whether it lies on a cycle of references (its strongly connected
/// component has several rules, or it references itself).
pub(super) fn in_cycles(edges: &Graph, components: &derives::Components) -> Vec<bool> {
    let mut cyclic = vec![false; edges.len()];
    for component in components.iter() {
        if component.len() > 1 || component.iter().any(|&i| edges.targets(i).contains(&i)) {
            component.iter().for_each(|&i| cyclic[i] = true);
        }
    }
    cyclic
}

/// Finds cycles of leftmost references: llama.cpp refuses direct and indirect left
/// recursion. A leftmost reference is a reference, so such a cycle lies inside a cycle of
/// references: only the rules `cyclic` marks are looked at.
pub(super) fn left_recursion(
    grammar: &Grammar,
    defined: &Definitions<'_>,
    derived: &Derives,
    cyclic: &[bool],
    out: &mut Vec<Diagnostic>,
) {
    if !cyclic.contains(&true) {
        return;
    }
    let mut edges = Graph::with_capacity(grammar.rules.len(), 0);
    let mut refs = Vec::new();
    for (index, rule) in grammar.rules.iter().enumerate() {
        if defined.is_first(index) && cyclic[index] {
            refs.clear();
            leftmost_refs(&rule.body, defined, &derived.nullable, &mut refs);
            for target in refs.iter().filter_map(|r| defined.get(r).copied()) {
                edges.push_target(target);
            }
        }
        edges.end_node();
    }
    for component in derives::strongly_connected(&edges).iter() {
        let first = component.iter().copied().min().unwrap_or(0);
        let cyclic = component.len() > 1 || edges.targets(first).contains(&first);
        if !cyclic {
            continue;
        }
        let members: FxHashSet<usize> = component.iter().copied().collect();
        let cycle = cycle_through(first, &edges, &members);
        let path: Vec<&str> = cycle
            .iter()
            .map(|&i| grammar.rules[i].name.as_str())
            .collect();
        let rule = &grammar.rules[first];
        out.push(
            Diagnostic::error(
                "left-recursion",
                Some(rule.pos),
                format!(
                    "rule `{}` is left-recursive: {}",
                    rule.name,
                    path.join(" → ")
                ),
            )
            .with_help("llama.cpp refuses left recursion; rewrite `a ::= a x | y` as `a ::= y x*`"),
        );
    }
}

/// A shortest cycle from `start` back to itself inside one strongly connected component.
pub(super) fn cycle_through(start: usize, edges: &Graph, members: &FxHashSet<usize>) -> Vec<usize> {
    let mut parent: FxHashMap<usize, usize> = FxHashMap::default();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &next in edges.targets(node) {
            if !members.contains(&next) {
                continue;
            }
            if next == start {
                let mut path = vec![start];
                let mut at = node;
                while at != start {
                    path.push(at);
                    at = parent[&at];
                }
                path.push(start);
                let last = path.len() - 1;
                path[1..last].reverse();
                return path;
            }
            if let std::collections::hash_map::Entry::Vacant(slot) = parent.entry(next) {
                slot.insert(node);
                queue.push_back(next);
            }
        }
    }
    vec![start, start]
}

/// `x*`, `x+` and `x{m,}` over an `x` that can match the empty text: llama.cpp expands
/// them to `r ::= x r |`, which is left recursion it does not always detect.
pub(super) fn nullable_repetitions<'g>(
    defined: &Definitions<'_>,
    repeats: impl Iterator<Item = &'g &'g Expr>,
    derived: &Derives,
    out: &mut Vec<Diagnostic>,
) {
    for e in repeats {
        if let Expr::Repeat {
            expr,
            max: None,
            pos,
            ..
        } = e
        {
            if derives::nullable(expr, defined, &derived.nullable) {
                out.push(
                    Diagnostic::error(
                        "nullable-repeat",
                        Some(*pos),
                        format!("`{expr}` can match the empty text, so repeating it without bound is left recursion"),
                    )
                    .with_help("make the repeated part non-empty, e.g. `(x?)*` → `x*`"),
                );
            }
        }
    }
}

/// Rules that derive no finite text: a sampler that enters them can never finish.
pub(super) fn empty_languages(
    grammar: &Grammar,
    defined: &Definitions<'_>,
    derived: &Derives,
    out: &mut Vec<Diagnostic>,
) {
    for (index, rule) in grammar.rules.iter().enumerate() {
        if derived.productive[index] || !defined.is_first(index) {
            continue;
        }
        out.push(
            Diagnostic::error(
                "empty-language",
                Some(rule.pos),
                format!("rule `{}` matches nothing: every alternative needs itself, an undefined rule or an impossible class, so generation could never finish", rule.name),
            )
            .with_help("give it an alternative that ends, e.g. `list ::= item (\",\" item)*` instead of `list ::= item \",\" list`"),
        );
    }
}
