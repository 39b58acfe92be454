//! `multipleOf` for integers: the divisor a step imposes, and the canonical multiples
//! (within bounds) as a minimized right-linear automaton, one rule per state.

use super::exact::{Dec, Int};
use super::{NumericError, Result, MAX_EXPLORED, MAX_MULTIPLE, MAX_RULES};
use crate::gbnf::ast::CompactString;
use crate::gbnf::Expr;
use compact_str::ToCompactString as _;
use rustc_hash::FxHashMap as HashMap;
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

/// Rules for a language that needs named rules: add each `(name, body)` to the grammar
/// and use `root` where the language is wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSet {
    /// The expression matching the language (may refer to `rules`).
    pub root: Expr,
    /// Helper rules, named `{prefix}-{n}`.
    pub rules: Vec<(String, Expr)>,
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
/// when the automaton needs more than [`MAX_RULES`] rules (enforce the constraint by
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
    if prefix.is_empty()
        || !prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err(NumericError::InvalidPrefix(prefix.to_string()));
    }
    let lo = min.map(Int::parse).transpose()?;
    let hi = max.map(Int::parse).transpose()?;
    if let (Some(l), Some(h)) = (&lo, &hi) {
        if l > h {
            return Err(NumericError::Empty);
        }
    }
    let machine = Machine::new(k, lo.as_ref(), hi.as_ref());
    machine.rules(prefix)
}

/// Constraints on the magnitude of one sign's numbers (all `>= 1`).
#[derive(Debug)]
pub(super) struct MagBounds {
    lo: Option<Vec<u8>>,
    hi: Option<Vec<u8>>,
}

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

/// Input symbols: `-` then the digits.
pub(super) const SYMBOLS: [u8; 11] = *b"-0123456789";

/// One state's transitions, by symbol: the next state's number, or [`NO_STATE`].
pub(super) type Row = [u32; SYMBOLS.len()];

/// No state (a transition that does not exist); also "no class yet".
pub(super) const NO_STATE: u32 = u32::MAX;

pub(super) struct Machine {
    k: u64,
    pos: Option<MagBounds>,
    neg: Option<MagBounds>,
    zero: bool,
}

impl Machine {
    fn new(k: u64, lo: Option<&Int>, hi: Option<&Int>) -> Machine {
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

    fn rules(&self, prefix: &str) -> Result<RuleSet> {
        let (states, trans) = self.explore()?;
        let accepting: Vec<bool> = states.iter().map(|&s| self.accepts(s)).collect();
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
    /// transitions (`trans[s][j]`: the state symbol `j` leads to from `s`, or
    /// [`NO_STATE`]).
    fn explore(&self) -> Result<(Vec<State>, Vec<Row>)> {
        let mut index: HashMap<State, u32> = HashMap::default();
        let mut states = vec![State::Start];
        let mut trans: Vec<Row> = Vec::new();
        index.insert(State::Start, 0);
        while let Some(&state) = states.get(trans.len()) {
            let mut row = [NO_STATE; SYMBOLS.len()];
            for (j, &symbol) in SYMBOLS.iter().enumerate() {
                let Some(target) = self.step(state, symbol) else {
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
}

/// `trans` without the transitions into states from which nothing is accepted.
pub(super) fn only_live(mut trans: Vec<Row>, accepting: &[bool]) -> Vec<Row> {
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
pub(super) fn minimize(trans: &[Row], accepting: &[bool]) -> (Vec<u32>, usize) {
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

pub(super) fn too_many_rules() -> NumericError {
    NumericError::TooComplex(format!(
        "multipleOf within these bounds needs more than {MAX_RULES} grammar rules"
    ))
}

pub(super) fn too_many_states() -> NumericError {
    NumericError::TooComplex(format!(
        "multipleOf within these bounds needs an automaton of more than {MAX_EXPLORED} states"
    ))
}

/// A class (or literal) for the [`SYMBOLS`] whose bits `mask` sets.
pub(super) fn symbols_of(mask: u16) -> Expr {
    if mask.count_ones() == 1 {
        let symbol = char::from(SYMBOLS[mask.trailing_zeros() as usize]);
        return Expr::literal(&*symbol.encode_utf8(&mut [0; 4]));
    }
    // Runs of set bits, each a range; `-` (bit 0) is a range of its own, as it is not
    // next to `0` in ASCII.
    let mut ranges = Vec::new();
    if mask & 1 != 0 {
        ranges.push(('-', '-'));
    }
    let mut rest = mask & !1;
    while rest != 0 {
        let first = rest.trailing_zeros();
        let run = (rest >> first).trailing_ones();
        ranges.push((
            char::from(SYMBOLS[first as usize]),
            char::from(SYMBOLS[(first + run - 1) as usize]),
        ));
        rest &= !(((1u32 << run) - 1) << first) as u16;
    }
    Expr::class(false, ranges)
}
