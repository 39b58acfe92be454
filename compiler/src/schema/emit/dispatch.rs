//! The [`Emitter`]'s walk over schemas: `$ref`, `allOf` merged, `anyOf`/`oneOf` as
//! alternatives, `not`, `enum`/`const` as literals, and each `type` handed to its module.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{
    absolutize_refs, holds_refs, pairwise_disjoint, rewritten, without, Emitter, MAX_DEPTH,
};
use crate::gbnf::Expr;
use crate::schema::document::{at, Location, Source};
use crate::schema::intersect::{intersect, Conflict};
use crate::schema::ir::{JsonType, PlainSchema, Subschema, Types, Written};
use crate::schema::keywords::{
    is_annotation, is_assertion, APPLICATORS, EVALUATING, TRUE, UNEVALUATED,
};
use crate::schema::lookup::Lookup;
use crate::schema::merge::{self, merge_owned, restricts};
use crate::schema::provenance::{self, MergeSite, Origins};
use crate::schema::{arrays, literals, objects, read, scalars, CompileError};

/// Whether `map` has no combinator: it is read whole as a [`PlainSchema`].
fn is_plain(map: &Map<String, Value>) -> bool {
    !COMBINATORS.iter().any(|key| map.has(key))
}

/// The keywords [`Emitter::object_schema`] handles before reading a schema whole.
const COMBINATORS: [&str; 6] = [
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "allOf",
    "anyOf",
    "oneOf",
];

