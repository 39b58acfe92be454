//! `dependentRequired`, and the entries of `dependencies` / `dependentSchemas` that only
//! name properties present or absent ([`Dependency`]): the links the member chain
//! ([`super::chain`]) keeps between members.
//!
//! A link names members only. A name no member has is present only as an extra key: with
//! extra keys allowed the grammar cannot tell, and the keyword stays validation-only;
//! without them the name is never present, so an entry about it asks nothing, and an
//! entry that needs it keeps its own key out.

use super::counts::Places;
use super::Member;
use crate::schema::emit::Emitter;
use crate::schema::ir::{Dependency, ObjectSchema};
use crate::schema::CompileError;

/// The most members a chain with links may have (a bit each).
const MAX_LINKED_MEMBERS: usize = 64;

/// Per member, the members its presence demands present or absent.
#[derive(Debug, Default)]
pub(super) struct Links {
    /// Members each member needs present.
    needs: Vec<u64>,
    /// Members that cannot be present beside each member (both ways).
    excludes: Vec<u64>,
    /// Members never present.
    pub(super) never: u64,
}

impl Links {
    /// The members member `k` needs present.
    pub(super) fn needs_of(&self, k: usize) -> u64 {
        self.needs.get(k).copied().unwrap_or(0)
    }

    /// The members that cannot be present beside member `k`.
    pub(super) fn excludes_of(&self, k: usize) -> u64 {
        self.excludes.get(k).copied().unwrap_or(0)
    }

    /// The members that need member `k`.
    pub(super) fn needed_by(&self, k: usize) -> u64 {
        let bit = 1u64.checked_shl(k as u32).unwrap_or(0);
        self.needs
            .iter()
            .enumerate()
            .filter(|(_, needs)| *needs & bit != 0)
            .fold(0, |all, (j, _)| all | (1 << j))
    }

    /// The members after member `k`.
    pub(super) fn later(&self, k: usize) -> u64 {
        (!0u64).checked_shl(k as u32 + 1).unwrap_or(0)
    }

    /// Whether the links ask anything.
    fn any(&self) -> bool {
        self.never != 0
            || self
                .needs
                .iter()
                .chain(&self.excludes)
                .any(|&bits| bits != 0)
    }
}

/// The links of the dependency keywords the grammar can keep over `members` (`extras`:
/// extra keys are allowed), with the places of the keywords they come from; the others
/// are reported validation-only, with the reason.
///
/// # Errors
/// As [`Emitter::validation_only_at`] (under `strict`).
pub(super) fn links(
    e: &mut Emitter<'_, '_, '_>,
    object: &ObjectSchema<'_>,
    members: &[Member],
    extras: bool,
) -> Result<(Links, Places), CompileError> {
    let mut links = Links {
        needs: vec![0; members.len().min(MAX_LINKED_MEMBERS)],
        excludes: vec![0; members.len().min(MAX_LINKED_MEMBERS)],
        never: 0,
    };
    let mut kept = Vec::new();
    for written in &object.dependencies {
        let keyword = written.value.keyword;
        let reason = match &written.value.entries {
            None => Some("a dependency schema with keywords other than `required` and `not: {\"required\": [name]}` is checked after generation"),
            Some(_) if members.len() > MAX_LINKED_MEMBERS => Some("dependencies among more than 64 properties are checked after generation"),
            Some(entries) => {
                let mut trial = Links {
                    needs: links.needs.clone(),
                    excludes: links.excludes.clone(),
                    never: links.never,
                };
                let all = entries.iter().all(|entry| link(&mut trial, entry, members, extras));
                if all {
                    links = trial;
                    kept.push((keyword, written.at.clone()));
                    None
                } else {
                    Some("a dependency naming a property that is not declared, beside extra keys, is checked after generation")
                }
            }
        };
        if let Some(reason) = reason {
            e.validation_only_at(&written.at, keyword, reason)?;
        }
    }
    if !links.any() {
        kept.clear();
    }
    Ok((links, kept))
}

/// Adds `entry`'s links; `false` when it names a property only an extra key can be.
fn link(links: &mut Links, entry: &Dependency<'_>, members: &[Member], extras: bool) -> bool {
    let index = |name: &str| members.iter().position(|m| m.name == name);
    let Some(key) = index(entry.key) else {
        // Present only as an extra key.
        return !extras;
    };
    for &name in &entry.present {
        match index(name) {
            Some(j) => links.needs[key] |= 1 << j,
            None if extras => return false,
            None => links.never |= 1 << key,
        }
    }
    for &name in &entry.absent {
        match index(name) {
            Some(j) if j == key => links.never |= 1 << key,
            Some(j) => {
                links.excludes[key] |= 1 << j;
                links.excludes[j] |= 1 << key;
            }
            None if extras => return false,
            None => {}
        }
    }
    true
}
