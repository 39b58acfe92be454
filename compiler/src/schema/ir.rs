//! The typed schema: what a schema's keywords mean, read from JSON once by
//! [`super::read`] and lowered to grammar by the emitter.
//!
//! A schema without combinators is a [`PlainSchema`]: its types, `enum`/`const`, `not`,
//! and the keywords of each type. `$ref`, `allOf`, `anyOf` and `oneOf` are still read
//! where they are lowered (issue 25 moves them next). Schemas inside these types stay
//! JSON ([`Subschema`]) until they are lowered in turn.

use serde_json::{Map, Number, Value};

use super::document::Location;

/// A keyword whose value has the wrong shape (`"minLength": -1`, `"pattern": 3`): the
/// location of the value and what it must be. The emitter names the location as the user
/// wrote it (through `allOf` merges) when it turns this into a compile error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError {
    /// Where the bad value is.
    pub at: Location,
    /// What the keyword must be.
    pub message: String,
}

/// A keyword's value, and where the user wrote it: diagnostics about the keyword name
/// that place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written<T> {
    /// The value, read.
    pub value: T,
    /// Where the keyword was written.
    pub at: Location,
}

/// The value of an optional count keyword (`minLength`, `maxItems`, …), if written.
pub fn count(keyword: &Option<Written<u64>>) -> Option<u64> {
    keyword.as_ref().map(|written| written.value)
}

/// The keywords of `"type": "string"`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StringSchema {
    /// `minLength`.
    pub min_length: Option<Written<u64>>,
    /// `maxLength`.
    pub max_length: Option<Written<u64>>,
    /// `pattern`, an ECMA-262 regular expression.
    pub pattern: Option<Written<String>>,
    /// `format`, when it is a string (other values are reported by the keyword check).
    pub format: Option<Written<String>>,
}

impl StringSchema {
    /// The least length, 0 when `minLength` is absent.
    pub fn min_length(&self) -> u64 {
        count(&self.min_length).unwrap_or(0)
    }
}

/// The keywords of `"type": "number"` and `"type": "integer"`, numbers exactly as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NumberSchema {
    /// `minimum`; absent when draft-04's `exclusiveMinimum: true` made it exclusive.
    pub minimum: Option<Written<Number>>,
    /// `exclusiveMinimum` (a number, or draft-04's `minimum` with `exclusiveMinimum: true`,
    /// written where the `minimum` is).
    pub exclusive_minimum: Option<Written<Number>>,
    /// `maximum`; absent when draft-04's `exclusiveMaximum: true` made it exclusive.
    pub maximum: Option<Written<Number>>,
    /// `exclusiveMaximum` (a number, or draft-04's `maximum` with `exclusiveMaximum: true`,
    /// written where the `maximum` is).
    pub exclusive_maximum: Option<Written<Number>>,
    /// `multipleOf`, above 0.
    pub multiple_of: Option<Written<Number>>,
}

impl NumberSchema {
    /// Whether any bound is set.
    pub fn bounded(&self) -> bool {
        self.minimum.is_some()
            || self.maximum.is_some()
            || self.exclusive_minimum.is_some()
            || self.exclusive_maximum.is_some()
    }
}

