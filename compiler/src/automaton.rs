//! Deterministic automata written as GBNF: explore the states reachable from the start,
//! drop the dead ones, minimize, and print one right-linear rule per state. The number
//! machines of `schema::numeric` (over number text) and the length-bounded patterns of
//! [`crate::pattern`] (over character classes) are built on it.

use crate::gbnf::ast::CompactString;
use crate::gbnf::Expr;
use compact_str::ToCompactString as _;
use rustc_hash::FxHashMap as HashMap;
use std::hash::Hash;

/// Rules for a language that needs named rules: add each `(name, body)` to the grammar
/// and use `root` where the language is wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSet {
    /// The expression matching the language (may refer to `rules`).
    pub root: Expr,
    /// Helper rules, named `{prefix}-{n}`.
    pub rules: Vec<(String, Expr)>,
}

/// Why an automaton has no rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AutomatonError {
    /// It accepts nothing.
    Empty,
    /// More states than allowed were reached.
    TooManyStates,
    /// The minimized automaton needs more rules than allowed.
    TooManyRules,
}

/// No state (a transition that does not exist); also "no class yet".
const NO_STATE: u32 = u32::MAX;

/// An automaton as a table: per state (the start first), the state each symbol leads to
/// (or [`NO_STATE`]), and whether it accepts.
pub(crate) struct Table {
    trans: Vec<Vec<u32>>,
    accepting: Vec<bool>,
}

/// The states reachable from `start` over `symbols` symbols (`step` gives the next
/// state, `accepts` says which accept), in breadth-first order.
///
/// # Errors
/// [`AutomatonError::TooManyStates`] past `max_states`.
pub(crate) fn explore<S: Copy + Eq + Hash>(
    start: S,
    symbols: usize,
    step: impl Fn(S, usize) -> Option<S>,
    accepts: impl Fn(S) -> bool,
    max_states: usize,
) -> Result<Table, AutomatonError> {
    let mut index: HashMap<S, u32> = HashMap::default();
    let mut states = vec![start];
    let mut trans: Vec<Vec<u32>> = Vec::new();
    index.insert(start, 0);
    while let Some(&state) = states.get(trans.len()) {
        let mut row = vec![NO_STATE; symbols];
        for (j, slot) in row.iter_mut().enumerate() {
            let Some(target) = step(state, j) else {
                continue;
            };
            *slot = match index.get(&target) {
                Some(&id) => id,
                None => {
                    if states.len() >= max_states {
                        return Err(AutomatonError::TooManyStates);
                    }
                    let id = states.len() as u32;
                    states.push(target);
                    index.insert(target, id);
                    id
                }
            };
        }
        trans.push(row);
    }
    let accepting = states.into_iter().map(accepts).collect();
    Ok(Table { trans, accepting })
}

