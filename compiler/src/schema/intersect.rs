//! `allOf` over typed schemas: two [`PlainSchema`]s → one that accepts exactly the values
//! both accept, keyword by keyword, each keyword keeping the place where the user wrote it.
//! Where one keyword cannot say what both say (two different `pattern`s), the first side's
//! is kept and the pair is returned as a [`Conflict`], which the caller reports as
//! validation-only: the grammar then allows more than the schema, never less.

use std::cmp::Ordering;

use serde_json::Number;

use super::document::Location;
use super::ir::{
    ArraySchema, Keyed, Literals, NumberSchema, ObjectSchema, PlainSchema, StringSchema, Subschema,
    Written,
};
use super::numeric;
use super::numeric::value::json_equal;

/// A keyword that both sides (or, for the `unevaluated*` keywords, either side) write and
/// that the intersection cannot hold exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The keyword.
    pub keyword: &'static str,
    /// Where each side wrote it (one place at least; the first is where it is reported).
    pub places: Vec<Location>,
}

/// The values valid under both `a` and `b`, and the keywords it could not intersect.
pub fn intersect<'s>(
    a: PlainSchema<'s>,
    b: PlainSchema<'s>,
    conflicts: &mut Vec<Conflict>,
) -> PlainSchema<'s> {
    let mut found = Vec::new();
    let if_at = match (a.if_at, b.if_at) {
        (Some(first), Some(second)) => {
            found.push(conflict("if", [first.clone(), second]));
            Some(first)
        }
        (first, second) => first.or(second),
    };
    let mut not = a.not;
    not.extend(b.not);
    let mut schema = PlainSchema {
        types: a.types.intersect(b.types),
        literals: literals(a.literals, b.literals),
        not,
        if_at,
        conditional: a.conditional || b.conditional,
        string: string(a.string, b.string, &mut found),
        number: number(a.number, b.number, &mut found),
        array: array(a.array, b.array, &mut found),
        object: object(a.object, b.object, &mut found),
    };
    // A keyword kept from one side only leaves the other side's keys (items) unevaluated
    // where the schema evaluates them: an `unevaluated*` kept beside it would refuse them.
    if found.iter().any(|c| !c.keyword.starts_with("unevaluated")) {
        schema.array.unevaluated.take_if(|u| u.restricts());
        schema.object.unevaluated.take_if(|u| u.restricts());
    }
    conflicts.extend(found);
    schema
}

fn conflict(keyword: &'static str, places: impl IntoIterator<Item = Location>) -> Conflict {
    Conflict {
        keyword,
        places: places.into_iter().collect(),
    }
}

/// `enum`/`const` on both sides: the first side's values that the second lists too.
fn literals<'s>(a: Option<Literals<'s>>, b: Option<Literals<'s>>) -> Option<Literals<'s>> {
    match (a, b) {
        (Some(mut first), Some(second)) => {
            first
                .values
                .retain(|v| second.values.iter().any(|w| json_equal(v, w)));
            Some(first)
        }
        (first, second) => first.or(second),
    }
}

/// The tighter of two written bounds: the larger (`larger`) or the smaller, the first on a
/// tie; a conflict when the two cannot be compared.
fn tighter<T>(
    keyword: &'static str,
    a: Option<Written<T>>,
    b: Option<Written<T>>,
    larger: bool,
    compare: impl Fn(&T, &T) -> Option<Ordering>,
    found: &mut Vec<Conflict>,
) -> Option<Written<T>> {
    match (a, b) {
        (Some(first), Some(second)) => match compare(&first.value, &second.value) {
            Some(Ordering::Less) if larger => Some(second),
            Some(Ordering::Greater) if !larger => Some(second),
            Some(_) => Some(first),
            None => {
                found.push(conflict(keyword, [first.at.clone(), second.at]));
                Some(first)
            }
        },
        (first, second) => first.or(second),
    }
}

