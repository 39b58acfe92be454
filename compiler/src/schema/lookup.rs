//! Keyword lookups in schema objects, through one trait so that code which reads a
//! schema can also read a view that is not a JSON object (the first side of a merge while
//! the result is written over it, `merge::FirstSide`).

use serde_json::{Map, Value};

/// Looking up one member of a JSON object by name.
pub trait Lookup {
    /// The member called `name`, if any.
    fn kw(&self, name: &str) -> Option<&Value>;

    /// Is there a member called `name`?
    fn has(&self, name: &str) -> bool {
        self.kw(name).is_some()
    }
}

impl Lookup for Map<String, Value> {
    fn kw(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

impl Lookup for Value {
    fn kw(&self, name: &str) -> Option<&Value> {
        self.as_object().and_then(|map| map.kw(name))
    }
}
