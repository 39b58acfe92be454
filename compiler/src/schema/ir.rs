//! The typed schema: what a schema's keywords mean, read from JSON once by
//! [`super::read`] and lowered to grammar by the emitter.
//!
//! So far strings and numbers have their types here; objects, arrays and the
//! combinators are still read where they are lowered (issue 25 moves them next).

use serde_json::Number;

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
