//! Arrays: `prefixItems` (or draft-07's array-form `items`), `items` (or
//! `additionalItems`), `minItems`/`maxItems` — bounds above llama.cpp's 2000 are split
//! into several repetitions so llama.cpp keeps them.

use super::document::Location;
use super::emit::Emitter;
use super::ir::{count, ArraySchema, Subschema};
use super::keywords::TRUE;
use super::unique;
use super::CompileError;
use crate::gbnf::flat::{MAX_EXPR_DEPTH, MAX_REPEAT, MAX_SYMBOLS};
use crate::gbnf::Expr;

/// The most `prefixItems` compiled one by one.
const MAX_PREFIX: usize = 200;

/// The expression for arrays valid under `array`, the array keywords of the schema at
/// `at`; `beside_if` when the schema has an `if` (which evaluates items the grammar does
/// not know of).
///
/// # Errors
/// Unsatisfiable bounds or required items; invalid item schemas.
pub fn array(
    e: &mut Emitter<'_, '_, '_>,
    array: &ArraySchema<'_>,
    at: &Location,
    beside_if: bool,
) -> Result<Expr, CompileError> {
    // Items that `contains` or `if` (validation-only) evaluate are unknown
    // to the grammar: it must not hold them to `unevaluatedItems`.
    let unevaluated = match &array.unevaluated {
        Some(unevaluated) if unevaluated.restricts() => {
            if array.contains.is_some() || beside_if {
                e.validation_only_at(
                    unevaluated.place(),
                    "unevaluatedItems",
                    "beside `contains` or `if`, which the grammar does not evaluate",
                )?;
                None
            } else {
                Some(unevaluated.clone())
            }
        }
        _ => None,
    };
    // Without `items`, `unevaluatedItems` (if any) governs the items after the positional
    // ones (`allOf`/`anyOf` were merged in already; merging reports it as validation-only).
    let rest = array
        .items
        .clone()
        .or(unevaluated)
        .unwrap_or_else(|| Subschema::written(&TRUE, at.child("unevaluatedItems")));
    let prefix = &array.prefix;
    if prefix.len() > MAX_PREFIX {
        return Err(CompileError::TooLarge {
            pointer: array.prefix_at.pointer.clone(),
            message: format!("more than {MAX_PREFIX} positional item schemas"),
        });
    }
    let (min, max) = (array.min_items(), count(&array.max_items));
    if let Some(contains) = &array.contains {
        e.validation_only_at(contains.place(), "contains", "checked after generation")?;
    }
    if let Some(unique) = array
        .unique_items
        .as_ref()
        .filter(|_| max.is_none_or(|m| m > 1))
    {
        let keep_point = e.integral_numbers_keep_a_point();
        match unique::finite_domain(&rest, keep_point).filter(|_| prefix.is_empty()) {
            Some(domain) => {
                let hint = e.hint(at);
                let Some(list) = unique::distinct_lists(e, &domain, min, max, &hint) else {
                    return Err(e.unsatisfiable(
                        at,
                        format!(
                            "at least {min} distinct items are required but the items allow {} values",
                            domain.len()
                        ),
                    ));
                };
                let (open, close) = (e.token("["), e.token("]"));
                return Ok(e.add_rule(&hint, Expr::seq([open, list, close])));
            }
            None => e.validation_only_at(
                unique,
                "uniqueItems",
                format!(
                    "checked after generation (the grammar keeps it only for items of at most {} values, such as an `enum`, and no `prefixItems`)",
                    unique::MAX_DOMAIN
                ),
            )?,
        }
    }
    // Items past the prefix: an expression, or none allowed.
    let rest_expr = match e.subschema(&rest) {
        Ok(expr) => Some(expr),
        Err(CompileError::Unsatisfiable { .. }) => None,
        Err(err) => return Err(err),
    };
    // Positional schemas; the first that accepts nothing caps the length.
    let mut positional = Vec::new();
    for item in prefix {
        match e.subschema(item) {
            Ok(expr) => positional.push(expr),
            Err(CompileError::Unsatisfiable { .. }) => break,
            Err(err) => return Err(err),
        }
    }
    let k = positional.len() as u64;
    let capped = if positional.len() < prefix.len() || rest_expr.is_none() {
        Some(k)
    } else {
        None
    };
    let max = match (max, capped) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if max.is_some_and(|max| max < min) {
        return Err(e.unsatisfiable(
            at,
            format!(
                "at least {min} items are required but at most {} are possible",
                max.unwrap_or(0)
            ),
        ));
    }
    if positional.is_empty() && min == 0 && max.is_none() && !rest.restricts() {
        return Ok(e.shared_rule("array"));
    }
    let comma = e.token(",");
    let hint = e.hint(at);
    // The elements after the prefix, each preceded by a comma.
    let rest_run =
        |e: &mut Emitter<'_, '_, '_>, min: u64, max: Option<u64>| -> Result<Expr, CompileError> {
            Ok(match &rest_expr {
                Some(item) if max != Some(0) => {
                    let next = e.add_rule(
                        &format!("{hint}-next"),
                        Expr::seq([comma.clone(), item.clone()]),
                    );
                    let run = bounded_repeat(next, min, max)
                        .map_err(|too_long| too_long.error(e, at, ["minItems", "maxItems"]))?;
                    if max.is_some_and(|m| m > 100) {
                        // Its own rule: llama.cpp counts a long bounded run's generated rules
                        // against any operator on a group around it.
                        e.add_rule(&format!("{hint}-run"), run)
                    } else {
                        run
                    }
                }
                _ => Expr::empty(),
            })
        };
    let body = if positional.is_empty() {
        match &rest_expr {
            Some(item) if max != Some(0) => {
                let tail = rest_run(e, min.saturating_sub(1), max.map(|m| m - 1))?;
                let list = Expr::seq([item.clone(), tail]);
                if min == 0 {
                    Expr::repeat(list, 0, Some(1))
                } else {
                    list
                }
            }
            _ => Expr::empty(),
        }
    } else {
        // body(i) = S_i E_i body(i+1), optional once i >= min; after the prefix, the rest.
        let limit = max.map_or(k, |m| m.min(k));
        let mut body = if max.is_some_and(|m| m <= k) {
            Expr::empty()
        } else {
            rest_run(e, min.saturating_sub(k), max.map(|m| m - k))?
        };
        for i in (0..limit as usize).rev() {
            let element = if i == 0 {
                positional[i].clone()
            } else {
                Expr::seq([comma.clone(), positional[i].clone()])
            };
            let step = Expr::seq([element, body]);
            body = if (i as u64) < min {
                step
            } else {
                Expr::repeat(step, 0, Some(1))
            };
        }
        body
    };
    let open = e.token("[");
    let close = e.token("]");
    Ok(e.add_rule(&hint, Expr::seq([open, body, close])))
}