/// A count bound (`minLength`, `maxItems`, …): the tighter of the two.
fn count(
    keyword: &'static str,
    a: Option<Written<u64>>,
    b: Option<Written<u64>>,
    larger: bool,
    found: &mut Vec<Conflict>,
) -> Option<Written<u64>> {
    tighter(keyword, a, b, larger, |x, y| Some(x.cmp(y)), found)
}

/// A keyword whose two values must be equal to intersect: the first side's, and a
/// conflict when they differ.
fn same<T>(
    keyword: &'static str,
    a: Option<Written<T>>,
    b: Option<Written<T>>,
    equal: impl Fn(&T, &T) -> bool,
    found: &mut Vec<Conflict>,
) -> Option<Written<T>> {
    match (a, b) {
        (Some(first), Some(second)) => {
            if !equal(&first.value, &second.value) {
                found.push(conflict(keyword, [first.at.clone(), second.at]));
            }
            Some(first)
        }
        (first, second) => first.or(second),
    }
}

fn string(a: StringSchema, b: StringSchema, found: &mut Vec<Conflict>) -> StringSchema {
    StringSchema {
        min_length: count("minLength", a.min_length, b.min_length, true, found),
        max_length: count("maxLength", a.max_length, b.max_length, false, found),
        pattern: same("pattern", a.pattern, b.pattern, String::eq, found),
        format: same("format", a.format, b.format, String::eq, found),
    }
}

fn number(a: NumberSchema, b: NumberSchema, found: &mut Vec<Conflict>) -> NumberSchema {
    let exact = numeric::value::compare;
    NumberSchema {
        minimum: tighter("minimum", a.minimum, b.minimum, true, exact, found),
        exclusive_minimum: tighter(
            "exclusiveMinimum",
            a.exclusive_minimum,
            b.exclusive_minimum,
            true,
            exact,
            found,
        ),
        maximum: tighter("maximum", a.maximum, b.maximum, false, exact, found),
        exclusive_maximum: tighter(
            "exclusiveMaximum",
            a.exclusive_maximum,
            b.exclusive_maximum,
            false,
            exact,
            found,
        ),
        multiple_of: multiple_of(a.multiple_of, b.multiple_of, found),
    }
}

/// Two `multipleOf`s: the multiples of two integers are the multiples of their least
/// common multiple, when the grammar can enforce it. Other steps must be equal, or are a
/// conflict (the first is kept: the grammar enforces it, validation the other).
fn multiple_of(
    a: Option<Written<Number>>,
    b: Option<Written<Number>>,
    found: &mut Vec<Conflict>,
) -> Option<Written<Number>> {
    let integral = |n: &Number| {
        let integral = numeric::value::is_integral(n) == Some(true);
        integral.then(|| numeric::integer_step(n).ok()).flatten()
    };
    if let (Some(first), Some(second)) = (&a, &b) {
        let both = integral(&first.value).zip(integral(&second.value));
        let lcm = both.and_then(|(x, y)| (x / gcd(x, y)).checked_mul(y));
        if let Some(lcm) = lcm.filter(|&lcm| lcm <= numeric::MAX_MULTIPLE) {
            return Some(Written {
                value: Number::from(lcm),
                at: first.at.clone(),
            });
        }
    }
    same("multipleOf", a, b, numeric::value::equal, found)
}

fn gcd(mut x: u64, mut y: u64) -> u64 {
    while y != 0 {
        (x, y) = (y, x % y);
    }
    x
}

/// Both schemas, where either may be absent (absent allows everything).
fn both<'s>(a: Option<Subschema<'s>>, b: Option<Subschema<'s>>) -> Option<Subschema<'s>> {
    match (a, b) {
        (Some(first), Some(second)) => Some(first.and(second)),
        (first, second) => first.or(second),
    }
}

