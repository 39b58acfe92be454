//! Integer ranges: exact bounds, edge cases and the effective bounds of exclusive limits.

use super::*;

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
