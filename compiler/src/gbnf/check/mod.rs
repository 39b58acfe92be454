//! Lints for llama.cpp's limits: everything that would make llama.cpp refuse a grammar,
//! hang on it, or accept nothing with it.
//!
//! The guarantee: a grammar with no error diagnostics is accepted by llama.cpp's grammar
//! parser (token references by text must name single tokens of the model's vocabulary,
//! which only the model can tell). Where llama.cpp's own detection is weaker than the
//! truth (its left-recursion check sees only rules with a literally empty alternative as
//! nullable), `check` follows the truth, because llama.cpp's sampler would recurse
//! forever on what slips through.

use super::ast::{ClassRange, Expr, Grammar, Pos};
use super::derives::{self, Definitions, Graph};
use super::flat::{LowerError, MAX_EXPR_DEPTH, MAX_SYMBOLS};
use crate::diagnostic::Diagnostic;

mod limits;
mod recursion;

use limits::{classes, names, references, repetitions};
use recursion::{empty_languages, in_cycles, left_recursion, nullable_repetitions};

/// Checks a grammar; returns every finding, errors and warnings, in source order.
///
/// ```
/// use gbnfc_compiler::gbnf::{check, parse};
/// let g = parse("root ::= item+\nitem ::= [a-z]\n").unwrap();
/// assert!(check(&g).iter().all(|d| !d.is_error()));
/// let bad = parse("root ::= root \"x\" | \"y\"\n").unwrap();
/// assert!(check(&bad).iter().any(|d| d.code == "left-recursion"));
/// ```
pub fn check(grammar: &Grammar) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let scan = Scan::of(grammar);
    if let Some((rule, _)) = grammar
        .rules
        .iter()
        .zip(&scan.rules)
        .find(|(_, r)| r.depth > MAX_EXPR_DEPTH)
    {
        out.push(Diagnostic::error(
            "too-deep",
            Some(rule.pos),
            format!(
                "rule `{}` nests expressions more than {MAX_EXPR_DEPTH} deep",
                rule.name
            ),
        ));
        return out;
    }
    let defined = definitions(grammar, &mut out);
    names(grammar, &mut out);
    let targets: Vec<Option<usize>> = scan
        .refs
        .iter()
        .map(|(name, _)| defined.get(name).copied())
        .collect();
    let targets_of = |index: usize| &targets[scan.refs_range(index)];
    let edges = reference_edges(grammar, &defined, targets_of);
    references(grammar, &defined, &scan, &targets, targets_of, &mut out);
    repetitions(grammar, &defined, &scan, &targets, &mut out);
    classes(grammar, &scan, &mut out);
    let bounds_ok = !out.iter().any(|d| d.code == "repeat-bound");
    if bounds_ok && scan.size_bound > MAX_SYMBOLS as u64 && derives::too_large(grammar) {
        out.push(Diagnostic::error(
            "too-large",
            None,
            LowerError::TooLarge.to_string(),
        ));
    } else if bounds_ok {
        let components = derives::strongly_connected(&edges);
        match derives::derives_in(grammar, &defined, &edges, &components) {
            Ok(derived) => {
                let cyclic = in_cycles(&edges, &components);
                left_recursion(grammar, &defined, &derived, &cyclic, &mut out);
                nullable_repetitions(&defined, scan.repeats.iter(), &derived, &mut out);
                if !out.iter().any(|d| d.code == "undefined-rule") {
                    // Otherwise every rule that reaches the undefined one would be reported too.
                    empty_languages(grammar, &defined, &derived, &mut out);
                }
            }
            Err(e) => out.push(Diagnostic::error("too-large", None, e.to_string())),
        }
    }
    out.sort_by_key(|d| d.pos.map(|p| (p.line, p.column)));
    out
}

/// What one walk over each rule's body finds, so the lints need no walks of their own.
/// Per rule, `rules[i]` holds its depth and where its references start in `refs`.
#[derive(Default)]
struct Scan<'g> {
    /// Per rule: how deeply expressions nest, and where its references start.
    rules: Vec<RuleScan>,
    /// Every rule reference, rule by rule, in order.
    refs: Vec<(&'g str, Pos)>,
    /// Every repetition, rule by rule, parents first.
    repeats: Vec<&'g Expr>,
    /// Character-class ranges whose start is after their end, with their rule.
    empty_ranges: Vec<(usize, ClassRange)>,
    /// An upper bound of [`derives::expanded_size`]: when it is within the limit, the
    /// exact size need not be computed.
    size_bound: u64,
    /// An upper bound of the symbols [`SymbolSimulation`] creates, not counting
    /// undefined names: one per rule and group, and what each repetition adds.
    symbol_bound: u64,
    /// The largest product of repetition counts along a chain of directly nested
    /// repetitions (`x{3}{4}`: 12); 1 without repetitions.
    repeat_chain: u64,
}

