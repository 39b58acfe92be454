//! Strings and numbers: lengths, `pattern`, `format`, bounds and `multipleOf`.

use serde_json::Number;

use super::arrays::bounded_repeat;
use super::document::Location;
use super::emit::Emitter;
use super::ir::{count, NumberSchema, StringSchema, Written};
use super::numeric::{self, NumericError};
use super::CompileError;
use crate::gbnf::Expr;
use crate::pattern::PatternError;

/// The longest `maxLength` enforced by the grammar: llama.cpp expands `x{0,n}` into n
/// rules, so longer maxima are left to validation (and said so).
pub const MAX_EXACT_LENGTH: u64 = 4000;

/// Reports the length keywords of `string` that constrain anything (`minLength` above 0,
/// any `maxLength`) as enforced by validation only, for `why`.
fn lengths_left_to_validation(
    e: &mut Emitter<'_, '_, '_>,
    string: &StringSchema,
    why: &str,
) -> Result<(), CompileError> {
    if let Some(min) = string.min_length.as_ref().filter(|min| min.value > 0) {
        e.validation_only_at(&min.at, "minLength", why)?;
    }
    if let Some(max) = &string.max_length {
        e.validation_only_at(&max.at, "maxLength", why)?;
    }
    Ok(())
}

/// Reports a `format` written beside a `pattern` as enforced by validation only: the
/// grammar keeps the pattern.
fn format_beside_pattern(
    e: &mut Emitter<'_, '_, '_>,
    string: &StringSchema,
) -> Result<(), CompileError> {
    if let Some(format) = &string.format {
        e.validation_only_at(
            &format.at,
            "format",
            "a `format` beside a `pattern` is checked after generation",
        )?;
    }
    Ok(())
}

/// The expression for strings valid under `string`, the string keywords of the schema
/// at `at`.
///
/// # Errors
/// Unsatisfiable lengths or `pattern`.
pub fn string(
    e: &mut Emitter<'_, '_, '_>,
    string: &StringSchema,
    at: &Location,
) -> Result<Expr, CompileError> {
    let (min, max) = (string.min_length(), count(&string.max_length));
    if max.is_some_and(|max| max < min) {
        return Err(e.unsatisfiable(
            at,
            format!(
                "`minLength` {min} is above `maxLength` {}",
                max.unwrap_or(0)
            ),
        ));
    }
    let quote = Expr::literal("\"");
    if let Some(pattern) = &string.pattern {
        // With lengths: the pattern's automaton crossed with a count of characters.
        let lengths = min > 0 || max.is_some();
        let mut why_lengths =
            String::from("lengths beside a `pattern` are checked after generation");
        if lengths && max.is_none_or(|max| max <= MAX_EXACT_LENGTH) {
            let prefix = e.fresh_prefix(&format!("{}-pat", e.hint(at)));
            match crate::pattern::pattern_with_length(&pattern.value, min, max, &prefix) {
                Ok(set) => {
                    format_beside_pattern(e, string)?;
                    e.add_named_rules_exact(set.rules);
                    let hint = format!("{}-str", e.hint(at));
                    return Ok(e.add_rule(&hint, Expr::seq([quote.clone(), set.root, quote])));
                }
                Err(PatternError::Empty) => {
                    return Err(e.unsatisfiable(
                        &pattern.at,
                        format!(
                            "no string the pattern /{}/ matches has a length within `minLength` and `maxLength`",
                            pattern.value
                        ),
                    ));
                }
                Err(err) => {
                    why_lengths =
                        format!("lengths beside the pattern are checked after generation: {err}")
                }
            }
        }
        match e.pattern_rule(&pattern.value, at) {
            Ok(contents) => {
                lengths_left_to_validation(e, string, &why_lengths)?;
                format_beside_pattern(e, string)?;
                return Ok(Expr::seq([quote.clone(), contents, quote]));
            }
            Err(PatternError::Empty) => {
                return Err(e.unsatisfiable(
                    &pattern.at,
                    format!("the pattern /{}/ matches no string", pattern.value),
                ));
            }
            Err(err) => {
                e.validation_only_at(
                    &pattern.at,
                    "pattern",
                    format!("/{}/ is checked after generation: {err}", pattern.value),
                )?;
            }
        }
    }
    if let Some(format) = &string.format {
        if string.pattern.is_none() {
            if let Some(rules) = super::formats::built_rules(&format.value) {
                lengths_left_to_validation(
                    e,
                    string,
                    "lengths beside a `format` are checked after generation",
                )?;
                if let Some(left_out) = super::formats::left_out(&format.value) {
                    e.restricted(&format.at, "format", left_out);
                }
                let entry = e.add_named_rules(rules);
                return Ok(Expr::seq([quote.clone(), entry, quote]));
            }
        }
        e.validation_only_at(
            &format.at,
            "format",
            format!("the format `{}` is checked after generation", format.value),
        )?;
    }
    let max = match &string.max_length {
        Some(written) if written.value > MAX_EXACT_LENGTH => {
            e.validation_only_at(
                &written.at,
                "maxLength",
                format!("a maximum above {MAX_EXACT_LENGTH} characters would cost llama.cpp a rule per character; it is checked after generation"),
            )?;
            None
        }
        _ => max,
    };
    if min == 0 && max.is_none() {
        return Ok(e.shared_rule("string"));
    }
    let char = e.shared_rule("char");
    // A rule of its own: llama.cpp counts the rules a repetition generates against any
    // operator applied to a group around it.
    let hint = format!("{}-str", e.hint(at));
    let run = bounded_repeat(char, min, max)
        .map_err(|too_long| too_long.error(e, at, ["minLength", "maxLength"]))?;
    Ok(e.add_rule(&hint, Expr::seq([quote.clone(), run, quote])))
}

