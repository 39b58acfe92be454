//! `multipleOf` with a decimal step for numbers, alone and within bounds: the grammar
//! accepts the canonical text of a value exactly when it is a multiple within bounds.
//! The oracle is integer arithmetic at a scale finer than the step and the bounds.

use super::*;
use gbnfc_compiler::schema::canon::number_text;
use gbnfc_compiler::schema::numeric::{decimal_multiple_of_in_range, Bounds};

/// Steps: powers of ten, steps that are not, steps whose small multiples canonical text
/// writes with an exponent (`0.000001`, `0.0000025`), integral ones.
const STEPS: &[&str] = &[
    "0.01",
    "0.25",
    "0.5",
    "2.5",
    "0.05",
    "1.5",
    "0.001",
    "0.3",
    "0.000001",
    "0.0000025",
    "0.75",
    "12.5",
    "4",
];

/// `text` (`-?digits(.digits)?`) times `10^scale`, exactly.
fn scaled(text: &str, scale: u32) -> i128 {
    let (neg, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int, frac) = rest.split_once('.').unwrap_or((rest, ""));
    assert!(frac.len() as u32 <= scale, "{text} at scale {scale}");
    let digits = format!("{int}{frac}{}", "0".repeat(scale as usize - frac.len()));
    let magnitude: i128 = digits.parse().unwrap();
    if neg {
        -magnitude
    } else {
        magnitude
    }
}

/// The canonical text of `m × 10^-scale`.
fn text_at(m: i128, scale: u32) -> String {
    number_text(&format!("{m}e-{scale}").parse::<Number>().unwrap())
}

/// A JSON number text's value times `10^scale`, when that is an integer: its remainder
/// modulo `q`, and the value itself (saturated past 38 digits).
fn value_at(text: &str, scale: u32, q: i128) -> Option<(i128, i128)> {
    let v = json_value(text)?;
    if v.digits.is_empty() {
        return Some((0, 0));
    }
    // value = 0.digits × 10^adjusted = D × 10^(adjusted - len)
    let shift = usize::try_from(v.adjusted - v.digits.len() as i128 + i128::from(scale)).ok()?;
    let digits: Vec<u8> = v
        .digits
        .iter()
        .copied()
        .chain(std::iter::repeat_n(b'0', shift))
        .collect();
    let sign = if v.neg { -1 } else { 1 };
    let rem = digits
        .iter()
        .fold(0i128, |r, &d| (r * 10 + i128::from(d - b'0')) % q);
    let value = if digits.len() > 38 {
        i128::MAX / 2
    } else {
        std::str::from_utf8(&digits).ok()?.parse().ok()?
    };
    Some((sign * rem, sign * value))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn decimal_multiples_in_range_are_exact(
        step_index in 0..STEPS.len(),
        min in prop::option::weighted(0.8, -20_000i64..20_000),
        max in prop::option::weighted(0.8, -20_000i64..20_000),
        exclusive_min in any::<bool>(),
        exclusive_max in any::<bool>(),
        seed in any::<u64>(),
    ) {
        // Bounds are thousandths; values are read one digit finer than the step.
        let step = STEPS[step_index];
        let places = step.split_once('.').map_or(0, |(_, f)| f.len() as u32);
        let scale = (places + 1).max(3);
        let q = scaled(step, scale);
        let bound = |b: Option<i64>| b.map(|b| format!("{}", b as f64 / 1000.0));
        let (min_text, max_text) = (bound(min), bound(max));
        let lo = min_text.as_deref().map(|t| scaled(t, scale) + i128::from(exclusive_min));
        let hi = max_text.as_deref().map(|t| scaled(t, scale) - i128::from(exclusive_max));
        let inside = |m: i128| m % q == 0 && lo.is_none_or(|l| m >= l) && hi.is_none_or(|h| m <= h);

        let numbers: Vec<Option<Number>> = [&min_text, &max_text]
            .iter()
            .map(|t| t.as_deref().map(|t| t.parse::<Number>().unwrap()))
            .collect();
        let (min_number, max_number) = (numbers[0].as_ref(), numbers[1].as_ref());
        let bounds = Bounds {
            minimum: min_number.filter(|_| !exclusive_min),
            exclusive_minimum: min_number.filter(|_| exclusive_min),
            maximum: max_number.filter(|_| !exclusive_max),
            exclusive_maximum: max_number.filter(|_| exclusive_max),
        };
        let result = decimal_multiple_of_in_range(&step.parse().unwrap(), bounds, false, "dm");
        // The least multiple at or above the lower bound.
        let first = lo.map(|l| l.div_euclid(q) * q + if l.rem_euclid(q) == 0 { 0 } else { q });
        if first.zip(hi).is_some_and(|(f, h)| f > h) {
            prop_assert_eq!(result, Err(NumericError::Empty));
            return Ok(());
        }
        let built = build(result.as_ref().unwrap().root.clone(), result.unwrap().rules)?;

        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let window = 30 * q;
        let from = lo.unwrap_or_else(|| hi.unwrap_or(0) - window) - 2 * q;
        let to = hi.unwrap_or_else(|| lo.unwrap_or(0) + window) + 2 * q;
        let mut candidates: Vec<i128> = (0..40).map(|_| rng.random_range(from..=to)).collect();
        candidates.extend((0..40).map(|_| rng.random_range(from / q..=to / q) * q));
        for b in [lo, hi].into_iter().flatten() {
            candidates.extend(b - 3..=b + 3);
            let near = b.div_euclid(q) * q;
            candidates.extend([near - q, near, near + q, near + 2 * q]);
        }
        candidates.extend([0, q, -q, 2 * q, -2 * q, q / 2, -q / 2]);
        for m in candidates {
            let text = text_at(m, scale);
            prop_assert_eq!(
                built.accepts(&text),
                inside(m),
                "{} step {} bounds {:?}{} {:?}{}\n{}",
                text, step, min_text, if exclusive_min { " (exclusive)" } else { "" },
                max_text, if exclusive_max { " (exclusive)" } else { "" }, built.grammar
            );
        }
        // Spellings canonical text never uses.
        prop_assert!(!built.accepts("-0") && !built.accepts("00") && !built.accepts("0.") && !built.accepts("1.50"));
        for text in built.samples(seed, 8) {
            let m = value_at(&text, scale, q);
            let in_bounds = |m: i128| lo.is_none_or(|l| m >= l) && hi.is_none_or(|h| m <= h);
            prop_assert!(
                m.is_some_and(|(rem, m)| rem == 0 && in_bounds(m)),
                "sample {} step {} bounds {:?} {:?}", text, step, lo, hi
            );
            let m = m.unwrap().1;
            // From 1e16 up, a value with a fraction is written plain, not as canonical
            // text writes it (see `decimal_multiple_of_in_range`).
            let whole_digits = text.trim_start_matches('-').split('.').next().unwrap().len();
            if whole_digits <= 16 {
                prop_assert_eq!(&text_at(m, scale), &text, "sample not canonical");
            }
        }
    }
}

