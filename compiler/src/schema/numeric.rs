//! Number and integer ranges as GBNF expressions over JSON number text.
//!
//! Everything here works on the *text* of a number and on exact decimal values: bounds
//! are parsed from their decimal spelling (for a [`serde_json::Number`], the text it
//! prints, which for a float is the shortest spelling that reads back as the same float,
//! i.e. what the schema author wrote) and compared digit by digit, never through `f64`.
//!
//! - [`integer_range`] / [`integer_bounds`]: canonical integer text (`0`, `-?[1-9][0-9]*`,
//!   no `-0`, no fraction, no exponent) between bounds of any size.
//! - [`number_range`] / [`decimal_range`]: JSON number text of a value between decimal
//!   bounds, in plain (`-12.50`) or normalized exponent (`1.5e-7`, `1E+300`) notation.
//! - [`integer_multiple_of`] / [`integer_multiple_of_in_range`]: canonical integers
//!   divisible by `k`, as a small set of right-linear rules (a minimized automaton),
//!   optionally intersected with bounds.
//!
//! Every expression built here passes [`crate::gbnf::check()`] when used as `root`: only
//! single characters are repeated, repetition bounds are split into chunks of at most
//! 2000, and trees stay shallow (long digit strings are split in halves, not nested digit
//! by digit).

use std::cmp::Ordering;

use compact_str::ToCompactString as _;
use rustc_hash::FxHashMap as HashMap;

use serde_json::Number;

use crate::gbnf::ast::CompactString;
use crate::gbnf::Expr;

/// The most digits a bound may expand to (integer digits plus fraction digits, written
/// out without an exponent). Larger bounds are refused with [`NumericError::TooComplex`].
pub const MAX_DIGITS: usize = 10_000;

/// The largest divisor [`integer_multiple_of`] accepts.
pub const MAX_MULTIPLE: u64 = 1_000;

/// The most rules [`integer_multiple_of_in_range`] emits (states of the minimized
/// automaton).
pub const MAX_RULES: usize = 2_000;

/// States explored before minimization, at most.
const MAX_EXPLORED: usize = 60_000;

/// Largest repetition bound written in one `{m,n}` (llama.cpp's limit).
const CHUNK: usize = 2_000;

/// Largest exponent magnitude accepted in a bound's text.
const MAX_EXPONENT: i64 = 1_000_000_000_000;

/// Why no expression could be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NumericError {
    /// No value satisfies the constraints (for example `minimum` above `maximum`).
    #[error("no number satisfies these constraints")]
    Empty,
    /// A bound is not a decimal number (or, for integer bounds, not an integer).
    #[error("`{0}` is not a valid bound")]
    InvalidBound(String),
    /// `multipleOf` is zero, negative or not a number.
    #[error("`{0}` is not a valid multipleOf (it must be a positive number)")]
    InvalidMultiple(String),
    /// A rule-name prefix that llama.cpp would refuse.
    #[error("rule-name prefix `{0}` must be non-empty and use only letters, digits and `-`")]
    InvalidPrefix(String),
    /// Exact enforcement would need a grammar too large to be useful; enforce it by
    /// validation instead.
    #[error("{0}")]
    TooComplex(String),
}

type Result<T> = std::result::Result<T, NumericError>;

// ---------------------------------------------------------------------------------------
// Exact decimals and integers
// ---------------------------------------------------------------------------------------

/// An exact decimal: `(-1)^neg × digits × 10^exp`. `digits` are ASCII with no leading or
/// trailing zeros; zero has no digits, `neg == false` and `exp == 0`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Dec {
    neg: bool,
    digits: Vec<u8>,
    exp: i64,
}

impl Dec {
    fn zero() -> Dec {
        Dec {
            neg: false,
            digits: Vec::new(),
            exp: 0,
        }
    }

    fn from_u64(n: u64) -> Dec {
        Dec::normalized(false, n.to_string().into_bytes(), 0)
    }

