//! Where the keywords of a merged schema were written. `allOf`, a `$ref` with siblings
//! and `anyOf`/`oneOf` branches beside other keywords compile a schema object that
//! `merge.rs` made from several others, at the place of the schema that merges them. A
//! diagnostic inside it would name a place in that made-up object (`/anyOf/1/not` for a
//! `not` written at `/allOf/1/not`), which the user's document does not have. Each merge
//! records where every keyword came from ([`MergeSite`]), and [`original`] carries a
//! place back through the merges, innermost first.

use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use super::document::{escape_token, Location};
use super::lookup::Lookup;
use super::merge::Merged;

/// For each keyword of a schema object (as a JSON pointer token), where it was written;
/// `None` for a keyword whose value the merge made from several places. A key of two
/// tokens (`properties/a`) names one schema of a keyword the merge combined.
pub type Origins = FxHashMap<String, Option<Location>>;

/// A merged schema object being compiled.
pub struct MergeSite {
    /// Where it is compiled: places below this one name its keywords.
    pub at: Location,
    /// Where each of its keywords came from.
    pub origins: Origins,
    /// Where to report a place inside a keyword the merge combined: the keyword that
    /// merges (`/allOf`, `/$ref`, a branch of `anyOf`).
    pub combined_at: Location,
}

/// The origins of a schema object written at `at`: each keyword at `at/keyword`.
pub fn written_at(map: &Map<String, Value>, at: &Location) -> Origins {
    map.keys()
        .map(|key| (escape_token(key).into_owned(), Some(at.child(key))))
        .collect()
}

/// Keywords whose value is an object of schemas by name: when a merge combines one, each
/// name's schema may still come from one side, and is traced by name.
const KEYED: [&str; 3] = ["properties", "patternProperties", "dependentSchemas"];

/// The origins of a merge of a schema (with `a_origins`, which the result takes over)
/// and `b` (written at `b_at`).
pub fn of_merge(
    merged: &Merged,
    mut a_origins: Origins,
    b: &Map<String, Value>,
    b_at: &Location,
) -> Origins {
    let mut origins = Origins::default();
    origins.reserve(merged.schema.len());
    for (key, value) in &merged.schema {
        let token = escape_token(key);
        let origin = if merged.combined.contains(&key.as_str()) {
            None
        } else if merged.first_side(key).is_some() {
            // Kept from the first side: a place it was written moves over as it is
            // (each key comes once). A keyword the first side made up from several
            // places has its members traced again below.
            match a_origins.remove_entry(token.as_ref()) {
                Some((token, Some(origin))) => {
                    origins.insert(token, Some(origin));
                    continue;
                }
                _ => None,
            }
        } else if b.has(key) {
            Some(b_at.child(key))
        } else {
            None
        };
        if let (None, Value::Object(members), true) =
            (&origin, value, KEYED.contains(&key.as_str()))
        {
            for (name, schema) in members {
                let unchanged = |side: Option<&Value>| {
                    side.and_then(|m| m.kw(name)).is_some_and(|v| v == schema)
                };
                let member = if unchanged(merged.first_side(key)) {
                    member_origin(&a_origins, &token, name)
                } else if unchanged(b.kw(key)) {
                    Some(b_at.grandchild(key, name))
                } else {
                    None
                };
                origins.insert(format!("{token}/{}", escape_token(name)), member);
            }
        }
        origins.insert(token.into_owned(), origin);
    }
    origins
}

/// Where the schema `name` of the keyed keyword `token` was written, by `origins`.
fn member_origin(origins: &Origins, token: &str, name: &str) -> Option<Location> {
    match origins.get(token) {
        Some(Some(keyword)) => Some(keyword.child(name)),
        _ => origins
            .get(&format!("{token}/{}", escape_token(name)))
            .cloned()
            .flatten(),
    }
}

