//! The member chain of [`super::object`] with what it must keep besides the order: the
//! count of members written ([`super::counts`]) and which members' presence demands
//! others present or absent ([`super::dependencies`]).
//!
//! A node is a position `k` (member `k` is next; `n` is the extra members) and a
//! [`State`]. Member `k` is written or left out, each where the state allows it, and the
//! extra members close the list. Nodes are explored forward from position 0 (at most
//! [`MAX_NODES`]), those from which no list within bounds can end are dropped, and every
//! node reached past position 0 is a rule `{prefix}-{k}-{i}`:
//!
//! ```text
//! N(k, s) = ","? P(k) N(k+1, written(s)) | N(k+1, left_out(s))
//! N(n, s) = the extra members: ("," E){need, room}, or without a comma when nothing
//!           was written yet
//! ```

use rustc_hash::FxHashMap;

use super::counts::Counts;
use super::dependencies::Links;
use super::Member;
use crate::gbnf::Expr;
use crate::schema::emit::Emitter;

/// The most nodes a chain may take.
pub const MAX_NODES: usize = 2_000;

/// What the chain keeps.
pub(super) struct Kept {
    /// The count of members, when it must be kept.
    pub(super) counts: Option<Counts>,
    /// Members whose presence demands others present or absent.
    pub(super) links: Links,
}

/// What the written members so far leave for the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct State {
    /// A member was written (the next needs a comma).
    started: bool,
    /// How many (capped as [`Counts::next`] caps it).
    count: u64,
    /// Later members that must be written (a bit per member).
    must: u64,
    /// Later members that must be left out.
    must_not: u64,
}

/// The nodes of a chain, explored: per position, its states.
pub(super) struct Plan {
    levels: Vec<Vec<State>>,
    /// Per position and state: the state after writing member `k`, and after leaving it
    /// out (indexes into the next level), where allowed.
    moves: Vec<Vec<(Option<usize>, Option<usize>)>>,
}

/// Explores the chain over `members`.
///
/// # Errors
/// More than [`MAX_NODES`] nodes.
pub(super) fn explore(members: &[Member], kept: &Kept) -> Result<Plan, usize> {
    let start = State {
        started: false,
        count: 0,
        must: 0,
        must_not: kept.links.never,
    };
    let mut levels = vec![vec![start]];
    let mut moves = Vec::with_capacity(members.len());
    let mut nodes = 1;
    for (k, member) in members.iter().enumerate() {
        let mut next: Vec<State> = Vec::new();
        let mut index: FxHashMap<State, usize> = FxHashMap::default();
        let mut level_moves = Vec::with_capacity(levels[k].len());
        for &state in &levels[k] {
            let mut place = |state: Option<State>| {
                state.map(|state| {
                    *index.entry(state).or_insert_with(|| {
                        next.push(state);
                        next.len() - 1
                    })
                })
            };
            let written = place(kept.written(k, state));
            let left_out = place(
                (!member.required)
                    .then(|| kept.left_out(k, state))
                    .flatten(),
            );
            level_moves.push((written, left_out));
        }
        nodes += next.len();
        if nodes > MAX_NODES {
            return Err(nodes);
        }
        levels.push(next);
        moves.push(level_moves);
    }
    Ok(Plan { levels, moves })
}

impl Kept {
    /// The state after member `k` is written, if it may be.
    fn written(&self, k: usize, state: State) -> Option<State> {
        if state.must_not & bit(k) != 0 {
            return None;
        }
        let count = match self.counts {
            Some(counts) if counts.room(state.count).is_some_and(|room| room == 0) => return None,
            Some(counts) => counts.next(state.count),
            None => 0,
        };
        let links = &self.links;
        let later = links.later(k);
        settle(
            k,
            State {
                started: true,
                count,
                must: state.must | (links.needs_of(k) & later),
                must_not: state.must_not | (links.excludes_of(k) & later),
            },
        )
    }

    /// The state after member `k` is left out, if it may be.
    fn left_out(&self, k: usize, state: State) -> Option<State> {
        if state.must & bit(k) != 0 {
            return None;
        }
        let links = &self.links;
        settle(
            k,
            State {
                must_not: state.must_not | (links.needed_by(k) & links.later(k)),
                ..state
            },
        )
    }