/// A schema written inside another (an item's schema, say), with where it was written; or
/// several such schemas that must all hold, where an intersection met two schemas for the
/// same place.
#[derive(Debug, Clone, PartialEq)]
pub enum Subschema<'s> {
    /// One schema, as written.
    One(Written<&'s Value>),
    /// Two or more schemas, each as written; a value must satisfy all of them.
    All(Vec<Written<&'s Value>>),
}

impl<'s> Subschema<'s> {
    /// The schema `schema`, written at `at`.
    pub fn written(schema: &'s Value, at: Location) -> Self {
        Subschema::One(Written { value: schema, at })
    }

    /// The schemas that must all hold, each with its place.
    pub fn members(&self) -> &[Written<&'s Value>] {
        match self {
            Subschema::One(one) => std::slice::from_ref(one),
            Subschema::All(all) => all,
        }
    }

    /// Where the (first) schema was written: the place diagnostics about it name.
    pub fn place(&self) -> &Location {
        &self.members()[0].at
    }

    /// Whether the schema restricts anything (some member is not `true`).
    pub fn restricts(&self) -> bool {
        self.members().iter().any(|m| m.value != &Value::Bool(true))
    }

    /// Whether the schema is `false` (some member is).
    pub fn is_false(&self) -> bool {
        self.members()
            .iter()
            .any(|m| m.value == &Value::Bool(false))
    }

    /// Values valid under both: `true` members are left out (unless both are `true`).
    pub fn and(self, other: Subschema<'s>) -> Subschema<'s> {
        if !other.restricts() {
            return self;
        }
        if !self.restricts() {
            return other;
        }
        let mut all = match self {
            Subschema::One(one) => vec![one],
            Subschema::All(all) => all,
        };
        all.extend(other.members().iter().cloned());
        Subschema::All(all)
    }
}

/// The keywords of `"type": "array"`, draft-07's spellings read as 2020-12's.
#[derive(Debug, Clone, PartialEq)]
pub struct ArraySchema<'s> {
    /// The positional item schemas: `prefixItems`, or draft-07's array-form `items`.
    pub prefix: Vec<Subschema<'s>>,
    /// The keyword the positional schemas were written under.
    pub prefix_at: Location,
    /// The schema of every item after them: `items`, or draft-07's `additionalItems`
    /// beside an array-form `items`.
    pub items: Option<Subschema<'s>>,
    /// `unevaluatedItems`.
    pub unevaluated: Option<Subschema<'s>>,
    /// `minItems`.
    pub min_items: Option<Written<u64>>,
    /// `maxItems`.
    pub max_items: Option<Written<u64>>,
    /// Where `uniqueItems` is written, with any value but `false`.
    pub unique_items: Option<Location>,
    /// `contains`.
    pub contains: Option<Subschema<'s>>,
}

impl ArraySchema<'_> {
    /// The least number of items, 0 when `minItems` is absent.
    pub fn min_items(&self) -> u64 {
        count(&self.min_items).unwrap_or(0)
    }
}

/// Schemas by name, in the order written: `properties`, `patternProperties`.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyed<'s> {
    /// The names and their schemas.
    entries: Entries<'s>,
    /// Where the keyword was written.
    at: Location,
}

/// The names and schemas of a [`Keyed`]: as written (looked up in the JSON map), or as an
/// intersection made them.
#[derive(Debug, Clone, PartialEq)]
enum Entries<'s> {
    /// The keyword's map, `None` when it is absent.
    Written(Option<&'s Map<String, Value>>),
    /// The names in order, each with the schemas it must satisfy.
    Merged(Vec<(&'s str, Subschema<'s>)>),
}

impl<'s> Keyed<'s> {
    /// The schemas of `map` (absent: none), a keyword written at `at`.
    pub fn new(map: Option<&'s Map<String, Value>>, at: Location) -> Self {
        Keyed {
            entries: Entries::Written(map),
            at,
        }
    }

    /// Schemas by name made by an intersection, with the place of the first side's keyword.
    pub fn merged(entries: Vec<(&'s str, Subschema<'s>)>, at: Location) -> Self {
        Keyed {
            entries: Entries::Merged(entries),
            at,
        }
    }

