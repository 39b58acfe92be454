//! The [`Emitter`]'s walk over schemas: `$ref`, `allOf` merged, `anyOf`/`oneOf` as
//! alternatives, `not`, `enum`/`const` as literals, and each `type` handed to its module.

use std::borrow::Cow;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::{without, Emitter, MAX_DEPTH};
use crate::gbnf::Expr;
use crate::schema::document::Location;
use crate::schema::intersect::{intersect, Conflict};
use crate::schema::ir::{JsonType, PlainSchema, Subschema, Types, Written};
use crate::schema::keywords::{is_assertion, APPLICATORS, EVALUATING, UNEVALUATED};
use crate::schema::lookup::Lookup;
use crate::schema::merge::{self, merge_owned, restricts};
use crate::schema::provenance::{self, MergeSite, Origins};
use crate::schema::{arrays, disjoint, literals, objects, read, scalars, CompileError};

/// Whether `map` has no combinator: it is read whole as a [`PlainSchema`].
pub(super) fn is_plain(map: &Map<String, Value>) -> bool {
    !COMBINATORS.iter().any(|key| map.has(key))
}

/// How many `allOf`s inside `allOf` members are flattened into one intersection.
const MAX_FLATTENED: usize = 32;

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
                return self.reference(rest, &reference, dynamic, at);
            }
        }
        if let Some(reference) = map.kw("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(self.invalid(&at.child("$ref"), "`$ref` must be a string"));
            };
            // Up to draft-07 the siblings of a `$ref` written together are ignored.
            let rest = if merged || !self.doc.ref_overrides_siblings {
                without(map, "$ref")
            } else {
                Map::new()
            };
            return self.reference(rest, reference, "$ref", at);
        }
        if let Some(all_of) = map.kw("allOf") {
            let Some(items) = all_of.as_array() else {
                return Err(self.invalid(&at.child("allOf"), "`allOf` must be an array of schemas"));
            };
            let rest = without(map, "allOf");
            let items = items.iter().enumerate();
            let items = items.map(|(i, item)| (item, at.child("allOf").index(i)));
            return self.all_of(rest, items, at, at.child("allOf"));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = map.kw(key) {
                return self.alternatives(map, key, branches, at);
            }
        }
        self.plain(map, at)
    }

    /// Values valid under `rest` (at `at`) and every one of the `allOf` members `items`
    /// (each with where it was written): intersected as typed schemas where none of them
    /// holds combinators, else merged as JSON (a keyword the merge combines is reported at
    /// `combined_at`).
    fn all_of<'v>(
        &mut self,
        rest: Map<String, Value>,
        items: impl IntoIterator<Item = (&'v Value, Location)>,
        at: &Location,
        combined_at: Location,
    ) -> Result<Expr, CompileError>
    where
        'r: 'v,
    {
        let mut members = Vec::new();
        let mut inlined = Vec::new();
        let items = items.into_iter().collect();
        self.all_of_members(items, &mut members, &mut inlined)?;
        // While the intersection compiles, the targets inlined into it must not be
        // inlined again (a reference back to them stays a reference).
        let depth = self.inlining.len();
        self.inlining.extend(inlined);
        let result = if is_plain(&rest) && members.iter().all(|(member, _)| is_plain(member)) {
            self.intersected(&rest, &members, at)
        } else {
            self.merged_members(rest, &members, at, combined_at)
        };
        self.inlining.truncate(depth);
        result
    }

    /// Pushes onto `members` the schema objects that must all hold for the `allOf` members
    /// `items` (each with where it was written): `true` is left out, a reference alone is
    /// its target inlined (the target pushed onto `inlined`), and a member's own `allOf`
    /// is flattened: the member's other keywords in its place, its members after every
    /// member of this level (the order in which a merge meets them, and `canon` with it).
    /// A member reached again through a reference is kept whole.
    fn all_of_members<'v>(
        &mut self,
        items: Vec<(&'v Value, Location)>,
        members: &mut Vec<(Cow<'v, Map<String, Value>>, Location)>,
        inlined: &mut Vec<Location>,
    ) -> Result<(), CompileError>
    where
        'r: 'v,
    {
        let mut flattened = Vec::new();
        let mut level = items;
        while !level.is_empty() {
            let mut next = Vec::new();
            for (item, item_at) in level {
                let object = match item {
                    Value::Bool(true) => continue,
                    Value::Bool(false) => {
                        return Err(self.unsatisfiable(&item_at, "an `allOf` member is `false`"))
                    }
                    Value::Object(object) => object,
                    _ => return Err(self.invalid(&item_at, "`allOf` members must be schemas")),
                };
                if let Some(target) = self.inline_target(object, &item_at) {
                    inlined.push(target);
                }
                let (member, written) = self.absolutize(object, &item_at)?;
                let nested = match member {
                    Cow::Borrowed(borrowed)
                        if flattened.len() < MAX_FLATTENED && !flattened.contains(&written) =>
                    {
                        let nested = borrowed.kw("allOf").and_then(Value::as_array);
                        nested.map(|nested| (borrowed, nested))
                    }
                    _ => None,
                };
                let Some((borrowed, nested)) = nested else {
                    members.push((member, written));
                    continue;
                };
                self.explain_keywords(borrowed, &written, false);
                members.push((Cow::Owned(without(borrowed, "allOf")), written.clone()));
                let places = (0..nested.len()).map(|i| written.child("allOf").index(i));
                next.extend(nested.iter().zip(places));
                flattened.push(written);
            }
            level = next;
        }
        Ok(())
    }

    /// `rest` (at `at`) and the `members` (each with where it was written), none with
    /// combinators: read, intersected, lowered.
    pub(super) fn intersected(
        &mut self,
        rest: &Map<String, Value>,
        members: &[(Cow<'_, Map<String, Value>>, Location)],
        at: &Location,
    ) -> Result<Expr, CompileError> {
        let first = self.read_plain(rest, at)?;
        let schema = self.intersect_members(first, members)?;
        self.lower_plain(&schema, at)
    }

    /// `first` intersected with each of `members` (schema objects without combinators,
    /// each with where it was written); a keyword that cannot be intersected exactly is
    /// reported validation-only where the first side wrote it.
    fn intersect_members<'s>(
        &mut self,
        first: PlainSchema<'s>,
        members: &'s [(Cow<'_, Map<String, Value>>, Location)],
    ) -> Result<PlainSchema<'s>, CompileError> {
        let mut schema = first;
        let mut conflicts = Vec::new();
        for (member, written) in members {
            self.explain_keywords(member, written, false);
            let side = self.read_plain(member, written)?;
            schema = intersect(schema, side, &mut conflicts);
        }
        for Conflict { keyword, places } in conflicts {
            let names: Vec<String> = places.iter().map(|p| self.place(p.clone())).collect();
            self.validation_only_at(
                &places[0],
                keyword,
                format!(
                    "`{keyword}` ({}) cannot be intersected exactly",
                    names.join(", ")
                ),
            )?;
        }
        Ok(schema)
    }

    /// `rest` (at `at`) merged as JSON with each of `members` (each with where it was
    /// written) for `keyword`, and where each keyword of the result came from.
    fn merged_with(
        &mut self,
        rest: Map<String, Value>,
        members: &[(Cow<'_, Map<String, Value>>, Location)],
        at: &Location,
        keyword: &str,
    ) -> Result<(Map<String, Value>, Origins), CompileError> {
        let mut origins = provenance::written_at(&rest, at);
        let mut merged = rest;
        for (member, written) in members {
            (merged, origins) = self.merge_at(merged, origins, member, written, at, keyword)?;
        }
        Ok((merged, origins))
    }

    /// `rest` (at `at`) and the `allOf` `members` (each with where it was written), some
    /// with combinators: merged as JSON, then compiled.
    fn merged_members(
        &mut self,
        rest: Map<String, Value>,
        members: &[(Cow<'_, Map<String, Value>>, Location)],
        at: &Location,
        combined_at: Location,
    ) -> Result<Expr, CompileError> {
        let (merged, origins) = self.merged_with(rest, members, at, "allOf")?;
        self.merged_schema(&merged, origins, at, combined_at)
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
    /// compiled at `at`, as an `allOf` of them.
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
        let items = members
            .iter()
            .map(|member| (member.value, member.at.clone()));
        self.all_of(Map::new(), items, at, at.clone())
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

    /// `anyOf` / `oneOf`: each branch intersected with the rest of the schema.
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
        let one_of = key == "oneOf";
        // Each branch as the schema objects that must all hold (an `allOf` of one member:
        // a reference alone inlined, its own `allOf`s flattened), with the targets inlined;
        // `None` for a branch that accepts nothing. What the rest is intersected with, and
        // what `oneOf` tells apart.
        let mut branch_members = Vec::with_capacity(branches.len());
        if base_constrains || one_of {
            for (i, branch) in branches.iter().enumerate() {
                let branch_at = at.child(key).index(i);
                if !(branch.is_object() || branch.is_boolean()) {
                    if base_constrains {
                        return Err(self.invalid(&branch_at, "branches must be schemas"));
                    }
                    branch_members.push(None);
                    continue;
                }
                let (mut members, mut inlined) = (Vec::new(), Vec::new());
                let items = vec![(branch, branch_at)];
                let collected = self.all_of_members(items, &mut members, &mut inlined);
                branch_members.push(accepting(collected)?.map(|()| (members, inlined)));
            }
        }
        let base_plain = if base_constrains && is_plain(&base) {
            Some(self.read_plain(&base, at)?)
        } else {
            None
        };
        let mut arms = Vec::new();
        // For `oneOf`, the branches as compiled, to tell whether they are disjoint:
        // intersected, or merged as JSON.
        let mut intersected = Vec::new();
        let mut merged_maps = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            let branch_at = at.child(key).index(i);
            if !base_constrains {
                arms.extend(accepting(self.schema(branch, &branch_at))?);
                continue;
            }
            let Some(Some((members, inlined))) = branch_members.get(i) else {
                continue;
            };
            // While the branch compiles, the targets inlined into it are not inlined again.
            let depth = self.inlining.len();
            self.inlining.extend(inlined.iter().cloned());
            let result = match &base_plain {
                Some(base_plain) if members.iter().all(|(member, _)| is_plain(member)) => self
                    .intersect_members(base_plain.clone(), members)
                    .and_then(|schema| {
                        let result = self.lower_plain(&schema, &branch_at);
                        if one_of {
                            intersected.push(schema);
                        }
                        result
                    }),
                _ => self.merged_with(base.clone(), members, at, key).and_then(
                    |(merged, origins)| {
                        let result =
                            self.merged_schema(&merged, origins, &branch_at, branch_at.clone());
                        if one_of {
                            merged_maps.push(merged);
                        }
                        result
                    },
                ),
            };
            self.inlining.truncate(depth);
            arms.extend(accepting(result)?);
        }
        if arms.is_empty() {
            return Err(self.unsatisfiable(
                &at.child(key),
                format!("no branch of `{key}` accepts any value"),
            ));
        }
        if one_of {
            // Without a base, each branch's members read and intersected (a conflict keeps
            // one side: more values, never fewer); else the branches intersected, and
            // those merged as JSON (compiled already, so they read).
            let read: Option<Vec<PlainSchema<'_>>> = if base_constrains {
                let merged = merged_maps
                    .iter()
                    .map(|merged| read::plain(merged, at).ok());
                merged.chain(intersected.into_iter().map(Some)).collect()
            } else {
                let written = branch_members.iter().flatten();
                written
                    .map(|(members, _)| read_together(members, at))
                    .collect()
            };
            if !read.is_some_and(|read| disjoint::pairwise(&read)) {
                self.validation_only(
                    at,
                    "oneOf",
                    "branches may overlap; the grammar accepts any branch (anyOf)",
                )?;
            }
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

/// The plain keywords of `members` (each with where it was written; none: `{}` at `at`),
/// read and intersected, a conflict keeping the first side's keyword (so the result
/// accepts all the members accept together, perhaps more); `None` when one does not read.
fn read_together<'s>(
    members: &'s [(Cow<'_, Map<String, Value>>, Location)],
    at: &Location,
) -> Option<PlainSchema<'s>> {
    static NOTHING_WRITTEN: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
    let mut read = members
        .iter()
        .map(|(member, written)| read::plain(member, written).ok());
    let first = match read.next() {
        Some(first) => first?,
        None => read::plain(&NOTHING_WRITTEN, at).ok()?,
    };
    read.try_fold(first, |schema, side| {
        Some(intersect(schema, side?, &mut Vec::new()))
    })
}

/// What an alternative's `result` gave, or `None` when the alternative accepts nothing.
fn accepting<T>(result: Result<T, CompileError>) -> Result<Option<T>, CompileError> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(CompileError::Unsatisfiable { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}
