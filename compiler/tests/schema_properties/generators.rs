//! Generators of random schemas, one per keyword family, nested up to four deep.

use super::*;

type Kw = Map<String, Value>;

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn parse_map(text: &str) -> Kw {
    parse(text).as_object().cloned().unwrap()
}

fn pick(list: &'static [&'static str]) -> impl Strategy<Value = &'static str> + Clone {
    prop::sample::select(list)
}

fn maybe<S: Strategy>(p: f64, s: S) -> impl Strategy<Value = Option<S::Value>> {
    prop::option::weighted(p, s)
}

fn put(map: &mut Kw, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        map.insert(key.to_string(), value);
    }
}

fn typed(mut map: Kw, t: &str) -> Value {
    map.insert("type".to_string(), json!(t));
    Value::Object(map)
}

/// Keywords for strings: lengths (sometimes above 2000), `pattern`, `format`.
fn string_kw() -> BoxedStrategy<Kw> {
    let min = prop_oneof![9 => 0u64..6, 1 => 2001u64..2100];
    let max = prop_oneof![9 => 0u64..12, 1 => 2001u64..5000];
    // Mostly one kind of constraint: lengths beside a pattern or a format are enforced by
    // validation only.
    prop_oneof![
        2 => Just((None, None, None, None)),
        3 => (maybe(0.6, min.clone()), maybe(0.6, max.clone())).prop_map(|(a, b)| (a, b, None, None)),
        3 => pick(PATTERNS).prop_map(|p| (None, None, Some(p), None)),
        3 => pick(FORMATS).prop_map(|f| (None, None, None, Some(f))),
        1 => (
            maybe(0.3, min),
            maybe(0.3, max),
            maybe(0.5, pick(PATTERNS)),
            maybe(0.5, pick(FORMATS)),
        ),
    ]
        .prop_map(|(min, max, pattern, format)| {
            let mut m = Kw::new();
            put(&mut m, "minLength", min.map(Value::from));
            put(&mut m, "maxLength", max.map(Value::from));
            put(&mut m, "pattern", pattern.map(Value::from));
            put(&mut m, "format", format.map(Value::from));
            m
        })
        .boxed()
}

/// Keywords for numbers and integers: the four bounds and `multipleOf`.
fn number_kw() -> BoxedStrategy<Kw> {
    (
        maybe(0.35, pick(BOUNDS)),
        maybe(0.35, pick(BOUNDS)),
        maybe(0.2, pick(BOUNDS)),
        maybe(0.2, pick(BOUNDS)),
        maybe(0.3, pick(STEPS)),
    )
        .prop_map(|(min, max, xmin, xmax, step)| {
            let mut m = Kw::new();
            put(&mut m, "minimum", min.map(parse));
            put(&mut m, "maximum", max.map(parse));
            put(&mut m, "exclusiveMinimum", xmin.map(parse));
            put(&mut m, "exclusiveMaximum", xmax.map(parse));
            put(&mut m, "multipleOf", step.map(parse));
            m
        })
        .boxed()
}

/// Keywords for arrays, with `inner` for item schemas.
fn array_kw(inner: BoxedStrategy<Value>) -> BoxedStrategy<Kw> {
    (
        maybe(0.6, inner.clone()),
        maybe(0.25, prop::collection::vec(inner.clone(), 1..4)),
        maybe(0.3, 0u64..4),
        maybe(0.3, prop_oneof![9 => 0u64..6, 1 => 1990u64..3000]),
        maybe(0.1, any::<bool>()),
        maybe(0.07, inner),
    )
        .prop_map(|(items, prefix, min, max, unique, contains)| {
            let mut m = Kw::new();
            put(&mut m, "items", items);
            put(&mut m, "prefixItems", prefix.map(Value::Array));
            put(&mut m, "minItems", min.map(Value::from));
            put(&mut m, "maxItems", max.map(Value::from));
            put(&mut m, "uniqueItems", unique.map(Value::Bool));
            put(&mut m, "contains", contains);
            m
        })
        .boxed()
}

