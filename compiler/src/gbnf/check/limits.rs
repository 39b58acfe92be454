//! What llama.cpp refuses or cannot expand: rule names, references, repetition counts
//! and their products, character classes.

use rustc_hash::FxHashSet;

use super::{repeat_total, Scan};
use crate::diagnostic::Diagnostic;
use crate::gbnf::ast::{Expr, Grammar};
use crate::gbnf::derives::Definitions;
use crate::gbnf::flat::MAX_REPEAT;

pub(super) fn names(grammar: &Grammar, out: &mut Vec<Diagnostic>) {
    for rule in &grammar.rules {
        if let Some(bad) = rule
            .name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
        {
            let fixed: String = rule
                .name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            out.push(
                Diagnostic::error(
                    "rule-name",
                    Some(rule.pos),
                    format!(
                        "rule name `{}` contains `{bad}`: llama.cpp accepts only letters, digits and `-`",
                        rule.name
                    ),
                )
                .with_help(format!("rename it to `{fixed}`")),
            );
        }
    }
}

/// Reports references to undefined rules, and rules that `root` never reaches.
pub(super) fn references<'t>(
    grammar: &Grammar,
    defined: &Definitions<'_>,
    scan: &Scan<'_>,
    targets: &'t [Option<usize>],
    targets_of: impl Fn(usize) -> &'t [Option<usize>],
    out: &mut Vec<Diagnostic>,
) {
    for (&(name, pos), target) in scan.refs.iter().zip(targets) {
        if target.is_none() {
            out.push(
                Diagnostic::error(
                    "undefined-rule",
                    Some(pos),
                    format!("rule `{name}` is used but never defined"),
                )
                .with_help(format!("define `{name} ::= …` or fix the name")),
            );
        }
    }
    let Some(&root) = defined.get("root") else {
        return;
    };
    let mut reached = vec![false; grammar.rules.len()];
    reached[root] = true;
    let mut queue = Vec::with_capacity(grammar.rules.len());
    queue.push(root);
    while let Some(index) = queue.pop() {
        // Only first definitions are queued: references name those.
        for &target in targets_of(index).iter().flatten() {
            if !reached[target] {
                reached[target] = true;
                queue.push(target);
            }
        }
    }
    for (index, rule) in grammar.rules.iter().enumerate() {
        if !reached[index] && defined.is_first(index) {
            out.push(
                Diagnostic::warning(
                    "unused-rule",
                    Some(rule.pos),
                    format!("rule `{}` is never reached from `root`", rule.name),
                )
                .with_help("remove it, or reference it"),
            );
        }
    }
}

/// Repetition bounds, as llama.cpp's parser limits them: each bound at most 2000, the
/// minimum not above the maximum, and the number of rules a repetition makes llama.cpp
/// generate (rules inside a repeated group, times the count) at most 2000.
pub(super) fn repetitions(
    grammar: &Grammar,
    defined: &Definitions<'_>,
    scan: &Scan<'_>,
    targets: &[Option<usize>],
    out: &mut Vec<Diagnostic>,
) {
    for e in &scan.repeats {
        if let Expr::Repeat {
            expr,
            min,
            max,
            pos,
            ..
        } = e
        {
            for bound in std::iter::once(*min).chain(*max) {
                if bound > MAX_REPEAT {
                    out.push(
                        Diagnostic::error(
                            "repeat-bound",
                            Some(*pos),
                            format!("repetition bound {bound} is above llama.cpp's limit of {MAX_REPEAT}"),
                        )
                        .with_help("split it, e.g. `x{0,3000}` as `x{0,1500} x{0,1500}`"),
                    );
                }
            }
            if let Expr::Repeat {
                max: Some(0),
                pos: inner_pos,
                ..
            } = expr.as_ref()
            {
                out.push(
                    Diagnostic::error(
                        "empty-repeat",
                        Some(*inner_pos),
                        "nothing to repeat: the item before this operator is repeated zero times, so llama.cpp sees no item",
                    )
                    .with_help("remove the `{0}` repetition, or group it: `(x{0})*`"),
                );
            }
            if max.is_some_and(|max| max < *min) {
                out.push(Diagnostic::error(
                    "repeat-bound",
                    Some(*pos),
                    format!(
                        "repetition minimum {min} is above its maximum {}",
                        max.unwrap_or(0)
                    ),
                ));
            }
        }
    }
    // No item can make more symbols than the whole grammar does, so within the limit no
    // product can pass it.
    let undefined = targets.iter().filter(|t| t.is_none()).count() as u64;
    let symbols = scan.symbol_bound.saturating_add(undefined).max(1);
    if symbols.saturating_mul(scan.repeat_chain.max(1)) > u64::from(MAX_REPEAT) {
        repeat_products(grammar, defined, scan, targets, out);
    }
}

