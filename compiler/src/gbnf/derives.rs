//! Which rules derive anything at all, and which derive the empty text, computed on the
//! tree itself.
//!
//! Both are least fixpoints: start from "no rule does" and re-evaluate rule bodies until
//! nothing changes. The rules are taken one strongly connected component of the reference
//! graph at a time, components after the ones they use, so a rule outside a cycle is
//! evaluated once; inside a component the evaluation repeats until it settles. A component
//! that needs more than [`MAX_PASSES`] passes sends the whole grammar to
//! [`Flat::min_derivation`], exact in O(n log n) whatever the shape. The answers are the
//! same either way; only the cost differs.

use rustc_hash::FxHashMap;

use super::ast::{Expr, Grammar};
use super::charset::CharSet;
use super::flat::{Flat, LowerError, MAX_SYMBOLS};

/// Passes over one strongly connected component before falling back to the flat form.
pub const MAX_PASSES: usize = 8;

/// What each rule derives, indexed like `grammar.rules`. Only a rule's first definition
/// counts; later duplicates read `false`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derives {
    /// The rule derives at least one finite text.
    pub productive: Vec<bool>,
    /// The rule derives the empty text.
    pub nullable: Vec<bool>,
}

/// Each rule name's first definition, and for each rule whether it is one.
#[derive(Debug, Clone, Default)]
pub struct Definitions<'g> {
    by_name: FxHashMap<&'g str, usize>,
    first: Vec<bool>,
}

impl Definitions<'_> {
    /// The index of the first rule called `name`.
    pub fn get(&self, name: &str) -> Option<&usize> {
        self.by_name.get(name)
    }

    /// Is some rule called `name`?
    pub fn contains_key(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Is rule `index` the first definition of its name (not a later duplicate)?
    pub fn is_first(&self, index: usize) -> bool {
        self.first.get(index).copied().unwrap_or(false)
    }
}

/// The first definition of each rule name in `grammar`.
pub fn definitions(grammar: &Grammar) -> Definitions<'_> {
    let mut defined = Definitions {
        by_name: FxHashMap::with_capacity_and_hasher(grammar.rules.len(), Default::default()),
        first: Vec::with_capacity(grammar.rules.len()),
    };
    for (index, rule) in grammar.rules.iter().enumerate() {
        let entry = defined.by_name.entry(rule.name.as_str());
        let first = matches!(entry, std::collections::hash_map::Entry::Vacant(_));
        entry.or_insert(index);
        defined.first.push(first);
    }
    defined
}

/// Computes [`Derives`] for every rule. References to undefined rules derive nothing.
///
/// # Errors
/// [`LowerError`] only from the fallback, on grammars too large to lower.
pub fn derives(grammar: &Grammar, defined: &Definitions<'_>) -> Result<Derives, LowerError> {
    let mut edges = Graph::with_capacity(grammar.rules.len(), 0);
    for (index, rule) in grammar.rules.iter().enumerate() {
        if defined.is_first(index) {
            rule.body.walk(|e| {
                if let Expr::Ref { name, .. } = e {
                    if let Some(&target) = defined.get(name.as_str()) {
                        edges.push_target(target);
                    }
                }
            });
        }
        edges.end_node();
    }
    derives_over(grammar, defined, &edges)
}

/// [`derives`] given the reference graph already: `edges.targets(i)` lists the rules that
/// rule `i` (its first definition) references.
///
/// # Errors
/// As [`derives`].
pub fn derives_over(
    grammar: &Grammar,
    defined: &Definitions<'_>,
    edges: &Graph,
) -> Result<Derives, LowerError> {
    derives_in(grammar, defined, edges, &strongly_connected(edges))
}

