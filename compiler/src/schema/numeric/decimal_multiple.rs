//! `multipleOf` with a decimal step for numbers (`0.01`, `0.25`, `2.5`), alone or within
//! bounds: the canonical texts of the multiples, as a minimized automaton.
//!
//! A step `q = a × 10^-k` (`a` an integer, `k` the step's fraction digits) divides `x`
//! exactly when `N = x × 10^k` is an integer divisible by `a`. So the multiples of `q`
//! within bounds are the integers `N` of the integer machine ([`Machine`]: divisor `a`,
//! bounds times `10^k`) written with the decimal point `k` digits from the end. The
//! machine here reads the decimal text and feeds the integer machine the digits `N` is
//! written with: the integer part's digits, the fraction's digits after its leading zeros
//! (`0.05` is `N = 5` for `k = 2`), and at the end the zeros that pad the fraction to `k`
//! digits (`1.5` is `N = 150`).
//!
//! The texts accepted are canonical ([`super::value::canonical_text`]): integral values
//! as integers (and, with `integral_point`, also as draft-04 writes them: `2.0`, `0.0`),
//! others without trailing zeros, never `-0`. Canonical text switches to
//! exponent notation below `1e-5` and, for values with a fraction, from `1e16`: the few
//! multiples below `1e-5` within bounds (at most [`MAX_TINY`]) are added as literals in
//! that notation; values with a fraction from `1e16` up are accepted in plain notation
//! only (`12345678901234567.5`, not `1.23456789012345675e16`).

use super::automaton::{self, check_prefix, TextAutomaton};
use super::exact::{Dec, Int};
use super::integers::scaled_int_bounds;
use super::multiple::{Machine, State};
use super::value::shortest_layout;
use super::{NumericError, Result, MAX_MULTIPLE};
use crate::automaton::RuleSet;
use crate::gbnf::Expr;
use serde_json::Number;

/// The most fraction digits a decimal step may have.
pub const MAX_STEP_PLACES: u32 = 18;

/// The most multiples below `1e-5` (in magnitude, within bounds) written as literals.
pub const MAX_TINY: u64 = 100;

/// The most zeros canonical text writes between the point and the first digit of a
/// number below 1 (`0.0000d`); smaller numbers are written with an exponent.
const PLAIN_LEADING_ZEROS: u32 = 4;

/// JSON Schema's four bounds on a number, any of them absent.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bounds<'a> {
    /// `minimum`.
    pub minimum: Option<&'a Number>,
    /// `exclusiveMinimum` (the draft-6 number form).
    pub exclusive_minimum: Option<&'a Number>,
    /// `maximum`.
    pub maximum: Option<&'a Number>,
    /// `exclusiveMaximum` (the draft-6 number form).
    pub exclusive_maximum: Option<&'a Number>,
}

/// Canonical number texts of the multiples of `step` within `bounds` (see the module
/// documentation), as rules named `{prefix}-{n}`; with `integral_point`, integral
/// multiples also with a `.0` after them (draft-04's canonical text).
///
/// # Errors
/// [`NumericError::InvalidMultiple`] unless `step > 0`; [`NumericError::TooComplex`] when
/// the step has more than [`MAX_STEP_PLACES`] fraction digits, its digits make an integer
/// above [`MAX_MULTIPLE`], more than [`MAX_TINY`] multiples lie below `1e-5`, or the
/// automaton is too large; [`NumericError::Empty`] when no multiple is within bounds;
/// [`NumericError::InvalidBound`], [`NumericError::InvalidPrefix`].
///
/// ```
/// use gbnfc_compiler::gbnf::Grammar;
/// use gbnfc_compiler::recognize::Recognizer;
/// use gbnfc_compiler::schema::numeric::{decimal_multiple_of_in_range, Bounds};
/// let number = |text: &str| text.parse::<serde_json::Number>().unwrap();
/// let (step, max) = (number("0.25"), number("10"));
/// let bounds = Bounds { maximum: Some(&max), ..Bounds::default() };
/// let rules = decimal_multiple_of_in_range(&step, bounds, false, "quarter").unwrap();
/// let mut g = Grammar::default();
/// g.push("root", rules.root);
/// for (name, body) in rules.rules {
///     g.push(name, body);
/// }
/// let r = Recognizer::new(&g).unwrap();
/// assert!(r.recognize("9.75").accepted && r.recognize("-0.5").accepted);
/// assert!(!r.recognize("10.25").accepted && !r.recognize("0.1").accepted);
/// ```
pub fn decimal_multiple_of_in_range(
    step: &Number,
    bounds: Bounds<'_>,
    integral_point: bool,
    prefix: &str,
) -> Result<RuleSet> {
    check_prefix(prefix)?;
    let (a, k) = scaled_step(step)?;
    let (lo, hi) = scaled_int_bounds(
        bounds.minimum,
        bounds.exclusive_minimum,
        bounds.maximum,
        bounds.exclusive_maximum,
        i64::from(k),
    )?;
    let tiny = tiny_multiples(a, k, lo.as_ref(), hi.as_ref())?;
    let machine = DecimalText {
        integers: Machine::new(a, lo.as_ref(), hi.as_ref()),
        places: k,
        integral_point,
    };
    let literals: Vec<Expr> = tiny
        .iter()
        .map(|text| Expr::literal(text.as_str()))
        .collect();
    match automaton::rules(&machine, prefix) {
        Err(NumericError::Empty) if !literals.is_empty() => Ok(RuleSet {
            root: Expr::alt(literals),
            rules: Vec::new(),
        }),
        Ok(mut set) => {
            if !literals.is_empty() {
                set.root = Expr::alt(std::iter::once(set.root).chain(literals));
            }
            Ok(set)
        }
        Err(err) => Err(err),
    }
}

