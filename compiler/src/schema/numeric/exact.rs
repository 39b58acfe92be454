//! Exact decimals ([`Dec`]) and integers ([`Int`]) read from their JSON text, with the
//! comparisons, floors and ceilings the ranges need. No `f64` anywhere.

use super::{NumericError, Result, MAX_DIGITS, MAX_EXPONENT};
use serde_json::Number;
use std::cmp::Ordering;

/// An exact decimal: `(-1)^neg × digits × 10^exp`. `digits` are ASCII with no leading or
/// trailing zeros; zero has no digits, `neg == false` and `exp == 0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Dec {
    pub(super) neg: bool,
    pub(super) digits: Vec<u8>,
    pub(super) exp: i64,
}

impl Dec {
    pub(super) fn zero() -> Dec {
        Dec {
            neg: false,
            digits: Vec::new(),
            exp: 0,
        }
    }

    pub(super) fn from_u64(n: u64) -> Dec {
        Dec::normalized(false, n.to_string().into_bytes(), 0)
    }

    pub(super) fn normalized(neg: bool, mut digits: Vec<u8>, mut exp: i64) -> Dec {
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
    pub(super) fn parse(text: &str) -> Result<Dec> {
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

    pub(super) fn from_number(n: &Number) -> Result<Dec> {
        Dec::parse(&n.to_string())
    }

    pub(super) fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// `a` such that `10^(a-1) <= |self| < 10^a` (for nonzero values).
    pub(super) fn adjusted(&self) -> i64 {
        self.digits.len() as i64 + self.exp
    }

    pub(super) fn negated(&self) -> Dec {
        let mut d = self.clone();
        d.neg = !d.neg && !d.is_zero();
        d
    }

    pub(super) fn cmp_magnitude(&self, other: &Dec) -> Ordering {
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
    pub(super) fn int_digits(&self) -> Result<Vec<u8>> {
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
    pub(super) fn frac_digits(&self) -> Result<Vec<u8>> {
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

    pub(super) fn floor(&self) -> Result<Int> {
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

    /// `self × 10^scale`.
    pub(super) fn times_ten_to(mut self, scale: i64) -> Dec {
        if !self.is_zero() {
            self.exp += scale;
        }
        self
    }

    pub(super) fn ceil(&self) -> Result<Int> {
        Ok(self.negated().floor()?.negated())
    }

    /// `(mantissa, e)` with `|self| = mantissa × 10^e` and `1 <= mantissa < 10`.
    pub(super) fn scientific(&self) -> (Dec, i64) {
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
pub(super) fn by_sign(
    neg: bool,
    other_neg: bool,
    magnitudes: impl FnOnce() -> Ordering,
) -> Ordering {
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

pub(super) fn too_large(what: &str) -> NumericError {
    let shown: String = what.chars().take(40).collect();
    NumericError::TooComplex(format!(
        "the bound `{shown}` has more than {MAX_DIGITS} digits when written out"
    ))
}

/// An exact integer: sign and canonical ASCII magnitude (`"0"` for zero, never negative).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Int {
    pub(super) neg: bool,
    pub(super) mag: Vec<u8>,
}

impl Int {
    pub(super) fn new(neg: bool, mag: Vec<u8>) -> Int {
        let neg = neg && mag != b"0";
        Int { neg, mag }
    }

    pub(super) fn parse(text: &str) -> Result<Int> {
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

    pub(super) fn negated(&self) -> Int {
        Int::new(!self.neg, self.mag.clone())
    }

    pub(super) fn succ(&self) -> Int {
        if self.neg {
            Int::new(true, nat_dec(&self.mag))
        } else {
            Int::new(false, nat_inc(&self.mag))
        }
    }

    pub(super) fn pred(&self) -> Int {
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
pub(super) fn cmp_nat(a: &[u8], b: &[u8]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

pub(super) fn nat_inc(m: &[u8]) -> Vec<u8> {
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
pub(super) fn nat_dec(m: &[u8]) -> Vec<u8> {
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

pub(super) fn text(digits: &[u8]) -> String {
    digits.iter().map(|&b| char::from(b)).collect()
}
