//! Objects: `properties` in schema order (optional ones may be left out, never
//! reordered), `required`, `additionalProperties` (absent means allowed; `closed` makes it
//! `false`), with extra keys that can never collide with declared ones.
//!
//! The members form a comma-separated list in a fixed order: the declared properties,
//! then any number of extra members. With `S(k)` the list from declared property `k` on
//! (no leading comma) and `T(k)` its continuation after something was written (each item
//! preceded by a comma):
//!
//! ```text
//! S(k) = P(k) T(k+1)            when k is required
//! S(k) = P(k) T(k+1) | S(k+1)   when k is optional
//! T(k) = "," P(k) T(k+1)        when k is required
//! T(k) = ("," P(k))? T(k+1)     when k is optional
//! S(n) = (E ("," E)*)?          T(n) = ("," E)*
//! ```

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::document::Location;
use super::emit::Emitter;
use super::ir::{Keyed, ObjectSchema, Subschema, Written};
use super::keywords::{FALSE, TRUE};
use super::CompileError;
use crate::gbnf::Expr;
use crate::pattern::PatternTest;

mod chain;
mod counts;
mod dependencies;
mod keys;

use counts::counts;
use dependencies::links;
use keys::{extra_key, quoted_key};
pub use keys::{OR_STOP_PREFIX, OTHER_START_PREFIX};

/// Schemas that must all hold, each with its place.
type Schemas<'s> = Vec<Written<&'s Value>>;

/// The schema of a key: a string.
static STRING: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| serde_json::json!({"type": "string"}));

struct Member {
    /// The member's key.
    name: String,
    /// The member's text: `"name":value`.
    expr: Expr,
    required: bool,
}