/// `unevaluatedItems`/`unevaluatedProperties`: what is "unevaluated" depends on the
/// schemas around it, so intersecting changes it; each side that restricts anything is a
/// conflict. Where both write one, the second side's is kept: it evaluates every key (item)
/// left at its level, so the first restricts nothing more.
fn unevaluated<'s>(
    keyword: &'static str,
    a: Option<Subschema<'s>>,
    b: Option<Subschema<'s>>,
    found: &mut Vec<Conflict>,
) -> Option<Subschema<'s>> {
    let places: Vec<Location> = [&a, &b]
        .into_iter()
        .flatten()
        .filter(|u| u.restricts())
        .map(|u| u.place().clone())
        .collect();
    if !places.is_empty() {
        found.push(conflict(keyword, places));
    }
    b.or(a)
}

fn array<'s>(a: ArraySchema<'s>, b: ArraySchema<'s>, found: &mut Vec<Conflict>) -> ArraySchema<'s> {
    // Past a side's positional schemas, its `items` (absent: anything) holds: each position
    // meets the other side's schema for it.
    let later = |side: &ArraySchema<'s>, i: usize| -> Option<Subschema<'s>> {
        side.prefix.get(i).cloned().or_else(|| side.items.clone())
    };
    let length = a.prefix.len().max(b.prefix.len());
    // One side at least has a schema at each position: `both` gives one.
    let prefix = (0..length)
        .filter_map(|i| both(later(&a, i), later(&b, i)))
        .collect();
    let prefix_at = if a.prefix.is_empty() {
        b.prefix_at
    } else {
        a.prefix_at
    };
    ArraySchema {
        prefix,
        prefix_at,
        items: both(a.items, b.items),
        unevaluated: unevaluated("unevaluatedItems", a.unevaluated, b.unevaluated, found),
        min_items: count("minItems", a.min_items, b.min_items, true, found),
        max_items: count("maxItems", a.max_items, b.max_items, false, found),
        unique_items: a.unique_items.or(b.unique_items),
        // Two `contains` may be met by different items: not one schema for one item.
        contains: match (a.contains, b.contains) {
            (Some(first), Some(second)) => {
                found.push(conflict(
                    "contains",
                    [first.place().clone(), second.place().clone()],
                ));
                Some(first)
            }
            (first, second) => first.or(second),
        },
    }
}

/// Whether `side` says which keys are "additional" (`patternProperties` beside any of
/// these cannot be intersected exactly).
fn keyed(side: &ObjectSchema<'_>) -> bool {
    side.properties.is_written()
        || side.additional.is_some()
        || side.pattern_properties.is_written()
        || side.property_names.is_some()
}

/// The schema a side holds names it does not declare to, when it holds them to one: its
/// `additionalProperties`, unless `patternProperties` decides which names are additional.
fn additional_for_others<'s>(side: &ObjectSchema<'s>) -> Option<Subschema<'s>> {
    side.additional
        .clone()
        .filter(|additional| additional.restricts() && !side.pattern_properties.is_written())
}

/// Schemas by name on both sides: the first side's names, then the second's new ones, a
/// name on both sides under both schemas. A name only one side declares meets the other
/// side's schema for names it does not declare (`others_a`, `others_b`), if any.
fn union<'s>(
    a: &Keyed<'s>,
    b: &Keyed<'s>,
    others_a: Option<&Subschema<'s>>,
    others_b: Option<&Subschema<'s>>,
) -> Keyed<'s> {
    if (!b.is_written() && others_b.is_none()) || (!a.is_written() && !b.is_written()) {
        return a.clone();
    }
    if !a.is_written() && others_a.is_none() {
        return b.clone();
    }
    let mut entries = Vec::new();
    for (name, schema) in a.iter() {
        let other = b.get(name).or_else(|| others_b.cloned());
        let schema = match other {
            Some(other) => schema.and(other),
            None => schema,
        };
        entries.push((name, schema));
    }
    for (name, schema) in b.iter().filter(|(name, _)| !a.declares(name)) {
        let schema = match others_a {
            Some(others) => schema.and(others.clone()),
            None => schema,
        };
        entries.push((name, schema));
    }
    let at = if a.is_written() { a.at() } else { b.at() };
    Keyed::merged(entries, at.clone())
}

