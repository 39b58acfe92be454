//! Conjunctions: the schema objects that must all hold — an `allOf`'s members, a `$ref`'s
//! target beside its siblings, an `anyOf`/`oneOf` branch beside the rest of its schema.
//! They are collected (references inlined, nested `allOf`s flattened), then intersected
//! as typed schemas ([`crate::schema::intersect`]), or, where a member holds
//! `anyOf`/`oneOf`, distributed over its branches: `A ∧ (x ∨ y)` is `(A ∧ x) ∨ (A ∧ y)`.

use std::borrow::Cow;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::{without, Emitter};
use crate::gbnf::Expr;
use crate::schema::document::Location;
use crate::schema::intersect::intersect;
use crate::schema::ir::PlainSchema;
use crate::schema::keywords::{is_assertion, APPLICATORS, EVALUATING, UNEVALUATED};
use crate::schema::{disjoint, read, CompileError};

/// A schema object that must hold, and where it was written.
pub(crate) type Member<'v> = (Cow<'v, Map<String, Value>>, Location);

/// How many `allOf`s inside members are flattened into one conjunction.
const MAX_FLATTENED: usize = 32;

/// How many alternatives distributing the `anyOf`/`oneOf`s of one conjunction may make;
/// beyond, the first is distributed and the others are left to validation.
pub(super) const MAX_DISTRIBUTED: usize = 64;

/// How many `anyOf`/`oneOf`s [`Emitter::settled`] settles for one value (a branch that
/// refers back to its own schema would otherwise be settled without end).
const MAX_SETTLED: usize = 16;

/// The keywords [`Emitter::object_schema`](super::Emitter) handles before reading a schema
/// whole.
const COMBINATORS: [&str; 6] = [
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "allOf",
    "anyOf",
    "oneOf",
];

/// Whether `map` has no combinator: it is read whole as a [`PlainSchema`].
pub(super) fn is_plain(map: &Map<String, Value>) -> bool {
    !COMBINATORS.iter().any(|key| map.contains_key(*key))
}