/// `(a, k)` with `step = a × 10^-k`, `k` the step's fraction digits (0 for an integral
/// step).
fn scaled_step(step: &Number) -> Result<(u64, u32)> {
    let q = Dec::from_number(step)?;
    if q.neg || q.is_zero() {
        return Err(NumericError::InvalidMultiple(step.to_string()));
    }
    let places = u32::try_from(-q.exp.min(0)).unwrap_or(u32::MAX);
    if places > MAX_STEP_PLACES {
        return Err(NumericError::TooComplex(format!(
            "multipleOf {step} has more than {MAX_STEP_PLACES} fraction digits"
        )));
    }
    let too_big = || {
        NumericError::TooComplex(format!(
            "the digits of multipleOf {step} make an integer above {MAX_MULTIPLE}, the largest divisor enforced by the grammar"
        ))
    };
    let mut a: u64 = 0;
    for &d in &q.digits {
        a = a
            .checked_mul(10)
            .and_then(|a| a.checked_add(u64::from(d - b'0')))
            .ok_or_else(too_big)?;
    }
    for _ in 0..q.exp.max(0) {
        a = a.checked_mul(10).ok_or_else(too_big)?;
    }
    if a > MAX_MULTIPLE {
        return Err(too_big());
    }
    Ok((a, places))
}

/// Canonical texts of the multiples `N × 10^-k` (`N` a multiple of `a` within `lo..=hi`)
/// below `1e-5` in magnitude, which canonical text writes in exponent notation.
fn tiny_multiples(a: u64, k: u32, lo: Option<&Int>, hi: Option<&Int>) -> Result<Vec<String>> {
    // |x| < 1e-5 exactly when |N| < 10^(k-5).
    let Some(limit) = k.checked_sub(5).map(|e| 10u64.pow(e)) else {
        return Ok(Vec::new());
    };
    let (lo, hi) = (lo.map(saturated), hi.map(saturated));
    let mut texts = Vec::new();
    for neg in [false, true] {
        // The magnitudes allowed for this sign, within 1..limit.
        let (least, most) = if neg {
            (hi.map(|h| -h), lo.map(|l| -l))
        } else {
            (lo, hi)
        };
        let first = least.unwrap_or(1).max(1);
        let last = most.unwrap_or(i128::MAX).min(i128::from(limit) - 1);
        if first > last {
            continue;
        }
        let a = i128::from(a);
        let count = last / a - (first - 1) / a;
        if count as u64 + texts.len() as u64 > MAX_TINY {
            return Err(NumericError::TooComplex(format!(
                "more than {MAX_TINY} multiples lie below 1e-5, where canonical text uses an exponent"
            )));
        }
        let mut n = (first + a - 1) / a * a;
        while n <= last {
            let value = Dec::normalized(neg, n.to_string().into_bytes(), -i64::from(k));
            texts.push(shortest_layout(&value, false));
            n += a;
        }
    }
    Ok(texts)
}

/// `i` as an `i128`, saturated past 10^30 (tiny multiples are below 10^13).
fn saturated(i: &Int) -> i128 {
    const LIMIT: i128 = 1_000_000_000_000_000_000_000_000_000_000;
    let magnitude = if i.mag.len() > 30 {
        LIMIT
    } else {
        i.mag
            .iter()
            .fold(0i128, |m, &d| m * 10 + i128::from(d - b'0'))
            .min(LIMIT)
    };
    if i.neg {
        -magnitude
    } else {
        magnitude
    }
}

/// Reads the canonical decimal text of `N × 10^-places` and runs `integers` on `N`.
struct DecimalText {
    integers: Machine,
    places: u32,
    /// Integral values may end in `.0`.
    integral_point: bool,
}