fn object<'s>(
    a: ObjectSchema<'s>,
    b: ObjectSchema<'s>,
    found: &mut Vec<Conflict>,
) -> ObjectSchema<'s> {
    if (a.pattern_properties.is_written() && keyed(&b))
        || (b.pattern_properties.is_written() && keyed(&a))
    {
        let places = [&a, &b]
            .into_iter()
            .filter(|side| side.pattern_properties.is_written())
            .map(|side| side.pattern_properties.at().clone());
        found.push(conflict("patternProperties", places));
    }
    let (others_a, others_b) = (additional_for_others(&a), additional_for_others(&b));
    let properties = union(
        &a.properties,
        &b.properties,
        others_a.as_ref(),
        others_b.as_ref(),
    );
    let pattern_properties = union(&a.pattern_properties, &b.pattern_properties, None, None);
    let mut required = a.required;
    for name in b.required {
        if !required.iter().any(|r| r.value == name.value) {
            required.push(name);
        }
    }
    let mut dependencies = a.dependencies;
    dependencies.extend(b.dependencies);
    ObjectSchema {
        properties,
        required,
        additional: both(a.additional, b.additional),
        unevaluated: unevaluated("unevaluatedProperties", a.unevaluated, b.unevaluated, found),
        pattern_properties,
        property_names: both(a.property_names, b.property_names),
        min_properties: count(
            "minProperties",
            a.min_properties,
            b.min_properties,
            true,
            found,
        ),
        max_properties: count(
            "maxProperties",
            a.max_properties,
            b.max_properties,
            false,
            found,
        ),
        dependencies,
        dependent_schemas: a.dependent_schemas || b.dependent_schemas,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::{json, Value};

    use crate::recognize::Recognizer;
    use crate::schema::canon::canonical_text;
    use crate::schema::document::Document;
    use crate::schema::{compile, CompileError, KeywordStatus, Options};

    /// Compiles `schema`, which must leave nothing to validation, and checks that its
    /// grammar accepts exactly the `texts` the `jsonschema` validator accepts.
    fn decides_exactly(schema: Value, texts: &[&str]) {
        let compiled = compile(&schema, &Options::default()).unwrap();
        let left: Vec<_> = compiled
            .diagnostics
            .iter()
            .filter(|d| d.status == KeywordStatus::ValidationOnly)
            .collect();
        assert!(left.is_empty(), "{schema}: {left:?}");
        let validator = jsonschema::validator_for(&schema).unwrap();
        let recognizer = Recognizer::new(&compiled.grammar).unwrap();
        for text in texts {
            let valid = validator.is_valid(&serde_json::from_str(text).unwrap());
            let accepted = recognizer.recognize(text).accepted;
            assert_eq!(accepted, valid, "{schema}: {text}");
        }
    }

    #[test]
    fn bounds_types_and_steps_intersect_exactly() {
        decides_exactly(
            json!({"type": "integer", "allOf": [{"minimum": 1, "maximum": 9}, {"exclusiveMinimum": 2, "maximum": 20}]}),
            &["2", "3", "9", "10", "1"],
        );
        decides_exactly(
            json!({"allOf": [{"type": "number"}, {"type": ["integer", "string"]}]}),
            &["1", "1.5", "\"a\"", "null"],
        );
        // The multiples of 4 and of 6 are the multiples of 12.
        decides_exactly(
            json!({"type": "integer", "allOf": [{"multipleOf": 4}, {"multipleOf": 6}]}),
            &["12", "24", "4", "6", "0", "-36"],
        );
        decides_exactly(
            json!({"type": "string", "allOf": [{"minLength": 2}, {"maxLength": 3, "minLength": 1}]}),
            &["\"a\"", "\"ab\"", "\"abc\"", "\"abcd\""],
        );
    }

    #[test]
    fn a_property_one_side_declares_meets_the_other_sides_additional_schema() {
        decides_exactly(
            json!({"allOf": [
                {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "integer"}},
                {"properties": {"b": {"type": "number"}, "a": {"type": "string"}}, "required": ["a"]}
            ]}),
            &[
                r#"{"a":"x"}"#,
                r#"{"a":1}"#,
                r#"{"a":"x","b":2}"#,
                r#"{"a":"x","b":2.5}"#,
                r#"{"b":2}"#,
            ],
        );
    }

    /// An `allOf` inside an `allOf` member, and the members that are references alone,
    /// join one intersection: the bounds and steps of four places meet exactly.
    #[test]
    fn nested_all_of_members_and_references_join_one_intersection() {
        decides_exactly(
            json!({
                "type": "integer",
                "allOf": [
                    {"allOf": [{"$ref": "#/$defs/low"}, {"$ref": "#/$defs/high"}]},
                    {"$ref": "#/$defs/even"}
                ],
                "$defs": {
                    "low": {"minimum": 1},
                    "high": {"maximum": 9},
                    "even": {"allOf": [{"multipleOf": 2}]}
                }
            }),
            &["2", "8", "0", "10", "3", "-2"],
        );
    }

    /// The properties of a nested `allOf` come after those of every member of the outer
    /// one, in the grammar as in the canonical text (the order a merge meets them).
    #[test]
    fn nested_members_declare_their_properties_after_the_outer_members() {
        let schema = json!({"type": "object", "allOf": [
            {"allOf": [{"properties": {"a": {"type": "integer"}}}]},
            {"properties": {"b": {"type": "integer"}}}
        ]});
        let compiled = compile(&schema, &Options::default()).unwrap();
        let recognizer = Recognizer::new(&compiled.grammar).unwrap();
        let doc = Document::from_input(&schema, None).unwrap();
        let text = canonical_text(&json!({"a": 1, "b": 2}), &doc);
        assert_eq!(text, r#"{"b":2,"a":1}"#);
        assert!(recognizer.recognize(&text).accepted, "{}", compiled.grammar);
    }

    /// A member that reaches its own schema again through a reference is kept whole, not
    /// flattened without end: the cycle (with no base case) is then reported.
    #[test]
    fn a_member_reached_again_through_a_reference_ends_in_an_error_not_a_loop() {
        let schema = json!({
            "$defs": {"t": {"allOf": [{"$ref": "#/$defs/t"}, {"type": "string"}]}},
            "$ref": "#/$defs/t"
        });
        let error = compile(&schema, &Options::default()).unwrap_err();
        assert!(
            matches!(error, CompileError::Unsatisfiable { .. }),
            "{error}"
        );
    }

    /// A conflict is reported at the first side's keyword and names where each side wrote
    /// it; a keyword inside a member is reported where the member wrote it.
    #[test]
    fn diagnostics_name_the_places_written() {
        let schema = json!({"type": "string", "allOf": [
            {"pattern": "^a"},
            {"pattern": "b$", "format": "no-such-format"}
        ]});
        let compiled = compile(&schema, &Options::default()).unwrap();
        let conflict = compiled
            .diagnostics
            .iter()
            .find(|d| d.keyword == "pattern")
            .unwrap();
        assert_eq!(conflict.pointer, "/allOf/0/pattern");
        assert!(
            conflict.message.contains("/allOf/0/pattern")
                && conflict.message.contains("/allOf/1/pattern"),
            "{conflict:?}"
        );
        assert!(compiled
            .diagnostics
            .iter()
            .any(|d| d.pointer == "/allOf/1/format" && d.status == KeywordStatus::ValidationOnly));
    }
}