/// `members` with their combinators left out, so that each reads as a [`PlainSchema`].
pub(crate) fn without_combinators<'v>(members: &'v [Member<'_>]) -> Vec<Member<'v>> {
    let stripped = |map: &Map<String, Value>| {
        let kept = map
            .iter()
            .filter(|(k, _)| !COMBINATORS.contains(&k.as_str()));
        kept.map(|(k, v)| (k.clone(), v.clone())).collect()
    };
    members
        .iter()
        .map(|(map, at)| match is_plain(map) {
            true => (Cow::Borrowed(&**map), at.clone()),
            false => (Cow::Owned(stripped(map)), at.clone()),
        })
        .collect()
}

impl<'d, 'r, 'o> Emitter<'d, 'r, 'o> {
    /// Values valid under `rest` (at `at`) and every one of the `allOf` members `items`
    /// (each with where it was written).
    pub(super) fn all_of<'v>(
        &mut self,
        rest: Cow<'v, Map<String, Value>>,
        items: impl IntoIterator<Item = (&'v Value, Location)>,
        at: &Location,
    ) -> Result<Expr, CompileError>
    where
        'r: 'v,
    {
        let mut level = vec![(rest, at.clone())];
        for (item, item_at) in items {
            if let Some(member) = self.member_object(Cow::Borrowed(item), &item_at)? {
                level.push((member, item_at));
            }
        }
        let (members, inlined) = self.conjuncts(level)?;
        self.conjunction_inlined(members, inlined, at, MAX_DISTRIBUTED)
    }

    /// `item`, an `allOf` member written at `at`, as a schema object; `None` for `true`.
    fn member_object<'v>(
        &self,
        item: Cow<'v, Value>,
        at: &Location,
    ) -> Result<Option<Cow<'v, Map<String, Value>>>, CompileError> {
        match item {
            Cow::Borrowed(Value::Object(map)) => Ok(Some(Cow::Borrowed(map))),
            Cow::Owned(Value::Object(map)) => Ok(Some(Cow::Owned(map))),
            Cow::Borrowed(Value::Bool(true)) | Cow::Owned(Value::Bool(true)) => Ok(None),
            Cow::Borrowed(Value::Bool(false)) | Cow::Owned(Value::Bool(false)) => {
                Err(self.unsatisfiable(at, "an `allOf` member is `false`"))
            }
            _ => Err(self.invalid(at, "`allOf` members must be schemas")),
        }
    }

    /// The schema objects that must all hold for the schema objects `level` (each with
    /// where it was written), and the reference targets inlined into them.
    ///
    /// A reference's target is inlined (once: a conjunction holds it or not) and its
    /// siblings stay in its place; a reference back to a target being inlined, or to one
    /// the member was itself inlined from, stays a reference alone. A member's own `allOf` is flattened: the member's other keywords
    /// in its place, its members after every member of this level (the order in which
    /// `canon` meets them).
    pub(super) fn conjuncts<'v>(
        &mut self,
        level: Vec<Member<'v>>,
    ) -> Result<(Vec<Member<'v>>, Vec<Location>), CompileError>
    where
        'r: 'v,
    {
        let (mut members, mut inlined) = (Vec::new(), Vec::new());
        let mut flattened = 0;
        // Each member of a level with the targets it was inlined from.
        let mut level: Vec<_> = level
            .into_iter()
            .map(|(map, at)| (map, at, Vec::new()))
            .collect();
        while !level.is_empty() {
            let mut next = Vec::new();
            // A reference's target (and siblings) take its place in the level, in order.
            let mut pending: Vec<_> = level.into_iter().rev().collect();
            while let Some((map, written, from)) = pending.pop() {
                let map = match map.get("$ref") {
                    Some(reference) => {
                        let Some(reference) = reference.as_str() else {
                            let at = written.child("$ref");
                            return Err(self.invalid(&at, "`$ref` must be a string"));
                        };
                        let target = self.doc.resolve(&written, reference)?;
                        let siblings = (!self.only_ref(&map)).then(|| without(&map, "$ref"));
                        let recursive = from.contains(&target) || self.inlining.contains(&target);
                        if recursive || self.inlining.len() + inlined.len() > 32 {
                            let alone = self.ref_alone(reference, &written);
                            members.push((Cow::Owned(alone), written.clone()));
                        } else if inlined.contains(&target) {
                            // Already in this conjunction: holding twice adds nothing.
                        } else if let Some(target_map) = self.inline(&target)? {
                            inlined.push(target.clone());
                            let mut target_from = from.clone();
                            target_from.push(target.clone());
                            pending.push((target_map, target, target_from));
                        }
                        match siblings {
                            Some(siblings) => {
                                pending.push((Cow::Owned(siblings), written, from));
                                continue;
                            }
                            None => continue,
                        }
                    }
                    None => map,
                };
                if flattened >= MAX_FLATTENED || !map.contains_key("allOf") {
                    members.push((map, written));
                    continue;
                }
                let Some(count) = map.get("allOf").and_then(Value::as_array).map(Vec::len) else {
                    let at = written.child("allOf");
                    return Err(self.invalid(&at, "`allOf` must be an array of schemas"));
                };
                flattened += 1;
                self.explain_keywords(&map, &written, false);
                for i in 0..count {
                    let item_at = written.child("allOf").index(i);
                    let item = match &map {
                        Cow::Borrowed(borrowed) => borrowed.get("allOf").map(Cow::Borrowed),
                        Cow::Owned(owned) => owned.get("allOf").map(|all| Cow::Owned(all.clone())),
                    };
                    let item = item.and_then(|all| match all {
                        Cow::Borrowed(all) => all.get(i).map(Cow::Borrowed),
                        Cow::Owned(all) => all.get(i).cloned().map(Cow::Owned),
                    });
                    if let Some(member) = self.member_object(item.unwrap_or_default(), &item_at)? {
                        next.push((member, item_at, from.clone()));
                    }
                }
                members.push((Cow::Owned(without(&map, "allOf")), written));
            }
            level = next;
        }
        Ok((members, inlined))
    }

    /// [`Emitter::conjunction`] with the targets `inlined` into `members` not inlined again
    /// while it compiles (a reference back to them stays a reference).
    pub(super) fn conjunction_inlined(
        &mut self,
        members: Vec<Member<'_>>,
        inlined: Vec<Location>,
        at: &Location,
        budget: usize,
    ) -> Result<Expr, CompileError> {
        let depth = self.inlining.len();
        self.inlining.extend(inlined);
        let result = self.conjunction(members, at, budget);
        self.inlining.truncate(depth);
        result
    }

    /// Values valid under every one of `members`, compiled at `at`: intersected where
    /// none holds a combinator; the reference's rule (the rest left to validation) where
    /// one is a reference back to a target being inlined; the first `anyOf`/`oneOf`
    /// distributed, making at most `budget` alternatives where others join it.
    fn conjunction(
        &mut self,
        members: Vec<Member<'_>>,
        at: &Location,
        budget: usize,
    ) -> Result<Expr, CompileError> {
        if members.iter().all(|(member, _)| is_plain(member)) {
            return self.intersected(&members, at);
        }
        let recursive = members
            .iter()
            .position(|(member, _)| member.contains_key("$ref"));
        if let Some(i) = recursive {
            self.left_to_validation(&members, i, "beside a recursive `$ref`")?;
            let (member, written) = &members[i];
            let reference = member.get("$ref").and_then(Value::as_str).unwrap_or("#");
            let target = self.doc.resolve(written, reference)?;
            return self.ref_rule(&target);
        }
        if let Some((i, key)) = factor(&members) {
            let members = self.within_budget(members, budget)?;
            return self.distributed(members, i, key, at, budget);
        }
        // A dynamic reference, or `allOf`s nested too deep to flatten: that member alone.
        let Some(i) = members.iter().position(|(member, _)| !is_plain(member)) else {
            return self.intersected(&members, at);
        };
        self.left_to_validation(
            &members,
            i,
            "beside a dynamic reference or `allOf`s nested too deep, checked after generation",
        )?;
        let (member, written) = &members[i];
        self.object_schema(member, written)
    }

    /// The schema objects without `anyOf`/`oneOf` that a value meets where `level` must
    /// hold, as the emitter builds its alternatives ([`Emitter::distributed`]): each
    /// `anyOf`/`oneOf` in turn settled to its first arm (the rest of the conjunction, then
    /// the branch's members) that `admits` the value, or to its first arm when none does;
    /// those beyond the emitter's budget of alternatives left out, as it leaves them.
    /// `None` where the schema does not compile. What [`crate::schema::canon`] reads.
    pub(crate) fn settled<'v>(
        &mut self,
        level: Vec<Member<'v>>,
        admits: impl Fn(&[Member<'v>]) -> bool,
    ) -> Option<Vec<Member<'v>>>
    where
        'r: 'v,
    {
        let depth = self.inlining.len();
        // Targets inlined stay on `self.inlining` while the arms are settled.
        let settle = || -> Option<Vec<Member<'v>>> {
            let (mut members, inlined) = self.conjuncts(level).ok()?;
            self.inlining.extend(inlined);
            let mut budget = MAX_DISTRIBUTED;
            for _ in 0..MAX_SETTLED {
                let Some((i, key)) = factor(&members) else {
                    break;
                };
                members = self.within_budget(members, budget).ok()?;
                let (factor, factor_at) = &members[i];
                let branches = factor.get(key)?.as_array()?.clone();
                let branches_at = factor_at.child(key);
                members[i] = (Cow::Owned(without(factor, key)), factor_at.clone());
                budget = (budget / branches.len().max(1)).max(1);
                let (mut admitted, mut first) = (None, None);
                for (b, branch) in branches.into_iter().enumerate() {
                    let branch_at = branches_at.index(b);
                    let level = match self.member_object(Cow::Owned(branch), &branch_at) {
                        Ok(Some(member)) => vec![(member, branch_at)],
                        Ok(None) => Vec::new(),
                        Err(_) => continue,
                    };
                    let Ok((branch_members, inlined)) = self.conjuncts(level) else {
                        continue;
                    };
                    let mut arm = members.clone();
                    arm.extend(branch_members);
                    if admits(&arm) {
                        admitted = Some((arm, inlined));
                        break;
                    }
                    first.get_or_insert((arm, inlined));
                }
                let (arm, inlined) = admitted.or(first)?;
                members = arm;
                self.inlining.extend(inlined);
            }
            Some(members)
        };
        let settled = settle();
        self.inlining.truncate(depth);
        settled
    }

    /// Reports every assertion of `members` but the `i`th validation-only (`why`).
    fn left_to_validation(
        &mut self,
        members: &[Member<'_>],
        i: usize,
        why: &str,
    ) -> Result<(), CompileError> {
        for (j, (member, written)) in members.iter().enumerate() {
            if j == i {
                continue;
            }
            for key in member.keys().filter(|k| is_assertion(k)) {
                self.validation_only(written, key, why)?;
            }
        }
        Ok(())
    }

    /// `members` with each `anyOf`/`oneOf` after the first taken out, validation-only,
    /// once distributing them all would make more than `budget` alternatives.
    fn within_budget<'v>(
        &mut self,
        mut members: Vec<Member<'v>>,
        budget: usize,
    ) -> Result<Vec<Member<'v>>, CompileError> {
        let mut product = 0usize;
        for (member, written) in &mut members {
            for key in ["anyOf", "oneOf"] {
                let Some(count) = member.get(key).and_then(Value::as_array).map(Vec::len) else {
                    continue;
                };
                if product == 0 {
                    product = count.max(1);
                    continue;
                }
                match product.checked_mul(count).filter(|&p| p <= budget) {
                    Some(p) => product = p,
                    None => {
                        self.validation_only(
                            written,
                            key,
                            format!("distributing it with the other `anyOf`/`oneOf`s it must hold with would make more than {MAX_DISTRIBUTED} alternatives"),
                        )?;
                        member.to_mut().shift_remove(key);
                    }
                }
            }
        }
        Ok(members)
    }

    /// `members`, whose `i`th holds `key` (`anyOf` or `oneOf`): each branch with the rest
    /// of the conjunction (its base).
    fn distributed(
        &mut self,
        mut members: Vec<Member<'_>>,
        i: usize,
        key: &str,
        at: &Location,
        budget: usize,
    ) -> Result<Expr, CompileError> {
        let (factor, factor_at) = &members[i];
        let factor_at = factor_at.clone();
        let Some(branches) = factor.get(key).and_then(Value::as_array).cloned() else {
            return Err(self.invalid(
                &factor_at.child(key),
                format!("`{key}` must be an array of schemas"),
            ));
        };
        let remainder = without(factor, key);
        members[i] = (Cow::Owned(remainder), factor_at.clone());
        let base_constrains = members
            .iter()
            .any(|(member, _)| member.keys().any(|k| is_assertion(k)));
        if key == "anyOf" && base_constrains {
            // Every branch that matches evaluates keys (items); joined with one branch at a
            // time, `unevaluated*` would see only that branch's.
            for (unevaluated, evaluating) in UNEVALUATED.into_iter().zip(EVALUATING) {
                let evaluates = |b: &Value| {
                    b.as_object().is_some_and(|m| {
                        evaluating
                            .iter()
                            .chain(&APPLICATORS)
                            .any(|k| m.contains_key(*k))
                    })
                };
                if branches.iter().any(evaluates) {
                    for (member, written) in &mut members {
                        self.unevaluated_left_to_validation(
                            member,
                            unevaluated,
                            written,
                            "beside `anyOf`, what the matching branches leave unevaluated is checked after generation",
                        )?;
                    }
                }
            }
        }
        let one_of = key == "oneOf";
        let arm_budget = (budget / branches.len().max(1)).max(1);
        let mut arms = Vec::new();
        // For `oneOf`: each branch with its base, to tell whether they are disjoint.
        let mut one_of_arms = Vec::new();
        for (b, branch) in branches.iter().enumerate() {
            let branch_at = factor_at.child(key).index(b);
            if !(branch.is_object() || branch.is_boolean()) {
                let message = if base_constrains {
                    "branches must be schemas"
                } else {
                    "a schema must be a JSON object or a boolean"
                };
                return Err(self.invalid(&branch_at, message));
            }
            if !base_constrains && !one_of {
                arms.extend(accepting(self.schema(branch, &branch_at))?);
                continue;
            }
            let level = match self.member_object(Cow::Borrowed(branch), &branch_at) {
                Ok(Some(member)) => vec![(member, branch_at.clone())],
                Ok(None) => Vec::new(),
                Err(CompileError::Unsatisfiable { .. }) => continue,
                Err(e) => return Err(e),
            };
            let Some((branch_members, inlined)) = accepting(self.conjuncts(level))? else {
                continue;
            };
            let mut arm = if base_constrains {
                members.clone()
            } else {
                Vec::new()
            };
            arm.extend(branch_members);
            let result = if base_constrains {
                self.conjunction_inlined(arm.clone(), inlined, &branch_at, arm_budget)
            } else {
                self.schema(branch, &branch_at)
            };
            if let Some(expr) = accepting(result)? {
                arms.push(expr);
                if one_of {
                    one_of_arms.push((arm, branch_at));
                }
            }
        }
        if arms.is_empty() {
            return Err(self.unsatisfiable(
                &factor_at.child(key),
                format!("no branch of `{key}` accepts any value"),
            ));
        }
        if one_of {
            // Read with a conflict keeping one side and a member with combinators left
            // out: more values, never fewer.
            let read: Option<Vec<PlainSchema<'_>>> = one_of_arms
                .iter()
                .map(|(arm, branch_at)| read_together(arm, branch_at))
                .collect();
            if !read.is_some_and(|read| disjoint::pairwise(&read)) {
                self.validation_only(
                    &factor_at,
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
}

/// The first member holding `anyOf` or `oneOf` (its index), and which.
fn factor(members: &[Member<'_>]) -> Option<(usize, &'static str)> {
    members.iter().enumerate().find_map(|(i, (member, _))| {
        ["anyOf", "oneOf"]
            .into_iter()
            .find(|key| member.contains_key(*key))
            .map(|key| (i, key))
    })
}

/// The plain members of `members` (each with where it was written; none: `{}` at `at`),
/// read and intersected, a conflict keeping the first side's keyword (so the result
/// accepts all the members accept together, perhaps more); `None` when one does not read.
pub(crate) fn read_together<'s>(
    members: &'s [Member<'_>],
    at: &Location,
) -> Option<PlainSchema<'s>> {
    static NOTHING_WRITTEN: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
    let mut read = members
        .iter()
        .filter(|(member, _)| is_plain(member))
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
pub(super) fn accepting<T>(result: Result<T, CompileError>) -> Result<Option<T>, CompileError> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(CompileError::Unsatisfiable { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}