    fn normalized(neg: bool, mut digits: Vec<u8>, mut exp: i64) -> Dec {
        let lead = digits.iter().take_while(|&&d| d == b'0').count();
        digits.drain(..lead);
        while digits.last() == Some(&b'0') {
            digits.pop();
            exp += 1;
        }
        if digits.is_empty() {
            Dec::zero()
        } else {
            Dec { neg, digits, exp }
        }
    }

    /// Parses `[+-]? digits (. digits)? ([eE] [+-]? digits)?` (at least one mantissa digit).
    fn parse(text: &str) -> Result<Dec> {
        let invalid = || NumericError::InvalidBound(text.to_string());
        let b = text.as_bytes();
        let mut i = 0;
        let neg = match b.first() {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let mut mantissa = Vec::new();
        let mut frac_len: i64 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            mantissa.push(b[i]);
            i += 1;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                mantissa.push(b[i]);
                frac_len += 1;
                i += 1;
            }
        }
        if mantissa.is_empty() {
            return Err(invalid());
        }
        let mut exp: i64 = 0;
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            i += 1;
            let exp_neg = match b.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                exp = exp * 10 + i64::from(b[i] - b'0');
                if exp > MAX_EXPONENT {
                    return Err(too_large(text));
                }
                i += 1;
            }
            if i == start {
                return Err(invalid());
            }
            if exp_neg {
                exp = -exp;
            }
        }
        if i != b.len() {
            return Err(invalid());
        }
        let dec = Dec::normalized(neg, mantissa, exp - frac_len);
        if dec.digits.len() > MAX_DIGITS || dec.exp.abs() > MAX_EXPONENT {
            return Err(too_large(text));
        }
        Ok(dec)
    }

    fn from_number(n: &Number) -> Result<Dec> {
        Dec::parse(&n.to_string())
    }

    fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// `a` such that `10^(a-1) <= |self| < 10^a` (for nonzero values).
    fn adjusted(&self) -> i64 {
        self.digits.len() as i64 + self.exp
    }

    fn negated(&self) -> Dec {
        let mut d = self.clone();
        d.neg = !d.neg && !d.is_zero();
        d
    }

    fn cmp_magnitude(&self, other: &Dec) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => self
                .adjusted()
                .cmp(&other.adjusted())
                .then_with(|| self.digits.cmp(&other.digits)),
        }
    }

    /// The canonical digits of `floor(|self|)`.
    fn int_digits(&self) -> Result<Vec<u8>> {
        let adjusted = self.adjusted();
        if self.is_zero() || adjusted <= 0 {
            return Ok(b"0".to_vec());
        }
        let len = usize::try_from(adjusted).unwrap_or(usize::MAX);
        if len > MAX_DIGITS {
            return Err(too_large(&self.to_string()));
        }
        let mut v: Vec<u8> = self.digits.iter().take(len).copied().collect();
        v.resize(len, b'0');
        Ok(v)
    }

    /// The digits of `|self| - floor(|self|)` after the decimal point, without trailing zeros.
    fn frac_digits(&self) -> Result<Vec<u8>> {
        if self.exp >= 0 {
            return Ok(Vec::new());
        }
        let frac_len = usize::try_from(-self.exp).unwrap_or(usize::MAX);
        if frac_len > MAX_DIGITS {
            return Err(too_large(&self.to_string()));
        }
        let adjusted = self.adjusted();
        if adjusted >= 0 {
            let skip = usize::try_from(adjusted).unwrap_or(0);
            Ok(self.digits[skip.min(self.digits.len())..].to_vec())
        } else {
            let zeros = usize::try_from(-adjusted).unwrap_or(0);
            let mut v = vec![b'0'; zeros];
            v.extend_from_slice(&self.digits);
            Ok(v)
        }
    }

    fn floor(&self) -> Result<Int> {
        let magnitude = self.int_digits()?;
        let fractional = !self.is_zero() && self.exp < 0;
        Ok(if !self.neg {
            Int::new(false, magnitude)
        } else if fractional {
            Int::new(true, nat_inc(&magnitude))
        } else {
            Int::new(true, magnitude)
        })
    }

    fn ceil(&self) -> Result<Int> {
        Ok(self.negated().floor()?.negated())
    }

    /// `(mantissa, e)` with `|self| = mantissa × 10^e` and `1 <= mantissa < 10`.
    fn scientific(&self) -> (Dec, i64) {
        let e = self.adjusted() - 1;
        let mantissa = Dec {
            neg: false,
            digits: self.digits.clone(),
            exp: 1 - self.digits.len() as i64,
        };
        (mantissa, e)
    }
}

