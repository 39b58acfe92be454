//! Deterministic automata over number text, written as GBNF: explore the states reachable
//! from the start, drop the dead ones, minimize, and print one right-linear rule per
//! state. The integer and decimal `multipleOf` machines are built on it.

use super::{NumericError, Result, MAX_EXPLORED, MAX_RULES};
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

/// A deterministic automaton over the [`SYMBOLS`] of number text.
pub(super) trait TextAutomaton {
    /// A state; states that compare equal are one state.
    type State: Copy + Eq + Hash;
    /// The state before any symbol.
    fn start(&self) -> Self::State;
    /// The state `symbol` leads to from `state`, if any.
    fn step(&self, state: Self::State, symbol: u8) -> Option<Self::State>;
    /// Whether the text read so far is in the language.
    fn accepts(&self, state: Self::State) -> bool;
}

/// Input symbols: `-`, `.`, then the digits (in ASCII order).
pub(super) const SYMBOLS: [u8; 12] = *b"-.0123456789";

/// One state's transitions, by symbol: the next state's number, or [`NO_STATE`].
type Row = [u32; SYMBOLS.len()];

/// No state (a transition that does not exist); also "no class yet".
const NO_STATE: u32 = u32::MAX;

/// Refuses a rule-name prefix llama.cpp would not read: `prefix` must be non-empty and use
/// only `[a-zA-Z0-9-]`.
pub(super) fn check_prefix(prefix: &str) -> Result<()> {
    if prefix.is_empty()
        || !prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err(NumericError::InvalidPrefix(prefix.to_string()));
    }
    Ok(())
}

/// The language of `machine` as right-linear rules named `{prefix}-{n}`, one per state of
/// the minimized automaton, numbered breadth-first from the start.
///
/// # Errors
/// [`NumericError::Empty`] when the language is empty; [`NumericError::TooComplex`] past
/// [`MAX_EXPLORED`] states explored or [`MAX_RULES`] rules.
pub(super) fn rules<A: TextAutomaton>(machine: &A, prefix: &str) -> Result<RuleSet> {
    let (states, trans) = explore(machine)?;
    let accepting: Vec<bool> = states.iter().map(|&s| machine.accepts(s)).collect();
    let trans = only_live(trans, &accepting);
    if !accepting[0] && trans[0].iter().all(|&t| t == NO_STATE) {
        return Err(NumericError::Empty);
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
    if representative.len() > MAX_RULES {
        return Err(too_many_rules());
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
        let mut arms = Vec::with_capacity(SYMBOLS.len() + 1);
        if accepting[s] {
            arms.push(Expr::empty());
        }
        // Per target (by number): the symbols leading there, a bit each.
        let mut moves: Vec<(u32, u16)> = Vec::with_capacity(SYMBOLS.len());
        for (j, &t) in trans[s].iter().enumerate() {
            if t == NO_STATE {
                continue;
            }
            let target = number[class[t as usize] as usize];
            match moves.iter_mut().find(|(to, _)| *to == target) {
                Some((_, symbols)) => *symbols |= 1 << j,
                None => moves.push((target, 1 << j)),
            }
        }
        moves.sort_unstable_by_key(|&(target, _)| target);
        for (target, symbols) in moves {
            let target = target as usize;
            targeted[target] = true;
            // A class or literal, then a rule: already a sequence in normal form.
            arms.push(Expr::Seq(vec![
                symbols_of(symbols),
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

/// The states reachable from the start, in breadth-first order, and each one's
/// transitions (`trans[s][j]`: the state symbol `j` leads to from `s`, or [`NO_STATE`]).
fn explore<A: TextAutomaton>(machine: &A) -> Result<(Vec<A::State>, Vec<Row>)> {
    let mut index: HashMap<A::State, u32> = HashMap::default();
    let mut states = vec![machine.start()];
    let mut trans: Vec<Row> = Vec::new();
    index.insert(machine.start(), 0);
    while let Some(&state) = states.get(trans.len()) {
        let mut row = [NO_STATE; SYMBOLS.len()];
        for (j, &symbol) in SYMBOLS.iter().enumerate() {
            let Some(target) = machine.step(state, symbol) else {
                continue;
            };
            row[j] = match index.get(&target) {
                Some(&id) => id,
                None => {
                    if states.len() >= MAX_EXPLORED {
                        return Err(too_many_states());
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
    Ok((states, trans))
}

/// `trans` without the transitions into states from which nothing is accepted.
fn only_live(mut trans: Vec<Row>, accepting: &[bool]) -> Vec<Row> {
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
fn minimize(trans: &[Row], accepting: &[bool]) -> (Vec<u32>, usize) {
    let n = trans.len();
    let mut class: Vec<u32> = accepting.iter().map(|&a| u32::from(a)).collect();
    let mut refined = vec![NO_STATE; n];
    let mut ids: HashMap<(u32, Row), u32> = HashMap::default();
    ids.reserve(n);
    let mut count = 0;
    loop {
        ids.clear();
        for s in 0..n {
            let mut signature = trans[s];
            for t in &mut signature {
                if *t != NO_STATE {
                    *t = class[*t as usize];
                }
            }
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

fn too_many_rules() -> NumericError {
    NumericError::TooComplex(format!(
        "multipleOf within these bounds needs more than {MAX_RULES} grammar rules"
    ))
}

fn too_many_states() -> NumericError {
    NumericError::TooComplex(format!(
        "multipleOf within these bounds needs an automaton of more than {MAX_EXPLORED} states"
    ))
}

/// A class (or literal) for the [`SYMBOLS`] whose bits `mask` sets: one range per run of
/// symbols adjacent in ASCII (`-` and `.` are; `.` and `0` are not).
fn symbols_of(mask: u16) -> Expr {
    if mask.count_ones() == 1 {
        let symbol = char::from(SYMBOLS[mask.trailing_zeros() as usize]);
        return Expr::literal(&*symbol.encode_utf8(&mut [0; 4]));
    }
    let mut ranges: Vec<(char, char)> = Vec::new();
    for (j, &symbol) in SYMBOLS.iter().enumerate() {
        if mask & (1 << j) == 0 {
            continue;
        }
        let symbol = char::from(symbol);
        match ranges.last_mut() {
            Some((_, last)) if u32::from(*last) + 1 == u32::from(symbol) => *last = symbol,
            _ => ranges.push((symbol, symbol)),
        }
    }
    Expr::class(false, ranges)
}