    /// Each name with its schema (and where that was written), in order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = (&'s str, Subschema<'s>)> + '_> {
        match &self.entries {
            Entries::Written(map) => {
                Box::new(map.iter().flat_map(|map| map.iter()).map(|(name, schema)| {
                    let at = self.at.child(name);
                    (name.as_str(), Subschema::written(schema, at))
                }))
            }
            Entries::Merged(entries) => Box::new(entries.iter().cloned()),
        }
    }

    /// The names, in order.
    pub fn names(&self) -> Box<dyn Iterator<Item = &'s str> + '_> {
        match &self.entries {
            Entries::Written(map) => {
                Box::new(map.iter().flat_map(|map| map.keys().map(String::as_str)))
            }
            Entries::Merged(entries) => Box::new(entries.iter().map(|(name, _)| *name)),
        }
    }

    /// The schema of `name`, if it has one here.
    pub fn get(&self, name: &str) -> Option<Subschema<'s>> {
        match &self.entries {
            Entries::Written(map) => {
                let schema = map.and_then(|map| map.get(name))?;
                Some(Subschema::written(schema, self.at.child(name)))
            }
            Entries::Merged(entries) => entries
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, schema)| schema.clone()),
        }
    }

    /// Whether `name` has a schema here.
    pub fn declares(&self, name: &str) -> bool {
        match &self.entries {
            Entries::Written(map) => map.is_some_and(|map| map.contains_key(name)),
            Entries::Merged(entries) => entries.iter().any(|(n, _)| *n == name),
        }
    }

    /// Whether no name has a schema.
    pub fn is_empty(&self) -> bool {
        match &self.entries {
            Entries::Written(map) => map.is_none_or(Map::is_empty),
            Entries::Merged(entries) => entries.is_empty(),
        }
    }

    /// Where the keyword was written (or would be, when it is absent).
    pub fn at(&self) -> &Location {
        &self.at
    }

    /// Whether the keyword was written.
    pub fn is_written(&self) -> bool {
        !matches!(self.entries, Entries::Written(None))
    }
}

/// The keywords of `"type": "object"`.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectSchema<'s> {
    /// `properties`.
    pub properties: Keyed<'s>,
    /// `required`: its names, each with the place of its keyword (entries that are not
    /// strings require nothing).
    pub required: Vec<Written<&'s str>>,
    /// `additionalProperties`.
    pub additional: Option<Subschema<'s>>,
    /// `unevaluatedProperties`.
    pub unevaluated: Option<Subschema<'s>>,
    /// `patternProperties`, by pattern.
    pub pattern_properties: Keyed<'s>,
    /// `propertyNames`.
    pub property_names: Option<Subschema<'s>>,
    /// `minProperties`.
    pub min_properties: Option<Written<u64>>,
    /// `maxProperties`.
    pub max_properties: Option<Written<u64>>,
    /// Which of `dependentRequired`, `dependentSchemas` and draft-07's `dependencies` are
    /// written (the keyword and its place), in that order, each with its entries as the
    /// grammar can keep them.
    pub dependencies: Vec<Written<Demands<'s>>>,
    /// Whether a dependency is a schema (`dependentSchemas`, or a schema in
    /// `dependencies`): one that evaluates properties when it applies.
    pub dependent_schemas: bool,
}

/// The entries of one dependency keyword, each a [`Dependency`]; `entries` is `None`
/// when some entry asks more than names present or absent (a schema with other keywords).
#[derive(Debug, Clone, PartialEq)]
pub struct Demands<'s> {
    /// `dependentRequired`, `dependentSchemas` or `dependencies`.
    pub keyword: &'static str,
    /// Its entries, when every one is a [`Dependency`].
    pub entries: Option<Vec<Dependency<'s>>>,
}

/// What one dependency entry demands when `key` is present: the names that must be
/// present too, and those that must be absent (`{"not": {"required": [name]}}`).
#[derive(Debug, Clone, PartialEq)]
pub struct Dependency<'s> {
    /// The property whose presence the entry is about.
    pub key: &'s str,
    /// Names that must be present beside it.
    pub present: Vec<&'s str>,
    /// Names that must be absent beside it.
    pub absent: Vec<&'s str>,
}

impl ObjectSchema<'_> {
    /// The declared property names in the order the grammar writes them: as declared.
    pub fn key_order(&self) -> Vec<String> {
        self.properties.names().map(str::to_string).collect()
    }
}

