//! Strings and numbers: lengths, `pattern`, `format`, bounds and `multipleOf`.

use serde_json::{Map, Number, Value};

use super::arrays::bounded_repeat;
use super::document::Location;
use super::emit::Emitter;
use super::numeric::{self, NumericError};
use super::CompileError;
use crate::gbnf::Expr;
use crate::pattern::PatternError;

/// The longest `maxLength` enforced by the grammar: llama.cpp expands `x{0,n}` into n
/// rules, so longer maxima are left to validation (and said so).
pub const MAX_EXACT_LENGTH: u64 = 4000;

/// The expression for strings valid under `map`.
///
/// # Errors
/// Unsatisfiable lengths; invalid keyword values.
pub fn string(
    e: &mut Emitter<'_, '_, '_>,
    map: &Map<String, Value>,
    at: &Location,
) -> Result<Expr, CompileError> {
    let min = e.count(map, "minLength", at)?.unwrap_or(0);
    let max = e.count(map, "maxLength", at)?;
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
    if let Some(pattern) = map.get("pattern") {
        let Some(pattern) = pattern.as_str() else {
            return Err(e.invalid(&at.child("pattern"), "`pattern` must be a string"));
        };
        match crate::pattern::pattern_expr(pattern) {
            Ok(contents) => {
                if min > 0 || max.is_some() {
                    e.validation_only(
                        at,
                        "maxLength",
                        "lengths beside a `pattern` are checked after generation",
                    )?;
                }
                if map.contains_key("format") {
                    e.validation_only(
                        at,
                        "format",
                        "a `format` beside a `pattern` is checked after generation",
                    )?;
                }
                let hint = format!("{}-pattern", e.hint(at));
                let contents = e.add_rule(&hint, contents);
                return Ok(Expr::seq([quote.clone(), contents, quote]));
            }
            Err(PatternError::Empty) => {
                return Err(e.unsatisfiable(
                    &at.child("pattern"),
                    format!("the pattern /{pattern}/ matches no string"),
                ));
            }
            Err(err) => {
                e.validation_only(
                    at,
                    "pattern",
                    format!("/{pattern}/ is checked after generation: {err}"),
                )?;
            }
        }
    }
    if let Some(format) = map.get("format").and_then(Value::as_str) {
        if !map.contains_key("pattern") {
            if let Some(rules) = super::formats::format_rules(format) {
                if min > 0 || max.is_some() {
                    e.validation_only(
                        at,
                        "maxLength",
                        "lengths beside a `format` are checked after generation",
                    )?;
                }
                let entry = e.add_named_rules(rules);
                return Ok(Expr::seq([quote.clone(), entry, quote]));
            }
        }
        e.validation_only(
            at,
            "format",
            format!("the format `{format}` is checked after generation"),
        )?;
    }
    let max = match max {
        Some(max) if max > MAX_EXACT_LENGTH => {
            e.validation_only(
                at,
                "maxLength",
                format!("a maximum above {MAX_EXACT_LENGTH} characters would cost llama.cpp a rule per character; it is checked after generation"),
            )?;
            None
        }
        max => max,
    };
    if min == 0 && max.is_none() {
        return Ok(e.shared_rule("string"));
    }
    let char = e.shared_rule("char");
    // A rule of its own: llama.cpp counts the rules a repetition generates against any
    // operator applied to a group around it.
    let hint = format!("{}-str", e.hint(at));
    Ok(e.add_rule(
        &hint,
        Expr::seq([quote.clone(), bounded_repeat(char, min, max), quote]),
    ))
}

