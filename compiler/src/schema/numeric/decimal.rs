//! JSON number texts (plain or exponent notation) whose value lies between decimal
//! bounds.

use super::digits::{lit, nat_range, optional, zeros};
use super::exact::{nat_dec, nat_inc, Dec};
use super::fraction::{frac_ge, frac_le, frac_range, Frac};
use super::{NumericError, Result};
use crate::gbnf::Expr;
use serde_json::Number;
use std::cmp::Ordering;

/// A bound and whether it is inclusive.
pub(super) type Bound = (Dec, bool);

pub(super) fn empty_between(lo: &Bound, hi: &Bound) -> bool {
    match lo.0.cmp(&hi.0) {
        Ordering::Greater => true,
        Ordering::Equal => !(lo.1 && hi.1),
        Ordering::Less => false,
    }
}

/// Plain texts `(0|[1-9][0-9]*)(\.[0-9]+)?` with value in the range (`lo >= 0`).
pub(super) fn plain_nonneg(lo: &Bound, hi: Option<&Bound>) -> Result<Option<Expr>> {
    if hi.is_some_and(|hi| empty_between(lo, hi)) {
        return Ok(None);
    }
    let (a, fa) = (lo.0.int_digits()?, lo.0.frac_digits()?);
    let mut arms = Vec::new();
    match hi {
        None if fa.is_empty() && lo.1 => {
            arms.extend(nat_range(&a, None).and_then(|int| Frac::any().attach(int)));
        }
        None => {
            arms.extend(frac_ge(&fa, lo.1).attach(lit(&a)));
            if let Some(int) = nat_range(&nat_inc(&a), None) {
                arms.extend(Frac::any().attach(int));
            }
        }
        Some(hi) => {
            let (b, fb) = (hi.0.int_digits()?, hi.0.frac_digits()?);
            if a != b && fa.is_empty() && lo.1 {
                // Every fraction after `a` is in range: fold `a` into the whole numbers.
                if let Some(int) = nat_range(&a, Some(&nat_dec(&b))) {
                    arms.extend(Frac::any().attach(int));
                }
                arms.extend(frac_le(&fb, hi.1).attach(lit(&b)));
            } else if a == b {
                let frac = if fa == fb {
                    frac_eq(&fa) // lo == hi, both inclusive
                } else {
                    frac_range(&fa, &fb, lo.1, hi.1)
                };
                arms.extend(frac.attach(lit(&a)));
            } else {
                arms.extend(frac_ge(&fa, lo.1).attach(lit(&a)));
                if let Some(int) = nat_range(&nat_inc(&a), Some(&nat_dec(&b))) {
                    arms.extend(Frac::any().attach(int));
                }
                arms.extend(frac_le(&fb, hi.1).attach(lit(&b)));
            }
        }
    }
    Ok((!arms.is_empty()).then(|| Expr::alt(arms)))
}

/// Fractions equal to `0.c` (`c` without trailing zeros).
pub(super) fn frac_eq(c: &[u8]) -> Frac {
    if c.is_empty() {
        return frac_le(c, true);
    }
    Frac {
        eps: false,
        arms: vec![Expr::seq([lit(c), zeros(0, None)])],
        any: false,
    }
}

/// `[eE]` and an exponent (any JSON spelling: sign, leading zeros) with value in `[lo, hi]`.
pub(super) fn exponent(lo: Option<i64>, hi: Option<i64>) -> Option<Expr> {
    let (lo, hi) = (lo.map(i128::from), hi.map(i128::from));
    if let (Some(l), Some(h)) = (lo, hi) {
        if l > h {
            return None;
        }
    }
    let digits = |n: i128| n.to_string().into_bytes();
    let mut arms = Vec::new();
    if hi.is_none_or(|h| h >= 0) {
        let lower = digits(lo.map_or(0, |l| l.max(0)));
        if let Some(nat) = nat_range(&lower, hi.map(digits).as_deref()) {
            arms.push(Expr::seq([
                optional(Expr::literal("+")),
                zeros(0, None),
                nat,
            ]));
        }
    }
    if lo.is_none_or(|l| l < 0) {
        let lower = digits(hi.map_or(1, |h| (-h).max(1)));
        if let Some(nat) = nat_range(&lower, lo.map(|l| digits(-l)).as_deref()) {
            arms.push(Expr::seq([Expr::literal("-"), zeros(0, None), nat]));
        }
    }
    if lo.is_none_or(|l| l <= 0) && hi.is_none_or(|h| h >= 0) {
        arms.push(Expr::seq([Expr::literal("-"), zeros(1, None)]));
    }
    if arms.is_empty() {
        return None;
    }
    Some(Expr::seq([
        Expr::class(false, [('E', 'E'), ('e', 'e')]),
        Expr::alt(arms),
    ]))
}

