//! Small expression helpers and fixed-length digit strings: the building blocks of
//! every range, kept shallow and within llama.cpp's repetition limit.

use super::exact::{cmp_nat, text, Int};
use super::{NumericError, Result, CHUNK};
use crate::gbnf::Expr;
use std::cmp::Ordering;

pub(super) fn lit(digits: &[u8]) -> Expr {
    Expr::literal(text(digits))
}

pub(super) fn any_digit() -> Expr {
    Expr::class(false, [('0', '9')])
}

/// The digits `lo..=hi` (ASCII) as one class or literal; `None` when empty.
pub(super) fn digit_class(lo: u8, hi: u8) -> Option<Expr> {
    if lo > hi || !lo.is_ascii_digit() || !hi.is_ascii_digit() {
        None
    } else if lo == hi {
        Some(lit(&[lo]))
    } else {
        Some(Expr::class(false, [(char::from(lo), char::from(hi))]))
    }
}

pub(super) fn one_repeat(atom: &Expr, min: usize, max: Option<usize>) -> Expr {
    match (min, max) {
        (_, Some(0)) => Expr::empty(),
        (1, Some(1)) => atom.clone(),
        _ => Expr::repeat(
            atom.clone(),
            u32::try_from(min).unwrap_or(u32::MAX),
            max.map(|m| u32::try_from(m).unwrap_or(u32::MAX)),
        ),
    }
}

/// `atom{min,max}` (`max == None`: unbounded), split into chunks within llama.cpp's
/// repetition limit. `atom` must be a single character (class or one-character literal).
pub(super) fn rep(atom: &Expr, min: usize, max: Option<usize>) -> Expr {
    let mut items = Vec::new();
    let mut min = min;
    let mut max = max;
    while min > CHUNK {
        items.push(one_repeat(atom, CHUNK, Some(CHUNK)));
        min -= CHUNK;
        max = max.map(|m| m - CHUNK);
    }
    match max {
        None => items.push(one_repeat(atom, min, None)),
        Some(max) => {
            let first = max.min(CHUNK);
            items.push(one_repeat(atom, min, Some(first)));
            let mut rest = max - first;
            while rest > 0 {
                let chunk = rest.min(CHUNK);
                items.push(one_repeat(atom, 0, Some(chunk)));
                rest -= chunk;
            }
        }
    }
    Expr::seq(items)
}

pub(super) fn digits_exactly(n: usize) -> Expr {
    rep(&any_digit(), n, Some(n))
}

pub(super) fn digits_star() -> Expr {
    Expr::repeat(any_digit(), 0, None)
}

pub(super) fn digits_plus() -> Expr {
    Expr::repeat(any_digit(), 1, None)
}

pub(super) fn zeros(min: usize, max: Option<usize>) -> Expr {
    rep(&Expr::literal("0"), min, max)
}

pub(super) fn nonzero_digit() -> Expr {
    Expr::class(false, [('1', '9')])
}

pub(super) fn optional(e: Expr) -> Expr {
    Expr::repeat(e, 0, Some(1))
}

// ---------------------------------------------------------------------------------------
// Fixed-length digit strings and canonical naturals
// ---------------------------------------------------------------------------------------

pub(super) fn all(x: &[u8], d: u8) -> bool {
    x.iter().all(|&c| c == d)
}

/// Where to split a fixed-length comparison: digit by digit for short strings (the
/// familiar shape), in halves for long ones (logarithmic depth, `O(n log n)` size).
pub(super) fn split_point(n: usize) -> usize {
    if n <= 16 {
        1
    } else {
        n / 2
    }
}

/// Which way from a bound a fixed-length comparison goes.
#[derive(Clone, Copy)]
pub(super) enum Toward {
    /// Strings above the bound.
    Up,
    /// Strings below the bound.
    Down,
}

/// Strings of `x.len()` digits that are `>= x`.
pub(super) fn ge_fixed(x: &[u8]) -> Expr {
    beyond_fixed(x, Toward::Up, false).unwrap_or_else(Expr::empty)
}

/// Strings of `x.len()` digits that are `<= x`.
pub(super) fn le_fixed(x: &[u8]) -> Expr {
    beyond_fixed(x, Toward::Down, false).unwrap_or_else(Expr::empty)
}