impl Ord for Dec {
    fn cmp(&self, other: &Dec) -> Ordering {
        by_sign(self.neg, other.neg, || self.cmp_magnitude(other))
    }
}

/// How two signed numbers compare, from their signs and, for equal signs, how the first's
/// magnitude compares with the second's (`magnitudes`).
fn by_sign(neg: bool, other_neg: bool, magnitudes: impl FnOnce() -> Ordering) -> Ordering {
    match (neg, other_neg) {
        (false, false) => magnitudes(),
        (true, true) => magnitudes().reverse(),
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
    }
}

impl PartialOrd for Dec {
    fn partial_cmp(&self, other: &Dec) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for Dec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        if self.neg {
            f.write_str("-")?;
        }
        f.write_str(&text(&self.digits))?;
        if self.exp != 0 {
            write!(f, "e{}", self.exp)?;
        }
        Ok(())
    }
}

fn too_large(what: &str) -> NumericError {
    let shown: String = what.chars().take(40).collect();
    NumericError::TooComplex(format!(
        "the bound `{shown}` has more than {MAX_DIGITS} digits when written out"
    ))
}

/// An exact integer: sign and canonical ASCII magnitude (`"0"` for zero, never negative).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Int {
    neg: bool,
    mag: Vec<u8>,
}

impl Int {
    fn new(neg: bool, mag: Vec<u8>) -> Int {
        let neg = neg && mag != b"0";
        Int { neg, mag }
    }