/// The expression for numbers (or integers) valid under `number`, the number keywords
/// of the schema at `at`: bounds exactly (any size, inclusive or exclusive), `multipleOf`
/// exactly for integral steps, and for decimal steps as far as
/// [`numeric::decimal_multiple_of_in_range`] goes.
///
/// # Errors
/// Unsatisfiable bounds.
pub fn number(
    e: &mut Emitter<'_, '_, '_>,
    number: &NumberSchema,
    at: &Location,
    integer: bool,
) -> Result<Expr, CompileError> {
    let NumberSchema {
        minimum,
        exclusive_minimum,
        maximum,
        exclusive_maximum,
        multiple_of,
    } = number;
    let bounded = number.bounded();
    let unsatisfiable =
        |e: &Emitter<'_, '_, '_>| e.unsatisfiable(at, "no number lies within the bounds");
    let too_complex = |e: &mut Emitter<'_, '_, '_>, written: &Location, key: &str, err| {
        e.validation_only_at(written, key, format!("checked after generation: {err}"))
    };
    // A range too complex to enforce is reported at `minimum`, written or not.
    let range_at = at.child("minimum");
    let step = match multiple_of {
        None => None,
        Some(m) => {
            let integral_step = numeric::value::is_integral(&m.value) == Some(true);
            // Draft-04's canonical text writes an integral number as `2.0`.
            let keep_point = e.integral_numbers_keep_a_point();
            if integer || (integral_step && !keep_point) {
                match numeric::integer_step(&m.value) {
                    Ok(k) => Some((k, &m.at)),
                    Err(err) => {
                        too_complex(e, &m.at, "multipleOf", err)?;
                        None
                    }
                }
            } else if let (Some(digits), false) = (decimal_step(&m.value), bounded) {
                // A step of 10^-d and no bounds: numbers with at most d fraction digits.
                return Ok(e.add_rule(&format!("{}-step", e.hint(at)), decimal_places(digits)));
            } else {
                let bounds = numeric::Bounds {
                    minimum: value(minimum),
                    exclusive_minimum: value(exclusive_minimum),
                    maximum: value(maximum),
                    exclusive_maximum: value(exclusive_maximum),
                };
                let prefix = e.fresh_prefix(&format!("{}-step", e.hint(at)));
                match numeric::decimal_multiple_of_in_range(&m.value, bounds, keep_point, &prefix) {
                    Ok(set) => {
                        e.add_named_rules_exact(set.rules);
                        return Ok(set.root);
                    }
                    Err(NumericError::Empty) => return Err(unsatisfiable(e)),
                    Err(err) => {
                        too_complex(e, &m.at, "multipleOf", err)?;
                        None
                    }
                }
            }
        }
    };
    // Integers, and numbers whose step is an integer (their canonical texts are integers).
    if integer || step.is_some() {
        let (min, max) = match numeric::effective_integer_bounds(
            value(minimum),
            value(exclusive_minimum),
            value(maximum),
            value(exclusive_maximum),
        ) {
            Ok(bounds) => bounds,
            Err(NumericError::Empty) => return Err(unsatisfiable(e)),
            Err(err) => return Err(e.invalid(at, err.to_string())),
        };
        if let Some((k, step_at)) = step.filter(|&(k, _)| k > 1) {
            let prefix = e.fresh_prefix(&format!("{}-mod", e.hint(at)));
            match numeric::integer_multiple_of_in_range(k, min.as_deref(), max.as_deref(), &prefix)
            {
                Ok(set) => {
                    e.add_named_rules_exact(set.rules);
                    return Ok(set.root);
                }
                Err(NumericError::Empty) => return Err(unsatisfiable(e)),
                Err(err) => too_complex(e, step_at, "multipleOf", err)?,
            }
        }
        if !bounded {
            return Ok(e.shared_rule("integer"));
        }
        return match numeric::integer_range(min.as_deref(), max.as_deref()) {
            Ok(expr) => Ok(e.add_rule(&format!("{}-int", e.hint(at)), expr)),
            Err(NumericError::Empty) => Err(unsatisfiable(e)),
            Err(err) => {
                too_complex(e, &range_at, "minimum", err)?;
                Ok(e.shared_rule("integer"))
            }
        };
    }
    if !bounded {
        return Ok(e.shared_rule("number"));
    }
    match numeric::number_range(
        value(minimum),
        value(exclusive_minimum),
        value(maximum),
        value(exclusive_maximum),
    ) {
        Ok(expr) => Ok(e.add_rule(&format!("{}-num", e.hint(at)), expr)),
        Err(NumericError::Empty) => Err(unsatisfiable(e)),
        Err(err) => {
            too_complex(e, &range_at, "minimum", err)?;
            Ok(e.shared_rule("number"))
        }
    }
}

