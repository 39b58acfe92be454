//! Keyword lookups in schema objects without hashing.
//!
//! serde_json keeps an object's members in an `IndexMap` hashed with SipHash, so every
//! `map.get("type")` hashes the name. A schema object has a handful of keywords and the
//! compiler asks for dozens of them, so comparing names one by one is several times
//! cheaper; large objects (a `properties` map, say) still use the hash.

use serde_json::{Map, Value};

/// Objects with at most this many members are searched member by member.
const LINEAR_UP_TO: usize = 16;

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
        if self.len() <= LINEAR_UP_TO {
            self.iter()
                .find(|(key, _)| key.as_str() == name)
                .map(|(_, v)| v)
        } else {
            self.get(name)
        }
    }
}

impl Lookup for Value {
    fn kw(&self, name: &str) -> Option<&Value> {
        self.as_object().and_then(|map| map.kw(name))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::Lookup;

    #[test]
    fn small_and_large_objects_find_the_same_members() {
        let small = json!({"type": "string", "minLength": 2});
        assert_eq!(small.kw("minLength"), Some(&json!(2)));
        assert!(small.has("type") && !small.has("maxLength"));
        let mut large = serde_json::Map::new();
        for i in 0..40 {
            large.insert(format!("k{i}"), json!(i));
        }
        assert_eq!(large.kw("k39"), Some(&json!(39)));
        assert_eq!(large.kw("k40"), None);
        assert_eq!(json!([1]).kw("k"), None);
    }
}
