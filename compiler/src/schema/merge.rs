//! `allOf` by merging: two schema objects → one that accepts exactly the values both
//! accept, keyword by keyword. Where an exact intersection is not expressible as one
//! schema (two different `pattern`s, say), the first schema's keyword is kept and the
//! keyword is returned as a conflict, which the caller reports as validation-only.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::keywords::is_assertion;
use super::keywords::{TRUE, UNEVALUATED};
use super::lookup::Lookup;
use super::numeric;

/// The result of a merge: the merged schema, and the keywords it could not intersect.
pub struct Merged<'k> {
    /// The merged schema object.
    pub schema: Map<String, Value>,
    /// Keywords whose intersection is not exact (the first schema's value was kept).
    pub conflicts: Vec<&'k str>,
    /// Keywords whose value the merge made from both sides (or rewrote); every other
    /// keyword is the first schema's value or, where only the second has it, the
    /// second's, unchanged.
    pub combined: Vec<&'k str>,
    /// The first schema's value, or its absence, of each keyword the merge wrote or
    /// removed.
    before: Before<'k>,
}

impl Merged<'_> {
    /// The first schema's value of `key` before the merge.
    pub fn first_side(&self, key: &str) -> Option<&Value> {
        self.before.first_side(key, &self.schema)
    }
}

/// The first side's values of the keywords a merge has overwritten so far, each kept the
/// first time it is written: the merge builds its result in the first side's own map and
/// copies only what it replaces. The keywords are the second side's (or constants): the
/// merge borrows them rather than copying each.
#[derive(Default)]
struct Before<'k>(Vec<(&'k str, Option<Value>)>);

impl<'k> Before<'k> {
    /// The first side's `key`, given the map being written (`out`).
    fn first_side<'m>(&'m self, key: &str, out: &'m Map<String, Value>) -> Option<&'m Value> {
        match self.0.iter().find(|(k, _)| *k == key) {
            Some((_, value)) => value.as_ref(),
            None => out.kw(key),
        }
    }

    /// Writes `value` at `key` in `out`, keeping the value it replaces.
    fn set(&mut self, out: &mut Map<String, Value>, key: &'k str, value: Value) {
        let old = out.insert(key.to_string(), value);
        self.keep(key, old);
    }

    /// Removes `key` from `out`, keeping the order of the rest, and keeps its value.
    fn shift_remove(&mut self, out: &mut Map<String, Value>, key: &'k str) {
        let old = out.shift_remove(key);
        self.keep(key, old);
    }

    /// Removes `key` from `out`, moving the last member into its place (serde_json's
    /// `remove`), and keeps its value.
    fn swap_remove(&mut self, out: &mut Map<String, Value>, key: &'k str) {
        let old = out.swap_remove(key);
        self.keep(key, old);
    }

    /// The first side, with `out` the map being written.
    fn over<'m>(&'m self, out: &'m Map<String, Value>) -> FirstSide<'m>
    where
        'k: 'm,
    {
        FirstSide { out, before: self }
    }

    fn keep(&mut self, key: &'k str, old: Option<Value>) {
        if !self.0.iter().any(|(k, _)| *k == key) {
            self.0.push((key, old));
        }
    }
}

/// The first side of a merge while its result is written over it.
struct FirstSide<'m> {
    out: &'m Map<String, Value>,
    before: &'m Before<'m>,
}

impl Lookup for FirstSide<'_> {
    fn kw(&self, name: &str) -> Option<&Value> {
        self.before.first_side(name, self.out)
    }
}

/// Merges `b` into `a`. Both are schema objects whose `$ref`s and `allOf`s the caller has
/// already inlined.
#[cfg(test)]
pub fn merge<'k>(a: &Map<String, Value>, b: &'k Map<String, Value>) -> Merged<'k> {
    merge_owned(a.clone(), b)
}

/// The keywords [`merge_owned`] reports as conflicts when the first side is empty (the
/// merged schema is then `b` as it is): `b`'s own `unevaluated*`.
pub fn conflicts_alone(b: &Map<String, Value>) -> impl Iterator<Item = &'static str> {
    unevaluated_conflicts(&[b]).into_iter()
}

/// What is "unevaluated" depends on the schemas around it, so merging changes it: each
/// `unevaluated*` that restricts anything on one of `sides` is a conflict.
fn unevaluated_conflicts(sides: &[&dyn Lookup]) -> Vec<&'static str> {
    UNEVALUATED
        .into_iter()
        .filter(|key| sides.iter().any(|side| restricts(*side, key)))
        .collect()
}

