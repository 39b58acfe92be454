//! Strings and numbers: lengths, `pattern`, `format`, bounds and `multipleOf`.

use serde_json::{Map, Value};

use super::arrays::bounded_repeat;
use super::document::Location;
use super::emit::Emitter;
use super::CompileError;
use crate::gbnf::Expr;

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
        e.validation_only(
            at,
            "pattern",
            format!("the pattern /{pattern}/ is checked after generation"),
        )?;
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
    Ok(Expr::seq([
        quote.clone(),
        bounded_repeat(char, min, max),
        quote,
    ]))
}

/// The expression for numbers (or integers) valid under `map`.
///
/// # Errors
/// Unsatisfiable bounds; invalid keyword values.
pub fn number(
    e: &mut Emitter<'_, '_, '_>,
    map: &Map<String, Value>,
    at: &Location,
    integer: bool,
) -> Result<Expr, CompileError> {
    for key in [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ] {
        if map.contains_key(key) {
            e.validation_only(at, key, "numeric bounds are checked after generation")?;
        }
    }
    Ok(e.shared_rule(if integer { "integer" } else { "number" }))
}
