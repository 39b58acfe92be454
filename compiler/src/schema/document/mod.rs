//! The schema documents: the input (unwrapped from an OpenAI `response_format` if need
//! be), remote documents fetched through the caller's resolver, and the index that
//! resolves `$ref` — `$id` base URIs, `$anchor`s and JSON pointers (with `~0`, `~1` and
//! percent-escapes).

use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

use super::{CompileError, RemoteResolver};

mod uri;

use uri::{descend, percent_decode, split_fragment, strip_fragment};
pub use uri::{escape_token, join, unescape_token};

/// The deepest nesting of subschemas indexed.
pub const MAX_DEPTH: usize = 512;

/// The base URI given to a document without `$id`.
const DEFAULT_BASE: &str = "gbnfc:/schema.json";

/// A place in one of the documents: which document, and the JSON pointer inside it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// Index into the loaded documents (0 is the input).
    pub doc: usize,
    /// JSON pointer from that document's root.
    pub pointer: String,
}

impl Location {
    /// The location of `key` inside this one.
    pub fn child(&self, key: &str) -> Location {
        self.descendant(&[key])
    }

    /// The location of `key` inside `parent` inside this one (one string built, not two).
    pub fn grandchild(&self, parent: &str, key: &str) -> Location {
        self.descendant(&[parent, key])
    }

    /// The location `keys` lead to from this one, one level each.
    fn descendant(&self, keys: &[&str]) -> Location {
        let extra: usize = keys.iter().map(|k| k.len() + 1).sum();
        let mut pointer = String::with_capacity(self.pointer.len() + extra);
        pointer.push_str(&self.pointer);
        for key in keys {
            pointer.push('/');
            pointer.push_str(&escape_token(key));
        }
        Location {
            doc: self.doc,
            pointer,
        }
    }

    /// The location of item `index` inside this one.
    pub fn index(&self, index: usize) -> Location {
        let mut pointer = String::with_capacity(self.pointer.len() + 4);
        pointer.push_str(&self.pointer);
        pointer.push('/');
        crate::gbnf::push_number(&mut pointer, index as u64);
        Location {
            doc: self.doc,
            pointer,
        }
    }

    /// How to name this place in a message: the pointer (handed over, not copied),
    /// prefixed with the document's URI when it is not the input.
    pub fn into_description(self, document: &Document) -> String {
        if self.doc == 0 {
            return self.pointer;
        }
        let uri = document
            .docs
            .borrow()
            .get(self.doc)
            .map(|d| d.uri.clone())
            .unwrap_or_default();
        format!("{uri}#{}", self.pointer)
    }
}

struct Loaded<'r> {
    uri: String,
    value: Source<'r>,
}

/// A whole document: the caller's input, borrowed, or one made or fetched while
/// compiling, shared.
#[derive(Clone)]
pub enum Source<'r> {
    /// The schema the caller passed in (or a part of it).
    Input(&'r Value),
    /// A document gbnfc made (`json_object`) or the resolver returned.
    Loaded(Rc<Value>),
}

impl std::ops::Deref for Source<'_> {
    type Target = Value;

    fn deref(&self) -> &Value {
        match self {
            Source::Input(value) => value,
            Source::Loaded(value) => value,
        }
    }
}

/// All documents and the index over them.
pub struct Document<'r> {
    docs: RefCell<Vec<Loaded<'r>>>,
    /// Absolute URI (no fragment) → location of the resource.
    resources: RefCell<HashMap<String, Location>>,
    /// (resource URI, anchor name) → location.
    anchors: RefCell<HashMap<(String, String), Location>>,
    /// Location pointer → base URI in force there (for schemas with `$id`).
    bases: RefCell<HashMap<Location, String>>,
    remote: Option<RemoteResolver<'r>>,
    /// `strict: true` came with an OpenAI `response_format`.
    pub openai_strict: bool,
    /// The root declares draft-03 or draft-04, where `1.0` is not an integer and `id` (not
    /// `$id`) sets a base URI (in later drafts `id` is no keyword).
    pub draft4_or_older: bool,
    /// The root declares draft-07 or older, where the keywords beside a `$ref` are
    /// ignored; from 2019-09 on they apply together with the reference.
    pub ref_overrides_siblings: bool,
}