/// Keywords for objects, with `inner` for property schemas.
fn object_kw(inner: BoxedStrategy<Value>) -> BoxedStrategy<Kw> {
    (
        prop::collection::vec((pick(KEYS), inner.clone()), 0..4),
        prop::collection::vec(any::<bool>(), 4),
        maybe(0.15, pick(KEYS)),
        prop_oneof![
            3 => Just(None),
            1 => Just(Some(json!(true))),
            2 => Just(Some(json!(false))),
            1 => inner.clone().prop_map(Some),
        ],
        maybe(0.12, pick(PROPERTY_NAMES)),
        maybe(0.1, 0u64..4),
        maybe(0.1, 0u64..5),
        maybe(0.05, prop_oneof![Just(json!(false)), inner.clone()]),
        maybe(
            0.06,
            prop::collection::vec((pick(PATTERN_KEYS), inner), 1..3),
        ),
    )
        .prop_map(
            |(
                props,
                required_mask,
                extra_required,
                additional,
                names,
                min,
                max,
                unevaluated,
                patterns,
            )| {
                let mut properties = Kw::new();
                for (key, schema) in props {
                    properties.entry(key.to_string()).or_insert(schema);
                }
                let mut required: Vec<Value> = properties
                    .keys()
                    .zip(&required_mask)
                    .filter(|(_, r)| **r)
                    .map(|(k, _)| json!(k))
                    .collect();
                if let Some(name) = extra_required {
                    if !required.contains(&json!(name)) {
                        required.push(json!(name));
                    }
                }
                let mut m = Kw::new();
                if !properties.is_empty() {
                    m.insert("properties".to_string(), Value::Object(properties));
                }
                if !required.is_empty() {
                    m.insert("required".to_string(), Value::Array(required));
                }
                put(&mut m, "additionalProperties", additional);
                put(&mut m, "propertyNames", names.map(parse));
                put(&mut m, "minProperties", min.map(Value::from));
                put(&mut m, "maxProperties", max.map(Value::from));
                put(&mut m, "unevaluatedProperties", unevaluated);
                put(
                    &mut m,
                    "patternProperties",
                    patterns.map(|p| {
                        Value::Object(p.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                    }),
                );
                m
            },
        )
        .boxed()
}

/// Short item schemas for arrays of more than 2000 items (nested long arrays would
/// multiply into texts too long to sample).
const SMALL_ITEMS: &[&str] = &[
    r#"{"type": "null"}"#,
    r#"{"type": "boolean"}"#,
    r#"{"type": "integer", "minimum": 0, "maximum": 9}"#,
    r#"{"enum": [1, "a", null]}"#,
    r#"{"type": "string", "maxLength": 1}"#,
];

/// Arrays of more than 2000 short items: `minItems` above llama.cpp's repetition limit.
fn long_array() -> BoxedStrategy<Value> {
    (
        2001u64..2004,
        pick(SMALL_ITEMS),
        maybe(0.5, 2004u64..2100),
        maybe(0.2, any::<bool>()),
    )
        .prop_map(|(min, items, max, unique)| {
            let mut m = parse_map(r#"{"type": "array"}"#);
            m.insert("items".to_string(), parse(items));
            m.insert("minItems".to_string(), json!(min));
            put(&mut m, "maxItems", max.map(Value::from));
            put(&mut m, "uniqueItems", unique.map(Value::Bool));
            Value::Object(m)
        })
        .boxed()
}

/// Keys for `patternProperties`, some matching declared names from [`KEYS`].
const PATTERN_KEYS: &[&str] = &["^x", "^[0-9]+$", "b", "^(a|id)$", "é", "^[a-z]{1,3}$"];

/// An object with `patternProperties`, beside `properties`, `required`,
/// `additionalProperties`, `propertyNames` and property counts, over non-nested schemas:
/// where nothing is merged into it, so the patterns are enforced by the grammar.
fn pattern_object() -> BoxedStrategy<Value> {
    let leaf = scalar();
    (
        prop::collection::vec((pick(KEYS), leaf.clone()), 0..3),
        prop::collection::vec(any::<bool>(), 3),
        prop::collection::vec((pick(PATTERN_KEYS), leaf.clone()), 1..3),
        prop_oneof![
            2 => Just(None),
            1 => Just(Some(json!(true))),
            2 => Just(Some(json!(false))),
            1 => leaf.prop_map(Some),
        ],
        maybe(0.2, 0u64..3),
        maybe(0.2, 0u64..4),
        maybe(0.1, pick(PROPERTY_NAMES)),
    )
        .prop_map(
            |(props, required_mask, patterns, additional, min, max, names)| {
                let mut properties = Kw::new();
                for (key, schema) in props {
                    properties.entry(key.to_string()).or_insert(schema);
                }
                let required: Vec<Value> = properties
                    .keys()
                    .zip(&required_mask)
                    .filter(|(_, r)| **r)
                    .map(|(k, _)| json!(k))
                    .collect();
                let patterns: Kw = patterns
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect();
                let mut m = Kw::new();
                m.insert("type".to_string(), json!("object"));
                if !properties.is_empty() {
                    m.insert("properties".to_string(), Value::Object(properties));
                }
                if !required.is_empty() {
                    m.insert("required".to_string(), Value::Array(required));
                }
                m.insert("patternProperties".to_string(), Value::Object(patterns));
                put(&mut m, "additionalProperties", additional);
                put(&mut m, "minProperties", min.map(Value::from));
                put(&mut m, "maxProperties", max.map(Value::from));
                put(&mut m, "propertyNames", names.map(parse));
                Value::Object(m)
            },
        )
        .boxed()
}

/// The keywords of one type family (without `type`).
fn family_kw(kind: &str, inner: BoxedStrategy<Value>) -> BoxedStrategy<Kw> {
    match kind {
        "string" => string_kw(),
        "integer" | "number" => number_kw(),
        "array" => array_kw(inner),
        "object" => object_kw(inner),
        _ => Just(Kw::new()).boxed(),
    }
}

/// A schema of one type with that type's keywords.
fn typed_schema(kind: &'static str, inner: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    family_kw(kind, inner)
        .prop_map(move |m| typed(m, kind))
        .boxed()
}

/// Small JSON values for `enum`/`const`.
fn json_value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        pick(NUMBERS).prop_map(parse),
        pick(STRINGS).prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((pick(KEYS), inner), 0..3).prop_map(|members| {
                Value::Object(
                    members
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect(),
                )
            }),
        ]
    })
    .boxed()
}

