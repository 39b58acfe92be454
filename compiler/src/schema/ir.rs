//! The typed schema: what a schema's keywords mean, read from JSON once by
//! [`super::read`] and lowered to grammar by the emitter.
//!
//! So far strings, numbers, arrays and objects have their types here; the combinators
//! are still read where they are lowered (issue 25 moves them next). Schemas inside
//! these types stay JSON ([`Subschema`]) until they are lowered in turn.

use serde_json::{Map, Number, Value};

use super::lookup::Lookup;

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

/// The keywords of `"type": "string"`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StringSchema {
    /// `minLength`, 0 when absent.
    pub min_length: u64,
    /// `maxLength`.
    pub max_length: Option<u64>,
    /// `pattern`, an ECMA-262 regular expression.
    pub pattern: Option<String>,
    /// `format`, when it is a string (other values are reported by the keyword check).
    pub format: Option<String>,
}

/// The keywords of `"type": "number"` and `"type": "integer"`, numbers exactly as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NumberSchema {
    /// `minimum`; absent when draft-04's `exclusiveMinimum: true` made it exclusive.
    pub minimum: Option<Number>,
    /// `exclusiveMinimum` (a number, or draft-04's `minimum` with `exclusiveMinimum: true`).
    pub exclusive_minimum: Option<Number>,
    /// `maximum`; absent when draft-04's `exclusiveMaximum: true` made it exclusive.
    pub maximum: Option<Number>,
    /// `exclusiveMaximum` (a number, or draft-04's `maximum` with `exclusiveMaximum: true`).
    pub exclusive_maximum: Option<Number>,
    /// `multipleOf`, above 0.
    pub multiple_of: Option<Number>,
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

/// A schema written inside another (an item's schema, say), and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Subschema<'s> {
    /// The schema, as written.
    pub schema: &'s Value,
    /// Where it was written.
    pub at: Location,
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
    /// `minItems`, 0 when absent.
    pub min_items: u64,
    /// `maxItems`.
    pub max_items: Option<u64>,
    /// `uniqueItems`, written with any value but `false`.
    pub unique_items: bool,
    /// `contains`.
    pub contains: Option<Subschema<'s>>,
}

/// Schemas by name, in the order written: `properties`, `patternProperties`.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyed<'s> {
    /// The names and their schemas (empty when the keyword is absent).
    map: Option<&'s Map<String, Value>>,
    /// Where the keyword was written.
    at: Location,
}

impl<'s> Keyed<'s> {
    /// The schemas of `map` (absent: none), a keyword written at `at`.
    pub fn new(map: Option<&'s Map<String, Value>>, at: Location) -> Self {
        Keyed { map, at }
    }

    /// Each name with its schema and where that was written, in the order written.
    pub fn iter(&self) -> impl Iterator<Item = (&'s str, Subschema<'s>)> + '_ {
        self.map.into_iter().flatten().map(|(name, schema)| {
            let at = self.at.child(name);
            (name.as_str(), Subschema { schema, at })
        })
    }

    /// The names, in the order written.
    pub fn names(&self) -> impl Iterator<Item = &'s str> {
        self.map
            .into_iter()
            .flat_map(|map| map.keys().map(String::as_str))
    }

    /// Whether `name` has a schema here.
    pub fn declares(&self, name: &str) -> bool {
        self.map.is_some_and(|map| map.has(name))
    }

    /// Whether no name has a schema.
    pub fn is_empty(&self) -> bool {
        self.map.is_none_or(Map::is_empty)
    }

    /// Whether the keyword was written.
    pub fn is_written(&self) -> bool {
        self.map.is_some()
    }
}

/// The keywords of `"type": "object"`.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectSchema<'s> {
    /// `properties`.
    pub properties: Keyed<'s>,
    /// `required`: its names (entries that are not strings require nothing).
    pub required: Vec<&'s str>,
    /// `additionalProperties`.
    pub additional: Option<Subschema<'s>>,
    /// `unevaluatedProperties`.
    pub unevaluated: Option<Subschema<'s>>,
    /// `patternProperties`, by pattern.
    pub pattern_properties: Keyed<'s>,
    /// `propertyNames`.
    pub property_names: Option<Subschema<'s>>,
    /// `minProperties`.
    pub min_properties: Option<u64>,
    /// `maxProperties`.
    pub max_properties: Option<u64>,
    /// Which of `dependentRequired`, `dependentSchemas` and draft-07's `dependencies` are
    /// written, in that order.
    pub dependencies: Vec<&'static str>,
    /// Whether a dependency is a schema (`dependentSchemas`, or a schema in
    /// `dependencies`): one that evaluates properties when it applies.
    pub dependent_schemas: bool,
}