impl<'r> Document<'r> {
    /// Reads the input: a schema, a boolean schema, or an OpenAI `response_format`.
    ///
    /// # Errors
    /// A `response_format` of an unknown type, or a schema nested too deeply.
    pub fn from_input(
        input: &'r Value,
        remote: Option<RemoteResolver<'r>>,
    ) -> Result<Self, CompileError> {
        let (schema, openai_strict) = unwrap_response_format(input)?;
        let declared = schema.get("$schema").and_then(Value::as_str).unwrap_or("");
        let draft4_or_older = declared.contains("draft-04") || declared.contains("draft-03");
        let draft7_or_older =
            draft4_or_older || declared.contains("draft-06") || declared.contains("draft-07");
        let document = Document {
            draft4_or_older,
            ref_overrides_siblings: draft7_or_older,
            docs: RefCell::new(Vec::new()),
            resources: RefCell::new(HashMap::default()),
            anchors: RefCell::new(HashMap::default()),
            bases: RefCell::new(HashMap::default()),
            remote,
            openai_strict,
        };
        document.load(DEFAULT_BASE.to_string(), schema)?;
        Ok(document)
    }

    /// The root of the input schema.
    pub fn root(&self) -> Location {
        Location {
            doc: 0,
            pointer: String::new(),
        }
    }

    /// The schema at `location` (cloned: documents may grow while compiling).
    pub fn get(&self, location: &Location) -> Option<Value> {
        let source = self.source(location)?;
        at(&source, location).cloned()
    }