/// The language of `table` as right-linear rules named `{prefix}-{n}`, one per state of
/// the minimized automaton, numbered breadth-first from the start; `label` writes the
/// symbols (indices, ascending) that lead from one state to another.
///
/// # Errors
/// [`AutomatonError::Empty`] when the language is empty; [`AutomatonError::TooManyRules`]
/// past `max_rules` rules.
pub(crate) fn write(
    table: Table,
    prefix: &str,
    label: impl Fn(&[usize]) -> Expr,
    max_rules: usize,
) -> Result<RuleSet, AutomatonError> {
    let Table { trans, accepting } = table;
    let trans = only_live(trans, &accepting);
    if !accepting[0] && trans[0].iter().all(|&t| t == NO_STATE) {
        return Err(AutomatonError::Empty);
    }
    let (class, count) = minimize(&trans, &accepting);

    // Number the classes in breadth-first order from the start; each class is
    // written from the first of its states reached.
    let mut number = vec![NO_STATE; count];
    let mut representative: Vec<usize> = Vec::with_capacity(count);
    number[class[0] as usize] = 0;
    representative.push(0);
    let mut next = 0;
    while let Some(&s) = representative.get(next) {
        next += 1;
        for &t in trans[s].iter().filter(|&&t| t != NO_STATE) {
            let c = class[t as usize] as usize;
            if number[c] == NO_STATE {
                number[c] = representative.len() as u32;
                representative.push(t as usize);
            }
        }
    }
    if representative.len() > max_rules {
        return Err(AutomatonError::TooManyRules);
    }
    let names: Vec<CompactString> = (0..representative.len())
        .map(|i| {
            // compact_str writes an integer without the formatter.
            let number = i.to_compact_string();
            let mut name = CompactString::with_capacity(prefix.len() + 1 + number.len());
            name.push_str(prefix);
            name.push('-');
            name.push_str(&number);
            name
        })
        .collect();
    let mut targeted = vec![false; representative.len()];
    let mut bodies = Vec::with_capacity(representative.len());
    for &s in &representative {
        let mut arms = Vec::new();
        if accepting[s] {
            arms.push(Expr::empty());
        }
        // Per target (by number): the symbols leading there.
        let mut moves: Vec<(u32, Vec<usize>)> = Vec::new();
        for (j, &t) in trans[s].iter().enumerate() {
            if t == NO_STATE {
                continue;
            }
            let target = number[class[t as usize] as usize];
            match moves.iter_mut().find(|(to, _)| *to == target) {
                Some((_, symbols)) => symbols.push(j),
                None => moves.push((target, vec![j])),
            }
        }
        moves.sort_unstable_by_key(|(target, _)| *target);
        for (target, symbols) in moves {
            let target = target as usize;
            targeted[target] = true;
            arms.push(Expr::seq([
                label(&symbols),
                Expr::rule(names[target].clone()),
            ]));
        }
        bodies.push(Expr::alt(arms));
    }
    let mut rules = Vec::with_capacity(bodies.len());
    let mut root = Expr::rule(names[0].clone());
    for (i, body) in bodies.into_iter().enumerate() {
        if i == 0 && !targeted[0] {
            root = body;
        } else {
            rules.push((names[i].to_string(), body));
        }
    }
    Ok(RuleSet { root, rules })
}

/// `trans` without the transitions into states from which nothing is accepted.
fn only_live(mut trans: Vec<Vec<u32>>, accepting: &[bool]) -> Vec<Vec<u32>> {
    let n = trans.len();
    // Each state's predecessors, laid out one state after another.
    let mut start = vec![0usize; n + 1];
    for &t in trans.iter().flatten().filter(|&&t| t != NO_STATE) {
        start[t as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut from = vec![0u32; start[n]];
    for (s, row) in trans.iter().enumerate() {
        for &t in row.iter().filter(|&&t| t != NO_STATE) {
            from[fill[t as usize]] = s as u32;
            fill[t as usize] += 1;
        }
    }
    let mut live = accepting.to_vec();
    let mut stack: Vec<usize> = (0..n).filter(|&s| accepting[s]).collect();
    while let Some(s) = stack.pop() {
        for &f in &from[start[s]..start[s + 1]] {
            if !live[f as usize] {
                live[f as usize] = true;
                stack.push(f as usize);
            }
        }
    }
    for t in trans.iter_mut().flatten() {
        if *t != NO_STATE && !live[*t as usize] {
            *t = NO_STATE;
        }
    }
    trans
}

/// Moore's partition refinement: each state's class of equivalent states (states from
/// which the same texts are accepted), and how many classes there are.
fn minimize(trans: &[Vec<u32>], accepting: &[bool]) -> (Vec<u32>, usize) {
    let n = trans.len();
    let mut class: Vec<u32> = accepting.iter().map(|&a| u32::from(a)).collect();
    let mut refined = vec![NO_STATE; n];
    let mut ids: HashMap<(u32, Vec<u32>), u32> = HashMap::default();
    ids.reserve(n);
    let mut count = 0;
    loop {
        ids.clear();
        for s in 0..n {
            let signature: Vec<u32> = trans[s]
                .iter()
                .map(|&t| if t == NO_STATE { t } else { class[t as usize] })
                .collect();
            let fresh = ids.len() as u32;
            refined[s] = *ids.entry((class[s], signature)).or_insert(fresh);
        }
        std::mem::swap(&mut class, &mut refined);
        if ids.len() == count {
            return (class, count);
        }
        count = ids.len();
    }
}
