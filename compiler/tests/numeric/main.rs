//! Numeric ranges (`schema::numeric`): the grammars accept exactly the in-range texts.
//!
//! An independent oracle reads JSON number texts as exact decimals; every generated
//! grammar must pass `check`, print and parse back, accept the canonical (serde_json)
//! text of a value exactly when the value is in range, and sample only in-range texts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::cmp::Ordering;

use gbnfc_compiler::gbnf::{check, is_clean, parse, Expr, Grammar};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::schema::numeric::{
    decimal_range, effective_integer_bounds, integer_bounds, integer_multiple_of,
    integer_multiple_of_in_range, integer_range, integer_step, number_range, Limit, NumericError,
    RuleSet,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Number;

mod decimal_multiples;
mod integers;
mod multiples;
mod numbers;

// ---------------------------------------------------------------------------------------
// Oracle: exact values of number texts
// ---------------------------------------------------------------------------------------

/// `(-1)^neg × 0.digits × 10^adjusted`; digits without leading or trailing zeros; zero
/// has no digits.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Val {
    neg: bool,
    digits: Vec<u8>,
    adjusted: i128,
}

const SATURATE: i128 = 1_000_000_000_000_000_000_000_000_000_000;

/// Reads `int_digits`, `frac_digits`, exponent into a normalized value.
fn make(neg: bool, int: &[u8], frac: &[u8], exp: i128) -> Val {
    let mut digits: Vec<u8> = int.iter().chain(frac).copied().collect();
    let lead = digits.iter().take_while(|&&d| d == b'0').count();
    digits.drain(..lead);
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        return Val {
            neg: false,
            digits,
            adjusted: 0,
        };
    }
    // value = 0.digits × 10^(int.len() - lead + exp)
    let adjusted = int.len() as i128 - lead as i128 + exp;
    Val {
        neg,
        digits,
        adjusted,
    }
}

fn parse_exp(b: &[u8]) -> Option<i128> {
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut e: i128 = 0;
    for &d in digits {
        e = (e * 10 + i128::from(d - b'0')).min(SATURATE);
    }
    Some(if neg { -e } else { e })
}

/// The exact value of a text in strict JSON number syntax, or `None`.
fn json_value(text: &str) -> Option<Val> {
    let b = text.as_bytes();
    let mut i = 0;
    let neg = b.first() == Some(&b'-');
    if neg {
        i += 1;
    }
    let int_start = i;
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        _ => return None,
    }
    let int = &b[int_start..i];
    let mut frac: &[u8] = &[];
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        frac = &b[start..i];
    }
    let mut exp = 0;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        exp = parse_exp(&b[i + 1..])?;
        i = b.len();
    }
    if i != b.len() {
        return None;
    }
    Some(make(neg, int, frac, exp))
}