    /// The whole document `location` points into (shared, not copied); [`at`] finds the
    /// schema inside it.
    pub fn source(&self, location: &Location) -> Option<Source<'r>> {
        self.docs
            .borrow()
            .get(location.doc)
            .map(|d| d.value.clone())
    }

    fn load(&self, uri: String, value: Source<'r>) -> Result<usize, CompileError> {
        let doc = self.docs.borrow().len();
        self.docs.borrow_mut().push(Loaded {
            uri: uri.clone(),
            value: value.clone(),
        });
        let root = Location {
            doc,
            pointer: String::new(),
        };
        self.resources
            .borrow_mut()
            .insert(strip_fragment(&uri), root.clone());
        if may_name_places(&value) {
            self.index(&value, &root, &uri, 0)?;
        }
        Ok(doc)
    }

    /// Records that `anchor` names `at` in `resource`. A name is unique within a resource
    /// (one schema may carry it as both `$anchor` and `$dynamicAnchor`): validators differ
    /// on which of two places a repeated one means, so no grammar can follow them all.
    fn add_anchor(&self, resource: &str, anchor: &str, at: &Location) -> Result<(), CompileError> {
        let mut anchors = self.anchors.borrow_mut();
        let key = (resource.to_string(), anchor.to_string());
        match anchors.get(&key) {
            Some(first) if first != at => Err(CompileError::Invalid {
                pointer: at.pointer.clone(),
                message: format!(
                    "the anchor `{anchor}` is already defined at `#{}` in the same resource \
                     (`{resource}`); anchors must be unique within a resource: rename one, or \
                     give one of the subschemas its own `$id`",
                    first.pointer
                ),
            }),
            Some(_) => Ok(()),
            None => {
                anchors.insert(key, at.clone());
                Ok(())
            }
        }
    }

    /// Records `$id`s and anchors below `value`, iteratively per level.
    fn index(
        &self,
        value: &Value,
        at: &Location,
        base: &str,
        depth: usize,
    ) -> Result<(), CompileError> {
        if depth > MAX_DEPTH {
            return Err(CompileError::TooLarge {
                pointer: at.pointer.clone(),
                message: format!("subschemas nested more than {MAX_DEPTH} deep"),
            });
        }
        let Value::Object(map) = value else {
            return Ok(());
        };
        let mut base = Cow::Borrowed(base);
        let id = map
            .get("$id")
            .or_else(|| {
                map.get("id")
                    .filter(|_| self.draft4_or_older && !map.contains_key("$ref"))
            })
            .and_then(Value::as_str);
        if let Some(id) = id {
            let joined = join(&base, id);
            let (resource, fragment) = split_fragment(&joined);
            if !resource.is_empty() && resource != strip_fragment(&base) || depth == 0 {
                self.resources
                    .borrow_mut()
                    .entry(resource.to_string())
                    .or_insert_with(|| at.clone());
            }
            if let Some(fragment) = fragment.filter(|f| !f.is_empty() && !f.starts_with('/')) {
                self.add_anchor(resource, fragment, at)?;
            }
            base = Cow::Owned(resource.to_string());
            self.bases.borrow_mut().insert(at.clone(), base.to_string());
        }
        for key in ["$anchor", "$dynamicAnchor"] {
            if let Some(anchor) = map.get(key).and_then(Value::as_str) {
                self.add_anchor(&strip_fragment(&base), anchor, at)?;
            }
        }
        for (key, child) in map {
            let here = || at.child(key);
            match key.as_str() {
                "$defs" | "definitions" | "properties" | "patternProperties"
                | "dependentSchemas" => {
                    if let Value::Object(children) = child {
                        let here = here();
                        for (name, sub) in children {
                            self.index(sub, &here.child(name), &base, depth + 1)?;
                        }
                    }
                }
                "dependencies" => {
                    if let Value::Object(children) = child {
                        let here = here();
                        for (name, sub) in children.iter().filter(|(_, s)| s.is_object()) {
                            self.index(sub, &here.child(name), &base, depth + 1)?;
                        }
                    }
                }
                "allOf" | "anyOf" | "oneOf" | "prefixItems" | "items" => match child {
                    Value::Array(items) => {
                        let here = here();
                        for (i, sub) in items.iter().enumerate() {
                            self.index(sub, &here.index(i), &base, depth + 1)?;
                        }
                    }
                    other => self.index(other, &here(), &base, depth + 1)?,
                },
                "additionalItems"
                | "additionalProperties"
                | "contains"
                | "propertyNames"
                | "not"
                | "if"
                | "then"
                | "else"
                | "unevaluatedItems"
                | "unevaluatedProperties" => {
                    self.index(child, &here(), &base, depth + 1)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Whether a `#…` reference names the same place wherever it is written: one
    /// document so far, and no `$id` in it (every schema has the same base URI).
    pub fn fragments_are_global(&self) -> bool {
        self.docs.borrow().len() == 1 && self.bases.borrow().is_empty()
    }

    /// The base URI in force at `location`.
    fn base_at(&self, location: &Location) -> String {
        let bases = self.bases.borrow();
        if !bases.is_empty() {
            let mut probe = location.clone();
            loop {
                if let Some(base) = bases.get(&probe) {
                    return base.clone();
                }
                match probe.pointer.rfind('/') {
                    Some(cut) => probe.pointer.truncate(cut),
                    None => break,
                }
            }
        }
        self.docs
            .borrow()
            .get(location.doc)
            .map(|d| strip_fragment(&d.uri))
            .unwrap_or_default()
    }

    /// An absolute URI for `location`, resolvable from anywhere in the documents.
    pub fn absolute_uri(&self, location: &Location) -> String {
        let uri = self
            .docs
            .borrow()
            .get(location.doc)
            .map(|d| strip_fragment(&d.uri))
            .unwrap_or_default();
        let fragment = location.pointer.replace('%', "%25").replace('#', "%23");
        format!("{uri}#{fragment}")
    }

    /// Resolves the `$ref` value `reference` written at `from` (the schema holding it).
    ///
    /// # Errors
    /// [`CompileError::Unresolved`] naming the reference and what was tried.
    pub fn resolve(&self, from: &Location, reference: &str) -> Result<Location, CompileError> {
        let unresolved = |message: String| CompileError::Unresolved {
            pointer: from.child("$ref").pointer,
            reference: reference.to_string(),
            message,
        };
        let location = match self.same_document_place(from, reference) {
            Some(location) => location,
            None => self.resolve_uri(from, reference, &unresolved)?,
        };
        if self
            .source(&location)
            .is_none_or(|source| at(&source, &location).is_none())
        {
            return Err(unresolved(format!(
                "nothing at `{}`",
                location.into_description(self)
            )));
        }
        Ok(location)
    }

    /// Where no `$id` sets a base URI, a `#` or `#/…` reference names a place in the
    /// document it is written in (what [`Document::resolve_uri`] finds, without building
    /// and looking up the document's URI).
    fn same_document_place(&self, from: &Location, reference: &str) -> Option<Location> {
        let fragment = reference.strip_prefix('#')?;
        if !self.bases.borrow().is_empty() {
            return None;
        }
        let fragment = percent_decode(fragment);
        (fragment.is_empty() || fragment.starts_with('/')).then(|| Location {
            doc: from.doc,
            pointer: fragment.into_owned(),
        })
    }

    /// The place `reference` names from `from`, through base URIs, the documents loaded
    /// (loading one through the resolver if need be) and anchors; not yet checked to
    /// hold a schema.
    fn resolve_uri(
        &self,
        from: &Location,
        reference: &str,
        unresolved: &impl Fn(String) -> CompileError,
    ) -> Result<Location, CompileError> {
        let base = self.base_at(from);
        let target;
        let (resource, fragment) = match reference.strip_prefix('#') {
            // A fragment alone names a place in the base's own resource.
            Some(fragment) => (split_fragment(&base).0, Some(fragment)),
            None => {
                target = join(&base, reference);
                split_fragment(&target)
            }
        };
        let known = self.resources.borrow().get(resource).cloned();
        let root = match known {
            Some(root) => root,
            None => {
                let Some(fetch) = self.remote else {
                    return Err(unresolved(format!(
                        "`{resource}` is another document; gbnfc fetches nothing from the network (pass --ref-dir DIR to resolve it from files)"
                    )));
                };
                let Some(value) = fetch(resource) else {
                    return Err(unresolved(format!(
                        "`{resource}` was not found by the reference resolver"
                    )));
                };
                let doc = self.load(resource.to_string(), Source::Loaded(Rc::new(value)))?;
                Location {
                    doc,
                    pointer: String::new(),
                }
            }
        };
        let fragment = percent_decode(fragment.unwrap_or(""));
        let location = if fragment.is_empty() {
            root
        } else if fragment.starts_with('/') {
            Location {
                doc: root.doc,
                pointer: format!("{}{}", root.pointer, fragment),
            }
        } else {
            let key = (strip_fragment(resource), fragment.to_string());
            match self.anchors.borrow().get(&key) {
                Some(location) => location.clone(),
                None => {
                    return Err(unresolved(format!(
                        "no `$anchor` named `{fragment}` in `{resource}`"
                    )))
                }
            }
        };
        Ok(location)
    }
}

/// The schema at `location` inside `source`, the document [`Document::source`] gave.
pub fn at<'v>(source: &'v Value, location: &Location) -> Option<&'v Value> {
    descend(source, &location.pointer)
}

/// Unwraps an OpenAI `response_format`; returns the schema and whether `strict` was set.
fn unwrap_response_format(input: &Value) -> Result<(Source<'_>, bool), CompileError> {
    let invalid = |message: &str| CompileError::Invalid {
        pointer: "/type".to_string(),
        message: message.to_string(),
    };
    match input.get("type").and_then(Value::as_str) {
        Some("json_schema") => {
            let inner = input.get("json_schema").ok_or_else(|| CompileError::Invalid {
                pointer: "/json_schema".to_string(),
                message: "a response_format of type json_schema needs a `json_schema` object with a `schema`".to_string(),
            })?;
            let schema = match inner.get("schema") {
                Some(schema) => Source::Input(schema),
                None => Source::Loaded(Rc::new(Value::Bool(true))),
            };
            let strict = inner
                .get("strict")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            Ok((schema, strict))
        }
        Some("json_object") => Ok((
            Source::Loaded(Rc::new(serde_json::json!({"type": "object"}))),
            false,
        )),
        Some("text") => Err(invalid(
            "a response_format of type `text` constrains nothing: no grammar is needed",
        )),
        _ => Ok((Source::Input(input), false)),
    }
}

/// Could [`Document::index`] find anything in `value`: some object with a key that names a
/// place (`$id`, `id`, `$anchor`, `$dynamicAnchor`), or nesting deep enough to be refused?
/// Without either, indexing records nothing and is skipped (it makes a pointer per
/// subschema).
fn may_name_places(value: &Value) -> bool {
    let names_a_place =
        |key: &String| matches!(key.as_str(), "$id" | "id" | "$anchor" | "$dynamicAnchor");
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Object(map) if map.keys().any(names_a_place) => return true,
            Value::Object(map) if !map.is_empty() => {
                if depth >= MAX_DEPTH {
                    return true;
                }
                stack.extend(map.values().map(|child| (child, depth + 1)));
            }
            Value::Array(items) if !items.is_empty() => {
                if depth >= MAX_DEPTH {
                    return true;
                }
                stack.extend(items.iter().map(|child| (child, depth + 1)));
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use serde_json::json;

    /// A schema whose `$defs` hold `a~b/c` (an integer), `named` (a string with
    /// `$anchor: here`) and `extra` under `key`.
    fn with_shared_definitions(key: &str, extra: Value) -> Value {
        let mut schema = json!({
            "$defs": {
                "a~b/c": {"type": "integer"},
                "named": {"$anchor": "here", "type": "string"}
            }
        });
        schema["$defs"][key] = extra;
        schema
    }

    /// From the root of a document made from [`with_shared_definitions`]: a pointer with
    /// `~` escapes, the same with a percent-escape, the anchor, and a pointer to nothing.
    fn finds_the_shared_definitions(doc: &Document) {
        let root = doc.root();
        let a = doc.resolve(&root, "#/$defs/a~0b~1c").unwrap();
        assert_eq!(doc.get(&a).unwrap(), json!({"type": "integer"}));
        assert_eq!(doc.resolve(&root, "#/%24defs/a~0b~1c").unwrap(), a);
        let named = doc.resolve(&root, "#here").unwrap();
        assert_eq!(doc.get(&named).unwrap()["type"], "string");
        assert!(matches!(
            doc.resolve(&root, "#/$defs/missing"),
            Err(CompileError::Unresolved { .. })
        ));
    }

    #[test]
    fn resolves_pointers_anchors_and_ids() {
        let schema = with_shared_definitions(
            "other",
            json!({"$id": "http://example.com/other.json", "$defs": {"x": {"type": "null"}}}),
        );
        let doc = Document::from_input(&schema, None).unwrap();
        let root = doc.root();
        finds_the_shared_definitions(&doc);
        let x = doc
            .resolve(&root, "http://example.com/other.json#/$defs/x")
            .unwrap();
        assert_eq!(doc.get(&x).unwrap(), json!({"type": "null"}));
        assert!(matches!(
            doc.resolve(&root, "http://elsewhere/x.json"),
            Err(CompileError::Unresolved { .. })
        ));
    }

    #[test]
    fn fragments_resolve_in_the_document_they_are_written_in() {
        // No `$id` anywhere: `#…` is read in the referring document itself, the input's
        // or a fetched one's.
        let schema = with_shared_definitions("far", json!({"$ref": "http://example.com/far.json"}));
        let far = json!({"$defs": {"x": {"type": "null"}}, "type": "boolean"});
        let resolver = |uri: &str| (uri == "http://example.com/far.json").then(|| far.clone());
        let doc = Document::from_input(&schema, Some(&resolver)).unwrap();
        let root = doc.root();
        finds_the_shared_definitions(&doc);
        assert_eq!(doc.resolve(&root, "#").unwrap(), root);
        let far_root = doc
            .resolve(
                &root.grandchild("$defs", "far"),
                "http://example.com/far.json",
            )
            .unwrap();
        assert_eq!(doc.get(&far_root).unwrap()["type"], "boolean");
        let x = doc.resolve(&far_root, "#/$defs/x").unwrap();
        assert_eq!(x.doc, far_root.doc);
        assert_eq!(doc.get(&x).unwrap(), json!({"type": "null"}));
        assert_eq!(doc.resolve(&far_root, "#").unwrap(), far_root);
    }

    #[test]
    fn plain_id_sets_a_base_only_under_draft_04() {
        // A real-world pattern (Heroku-style schemas): `id` inside a definition, refs
        // written from the document root.
        let schema = |draft: Option<&str>| {
            let mut schema = json!({
                "definitions": {
                    "lemon": {
                        "id": "schema/lemon",
                        "definitions": {"ripe": {"type": "boolean"}},
                        "properties": {"ripe": {"$ref": "#/definitions/lemon/definitions/ripe"}}
                    }
                }
            });
            if let Some(draft) = draft {
                schema["$schema"] = json!(draft);
            }
            schema
        };
        let reference = "#/definitions/lemon/definitions/ripe";
        let from = |doc: &Document| {
            doc.root()
                .child("definitions")
                .child("lemon")
                .child("properties")
                .child("ripe")
        };
        // 2020-12 (no `$schema`): `id` is no keyword, the pointer is from the document root.
        let latest = schema(None);
        let doc = Document::from_input(&latest, None).unwrap();
        let target = doc.resolve(&from(&doc), reference).unwrap();
        assert_eq!(doc.get(&target).unwrap(), json!({"type": "boolean"}));
        // Draft-04: `id` makes the definition a resource of its own, where the pointer
        // leads nowhere.
        let old = schema(Some("http://json-schema.org/draft-04/schema#"));
        let doc = Document::from_input(&old, None).unwrap();
        assert!(matches!(
            doc.resolve(&from(&doc), reference),
            Err(CompileError::Unresolved { .. })
        ));
    }

    #[test]
    fn an_anchor_names_one_place_per_resource() {
        // Found by the `canon` fuzz target: with the anchor twice in one resource, gbnfc
        // took the first place and the `jsonschema` crate the last.
        let twice = json!({
            "$ref": "#n",
            "$defs": {"big": {"$anchor": "n", "maximum": 10}, "small": {"$anchor": "n", "maximum": 2}}
        });
        let Err(CompileError::Invalid { pointer, message }) = Document::from_input(&twice, None)
        else {
            panic!("a repeated anchor must be an error");
        };
        assert_eq!(pointer, "/$defs/small");
        assert!(
            message.contains("`n` is already defined at `#/$defs/big`"),
            "{message}"
        );
        // The same name in two resources, or as `$anchor` and `$dynamicAnchor` of one
        // schema, is fine.
        let fine = json!({
            "$defs": {
                "a": {"$anchor": "n", "$dynamicAnchor": "n"},
                "b": {"$id": "http://example.com/b.json", "$anchor": "n"}
            }
        });
        assert!(Document::from_input(&fine, None).is_ok());
    }

    #[test]
    fn unwraps_response_formats() {
        let rf = json!({"type": "json_schema", "json_schema": {"name": "x", "strict": true, "schema": {"type": "integer"}}});
        let doc = Document::from_input(&rf, None).unwrap();
        assert!(doc.openai_strict);
        assert_eq!(doc.get(&doc.root()).unwrap(), json!({"type": "integer"}));
        let json_object = json!({"type": "json_object"});
        let any = Document::from_input(&json_object, None).unwrap();
        assert_eq!(doc.get(&doc.root()).unwrap()["type"], "integer");
        assert_eq!(any.get(&any.root()).unwrap(), json!({"type": "object"}));
    }
}