/// A JSON type, as `type` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// An object.
    Object,
    /// An array.
    Array,
    /// Any number.
    Number,
    /// A number with no fraction.
    Integer,
    /// A string.
    String,
}

impl JsonType {
    /// Every type, in the order the grammar lists their alternatives.
    pub const ALL: [JsonType; 7] = [
        JsonType::Null,
        JsonType::Boolean,
        JsonType::Object,
        JsonType::Array,
        JsonType::Number,
        JsonType::Integer,
        JsonType::String,
    ];

    /// The type called `name` in `type`.
    pub fn named(name: &str) -> Option<JsonType> {
        JsonType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The type's name in `type`.
    pub fn name(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "boolean",
            JsonType::Object => "object",
            JsonType::Array => "array",
            JsonType::Number => "number",
            JsonType::Integer => "integer",
            JsonType::String => "string",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// The types a schema allows, `integer` left out when `number` is in (every integer is a
/// number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Types(u8);

impl Types {
    /// Every type (no `type` keyword).
    pub fn all() -> Types {
        Types::of(JsonType::ALL)
    }

    /// The types listed.
    pub fn of(types: impl IntoIterator<Item = JsonType>) -> Types {
        let mut set = Types(types.into_iter().fold(0, |bits, t| bits | t.bit()));
        set.normalize();
        set
    }

    /// Whether `t` is allowed as listed (`integer` is not, beside `number`).
    pub fn contains(self, t: JsonType) -> bool {
        self.0 & t.bit() != 0
    }

    /// Whether a value of type `t` is allowed (an integer is, beside `number`).
    pub fn admits(self, t: JsonType) -> bool {
        self.contains(t) || (t == JsonType::Integer && self.contains(JsonType::Number))
    }

    /// The allowed types, in [`JsonType::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = JsonType> {
        JsonType::ALL.into_iter().filter(move |t| self.contains(*t))
    }

    /// How many types are allowed.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether no type is allowed.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The types allowed by both: an integer is a number, so `number` beside `integer`
    /// allows integers.
    pub fn intersect(self, other: Types) -> Types {
        let integral = (self.contains(JsonType::Number) && other.contains(JsonType::Integer))
            || (self.contains(JsonType::Integer) && other.contains(JsonType::Number));
        let mut both = Types(self.0 & other.0);
        if integral {
            both.0 |= JsonType::Integer.bit();
        }
        both.normalize();
        both
    }

    /// These types without `other`'s: without `number`, integers go too.
    pub fn remove(&mut self, other: Types) {
        if other.contains(JsonType::Number) {
            self.0 &= !JsonType::Integer.bit();
        }
        self.0 &= !other.0;
    }

    fn normalize(&mut self) {
        if self.contains(JsonType::Number) {
            self.0 &= !JsonType::Integer.bit();
        }
    }
}

/// The values `enum` and `const` allow (see [`super::read::literals`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Literals<'s> {
    /// The values, as written.
    pub values: Vec<&'s Value>,
    /// The keyword that lists them, `enum` when it is written, and its place.
    pub keyword: Written<&'static str>,
}

/// A schema object without `$ref`, `allOf`, `anyOf` and `oneOf`: what it allows of
/// each type.
#[derive(Debug, Clone, PartialEq)]
pub struct PlainSchema<'s> {
    /// `type`.
    pub types: Types,
    /// `enum` and `const`, when either is written.
    pub literals: Option<Literals<'s>>,
    /// `not`: the schemas no value may satisfy (one as read; an intersection may add more).
    pub not: Vec<Written<&'s Value>>,
    /// Where `if` is written, if it is.
    pub if_at: Option<Location>,
    /// Whether `if` is written with `then` or `else`.
    pub conditional: bool,
    /// The string keywords.
    pub string: StringSchema,
    /// The number keywords.
    pub number: NumberSchema,
    /// The array keywords.
    pub array: ArraySchema<'s>,
    /// The object keywords.
    pub object: ObjectSchema<'s>,
}