/// `x{min,max}` for any bounds, unambiguously: llama.cpp keeps bounds up to 2000, so the
/// required part becomes fixed chunks (`x{2000} x{500}`) and the optional part nests
/// (`x{0,N}` = `x{2000} x{0,N-2000} | x{0,1999}`), so that every length has exactly one
/// parse — splitting it into `x{0,2000} x{0,2000}` would make recognizers (and llama.cpp's
/// stacks) explode on long runs.
///
/// # Errors
/// [`RunTooLong`] when no grammar within llama.cpp's limits holds the run: more required
/// copies than it has symbols, or an optional part nested deeper than it accepts (checked
/// before anything is built: a bound like `1e20` is valid JSON).
pub fn bounded_repeat(x: Expr, min: u64, max: Option<u64>) -> Result<Expr, RunTooLong> {
    let limit = u64::from(MAX_REPEAT);
    if min > MAX_SYMBOLS as u64 {
        return Err(RunTooLong::Required);
    }
    // Each nesting level of the optional part is a group, an alternation and a sequence.
    let levels = max.map_or(0, |max| max.saturating_sub(min).saturating_sub(1) / limit);
    if levels.saturating_mul(3) > MAX_EXPR_DEPTH as u64 {
        return Err(RunTooLong::Optional);
    }
    let mut parts = Vec::new();
    let mut required = min;
    while required > 0 {
        let chunk = required.min(limit);
        parts.push(Expr::repeat(x.clone(), chunk as u32, Some(chunk as u32)));
        required -= chunk;
    }
    match max {
        None => parts.push(Expr::repeat(x, 0, None)),
        Some(max) => parts.push(optional_run(&x, max.saturating_sub(min))),
    }
    Ok(Expr::seq(parts))
}

/// Which part of a run [`bounded_repeat`] cannot write within llama.cpp's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunTooLong {
    /// The required copies alone outnumber the symbols llama.cpp expands a grammar to.
    Required,
    /// The optional part would nest deeper than llama.cpp accepts.
    Optional,
}