/// The expression for numbers (or integers) valid under `map`: bounds exactly (any size,
/// inclusive or exclusive, draft-04's boolean `exclusiveMinimum` too), `multipleOf`
/// exactly for integer steps.
///
/// # Errors
/// Unsatisfiable bounds; invalid keyword values.
pub fn number(
    e: &mut Emitter<'_, '_, '_>,
    map: &Map<String, Value>,
    at: &Location,
    integer: bool,
) -> Result<Expr, CompileError> {
    let bound = |key: &str| -> Result<Option<Number>, CompileError> {
        match map.get(key) {
            None | Some(Value::Bool(_)) => Ok(None),
            Some(Value::Number(n)) => Ok(Some(n.clone())),
            Some(_) => Err(e.invalid(&at.child(key), format!("`{key}` must be a number"))),
        }
    };
    let (mut minimum, mut maximum) = (bound("minimum")?, bound("maximum")?);
    let (mut exclusive_minimum, mut exclusive_maximum) =
        (bound("exclusiveMinimum")?, bound("exclusiveMaximum")?);
    // draft-04: `exclusiveMinimum: true` makes `minimum` exclusive.
    if map.get("exclusiveMinimum") == Some(&Value::Bool(true)) {
        exclusive_minimum = minimum.take();
    }
    if map.get("exclusiveMaximum") == Some(&Value::Bool(true)) {
        exclusive_maximum = maximum.take();
    }
    let bounded = minimum.is_some()
        || maximum.is_some()
        || exclusive_minimum.is_some()
        || exclusive_maximum.is_some();
    let unsatisfiable =
        |e: &Emitter<'_, '_, '_>| e.unsatisfiable(at, "no number lies within the bounds");
    let too_complex = |e: &mut Emitter<'_, '_, '_>, key: &str, err: NumericError| {
        e.validation_only(at, key, format!("checked after generation: {err}"))
    };
    let step = match map.get("multipleOf") {
        None => None,
        Some(Value::Number(m)) if m.as_f64().is_some_and(|v| v > 0.0) => {
            let integral_step = m.as_f64().is_some_and(|v| v.fract() == 0.0);
            if integer || integral_step {
                match numeric::integer_step(m) {
                    Ok(k) => Some(k),
                    Err(err) => {
                        too_complex(e, "multipleOf", err)?;
                        None
                    }
                }
            } else {
                e.validation_only(
                    at,
                    "multipleOf",
                    "a fractional step for numbers is checked after generation",
                )?;
                None
            }
        }
        Some(_) => {
            return Err(e.invalid(
                &at.child("multipleOf"),
                "`multipleOf` must be a number above 0",
            ))
        }
    };
    // Integers, and numbers whose step is an integer (their canonical texts are integers).
    if integer || step.is_some() {
        let (min, max) = match numeric::effective_integer_bounds(
            minimum.as_ref(),
            exclusive_minimum.as_ref(),
            maximum.as_ref(),
            exclusive_maximum.as_ref(),
        ) {
            Ok(bounds) => bounds,
            Err(NumericError::Empty) => return Err(unsatisfiable(e)),
            Err(err) => return Err(e.invalid(at, err.to_string())),
        };
        if let Some(k) = step.filter(|&k| k > 1) {
            let prefix = e.fresh_prefix(&format!("{}-mod", e.hint(at)));
            match numeric::integer_multiple_of_in_range(k, min.as_deref(), max.as_deref(), &prefix)
            {
                Ok(set) => {
                    e.add_named_rules_exact(set.rules);
                    return Ok(set.root);
                }
                Err(NumericError::Empty) => return Err(unsatisfiable(e)),
                Err(err) => too_complex(e, "multipleOf", err)?,
            }
        }
        if !bounded {
            return Ok(e.shared_rule("integer"));
        }
        return match numeric::integer_range(min.as_deref(), max.as_deref()) {
            Ok(expr) => Ok(e.add_rule(&format!("{}-int", e.hint(at)), expr)),
            Err(NumericError::Empty) => Err(unsatisfiable(e)),
            Err(err) => {
                too_complex(e, "minimum", err)?;
                Ok(e.shared_rule("integer"))
            }
        };
    }
    if !bounded {
        return Ok(e.shared_rule("number"));
    }
    match numeric::number_range(
        minimum.as_ref(),
        exclusive_minimum.as_ref(),
        maximum.as_ref(),
        exclusive_maximum.as_ref(),
    ) {
        Ok(expr) => Ok(e.add_rule(&format!("{}-num", e.hint(at)), expr)),
        Err(NumericError::Empty) => Err(unsatisfiable(e)),
        Err(err) => {
            too_complex(e, "minimum", err)?;
            Ok(e.shared_rule("number"))
        }
    }
}
