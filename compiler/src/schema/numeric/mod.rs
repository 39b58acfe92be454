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

mod automaton;
mod decimal;
mod decimal_multiple;
mod digits;
mod exact;
mod fraction;
mod integers;
mod multiple;
pub mod value;

pub use crate::automaton::RuleSet;
pub use decimal::{decimal_range, number_range, Limit};
pub use decimal_multiple::{decimal_multiple_of_in_range, Bounds, MAX_STEP_PLACES, MAX_TINY};
pub use integers::{effective_integer_bounds, integer_bounds, integer_range};
pub use multiple::{integer_multiple_of, integer_multiple_of_in_range, integer_step};

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::exact::{Dec, Int};
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
