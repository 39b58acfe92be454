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

// ---------------------------------------------------------------------------------------
// Integers
// ---------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    #[test]
    fn integer_range_is_exact(
        min in prop::option::weighted(0.8, integer_text()),
        max in prop::option::weighted(0.8, integer_text()),
        seed in any::<u64>(),
    ) {
        let lo = int_bound(&min, true);
        let hi = int_bound(&max, true);
        let empty = matches!((&lo, &hi), (Some((l, _)), Some((h, _))) if cmp(l, h) == Ordering::Greater);
        let result = integer_range(min.as_deref(), max.as_deref());
        if empty {
            prop_assert_eq!(result, Err(NumericError::Empty));
            return Ok(());
        }
        let built = build(result.unwrap(), Vec::new())?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let candidates = integer_candidates(&[&min, &max], &mut rng);
        check_integer_grammar(&built, &lo, &hi, &candidates, seed)?;
    }
}

fn number_bound() -> impl Strategy<Value = Number> {
    prop_oneof![
        (-300i64..300).prop_map(Number::from),
        any::<i64>().prop_map(Number::from),
        nice_f64().prop_map(|x| Number::from_f64(x).unwrap()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn integer_bounds_are_exact(
        minimum in prop::option::weighted(0.4, number_bound()),
        exclusive_minimum in prop::option::weighted(0.4, number_bound()),
        maximum in prop::option::weighted(0.4, number_bound()),
        exclusive_maximum in prop::option::weighted(0.4, number_bound()),
        seed in any::<u64>(),
    ) {
        let val = |n: &Option<Number>, inc: bool| n.as_ref().map(|n| (bound_value(&n.to_string()), inc));
        let bounds = [
            (val(&minimum, true), true),
            (val(&exclusive_minimum, false), true),
            (val(&maximum, true), false),
            (val(&exclusive_maximum, false), false),
        ];
        let inside = |v: &Val| {
            bounds.iter().all(|(b, lower)| if *lower { in_range(v, b, &None) } else { in_range(v, &None, b) })
        };
        let result = integer_bounds(
            minimum.as_ref(),
            exclusive_minimum.as_ref(),
            maximum.as_ref(),
            exclusive_maximum.as_ref(),
        );
        let (lo_text, hi_text) = match effective_integer_bounds(
            minimum.as_ref(),
            exclusive_minimum.as_ref(),
            maximum.as_ref(),
            exclusive_maximum.as_ref(),
        ) {
            Ok(b) => b,
            Err(e) => {
                prop_assert_eq!(e, NumericError::Empty);
                prop_assert_eq!(result, Err(NumericError::Empty));
                return Ok(());
            }
        };
        // The effective bounds are the extreme integers inside.
        for (text, step) in [(&lo_text, -1i32), (&hi_text, 1)] {
            if let Some(t) = text {
                prop_assert!(canonical_int(t), "{}", t);
                let v = bound_value(t);
                prop_assert!(inside(&v), "{} not inside", t);
                let beyond = if step < 0 { sub_one(t) } else { add_one(t) };
                prop_assert!(!inside(&bound_value(&beyond)), "{} inside too", beyond);
            }
        }
        let built = build(result.unwrap(), Vec::new())?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let candidates = integer_candidates(&[&lo_text, &hi_text], &mut rng);
        let lo = int_bound(&lo_text, true);
        let hi = int_bound(&hi_text, true);
        check_integer_grammar(&built, &lo, &hi, &candidates, seed)?;
        for text in &candidates {
            prop_assert_eq!(in_range(&bound_value(text), &lo, &hi), inside(&bound_value(text)));
        }
    }
}

/// `n + 1` for a canonical integer text.
fn add_one(text: &str) -> String {
    match text.strip_prefix('-') {
        Some(mag) => canonicalize(&nat_step(mag, false), true),
        None => canonicalize(&nat_step(text, true), false),
    }
}

/// `n - 1` for a canonical integer text.
fn sub_one(text: &str) -> String {
    match text.strip_prefix('-') {
        Some(mag) => canonicalize(&nat_step(mag, true), true),
        None if text == "0" => "-1".to_string(),
        None => canonicalize(&nat_step(text, false), false),
    }
}

fn nat_step(mag: &str, up: bool) -> String {
    let mut d: Vec<u8> = mag.bytes().collect();
    let mut i = d.len();
    let (from, to) = if up { (b'9', b'0') } else { (b'0', b'9') };
    loop {
        if i == 0 {
            d.insert(0, b'1');
            break;
        }
        i -= 1;
        if d[i] == from {
            d[i] = to;
        } else {
            d[i] = if up { d[i] + 1 } else { d[i] - 1 };
            break;
        }
    }
    String::from_utf8(d).unwrap()
}

#[test]
fn integer_edge_cases() {
    let accepts = |min: Option<&str>, max: Option<&str>, text: &str| {
        let mut g = Grammar::default();
        g.push("root", integer_range(min, max).unwrap());
        assert!(is_clean(&check(&g)), "{g}");
        Recognizer::new(&g).unwrap().recognize(text).accepted
    };
    assert!(accepts(Some("7"), Some("7"), "7"));
    assert!(!accepts(Some("7"), Some("7"), "8"));
    assert!(accepts(Some("0"), None, "0"));
    assert!(!accepts(Some("0"), None, "-1"));
    assert!(accepts(None, Some("-1"), "-1"));
    assert!(!accepts(None, Some("-1"), "0"));
    assert!(accepts(Some("-10"), Some("10"), "-10"));
    assert!(accepts(Some("-10"), Some("10"), "0"));
    assert!(!accepts(Some("-10"), Some("10"), "-11"));
    assert!(accepts(None, None, "-123456789012345678901234567890"));
    assert!(accepts(Some("0"), Some("0"), "0"));
    assert!(!accepts(Some("0"), Some("0"), "-0"));
    assert!(accepts(Some("-007"), Some("+0010"), "10"));
    let big = "-12345678901234567890123";
    assert!(accepts(Some(big), Some("5"), big));
    assert!(!accepts(Some(big), Some("5"), "-12345678901234567890124"));
    assert_eq!(
        integer_range(Some("3"), Some("2")),
        Err(NumericError::Empty)
    );
    assert!(matches!(
        integer_range(Some("1.5"), None),
        Err(NumericError::InvalidBound(_))
    ));
    // 1e308 is an exact 309-digit integer.
    let huge = Number::from_f64(1e308).unwrap();
    let mut g = Grammar::default();
    g.push(
        "root",
        integer_bounds(Some(&huge), None, None, None).unwrap(),
    );
    assert!(is_clean(&check(&g)));
    let r = Recognizer::new(&g).unwrap();
    let exact = format!("1{}", "0".repeat(308));
    assert!(r.recognize(&exact).accepted);
    assert!(!r.recognize(&format!("9{}", "9".repeat(307))).accepted);
    assert!(r.recognize(&format!("1{}1", "0".repeat(307))).accepted);
    // Very long bounds stay checkable (chunked repetitions, shallow trees).
    let long = format!("1{}", "0".repeat(4_500));
    let mut g = Grammar::default();
    g.push("root", integer_range(Some(&long), None).unwrap());
    assert!(is_clean(&check(&g)), "{:?}", check(&g));
    let r = Recognizer::new(&g).unwrap();
    assert!(r.recognize(&long).accepted);
    assert!(!r.recognize(&format!("9{}", "9".repeat(4_499))).accepted);
    let too_long = "9".repeat(20_000);
    assert!(matches!(
        integer_range(Some(&too_long), None),
        Err(NumericError::TooComplex(_))
    ));
}

#[test]
fn effective_bounds_examples() {
    let n = |x: f64| Number::from_f64(x).unwrap();
    let b =
        |min: Option<&Number>,
         xmin: Option<&Number>,
         max: Option<&Number>,
         xmax: Option<&Number>| { effective_integer_bounds(min, xmin, max, xmax).unwrap() };
    assert_eq!(b(None, Some(&n(2.5)), None, None), (Some("3".into()), None));
    assert_eq!(
        b(Some(&n(2.5)), None, Some(&n(7.9)), None),
        (Some("3".into()), Some("7".into()))
    );
    assert_eq!(
        b(None, None, Some(&n(-0.5)), None),
        (None, Some("-1".into()))
    );
    assert_eq!(
        b(None, Some(&n(-3.0)), None, Some(&n(10.0))),
        (Some("-2".into()), Some("9".into()))
    );
    assert_eq!(b(Some(&n(1e3)), None, None, None).0, Some("1000".into()));
    assert_eq!(
        b(Some(&Number::from(4)), Some(&Number::from(4)), None, None).0,
        Some("5".into())
    );
    assert_eq!(
        effective_integer_bounds(None, Some(&n(2.5)), None, Some(&n(3.0))),
        Err(NumericError::Empty)
    );
    assert_eq!(
        effective_integer_bounds(None, Some(&n(-0.5)), None, Some(&n(0.5))).unwrap(),
        (Some("0".into()), Some("0".into()))
    );
}

// ---------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------

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

fn next_toward(x: f64, up: bool) -> f64 {
    if x == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let bits = x.to_bits();
    let away = (x > 0.0) == up;
    f64::from_bits(if away { bits + 1 } else { bits - 1 })
}

fn f64_in_range(v: f64, lo: Option<(f64, bool)>, hi: Option<(f64, bool)>) -> bool {
    lo.is_none_or(|(l, inc)| v > l || (inc && v == l))
        && hi.is_none_or(|(h, inc)| v < h || (inc && v == h))
}

fn check_number_grammar(
    built: &Built,
    lo: &B,
    hi: &B,
    values: &[Val],
    seed: u64,
) -> Result<(), TestCaseError> {
    for v in values {
        for text in spellings(v) {
            let parsed = json_value(&text).unwrap();
            prop_assert_eq!(cmp(&parsed, v), Ordering::Equal, "{}", text);
            prop_assert_eq!(
                built.accepts(&text),
                in_range(v, lo, hi),
                "{} with bounds {:?} {:?}\n{}",
                text,
                lo,
                hi,
                built.grammar
            );
        }
    }
    for bad in [
        "", "-", ".5", "1.", "01", "1e", "+1", "1.5.2", "--1", "1e+-2", "0x10",
    ] {
        prop_assert!(!built.accepts(bad), "accepted {:?}", bad);
    }
    for text in built.samples(seed, 12) {
        let v = json_value(&text);
        prop_assert!(v.is_some(), "sample {:?} is not a JSON number", text);
        prop_assert!(
            in_range(&v.unwrap(), lo, hi),
            "sample {} out of {:?} {:?}",
            text,
            lo,
            hi
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn number_range_is_exact_for_floats(
        lo in prop::option::weighted(0.8, (nice_f64(), any::<bool>())),
        hi in prop::option::weighted(0.8, (nice_f64(), any::<bool>())),
        values in prop::collection::vec(nice_f64(), 6),
        seed in any::<u64>(),
    ) {
        let number = |x: f64| Number::from_f64(x).unwrap();
        let (lo_n, hi_n) = (lo.map(|(x, _)| number(x)), hi.map(|(x, _)| number(x)));
        let (min, xmin) = match lo {
            Some((_, true)) => (lo_n.as_ref(), None),
            Some((_, false)) => (None, lo_n.as_ref()),
            None => (None, None),
        };
        let (max, xmax) = match hi {
            Some((_, true)) => (hi_n.as_ref(), None),
            Some((_, false)) => (None, hi_n.as_ref()),
            None => (None, None),
        };
        let empty = match (lo, hi) {
            (Some((l, li)), Some((h, hi_inc))) => l > h || (l == h && !(li && hi_inc)),
            _ => false,
        };
        let result = number_range(min, xmin, max, xmax);
        if empty {
            prop_assert_eq!(result, Err(NumericError::Empty));
            return Ok(());
        }
        let built = build(result.unwrap(), Vec::new())?;
        let mut all = values.clone();
        for (x, _) in lo.iter().chain(hi.iter()) {
            all.extend([*x, next_toward(*x, true), next_toward(*x, false), -*x]);
        }
        all.retain(|x| x.is_finite());
        // The canonical serde_json text, judged by f64 comparison.
        for &x in &all {
            let text = serde_json::to_string(&x).unwrap();
            prop_assert_eq!(
                built.accepts(&text),
                f64_in_range(x, lo, hi),
                "{} with bounds {:?} {:?}",
                text,
                lo,
                hi
            );
        }
        for n in [0i64, 1, -1, 7, -300, i64::MAX, i64::MIN] {
            let text = serde_json::to_string(&n).unwrap();
            prop_assert_eq!(built.accepts(&text), f64_in_range(n as f64, lo, hi) || {
                // i64 values beyond 2^53 are compared exactly, not as f64.
                let v = json_value(&text).unwrap();
                in_range(&v, &lo.map(|(x, i)| (bound_value(&number(x).to_string()), i)), &hi.map(|(x, i)| (bound_value(&number(x).to_string()), i)))
            }, "{}", text);
        }
        let to_b = |b: Option<(f64, bool)>| b.map(|(x, inc)| (bound_value(&number(x).to_string()), inc));
        let vals: Vec<Val> = all.iter().map(|x| json_value(&serde_json::to_string(x).unwrap()).unwrap()).collect();
        check_number_grammar(&built, &to_b(lo), &to_b(hi), &vals, seed)?;
    }
}

fn decimal_text() -> impl Strategy<Value = String> {
    prop_oneof![
        ("-?[0-9]{1,25}", prop::option::of("[0-9]{1,40}")).prop_map(|(i, f)| match f {
            Some(f) => format!("{i}.{f}"),
            None => i,
        }),
        ("-?[0-9]{1,3}(\\.[0-9]{1,8})?", -60i32..60).prop_map(|(m, e)| format!("{m}e{e}")),
        "-?0\\.0{0,30}[1-9]{1,3}",
    ]
}

/// Values near `v`: digits changed, added, removed, magnitude shifted.
fn perturb(v: &Val, rng: &mut ChaCha8Rng) -> Val {
    let mut digits = v.digits.clone();
    let mut adjusted = v.adjusted;
    let mut neg = v.neg;
    if digits.is_empty() {
        digits.push(b'1');
        adjusted = rng.random_range(-3..3);
    }
    match rng.random_range(0..6) {
        0 => {
            let i = rng.random_range(0..digits.len());
            digits[i] = b'0' + rng.random_range(0..10u8);
        }
        1 => digits.push(b'0' + rng.random_range(0..10u8)),
        2 => {
            let keep = rng.random_range(0..digits.len());
            digits.truncate(keep.max(1));
        }
        3 => adjusted += rng.random_range(-2..=2),
        4 => neg = !neg,
        _ => {
            digits.push(b'0');
            digits.push(b'0' + rng.random_range(1..10u8));
        }
    }
    let sign = if neg { "-" } else { "" };
    let text: String = digits.iter().map(|&b| char::from(b)).collect();
    bound_value(&format!("{sign}0.{text}e{adjusted}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn decimal_range_is_exact(
        lo in prop::option::weighted(0.8, (decimal_text(), any::<bool>())),
        hi in prop::option::weighted(0.8, (decimal_text(), any::<bool>())),
        seed in any::<u64>(),
    ) {
        let to_b = |b: &Option<(String, bool)>| b.as_ref().map(|(t, exclusive)| (bound_value(t), !exclusive));
        let (lo_b, hi_b) = (to_b(&lo), to_b(&hi));
        let empty = match (&lo_b, &hi_b) {
            (Some((l, li)), Some((h, hi_inc))) => match cmp(l, h) {
                Ordering::Greater => true,
                Ordering::Equal => !(li & hi_inc),
                Ordering::Less => false,
            },
            _ => false,
        };
        let result = decimal_range(owned_limit(&lo), owned_limit(&hi));
        if empty {
            prop_assert_eq!(result, Err(NumericError::Empty));
            return Ok(());
        }
        let built = build(result.unwrap(), Vec::new())?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut values = vec![bound_value("0"), bound_value("1"), bound_value("-2.5")];
        for (b, _) in lo_b.iter().chain(hi_b.iter()) {
            values.push(b.clone());
            for _ in 0..5 {
                let mut v = perturb(b, &mut rng);
                if rng.random_bool(0.4) {
                    v = perturb(&v, &mut rng);
                }
                values.push(v);
            }
        }
        check_number_grammar(&built, &lo_b, &hi_b, &values, seed)?;
    }
}

fn owned_limit(b: &Option<(String, bool)>) -> Option<Limit<'_>> {
    b.as_ref().map(|(t, exclusive)| Limit {
        value: t.as_str(),
        exclusive: *exclusive,
    })
}

fn limit(b: Option<(&str, bool)>) -> Option<Limit<'_>> {
    b.map(|(value, exclusive)| Limit { value, exclusive })
}

#[test]
fn number_edge_cases() {
    let grammar = |lo: Option<(&str, bool)>, hi: Option<(&str, bool)>| {
        let mut g = Grammar::default();
        g.push("root", decimal_range(limit(lo), limit(hi)).unwrap());
        assert!(is_clean(&check(&g)), "{g}");
        Recognizer::new(&g).unwrap()
    };
    // Unbounded: every spelling in the documented subset.
    let any = grammar(None, None);
    for ok in [
        "0",
        "-0",
        "-0.0",
        "1.0",
        "0.1",
        "1e-7",
        "1.5e+300",
        "-1E5",
        "12345678901234567890",
        "1e0005",
        "0e0",
    ] {
        assert!(any.recognize(ok).accepted, "{ok}");
    }
    for bad in [
        "12e3", "0.5e1", "01", "1.", ".1", "-", "1e", "Infinity", "NaN",
    ] {
        assert!(!any.recognize(bad).accepted, "{bad}");
    }
    // Exclusive zero bounds.
    let positive = grammar(Some(("0", true)), None);
    for ok in ["1e-400", "0.0000001", "5e-324", "3"] {
        assert!(positive.recognize(ok).accepted, "{ok}");
    }
    for bad in ["0", "-0", "0.000", "0e5", "-1e-400"] {
        assert!(!positive.recognize(bad).accepted, "{bad}");
    }
    let negative = grammar(None, Some(("0", true)));
    assert!(negative.recognize("-1e-400").accepted);
    assert!(!negative.recognize("-0.0").accepted);
    // A single value.
    let point = grammar(Some(("-1.25", false)), Some(("-1.25", false)));
    for ok in ["-1.25", "-1.2500", "-1.25e0", "-1.250E+00"] {
        assert!(point.recognize(ok).accepted, "{ok}");
    }
    for bad in ["-1.2", "-1.26", "-1.251", "1.25", "-125e-2"] {
        assert!(!point.recognize(bad).accepted, "{bad}");
    }
    assert!(matches!(
        decimal_range(
            Some(Limit {
                value: "1",
                exclusive: true
            }),
            Some(Limit {
                value: "1",
                exclusive: false
            })
        ),
        Err(NumericError::Empty)
    ));
    // Extreme float bounds.
    let max = Number::from_f64(f64::MAX).unwrap();
    let tiny = Number::from_f64(5e-324).unwrap();
    let mut g = Grammar::default();
    g.push(
        "root",
        number_range(Some(&tiny), None, Some(&max), None).unwrap(),
    );
    assert!(is_clean(&check(&g)));
    let r = Recognizer::new(&g).unwrap();
    assert!(r.recognize("5e-324").accepted && r.recognize("1.7976931348623157e+308").accepted);
    assert!(!r.recognize("4.9e-324").accepted && !r.recognize("1.7976931348623158e308").accepted);
    assert!(!r.recognize("0").accepted);
    assert!(matches!(
        decimal_range(
            Some(Limit {
                value: "1e-20000",
                exclusive: false
            }),
            None
        ),
        Err(NumericError::TooComplex(_))
    ));
}

// ---------------------------------------------------------------------------------------
// multipleOf
// ---------------------------------------------------------------------------------------

fn build_rules(rules: RuleSet) -> Result<Built, TestCaseError> {
    build(rules.root, rules.rules)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn multiples_are_exact(k in 1u64..=1000, values in prop::collection::vec(any::<i64>(), 6), seed in any::<u64>()) {
        let built = build_rules(integer_multiple_of(k, "mul").unwrap())?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut all = values.clone();
        for _ in 0..6 {
            let q = rng.random_range(-1_000_000i64..1_000_000);
            all.push(q * k as i64);
            all.push(q * k as i64 + rng.random_range(1..k.max(2) as i64));
        }
        all.push(0);
        for n in all {
            let text = n.to_string();
            prop_assert_eq!(built.accepts(&text), n % k as i64 == 0, "{} k={}", text, k);
        }
        prop_assert!(!built.accepts("-0") && !built.accepts("00"));
        for text in built.samples(seed, 8) {
            prop_assert!(canonical_int(&text), "{}", text);
            let digits = text.trim_start_matches('-');
            let rem = digits.bytes().fold(0u64, |r, d| (r * 10 + u64::from(d - b'0')) % k);
            prop_assert_eq!(rem, 0, "{}", text);
        }
    }

    #[test]
    fn multiples_in_range_are_exact(
        k in 1u64..=60,
        min in prop::option::weighted(0.8, -3000i64..3000),
        max in prop::option::weighted(0.8, -3000i64..3000),
        seed in any::<u64>(),
    ) {
        let result = integer_multiple_of_in_range(
            k,
            min.map(|m| m.to_string()).as_deref(),
            max.map(|m| m.to_string()).as_deref(),
            "m-of",
        );
        let inside = |n: i64| min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m) && n % k as i64 == 0;
        let lo = min.unwrap_or(-100_000);
        let hi = max.unwrap_or(100_000);
        if (lo..=hi).all(|n| !inside(n)) {
            prop_assert_eq!(result, Err(NumericError::Empty));
            return Ok(());
        }
        let built = build_rules(result.unwrap())?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut candidates: Vec<i64> = (0..30).map(|_| rng.random_range(lo - 50..=hi + 50)).collect();
        for b in [min, max].into_iter().flatten() {
            candidates.extend(b - 2..=b + 2);
        }
        for n in candidates {
            prop_assert_eq!(built.accepts(&n.to_string()), inside(n), "{} k={} {:?} {:?}", n, k, min, max);
        }
        let b = |m: Option<i64>| m.map(|m| (bound_value(&m.to_string()), true));
        for text in built.samples(seed, 8) {
            prop_assert!(canonical_int(&text), "{}", text);
            let digits = text.trim_start_matches('-');
            let rem = digits.bytes().fold(0u64, |r, d| (r * 10 + u64::from(d - b'0')) % k);
            prop_assert!(rem == 0 && in_range(&bound_value(&text), &b(min), &b(max)), "{}", text);
        }
    }
}

#[test]
fn multiple_edge_cases() {
    assert!(matches!(
        integer_multiple_of(0, "m"),
        Err(NumericError::InvalidMultiple(_))
    ));
    assert!(matches!(
        integer_multiple_of(1001, "m"),
        Err(NumericError::TooComplex(_))
    ));
    assert!(matches!(
        integer_multiple_of(3, "bad_name"),
        Err(NumericError::InvalidPrefix(_))
    ));
    assert_eq!(
        integer_multiple_of_in_range(10, Some("1"), Some("9"), "m"),
        Err(NumericError::Empty)
    );
    // Only 0 in range.
    let rules = integer_multiple_of_in_range(10, Some("-9"), Some("9"), "m").unwrap();
    let mut g = Grammar::default();
    g.push("root", rules.root);
    for (name, body) in rules.rules {
        g.push(name, body);
    }
    assert!(is_clean(&check(&g)));
    let r = Recognizer::new(&g).unwrap();
    assert!(r.recognize("0").accepted && !r.recognize("10").accepted);
    // Bounds too long for the product construction.
    let long = "1".repeat(30);
    assert!(matches!(
        integer_multiple_of_in_range(997, Some(&format!("-{long}")), Some(&long), "m"),
        Err(NumericError::TooComplex(_))
    ));
    // multipleOf for integers: the numerator in lowest terms.
    let n = |x: f64| Number::from_f64(x).unwrap();
    assert_eq!(integer_step(&n(2.5)), Ok(5));
    assert_eq!(integer_step(&n(0.5)), Ok(1));
    assert_eq!(integer_step(&n(0.1)), Ok(1));
    assert_eq!(integer_step(&n(0.75)), Ok(3));
    assert_eq!(integer_step(&Number::from(12)), Ok(12));
    assert_eq!(integer_step(&n(1e3)), Ok(1000));
    assert!(integer_step(&n(-2.0)).is_err());
    assert!(integer_step(&n(0.0)).is_err());
}

/// Every pair of bounds from a small set with shared digit prefixes, against every plain
/// text with up to three fraction digits (and exponent spellings of each).
#[test]
fn decimal_range_grid() {
    let bounds = ["-1.05", "-0.5", "0", "0.05", "0.5", "0.505", "1", "1.005"];
    let mut texts = Vec::new();
    let digits = ["0", "1", "5", "9"];
    let mut fracs = vec![String::new()];
    for len in 1..=3 {
        let mut level = vec![String::new()];
        for _ in 0..len {
            level = level
                .iter()
                .flat_map(|p| digits.iter().map(move |d| format!("{p}{d}")))
                .collect();
        }
        fracs.extend(level.into_iter().map(|f| format!(".{f}")));
    }
    for sign in ["", "-"] {
        for int in ["0", "1", "2"] {
            for frac in &fracs {
                texts.push(format!("{sign}{int}{frac}"));
            }
        }
    }
    for lo in bounds.iter().map(Some).chain([None]) {
        for hi in bounds.iter().map(Some).chain([None]) {
            for lo_x in [false, true] {
                for hi_x in [false, true] {
                    let lo_l = lo.map(|v| Limit {
                        value: v,
                        exclusive: lo_x,
                    });
                    let hi_l = hi.map(|v| Limit {
                        value: v,
                        exclusive: hi_x,
                    });
                    let lo_b = lo.map(|v| (bound_value(v), !lo_x));
                    let hi_b = hi.map(|v| (bound_value(v), !hi_x));
                    let Ok(expr) = decimal_range(lo_l, hi_l) else {
                        let some = texts
                            .iter()
                            .any(|t| in_range(&json_value(t).unwrap(), &lo_b, &hi_b));
                        assert!(!some, "empty for {lo:?} {hi:?}");
                        continue;
                    };
                    let mut g = Grammar::default();
                    g.push("root", expr);
                    assert!(is_clean(&check(&g)), "{g}");
                    let r = Recognizer::new(&g).unwrap();
                    for t in &texts {
                        let v = json_value(t).unwrap();
                        let expected = in_range(&v, &lo_b, &hi_b);
                        assert_eq!(
                            r.recognize(t).accepted,
                            expected,
                            "{t} in {lo:?}/{lo_x} {hi:?}/{hi_x}\n{g}"
                        );
                        if t.len() <= 5 {
                            for s in spellings(&v) {
                                assert_eq!(
                                    r.recognize(&s).accepted,
                                    expected,
                                    "{s} in {lo:?}/{lo_x} {hi:?}/{hi_x}\n{g}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