/// 0–2 keyword sets from [`EXTRAS`], merged.
fn extras() -> impl Strategy<Value = Kw> {
    prop::collection::vec(pick(EXTRAS), 0..3).prop_map(|sets| {
        let mut m = Kw::new();
        for set in sets {
            m.extend(parse_map(set));
        }
        m
    })
}

/// `enum` or `const` (or both), beside other keywords.
fn literal() -> BoxedStrategy<Value> {
    (
        prop_oneof![
            3 => prop::collection::vec(json_value(), 1..5).prop_map(|v| ("enum", Value::Array(v))),
            2 => json_value().prop_map(|v| ("const", v)),
        ],
        maybe(0.1, json_value()),
        extras(),
    )
        .prop_map(|((key, value), both, mut m)| {
            m.insert(key.to_string(), value);
            if let (Some(c), "enum") = (both, key) {
                m.insert("const".to_string(), c);
            }
            Value::Object(m)
        })
        .boxed()
}

/// `not` with `type`, beside a type list and the families' keywords.
fn not_type() -> BoxedStrategy<Value> {
    (
        prop::sample::subsequence(KINDS.to_vec(), 1..3),
        maybe(0.6, prop::sample::subsequence(KINDS.to_vec(), 1..4)),
        string_kw(),
        number_kw(),
    )
        .prop_map(|(excluded, types, strings, numbers)| {
            let mut m = Kw::new();
            let excluded = if excluded.len() == 1 {
                json!(excluded[0])
            } else {
                json!(excluded)
            };
            m.insert("not".to_string(), json!({ "type": excluded }));
            if let Some(types) = types {
                if types.contains(&"string") {
                    m.extend(strings);
                }
                if types.contains(&"integer") || types.contains(&"number") {
                    m.extend(numbers);
                }
                m.insert("type".to_string(), json!(types));
            }
            Value::Object(m)
        })
        .boxed()
}

/// Schemas without `$ref`s or nesting.
fn scalar() -> BoxedStrategy<Value> {
    prop_oneof![
        1 => Just(json!({"type": "null"})),
        1 => Just(json!({"type": "boolean"})),
        4 => typed_schema("string", Just(json!(true)).boxed()),
        3 => typed_schema("integer", Just(json!(true)).boxed()),
        3 => typed_schema("number", Just(json!(true)).boxed()),
        3 => literal(),
        1 => not_type(),
        1 => prop_oneof![Just(json!(true)), Just(json!({})), Just(json!(false))],
        // A type list whose keywords belong to several families.
        2 => (string_kw(), number_kw(), prop::sample::subsequence(
                vec!["null", "boolean", "string", "integer", "number"], 2..4))
            .prop_map(|(s, n, types)| {
                let mut m = s;
                m.extend(n);
                m.insert("type".to_string(), json!(types));
                Value::Object(m)
            }),
    ]
    .boxed()
}