/// Strings of `x.len()` digits on the `toward` side of `x` (`>= x` or `<= x`; `> x` or
/// `< x` when `strict`), or `None` when there are none. A string is beyond `x` when its
/// first part is `x`'s and its rest is beyond `x`'s rest, or its first part is strictly
/// beyond `x`'s and its rest is anything.
pub(super) fn beyond_fixed(x: &[u8], toward: Toward, strict: bool) -> Option<Expr> {
    // Going `toward`, digits run from `start` to `end`: every string is at or beyond the
    // all-`start` one, and none is strictly beyond the all-`end` one.
    let (start, end) = match toward {
        Toward::Up => (b'0', b'9'),
        Toward::Down => (b'9', b'0'),
    };
    if !strict && all(x, start) {
        return Some(digits_exactly(x.len()));
    }
    if strict && all(x, end) {
        return None;
    }
    if let [digit] = *x {
        let step = u8::from(strict);
        return match toward {
            Toward::Up => digit_class(digit + step, b'9'),
            Toward::Down => digit_class(b'0', digit - step),
        };
    }
    let (p, s) = x.split_at(split_point(x.len()));
    let mut arms = Vec::new();
    if let Some(rest) = beyond_fixed(s, toward, strict) {
        arms.push(Expr::seq([lit(p), rest]));
    }
    if let Some(first) = beyond_fixed(p, toward, true) {
        arms.push(Expr::seq([first, digits_exactly(s.len())]));
    }
    (!arms.is_empty()).then(|| Expr::alt(arms))
}

/// Strings of `lo.len()` digits between `lo` and `hi` (same length, `lo <= hi`).
pub(super) fn range_fixed(lo: &[u8], hi: &[u8]) -> Expr {
    let common = lo.iter().zip(hi).take_while(|(a, b)| a == b).count();
    if common >= lo.len() {
        return lit(lo);
    }
    let (a, b) = (lo[common], hi[common]);
    let (r, t) = (&lo[common + 1..], &hi[common + 1..]);
    let r_zeros = all(r, b'0');
    let t_nines = all(t, b'9');
    let mut arms = Vec::new();
    if !r_zeros {
        arms.push(Expr::seq([lit(&[a]), ge_fixed(r)]));
    }
    let mid_lo = if r_zeros { a } else { a + 1 };
    let mid_hi = if t_nines { b } else { b - 1 };
    if let Some(class) = digit_class(mid_lo, mid_hi) {
        arms.push(Expr::seq([class, digits_exactly(r.len())]));
    }
    if !t_nines {
        arms.push(Expr::seq([lit(&[b]), le_fixed(t)]));
    }
    Expr::seq([lit(&lo[..common]), Expr::alt(arms)])
}

/// Canonical naturals (`0 | [1-9][0-9]*`) in `[lo, hi]`; `hi == None` is unbounded.
pub(super) fn nat_range(lo: &[u8], hi: Option<&[u8]>) -> Option<Expr> {
    if hi.is_some_and(|h| cmp_nat(lo, h) == Ordering::Greater) {
        return None;
    }
    let mut arms = Vec::new();
    let lo: &[u8] = if lo == b"0" {
        arms.push(Expr::literal("0"));
        if hi == Some(b"0".as_slice()) {
            return Some(Expr::literal("0"));
        }
        b"1"
    } else {
        lo
    };
    let la = lo.len();
    if let Some(hi) = hi.filter(|h| h.len() == la) {
        arms.push(range_fixed(lo, hi));
        return Some(Expr::alt(arms));
    }
    // Lengths from `full_from` up to `full_to` are wholly inside the range.
    let full_from = if lo[0] == b'1' && all(&lo[1..], b'0') {
        la
    } else {
        arms.push(ge_fixed(lo));
        la + 1
    };
    let full_to = hi.map(|h| if all(h, b'9') { h.len() } else { h.len() - 1 });
    if full_to.is_none_or(|to| full_from <= to) {
        arms.push(Expr::seq([
            nonzero_digit(),
            rep(&any_digit(), full_from - 1, full_to.map(|to| to - 1)),
        ]));
    }
    if let Some(hi) = hi.filter(|h| !all(h, b'9')) {
        let mut smallest = vec![b'0'; hi.len()];
        smallest[0] = b'1';
        arms.push(range_fixed(&smallest, hi));
    }
    Some(Expr::alt(arms))
}

/// Canonical integers in `[lo, hi]` (`None`: unbounded on that side).
pub(super) fn int_range_expr(lo: Option<&Int>, hi: Option<&Int>) -> Result<Expr> {
    if let (Some(l), Some(h)) = (lo, hi) {
        if l > h {
            return Err(NumericError::Empty);
        }
    }
    let mut arms = Vec::new();
    if hi.is_none_or(|h| !h.neg) {
        let lower = match lo {
            Some(l) if !l.neg => l.mag.clone(),
            _ => b"0".to_vec(),
        };
        arms.extend(nat_range(&lower, hi.map(|h| h.mag.as_slice())));
    }
    if lo.is_none_or(|l| l.neg) {
        let lower = match hi {
            Some(h) if h.neg => h.mag.clone(),
            _ => b"1".to_vec(),
        };
        if let Some(e) = nat_range(&lower, lo.map(|l| l.mag.as_slice())) {
            arms.push(Expr::seq([Expr::literal("-"), e]));
        }
    }
    if arms.is_empty() {
        Err(NumericError::Empty)
    } else {
        Ok(Expr::alt(arms))
    }
}