/// [`derives_over`] given also the graph's [`strongly_connected`] components, in the order
/// that function gives them.
///
/// # Errors
/// As [`derives`].
pub fn derives_in(
    grammar: &Grammar,
    defined: &Definitions<'_>,
    edges: &Graph,
    components: &Components,
) -> Result<Derives, LowerError> {
    let n = grammar.rules.len();
    let mut state = Derives {
        productive: vec![false; n],
        nullable: vec![false; n],
    };
    // Components come sinks first, so every rule a component uses outside itself is
    // known before it; inside a component, iterate to the fixpoint.
    for component in components.iter() {
        let single = component.len() == 1 && !edges.targets(component[0]).contains(&component[0]);
        let mut passes = 0;
        loop {
            let mut changed = false;
            for &index in component {
                if !defined.is_first(index) {
                    continue;
                }
                if state.productive[index] && state.nullable[index] {
                    continue;
                }
                let body = &grammar.rules[index].body;
                let (productive, nullable) = productive_nullable(body, defined, &state);
                if productive && !state.productive[index] {
                    state.productive[index] = true;
                    changed = true;
                }
                if nullable && !state.nullable[index] {
                    state.nullable[index] = true;
                    changed = true;
                }
            }
            passes += 1;
            if single || !changed {
                break;
            }
            if passes > MAX_PASSES {
                return from_flat(grammar, defined);
            }
        }
    }
    Ok(state)
}

/// The exact answer through the flat form, for grammars whose rules are in no helpful
/// order.
fn from_flat(grammar: &Grammar, defined: &Definitions<'_>) -> Result<Derives, LowerError> {
    let flat = Flat::lower(grammar)?;
    let lengths = flat.shortest_lengths();
    let mut state = Derives {
        productive: vec![false; grammar.rules.len()],
        nullable: vec![false; grammar.rules.len()],
    };
    for (index, rule) in grammar.rules.iter().enumerate() {
        if !defined.is_first(index) {
            continue;
        }
        if let Some(&nt) = flat.rule_nt.get(rule.name.as_str()) {
            let length = lengths[nt as usize];
            state.productive[index] = length.is_some();
            state.nullable[index] = length == Some(0);
        }
    }
    Ok(state)
}

fn rule_has(name: &str, defined: &Definitions<'_>, known: &[bool]) -> bool {
    defined.get(name).is_some_and(|&index| known[index])
}

/// Whether `expr` derives some finite text, and whether it derives the empty text
/// ([`nullable`]), in one walk, given what is known of the rules.
fn productive_nullable(expr: &Expr, defined: &Definitions<'_>, known: &Derives) -> (bool, bool) {
    match expr {
        Expr::Seq(items) => items.iter().fold((true, true), |(p, n), item| {
            if !p {
                // Not productive: neither answer can become true.
                return (false, false);
            }
            let (ip, i_n) = productive_nullable(item, defined, known);
            (ip, n && i_n)
        }),
        Expr::Alt(arms) => arms.iter().fold((false, false), |(p, n), arm| {
            if p && n {
                return (true, true);
            }
            let (ap, an) = productive_nullable(arm, defined, known);
            (p || ap, n || an)
        }),
        Expr::Literal(text) => (true, text.is_empty()),
        Expr::Any | Expr::Token { .. } => (true, false),
        Expr::Class { negated, ranges } => (class_matches_something(*negated, ranges), false),
        Expr::Ref { name, .. } => match defined.get(name) {
            Some(&index) => (known.productive[index], known.nullable[index]),
            None => (false, false),
        },
        Expr::Group(inner) => productive_nullable(inner, defined, known),
        Expr::Repeat { expr, min, max, .. } => {
            if *min == 0 || *max == Some(0) {
                (true, true)
            } else {
                productive_nullable(expr, defined, known)
            }
        }
    }
}

/// Does `expr` derive the empty text, given the rules known to?
pub fn nullable(expr: &Expr, defined: &Definitions<'_>, known: &[bool]) -> bool {
    match expr {
        Expr::Seq(items) => items.iter().all(|i| nullable(i, defined, known)),
        Expr::Alt(arms) => arms.iter().any(|a| nullable(a, defined, known)),
        Expr::Literal(text) => text.is_empty(),
        Expr::Class { .. } | Expr::Any | Expr::Token { .. } => false,
        Expr::Ref { name, .. } => rule_has(name, defined, known),
        Expr::Group(inner) => nullable(inner, defined, known),
        Expr::Repeat { expr, min, max, .. } => {
            *min == 0 || *max == Some(0) || nullable(expr, defined, known)
        }
    }
}