/// Reports repetitions whose generated-rule product passes llama.cpp's limit, replaying
/// its symbol-table growth over the whole grammar ([`SymbolSimulation`]).
pub(super) fn repeat_products(
    grammar: &Grammar,
    defined: &Definitions<'_>,
    scan: &Scan<'_>,
    targets: &[Option<usize>],
    out: &mut Vec<Diagnostic>,
) {
    let mut sim = SymbolSimulation {
        seen: vec![false; grammar.rules.len()],
        undefined_seen: FxHashSet::default(),
        refs: scan
            .refs
            .iter()
            .map(|(name, _)| *name)
            .zip(targets.iter().copied()),
        symbols: 0,
    };
    for (index, rule) in grammar.rules.iter().enumerate() {
        let first = if defined.is_first(index) {
            Some(index)
        } else {
            defined.get(rule.name.as_str()).copied()
        };
        sim.see(&rule.name, first);
        sim.alternates(&rule.body, out);
    }
}

/// Replays llama.cpp's symbol-table growth while it parses, to find repetitions whose
/// generated-rule product exceeds its limit (`llama-grammar.cpp`, `handle_repetitions`).
///
/// It walks the rules in the order [`Scan`] did, so the `n`-th reference it meets is
/// `refs`' `n`-th, already resolved to its rule.
pub(super) struct SymbolSimulation<'g, R> {
    /// Per rule (first definitions): its name has been met.
    seen: Vec<bool>,
    /// Undefined names met.
    undefined_seen: FxHashSet<&'g str>,
    /// The references, in walking order, with the rule each names.
    refs: R,
    symbols: u64,
}

impl<'g, R: Iterator<Item = (&'g str, Option<usize>)>> SymbolSimulation<'g, R> {
    fn see(&mut self, name: &'g str, rule: Option<usize>) {
        let new = match rule {
            Some(index) => !std::mem::replace(&mut self.seen[index], true),
            None => self.undefined_seen.insert(name),
        };
        if new {
            self.symbols += 1;
        }
    }

    fn alternates(&mut self, expr: &'g Expr, out: &mut Vec<Diagnostic>) {
        match expr {
            Expr::Alt(arms) => arms.iter().for_each(|arm| self.sequence(arm, out)),
            other => self.sequence(other, out),
        }
    }

    fn sequence(&mut self, expr: &'g Expr, out: &mut Vec<Diagnostic>) {
        match expr {
            Expr::Seq(items) => {
                for item in items {
                    self.item(item, out);
                }
            }
            other => {
                self.item(other, out);
            }
        }
    }

    /// One primary with its chain of postfix operators; returns llama.cpp's `n_prev_rules`.
    fn item(&mut self, expr: &'g Expr, out: &mut Vec<Diagnostic>) -> u64 {
        match expr {
            Expr::Repeat {
                expr,
                min,
                max,
                pos,
            } => {
                let n_prev = self.item(expr, out);
                let total = repeat_total(*min, *max);
                let (min, max) = (u64::from(*min), max.map(u64::from));
                let product = n_prev.saturating_mul(total);
                let bounds_ok = min <= u64::from(MAX_REPEAT)
                    && max.is_none_or(|max| max <= u64::from(MAX_REPEAT));
                if bounds_ok && product > u64::from(MAX_REPEAT) {
                    out.push(
                        Diagnostic::error(
                            "repeat-product",
                            Some(*pos),
                            format!(
                                "this repetition makes llama.cpp generate {product} rules (at most {MAX_REPEAT})"
                            ),
                        )
                        .with_help("move the repeated group into a rule of its own, or lower the bound"),
                    );
                }
                self.symbols += max.map_or(1, |max| max.saturating_sub(min));
                product
            }
            Expr::Group(inner) => {
                let before = self.symbols;
                self.symbols += 1;
                self.alternates(inner, out);
                (self.symbols - before).max(1)
            }
            Expr::Ref { name, .. } => {
                let (scanned, rule) = self.refs.next().unwrap_or((name, None));
                debug_assert_eq!(scanned, name.as_str(), "the walk left the scan's order");
                self.see(name, rule);
                1
            }
            Expr::Seq(_) | Expr::Alt(_) => {
                // Not normal form; treat as a group for the count.
                let before = self.symbols;
                self.alternates(expr, out);
                (self.symbols - before).max(1)
            }
            Expr::Literal(_) | Expr::Class { .. } | Expr::Any | Expr::Token { .. } => 1,
        }
    }
}

pub(super) fn classes(grammar: &Grammar, scan: &Scan<'_>, out: &mut Vec<Diagnostic>) {
    for &(index, r) in &scan.empty_ranges {
        let rule = &grammar.rules[index];
        out.push(
            Diagnostic::error(
                "empty-range",
                Some(rule.pos),
                format!(
                    "in rule `{}`: the class range `{}-{}` is empty (its start is after its end)",
                    rule.name,
                    r.lo.escape_debug(),
                    r.hi.escape_debug()
                ),
            )
            .with_help(format!(
                "write it as `{}-{}`",
                r.hi.escape_debug(),
                r.lo.escape_debug()
            )),
        );
    }
}