/// References to the definitions every generated document carries (for the root; `b`
/// refers to `a` only, so no definition reaches itself without consuming input).
fn reference() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(json!({"$ref": "#/$defs/a"})),
        Just(json!({"$ref": "#/$defs/b"})),
        Just(json!({"$ref": "#/$defs/tree"})),
        Just(json!({"$ref": "#/$defs/list"})),
        // Pointers into definitions.
        Just(json!({"$ref": "#/$defs/tree/properties/value"})),
        Just(json!({"$ref": "#/$defs/list/anyOf/1"})),
    ]
    .boxed()
}

/// Nested schemas (up to four deep) over `leaf`, with `refs` for `$ref`s with siblings,
/// and arrays of more than 2000 items if `long` (not in definitions, which may be
/// referenced from such arrays' items: the texts would multiply).
fn nested(
    leaf: BoxedStrategy<Value>,
    refs: BoxedStrategy<Value>,
    depth: u32,
    size: u32,
    long: bool,
) -> BoxedStrategy<Value> {
    leaf.prop_recursive(depth, size, 4, move |inner| {
        let kinds: Vec<&'static str> =
            vec!["null", "boolean", "string", "integer", "array", "object"];
        prop_oneof![
            4 => typed_schema("array", inner.clone()),
            // An object whose optional `self` is the whole document again.
            1 => object_kw(inner.clone()).prop_map(|mut m| {
                let properties = m.entry("properties").or_insert_with(|| json!({}));
                properties["self"] = json!({"$ref": "#"});
                typed(m, "object")
            }),
            1 => if long { long_array() } else { typed_schema("array", inner.clone()) },
            5 => typed_schema("object", inner.clone()),
            2 => prop::collection::vec(inner.clone(), 1..4)
                .prop_map(|v| json!({"anyOf": v})),
            // Overlapping branches.
            1 => prop::collection::vec(inner.clone(), 2..4)
                .prop_map(|v| json!({"oneOf": v})),
            // Branches disjoint by type.
            2 => {
                let inner = inner.clone();
                prop::sample::subsequence(kinds, 2..4).prop_flat_map(move |kinds| {
                    kinds
                        .into_iter()
                        .map(|k| typed_schema(k, inner.clone()))
                        .collect::<Vec<_>>()
                })
                .prop_map(|v| json!({"oneOf": v}))
            },
            // Objects told apart by a required `kind` with distinct constants.
            2 => prop::collection::vec(object_kw(inner.clone()), 2..4).prop_map(|maps| {
                let branches: Vec<Value> = maps
                    .into_iter()
                    .enumerate()
                    .map(|(i, mut m)| {
                        let mut properties = m
                            .remove("properties")
                            .and_then(|p| p.as_object().cloned())
                            .unwrap_or_default();
                        properties.insert("kind".to_string(), json!({"const": format!("k{i}")}));
                        let mut required = m
                            .remove("required")
                            .and_then(|r| r.as_array().cloned())
                            .unwrap_or_default();
                        required.push(json!("kind"));
                        m.insert("properties".to_string(), Value::Object(properties));
                        m.insert("required".to_string(), Value::Array(required));
                        typed(m, "object")
                    })
                    .collect();
                json!({"oneOf": branches})
            }),
            // Mergeable `allOf`: members of one family, the first with the type.
            3 => pick(KINDS).prop_flat_map({
                let inner = inner.clone();
                move |kind| {
                    (
                        family_kw(kind, inner.clone()),
                        family_kw(kind, inner.clone()),
                        any::<bool>(),
                    )
                        .prop_map(move |(a, b, both_typed)| {
                            let b = if both_typed { typed(b, kind) } else { Value::Object(b) };
                            json!({"allOf": [typed(a, kind), b]})
                        })
                }
            }),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({"allOf": [a, b]})),
            // Branches merged with sibling keywords of the same family.
            2 => pick(&["string", "integer", "number", "object", "array"]).prop_flat_map({
                let inner = inner.clone();
                move |kind| {
                    (
                        family_kw(kind, inner.clone()),
                        prop::collection::vec(family_kw(kind, inner.clone()), 1..4),
                        any::<bool>(),
                    )
                        .prop_map(move |(base, branches, one)| {
                            let key = if one { "oneOf" } else { "anyOf" };
                            let mut m = base;
                            m.insert("type".to_string(), json!(kind));
                            m.insert(
                                key.to_string(),
                                Value::Array(branches.into_iter().map(Value::Object).collect()),
                            );
                            Value::Object(m)
                        })
                }
            }),
            // A nullable or otherwise widened nested schema.
            2 => (pick(&["array", "object"]), pick(&["null", "string", "integer"]))
                .prop_flat_map({
                    let inner = inner.clone();
                    move |(kind, other)| {
                        family_kw(kind, inner.clone()).prop_map(move |mut m| {
                            m.insert("type".to_string(), json!([kind, other]));
                            Value::Object(m)
                        })
                    }
                }),
            // `$ref` with sibling keywords.
            2 => (refs.clone(), extras()).prop_map(|(r, extra)| {
                let mut m = r.as_object().cloned().unwrap();
                m.extend(extra);
                Value::Object(m)
            }),
        ]
    })
    .boxed()
}