/// Does a class `[…]` (or `[^…]`) match at least one character?
pub fn class_matches_something(negated: bool, ranges: &[super::ast::ClassRange]) -> bool {
    if !negated {
        // A positive class matches something as soon as one range is not reversed.
        return ranges.iter().any(|r| r.lo <= r.hi);
    }
    // A negated class matches nothing only if its ranges cover every scalar value; when
    // their sizes (overlaps counted twice) add up to fewer, some character is left.
    const SCALAR_VALUES: u64 = 0x11_0000 - 0x800;
    let covered: u64 = ranges
        .iter()
        .filter(|r| r.lo <= r.hi)
        .map(|r| u64::from(u32::from(r.hi) - u32::from(r.lo)) + 1)
        .sum();
    covered < SCALAR_VALUES || !CharSet::from_class(negated, ranges).is_empty()
}

/// The number of symbols the grammar's flat form holds (repetitions expanded, as llama.cpp
/// expands them), saturating; more than [`MAX_SYMBOLS`] is too large to handle.
pub fn expanded_size(grammar: &Grammar) -> u64 {
    grammar
        .rules
        .iter()
        .fold(0u64, |sum, rule| sum.saturating_add(size(&rule.body) + 1))
}

/// `true` when [`expanded_size`] is above [`MAX_SYMBOLS`].
pub fn too_large(grammar: &Grammar) -> bool {
    expanded_size(grammar) > MAX_SYMBOLS as u64
}

fn size(expr: &Expr) -> u64 {
    match expr {
        Expr::Seq(items) => items.iter().fold(0u64, |s, i| s.saturating_add(size(i))),
        Expr::Alt(arms) => arms
            .iter()
            .fold(1u64, |s, a| s.saturating_add(size(a)).saturating_add(1)),
        Expr::Literal(text) => text.chars().count() as u64,
        Expr::Class { .. } | Expr::Any | Expr::Token { .. } | Expr::Ref { .. } => 1,
        Expr::Group(inner) => size(inner),
        Expr::Repeat { expr, min, max, .. } => {
            let body = size(expr).max(1);
            let copies = u64::from(max.unwrap_or(*min).max(*min)).saturating_add(1);
            body.saturating_mul(copies).saturating_add(2)
        }
    }
}

/// A directed graph over nodes `0..len`, each node's targets stored one after another
/// (one allocation for the whole graph, not one per node).
#[derive(Debug, Clone, Default)]
pub struct Graph {
    /// Where each node's targets end in `targets`.
    ends: Vec<usize>,
    /// Every node's targets, node by node.
    targets: Vec<usize>,
}

impl Graph {
    /// An empty graph with room for `nodes` nodes and `edges` edges.
    pub fn with_capacity(nodes: usize, edges: usize) -> Graph {
        Graph {
            ends: Vec::with_capacity(nodes),
            targets: Vec::with_capacity(edges),
        }
    }

    /// Adds an edge from the node being built (the next one [`Graph::end_node`] closes).
    pub fn push_target(&mut self, target: usize) {
        self.targets.push(target);
    }

    /// Closes the node being built.
    pub fn end_node(&mut self) {
        self.ends.push(self.targets.len());
    }

    /// How many nodes the graph has.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Whether no node has an edge.
    pub fn has_no_edges(&self) -> bool {
        self.targets.is_empty()
    }

    /// The nodes `node` has an edge to, in the order they were added (repeats kept).
    pub fn targets(&self, node: usize) -> &[usize] {
        let start = if node == 0 { 0 } else { self.ends[node - 1] };
        &self.targets[start..self.ends[node]]
    }
}

/// The strongly connected components of a graph, each listed after every component it
/// reaches: one flat list of members, component by component.
#[derive(Debug, Clone, Default)]
pub struct Components {
    /// Every node, grouped by component.
    members: Vec<usize>,
    /// Where each component ends in `members`.
    ends: Vec<usize>,
}

impl Components {
    /// The components in order, each as its members.
    pub fn iter(&self) -> impl Iterator<Item = &[usize]> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter().copied())
            .map(|(from, to)| &self.members[from..to])
    }
}

