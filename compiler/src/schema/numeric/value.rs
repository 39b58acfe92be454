//! Exact questions about a schema's numbers, for the stages outside this module (merging
//! bounds, `enum`/`const` checks, counts, canonical text). Every answer is read from the
//! number's JSON text (serde_json keeps it: `arbitrary_precision`), never through `f64`;
//! a number too large to read exactly gives `None`, and the caller stays conservative.

use std::cmp::Ordering;

use serde_json::{Number, Value};

use super::exact::Dec;
use super::MAX_DIGITS;

/// How `a` compares with `b` by value (`1`, `1.0` and `10e-1` are equal).
pub fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    Some(Dec::from_number(a).ok()?.cmp(&Dec::from_number(b).ok()?))
}

/// Whether `a` and `b` are the same number, by value; numbers too large to read are equal
/// only when spelled alike.
pub fn equal(a: &Number, b: &Number) -> bool {
    compare(a, b).map_or(a == b, Ordering::is_eq)
}

/// How `n` compares with zero.
pub fn sign(n: &Number) -> Option<Ordering> {
    let d = Dec::from_number(n).ok()?;
    Some(if d.is_zero() {
        Ordering::Equal
    } else if d.neg {
        Ordering::Less
    } else {
        Ordering::Greater
    })
}

/// Whether `n` is an integer by value (`2.0` and `1e3` are).
pub fn is_integral(n: &Number) -> Option<bool> {
    Dec::from_number(n).ok().map(|d| d.exp >= 0)
}

/// `n` as a count (`minLength`, `maxItems`, …): a non-negative integer by value, saturated
/// at `u64::MAX` (no string, array or object is longer). `None` for anything else.
pub fn count(n: &Number) -> Option<u64> {
    let d = Dec::from_number(n).ok()?;
    if d.neg || d.exp < 0 {
        return None;
    }
    if d.adjusted() > 20 {
        return Some(u64::MAX);
    }
    let digits = d.int_digits().ok()?;
    Some(
        std::str::from_utf8(&digits)
            .ok()?
            .parse::<u64>()
            .unwrap_or(u64::MAX),
    )
}

/// Whether `value` is a multiple of `step` (`step > 0`). `None` when the arithmetic would
/// not fit in 128 bits.
pub fn is_multiple(value: &Number, step: &Number) -> Option<bool> {
    let v = Dec::from_number(value).ok()?;
    let k = Dec::from_number(step).ok()?;
    if k.neg || k.is_zero() {
        return None;
    }
    if v.is_zero() {
        return Some(true);
    }
    let a = small(&v.digits)?;
    let mut b = small(&k.digits)?;
    // value / step = (a / b) × 10^shift
    let shift = v.exp - k.exp;
    if shift >= 0 {
        // b divides a × 10^shift: b's factors 2 and 5 (at most `shift` of each) go into 10^shift.
        for p in [2u128, 5] {
            let mut left = shift;
            while left > 0 && b.is_multiple_of(p) {
                b /= p;
                left -= 1;
            }
        }
        Some(a.is_multiple_of(b))
    } else {
        let scale = 10u128.checked_pow(u32::try_from(-shift).ok()?)?;
        Some(a.is_multiple_of(b.checked_mul(scale)?))
    }
}

fn small(digits: &[u8]) -> Option<u128> {
    if digits.len() > 38 {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// The canonical text of a number: the one spelling the grammar is built to accept for
/// it. Integral values are written as integers (`1.0` → `1`, `1e3` → `1000`, `-0` → `0`);
/// other values as a shortest-representation printer writes them (the layout of `ryu`,
/// which serde_json used for floats: `0.001`, `12.5`, `1.5e-7`, `1e300`), digit for digit.
/// With `float_style` (draft 4, where `1.0` is not an integer) a number written with a
/// fraction or exponent keeps that style: `1.0`, `1e21`.
pub fn canonical_text(n: &Number, float_style: bool) -> String {
    let text = n.as_str();
    let Ok(d) = Dec::from_number(n) else {
        return text.to_string();
    };
    let written_as_float = text.contains(['.', 'e', 'E']);
    if float_style && written_as_float {
        return shortest_layout(&d, true);
    }
    if d.is_zero() {
        return "0".to_string();
    }
    match d.int_digits() {
        Ok(digits) if d.exp >= 0 && digits.len() <= MAX_DIGITS => {
            let sign = if d.neg { "-" } else { "" };
            format!("{sign}{}", String::from_utf8_lossy(&digits))
        }
        _ => shortest_layout(&d, false),
    }
}

/// `d` laid out the way `ryu` lays out a float's shortest digits: plain notation when the
/// decimal point falls within 16 places of the first digit (or 5 before it), exponent
/// notation otherwise; `integral_point` writes an integer as `1.0`.
pub(super) fn shortest_layout(d: &Dec, integral_point: bool) -> String {
    let mut out = String::new();
    if d.neg {
        out.push('-');
    }
    if d.is_zero() {
        out.push_str(if integral_point { "0.0" } else { "0" });
        return out;
    }
    let digits = String::from_utf8_lossy(&d.digits);
    let length = d.digits.len() as i64;
    let point = length + d.exp; // 10^(point-1) <= |d| < 10^point
    if d.exp >= 0 && point <= 16 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', d.exp as usize));
        if integral_point {
            out.push_str(".0");
        }
    } else if 0 < point && point <= 16 {
        let (whole, fraction) = digits.split_at(point as usize);
        out.push_str(whole);
        out.push('.');
        out.push_str(fraction);
    } else if -5 < point && point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-point) as usize));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        out.push_str(&(point - 1).to_string());
    }
    out
}