/// A whole document: a root schema and the `$defs` it may refer to.
pub(super) fn document() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![8 => scalar(), 2 => reference()].boxed();
    (
        prop_oneof![
            30 => nested(leaf, reference(), 4, 24, true),
            // patternProperties at the root, where nothing is merged into it.
            3 => pattern_object(),
            // A cycle with no base case, reached where the value must have it.
            1 => Just(json!({"$ref": "#/$defs/loop"})),
            1 => Just(json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/loop"}}, "required": ["p"]})),
            // ... and where it may be left out: `{}` is valid.
            1 => Just(json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/loop"}}})),
            1 => Just(json!({"anyOf": [{"type": "null"}, {"$ref": "#/$defs/loop"}]})),
        ],
        scalar(),
        nested(
            prop_oneof![Just(json!({"$ref": "#/$defs/a"})), scalar()].boxed(),
            Just(json!({"$ref": "#/$defs/a"})).boxed(),
            2,
            6,
            false,
        ),
        scalar(),
        any::<bool>(),
        maybe(0.7, 1u64..4),
    )
        .prop_map(|(body, a, b, value, children_required, max_children)| {
            let mut children = json!({"type": "array", "items": {"$ref": "#/$defs/tree"}});
            if let Some(max) = max_children {
                children["maxItems"] = json!(max);
            }
            let mut tree_required = vec![json!("value")];
            if children_required {
                tree_required.push(json!("children"));
            }
            let defs = json!({
                "a": a,
                "b": b,
                // A tree node: its children are nodes; an empty `children` ends it.
                "tree": {
                    "type": "object",
                    "properties": {"value": value.clone(), "children": children},
                    "required": tree_required,
                    "additionalProperties": false
                },
                // A linked list: `null` ends it.
                "list": {"anyOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "properties": {"head": value, "tail": {"$ref": "#/$defs/list"}},
                        "required": ["head", "tail"],
                        "additionalProperties": false
                    }
                ]},
                // No base case: every value needs another.
                "loop": {
                    "type": "object",
                    "properties": {"next": {"$ref": "#/$defs/loop"}},
                    "required": ["next"]
                }
            });
            let mut root = match body {
                Value::Object(m) => m,
                Value::Bool(true) => Kw::new(),
                _ => parse_map(r#"{"not": {}}"#),
            };
            // Only the definitions the document reaches (for readable failures).
            let mut reached: Vec<&str> = Vec::new();
            let mut text = serde_json::to_string(&root).unwrap();
            loop {
                let next = ["a", "b", "tree", "list", "loop"].into_iter().find(|name| {
                    !reached.contains(name)
                        && (text.contains(&format!("\"#/$defs/{name}\""))
                            || text.contains(&format!("\"#/$defs/{name}/")))
                });
                let Some(name) = next else { break };
                reached.push(name);
                text.push_str(&defs[name].to_string());
            }
            if let Value::Object(all) = defs {
                let kept: Kw = all
                    .into_iter()
                    .filter(|(name, _)| reached.contains(&name.as_str()))
                    .collect();
                if !kept.is_empty() {
                    root.insert("$defs".to_string(), Value::Object(kept));
                }
            }
            Value::Object(root)
        })
        .boxed()
}
