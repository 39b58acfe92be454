//! `multipleOf`: integral and decimal steps, alone and within bounds.

use super::*;

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