/// The expression for objects valid under `object`, the object keywords of the schema at
/// `at`; `beside_if` when the schema has an `if` (which evaluates properties the grammar
/// does not know of).
///
/// # Errors
/// Unsatisfiable required properties; invalid property schemas.
pub fn object(
    e: &mut Emitter<'_, '_, '_>,
    object: &ObjectSchema<'_>,
    at: &Location,
    beside_if: bool,
) -> Result<Expr, CompileError> {
    let properties = &object.properties;
    let required: Vec<&str> = object.required.iter().map(|name| name.value).collect();
    let required = &required;
    // The schema of undeclared keys' values.
    let additional: Subschema<'_> = match (&object.additional, &object.unevaluated) {
        // Keys that `if`/`then`/`else` or `dependentSchemas` (validation-only) evaluate
        // are unknown to the grammar: it must not hold them to `unevaluatedProperties`.
        (None, Some(unevaluated))
            if unevaluated.restricts() && (beside_if || object.dependent_schemas) =>
        {
            e.validation_only_at(
                unevaluated.place(),
                "unevaluatedProperties",
                "beside `if` or `dependentSchemas`, which the grammar does not evaluate",
            )?;
            Subschema::written(&TRUE, unevaluated.place().clone())
        }
        // Without `additionalProperties` (and with `allOf`/`anyOf` merged in already),
        // `unevaluatedProperties` governs the undeclared keys.
        (None, Some(unevaluated)) => unevaluated.clone(),
        (Some(additional), _) => additional.clone(),
        (None, _) if e.options.closed || e.closed_by_response_format() => {
            Subschema::written(&FALSE, at.child("additionalProperties"))
        }
        (None, _) => Subschema::written(&TRUE, at.child("additionalProperties")),
    };
    let mut extras_allowed = !additional.is_false();
    let mut pattern_arms: Vec<(Expr, Schemas<'_>)> = Vec::new();
    let mut pattern_schemas_for: Vec<(String, Schemas<'_>)> = Vec::new();
    let mut patterns_of_properties: FxHashMap<String, Schemas<'_>> = FxHashMap::default();
    if object.pattern_properties.is_written() {
        let patterns = &object.pattern_properties;
        if let Some(names) = &object.property_names {
            e.validation_only_at(
                names.place(),
                "propertyNames",
                "keys matching `patternProperties` are not checked against it",
            )?;
        }
        match pattern_properties(patterns, properties, required, e)? {
            Some(PatternMembers {
                arms: Some(arms),
                for_required,
                for_properties,
            }) => {
                pattern_arms = arms;
                pattern_schemas_for = for_required;
                patterns_of_properties = for_properties;
                if extras_allowed {
                    e.restricted(
                        &at.child("additionalProperties"),
                        "additionalProperties",
                        "keys that match no pattern are not generated beside `patternProperties`",
                    );
                }
            }
            Some(PatternMembers {
                arms: None,
                for_required,
                for_properties,
            }) => {
                pattern_schemas_for = for_required;
                patterns_of_properties = for_properties;
                e.restricted(
                    patterns.at(),
                    "patternProperties",
                    "a declared name matches a pattern, so keys other than the declared ones are not generated",
                );
            }
            None => {
                e.restricted(
                    patterns.at(),
                    "patternProperties",
                    "keys other than the declared properties are not generated",
                );
                if !properties.is_empty() || required.iter().any(|r| !properties.declares(r)) {
                    e.validation_only_at(
                        patterns.at(),
                        "patternProperties",
                        "declared properties are not checked against the patterns",
                    )?;
                }
            }
        }
        extras_allowed = false;
    }
    // The schemas of extra keys, as strings: `propertyNames` and a string type.
    let mut names_schema: Option<(Schemas<'_>, &Location)> = None;
    let names_restrict = object
        .property_names
        .as_ref()
        .filter(|names| names.restricts());
    if let Some(names) = names_restrict {
        let declared = !properties.is_empty() || !required.is_empty();
        let names_at = names.place();
        if names.is_false() {
            extras_allowed = false;
            if declared {
                e.validation_only_at(
                    names_at,
                    "propertyNames",
                    "`false`: declared properties are not removed",
                )?;
            }
        } else if !declared {
            // Extra keys are strings valid under propertyNames.
            let string = Written {
                value: &*STRING,
                at: names_at.clone(),
            };
            let mut schemas = vec![string];
            schemas.extend(names.members().iter().cloned());
            names_schema = Some((schemas, names_at));
        } else {
            if extras_allowed {
                e.restricted(
                    names_at,
                    "propertyNames",
                    "keys other than the declared properties are not generated",
                );
            }
            extras_allowed = false;
            e.validation_only_at(
                names_at,
                "propertyNames",
                "declared property names are not checked against it",
            )?;
        }
    }
    let unconstrained = properties.is_empty()
        && required.is_empty()
        && !additional.restricts()
        && extras_allowed
        && names_schema.is_none()
        && object.min_properties.is_none()
        && object.max_properties.is_none()
        && object.dependencies.is_empty();
    if unconstrained {
        return Ok(e.shared_rule("object"));
    }
    let hint = e.hint(at);
    let colon = e.token(":");
    let mut members: Vec<Member> = Vec::new();
    let mut declared: Vec<String> = Vec::new();
    for (name, property) in properties.iter() {
        declared.push(name.to_string());
        let is_required = required.contains(&name);
        let compiled = match patterns_of_properties.get(name) {
            // Declared properties must satisfy every pattern their name matches.
            Some(patterns) => {
                let mut all = property.members().to_vec();
                all.extend(patterns.iter().cloned());
                e.all_of_written(&all, property.place())
            }
            None => e.subschema(&property),
        };
        let value = match compiled {
            Ok(value) => value,
            Err(CompileError::Unsatisfiable { .. }) if !is_required => continue,
            Err(err) => return Err(err),
        };
        members.push(Member {
            name: name.to_string(),
            expr: Expr::seq([Expr::literal(quoted_key(name)), colon.clone(), value]),
            required: is_required,
        });
    }
    // Required names without a declared schema: extra members that must appear.
    for written in &object.required {
        let name = written.value;
        if properties.declares(name) {
            continue;
        }
        let matched = pattern_schemas_for.iter().any(|(n, _)| n == name);
        if !matched && !extras_allowed && additional.is_false() {
            return Err(e.unsatisfiable(
                &written.at,
                format!("`{name}` is required but `additionalProperties` forbids it"),
            ));
        }
        declared.push(name.to_string());
        let value = match pattern_schemas_for.iter().find(|(n, _)| n == name) {
            Some((_, schemas)) => e.all_of_written(schemas, object.pattern_properties.at())?,
            None => e.subschema(&additional)?,
        };
        members.push(Member {
            name: name.to_string(),
            expr: Expr::seq([Expr::literal(quoted_key(name)), colon.clone(), value]),
            required: true,
        });
    }

    let extra = if extras_allowed {
        match e.subschema(&additional) {
            Ok(value) => {
                let key = match &names_schema {
                    Some((names, names_at)) => match e.all_of_written(names, names_at) {
                        Ok(key) => Some(key),
                        Err(CompileError::Unsatisfiable { .. }) => None,
                        Err(err) => return Err(err),
                    },
                    None => extra_key(&declared, e, at),
                };
                key.map(|key| {
                    e.add_rule(
                        &format!("{hint}-extra"),
                        Expr::seq([key, colon.clone(), value]),
                    )
                })
            }
            Err(CompileError::Unsatisfiable { .. }) => None,
            Err(err) => return Err(err),
        }
    } else {
        None
    };
    let mut arms: Vec<Expr> = extra.into_iter().collect();
    for (key, schemas) in pattern_arms {
        match e.all_of_written(&schemas, object.pattern_properties.at()) {
            Ok(value) => {
                // The key's pattern may leave an end open: `cchar*`.
                e.any_char_rule_for(&key);
                arms.push(Expr::seq([
                    Expr::literal("\""),
                    key,
                    Expr::literal("\""),
                    colon.clone(),
                    value,
                ]));
            }
            Err(CompileError::Unsatisfiable { .. }) => {}
            Err(err) => return Err(err),
        }
    }
    let extra = match arms.len() {
        0 => None,
        1 if arms[0] == Expr::rule(format!("{hint}-extra")) => arms.pop(),
        _ => Some(e.add_rule(&format!("{hint}-member"), Expr::alt(arms))),
    };

    let comma = e.token(",");
    let open = e.token("{");
    let close = e.token("}");
    let (counts, mut kept) = counts(e, object, at, &members, extra.is_some())?;
    let (links, linked) = links(e, object, &members, extra.is_some())?;
    kept.extend(linked);
    if !kept.is_empty() {
        let rules = chain::Kept { counts, links };
        match chain::explore(&members, &rules) {
            Ok(plan) => {
                let Some(list) = plan.write(e, &members, extra.as_ref(), &rules, &hint) else {
                    return Err(e.unsatisfiable(
                        at,
                        "no object of these properties keeps the property counts and dependencies",
                    ));
                };
                return Ok(e.add_rule(&hint, Expr::seq([open, list, close])));
            }
            Err(nodes) => {
                let reason = format!(
                    "keeping the count and the dependencies of these properties takes more than {} rules ({nodes} so far); checked after generation",
                    chain::MAX_NODES
                );
                for (keyword, place) in kept {
                    e.validation_only_at(&place, keyword, reason.clone())?;
                }
            }
        }
    }
    // Build from the end: T(n), S(n), then each k downwards.
    let (mut tail, mut start) = match &extra {
        Some(extra) => (
            Expr::repeat(Expr::seq([comma.clone(), extra.clone()]), 0, None),
            Expr::repeat(
                Expr::seq([
                    extra.clone(),
                    Expr::repeat(Expr::seq([comma.clone(), extra.clone()]), 0, None),
                ]),
                0,
                Some(1),
            ),
        ),
        None => (Expr::empty(), Expr::empty()),
    };
    let many = members.len() > 3;
    // S(k) is needed by the object (k = 0) and by S(k-1) when member k-1 is optional and
    // S(k-1) is needed itself: after a required member no later S(k) is reachable.
    let mut starts_needed = Vec::with_capacity(members.len());
    for k in 0..members.len() {
        starts_needed.push(k == 0 || (!members[k - 1].required && starts_needed[k - 1]));
    }
    for (k, member) in members.iter().enumerate().rev() {
        // T(k) is needed by the members before this one.
        let tail_needed = k > 0;
        let start_needed = starts_needed[k];
        let next_tail = std::mem::replace(&mut tail, Expr::empty());
        let (tail_for_start, tail_for_tail) = match (start_needed, tail_needed) {
            (true, true) => (next_tail.clone(), next_tail),
            (true, false) => (next_tail, Expr::empty()),
            (false, _) => (Expr::empty(), next_tail),
        };
        let new_tail = if tail_needed {
            let item = Expr::seq([comma.clone(), member.expr.clone()]);
            if member.required {
                Expr::seq([item, tail_for_tail])
            } else {
                Expr::seq([Expr::repeat(item, 0, Some(1)), tail_for_tail])
            }
        } else {
            Expr::empty()
        };
        let new_start = if !start_needed {
            Expr::empty()
        } else if member.required {
            Expr::seq([member.expr.clone(), tail_for_start])
        } else {
            let previous = std::mem::replace(&mut start, Expr::empty());
            Expr::alt([Expr::seq([member.expr.clone(), tail_for_start]), previous])
        };
        // Name the pieces so shared tails are written once: T(k) is used by T(k-1) and
        // S(k-1); S(k) only by an optional S(k-1).
        if many && k > 0 {
            tail = e.add_rule(&numbered(&hint, "-tail-", k), new_tail);
            start = if members[k - 1].required || !start_needed {
                new_start
            } else {
                e.add_rule(&numbered(&hint, "-from-", k), new_start)
            };
        } else {
            tail = new_tail;
            start = new_start;
        }
    }
    let body = Expr::seq([open, start, close]);
    Ok(e.add_rule(&hint, body))
}

/// `{hint}{tag}{k}`, a rule-name hint for the `k`th piece of a chain (built directly: an
/// object with many members names two pieces per member).
fn numbered(hint: &str, tag: &str, k: usize) -> String {
    let mut name = String::with_capacity(hint.len() + tag.len() + 4);
    name.push_str(hint);
    name.push_str(tag);
    crate::gbnf::push_number(&mut name, k as u64);
    name
}

/// What `patternProperties` adds to an object's members.
struct PatternMembers<'m> {
    /// Per pattern, a key expression and the schemas its values must satisfy; `None` when
    /// a declared or required name matches a pattern (its key could then appear twice), so
    /// no pattern-matched extra keys are generated.
    arms: Option<Vec<(Expr, Schemas<'m>)>>,
    /// The schemas of required names that no property declares but a pattern matches.
    for_required: Vec<(String, Schemas<'m>)>,
    /// For each declared property whose name matches patterns, their schemas (which its
    /// value must satisfy besides its own).
    for_properties: FxHashMap<String, Schemas<'m>>,
}

/// The members `patternProperties` makes. Declared properties whose names match a
/// pattern must satisfy its schema too. `None` when some pattern is not compiled, leaving
/// the caller to restrict and to leave the patterns to validation.
fn pattern_properties<'m>(
    patterns: &Keyed<'m>,
    properties: &Keyed<'_>,
    required: &[&str],
    e: &mut Emitter<'_, '_, '_>,
) -> Result<Option<PatternMembers<'m>>, CompileError> {
    // Declared names are matched against the patterns; without any, no recognizer is
    // needed (the patterns' grammars are checked with the whole grammar).
    let names_to_match = !properties.is_empty() || !required.is_empty();
    let mut compiled: Vec<(Expr, Subschema<'m>, Option<PatternTest>)> = Vec::new();
    for (pattern, written) in patterns.iter() {
        match crate::pattern::pattern_expr(pattern) {
            Ok(expr) if !names_to_match => compiled.push((expr, written, None)),
            Ok(expr) => match PatternTest::new(pattern, &expr) {
                Ok(test) => compiled.push((expr, written, Some(test))),
                Err(_) => return Ok(None),
            },
            Err(crate::pattern::PatternError::Empty) => {}
            Err(_) => return Ok(None),
        }
    }
    let matches = |name: &str, test: &Option<PatternTest>| {
        test.as_ref().is_some_and(|test| test.matches(name))
    };
    let matched_by = |name: &str| -> Schemas<'m> {
        compiled
            .iter()
            .filter(|(_, _, r)| matches(name, r))
            .flat_map(|(_, written, _)| written.members().iter().cloned())
            .collect()
    };
    // Declared properties must satisfy every pattern their name matches.
    let mut for_properties = FxHashMap::default();
    for name in properties.names() {
        let schemas = matched_by(name);
        if !schemas.is_empty() {
            for_properties.insert(name.to_string(), schemas);
        }
    }
    let mut for_required = Vec::new();
    for &name in required.iter().filter(|r| !properties.declares(r)) {
        let schemas = matched_by(name);
        if !schemas.is_empty() {
            for_required.push((name.to_string(), schemas));
        }
    }
    let declared: Vec<&str> = properties.names().chain(required.iter().copied()).collect();
    let mut arms = Vec::new();
    let all_schemas: Schemas<'m> = compiled
        .iter()
        .flat_map(|(_, w, _)| w.members().iter().cloned())
        .collect();
    for (expr, _, recognizer) in &compiled {
        if declared.iter().any(|d| matches(d, recognizer)) {
            // A declared name matches: its key could appear twice; keep to declared keys.
            return Ok(Some(PatternMembers {
                arms: None,
                for_required,
                for_properties,
            }));
        }
        // A key may match several patterns; requiring all their schemas is sound.
        arms.push((expr.clone(), all_schemas.clone()));
    }
    if compiled.len() > 1 {
        e.restricted(
            patterns.at(),
            "patternProperties",
            "values of pattern-matched keys satisfy every pattern's schema",
        );
    }
    Ok(Some(PatternMembers {
        arms: Some(arms),
        for_required,
        for_properties,
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::{json, Value};

    use crate::recognize::Recognizer;
    use crate::schema::{compile, Options};

    fn recognizer(schema: &Value) -> Recognizer {
        let compiled = compile(schema, &Options::default()).unwrap();
        Recognizer::new(&compiled.grammar).unwrap()
    }

    #[test]
    fn every_rule_of_a_long_object_is_reachable() {
        // Four members: the chain's named pieces after a required member are never
        // reachable, and were once written all the same (mcp-server-fetch's `fetch`).
        for (required, least) in [
            (json!(["a"]), r#"{"a":1}"#),
            (json!(["b"]), r#"{"b":2}"#),
            (json!([]), "{}"),
            (json!(["a", "c"]), r#"{"a":1,"c":true}"#),
        ] {
            let schema = json!({"type": "object", "additionalProperties": false,
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"},
                    "c": {"type": "boolean"}, "d": {"type": "null"}},
                "required": required});
            let compiled = compile(&schema, &Options::default()).unwrap();
            let findings = crate::gbnf::check(&compiled.grammar);
            assert!(findings.is_empty(), "{required}: {findings:?}");
            let r = Recognizer::new(&compiled.grammar).unwrap();
            for text in [r#"{"a":1,"b":2,"c":true,"d":null}"#, least] {
                assert!(r.recognize(text).accepted, "{required}: {text}");
            }
        }
    }

    #[test]
    fn property_names_never_clash_with_building_block_rules() {
        // `cesc` is a shared rule and `kx-…` names the extra keys' first characters.
        let r = recognizer(&json!({
            "type": "object",
            "properties": {
                "cesc": {"type": "object", "properties": {"a": {"type": "integer"}}},
                "kx-a": {"type": "object", "properties": {"b": {"type": "null"}}}
            }
        }));
        assert!(
            r.recognize(r#"{"cesc":{"a":1,"ab":2},"kx-a":{"b":null,"c":2}}"#)
                .accepted
        );
        assert!(!r.recognize(r#"{"cesc":{"a":1,"a":2}}"#).accepted);
        assert!(!r.recognize(r#"{"kx-a":{"b":null,"b":null}}"#).accepted);
    }

    #[test]
    fn other_start_rules_are_named_after_their_characters() {
        let schema = json!({"type": "object", "properties": {
            "aé": {}, "b_": {}, "c\u{1F600}": {}, "d\u{7F}": {}, "Z9": {}
        }});
        let compiled = compile(&schema, &Options::default()).unwrap();
        let names: Vec<&str> = compiled
            .grammar
            .rules
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        for expected in ["ko--e9-", "ko--5f-", "ko--1f600-", "ko--7f-", "ko-9", "kx-"] {
            assert!(names.contains(&expected), "{expected} in {names:?}");
        }
    }

    #[test]
    fn extra_keys_exclude_every_declared_name_and_nothing_else() {
        let long = "n".repeat(40) + "x";
        let names = [
            "", "a", "ab", "abc", "b", "ba", "x\"y", "é", "a/b", "solo", &long,
        ];
        let mut properties = serde_json::Map::new();
        for name in &names[1..] {
            properties.insert((*name).to_string(), json!({"type": "null"}));
        }
        let r = recognizer(&json!({"type": "object", "properties": properties}));
        let long_prefix = "n".repeat(40);
        let long_longer = "n".repeat(40) + "xy";
        let long_other = "n".repeat(40) + "y";
        for key in [
            "",
            "aa",
            "abcd",
            "ac",
            "bb",
            "c",
            "x",
            "x\"",
            "x\"yz",
            "e",
            "a/",
            "é2",
            "s",
            "so",
            "sol",
            "solx",
            "solos",
            "sold",
            "t",
            &long_prefix,
            &long_longer,
            &long_other,
        ] {
            let text = format!("{{{}:1}}", serde_json::to_string(key).unwrap());
            assert!(r.recognize(&text).accepted, "{text}");
        }
        for key in &names[1..] {
            let text = format!("{{{}:1}}", serde_json::to_string(key).unwrap());
            assert!(!r.recognize(&text).accepted, "{text}");
        }
    }

    #[test]
    fn a_required_name_only_a_pattern_declares_gets_the_patterns_schema() {
        let r = recognizer(&json!({
            "type": "object",
            "required": ["a"],
            "patternProperties": {"^a$": {"type": "null"}}
        }));
        assert!(r.recognize(r#"{"a":null}"#).accepted);
        assert!(!r.recognize(r#"{"a":true}"#).accepted);
    }

    #[test]
    fn keys_a_validation_only_if_evaluates_are_not_refused() {
        // `then` evaluates `extra`; the grammar does not see `then`, so it must not hold
        // `extra` to `unevaluatedProperties: false` (no valid object with kind "a" would be
        // possible), and says the keyword is left to validation.
        let schema = json!({
            "type": "object",
            "properties": {"kind": {"enum": ["a", "b"]}},
            "required": ["kind"],
            "if": {"properties": {"kind": {"const": "a"}}},
            "then": {"properties": {"extra": {"type": "integer"}}, "required": ["extra"]},
            "unevaluatedProperties": false
        });
        let compiled = compile(&schema, &Options::default()).unwrap();
        assert!(compiled
            .diagnostics
            .iter()
            .any(|d| d.pointer == "/unevaluatedProperties"));
        let r = Recognizer::new(&compiled.grammar).unwrap();
        assert!(r.recognize(r#"{"kind":"a","extra":1}"#).accepted);
    }

    #[test]
    fn unevaluated_properties_governs_undeclared_names_beside_patterns() {
        let schema = json!({
            "type": "object",
            "required": ["a"],
            "unevaluatedProperties": false,
            "patternProperties": {"^x": {}}
        });
        assert!(compile(&schema, &Options::default()).is_err());
        let r = recognizer(&json!({
            "type": "object",
            "unevaluatedProperties": {"type": "integer"},
            "patternProperties": {"^x": {"type": "string"}}
        }));
        assert!(r.recognize(r#"{"xa":"s"}"#).accepted);
        assert!(!r.recognize(r#"{"xa":1}"#).accepted);
        assert!(!r.recognize(r#"{"b":"s"}"#).accepted);
    }

    #[test]
    fn refs_that_accept_nothing_are_left_out_where_they_may_be() {
        let defs = json!({"loop": {
            "type": "object",
            "properties": {"next": {"$ref": "#/$defs/loop"}},
            "required": ["next"]
        }});
        let r = recognizer(&json!({
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/loop"}, "q": {"type": "null"}},
            "$defs": defs
        }));
        assert!(r.recognize(r#"{"q":null}"#).accepted);
        assert!(!r.recognize(r#"{"p":{}}"#).accepted);
        let r = recognizer(&json!({
            "type": "object",
            "additionalProperties": {"$ref": "#/$defs/b"},
            "$defs": {"b": {
                "type": "object",
                "properties": {"self": {"$ref": "#"}},
                "required": ["a"],
                "additionalProperties": false
            }}
        }));
        assert!(r.recognize("{}").accepted);
        assert!(!r.recognize(r#"{"x":{}}"#).accepted);
        let unsatisfiable = json!({"$ref": "#/$defs/loop", "$defs": defs});
        assert!(matches!(
            compile(&unsatisfiable, &Options::default()),
            Err(crate::schema::CompileError::Unsatisfiable { .. })
        ));
    }
}
