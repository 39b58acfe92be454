//! References: `$ref` (and a dynamic reference resolved statically) as the target's
//! rule, or inlined where keywords beside it must be intersected with the target; and
//! the schema objects a reference brings in, with their own references made absolute.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::conjunctions::MAX_DISTRIBUTED;
use super::Emitter;
use crate::gbnf::Expr;
use crate::schema::document::{at, Document, Location, Source};
use crate::schema::keywords::{is_annotation, is_assertion, TRUE};
use crate::schema::CompileError;

impl<'d, 'r, 'o> Emitter<'d, 'r, 'o> {
    /// The values valid under both `rest` (the keywords beside the reference, at `at`) and
    /// the schema that `reference` (a `$ref`, or a dynamic reference resolved statically)
    /// points at: the target's rule alone when nothing beside it constrains, else the two
    /// as one conjunction (the target inlined, or its rule and the rest left to validation
    /// when the target is being inlined already).
    pub(super) fn reference(
        &mut self,
        rest: Map<String, Value>,
        reference: &str,
        at: &Location,
    ) -> Result<Expr, CompileError> {
        let target = self.doc.resolve(at, reference)?;
        if !rest.keys().any(|k| is_assertion(k)) {
            return self.ref_rule(&target);
        }
        let alone = self.ref_alone(reference, at);
        let level = vec![
            (Cow::Owned(rest), at.clone()),
            (Cow::Owned(alone), at.clone()),
        ];
        let (members, inlined) = self.conjuncts(level)?;
        self.conjunction_inlined(members, inlined, at, MAX_DISTRIBUTED)
    }

    /// The reference a `$dynamicRef` written at `written` is resolved by. Its dynamic scope
    /// starts at the root, so when both its static target and the root's resource carry a
    /// `$dynamicAnchor` of its name, the root's is the outermost and is the one meant
    /// (an absolute reference to it); otherwise `reference` as written, resolved statically.
    pub(super) fn outermost_dynamic(&self, written: &Location, reference: &str) -> String {
        let Some(name) = reference.strip_prefix('#') else {
            return reference.to_string();
        };
        let dynamic = |place: &Location| {
            let source = self.doc.source(place);
            let schema = source.as_deref().and_then(|s| at(s, place));
            schema
                .and_then(|s| s.get("$dynamicAnchor"))
                .and_then(Value::as_str)
                == Some(name)
        };
        let static_target = self.doc.resolve(written, reference);
        let outermost = self.doc.resolve(&self.doc.root(), reference);
        match (static_target, outermost) {
            (Ok(inner), Ok(outer)) if dynamic(&inner) && dynamic(&outer) => {
                self.doc.absolute_uri(&outer)
            }
            _ => reference.to_string(),
        }
    }

    /// Does the schema object `map` (holding a `$ref`) mean its reference alone? Up to
    /// draft-07 a `$ref` overrides its siblings; later, only annotations may be beside it.
    pub(super) fn only_ref(&self, map: &Map<String, Value>) -> bool {
        self.doc.ref_overrides_siblings || map.keys().all(|k| k == "$ref" || is_annotation(k))
    }

    /// `{"$ref": reference}` for a reference written at `at`, made absolute.
    pub(super) fn ref_alone(&self, reference: &str, at: &Location) -> Map<String, Value> {
        let alone = Map::from_iter([("$ref".to_string(), Value::String(reference.to_string()))]);
        self.with_absolute_refs(&alone, at).into_owned()
    }