/// A bound's value: `-?digits(.digits)?(e[+-]?digits)?`.
fn bound_value(text: &str) -> Val {
    let (neg, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(p) => (&rest[..p], parse_exp(&rest.as_bytes()[p + 1..]).unwrap()),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    make(neg, int.as_bytes(), frac.as_bytes(), exp)
}

fn cmp_mag(a: &Val, b: &Val) -> Ordering {
    match (a.digits.is_empty(), b.digits.is_empty()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => a
            .adjusted
            .cmp(&b.adjusted)
            .then_with(|| a.digits.cmp(&b.digits)),
    }
}

fn cmp(a: &Val, b: &Val) -> Ordering {
    match (a.neg, b.neg) {
        (false, false) => cmp_mag(a, b),
        (true, true) => cmp_mag(b, a),
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
    }
}

/// A bound: value and whether it is inclusive.
type B = Option<(Val, bool)>;

fn in_range(v: &Val, lo: &B, hi: &B) -> bool {
    let lo_ok = lo.as_ref().is_none_or(|(l, inc)| match cmp(v, l) {
        Ordering::Greater => true,
        Ordering::Equal => *inc,
        Ordering::Less => false,
    });
    let hi_ok = hi.as_ref().is_none_or(|(h, inc)| match cmp(v, h) {
        Ordering::Less => true,
        Ordering::Equal => *inc,
        Ordering::Greater => false,
    });
    lo_ok && hi_ok
}

fn canonical_int(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let ok = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    ok && (digits == "0" && !text.starts_with('-') || !digits.starts_with('0'))
}

/// Plain and exponent spellings of a value that the grammars promise to handle.
fn spellings(v: &Val) -> Vec<String> {
    let sign = if v.neg { "-" } else { "" };
    if v.digits.is_empty() {
        return [
            "0", "-0", "0.0", "-0.000", "0e0", "-0.0E+12", "0e-007", "0E-0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
    }
    let digits: String = v.digits.iter().map(|&b| char::from(b)).collect();
    let mut out = Vec::new();
    if v.adjusted.abs() <= 400 {
        let adj = v.adjusted;
        let n = digits.len() as i128;
        let plain = if adj <= 0 {
            format!("0.{}{}", "0".repeat((-adj) as usize), digits)
        } else if adj >= n {
            format!("{}{}", digits, "0".repeat((adj - n) as usize))
        } else {
            format!("{}.{}", &digits[..adj as usize], &digits[adj as usize..])
        };
        out.push(format!("{sign}{plain}"));
        if plain.contains('.') {
            out.push(format!("{sign}{plain}00"));
        } else {
            out.push(format!("{sign}{plain}.0"));
        }
    }
    let mantissa = if digits.len() == 1 {
        digits.clone()
    } else {
        format!("{}.{}", &digits[..1], &digits[1..])
    };
    let e = v.adjusted - 1;
    out.push(format!("{sign}{mantissa}e{e}"));
    if e == 0 {
        out.push(format!("{sign}{mantissa}e-00"));
    }
    let padded = if mantissa.contains('.') {
        format!("{mantissa}0")
    } else {
        format!("{mantissa}.0")
    };
    out.push(format!(
        "{sign}{padded}E{}{:03}",
        if e < 0 { "-" } else { "+" },
        e.abs()
    ));
    out
}

// ---------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------

struct Built {
    grammar: Grammar,
    recognizer: Recognizer,
    sampler: Sampler,
}

fn build(root: Expr, rules: Vec<(String, Expr)>) -> Result<Built, TestCaseError> {
    let mut grammar = Grammar::default();
    grammar.push("root", root);
    for (name, body) in rules {
        grammar.push(name, body);
    }
    for rule in &grammar.rules {
        prop_assert!(rule.body.depth() < 200, "depth {}", rule.body.depth());
    }
    let diagnostics = check(&grammar);
    prop_assert!(
        is_clean(&diagnostics),
        "check refused: {:?}\n{}",
        diagnostics,
        grammar
    );
    let text = grammar.to_string();
    let reparsed = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    prop_assert_eq!(&reparsed, &grammar);
    let recognizer = Recognizer::new(&grammar).unwrap();
    let sampler = Sampler::new(&grammar).unwrap();
    Ok(Built {
        grammar,
        recognizer,
        sampler,
    })
}

impl Built {
    fn accepts(&self, text: &str) -> bool {
        self.recognizer.recognize(text).accepted
    }

    fn samples(&self, seed: u64, n: usize) -> Vec<String> {
        self.sampler.samples(
            seed,
            n,
            SampleOptions {
                max_len: 48,
                ..SampleOptions::default()
            },
        )
    }
}

fn int_bound(text: &Option<String>, inclusive: bool) -> B {
    text.as_ref().map(|t| (bound_value(t), inclusive))
}

fn canonicalize(digits: &str, neg: bool) -> String {
    let d = digits.trim_start_matches('0');
    if d.is_empty() {
        "0".to_string()
    } else if neg {
        format!("-{d}")
    } else {
        d.to_string()
    }
}

/// Integers near the bounds (same length, changed digits, one digit more or less) and
/// random ones.
fn integer_candidates(bounds: &[&Option<String>], rng: &mut ChaCha8Rng) -> Vec<String> {
    let mut out = vec!["0".to_string(), "1".to_string(), "-1".to_string()];
    for bound in bounds.iter().copied().flatten() {
        let neg = bound.starts_with('-');
        let digits = bound.trim_start_matches('-');
        out.push(bound.clone());
        for _ in 0..6 {
            let mut d: Vec<u8> = digits.bytes().collect();
            let i = rng.random_range(0..d.len());
            d[i] = b'0' + rng.random_range(0..10u8);
            if rng.random_bool(0.5) {
                let last = d.len() - 1;
                d[last] = b'0' + rng.random_range(0..10u8);
            }
            match rng.random_range(0..4) {
                0 => d.push(b'0' + rng.random_range(0..10u8)),
                1 if d.len() > 1 => {
                    d.pop();
                }
                _ => {}
            }
            let flip = rng.random_bool(0.1);
            out.push(canonicalize(&String::from_utf8(d).unwrap(), neg ^ flip));
        }
    }
    for _ in 0..4 {
        out.push(rng.random_range(-2000i64..2000).to_string());
        out.push(rng.random::<i64>().to_string());
    }
    out
}

fn integer_text() -> impl Strategy<Value = String> {
    prop_oneof![
        (-300i64..300).prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        (any::<bool>(), "[1-9][0-9]{0,45}").prop_map(|(neg, d)| if neg {
            format!("-{d}")
        } else {
            d
        }),
        Just("0".to_string()),
    ]
}

fn check_integer_grammar(
    built: &Built,
    lo: &B,
    hi: &B,
    candidates: &[String],
    seed: u64,
) -> Result<(), TestCaseError> {
    for text in candidates {
        let v = json_value(text).unwrap();
        prop_assert_eq!(
            built.accepts(text),
            in_range(&v, lo, hi),
            "{} with bounds {:?} {:?}\n{}",
            text,
            lo,
            hi,
            built.grammar
        );
    }
    for bad in ["-0", "00", "01", "1.0", "1e0", "+1", ""] {
        prop_assert!(!built.accepts(bad), "accepted {:?}", bad);
    }
    for text in built.samples(seed, 12) {
        prop_assert!(canonical_int(&text), "sample {:?}", text);
        let v = json_value(&text).unwrap();
        prop_assert!(
            in_range(&v, lo, hi),
            "sample {} out of {:?} {:?}",
            text,
            lo,
            hi
        );
    }
    Ok(())
}

fn nice_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-100i32..100).prop_map(f64::from),
        (-4000i32..4000).prop_map(|n| f64::from(n) / 8.0),
        (-100_000i64..100_000, -30i32..30).prop_map(|(m, e)| format!("{m}e{e}").parse().unwrap()),
        (-99i64..99, -330i32..310).prop_map(|(m, e)| format!("{m}e{e}").parse().unwrap()),
        any::<u64>()
            .prop_map(f64::from_bits)
            .prop_filter("finite", |x| x.is_finite()),
        prop::sample::select(vec![
            0.0,
            -0.0,
            5e-324,
            -5e-324,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            1e21,
            1e-7,
            0.1,
            1e16,
            1e15,
            -1.5e-5,
            0.5,
            -1.25,
            100.0,
        ]),
    ]
    .prop_filter("finite", |x| x.is_finite())
}
