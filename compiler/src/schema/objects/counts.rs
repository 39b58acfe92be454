//! `minProperties` / `maxProperties`: the counts the member chain
//! ([`super::chain`]) must keep, when the structure alone does not keep them.
//!
//! Two extra members may share a key (JSON keeps one), so extras count towards
//! `minProperties` once at most: with extras allowed, a `minProperties` above 1 stays
//! validation-only.

use super::Member;
use crate::schema::document::Location;
use crate::schema::emit::Emitter;
use crate::schema::ir::ObjectSchema;
use crate::schema::CompileError;

/// Keywords the chain keeps, each with its place.
pub(super) type Places = Vec<(&'static str, Location)>;

/// The member counts an object's list must respect.
#[derive(Debug, Clone, Copy)]
pub(super) struct Counts {
    /// At least this many members.
    pub(super) min: u64,
    /// At most this many.
    pub(super) max: Option<u64>,
}

/// The counts the chain must keep, when the structure alone does not keep them and the
/// grammar can (with the places of the keywords kept); otherwise reports the keywords
/// validation-only (with the reason) and gives `None`.
///
/// # Errors
/// Counts no object of these members can meet.
pub(super) fn counts(
    e: &mut Emitter<'_, '_, '_>,
    object: &ObjectSchema<'_>,
    at: &Location,
    members: &[Member],
    extras: bool,
) -> Result<(Option<Counts>, Places), CompileError> {
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
        return Ok((None, Vec::new()));
    }
    let counts = Counts {
        min: min.map_or(0, |min| min.value),
        max: max.map(|max| max.value),
    };
    let places = [("minProperties", min), ("maxProperties", max)]
        .into_iter()
        .filter_map(|(keyword, written)| Some((keyword, written?.at.clone())))
        .collect();
    Ok((Some(counts), places))
}

impl Counts {
    /// How many more members are needed after `c`.
    pub(super) fn need(self, c: u64) -> u64 {
        self.min.saturating_sub(c)
    }

    /// How many more members are allowed after `c` (`None`: any).
    pub(super) fn room(self, c: u64) -> Option<u64> {
        self.max.map(|max| max.saturating_sub(c))
    }

    /// The count after one more member: past `min` without a `max`, all counts are one.
    pub(super) fn next(self, c: u64) -> u64 {
        match self.max {
            Some(_) => c + 1,
            None => (c + 1).min(self.min),
        }
    }
}