/// Where the reading of a decimal text stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Reading {
    /// Before the first digit, after a `-` if `neg`.
    Sign { neg: bool },
    /// The integer part is `0`.
    Zero { neg: bool },
    /// In a nonzero integer part; `integers` has read its digits.
    Whole { integers: State },
    /// In the fraction, past `zeros` leading zeros after an integer part of `0`.
    LeadingZeros { neg: bool, zeros: u32 },
    /// In the fraction, `read` digits of it read; `nonzero` if the last one is not `0`.
    /// (With `places == 0`, only the `0` of an integral value's `.0`, not fed to
    /// `integers`.)
    Fraction {
        integers: State,
        read: u32,
        nonzero: bool,
    },
}

impl DecimalText {
    /// The integer machine after the sign of `N`.
    fn signed(&self, neg: bool) -> Option<State> {
        let start = self.integers.start();
        if neg {
            self.integers.step(start, b'-')
        } else {
            Some(start)
        }
    }

    /// Whether `N` is accepted once `zeros` more zeros are appended.
    fn accepts_padded(&self, mut state: State, zeros: u32) -> bool {
        for _ in 0..zeros {
            match self.integers.step(state, b'0') {
                Some(next) => state = next,
                None => return false,
            }
        }
        self.integers.accepts(state)
    }
}

impl TextAutomaton for DecimalText {
    type State = Reading;

    fn start(&self) -> Reading {
        Reading::Sign { neg: false }
    }

    fn step(&self, state: Reading, symbol: u8) -> Option<Reading> {
        let digit = symbol.is_ascii_digit();
        match state {
            Reading::Sign { neg: false } if symbol == b'-' => {
                self.signed(true).map(|_| Reading::Sign { neg: true })
            }
            Reading::Sign { neg } if symbol == b'0' => Some(Reading::Zero { neg }),
            Reading::Sign { neg } if digit => Some(Reading::Whole {
                integers: self.integers.step(self.signed(neg)?, symbol)?,
            }),
            Reading::Zero { neg } if symbol == b'.' && (self.places > 0 || self.integral_point) => {
                Some(Reading::LeadingZeros { neg, zeros: 0 })
            }
            Reading::Whole { integers } if digit => Some(Reading::Whole {
                integers: self.integers.step(integers, symbol)?,
            }),
            Reading::Whole { integers }
                if symbol == b'.' && (self.places > 0 || self.integral_point) =>
            {
                Some(Reading::Fraction {
                    integers,
                    read: 0,
                    nonzero: false,
                })
            }
            // A zero that leaves no room for a nonzero digit after it is no use, unless
            // it is the `0` of `0.0`; past four, the value is below 1e-5, which
            // canonical text writes with an exponent (the literals of `tiny_multiples`).
            Reading::LeadingZeros { neg, zeros } if symbol == b'0' => ((zeros + 2 <= self.places
                && zeros < PLAIN_LEADING_ZEROS)
                || (self.integral_point && zeros == 0 && !neg))
                .then_some(Reading::LeadingZeros {
                    neg,
                    zeros: zeros + 1,
                }),
            Reading::LeadingZeros { neg, zeros } if digit && zeros < self.places => {
                Some(Reading::Fraction {
                    integers: self.integers.step(self.signed(neg)?, symbol)?,
                    read: zeros + 1,
                    nonzero: true,
                })
            }
            Reading::Fraction { integers, read, .. } if digit && read < self.places => {
                Some(Reading::Fraction {
                    integers: self.integers.step(integers, symbol)?,
                    read: read + 1,
                    nonzero: symbol != b'0',
                })
            }
            Reading::Fraction {
                integers, read: 0, ..
            } if symbol == b'0' && self.integral_point => Some(Reading::Fraction {
                integers,
                read: 1,
                nonzero: false,
            }),
            _ => None,
        }
    }

    fn accepts(&self, state: Reading) -> bool {
        let zero_in_range = || {
            self.integers
                .step(self.integers.start(), b'0')
                .is_some_and(|zero| self.integers.accepts(zero))
        };
        match state {
            Reading::Sign { .. } | Reading::Zero { neg: true } => false,
            Reading::Zero { neg: false } => zero_in_range(),
            // `0.0`
            Reading::LeadingZeros { neg, zeros } => {
                self.integral_point && !neg && zeros == 1 && zero_in_range()
            }
            Reading::Whole { integers } => self.accepts_padded(integers, self.places),
            Reading::Fraction { integers, read, .. } if self.places == 0 => {
                read == 1 && self.integers.accepts(integers)
            }
            Reading::Fraction {
                integers,
                read,
                nonzero,
            } => {
                // `x.0` is an integral value's `.0`.
                (nonzero || (read == 1 && self.integral_point))
                    && self.accepts_padded(integers, self.places - read)
            }
        }
    }
}