/// Which keys are "additional" depends on these keywords of the same schema object.
fn keyed(m: &impl Lookup) -> bool {
    [
        "properties",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
    ]
    .iter()
    .any(|k| m.has(k))
}

/// [`merge`], taking `a` to build the result in (only the keywords the merge replaces
/// are kept aside).
pub fn merge_owned(whole: Map<String, Value>, b: &Map<String, Value>) -> Merged<'_> {
    let mut out = whole;
    let mut before = Before::default();
    let mut conflicts = Vec::new();
    let mut combined = Vec::new();
    {
        let a = before.over(&out);
        // Merging patterns with another side's keys cannot be exact.
        if (a.has("patternProperties") && keyed(b)) || (b.has("patternProperties") && keyed(&a)) {
            conflicts.push("patternProperties");
        }
        conflicts.extend(unevaluated_conflicts(&[&a, b]));
    }
    for (key, vb) in b {
        let a = before.over(&out);
        let Some(va) = a.kw(key) else {
            before.set(&mut out, key, vb.clone());
            continue;
        };
        if va == vb {
            continue;
        }
        let merged = match key.as_str() {
            "type" => Some(merge_types(va, vb)),
            "enum" | "const" => None, // handled below, together
            "minimum" | "minLength" | "minItems" | "minProperties" | "minContains" => {
                pick_number(va, vb, true)
            }
            "maximum" | "maxLength" | "maxItems" | "maxProperties" | "maxContains" => {
                pick_number(va, vb, false)
            }
            "exclusiveMinimum" | "exclusiveMaximum" if va.is_number() && vb.is_number() => {
                pick_number(va, vb, key == "exclusiveMinimum")
            }
            "required" => Some(union_strings(va, vb)),
            "properties" | "patternProperties" | "dependentSchemas" => merge_keyed(va, vb, all_of),
            "dependentRequired" => merge_keyed(va, vb, union_strings),
            // A member's own `unevaluated*` evaluates every key (item) left at its level,
            // so the outer one restricts nothing more: the member's alone (applied to more
            // declared keys here, so no stricter than the schema; reported above).
            "unevaluatedProperties" | "unevaluatedItems" => Some(vb.clone()),
            "additionalProperties" | "items" | "additionalItems" | "propertyNames" | "contains" => {
                if va.is_object() || vb.is_object() || va.is_boolean() {
                    Some(all_of(va, vb))
                } else {
                    None
                }
            }
            "prefixItems" => merge_prefix(&a, b),
            "anyOf" | "oneOf" => None,
            // Both must hold, each as a list of schemas that must all hold.
            "allOf" => match (va, vb) {
                (Value::Array(x), Value::Array(y)) => {
                    Some(Value::Array(x.iter().chain(y).cloned().collect()))
                }
                _ => None,
            },
            "not" => Some(pair_under("anyOf", va, vb)),
            "uniqueItems" => Some(Value::Bool(
                va.as_bool().unwrap_or(false) || vb.as_bool().unwrap_or(false),
            )),
            // Unknown keywords constrain nothing (each gets its warning where written).
            k if !is_assertion(k) => Some(va.clone()),
            _ => None,
        };
        // (x1 ∨ x2) ∧ (y1 ∨ y2) = ∨ (xi ∧ yj); for oneOf, exactly one x and exactly one y
        // hold exactly when exactly one pair does.
        let distributed = match (&merged, key.as_str()) {
            (None, "anyOf" | "oneOf") => Some(distribute(va, vb)),
            _ => None,
        };
        match (merged, distributed) {
            (Some(value), _) | (None, Some(Some(value))) => {
                before.set(&mut out, key, value);
                combined.push(key.as_str());
            }
            (None, _) if matches!(key.as_str(), "enum" | "const") => {}
            (None, _) => conflicts.push(key.as_str()),
        }
    }
    // A keyword kept from one side only leaves the other side's keys (items) unevaluated
    // where the schema evaluates them: an `unevaluated*` kept beside it would refuse them.
    if conflicts.iter().any(|c| !c.starts_with("unevaluated")) {
        for key in UNEVALUATED {
            if restricts(&out, key) {
                before.shift_remove(&mut out, key);
            }
        }
    }
    let enums = merge_enums(&before.over(&out), b);
    if let Some(values) = enums {
        before.swap_remove(&mut out, "const");
        before.set(&mut out, "enum", Value::Array(values));
        combined.push("enum");
    }
    // Properties that one side declares and the other treats as "additional" (each
    // crossing needs the keyword on one side at least, so in the merged schema).
    if out.has("properties") && cross_both(&mut out, &mut before, b, "properties", cross_additional)
    {
        combined.push("properties");
    }
    if out.has("prefixItems") && cross_both(&mut out, &mut before, b, "prefixItems", cross_items) {
        combined.push("prefixItems");
    }
    Merged {
        schema: out,
        conflicts,
        combined,
        before,
    }
}