impl<'d, 'r, 'o> Emitter<'d, 'r, 'o> {
    /// The expression for values valid under `schema` (at `at`).
    ///
    /// # Errors
    /// See [`CompileError`]; [`CompileError::Unsatisfiable`] when no value is valid.
    pub fn schema(&mut self, schema: &Value, at: &Location) -> Result<Expr, CompileError> {
        match schema {
            Value::Bool(true) => Ok(self.shared_rule("value")),
            Value::Bool(false) => Err(self.unsatisfiable(at, "the schema is `false`")),
            Value::Object(map) => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    self.depth -= 1;
                    return Err(
                        self.too_large(at, format!("schemas nested more than {MAX_DEPTH} deep"))
                    );
                }
                let result = self.object_schema(map, at, false);
                self.depth -= 1;
                result
            }
            _ => Err(self.invalid(at, "a schema must be a JSON object or a boolean")),
        }
    }

    /// The expression for the schema object `map` at `at`; `merged` when a merge made it
    /// (its keywords beside a `$ref` then come from other schemas, and apply in every
    /// draft).
    pub(super) fn object_schema(
        &mut self,
        map: &Map<String, Value>,
        at: &Location,
        merged: bool,
    ) -> Result<Expr, CompileError> {
        // Up to draft-07 a `$ref` written beside other keywords overrides them.
        let ref_overrides = !merged && self.doc.ref_overrides_siblings && map.has("$ref");
        self.explain_keywords(map, at, ref_overrides);
        for dynamic in ["$dynamicRef", "$recursiveRef"] {
            if let Some(reference) = map.kw(dynamic).and_then(Value::as_str) {
                self.validation_only(
                    at,
                    dynamic,
                    "resolved statically, like `$ref` (a `$dynamicRef` to the root's `$dynamicAnchor` of its name, when there is one)",
                )?;
                let mut rest = without(map, dynamic);
                // The dynamic target may evaluate more than the static one.
                for key in UNEVALUATED {
                    self.unevaluated_left_to_validation(
                        &mut rest,
                        key,
                        at,
                        "beside a `$dynamicRef` resolved statically, what stays unevaluated is checked after generation",
                    )?;
                }
                let reference = match dynamic {
                    "$dynamicRef" => self.outermost_dynamic(at, reference),
                    _ => reference.to_string(),
                };
                rest.insert("$ref".to_string(), Value::String(reference));
                let mut origins = provenance::written_at(&rest, at);
                origins.insert("$ref".to_string(), Some(at.child(dynamic)));
                return self.merged_schema(&rest, origins, at, at.child(dynamic));
            }
        }
        if let Some(reference) = map.kw("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(self.invalid(&at.child("$ref"), "`$ref` must be a string"));
            };
            let target = self.doc.resolve(at, reference)?;
            let constraining = (merged || !self.doc.ref_overrides_siblings)
                && map.keys().any(|k| k != "$ref" && is_assertion(k));
            if !constraining {
                return self.ref_rule(&target);
            }
            let rest = without(map, "$ref");
            return match self.inline(&target)? {
                Some(target_map) => {
                    let rest_origins = provenance::written_at(&rest, at);
                    let (merged, origins) =
                        self.merge_at(rest, rest_origins, &target_map, &target, at, "$ref")?;
                    self.inlining.push(target);
                    let result = self.merged_schema(&merged, origins, at, at.child("$ref"));
                    self.inlining.pop();
                    result
                }
                None => {
                    // Recursive: keep the reference, enforce the siblings by validation.
                    for key in rest.keys().filter(|k| is_assertion(k)) {
                        self.validation_only(at, key, "beside a recursive `$ref`")?;
                    }
                    self.ref_rule(&target)
                }
            };
        }
        if let Some(all_of) = map.kw("allOf") {
            let Some(items) = all_of.as_array() else {
                return Err(self.invalid(&at.child("allOf"), "`allOf` must be an array of schemas"));
            };
            let rest = without(map, "allOf");
            let mut members = Vec::with_capacity(items.len());
            let mut inlined = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let item_at = at.child("allOf").index(i);
                match item {
                    Value::Bool(true) => {}
                    Value::Bool(false) => {
                        return Err(self.unsatisfiable(&item_at, "an `allOf` member is `false`"))
                    }
                    Value::Object(m) => {
                        if let Some(target) = self.inline_target(m, &item_at) {
                            inlined.push(target);
                        }
                        members.push(self.absolutize(m, &item_at)?);
                    }
                    _ => return Err(self.invalid(&item_at, "`allOf` members must be schemas")),
                }
            }
            // While the intersection compiles, the targets inlined into it must not be
            // inlined again (a reference back to them stays a reference).
            let depth = self.inlining.len();
            self.inlining.extend(inlined);
            let result = if is_plain(&rest) && members.iter().all(|(member, _)| is_plain(member)) {
                self.intersected(&rest, &members, at)
            } else {
                self.merged_members(rest, &members, at)
            };
            self.inlining.truncate(depth);
            return result;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = map.kw(key) {
                return self.alternatives(map, key, branches, at);
            }
        }
        self.plain(map, at)
    }

    /// The reference a `$dynamicRef` written at `written` is resolved by. Its dynamic scope
    /// starts at the root, so when both its static target and the root's resource carry a
    /// `$dynamicAnchor` of its name, the root's is the outermost and is the one meant
    /// (an absolute reference to it); otherwise `reference` as written, resolved statically.
    fn outermost_dynamic(&self, written: &Location, reference: &str) -> String {
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

    /// `rest` (at `at`) and the `allOf` `members` (each with where it was written), none
    /// with combinators: read, intersected, lowered.
    fn intersected(
        &mut self,
        rest: &Map<String, Value>,
        members: &[(Cow<'_, Map<String, Value>>, Location)],
        at: &Location,
    ) -> Result<Expr, CompileError> {
        let mut schema = self.read_plain(rest, at)?;
        let mut conflicts = Vec::new();
        for (member, written) in members {
            self.explain_keywords(member, written, false);
            let side = self.read_plain(member, written)?;
            schema = intersect(schema, side, &mut conflicts);
        }
        for Conflict { keyword, places } in conflicts {
            let places: Vec<String> = places.into_iter().map(|p| self.place(p)).collect();
            self.validation_only(
                at,
                "allOf",
                format!(
                    "`{keyword}` ({}) cannot be intersected exactly",
                    places.join(", ")
                ),
            )?;
        }
        self.lower_plain(&schema, at)
    }

    /// `rest` (at `at`) and the `allOf` `members` (each with where it was written), some
    /// with combinators: merged as JSON, then compiled.
    fn merged_members(
        &mut self,
        rest: Map<String, Value>,
        members: &[(Cow<'_, Map<String, Value>>, Location)],
        at: &Location,
    ) -> Result<Expr, CompileError> {
        let mut origins = provenance::written_at(&rest, at);
        let mut merged = rest;
        for (member, written) in members {
            (merged, origins) = self.merge_at(merged, origins, member, written, at, "allOf")?;
        }
        self.merged_schema(&merged, origins, at, at.child("allOf"))
    }

    /// `$ref` and `allOf` members may hold further `$ref`s relative to their own location;
    /// merged elsewhere, those must be absolute. Returns the map with its own `$ref`
    /// inlined when it is only a reference, and where the returned map was written
    /// (`at`, or the inlined target).
    pub(super) fn absolutize<'m>(
        &mut self,
        map: &'m Map<String, Value>,
        at: &Location,
    ) -> Result<(Cow<'m, Map<String, Value>>, Location), CompileError>
    where
        'r: 'm,
    {
        if let Some(reference) = map.kw("$ref").and_then(Value::as_str) {
            if self.only_ref(map) {
                let target = self.doc.resolve(at, reference)?;
                if let Some(inlined) = self.inline(&target)? {
                    return Ok((inlined, target));
                }
                if self.doc.ref_overrides_siblings {
                    // Recursive: the reference alone, without the siblings it ignores.
                    let alone = self.ref_alone(reference, at);
                    return Ok((Cow::Owned(alone), at.clone()));
                }
            }
        }
        Ok((self.with_absolute_refs(map, at), at.clone()))
    }

    /// Does the schema object `map` (holding a `$ref`) mean its reference alone? Up to
    /// draft-07 a `$ref` overrides its siblings; later, only annotations may be beside it.
    fn only_ref(&self, map: &Map<String, Value>) -> bool {
        self.doc.ref_overrides_siblings || map.keys().all(|k| k == "$ref" || is_annotation(k))
    }

    /// `{"$ref": reference}` for a reference written at `at`, made absolute.
    fn ref_alone(&self, reference: &str, at: &Location) -> Map<String, Value> {
        let alone = Map::from_iter([("$ref".to_string(), Value::String(reference.to_string()))]);
        self.with_absolute_refs(&alone, at).into_owned()
    }

    /// The location a reference-only member would be inlined from, if any.
    pub(super) fn inline_target(
        &self,
        map: &Map<String, Value>,
        at: &Location,
    ) -> Option<Location> {
        let reference = map.kw("$ref").and_then(Value::as_str)?;
        if !self.only_ref(map) {
            return None;
        }
        let target = self.doc.resolve(at, reference).ok()?;
        (!self.inlining.contains(&target)).then_some(target)
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
            Some(Value::Object(map)) if self.doc.ref_overrides_siblings && map.has("$ref") => {
                match map.kw("$ref").and_then(Value::as_str) {
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
        let own_ref = map.kw("$ref").is_some_and(|r| rewritten(r, fragments_stay));
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

    pub(super) fn merge_at(
        &mut self,
        a: Map<String, Value>,
        a_origins: Origins,
        b: &Map<String, Value>,
        b_at: &Location,
        at: &Location,
        keyword: &str,
    ) -> Result<(Map<String, Value>, Origins), CompileError> {
        if a.is_empty() {
            // Merged into nothing, `b` is kept as it is, each keyword where `b` has it:
            // the usual first member of an `allOf`, copied whole rather than key by key.
            self.merge_conflicts(merge::conflicts_alone(b), at, keyword)?;
            return Ok((b.clone(), provenance::written_at(b, b_at)));
        }
        let merged = merge_owned(a, b);
        self.merge_conflicts(merged.conflicts.iter().copied(), at, keyword)?;
        let origins = provenance::of_merge(&merged, a_origins, b, b_at);
        Ok((merged.schema, origins))
    }

    /// Reports the keywords a merge for `keyword` at `at` could not intersect exactly as
    /// validation-only.
    pub(super) fn merge_conflicts<'k>(
        &mut self,
        conflicts: impl IntoIterator<Item = &'k str>,
        at: &Location,
        keyword: &str,
    ) -> Result<(), CompileError> {
        for conflict in conflicts {
            self.validation_only(
                at,
                keyword,
                format!("`{conflict}` appears on both sides and cannot be intersected exactly"),
            )?;
        }
        Ok(())
    }

    /// Takes `unevaluated` (one of [`UNEVALUATED`]) out of `map` when it restricts
    /// anything, reporting it as validation-only (`why`): the grammar then allows what
    /// it would have refused, never less than the schema.
    pub(super) fn unevaluated_left_to_validation(
        &mut self,
        map: &mut Map<String, Value>,
        unevaluated: &str,
        at: &Location,
        why: &str,
    ) -> Result<(), CompileError> {
        if restricts(map, unevaluated) {
            self.validation_only(at, unevaluated, why)?;
            map.shift_remove(unevaluated);
        }
        Ok(())
    }

    /// Values valid under every one of `members` (each a schema and where it was written),
    /// compiled at `at`: intersected when none has a combinator, else as a made-up
    /// `{"allOf": [..]}`.
    ///
    /// # Errors
    /// See [`CompileError`].
    pub fn all_of_written(
        &mut self,
        members: &[Written<&Value>],
        at: &Location,
    ) -> Result<Expr, CompileError> {
        if let [member] = members {
            return self.schema(member.value, &member.at);
        }
        let plain: Option<Vec<_>> = members
            .iter()
            .filter(|member| member.value != &TRUE)
            .map(|member| match member.value {
                Value::Object(map) if is_plain(map) => {
                    Some((Cow::Borrowed(map), member.at.clone()))
                }
                _ => None,
            })
            .collect();
        if let Some(plain) = plain {
            return self.intersected(&Map::new(), &plain, at);
        }
        let schemas = members.iter().map(|member| member.value.clone());
        let mut map = Map::new();
        map.insert("allOf".to_string(), Value::Array(schemas.collect()));
        let origins = provenance::members_written_at(members.iter().map(|member| &member.at));
        self.merged_schema(&map, origins, at, at.clone())
    }

    /// The expression for values valid under `schema`, compiled where it was written.
    ///
    /// # Errors
    /// See [`CompileError`].
    pub fn subschema(&mut self, schema: &Subschema<'_>) -> Result<Expr, CompileError> {
        self.all_of_written(schema.members(), schema.place())
    }

    /// Compiles `merged`, a schema object made by merging, at `at`; diagnostics inside it
    /// name where its keywords were written (`origins`), or `combined_at` for a keyword
    /// the merge combined.
    pub(super) fn merged_schema(
        &mut self,
        merged: &Map<String, Value>,
        origins: Origins,
        at: &Location,
        combined_at: Location,
    ) -> Result<Expr, CompileError> {
        self.merges.push(MergeSite {
            at: at.clone(),
            origins,
            combined_at,
        });
        let result = self.object_schema(merged, at, true);
        self.merges.pop();
        result
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
        // The target is read where it was written: no merge's made-up places apply.
        let merges = std::mem::take(&mut self.merges);
        let body = self.schema(schema, target);
        self.merges = merges;
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

    /// `anyOf` / `oneOf`: each branch merged with the rest of the schema.
    pub(super) fn alternatives(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        branches: &Value,
        at: &Location,
    ) -> Result<Expr, CompileError> {
        let Some(branches) = branches.as_array() else {
            return Err(self.invalid(
                &at.child(key),
                format!("`{key}` must be an array of schemas"),
            ));
        };
        // The rest of the schema is copied only when it constrains the branches.
        let base_constrains = map.keys().any(|k| k != key && is_assertion(k));
        let mut base = if base_constrains {
            without(map, key)
        } else {
            Map::new()
        };
        if key == "anyOf" {
            // Every branch that matches evaluates keys (items); merged into one branch at a
            // time, `unevaluated*` would see only that branch's.
            for (unevaluated, evaluating) in UNEVALUATED.into_iter().zip(EVALUATING) {
                let evaluates = |b: &Value| {
                    b.as_object()
                        .is_some_and(|m| evaluating.iter().chain(&APPLICATORS).any(|k| m.has(k)))
                };
                if branches.iter().any(evaluates) {
                    self.unevaluated_left_to_validation(
                        &mut base,
                        unevaluated,
                        at,
                        "beside `anyOf`, what the matching branches leave unevaluated is checked after generation",
                    )?;
                }
            }
        }
        let base_origins = provenance::written_at(&base, at);
        let mut arms = Vec::new();
        // For `oneOf`, the branches as compiled, to tell whether they are disjoint.
        let one_of = key == "oneOf";
        let mut merged_branches: Vec<Cow<'_, Map<String, Value>>> = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            let branch_at = at.child(key).index(i);
            let result = if base_constrains {
                let (branch_map, written) = match branch {
                    Value::Bool(true) => (Cow::Owned(Map::new()), branch_at.clone()),
                    Value::Bool(false) => continue,
                    Value::Object(m) => self.absolutize(m, &branch_at)?,
                    _ => return Err(self.invalid(&branch_at, "branches must be schemas")),
                };
                let (merged, origins) = self.merge_at(
                    base.clone(),
                    base_origins.clone(),
                    &branch_map,
                    &written,
                    at,
                    key,
                )?;
                let result = self.merged_schema(&merged, origins, &branch_at, branch_at.clone());
                if one_of {
                    merged_branches.push(Cow::Owned(merged));
                }
                result
            } else {
                if one_of {
                    match branch {
                        Value::Object(m) => merged_branches.push(self.absolutize(m, &branch_at)?.0),
                        Value::Bool(true) => merged_branches.push(Cow::Owned(Map::new())),
                        _ => {}
                    }
                }
                self.schema(branch, &branch_at)
            };
            match result {
                Ok(expr) => arms.push(expr),
                Err(CompileError::Unsatisfiable { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if arms.is_empty() {
            return Err(self.unsatisfiable(
                &at.child(key),
                format!("no branch of `{key}` accepts any value"),
            ));
        }
        if one_of && !pairwise_disjoint(&merged_branches) {
            self.validation_only(
                at,
                "oneOf",
                "branches may overlap; the grammar accepts any branch (anyOf)",
            )?;
        }
        let hint = self.hint(at);
        Ok(if arms.len() == 1 {
            arms.pop().unwrap_or_else(Expr::empty)
        } else {
            self.add_rule(&hint, Expr::alt(arms))
        })
    }

    /// A schema without `$ref`, `allOf`, `anyOf`, `oneOf`.
    pub(super) fn plain(
        &mut self,
        map: &Map<String, Value>,
        at: &Location,
    ) -> Result<Expr, CompileError> {
        let plain = self.read_plain(map, at)?;
        self.lower_plain(&plain, at)
    }

    /// `map`, a schema without combinators at `at`, read whole; a keyword of the wrong
    /// shape is an error placed where the user wrote it.
    fn read_plain<'s>(
        &self,
        map: &'s Map<String, Value>,
        at: &Location,
    ) -> Result<PlainSchema<'s>, CompileError> {
        read::plain(map, at).map_err(|err| self.shape_error(err))
    }

    /// The expression for values valid under `plain`, a schema without combinators (read
    /// at `at`, or intersected there).
    pub(super) fn lower_plain(
        &mut self,
        plain: &PlainSchema<'_>,
        at: &Location,
    ) -> Result<Expr, CompileError> {
        let mut types = plain.types;
        for not in &plain.not {
            self.not(not, &mut types)?;
        }
        if let Some(if_at) = plain.if_at.as_ref().filter(|_| plain.conditional) {
            self.validation_only_at(
                if_at,
                "if",
                "conditional schemas are checked after generation",
            )?;
        }
        if let Some(listed) = &plain.literals {
            return literals::literals(self, plain, listed, types, at);
        }
        if types.is_empty() {
            return Err(self.unsatisfiable(at, "no type is allowed"));
        }
        let mut arms = Vec::new();
        for t in types.iter() {
            let result = match t {
                JsonType::Null => Ok(self.shared_rule("null")),
                JsonType::Boolean => Ok(self.shared_rule("boolean")),
                JsonType::String => scalars::string(self, &plain.string, at),
                JsonType::Integer | JsonType::Number => {
                    scalars::number(self, &plain.number, at, t == JsonType::Integer)
                }
                JsonType::Object => objects::object(self, &plain.object, at, plain.if_at.is_some()),
                JsonType::Array => arrays::array(self, &plain.array, at, plain.if_at.is_some()),
            };
            match result {
                Ok(expr) => arms.push(expr),
                Err(CompileError::Unsatisfiable { .. }) if types.len() > 1 => {}
                Err(e) => return Err(e),
            }
        }
        if arms.is_empty() {
            return Err(self.unsatisfiable(at, "no allowed type has a valid value"));
        }
        Ok(Expr::alt(arms))
    }

    /// `not`: `{"type": …}` removes types exactly; anything else is validation-only.
    pub(super) fn not(
        &mut self,
        not: &Written<&Value>,
        types: &mut Types,
    ) -> Result<(), CompileError> {
        match not.value {
            Value::Object(inner) if inner.len() == 1 && inner.has("type") => {
                let excluded = read::types(inner, &not.at).map_err(|err| self.shape_error(err))?;
                if excluded.contains(JsonType::Integer)
                    && types.contains(JsonType::Number)
                    && !excluded.contains(JsonType::Number)
                {
                    self.validation_only_at(&not.at, "not", "non-integral numbers only")?;
                }
                types.remove(excluded);
                Ok(())
            }
            Value::Bool(false) => Ok(()),
            Value::Bool(true) => {
                *types = Types::of([]);
                Ok(())
            }
            Value::Object(inner) if inner.is_empty() => {
                *types = Types::of([]);
                Ok(())
            }
            _ => self.validation_only_at(
                &not.at,
                "not",
                "a general `not` is checked after generation",
            ),
        }
    }
}
