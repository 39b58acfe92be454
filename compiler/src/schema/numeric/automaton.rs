//! Deterministic automata over number text ([`SYMBOLS`]), written as GBNF by
//! [`crate::automaton`]: the integer and decimal `multipleOf` machines are built on it.

use super::{NumericError, Result, MAX_EXPLORED, MAX_RULES};
use crate::automaton::{self, AutomatonError, RuleSet};
use crate::gbnf::Expr;
use std::hash::Hash;

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
    let table = automaton::explore(
        machine.start(),
        SYMBOLS.len(),
        |state, j| machine.step(state, SYMBOLS[j]),
        |state| machine.accepts(state),
        MAX_EXPLORED,
    )
    .map_err(refusal)?;
    let label =
        |symbols: &[usize]| symbols_of(symbols.iter().fold(0u16, |mask, &j| mask | (1 << j)));
    automaton::write(table, prefix, label, MAX_RULES).map_err(refusal)
}

/// The numeric error for an automaton's refusal.
fn refusal(error: AutomatonError) -> NumericError {
    match error {
        AutomatonError::Empty => NumericError::Empty,
        AutomatonError::TooManyStates => NumericError::TooComplex(format!(
            "multipleOf within these bounds needs an automaton of more than {MAX_EXPLORED} states"
        )),
        AutomatonError::TooManyRules => NumericError::TooComplex(format!(
            "multipleOf within these bounds needs more than {MAX_RULES} grammar rules"
        )),
    }
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