/// The place in the user's documents that `place`, named inside the merged objects of
/// `sites` (outermost first), stands for. A place below a keyword the merge combined
/// becomes that site's `combined_at`; a place outside every site is returned as it is.
pub fn original(sites: &[MergeSite], mut place: Location) -> Location {
    for site in sites.iter().rev() {
        if place.doc != site.at.doc {
            continue;
        }
        let Some(below) = place
            .pointer
            .strip_prefix(site.at.pointer.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
        else {
            continue;
        };
        let (token, tail) = below.split_once('/').unwrap_or((below, ""));
        let (origin, tail) = match site.origins.get(token) {
            Some(None) if !tail.is_empty() => {
                // A member traced on its own (a made-up `allOf`'s, a property's)? Its key,
                // `token/index`, is where `below` starts.
                let (index, rest) = tail.split_once('/').unwrap_or((tail, ""));
                match site.origins.get(&below[..token.len() + 1 + index.len()]) {
                    Some(member) => (member, rest),
                    None => (&None, tail),
                }
            }
            Some(origin) => (origin, tail),
            // Not a keyword of the merged object (a `$ref` target below it): a real place.
            None => continue,
        };
        place = match origin {
            Some(origin) if tail.is_empty() => origin.clone(),
            Some(origin) => Location {
                doc: origin.doc,
                pointer: format!("{}/{tail}", origin.pointer),
            },
            None => site.combined_at.clone(),
        };
    }
    place
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;
    use crate::schema::merge::merge;

    fn at(pointer: &str) -> Location {
        Location {
            doc: 0,
            pointer: pointer.to_string(),
        }
    }

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    /// Each place, undone through `sites`, is where it was written.
    fn assert_leads(sites: &[MergeSite], places: &[(&str, &str)]) {
        for (place, written) in places {
            assert_eq!(original(sites, at(place)), at(written), "{place}");
        }
    }

    /// The site of `{"allOf": members}` at the root, merged member by member.
    fn root_all_of(members: &[&Map<String, Value>]) -> [MergeSite; 1] {
        let (first, rest) = members.split_first().unwrap();
        let mut schema = (*first).clone();
        let mut origins = written_at(first, &at("/allOf/0"));
        for (i, member) in rest.iter().enumerate() {
            let merged = merge(&schema, member);
            origins = of_merge(&merged, origins, member, &at(&format!("/allOf/{}", i + 1)));
            schema = merged.schema;
        }
        [MergeSite {
            at: at(""),
            origins,
            combined_at: at("/allOf"),
        }]
    }

    #[test]
    fn a_schema_merged_into_nothing_is_traced_as_written() {
        let b = object(json!({
            "properties": {"a/b": {}}, "patternProperties": {"x": {}},
            "dependentSchemas": {"a": {}}, "enum": [1], "~x": 2
        }));
        let merged = merge(&Map::new(), &b);
        let traced = of_merge(&merged, Origins::default(), &b, &at("/allOf/0"));
        assert_eq!(traced, written_at(&b, &at("/allOf/0")));
    }

    #[test]
    fn keywords_copied_by_a_merge_lead_back_to_where_they_were_written() {
        // {"allOf": [{"anyOf": [..]}, {"not": ..}]} at the root
        let a = object(json!({"anyOf": [{"type": "integer"}, {"type": "string"}]}));
        let b = object(json!({"not": {"const": 3}, "minimum": 1}));
        let sites = root_all_of(&[&a, &b]);
        assert_leads(
            &sites,
            &[
                ("/not", "/allOf/1/not"),
                ("/anyOf/1/type", "/allOf/0/anyOf/1/type"),
            ],
        );
        // Outside every merged keyword: unchanged.
        assert_leads(&sites, &[("/$defs/x", "/$defs/x"), ("/allOfx", "/allOfx")]);
    }

    #[test]
    fn combined_keywords_lead_to_the_merging_keyword() {
        let a = object(json!({"minimum": 1, "anyOf": [{"type": "integer"}]}));
        let b = object(json!({"minimum": 2, "anyOf": [{"multipleOf": 2}]}));
        let sites = root_all_of(&[&a, &b]);
        assert_leads(
            &sites,
            &[("/minimum", "/allOf"), ("/anyOf/0/multipleOf", "/allOf")],
        );
    }

    #[test]
    fn properties_merged_from_both_sides_lead_to_the_side_that_declared_them() {
        let a = object(json!({"properties": {"x": {"type": "integer"}, "both": {"minimum": 1}}}));
        let b = object(json!({"properties": {"y": {"type": "string"}, "both": {"maximum": 9}}}));
        let sites = root_all_of(&[&a, &b]);
        assert_leads(
            &sites,
            &[
                ("/properties/x/type", "/allOf/0/properties/x/type"),
                ("/properties/y/type", "/allOf/1/properties/y/type"),
                ("/properties/both/minimum", "/allOf"),
            ],
        );
    }

    #[test]
    fn properties_merged_earlier_stay_traced_through_a_later_merge() {
        // {"allOf": [a, b, c]}: `properties` is made up from a and b, then merged with c,
        // which leaves it alone; each property still leads to the member declaring it.
        let a = object(json!({"properties": {"x": {"type": "integer"}}}));
        let b = object(json!({"properties": {"y": {"type": "string"}}}));
        let c = object(json!({"minProperties": 1}));
        let sites = root_all_of(&[&a, &b, &c]);
        assert_leads(
            &sites,
            &[
                ("/properties/x/type", "/allOf/0/properties/x/type"),
                ("/properties/y/type", "/allOf/1/properties/y/type"),
                ("/minProperties", "/allOf/2/minProperties"),
            ],
        );
    }

    #[test]
    fn nested_merges_are_undone_innermost_first() {
        // The root's allOf is merged at "", then its anyOf branch 1 with the rest at
        // "/anyOf/1": `not` there came from the root merge's second member.
        let outer = MergeSite {
            at: at(""),
            origins: [
                ("anyOf".to_string(), Some(at("/allOf/0/anyOf"))),
                ("not".to_string(), Some(at("/allOf/1/not"))),
            ]
            .into_iter()
            .collect(),
            combined_at: at("/allOf"),
        };
        let inner = MergeSite {
            at: at("/anyOf/1"),
            origins: [
                ("not".to_string(), Some(at("/not"))),
                ("type".to_string(), Some(at("/anyOf/1/type"))),
            ]
            .into_iter()
            .collect(),
            combined_at: at("/anyOf/1"),
        };
        let sites = [outer, inner];
        assert_leads(
            &sites,
            &[
                ("/anyOf/1/not", "/allOf/1/not"),
                ("/anyOf/1/type", "/allOf/0/anyOf/1/type"),
            ],
        );
    }
}