/// The number an optional number keyword holds.
fn value(keyword: &Option<Written<Number>>) -> Option<&Number> {
    keyword.as_ref().map(|written| &written.value)
}

/// The most fraction digits a `multipleOf` of 10^-d may ask for.
const MAX_STEP_DIGITS: usize = 18;

/// `d` when `step` is exactly 10^-d (`0.1`, `0.01`, `1e-3`), read from its decimal text.
fn decimal_step(step: &Number) -> Option<u32> {
    let text = step.to_string();
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m.to_string(), e.parse::<i64>().ok()?),
        None => (text.clone(), 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa.as_str(), ""));
    let digits = format!("{whole}{fraction}");
    let significant = digits.trim_start_matches('0').trim_end_matches('0');
    if significant != "1" {
        return None;
    }
    // value = 1 × 10^(position of the 1 relative to the point)
    let index = digits.find('1')? as i64;
    let power = whole.len() as i64 - 1 - index + exponent;
    let places = u32::try_from(-power)
        .ok()
        .filter(|&d| d > 0 && d as usize <= MAX_STEP_DIGITS)?;
    Some(places)
}

/// JSON numbers with at most `places` fraction digits and no exponent: exactly the
/// multiples of 10^-places that are written without one.
fn decimal_places(places: u32) -> Expr {
    let digit = Expr::class(false, [('0', '9')]);
    Expr::seq([
        Expr::repeat(Expr::literal("-"), 0, Some(1)),
        Expr::Group(Box::new(Expr::alt([
            Expr::literal("0"),
            Expr::seq([
                Expr::class(false, [('1', '9')]),
                Expr::repeat(digit.clone(), 0, None),
            ]),
        ]))),
        Expr::repeat(
            Expr::seq([Expr::literal("."), Expr::repeat(digit, 1, Some(places))]),
            0,
            Some(1),
        ),
    ])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn number(text: &str) -> Number {
        serde_json::from_str(text).unwrap()
    }

    /// Beside a `pattern` or a `format`, the lengths written are the ones reported as
    /// left to validation (with `--explain`, `minLength` was listed as enforced and a
    /// `/maxLength` nobody wrote as validation-only).
    #[test]
    fn lengths_left_to_validation_are_the_ones_written() {
        use crate::schema::{compile, KeywordStatus, Options};
        let validation_only = |schema: serde_json::Value| -> Vec<String> {
            let options = Options {
                explain: true,
                ..Options::default()
            };
            let compiled = compile(&schema, &options).unwrap();
            let mut places: Vec<String> = compiled
                .diagnostics
                .iter()
                .filter(|d| d.status == KeywordStatus::ValidationOnly)
                .map(|d| d.pointer.clone())
                .collect();
            places.sort();
            places
        };
        for beside in [
            // Too large an automaton to cross with a count of characters.
            serde_json::json!({"pattern": "^a{1,30000}$"}),
            serde_json::json!({"format": "date"}),
        ] {
            let with = |lengths: serde_json::Value| {
                let mut schema = beside.clone();
                schema["type"] = "string".into();
                for (key, value) in lengths.as_object().unwrap() {
                    schema[key] = value.clone();
                }
                validation_only(schema)
            };
            assert_eq!(with(serde_json::json!({"minLength": 3})), ["/minLength"]);
            assert_eq!(with(serde_json::json!({"maxLength": 5})), ["/maxLength"]);
            assert_eq!(
                with(serde_json::json!({"minLength": 3, "maxLength": 5})),
                ["/maxLength", "/minLength"]
            );
            assert!(with(serde_json::json!({"minLength": 0})).is_empty());
        }
    }

    #[test]
    fn recognises_powers_of_ten_steps() {
        assert_eq!(decimal_step(&number("0.01")), Some(2));
        assert_eq!(decimal_step(&number("0.1")), Some(1));
        assert_eq!(decimal_step(&number("1e-3")), Some(3));
        assert_eq!(decimal_step(&number("0.001")), Some(3));
        assert_eq!(decimal_step(&number("0.05")), None);
        assert_eq!(decimal_step(&number("0.25")), None);
        assert_eq!(decimal_step(&number("10")), None);
        assert_eq!(decimal_step(&number("1")), None);
    }

    #[test]
    fn decimal_places_accepts_multiples_only() {
        let mut g = crate::gbnf::Grammar::default();
        g.push("root", decimal_places(2));
        assert!(crate::gbnf::is_clean(&crate::gbnf::check(&g)));
        let r = crate::recognize::Recognizer::new(&g).unwrap();
        for ok in ["0", "12", "-3.5", "19.99", "0.01", "100.1"] {
            assert!(r.recognize(ok).accepted, "{ok}");
        }
        for bad in ["0.001", "1.234", "1e-2", "-0.005", "01.5", ".5"] {
            assert!(!r.recognize(bad).accepted, "{bad}");
        }
    }
}
