//! `multipleOf` for integers: the divisor a step imposes, and the canonical multiples
//! (within bounds) as a minimized right-linear automaton, one rule per state.

use super::automaton::{self, check_prefix, TextAutomaton};
use super::exact::{Dec, Int};
use super::{NumericError, Result, MAX_MULTIPLE};
use crate::automaton::RuleSet;
use serde_json::Number;
use std::cmp::Ordering;

/// The divisor that `multipleOf: q` imposes on integers: the numerator of `q` in lowest
/// terms (an integer `n` is a multiple of `a/b`, with `a` and `b` coprime, exactly when
/// `a` divides `n`). So `multipleOf: 2.5` gives `5`, `0.5` gives `1`, `6` gives `6`. The
/// value is read exactly from `q`'s decimal text.
///
/// # Errors
/// [`NumericError::InvalidMultiple`] unless `q > 0`; [`NumericError::TooComplex`] when the
/// numerator does not fit in a `u64`.
pub fn integer_step(multiple_of: &Number) -> Result<u64> {
    let q = Dec::from_number(multiple_of)?;
    if q.neg || q.is_zero() {
        return Err(NumericError::InvalidMultiple(multiple_of.to_string()));
    }
    let too_big = || NumericError::TooComplex(format!("multipleOf {multiple_of} is too large"));
    if q.digits.len() > 38 {
        return Err(too_big());
    }
    let mut m: u128 = 0;
    for &d in &q.digits {
        m = m * 10 + u128::from(d - b'0');
    }
    if q.exp >= 0 {
        for _ in 0..q.exp {
            m = m.checked_mul(10).ok_or_else(too_big)?;
        }
    } else {
        // Divide out the factors of 2 and 5 shared with 10^s.
        let s = q.exp.unsigned_abs();
        for p in [2u128, 5] {
            let mut left = s;
            while left > 0 && m.is_multiple_of(p) {
                m /= p;
                left -= 1;
            }
        }
    }
    u64::try_from(m).map_err(|_| too_big())
}

/// Canonical integer texts (as [`integer_range`](super::integer_range)) divisible by `k`, as a right-linear
/// grammar: one rule per remainder class that matters (the minimized automaton), named
/// `{prefix}-{n}`. `prefix` must be non-empty and use only `[a-zA-Z0-9-]`; pick one no
/// other rule name starts with.
///
/// # Errors
/// [`NumericError::InvalidMultiple`] for `k == 0`; [`NumericError::TooComplex`] for
/// `k > MAX_MULTIPLE`; [`NumericError::InvalidPrefix`].
///
/// ```
/// use gbnfc_compiler::gbnf::Grammar;
/// use gbnfc_compiler::recognize::Recognizer;
/// use gbnfc_compiler::schema::numeric::integer_multiple_of;
/// let rules = integer_multiple_of(7, "mult7").unwrap();
/// let mut g = Grammar::default();
/// g.push("root", rules.root);
/// for (name, body) in rules.rules {
///     g.push(name, body);
/// }
/// let r = Recognizer::new(&g).unwrap();
/// assert!(r.recognize("-49").accepted && r.recognize("0").accepted);
/// assert!(!r.recognize("50").accepted);
/// ```
pub fn integer_multiple_of(k: u64, prefix: &str) -> Result<RuleSet> {
    integer_multiple_of_in_range(k, None, None, prefix)
}

/// Canonical integer texts divisible by `k` with `min <= n <= max` (bounds as in
/// [`integer_range`](super::integer_range)), built as the product of the range automaton and the remainder
/// automaton, minimized, one rule per state (see [`integer_multiple_of`] for naming).
/// Small products only: bounds of `d` digits give about `3·d·k` states before
/// minimization.
///
/// # Errors
/// As [`integer_multiple_of`] and [`integer_range`](super::integer_range), plus [`NumericError::TooComplex`]
/// when the automaton needs more than [`MAX_RULES`](super::MAX_RULES) rules (enforce the constraint by
/// validation then), and [`NumericError::Empty`] when no multiple is in range.
pub fn integer_multiple_of_in_range(
    k: u64,
    min: Option<&str>,
    max: Option<&str>,
    prefix: &str,
) -> Result<RuleSet> {
    if k == 0 {
        return Err(NumericError::InvalidMultiple("0".to_string()));
    }
    if k > MAX_MULTIPLE {
        return Err(NumericError::TooComplex(format!(
            "multipleOf {k} is above {MAX_MULTIPLE}, the largest divisor enforced by the grammar"
        )));
    }
    check_prefix(prefix)?;
    let lo = min.map(Int::parse).transpose()?;
    let hi = max.map(Int::parse).transpose()?;
    if let (Some(l), Some(h)) = (&lo, &hi) {
        if l > h {
            return Err(NumericError::Empty);
        }
    }
    automaton::rules(&Machine::new(k, lo.as_ref(), hi.as_ref()), prefix)
}