/// What one side's keyword `key` becomes when a keyword of the other side reaches into
/// it: the first side, the second, and the merged schema's current value (borrowed back
/// when the other side reaches into it without changing it).
type Cross = for<'v> fn(&dyn Lookup, &dyn Lookup, Option<&'v Value>) -> Option<Cow<'v, Value>>;

/// Applies `cross` with the first side first, then with `b` first, writing `key` each
/// time it returns a value; returns whether it did.
fn cross_both(
    out: &mut Map<String, Value>,
    before: &mut Before<'_>,
    b: &Map<String, Value>,
    key: &'static str,
    cross: Cross,
) -> bool {
    let mut crossed = false;
    for a_first in [true, false] {
        let a = before.over(out);
        let current = out.kw(key);
        let rewritten = if a_first {
            cross(&a, b, current)
        } else {
            cross(b, &a, current)
        };
        if let Some(value) = rewritten {
            if let Cow::Owned(value) = value {
                before.set(out, key, value);
            }
            crossed = true;
        }
    }
    crossed
}

/// Does `map` hold `key` with a schema other than `true` (one that restricts anything)?
pub fn restricts(map: &(impl Lookup + ?Sized), key: &str) -> bool {
    map.kw(key).is_some_and(|v| v != &TRUE)
}

/// `{"allOf": [a, b]}`, flattened when either side is `true`.
fn all_of(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Bool(true), other) | (other, Value::Bool(true)) => other.clone(),
        (Value::Bool(false), _) | (_, Value::Bool(false)) => Value::Bool(false),
        _ => pair_under("allOf", a, b),
    }
}

/// `{keyword: [a, b]}`.
fn pair_under(keyword: &str, a: &Value, b: &Value) -> Value {
    let pair = Value::Array(vec![a.clone(), b.clone()]);
    Value::Object(Map::from_iter([(keyword.to_string(), pair)]))
}

/// `b` constrains every item (`items` without `prefixItems`) while `a` has positional
/// schemas: in `b` those positions are items too, so they must satisfy `b`'s `items`.
/// Returns the merged schema's new `prefixItems` (now `prefix`), if they change.
fn cross_items<'v>(
    a: &dyn Lookup,
    b: &dyn Lookup,
    prefix: Option<&'v Value>,
) -> Option<Cow<'v, Value>> {
    let (Some(Value::Array(_)), Some(items)) = (a.kw("prefixItems"), b.kw("items")) else {
        return None;
    };
    if b.has("prefixItems") || items.is_array() || items == &Value::Bool(true) {
        return None;
    }
    let Some(Value::Array(prefix)) = prefix else {
        return None;
    };
    Some(Cow::Owned(Value::Array(
        prefix.iter().map(|p| all_of(p, items)).collect(),
    )))
}

/// Properties `b` declares that `a` does not, while `a` constrains additional properties:
/// in `a` they are additional, so they must satisfy `a`'s `additionalProperties` too.
/// Returns the merged schema's new `properties` (now `properties`), if they change.
fn cross_additional<'v>(
    a: &dyn Lookup,
    b: &dyn Lookup,
    properties: Option<&'v Value>,
) -> Option<Cow<'v, Value>> {
    let additional = a.kw("additionalProperties")?;
    if additional == &Value::Bool(true) || a.has("patternProperties") {
        return None;
    }
    let a_props = a.kw("properties").and_then(Value::as_object);
    let b_props = b.kw("properties").and_then(Value::as_object)?;
    let declared_by_a = |name: &String| a_props.is_some_and(|p| p.contains_key(name));
    if let Some(current) = properties.filter(|p| p.is_object()) {
        if b_props.keys().all(declared_by_a) {
            return Some(Cow::Borrowed(current));
        }
    }
    let mut merged_props = properties
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (name, schema) in b_props {
        if declared_by_a(name) {
            continue;
        }
        let current = merged_props
            .get(name)
            .cloned()
            .unwrap_or_else(|| schema.clone());
        merged_props.insert(name.clone(), all_of(&current, additional));
    }
    Some(Cow::Owned(Value::Object(merged_props)))
}