/// An expression met by [`Scan::walk`]: the expression, its depth, the copies llama.cpp
/// makes of it through enclosing repetitions, and the product of the repetitions it sits
/// directly inside.
type Walked<'g> = (&'g Expr, usize, u64, u64);

/// The count llama.cpp multiplies a repetition's item by (`SymbolSimulation::item`).
pub(super) fn repeat_total(min: u32, max: Option<u32>) -> u64 {
    match max {
        Some(max) if max > 0 => u64::from(max),
        _ => u64::from(min.max(1)),
    }
}

/// One rule's part of a [`Scan`].
#[derive(Clone, Copy)]
struct RuleScan {
    /// How deeply expressions nest (an atom has depth 1).
    depth: usize,
    /// The index of its first reference in [`Scan::refs`].
    refs_from: usize,
}

impl<'g> Scan<'g> {
    /// Walks every rule once, without recursion.
    fn of(grammar: &'g Grammar) -> Self {
        let n = grammar.rules.len();
        let mut scan = Scan {
            rules: Vec::with_capacity(n),
            refs: Vec::with_capacity(n * 4),
            repeats: Vec::with_capacity(n * 2),
            ..Scan::default()
        };
        // Scratch space for the walks: room for a few levels of nesting up front.
        let mut stack = Vec::with_capacity(32);
        for (index, rule) in grammar.rules.iter().enumerate() {
            scan.walk(index, &rule.body, &mut stack);
        }
        scan
    }

    /// Adds rule `index` with body `body`, walking it (`stack` is scratch space).
    fn walk(&mut self, index: usize, body: &'g Expr, stack: &mut Vec<Walked<'g>>) {
        let mut deepest = 0;
        let refs_from = self.refs.len();
        let mut size = 1u64;
        stack.push((body, 1usize, 1u64, 1u64));
        while let Some((expr, depth, copies, chain)) = stack.pop() {
            deepest = deepest.max(depth);
            let mut inner_copies = copies;
            let mut inner_chain = 1;
            let own = match expr {
                Expr::Ref { name, pos } => {
                    self.refs.push((name, *pos));
                    1
                }
                Expr::Repeat { min, max, .. } => {
                    self.repeats.push(expr);
                    self.symbol_bound = self
                        .symbol_bound
                        .saturating_add(max.map_or(1, |max| u64::from(max.saturating_sub(*min))));
                    inner_chain = chain.saturating_mul(repeat_total(*min, *max));
                    self.repeat_chain = self.repeat_chain.max(inner_chain);
                    let count = u64::from(max.unwrap_or(*min).max(*min)).saturating_add(1);
                    inner_copies = copies.saturating_mul(count);
                    // Two symbols, and the body counts at least one per copy.
                    count.saturating_add(2)
                }
                Expr::Class { ranges, .. } => {
                    self.empty_ranges
                        .extend(ranges.iter().filter(|r| r.lo > r.hi).map(|r| (index, *r)));
                    1
                }
                Expr::Alt(arms) => arms.len() as u64 + 1,
                Expr::Literal(text) => text.len() as u64,
                Expr::Any | Expr::Token { .. } => 1,
                Expr::Group(_) => {
                    self.symbol_bound = self.symbol_bound.saturating_add(1);
                    0
                }
                Expr::Seq(_) => 0,
            };
            size = size.saturating_add(own.saturating_mul(copies));
            stack.extend(
                expr.children()
                    .iter()
                    .rev()
                    .map(|c| (c, depth + 1, inner_copies, inner_chain)),
            );
        }
        self.size_bound = self.size_bound.saturating_add(size);
        self.symbol_bound = self.symbol_bound.saturating_add(1);
        self.rules.push(RuleScan {
            depth: deepest,
            refs_from,
        });
    }

    /// Where rule `index`'s references lie in [`Scan::refs`].
    fn refs_range(&self, index: usize) -> std::ops::Range<usize> {
        let start = self.rules[index].refs_from;
        let end = self
            .rules
            .get(index + 1)
            .map_or(self.refs.len(), |r| r.refs_from);
        start..end
    }
}