/// Constraints on the magnitude of one sign's numbers (all `>= 1`).
#[derive(Debug)]
pub(super) struct MagBounds {
    lo: Option<Vec<u8>>,
    hi: Option<Vec<u8>>,
}

/// Where the reading of an integer's text stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum State {
    Start,
    Minus,
    Zero,
    Mag {
        neg: bool,
        len: usize,
        lo: Ordering,
        hi: Ordering,
        rem: u64,
    },
}

/// The canonical integer texts divisible by `k` within bounds, read a character at a time:
/// the sign, then the magnitude's digits compared with the bounds' and its remainder.
pub(super) struct Machine {
    k: u64,
    pos: Option<MagBounds>,
    neg: Option<MagBounds>,
    zero: bool,
}

impl Machine {
    pub(super) fn new(k: u64, lo: Option<&Int>, hi: Option<&Int>) -> Machine {
        let one = Int::new(false, b"1".to_vec());
        let minus_one = Int::new(true, b"1".to_vec());
        let zero = lo.is_none_or(|l| l.neg || l.mag == b"0") && hi.is_none_or(|h| !h.neg);
        let pos = hi.is_none_or(|h| *h >= one).then(|| MagBounds {
            lo: lo.filter(|l| **l > one).map(|l| l.mag.clone()),
            hi: hi.map(|h| h.mag.clone()),
        });
        let neg = lo.is_none_or(|l| *l <= minus_one).then(|| MagBounds {
            lo: hi.filter(|h| **h < minus_one).map(|h| h.mag.clone()),
            hi: lo.map(|l| l.mag.clone()),
        });
        Machine { k, pos, neg, zero }
    }

    fn bounds(&self, neg: bool) -> Option<&MagBounds> {
        if neg {
            self.neg.as_ref()
        } else {
            self.pos.as_ref()
        }
    }

    /// Appends digit `d` to a magnitude of `len` digits compared `lo`/`hi` so far.
    fn digit(
        &self,
        neg: bool,
        len: usize,
        lo: Ordering,
        hi: Ordering,
        rem: u64,
        d: u8,
    ) -> Option<State> {
        let bounds = self.bounds(neg)?;
        let n = len + 1;
        let lo = match &bounds.lo {
            None => Ordering::Greater,
            Some(b) if n > b.len() => Ordering::Greater,
            Some(b) if lo == Ordering::Equal => d.cmp(&b[n - 1]),
            Some(_) => lo,
        };
        let hi = match &bounds.hi {
            None => Ordering::Less,
            Some(b) if n > b.len() => return None,
            Some(b) if hi == Ordering::Equal => d.cmp(&b[n - 1]),
            Some(_) => hi,
        };
        // Without an upper bound, lengths past the lower bound's no longer matter.
        let len = match (&bounds.hi, &bounds.lo) {
            (None, lo_bound) => n.min(lo_bound.as_ref().map_or(0, Vec::len) + 1),
            (Some(_), _) => n,
        };
        let rem = (rem * 10 + u64::from(d - b'0')) % self.k;
        Some(State::Mag {
            neg,
            len,
            lo,
            hi,
            rem,
        })
    }
}

impl TextAutomaton for Machine {
    type State = State;

    fn start(&self) -> State {
        State::Start
    }

    fn step(&self, state: State, symbol: u8) -> Option<State> {
        let fresh = |neg: bool| self.digit(neg, 0, Ordering::Equal, Ordering::Equal, 0, symbol);
        match (state, symbol) {
            (State::Start, b'-') => self.neg.as_ref().map(|_| State::Minus),
            (State::Start, b'0') => self.zero.then_some(State::Zero),
            (State::Start, b'1'..=b'9') => fresh(false),
            (State::Minus, b'1'..=b'9') => fresh(true),
            (
                State::Mag {
                    neg,
                    len,
                    lo,
                    hi,
                    rem,
                },
                b'0'..=b'9',
            ) => self.digit(neg, len, lo, hi, rem, symbol),
            _ => None,
        }
    }

    fn accepts(&self, state: State) -> bool {
        match state {
            State::Zero => true,
            State::Start | State::Minus => false,
            State::Mag {
                neg,
                len,
                lo,
                hi,
                rem,
            } => {
                let Some(bounds) = self.bounds(neg) else {
                    return false;
                };
                let lo_ok = bounds
                    .lo
                    .as_ref()
                    .is_none_or(|b| len > b.len() || (len == b.len() && lo != Ordering::Less));
                let hi_ok = bounds
                    .hi
                    .as_ref()
                    .is_none_or(|b| len < b.len() || (len == b.len() && hi != Ordering::Greater));
                rem == 0 && lo_ok && hi_ok
            }
        }
    }
}
