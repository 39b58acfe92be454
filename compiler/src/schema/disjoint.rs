//! Whether `oneOf` branches can be proved disjoint, so that the grammar's `anyOf` of them
//! enforces `oneOf` exactly: no value is valid under two branches.

use serde_json::Value;

use super::ir::{JsonType, PlainSchema, Subschema, Types, Written};
use super::numeric::value::json_equal;
use super::read;

/// Are the branches (each read as a [`PlainSchema`]; combinators left out) pairwise
/// provably disjoint?
pub fn pairwise(branches: &[PlainSchema<'_>]) -> bool {
    branches
        .iter()
        .enumerate()
        .all(|(i, a)| branches[i + 1..].iter().all(|b| disjoint(a, b)))
}

/// Different types, disjoint `const`/`enum` values, or (where one branch admits objects
/// only) a property both require with disjoint `const`/`enum` values.
fn disjoint(a: &PlainSchema<'_>, b: &PlainSchema<'_>) -> bool {
    if a.types.intersect(b.types).is_empty() {
        return true;
    }
    if let (Some(va), Some(vb)) = (&a.literals, &b.literals) {
        if values_disjoint(&va.values, &vb.values) {
            return true;
        }
    }
    // A required property with disjoint values tells objects apart; values of other types
    // ignore `properties`, so one branch at least must admit objects only.
    let objects = Types::of([JsonType::Object]);
    let only_objects = |s: &PlainSchema<'_>| s.types.intersect(objects) == s.types;
    if !(only_objects(a) || only_objects(b)) {
        return false;
    }
    let required =
        |s: &PlainSchema<'_>, name: &str| s.object.required.iter().any(|r| r.value == name);
    a.object.properties.iter().any(|(name, sa)| {
        let Some(sb) = b.object.properties.get(name) else {
            return false;
        };
        required(a, name) && required(b, name) && literals_disjoint(&sa, &sb)
    })
}

/// Does some member of `a` list `const`/`enum` values that no member of `b` lists?
fn literals_disjoint(a: &Subschema<'_>, b: &Subschema<'_>) -> bool {
    a.members().iter().any(|ma| {
        b.members()
            .iter()
            .any(|mb| match (literal_values(ma), literal_values(mb)) {
                (Some(va), Some(vb)) => values_disjoint(&va, &vb),
                _ => false,
            })
    })
}

/// The values a schema's `const`/`enum` allow, read as everywhere else
/// ([`read::literals`]); `None` when it writes neither (or they do not read).
fn literal_values<'v>(schema: &Written<&'v Value>) -> Option<Vec<&'v Value>> {
    let map = schema.value.as_object()?;
    let written = map.contains_key("const") || map.contains_key("enum");
    written.then(|| read::literals(map, &schema.at).ok())?
}

/// Does no value of `a` equal one of `b`?
fn values_disjoint(a: &[&Value], b: &[&Value]) -> bool {
    a.iter().all(|x| !b.iter().any(|y| json_equal(x, y)))
}