#[test]
fn decimal_multiple_limits() {
    let n = |text: &str| text.parse::<Number>().unwrap();
    let (zero, one) = (n("0"), n("1"));
    let unit = Bounds {
        minimum: Some(&zero),
        maximum: Some(&one),
        ..Bounds::default()
    };
    for bad in ["0", "-0.5"] {
        assert!(matches!(
            decimal_multiple_of_in_range(&n(bad), unit, false, "m"),
            Err(NumericError::InvalidMultiple(_))
        ));
    }
    // Steps whose digits make a divisor past the limit, or with too many places.
    for too_complex in ["0.1001", "1e-19"] {
        assert!(matches!(
            decimal_multiple_of_in_range(&n(too_complex), unit, false, "m"),
            Err(NumericError::TooComplex(_))
        ));
    }
    // 1e-8: 999 multiples below 1e-5 in [0, 1], each written with an exponent.
    assert!(matches!(
        decimal_multiple_of_in_range(&n("1e-8"), unit, false, "m"),
        Err(NumericError::TooComplex(_))
    ));
    // Above 1e-5 they are all plain: 1e-8 within [0.001, 1] is fine.
    let milli = n("0.001");
    let above = Bounds {
        minimum: Some(&milli),
        maximum: Some(&one),
        ..Bounds::default()
    };
    let set = decimal_multiple_of_in_range(&n("1e-8"), above, false, "m").unwrap();
    let built = build(set.root, set.rules).unwrap();
    assert!(built.accepts("0.00100001") && built.accepts("1") && !built.accepts("0.000999"));
    // Exclusive bounds that leave no multiple.
    let (a, b) = (n("0.1"), n("0.2"));
    let between = Bounds {
        exclusive_minimum: Some(&a),
        exclusive_maximum: Some(&b),
        ..Bounds::default()
    };
    assert_eq!(
        decimal_multiple_of_in_range(&n("0.1"), between, false, "m"),
        Err(NumericError::Empty)
    );
    // Only the multiples written with an exponent are in range.
    let tiny = n("0.000003");
    let below = Bounds {
        minimum: Some(&zero),
        maximum: Some(&tiny),
        exclusive_minimum: Some(&zero),
        ..Bounds::default()
    };
    let set = decimal_multiple_of_in_range(&n("0.000001"), below, false, "m").unwrap();
    let built = build(set.root, set.rules).unwrap();
    for (text, accepted) in [
        ("1e-6", true),
        ("3e-6", true),
        ("4e-6", false),
        ("0", false),
    ] {
        assert_eq!(built.accepts(text), accepted, "{text}");
    }
}

#[test]
fn integral_multiples_may_keep_a_point_as_draft_04_writes_them() {
    let n = |text: &str| text.parse::<Number>().unwrap();
    let (lo, hi) = (n("-2"), n("10"));
    let bounds = Bounds {
        minimum: Some(&lo),
        maximum: Some(&hi),
        ..Bounds::default()
    };
    for (step, texts) in [
        (
            "0.5",
            &[
                ("2.0", true),
                ("0.0", true),
                ("-2.0", true),
                ("2.5", true),
                ("2.50", false),
                ("2.00", false),
                ("-0.0", false),
                ("0.00", false),
                ("10.0", true),
                ("10.5", false),
            ][..],
        ),
        (
            "2",
            &[
                ("2.0", true),
                ("0.0", true),
                ("4", true),
                ("3.0", false),
                ("2.5", false),
                ("12.0", false),
                ("-2.0", true),
            ][..],
        ),
        (
            "0.25",
            &[
                ("0.0", true),
                ("0.5", true),
                ("0.25", true),
                ("1.0", true),
                ("1.00", false),
                ("0.05", false),
            ][..],
        ),
    ] {
        let set = decimal_multiple_of_in_range(&n(step), bounds, true, "m").unwrap();
        let built = build(set.root, set.rules).unwrap();
        for &(text, accepted) in texts {
            assert_eq!(built.accepts(text), accepted, "{text} step {step}");
        }
        let set = decimal_multiple_of_in_range(&n(step), bounds, false, "m").unwrap();
        let built = build(set.root, set.rules).unwrap();
        assert!(!built.accepts("2.0") && !built.accepts("0.0") && built.accepts("2"));
    }
}