    fn parse(text: &str) -> Result<Int> {
        let invalid = || NumericError::InvalidBound(text.to_string());
        let (neg, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        let trimmed = digits.trim_start_matches('0');
        if trimmed.len() > MAX_DIGITS {
            return Err(too_large(text));
        }
        let mag = if trimmed.is_empty() {
            b"0".to_vec()
        } else {
            trimmed.as_bytes().to_vec()
        };
        Ok(Int::new(neg, mag))
    }

    fn negated(&self) -> Int {
        Int::new(!self.neg, self.mag.clone())
    }

    fn succ(&self) -> Int {
        if self.neg {
            Int::new(true, nat_dec(&self.mag))
        } else {
            Int::new(false, nat_inc(&self.mag))
        }
    }

    fn pred(&self) -> Int {
        if self.neg || self.mag == b"0" {
            Int::new(true, nat_inc(&self.mag))
        } else {
            Int::new(false, nat_dec(&self.mag))
        }
    }
}

impl Ord for Int {
    fn cmp(&self, other: &Int) -> Ordering {
        by_sign(self.neg, other.neg, || cmp_nat(&self.mag, &other.mag))
    }
}

impl PartialOrd for Int {
    fn partial_cmp(&self, other: &Int) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for Int {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.neg {
            f.write_str("-")?;
        }
        f.write_str(&text(&self.mag))
    }
}

/// Compares canonical natural numbers (ASCII, no leading zeros).
fn cmp_nat(a: &[u8], b: &[u8]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn nat_inc(m: &[u8]) -> Vec<u8> {
    let mut v = m.to_vec();
    let mut i = v.len();
    loop {
        if i == 0 {
            v.insert(0, b'1');
            break;
        }
        i -= 1;
        if v[i] == b'9' {
            v[i] = b'0';
        } else {
            v[i] += 1;
            break;
        }
    }
    v
}

/// `m - 1` for `m >= 1`; `"0"` stays `"0"`.
fn nat_dec(m: &[u8]) -> Vec<u8> {
    let mut v = m.to_vec();
    let mut i = v.len();
    while i > 0 {
        i -= 1;
        if v[i] == b'0' {
            v[i] = b'9';
        } else {
            v[i] -= 1;
            break;
        }
    }
    let lead = v.iter().take_while(|&&d| d == b'0').count();
    v.drain(..lead);
    if v.is_empty() {
        v.push(b'0');
    }
    v
}

fn text(digits: &[u8]) -> String {
    digits.iter().map(|&b| char::from(b)).collect()
}

// ---------------------------------------------------------------------------------------
// Expression helpers
// ---------------------------------------------------------------------------------------

fn lit(digits: &[u8]) -> Expr {
    Expr::literal(text(digits))
}

fn any_digit() -> Expr {
    Expr::class(false, [('0', '9')])
}

/// The digits `lo..=hi` (ASCII) as one class or literal; `None` when empty.
fn digit_class(lo: u8, hi: u8) -> Option<Expr> {
    if lo > hi || !lo.is_ascii_digit() || !hi.is_ascii_digit() {
        None
    } else if lo == hi {
        Some(lit(&[lo]))
    } else {
        Some(Expr::class(false, [(char::from(lo), char::from(hi))]))
    }
}

fn one_repeat(atom: &Expr, min: usize, max: Option<usize>) -> Expr {
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
fn rep(atom: &Expr, min: usize, max: Option<usize>) -> Expr {
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

fn digits_exactly(n: usize) -> Expr {
    rep(&any_digit(), n, Some(n))
}

fn digits_star() -> Expr {
    Expr::repeat(any_digit(), 0, None)
}

fn digits_plus() -> Expr {
    Expr::repeat(any_digit(), 1, None)
}

fn zeros(min: usize, max: Option<usize>) -> Expr {
    rep(&Expr::literal("0"), min, max)
}

fn nonzero_digit() -> Expr {
    Expr::class(false, [('1', '9')])
}

fn optional(e: Expr) -> Expr {
    Expr::repeat(e, 0, Some(1))
}

// ---------------------------------------------------------------------------------------
// Fixed-length digit strings and canonical naturals
// ---------------------------------------------------------------------------------------

fn all(x: &[u8], d: u8) -> bool {
    x.iter().all(|&c| c == d)
}

/// Where to split a fixed-length comparison: digit by digit for short strings (the
/// familiar shape), in halves for long ones (logarithmic depth, `O(n log n)` size).
fn split_point(n: usize) -> usize {
    if n <= 16 {
        1
    } else {
        n / 2
    }
}

/// Which way from a bound a fixed-length comparison goes.
#[derive(Clone, Copy)]
enum Toward {
    /// Strings above the bound.
    Up,
    /// Strings below the bound.
    Down,
}

/// Strings of `x.len()` digits that are `>= x`.
fn ge_fixed(x: &[u8]) -> Expr {
    beyond_fixed(x, Toward::Up, false).unwrap_or_else(Expr::empty)
}

/// Strings of `x.len()` digits that are `<= x`.
fn le_fixed(x: &[u8]) -> Expr {
    beyond_fixed(x, Toward::Down, false).unwrap_or_else(Expr::empty)
}

/// Strings of `x.len()` digits on the `toward` side of `x` (`>= x` or `<= x`; `> x` or
/// `< x` when `strict`), or `None` when there are none. A string is beyond `x` when its
/// first part is `x`'s and its rest is beyond `x`'s rest, or its first part is strictly
/// beyond `x`'s and its rest is anything.
fn beyond_fixed(x: &[u8], toward: Toward, strict: bool) -> Option<Expr> {
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
fn range_fixed(lo: &[u8], hi: &[u8]) -> Expr {
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
fn nat_range(lo: &[u8], hi: Option<&[u8]>) -> Option<Expr> {
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
fn int_range_expr(lo: Option<&Int>, hi: Option<&Int>) -> Result<Expr> {
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

// ---------------------------------------------------------------------------------------
// Public API: integers
// ---------------------------------------------------------------------------------------

/// Canonical integer texts `n` (`0`, or `-?[1-9][0-9]*`: no `-0`, no leading zeros, no
/// fraction, no exponent) with `min <= n <= max`.
///
/// Bounds are decimal integer strings (`-?[0-9]+`, leading zeros allowed) of any size up
/// to [`MAX_DIGITS`] digits; `None` leaves that side unbounded. The expression's size
/// grows as `O(d log d)` in the number of digits `d` of the bounds.
///
/// # Errors
/// [`NumericError::Empty`] when `min > max`; [`NumericError::InvalidBound`] for a string
/// that is not an integer; [`NumericError::TooComplex`] above [`MAX_DIGITS`] digits.
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

fn int_bounds(
    minimum: Option<&Number>,
    exclusive_minimum: Option<&Number>,
    maximum: Option<&Number>,
    exclusive_maximum: Option<&Number>,
) -> Result<(Option<Int>, Option<Int>)> {
    let mut lo: Option<Int> = None;
    let mut hi: Option<Int> = None;
    let mut raise = |candidate: Int| {
        if lo.as_ref().is_none_or(|l| candidate > *l) {
            lo = Some(candidate);
        }
    };
    if let Some(n) = minimum {
        raise(Dec::from_number(n)?.ceil()?);
    }
    if let Some(n) = exclusive_minimum {
        raise(Dec::from_number(n)?.floor()?.succ());
    }
    let mut lower = |candidate: Int| {
        if hi.as_ref().is_none_or(|h| candidate < *h) {
            hi = Some(candidate);
        }
    };
    if let Some(n) = maximum {
        lower(Dec::from_number(n)?.floor()?);
    }
    if let Some(n) = exclusive_maximum {
        lower(Dec::from_number(n)?.ceil()?.pred());
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

/// Canonical integer texts (as [`integer_range`]) divisible by `k`, as a right-linear
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
/// [`integer_range`]), built as the product of the range automaton and the remainder
/// automaton, minimized, one rule per state (see [`integer_multiple_of`] for naming).
/// Small products only: bounds of `d` digits give about `3·d·k` states before
/// minimization.
///
/// # Errors
/// As [`integer_multiple_of`] and [`integer_range`], plus [`NumericError::TooComplex`]
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

// ---------------------------------------------------------------------------------------
// Automaton for multiples within a range
// ---------------------------------------------------------------------------------------

/// Constraints on the magnitude of one sign's numbers (all `>= 1`).
#[derive(Debug)]
struct MagBounds {
    lo: Option<Vec<u8>>,
    hi: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum State {
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
const SYMBOLS: [u8; 11] = *b"-0123456789";

/// One state's transitions, by symbol: the next state's number, or [`NO_STATE`].
type Row = [u32; SYMBOLS.len()];

/// No state (a transition that does not exist); also "no class yet".
const NO_STATE: u32 = u32::MAX;

struct Machine {
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

/// A class (or literal) for the [`SYMBOLS`] whose bits `mask` sets.
fn symbols_of(mask: u16) -> Expr {
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

// ---------------------------------------------------------------------------------------
// Fractions: digit strings after the decimal point, compared with zero padding
// ---------------------------------------------------------------------------------------

/// A set of fraction digit strings `F` (compared as the value `0.F`): `eps` is the empty
/// string (no fraction part at all), each arm matches only non-empty strings.
#[derive(Debug, Default)]
struct Frac {
    eps: bool,
    arms: Vec<Expr>,
    /// All of `D*` (kept apart to print `("." [0-9]+)?`).
    any: bool,
}

impl Frac {
    fn any() -> Frac {
        Frac {
            eps: true,
            arms: vec![digits_plus()],
            any: true,
        }
    }

    fn extend(&mut self, other: Frac) {
        self.eps |= other.eps;
        self.arms.extend(other.arms);
        self.any = false;
    }

    /// `p` followed by this set (`p` non-empty).
    fn after(self, p: &[u8]) -> Frac {
        let mut arms = Vec::new();
        if self.eps {
            arms.push(lit(p));
        }
        arms.extend(self.arms.into_iter().map(|a| Expr::seq([lit(p), a])));
        Frac {
            eps: false,
            arms,
            any: false,
        }
    }

    /// `int` followed by `.F` for each `F` in this set (just `int` for the empty string).
    fn attach(self, int: Expr) -> Option<Expr> {
        if self.any {
            return Some(Expr::seq([
                int,
                optional(Expr::seq([Expr::literal("."), digits_plus()])),
            ]));
        }
        let mut arms = Vec::new();
        if self.eps {
            arms.push(int.clone());
        }
        if !self.arms.is_empty() {
            arms.push(Expr::seq([int, Expr::literal("."), Expr::alt(self.arms)]));
        }
        (!arms.is_empty()).then(|| Expr::alt(arms))
    }
}

/// Fractions `F > c` that first differ from `c` (zero-padded) inside `c`, with a larger digit.
fn frac_gt_arms(c: &[u8]) -> Vec<Expr> {
    let mut arms = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i] == b'0' {
            let z = c[i..].iter().take_while(|&&d| d == b'0').count();
            arms.push(Expr::seq([
                lit(&c[..i]),
                zeros(0, Some(z - 1)),
                nonzero_digit(),
                digits_star(),
            ]));
            i += z;
        } else {
            if let Some(class) = digit_class(c[i] + 1, b'9') {
                arms.push(Expr::seq([lit(&c[..i]), class, digits_star()]));
            }
            i += 1;
        }
    }
    arms
}

/// Fractions `>= 0.c` (`> 0.c` unless `inclusive`); `c` has no trailing zeros.
fn frac_ge(c: &[u8], inclusive: bool) -> Frac {
    if c.is_empty() {
        return if inclusive {
            Frac::any()
        } else {
            Frac {
                eps: false,
                arms: vec![Expr::seq([zeros(0, None), nonzero_digit(), digits_star()])],
                any: false,
            }
        };
    }
    // Extensions of `c` are at least `c` (equal when only zeros follow).
    let arms = if inclusive {
        // Fold them into the arm for a larger last digit.
        let (init, last) = c.split_at(c.len() - 1);
        let mut arms = frac_gt_arms(init);
        arms.extend(
            digit_class(last[0], b'9').map(|class| Expr::seq([lit(init), class, digits_star()])),
        );
        arms
    } else {
        let mut arms = frac_gt_arms(c);
        arms.push(Expr::seq([
            lit(c),
            zeros(0, None),
            nonzero_digit(),
            digits_star(),
        ]));
        arms
    };
    Frac {
        eps: false,
        arms,
        any: false,
    }
}

/// Fractions `<= 0.c` (`< 0.c` unless `inclusive`); `c` has no trailing zeros.
fn frac_le(c: &[u8], inclusive: bool) -> Frac {
    if c.is_empty() {
        return Frac {
            eps: inclusive,
            arms: if inclusive {
                vec![zeros(1, None)]
            } else {
                Vec::new()
            },
            any: false,
        };
    }
    let mut arms = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i] == b'0' {
            // The prefixes of `c` ending inside this run of zeros.
            let z = c[i..].iter().take_while(|&&d| d == b'0').count();
            let least = usize::from(i == 0);
            if z > least {
                arms.push(Expr::seq([lit(&c[..i]), zeros(least, Some(z - 1))]));
            }
            i += z;
        } else {
            if i > 0 {
                arms.push(lit(&c[..i]));
            }
            if let Some(class) = digit_class(b'0', c[i] - 1) {
                arms.push(Expr::seq([lit(&c[..i]), class, digits_star()]));
            }
            i += 1;
        }
    }
    if inclusive {
        arms.push(Expr::seq([lit(c), zeros(0, None)]));
    }
    Frac {
        eps: true,
        arms,
        any: false,
    }
}

/// Fractions between `0.c` and `0.d` (`c < d`, neither with trailing zeros).
fn frac_range(c: &[u8], d: &[u8], c_inclusive: bool, d_inclusive: bool) -> Frac {
    let pad = |i: usize| c.get(i).copied().unwrap_or(b'0');
    let k = (0..d.len()).take_while(|&i| pad(i) == d[i]).count();
    if k >= d.len() {
        return Frac::default(); // c >= d: cannot happen for c < d
    }
    let (a, b) = (pad(k), d[k]);
    let p = &d[..k];
    let mut frac = Frac::default();
    // Strings no longer than the common prefix equal `c` at best.
    if c_inclusive && c.len() <= k {
        if c.is_empty() {
            frac.eps = true;
            if k >= 1 {
                frac.arms.push(zeros(1, Some(k)));
            }
        } else {
            frac.arms
                .push(Expr::seq([lit(c), zeros(0, Some(k - c.len()))]));
        }
    }
    let c_rest: &[u8] = if c.len() > k + 1 { &c[k + 1..] } else { &[] };
    let mut pa = p.to_vec();
    pa.push(a);
    frac.extend(frac_ge(c_rest, c_inclusive).after(&pa));
    if let Some(class) = digit_class(a + 1, b - 1) {
        frac.arms.push(Expr::seq([lit(p), class, digits_star()]));
    }
    let mut pb = p.to_vec();
    pb.push(b);
    frac.extend(frac_le(&d[k + 1..], d_inclusive).after(&pb));
    frac
}

// ---------------------------------------------------------------------------------------
// Decimal numbers
// ---------------------------------------------------------------------------------------

/// A bound and whether it is inclusive.
type Bound = (Dec, bool);

fn empty_between(lo: &Bound, hi: &Bound) -> bool {
    match lo.0.cmp(&hi.0) {
        Ordering::Greater => true,
        Ordering::Equal => !(lo.1 && hi.1),
        Ordering::Less => false,
    }
}

/// Plain texts `(0|[1-9][0-9]*)(\.[0-9]+)?` with value in the range (`lo >= 0`).
fn plain_nonneg(lo: &Bound, hi: Option<&Bound>) -> Result<Option<Expr>> {
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
fn frac_eq(c: &[u8]) -> Frac {
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
fn exponent(lo: Option<i64>, hi: Option<i64>) -> Option<Expr> {
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
fn scientific_positive(lo: &Bound, hi: Option<&Bound>) -> Result<Option<Expr>> {
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
fn number_texts(lo: Option<Bound>, hi: Option<Bound>) -> Result<Expr> {
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
/// more than [`MAX_DIGITS`] digits written out (for example `1e-20000`).
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
fn tighter(a: Option<Bound>, b: Option<Bound>, towards: Ordering) -> Option<Bound> {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn dec(text: &str) -> Dec {
        Dec::parse(text).unwrap()
    }

    #[test]
    fn decimals_parse_exactly() {
        assert_eq!(dec("1.50e2"), dec("150"));
        assert_eq!(dec("-0.0"), Dec::zero());
        assert_eq!(dec("0.000"), dec("0e99"));
        assert!(dec("0.1") < dec("0.10000000000000000001"));
        assert!(dec("-2") < dec("-1.999"));
        assert_eq!(dec("1e308").int_digits().unwrap().len(), 309);
        assert_eq!(dec("12.0340").frac_digits().unwrap(), b"034");
        assert_eq!(dec("1.5e-3").frac_digits().unwrap(), b"0015");
        for bad in ["", "-", ".", "1e", "1e+", "0x1", "1.2.3", "--1"] {
            assert!(
                matches!(Dec::parse(bad), Err(NumericError::InvalidBound(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            Dec::parse("1e99999999999999"),
            Err(NumericError::TooComplex(_))
        ));
    }

    #[test]
    fn floor_and_ceil() {
        let f = |t: &str| dec(t).floor().unwrap().to_string();
        let c = |t: &str| dec(t).ceil().unwrap().to_string();
        assert_eq!((f("2.5"), c("2.5")), ("2".into(), "3".into()));
        assert_eq!((f("-2.5"), c("-2.5")), ("-3".into(), "-2".into()));
        assert_eq!((f("-0.5"), c("-0.5")), ("-1".into(), "0".into()));
        assert_eq!((f("7"), c("-7")), ("7".into(), "-7".into()));
        assert_eq!((f("1e-400"), c("1e-400")), ("0".into(), "1".into()));
        assert_eq!(Int::parse("-1").unwrap().succ().to_string(), "0");
        assert_eq!(Int::parse("0").unwrap().pred().to_string(), "-1");
        assert_eq!(Int::parse("1000").unwrap().pred().to_string(), "999");
        assert_eq!(Int::parse("-999").unwrap().pred().to_string(), "-1000");
    }
}
