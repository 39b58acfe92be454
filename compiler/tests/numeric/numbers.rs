//! Number ranges: floats, decimals and their edge cases.

use super::*;

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