    /// The schema at `target` with every nested `$ref` made absolute, or `None` if it is
    /// being inlined already (recursion).
    pub(super) fn inline(
        &mut self,
        target: &Location,
    ) -> Result<Option<Cow<'r, Map<String, Value>>>, CompileError> {
        if self.inlining.contains(target) || self.inlining.len() > 32 {
            return Ok(None);
        }
        match self.doc.source(target) {
            // The caller's input outlives the compilation: borrowed when nothing in it
            // needs rewriting.
            Some(Source::Input(input)) => self.as_object(at(input, target), target).map(Some),
            // A document made or fetched while compiling is held only here: copied.
            Some(Source::Loaded(doc)) => self
                .as_object(at(&doc, target), target)
                .map(|map| Some(Cow::Owned(map.into_owned()))),
            None => Err(self.invalid(target, "a `$ref` must point at a schema")),
        }
    }

    /// `found`, the schema at `target`, as an object with every nested `$ref` made
    /// absolute (`true` is `{}`, `false` is `{"not": {}}`).
    pub(super) fn as_object<'v>(
        &self,
        found: Option<&'v Value>,
        target: &Location,
    ) -> Result<Cow<'v, Map<String, Value>>, CompileError> {
        match found {
            // Up to draft-07 the siblings of a `$ref` are ignored: merged elsewhere, they
            // would apply.
            Some(Value::Object(map))
                if self.doc.ref_overrides_siblings && map.contains_key("$ref") =>
            {
                match map.get("$ref").and_then(Value::as_str) {
                    Some(reference) => Ok(Cow::Owned(self.ref_alone(reference, target))),
                    None => Err(self.invalid(&target.child("$ref"), "`$ref` must be a string")),
                }
            }
            Some(Value::Object(map)) => Ok(self.with_absolute_refs(map, target)),
            Some(Value::Bool(true)) => Ok(Cow::Owned(Map::new())),
            Some(Value::Bool(false)) => {
                let mut never = Map::new();
                never.insert("not".to_string(), Value::Object(Map::new()));
                Ok(Cow::Owned(never))
            }
            _ => Err(self.invalid(target, "a `$ref` must point at a schema")),
        }
    }

    /// `map` with every nested `$ref` made absolute; `map` itself when it holds none.
    pub(super) fn with_absolute_refs<'m>(
        &self,
        map: &'m Map<String, Value>,
        at: &Location,
    ) -> Cow<'m, Map<String, Value>> {
        // Where `#…` means the same everywhere, only other references need rewriting.
        let fragments_stay = self.doc.fragments_are_global();
        let own_ref = map
            .get("$ref")
            .is_some_and(|r| rewritten(r, fragments_stay));
        if !own_ref
            && !map
                .iter()
                .any(|(key, child)| holds_refs(key, child, 0, fragments_stay))
        {
            return Cow::Borrowed(map);
        }
        let mut out = map.clone();
        absolutize_refs(&mut out, at, self.doc);
        Cow::Owned(out)
    }

    /// One named rule per `$ref` target.
    pub(super) fn ref_rule(&mut self, target: &Location) -> Result<Expr, CompileError> {
        if let Some(name) = self.ref_rules.get(target) {
            return Ok(Expr::rule(name.clone()));
        }
        let name = self.fresh_name(&self.hint(target));
        self.ref_rules.insert(target.clone(), name.clone());
        let source = self.doc.source(target);
        let schema = source
            .as_deref()
            .and_then(|s| at(s, target))
            .unwrap_or(&TRUE);
        // The target is a rule of its own, so what the referring expression inlined may be
        // inlined in it again (a reference back to the target itself is this rule, by name).
        let inlining = std::mem::take(&mut self.inlining);
        let body = self.schema(schema, target);
        self.inlining = inlining;
        let body = match body {
            Ok(body) => body,
            Err(err) => {
                // Forget the name: a later reference must not point at a rule never made.
                self.ref_rules.remove(target);
                return Err(err);
            }
        };
        self.push_rule(name.clone(), body);
        Ok(Expr::rule(name))
    }
}

/// Keywords whose values are instances, not schemas: a `$ref` inside is data.
const INSTANCE_KEYWORDS: [&str; 4] = ["enum", "const", "default", "examples"];

/// Does [`absolutize_refs`] find a `$ref` to rewrite in the value of `key`?
fn holds_refs(key: &str, value: &Value, depth: usize, fragments_stay: bool) -> bool {
    if depth > crate::schema::document::MAX_DEPTH || INSTANCE_KEYWORDS.contains(&key) {
        return false;
    }
    match value {
        Value::Object(map) => {
            map.get("$ref")
                .is_some_and(|r| rewritten(r, fragments_stay))
                || map
                    .iter()
                    .any(|(key, child)| holds_refs(key, child, depth + 1, fragments_stay))
        }
        Value::Array(items) => items
            .iter()
            .any(|item| holds_refs("", item, depth + 1, fragments_stay)),
        _ => false,
    }
}

/// Whether [`absolutize_refs`] would rewrite the `$ref` value `reference`: a string, and
/// not a `#…` fragment when those mean the same everywhere (`fragments_stay`).
fn rewritten(reference: &Value, fragments_stay: bool) -> bool {
    reference
        .as_str()
        .is_some_and(|r| !(fragments_stay && r.starts_with('#')))
}

fn absolutize_refs(map: &mut Map<String, Value>, at: &Location, doc: &Document<'_>) {
    fn walk(value: &mut Value, base_location: &Location, doc: &Document<'_>, depth: usize) {
        if depth > crate::schema::document::MAX_DEPTH {
            return;
        }
        match value {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get_mut("$ref") {
                    if let Ok(target) = doc.resolve(base_location, reference) {
                        *reference = doc.absolute_uri(&target);
                    }
                }
                for (key, child) in map.iter_mut() {
                    if !INSTANCE_KEYWORDS.contains(&key.as_str()) {
                        walk(child, base_location, doc, depth + 1);
                    }
                }
            }
            Value::Array(items) => items
                .iter_mut()
                .for_each(|i| walk(i, base_location, doc, depth + 1)),
            _ => {}
        }
    }
    let mut value = Value::Object(std::mem::take(map));
    walk(&mut value, at, doc, 0);
    if let Value::Object(m) = value {
        *map = m;
    }
}