/// The strongly connected components of a graph, each component listed after every
/// component it reaches (Tarjan's algorithm, iteratively: grammars can have very long
/// reference chains).
pub fn strongly_connected(edges: &Graph) -> Components {
    let n = edges.len();
    if edges.has_no_edges() {
        // No references: every node is a component of its own (in the order Tarjan's
        // algorithm would give them).
        return Components {
            members: (0..n).collect(),
            ends: (1..=n).collect(),
        };
    }
    // Per node: its visiting order (`UNSEEN` before), the lowest order it reaches, and
    // whether it is on the stack.
    const UNSEEN: u32 = u32::MAX;
    let mut nodes: Vec<(u32, u32, bool)> = vec![(UNSEEN, 0, false); n];
    let mut stack: Vec<usize> = Vec::with_capacity(n);
    let mut work: Vec<(usize, usize)> = Vec::with_capacity(n);
    let mut components = Components {
        members: Vec::with_capacity(n),
        ends: Vec::with_capacity(n),
    };
    let mut counter: u32 = 0;
    let mut visit = |node: usize, nodes: &mut Vec<(u32, u32, bool)>, stack: &mut Vec<usize>| {
        nodes[node] = (counter, counter, true);
        counter += 1;
        stack.push(node);
    };
    for root in 0..n {
        if nodes[root].0 != UNSEEN {
            continue;
        }
        visit(root, &mut nodes, &mut stack);
        work.push((root, 0));
        while let Some(&mut (node, ref mut next_edge)) = work.last_mut() {
            if let Some(&next) = edges.targets(node).get(*next_edge) {
                *next_edge += 1;
                if nodes[next].0 == UNSEEN {
                    visit(next, &mut nodes, &mut stack);
                    work.push((next, 0));
                } else if nodes[next].2 {
                    nodes[node].1 = nodes[node].1.min(nodes[next].0);
                }
            } else {
                work.pop();
                let low = nodes[node].1;
                if let Some(&(parent, _)) = work.last() {
                    nodes[parent].1 = nodes[parent].1.min(low);
                }
                if low == nodes[node].0 {
                    while let Some(member) = stack.pop() {
                        nodes[member].2 = false;
                        components.members.push(member);
                        if member == node {
                            break;
                        }
                    }
                    components.ends.push(components.members.len());
                }
            }
        }
    }
    components
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::gbnf::parse;

    fn answer(text: &str) -> (Derives, Derives) {
        let grammar = parse(text).unwrap();
        let defined = definitions(&grammar);
        (
            derives(&grammar, &defined).unwrap(),
            from_flat(&grammar, &defined).unwrap(),
        )
    }

    #[test]
    fn agrees_with_the_flat_form() {
        for text in [
            "root ::= a b\na ::= \"x\"?\nb ::= a | \"y\"\n",
            "root ::= root \"x\"\n",
            "root ::= a\na ::= b\nb ::= c\nc ::= \"\"\n",
            "root ::= [^\\x00-\\U0010FFFF] | \"a\"\n",
            "root ::= x{0}\nx ::= root\n",
            "root ::= (\"a\" | b)+\nb ::= undefined\n",
        ] {
            let (fast, exact) = answer(text);
            assert_eq!(fast, exact, "{text}");
        }
    }

    #[test]
    fn long_chains_and_cycles_agree_with_the_flat_form() {
        let mut base_first = String::from("root ::= r0\nr50 ::= \"\"\n");
        let mut base_last = String::from("root ::= r0\n");
        let mut cycle = String::from("root ::= r0\nr50 ::= \"y\" | \"z\" r0\n");
        for i in (0..50).rev() {
            base_first.push_str(&format!("r{i} ::= r{} \"x\"\n", i + 1));
            cycle.push_str(&format!("r{i} ::= \"x\" r{}\n", i + 1));
        }
        for i in 0..50 {
            base_last.push_str(&format!("r{i} ::= r{} r{}?\n", i + 1, i + 1));
        }
        base_last.push_str("r50 ::= \"\"\n");
        for text in [base_first, base_last, cycle] {
            let (fast, exact) = answer(&text);
            assert_eq!(fast, exact, "{text}");
            assert!(fast.productive.iter().all(|&p| p));
        }
    }
}