/// Exponent texts `[1-9](\.[0-9]+)?[eE][+-]?[0-9]+` with a positive value in the range
/// (`lo >= 0`).
pub(super) fn scientific_positive(lo: &Bound, hi: Option<&Bound>) -> Result<Option<Expr>> {
    if hi.is_some_and(|hi| empty_between(lo, hi) || hi.0.is_zero()) {
        return Ok(None);
    }
    let one = (Dec::from_u64(1), true);
    let ten = (Dec::from_u64(10), false);
    let mantissa = |lo: &Bound, hi: &Bound| plain_nonneg(lo, Some(hi));
    let with = |m: Option<Expr>, e: Option<Expr>| match (m, e) {
        (Some(m), Some(e)) => Some(Expr::seq([m, e])),
        _ => None,
    };
    let lower = (!lo.0.is_zero()).then(|| {
        let (m, e) = lo.0.scientific();
        ((m, lo.1), e)
    });
    let upper = hi.map(|hi| {
        let (m, e) = hi.0.scientific();
        ((m, hi.1), e)
    });
    let mut arms: Vec<Option<Expr>> = Vec::new();
    match (lower, upper) {
        (None, None) => arms.push(with(mantissa(&one, &ten)?, exponent(None, None))),
        (None, Some((mh, eh))) => {
            arms.push(with(mantissa(&one, &ten)?, exponent(None, Some(eh - 1))));
            arms.push(with(mantissa(&one, &mh)?, exponent(Some(eh), Some(eh))));
        }
        (Some((ml, el)), None) => {
            arms.push(with(mantissa(&ml, &ten)?, exponent(Some(el), Some(el))));
            arms.push(with(mantissa(&one, &ten)?, exponent(Some(el + 1), None)));
        }
        (Some((ml, el)), Some((mh, eh))) => {
            if el == eh {
                arms.push(with(mantissa(&ml, &mh)?, exponent(Some(el), Some(el))));
            } else {
                arms.push(with(mantissa(&ml, &ten)?, exponent(Some(el), Some(el))));
                if el + 1 < eh {
                    arms.push(with(
                        mantissa(&one, &ten)?,
                        exponent(Some(el + 1), Some(eh - 1)),
                    ));
                }
                arms.push(with(mantissa(&one, &mh)?, exponent(Some(eh), Some(eh))));
            }
        }
    }
    let arms: Vec<Expr> = arms.into_iter().flatten().collect();
    Ok((!arms.is_empty()).then(|| Expr::alt(arms)))
}

/// JSON number texts (see [`decimal_range`]) with a value between the bounds.
pub(super) fn number_texts(lo: Option<Bound>, hi: Option<Bound>) -> Result<Expr> {
    if let (Some(lo), Some(hi)) = (&lo, &hi) {
        if empty_between(lo, hi) {
            return Err(NumericError::Empty);
        }
    }
    let zero = Dec::zero();
    let zero_in = lo
        .as_ref()
        .is_none_or(|(l, inc)| *l < zero || (l.is_zero() && *inc))
        && hi
            .as_ref()
            .is_none_or(|(h, inc)| *h > zero || (h.is_zero() && *inc));
    // Magnitudes of the non-negative texts, then of the texts with a minus sign.
    let pos_lo = match &lo {
        Some((l, inc)) if !l.neg => (l.clone(), *inc),
        _ => (Dec::zero(), true),
    };
    let pos_hi = hi.clone();
    let neg_lo = match &hi {
        Some((h, inc)) if h.neg || h.is_zero() => (h.negated(), *inc),
        _ => (Dec::zero(), true),
    };
    let neg_hi = lo.as_ref().map(|(l, inc)| (l.negated(), *inc));
    let minus = |e: Expr| Expr::seq([Expr::literal("-"), e]);
    let mut arms = Vec::new();
    // A negative upper bound leaves no non-negative texts (and vice versa).
    let pos_ok = pos_hi.as_ref().is_none_or(|(h, _)| !h.neg);
    let neg_ok = neg_hi.as_ref().is_none_or(|(h, _)| !h.neg);
    if pos_ok {
        arms.extend(plain_nonneg(&pos_lo, pos_hi.as_ref())?);
    }
    if neg_ok {
        arms.extend(plain_nonneg(&neg_lo, neg_hi.as_ref())?.map(minus));
    }
    if pos_ok {
        arms.extend(scientific_positive(&pos_lo, pos_hi.as_ref())?);
    }
    if neg_ok {
        arms.extend(scientific_positive(&neg_lo, neg_hi.as_ref())?.map(minus));
    }
    if zero_in {
        arms.push(Expr::seq([
            optional(Expr::literal("-")),
            Expr::literal("0"),
            optional(Expr::seq([Expr::literal("."), zeros(1, None)])),
            exponent(None, None).unwrap_or_else(Expr::empty),
        ]));
    }
    if arms.is_empty() {
        Err(NumericError::Empty)
    } else {
        Ok(Expr::alt(arms))
    }
}

