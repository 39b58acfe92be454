//! `minProperties` / `maxProperties` in the member chain: the chain of
//! [`super::object`] with a count of the members written so far.
//!
//! With `c` the number of members written before declared member `k`, `T(k, c)` is the
//! rest of the list after something was written, and `S(k)` the list from member `k`
//! when nothing was:
//!
//! ```text
//! T(k, c) = "," P(k) T(k+1, c+1)               when k is required
//! T(k, c) = "," P(k) T(k+1, c+1) | T(k+1, c)   when k is optional
//! T(n, c) = ("," E){need(c), room(c)}          extra members
//! S(k)    = P(k) T(k+1, 1) [| S(k+1) when k is optional]
//! S(n)    = (E ("," E){need(0)-1, room(0)-1})?
//! ```
//!
//! where an alternative is left out when no count within bounds can follow it. Without
//! `maxProperties`, counts past `minProperties` are one count. Two extra members may
//! share a key (JSON keeps one), so extras count towards `minProperties` once at most:
//! with extras allowed, a `minProperties` above 1 stays validation-only.

use super::Member;
use crate::gbnf::Expr;
use crate::schema::document::Location;
use crate::schema::emit::Emitter;
use crate::schema::ir::ObjectSchema;
use crate::schema::CompileError;

/// The most `T(k, c)` rules a counted chain may take.
const MAX_COUNTED_RULES: u64 = 2_000;

/// The member counts an object's list must respect.
#[derive(Debug, Clone, Copy)]
pub(super) struct Counts {
    min: u64,
    max: Option<u64>,
}

/// The counts the chain must keep, when the structure alone does not keep them and the
/// grammar can; otherwise reports the keywords validation-only (with the reason) and
/// gives `None`.
///
/// # Errors
/// Counts no object of these members can meet.
pub(super) fn counts(
    e: &mut Emitter<'_, '_, '_>,
    object: &ObjectSchema<'_>,
    at: &Location,
    members: &[Member],
    extras: bool,
) -> Result<Option<Counts>, CompileError> {
    let required = members.iter().filter(|m| m.required).count() as u64;
    let most = members.len() as u64;
    let min = object.min_properties.as_ref();
    let max = object.max_properties.as_ref();
    if let Some(min) = min.filter(|min| !extras && min.value > most) {
        return Err(e.unsatisfiable(
            at,
            format!(
                "`minProperties` {} is more than the {most} properties allowed",
                min.value
            ),
        ));
    }
    if let Some(max) = max.filter(|max| max.value < required) {
        return Err(e.unsatisfiable(
            at,
            format!(
                "`maxProperties` {} is fewer than the {required} required properties",
                max.value
            ),
        ));
    }
    // What the structure leaves open.
    let mut min = min.filter(|min| min.value > required);
    let max = max.filter(|max| extras || max.value < most);
    if let Some(over_one) = min.filter(|min| extras && min.value > 1) {
        e.validation_only_at(
            &over_one.at,
            "minProperties",
            "beside extra keys, which may repeat one another's key, a count above 1 is checked after generation",
        )?;
        min = None;
    }
    if min.is_none() && max.is_none() {
        return Ok(None);
    }
    let counts = Counts {
        min: min.map_or(0, |min| min.value),
        max: max.map(|max| max.value),
    };
    let cap = counts.cap();
    if (most + 1).saturating_mul(cap + 1) > MAX_COUNTED_RULES {
        let reason = format!(
            "counting {most} properties up to {cap} would take more than {MAX_COUNTED_RULES} rules; checked after generation"
        );
        for (keyword, written) in [("minProperties", min), ("maxProperties", max)] {
            if let Some(written) = written {
                e.validation_only_at(&written.at, keyword, reason.clone())?;
            }
        }
        return Ok(None);
    }
    Ok(Some(counts))
}

impl Counts {
    /// How many more members are needed after `c`.
    fn need(self, c: u64) -> u64 {
        self.min.saturating_sub(c)
    }

    /// How many more members are allowed after `c` (`None`: any).
    fn room(self, c: u64) -> Option<u64> {
        self.max.map(|max| max.saturating_sub(c))
    }

    /// The count after one more member: past `min` without a `max`, all counts are one.
    fn next(self, c: u64) -> u64 {
        match self.max {
            Some(_) => c + 1,
            None => (c + 1).min(self.min),
        }
    }

    /// The largest count tracked.
    fn cap(self) -> u64 {
        self.max.unwrap_or(self.min)
    }
}