/// The largest number of branches distributing two `anyOf`s may produce.
const MAX_DISTRIBUTED: usize = 64;

fn distribute(a: &Value, b: &Value) -> Option<Value> {
    let (xs, ys) = (a.as_array()?, b.as_array()?);
    if xs.len() * ys.len() > MAX_DISTRIBUTED {
        return None;
    }
    Some(Value::Array(
        xs.iter()
            .flat_map(|x| ys.iter().map(move |y| all_of(x, y)))
            .collect(),
    ))
}

fn merge_types(a: &Value, b: &Value) -> Value {
    let set = |v: &Value| -> Vec<String> {
        match v {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    };
    let (sa, sb) = (set(a), set(b));
    let mut out = Vec::new();
    for t in &sa {
        let integral = (t == "number" && sb.iter().any(|x| x == "integer"))
            || (t == "integer" && sb.iter().any(|x| x == "number"));
        if sb.contains(t) {
            out.push(t.clone());
        } else if integral {
            out.push("integer".to_string());
        }
    }
    out.dedup();
    Value::Array(out.into_iter().map(Value::String).collect())
}

/// The tighter of two bounds (the larger or the smaller), compared exactly; `None` when
/// either is a number too large to compare (the merge then reports a conflict).
fn pick_number(a: &Value, b: &Value, larger: bool) -> Option<Value> {
    let (Value::Number(x), Value::Number(y)) = (a, b) else {
        return Some(a.clone());
    };
    let order = numeric::value::compare(x, y)?;
    Some(if order.is_ge() == larger { a } else { b }.clone())
}

fn union_strings(a: &Value, b: &Value) -> Value {
    let mut out: Vec<Value> = a.as_array().cloned().unwrap_or_default();
    for v in b.as_array().into_iter().flatten() {
        if !out.contains(v) {
            out.push(v.clone());
        }
    }
    Value::Array(out)
}

/// Two objects keyed by name: keys on one side are kept, keys on both are combined.
fn merge_keyed(a: &Value, b: &Value, combine: fn(&Value, &Value) -> Value) -> Option<Value> {
    let (ma, mb) = (a.as_object()?, b.as_object()?);
    let mut out = ma.clone();
    for (k, vb) in mb {
        let merged = match ma.kw(k) {
            Some(va) => combine(va, vb),
            None => vb.clone(),
        };
        out.insert(k.clone(), merged);
    }
    Some(Value::Object(out))
}

/// Two `prefixItems` lists, position by position. Past the shorter list, its side's
/// `items` (2020-12: every later item; absent: anything) meets the longer list's schemas.
fn merge_prefix(a: &impl Lookup, b: &impl Lookup) -> Option<Value> {
    let (pa, pb) = (
        a.kw("prefixItems")?.as_array()?,
        b.kw("prefixItems")?.as_array()?,
    );
    fn later(m: &impl Lookup) -> Option<&Value> {
        match m.kw("items") {
            None => Some(&TRUE),
            Some(items) if !items.is_array() => Some(items),
            Some(_) => None,
        }
    }
    let (later_a, later_b) = (later(a)?, later(b)?);
    let length = pa.len().max(pb.len());
    Some(Value::Array(
        (0..length)
            .map(|i| all_of(pa.get(i).unwrap_or(later_a), pb.get(i).unwrap_or(later_b)))
            .collect(),
    ))
}

/// `enum`/`const` on both sides: the values common to both, to be the merged schema's
/// one `enum` (in place of any `const`).
fn merge_enums(a: &impl Lookup, b: &impl Lookup) -> Option<Vec<Value>> {
    /// The values `m` allows by `enum` and `const` (borrowed), if it lists any: its
    /// `enum`'s values, those equal to its `const` when it has both.
    fn values(m: &impl Lookup) -> Option<Vec<&Value>> {
        let listed = m.kw("enum").and_then(Value::as_array);
        match (listed, m.kw("const")) {
            (Some(list), Some(c)) => Some(list.iter().filter(|x| json_equal(x, c)).collect()),
            (Some(list), None) => Some(list.iter().collect()),
            (None, Some(c)) => Some(vec![c]),
            (None, None) => None,
        }
    }
    fn listed(m: &impl Lookup) -> bool {
        m.has("enum") || m.has("const")
    }
    if !listed(b) || !listed(a) {
        // One side at most: its `enum`/`const` is in the merged schema as written.
        return None;
    }
    let kept: Vec<&Value> = match (values(a), values(b)) {
        (Some(x), Some(y)) => x
            .into_iter()
            .filter(|v| y.iter().any(|w| json_equal(v, w)))
            .collect(),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => return None,
    };
    Some(kept.into_iter().cloned().collect())
}

/// JSON Schema equality: numbers compare by value (`1` equals `1.0`).
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numeric::value::equal(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn intersects_bounds_types_and_required() {
        let second = obj(json!({"type": "integer", "minimum": 5, "maximum": 9, "required": ["b"]}));
        let m = merge(
            &obj(json!({"type": ["number", "string"], "minimum": 1, "required": ["a"]})),
            &second,
        );
        assert!(m.conflicts.is_empty());
        assert_eq!(m.schema["type"], json!(["integer"]));
        assert_eq!(m.schema["minimum"], json!(5));
        assert_eq!(m.schema["maximum"], json!(9));
        assert_eq!(m.schema["required"], json!(["a", "b"]));
    }

    #[test]
    fn the_first_side_is_still_readable_after_the_merge_replaced_it() {
        let b = obj(json!({"minimum": 5, "maximum": 9, "properties": {"b": {}}}));
        let m = merge_owned(
            obj(
                json!({"minimum": 1, "title": "t", "properties": {"a": {}}, "additionalProperties": false}),
            ),
            &b,
        );
        assert_eq!(m.schema["minimum"], json!(5));
        assert_eq!(m.first_side("minimum"), Some(&json!(1)));
        assert_eq!(m.first_side("title"), Some(&json!("t")));
        assert_eq!(m.first_side("maximum"), None);
        // `properties` was rewritten (b's `b` is additional on the first side).
        assert_eq!(m.schema["properties"], json!({"a": {}, "b": false}));
        assert_eq!(m.first_side("properties"), Some(&json!({"a": {}})));
    }

    #[test]
    fn merged_into_nothing_a_schema_stays_as_it_is() {
        for b in [
            json!({"enum": [1, 2], "const": 2, "type": "integer"}),
            json!({"properties": {"a": {}}, "additionalProperties": false, "patternProperties": {"x": {}}}),
            json!({"prefixItems": [{}], "items": {"type": "string"}, "unevaluatedItems": false}),
            json!({"unevaluatedProperties": {"type": "null"}, "unevaluatedItems": true, "allOf": [{}]}),
        ] {
            let b = obj(b);
            let m = merge_owned(Map::new(), &b);
            assert_eq!(m.schema, b);
            assert!(m.schema.keys().eq(b.keys()), "order of {b:?}");
            assert_eq!(
                m.conflicts,
                conflicts_alone(&b).collect::<Vec<_>>(),
                "{b:?}"
            );
            assert!(m.combined.is_empty(), "{b:?}");
        }
    }

    #[test]
    fn enums_intersect_and_patterns_conflict() {
        let second = obj(json!({"enum": [2.0, 3, 4], "pattern": "b"}));
        let m = merge(&obj(json!({"enum": [1, 2, 3], "pattern": "a"})), &second);
        assert_eq!(m.schema["enum"], json!([2, 3]));
        assert_eq!(m.conflicts, vec!["pattern".to_string()]);
    }

    #[test]
    fn nested_all_ofs_concatenate_and_unknown_keywords_do_not_conflict() {
        let second = obj(json!({"allOf": [{"maximum": 9}], "help": "two"}));
        let m = merge(
            &obj(json!({"allOf": [{"minimum": 1}], "help": "one"})),
            &second,
        );
        assert!(m.conflicts.is_empty(), "{:?}", m.conflicts);
        assert_eq!(m.schema["allOf"], json!([{"minimum": 1}, {"maximum": 9}]));
    }

    #[test]
    fn an_inner_unevaluated_keyword_replaces_the_outer_one() {
        // The inner `true` evaluates every property, so the outer `false` restricts nothing.
        let second = obj(json!({"unevaluatedProperties": true}));
        let m = merge(
            &obj(json!({"properties": {"a": {}}, "unevaluatedProperties": false})),
            &second,
        );
        assert_eq!(m.conflicts, vec!["unevaluatedProperties".to_string()]);
        assert_eq!(m.schema["unevaluatedProperties"], json!(true));
    }

    #[test]
    fn properties_additional_in_one_side_obey_its_additional_schema() {
        let second = obj(json!({"properties": {"b": {"type": "string"}}}));
        let m = merge(
            &obj(json!({"properties": {"a": {}}, "additionalProperties": false})),
            &second,
        );
        assert_eq!(m.schema["properties"]["b"], json!(false));
        assert_eq!(m.schema["additionalProperties"], json!(false));
    }
}