    /// The extra members that close a list in `state` (`extra` their text), or `None`
    /// when none may.
    fn close(&self, state: State, extra: Option<&Expr>, comma: &Expr) -> Option<Expr> {
        let (need, room) = match self.counts {
            Some(counts) => (counts.need(state.count), counts.room(state.count)),
            None => (0, None),
        };
        let Some(extra) = extra else {
            return (need == 0).then(Expr::empty);
        };
        // Extra keys may repeat one another's key: they count towards `min` once.
        if need > 1 || room.is_some_and(|room| room < need) {
            return None;
        }
        let more = |least: u64, most: Option<u64>| {
            repeated(Expr::seq([comma.clone(), extra.clone()]), least, most)
        };
        if state.started {
            return Some(more(need, room));
        }
        if room == Some(0) {
            return Some(Expr::empty());
        }
        let list = Expr::seq([extra.clone(), more(0, room.map(|room| room - 1))]);
        Some(if need == 0 {
            Expr::repeat(list, 0, Some(1))
        } else {
            list
        })
    }
}

/// Member `k`'s bit (none past 63: only chains of at most 64 members have links).
fn bit(k: usize) -> u64 {
    1u64.checked_shl(k as u32).unwrap_or(0)
}

/// `state` past member `k`: its bits for `k` and earlier cleared; `None` when a later
/// member must be both written and left out.
fn settle(k: usize, mut state: State) -> Option<State> {
    let later = if k >= 63 { 0 } else { !0u64 << (k + 1) };
    state.must &= later;
    state.must_not &= later;
    (state.must & state.must_not == 0).then_some(state)
}

impl Plan {
    /// The member list (between the braces): the root node's text, with the nodes it
    /// reaches added to `e` as rules. `None` when no list fits.
    pub(super) fn write(
        &self,
        e: &mut Emitter<'_, '_, '_>,
        members: &[Member],
        extra: Option<&Expr>,
        kept: &Kept,
        hint: &str,
    ) -> Option<Expr> {
        let comma = e.token(",");
        let n = members.len();
        let closes: Vec<Option<Expr>> = self.levels[n]
            .iter()
            .map(|&state| kept.close(state, extra, &comma))
            .collect();
        // viable[k][i]: a list can end from node (k, i).
        let mut viable: Vec<Vec<bool>> = vec![Vec::new(); n + 1];
        viable[n] = closes.iter().map(Option::is_some).collect();
        for k in (0..n).rev() {
            viable[k] = self.moves[k]
                .iter()
                .map(|&(written, left_out)| {
                    [written, left_out]
                        .into_iter()
                        .flatten()
                        .any(|j| viable[k + 1][j])
                })
                .collect();
        }
        if !viable[0][0] {
            return None;
        }
        let prefix = e.fresh_prefix(&format!("{hint}-chain"));
        let node = |k: usize, i: usize| -> Expr {
            if k == n {
                closes[i].clone().unwrap_or_else(Expr::empty)
            } else {
                let mut name = prefix.clone();
                for number in [k, i] {
                    name.push('-');
                    crate::gbnf::push_number(&mut name, number as u64);
                }
                Expr::rule(name)
            }
        };
        let mut reached: Vec<Vec<bool>> =
            self.levels.iter().map(|l| vec![false; l.len()]).collect();
        reached[0][0] = true;
        let mut root = Expr::empty();
        let mut rules = Vec::new();
        for k in 0..n {
            for (i, &(written, left_out)) in self.moves[k].iter().enumerate() {
                if !reached[k][i] || !viable[k][i] {
                    continue;
                }
                let mut arms = Vec::with_capacity(2);
                if let Some(j) = written.filter(|&j| viable[k + 1][j]) {
                    reached[k + 1][j] = true;
                    let comma = if self.levels[k][i].started {
                        comma.clone()
                    } else {
                        Expr::empty()
                    };
                    arms.push(Expr::seq([comma, members[k].expr.clone(), node(k + 1, j)]));
                }
                if let Some(j) = left_out.filter(|&j| viable[k + 1][j]) {
                    reached[k + 1][j] = true;
                    arms.push(node(k + 1, j));
                }
                let body = Expr::alt(arms);
                match node(k, i) {
                    _ if k == 0 => root = body,
                    Expr::Ref { name, .. } => rules.push((name.to_string(), body)),
                    _ => {}
                }
            }
        }
        if n == 0 {
            root = node(0, 0);
        }
        e.add_named_rules_exact(rules);
        Some(root)
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