/// The object's member list (between the braces) with its count within `counts`:
/// `S(0)` of the module documentation, with the `T(k, c)` it reaches as rules named
/// `{hint}-count…-{k}-{c}`. `None` when no list fits.
pub(super) fn counted_list(
    e: &mut Emitter<'_, '_, '_>,
    members: &[Member],
    extra: Option<&Expr>,
    counts: Counts,
    hint: &str,
) -> Option<Expr> {
    let comma = e.token(",");
    let (n, cap) = (members.len(), counts.cap() as usize);
    let items = |least: u64, most: Option<u64>, extra: &Expr| {
        repeated(Expr::seq([comma.clone(), extra.clone()]), least, most)
    };
    // T(n, c): the extra members.
    let last: Vec<Option<Expr>> = (0..=cap as u64)
        .map(|c| {
            let (need, room) = (counts.need(c), counts.room(c));
            match extra {
                None => (need == 0).then(Expr::empty),
                // Extra keys may repeat one another's key: they count towards `min` once.
                Some(_) if need > 1 || room.is_some_and(|room| room < need) => None,
                Some(extra) => Some(items(need, room, extra)),
            }
        })
        .collect();
    let room_for_one = |c: usize| counts.room(c as u64).is_none_or(|room| room >= 1);
    let next = |c: usize| counts.next(c as u64) as usize;
    // viable[k][c]: T(k, c) has a text.
    let mut viable = vec![vec![false; cap + 1]; n + 1];
    for (c, tail) in last.iter().enumerate() {
        viable[n][c] = tail.is_some();
    }
    for k in (0..n).rev() {
        for c in 0..=cap {
            viable[k][c] = (room_for_one(c) && viable[k + 1][next(c)])
                || (!members[k].required && viable[k + 1][c]);
        }
    }
    let prefix = e.fresh_prefix(&format!("{hint}-count"));
    let tail = |k: usize, c: usize| -> Expr {
        if k == n {
            last[c].clone().unwrap_or_else(Expr::empty)
        } else {
            let mut name = prefix.clone();
            for number in [k, c] {
                name.push('-');
                crate::gbnf::push_number(&mut name, number as u64);
            }
            Expr::rule(name)
        }
    };
    // S(k) from the last member down, and the T(k, c) its first arms reach.
    let mut reached = vec![vec![false; cap + 1]; n + 1];
    let mut start = last_start(counts, extra, &comma);
    for k in (0..n).rev() {
        let first = (room_for_one(0) && viable[k + 1][next(0)]).then(|| {
            reached[k + 1][next(0)] = true;
            Expr::seq([members[k].expr.clone(), tail(k + 1, next(0))])
        });
        let later = if members[k].required { None } else { start };
        start = match (first, later) {
            (None, None) => None,
            (Some(one), None) | (None, Some(one)) => Some(one),
            (Some(first), Some(later)) => Some(Expr::alt([first, later])),
        };
    }
    // T(k, c) for the (k, c) reached, in order of k; each reaches T(k+1, …).
    let mut rules = Vec::new();
    for k in 0..n {
        for c in 0..=cap {
            if !reached[k][c] {
                continue;
            }
            let mut arms = Vec::with_capacity(2);
            if room_for_one(c) && viable[k + 1][next(c)] {
                reached[k + 1][next(c)] = true;
                arms.push(Expr::seq([
                    comma.clone(),
                    members[k].expr.clone(),
                    tail(k + 1, next(c)),
                ]));
            }
            if !members[k].required && viable[k + 1][c] {
                reached[k + 1][c] = true;
                arms.push(tail(k + 1, c));
            }
            if let Expr::Ref { name, .. } = tail(k, c) {
                rules.push((name.to_string(), Expr::alt(arms)));
            }
        }
    }
    e.add_named_rules_exact(rules);
    start
}

/// `S(n)`: the extra members of an object whose declared members are all left out.
fn last_start(counts: Counts, extra: Option<&Expr>, comma: &Expr) -> Option<Expr> {
    let (need, room) = (counts.need(0), counts.room(0));
    match extra {
        None => (need == 0).then(Expr::empty),
        Some(_) if need > 1 => None,
        Some(_) if room == Some(0) => (need == 0).then(Expr::empty),
        Some(extra) => {
            let rest = repeated(
                Expr::seq([comma.clone(), extra.clone()]),
                0,
                room.map(|room| room - 1),
            );
            let list = Expr::seq([extra.clone(), rest]);
            Some(if need == 0 {
                Expr::repeat(list, 0, Some(1))
            } else {
                list
            })
        }
    }
}

/// `item{least,most}`, or nothing when `most` is 0.
fn repeated(item: Expr, least: u64, most: Option<u64>) -> Expr {
    if most == Some(0) {
        return Expr::empty();
    }
    let bound = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    Expr::repeat(item, bound(least), most.map(bound))
}