/// For each rule (its first definition), the rules it references; none for later
/// duplicate definitions.
fn reference_edges<'t>(
    grammar: &Grammar,
    defined: &Definitions<'_>,
    targets_of: impl Fn(usize) -> &'t [Option<usize>],
) -> Graph {
    let n = grammar.rules.len();
    let mut edges = Graph::with_capacity(n, n * 2);
    for index in 0..n {
        if defined.is_first(index) {
            for &target in targets_of(index).iter().flatten() {
                edges.push_target(target);
            }
        }
        edges.end_node();
    }
    edges
}

/// `true` when no diagnostic is an error.
pub fn is_clean(diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().all(|d| !d.is_error())
}

/// Maps each rule name to the index of its first definition; reports duplicates and a
/// missing `root`.
fn definitions<'g>(grammar: &'g Grammar, out: &mut Vec<Diagnostic>) -> Definitions<'g> {
    let defined = derives::definitions(grammar);
    for (index, rule) in grammar.rules.iter().enumerate() {
        if defined.is_first(index) {
            continue;
        }
        if let Some(&first) = defined.get(rule.name.as_str()) {
            let first_pos = grammar.rules[first].pos;
            out.push(
                Diagnostic::error(
                    "duplicate-rule",
                    Some(rule.pos),
                    format!(
                        "rule `{}` is defined twice (first at {first_pos})",
                        rule.name
                    ),
                )
                .with_help("llama.cpp keeps only the last definition; merge them with `|`"),
            );
        }
    }
    if !defined.contains_key("root") {
        out.push(
            Diagnostic::error(
                "missing-root",
                Some(Pos { line: 1, column: 1 }),
                "the grammar has no `root` rule, where llama.cpp starts",
            )
            .with_help("add `root ::= …` naming the start of the grammar"),
        );
    }
    defined
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::prelude::*;

    use super::limits::repeat_products;
    use super::*;
    use crate::gbnf::{arbitrary, parse};

    /// The repetition-product findings of the full replay, whatever the bound says.
    fn replayed_products(grammar: &Grammar) -> Vec<Diagnostic> {
        let scan = Scan::of(grammar);
        let defined = derives::definitions(grammar);
        let targets: Vec<Option<usize>> = scan
            .refs
            .iter()
            .map(|(name, _)| defined.get(name).copied())
            .collect();
        let mut out = Vec::new();
        repeat_products(grammar, &defined, &scan, &targets, &mut out);
        out
    }

    fn checked_products(grammar: &Grammar) -> Vec<Diagnostic> {
        check(grammar)
            .into_iter()
            .filter(|d| d.code == "repeat-product")
            .collect()
    }

    #[test]
    fn products_past_the_limit_are_found_through_the_bound() {
        for text in [
            "root ::= \"a\"{50}{50}\n",
            "root ::= (x y z){1000}\nx ::= \"x\"\ny ::= \"y\"\nz ::= \"z\"\n",
        ] {
            let grammar = parse(text).unwrap();
            let replayed = replayed_products(&grammar);
            assert!(!replayed.is_empty(), "{text}");
            assert_eq!(checked_products(&grammar), replayed, "{text}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Skipping the replay when the bound allows never hides a finding.
        #[test]
        fn the_bound_never_hides_a_product(grammar in arbitrary::any_grammar()) {
            let replayed = replayed_products(&grammar);
            prop_assert_eq!(checked_products(&grammar), replayed);
        }
    }

    #[test]
    fn the_size_bound_is_never_below_the_expanded_size() {
        let mut texts: Vec<String> = [
            "root ::= (\"\"){3} x? | \"abc\"+\nx ::= [a-z]{2,5} (\"é\" | y){0,4}\ny ::= ()* \"q\"\n",
            "root ::= ((\"a\"{2}){3}){4} \"\" | . <[12]>\n",
            "root ::= \"\"\n",
        ]
        .map(str::to_string)
        .to_vec();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../grammars");
        for entry in std::fs::read_dir(dir).unwrap() {
            texts.push(std::fs::read_to_string(entry.unwrap().path()).unwrap());
        }
        for text in texts {
            let grammar = parse(&text).unwrap();
            let scan = Scan::of(&grammar);
            assert!(
                scan.size_bound >= derives::expanded_size(&grammar),
                "{text}: bound {} below size {}",
                scan.size_bound,
                derives::expanded_size(&grammar)
            );
        }
    }
}
