//! Canonical integer texts between bounds of any size, and the bounds JSON Schema's
//! `minimum`/`maximum` family imply for integers.

use super::digits::int_range_expr;
use super::exact::{Dec, Int};
use super::{NumericError, Result};
use crate::gbnf::Expr;
use serde_json::Number;

/// Canonical integer texts `n` (`0`, or `-?[1-9][0-9]*`: no `-0`, no leading zeros, no
/// fraction, no exponent) with `min <= n <= max`.
///
/// Bounds are decimal integer strings (`-?[0-9]+`, leading zeros allowed) of any size up
/// to [`MAX_DIGITS`](super::MAX_DIGITS) digits; `None` leaves that side unbounded. The expression's size
/// grows as `O(d log d)` in the number of digits `d` of the bounds.
///
/// # Errors
/// [`NumericError::Empty`] when `min > max`; [`NumericError::InvalidBound`] for a string
/// that is not an integer; [`NumericError::TooComplex`] above [`MAX_DIGITS`](super::MAX_DIGITS) digits.
///
/// ```
/// use gbnfc_compiler::gbnf::Grammar;
/// use gbnfc_compiler::recognize::Recognizer;
/// use gbnfc_compiler::schema::numeric::integer_range;
/// let mut g = Grammar::default();
/// g.push("root", integer_range(Some("-5"), Some("120")).unwrap());
/// let r = Recognizer::new(&g).unwrap();
/// assert!(r.recognize("-5").accepted && r.recognize("120").accepted);
/// assert!(!r.recognize("121").accepted && !r.recognize("-0").accepted);
/// ```
pub fn integer_range(min: Option<&str>, max: Option<&str>) -> Result<Expr> {
    let lo = min.map(Int::parse).transpose()?;
    let hi = max.map(Int::parse).transpose()?;
    int_range_expr(lo.as_ref(), hi.as_ref())
}

/// The inclusive integer bounds implied by JSON Schema's `minimum`, `exclusiveMinimum`,
/// `maximum` and `exclusiveMaximum` (draft 6+ numeric forms; map draft 4's boolean
/// `exclusiveMinimum: true` to `exclusive_minimum: Some(minimum)` first), as decimal
/// integer strings for [`integer_range`]. Bounds may be any numbers: `minimum: 2.5` gives
/// `3`, `exclusiveMinimum: 2.5` gives `3`, `exclusiveMaximum: 10` gives `9`, `maximum:
/// 1e3` gives `1000`. The tighter bound wins when both forms are given.
///
/// # Errors
/// [`NumericError::Empty`] when no integer is in range; [`NumericError::InvalidBound`] or
/// [`NumericError::TooComplex`] for a bound that cannot be read or written out.
pub fn effective_integer_bounds(
    minimum: Option<&Number>,
    exclusive_minimum: Option<&Number>,
    maximum: Option<&Number>,
    exclusive_maximum: Option<&Number>,
) -> Result<(Option<String>, Option<String>)> {
    let (lo, hi) = int_bounds(minimum, exclusive_minimum, maximum, exclusive_maximum)?;
    Ok((lo.map(|l| l.to_string()), hi.map(|h| h.to_string())))
}

pub(super) fn int_bounds(
    minimum: Option<&Number>,
    exclusive_minimum: Option<&Number>,
    maximum: Option<&Number>,
    exclusive_maximum: Option<&Number>,
) -> Result<(Option<Int>, Option<Int>)> {
    scaled_int_bounds(minimum, exclusive_minimum, maximum, exclusive_maximum, 0)
}

/// The inclusive bounds on the integers `n` with `n × 10^-scale` within the four bounds
/// (as [`effective_integer_bounds`], on the values times `10^scale`).
pub(super) fn scaled_int_bounds(
    minimum: Option<&Number>,
    exclusive_minimum: Option<&Number>,
    maximum: Option<&Number>,
    exclusive_maximum: Option<&Number>,
    scale: i64,
) -> Result<(Option<Int>, Option<Int>)> {
    let read = |n: &Number| Ok::<Dec, NumericError>(Dec::from_number(n)?.times_ten_to(scale));
    let mut lo: Option<Int> = None;
    let mut hi: Option<Int> = None;
    let mut raise = |candidate: Int| {
        if lo.as_ref().is_none_or(|l| candidate > *l) {
            lo = Some(candidate);
        }
    };
    if let Some(n) = minimum {
        raise(read(n)?.ceil()?);
    }
    if let Some(n) = exclusive_minimum {
        raise(read(n)?.floor()?.succ());
    }
    let mut lower = |candidate: Int| {
        if hi.as_ref().is_none_or(|h| candidate < *h) {
            hi = Some(candidate);
        }
    };
    if let Some(n) = maximum {
        lower(read(n)?.floor()?);
    }
    if let Some(n) = exclusive_maximum {
        lower(read(n)?.ceil()?.pred());
    }
    if let (Some(l), Some(h)) = (&lo, &hi) {
        if l > h {
            return Err(NumericError::Empty);
        }
    }
    Ok((lo, hi))
}

/// Canonical integer texts (as [`integer_range`]) within JSON Schema's `minimum`,
/// `exclusiveMinimum`, `maximum` and `exclusiveMaximum`, which may be any numbers (see
/// [`effective_integer_bounds`]). Bounds are read exactly from their decimal text: a
/// float bound such as `1e308` is the integer with 309 digits.
///
/// # Errors
/// As [`effective_integer_bounds`].
///
/// ```
/// use serde_json::Number;
/// use gbnfc_compiler::gbnf::Grammar;
/// use gbnfc_compiler::recognize::Recognizer;
/// use gbnfc_compiler::schema::numeric::integer_bounds;
/// let x = Number::from_f64(2.5).unwrap();
/// let mut g = Grammar::default();
/// g.push("root", integer_bounds(None, Some(&x), None, None).unwrap());
/// let r = Recognizer::new(&g).unwrap();
/// assert!(r.recognize("3").accepted && !r.recognize("2").accepted);
/// ```
pub fn integer_bounds(
    minimum: Option<&Number>,
    exclusive_minimum: Option<&Number>,
    maximum: Option<&Number>,
    exclusive_maximum: Option<&Number>,
) -> Result<Expr> {
    let (lo, hi) = int_bounds(minimum, exclusive_minimum, maximum, exclusive_maximum)?;
    int_range_expr(lo.as_ref(), hi.as_ref())
}