/// Are `a` and `b` the same JSON value as JSON Schema compares them (`enum`, `const`,
/// `uniqueItems`): numbers by value, whatever their spelling (`1` and `1.0` are equal),
/// objects whatever their key order.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => equal(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn num(text: &str) -> Number {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn comparisons_are_exact_beyond_64_bits_and_17_digits() {
        let cmp = |a: &str, b: &str| compare(&num(a), &num(b)).unwrap();
        assert_eq!(
            cmp("9007199254740993", "9007199254740992"),
            Ordering::Greater
        );
        assert_eq!(
            cmp("18446744073709551616", "18446744073709551615"),
            Ordering::Greater
        );
        assert_eq!(cmp("0.10000000000000001", "0.1"), Ordering::Greater);
        assert_eq!(cmp("1e400", "1e399"), Ordering::Greater);
        assert_eq!(cmp("-1e-400", "0"), Ordering::Less);
        assert!(equal(&num("1"), &num("1.0")) && equal(&num("10e-1"), &num("1")));
        assert!(!equal(&num("9007199254740993"), &num("9007199254740992")));
    }

    #[test]
    fn counts_and_multiples_are_exact() {
        assert_eq!(count(&num("2.0")), Some(2));
        assert_eq!(count(&num("1e2")), Some(100));
        assert_eq!(count(&num("18446744073709551616")), Some(u64::MAX));
        assert_eq!(count(&num("1e400")), Some(u64::MAX));
        assert_eq!(count(&num("2.5")), None);
        assert_eq!(count(&num("-1")), None);
        let multiple = |v: &str, k: &str| is_multiple(&num(v), &num(k)).unwrap();
        assert!(multiple("0.3", "0.1") && multiple("7.5", "2.5") && multiple("1e3", "8"));
        assert!(!multiple("9007199254740993", "2") && multiple("9007199254740994", "2"));
        assert!(!multiple("0.30000000000000001", "0.1") && !multiple("1", "0.3"));
        assert!(multiple("0", "0.7"));
    }

    #[test]
    fn canonical_text_writes_integers_whole_and_others_in_shortest_layout() {
        let text = |t: &str| canonical_text(&num(t), false);
        assert_eq!(text("1.0"), "1");
        assert_eq!(text("-0.0"), "0");
        assert_eq!(text("1e21"), "1000000000000000000000");
        assert_eq!(text("18446744073709551616"), "18446744073709551616");
        assert_eq!(text("1.50"), "1.5");
        assert_eq!(text("0.00012"), "0.00012");
        assert_eq!(text("1.2E-7"), "1.2e-7");
        assert_eq!(text("15e-1"), "1.5");
        assert_eq!(text("1.5e-300"), "1.5e-300");
        assert_eq!(text("1.5e300"), format!("15{}", "0".repeat(299)));
        assert_eq!(text("1e10001"), "1e10001");
        assert_eq!(text("0.10000000000000000001"), "0.10000000000000000001");
        let float = |t: &str| canonical_text(&num(t), true);
        assert_eq!(float("1.0"), "1.0");
        assert_eq!(float("1e21"), "1e21");
        assert_eq!(float("2.50"), "2.5");
        assert_eq!(canonical_text(&num("3"), true), "3");
    }

    #[test]
    fn shortest_layout_agrees_with_ryu_on_floats() {
        for f in [
            0.1, 1.5e-7, 123.456, 1e-5, 1.25e-4, 9.87e15, 1e16, 2.5e16, 5e-324, 1.7e308,
        ] {
            let n = Number::from_f64(f).unwrap();
            let d = Dec::from_number(&n).unwrap();
            assert_eq!(
                shortest_layout(&d, true),
                ryu::Buffer::new().format(f),
                "{f}"
            );
        }
    }
}