impl RunTooLong {
    /// The error for the run that `keywords` (its minimum's, then its maximum's) bound in
    /// the schema at `at`.
    pub fn error(
        self,
        e: &Emitter<'_, '_, '_>,
        at: &Location,
        keywords: [&str; 2],
    ) -> CompileError {
        let (keyword, why) = match self {
            RunTooLong::Required => (
                keywords[0],
                format!("needs more copies than the {MAX_SYMBOLS} symbols llama.cpp expands a grammar to"),
            ),
            RunTooLong::Optional => (
                keywords[1],
                format!("nests its optional part deeper than the {MAX_EXPR_DEPTH} levels llama.cpp accepts"),
            ),
        };
        e.too_large(
            &at.child(keyword),
            format!("`{keyword}` is too large for a grammar: the run it bounds {why}"),
        )
    }
}

/// `x{0,n}` for any n, one parse per length.
fn optional_run(x: &Expr, n: u64) -> Expr {
    let limit = u64::from(MAX_REPEAT);
    if n == 0 {
        return Expr::empty();
    }
    if n <= limit {
        return Expr::repeat(x.clone(), 0, Some(n as u32));
    }
    Expr::Group(Box::new(Expr::alt([
        Expr::seq([
            Expr::repeat(x.clone(), limit as u32, Some(limit as u32)),
            optional_run(x, n - limit),
        ]),
        Expr::repeat(x.clone(), 0, Some(limit as u32 - 1)),
    ])))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::gbnf::{check, is_clean, Grammar};
    use crate::recognize::Recognizer;

    #[test]
    fn runs_no_grammar_can_hold_are_refused_before_they_are_built() {
        let x = || Expr::literal("x");
        assert_eq!(
            bounded_repeat(x(), 0, Some(u64::MAX)),
            Err(RunTooLong::Optional)
        );
        assert_eq!(
            bounded_repeat(x(), u64::MAX, None),
            Err(RunTooLong::Required)
        );
        assert_eq!(
            bounded_repeat(x(), MAX_SYMBOLS as u64 + 1, None),
            Err(RunTooLong::Required)
        );
        // The deepest optional part still written, and one level more.
        let levels = (MAX_EXPR_DEPTH / 3) as u64;
        let longest = levels * u64::from(MAX_REPEAT) + 1;
        assert!(bounded_repeat(x(), 0, Some(longest)).is_ok());
        assert_eq!(
            bounded_repeat(x(), 0, Some(longest + u64::from(MAX_REPEAT))),
            Err(RunTooLong::Optional)
        );
    }

    #[test]
    fn huge_length_and_item_bounds_are_errors_at_their_keyword() {
        use crate::schema::{compile, CompileError, Options};
        for (schema, keyword) in [
            (r#"{"maxItems": 1e20}"#, "/maxItems"),
            (r#"{"minItems": 1e20}"#, "/minItems"),
            (
                r#"{"items": {"minItems": 18446744073709551615}}"#,
                "/items/minItems",
            ),
            (r#"{"type": "string", "minLength": 1e20}"#, "/minLength"),
            (
                r#"{"$schema,": "x", "maxItems": 23333333333333333333333333333333333333333333333}"#,
                "/maxItems",
            ),
        ] {
            let value: serde_json::Value = serde_json::from_str(schema).unwrap();
            match compile(&value, &Options::default()) {
                Err(CompileError::TooLarge { pointer, .. }) => assert_eq!(pointer, keyword),
                other => panic!("{schema}: {:?}", other.map(|c| c.grammar.to_string())),
            }
        }
    }

    #[test]
    fn long_runs_are_split_and_exact() {
        for (min, max) in [
            (0, Some(5000)),
            (2500, None),
            (3000, Some(4100)),
            (7, Some(7)),
            (0, None),
        ] {
            let mut g = Grammar::default();
            g.push(
                "root",
                bounded_repeat(Expr::literal("x"), min, max).unwrap(),
            );
            assert!(is_clean(&check(&g)), "{g}");
            let r = Recognizer::new(&g).unwrap();
            let accepts = |n: u64| r.recognize(&"x".repeat(n as usize)).accepted;
            assert!(accepts(min), "{min}..{max:?}");
            if min > 0 {
                assert!(!accepts(min - 1));
            }
            if let Some(max) = max {
                assert!(accepts(max) && !accepts(max + 1), "{min}..{max}");
            } else {
                assert!(accepts(min + 4000));
            }
        }
    }
}