/// One bound of [`decimal_range`]: a decimal number's text and whether it is exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit<'a> {
    /// The bound's text: `[+-]?digits(.digits)?([eE][+-]?digits)?`, read exactly.
    pub value: &'a str,
    /// `true` for a strict bound (`exclusiveMinimum`/`exclusiveMaximum`).
    pub exclusive: bool,
}

/// JSON number texts whose exact decimal value lies between `lower` and `upper` (`None`:
/// unbounded). The bounds are decimal texts read exactly (no rounding through `f64`).
///
/// Accepted texts (a subset of JSON's number syntax, exact within it):
/// - plain notation `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, any number of digits, trailing
///   fraction zeros and `-0` included;
/// - exponent notation with a normalized mantissa, `-?[1-9](\.[0-9]+)?[eE][+-]?[0-9]+`
///   (exponent digits may have leading zeros), as serde_json writes large and small
///   floats (`1e-7`, `1.5e+300`);
/// - zero in exponent notation, `-?0(\.0+)?[eE][+-]?[0-9]+`, when zero is in range.
///
/// Not accepted (even in range): exponent notation with any other mantissa (`12e3`,
/// `0.5e1`). Every text serde_json prints for an in-range value (`f64`, `i64` or `u64`)
/// is accepted; no out-of-range text is.
///
/// Exactness is with respect to the decimal value of the text, as JSON Schema defines
/// it. A validator that first rounds a text to `f64` can disagree on texts with more
/// than 17 significant digits right next to an exclusive bound (for example
/// `0.09999999999999999999` with `exclusiveMaximum: 0.1` is accepted here, as it is
/// below 0.1, but rounds to 0.1).
///
/// # Errors
/// [`NumericError::Empty`] when no value is in range; [`NumericError::InvalidBound`] for
/// a bound that is not a decimal number; [`NumericError::TooComplex`] for a bound with
/// more than [`MAX_DIGITS`](super::MAX_DIGITS) digits written out (for example `1e-20000`).
///
/// ```
/// use gbnfc_compiler::gbnf::Grammar;
/// use gbnfc_compiler::recognize::Recognizer;
/// use gbnfc_compiler::schema::numeric::{decimal_range, Limit};
/// let lower = Limit { value: "0.5", exclusive: false };
/// let upper = Limit { value: "100", exclusive: true };
/// let mut g = Grammar::default();
/// g.push("root", decimal_range(Some(lower), Some(upper)).unwrap());
/// let r = Recognizer::new(&g).unwrap();
/// for ok in ["0.5", "0.50", "99.999", "5e-1", "9.9E+1", "42"] {
///     assert!(r.recognize(ok).accepted, "{ok}");
/// }
/// for bad in ["0.4999", "100", "100.0", "1e2", "-1"] {
///     assert!(!r.recognize(bad).accepted, "{bad}");
/// }
/// ```
pub fn decimal_range(lower: Option<Limit<'_>>, upper: Option<Limit<'_>>) -> Result<Expr> {
    let read = |l: Limit<'_>| Dec::parse(l.value).map(|d| (d, !l.exclusive));
    let lo = lower.map(read).transpose()?;
    let hi = upper.map(read).transpose()?;
    number_texts(lo, hi)
}

/// JSON number texts (as [`decimal_range`]) within JSON Schema's `minimum`,
/// `exclusiveMinimum`, `maximum` and `exclusiveMaximum` (draft 6+ forms; the tighter bound
/// wins when both forms are given). Each bound is read exactly from the text the
/// [`Number`] prints: `0.1` is the decimal 0.1, not the nearest `f64`.
///
/// # Errors
/// As [`decimal_range`].
pub fn number_range(
    minimum: Option<&Number>,
    exclusive_minimum: Option<&Number>,
    maximum: Option<&Number>,
    exclusive_maximum: Option<&Number>,
) -> Result<Expr> {
    let read = |n: Option<&Number>, inclusive: bool| -> Result<Option<Bound>> {
        n.map(|n| Dec::from_number(n).map(|d| (d, inclusive)))
            .transpose()
    };
    let lo = tighter(
        read(minimum, true)?,
        read(exclusive_minimum, false)?,
        Ordering::Greater,
    );
    let hi = tighter(
        read(maximum, true)?,
        read(exclusive_maximum, false)?,
        Ordering::Less,
    );
    number_texts(lo, hi)
}

/// Of two bounds, the one further in direction `towards` (exclusive on a tie).
pub(super) fn tighter(a: Option<Bound>, b: Option<Bound>, towards: Ordering) -> Option<Bound> {
    match (a, b) {
        (Some(a), Some(b)) => {
            let order = a.0.cmp(&b.0);
            if order == Ordering::Equal {
                Some((a.0, a.1 && b.1))
            } else if order == towards {
                Some(a)
            } else {
                Some(b)
            }
        }
        (a, b) => a.or(b),
    }
}
