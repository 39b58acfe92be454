//! The [`Emitter`]'s walk over schemas: `$ref`, `allOf` and `anyOf`/`oneOf` handed to
//! [`super::conjunctions`], `not`, `enum`/`const` as literals, and each `type` handed to
//! its module.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::conjunctions::{Member, MAX_DISTRIBUTED};
use super::{without, Emitter, MAX_DEPTH};
use crate::gbnf::Expr;
use crate::schema::document::Location;
use crate::schema::intersect::{intersect, Conflict};
use crate::schema::ir::{JsonType, PlainSchema, Subschema, Types, Written};
use crate::schema::keywords::{restricts, UNEVALUATED};
use crate::schema::{arrays, literals, objects, read, scalars, CompileError};

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
                let result = self.object_schema(map, at);
                self.depth -= 1;
                result
            }
            _ => Err(self.invalid(at, "a schema must be a JSON object or a boolean")),
        }
    }

    /// The expression for the schema object `map` at `at`.
    pub(super) fn object_schema(
        &mut self,
        map: &Map<String, Value>,
        at: &Location,
    ) -> Result<Expr, CompileError> {
        // Up to draft-07 a `$ref` written beside other keywords overrides them.
        let ref_overrides = self.doc.ref_overrides_siblings && map.contains_key("$ref");
        self.explain_keywords(map, at, ref_overrides);
        for dynamic in ["$dynamicRef", "$recursiveRef"] {
            if let Some(reference) = map.get(dynamic).and_then(Value::as_str) {
                self.validation_only(
                    at,
                    dynamic,
                    "resolved statically, like `$ref` (a `$dynamicRef` to the root's `$dynamicAnchor` of its name, when there is one)",
                )?;
                let mut rest = Cow::Owned(without(map, dynamic));
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
                return self.reference(rest.into_owned(), &reference, at);
            }
        }
        if let Some(reference) = map.get("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(self.invalid(&at.child("$ref"), "`$ref` must be a string"));
            };
            // Up to draft-07 the siblings of a `$ref` written together are ignored.
            let rest = if !self.doc.ref_overrides_siblings {
                without(map, "$ref")
            } else {
                Map::new()
            };
            return self.reference(rest, reference, at);
        }
        if let Some(all_of) = map.get("allOf") {
            let Some(items) = all_of.as_array() else {
                return Err(self.invalid(&at.child("allOf"), "`allOf` must be an array of schemas"));
            };
            let rest = Cow::Owned(without(map, "allOf"));
            let items = items.iter().enumerate();
            let items = items.map(|(i, item)| (item, at.child("allOf").index(i)));
            return self.all_of(rest, items, at);
        }
        if map.contains_key("anyOf") || map.contains_key("oneOf") {
            let members = vec![(Cow::Borrowed(map), at.clone())];
            return self.conjunction_inlined(members, Vec::new(), at, MAX_DISTRIBUTED);
        }
        self.plain(map, at)
    }

    /// The `members` (each with where it was written), none with combinators: read,
    /// intersected, lowered at `at`.
    pub(super) fn intersected(
        &mut self,
        members: &[Member<'_>],
        at: &Location,
    ) -> Result<Expr, CompileError> {
        let Some(((first, first_at), others)) = members.split_first() else {
            return self.plain(&Map::new(), at);
        };
        let first = self.read_plain(first, first_at)?;
        let schema = self.intersect_members(first, others)?;
        self.lower_plain(&schema, at)
    }

    /// `first` intersected with each of `members` (schema objects without combinators,
    /// each with where it was written); a keyword that cannot be intersected exactly is
    /// reported validation-only where the first side wrote it.
    fn intersect_members<'s>(
        &mut self,
        first: PlainSchema<'s>,
        members: &'s [Member<'_>],
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

    /// Takes `unevaluated` (one of [`UNEVALUATED`]) out of `map` when it restricts
    /// anything, reporting it as validation-only (`why`): the grammar then allows what
    /// it would have refused, never less than the schema.
    pub(super) fn unevaluated_left_to_validation(
        &mut self,
        map: &mut Cow<'_, Map<String, Value>>,
        unevaluated: &str,
        at: &Location,
        why: &str,
    ) -> Result<(), CompileError> {
        if restricts(map, unevaluated) {
            self.validation_only(at, unevaluated, why)?;
            map.to_mut().shift_remove(unevaluated);
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
        self.all_of(Cow::Owned(Map::new()), items, at)
    }

    /// The expression for values valid under `schema`, compiled where it was written.
    ///
    /// # Errors
    /// See [`CompileError`].
    pub fn subschema(&mut self, schema: &Subschema<'_>) -> Result<Expr, CompileError> {
        self.all_of_written(schema.members(), schema.place())
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
            Value::Object(inner) if inner.len() == 1 && inner.contains_key("type") => {
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
