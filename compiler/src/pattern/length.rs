//! A `pattern` together with `minLength` / `maxLength`: the pattern's automaton over
//! characters crossed with a count of characters.
//!
//! The pattern's branches ([`expand`]) become one Thompson NFA over classes of characters
//! (an unanchored end loops on any character, as search semantics wants); the classes are
//! cut into disjoint *atoms* (intervals of scalar values no class boundary falls inside),
//! and subset construction gives a DFA over the atoms. Its product with the count
//! (`0..=maxLength`, or capped at `minLength` without a maximum) is minimized and written
//! by [`crate::automaton`], each transition as the canonical spelling of its characters
//! ([`chars_expr`]).

use regex_syntax::hir::{self, Hir, HirKind};
use rustc_hash::FxHashMap;

use super::ecma::{to_regex_syntax, unsupported};
use super::lower::{class_ranges, expand};
use super::{parser, syntax_error, PatternError};
use crate::automaton::{self, AutomatonError, RuleSet};
use crate::json_text::chars_expr;

/// The most NFA states a pattern may take.
const MAX_NFA: usize = 4_000;
/// The most atoms (disjoint character intervals).
const MAX_ATOMS: usize = 256;
/// The most DFA states, before the count.
const MAX_DFA: usize = 2_000;
/// The most states of the product with the count.
const MAX_PRODUCT: usize = 30_000;
/// The most transitions the product's table may hold (states × atoms). Minimizing takes
/// a pass over the table per count (up to [`MAX_COUNTED_LENGTH`] passes): at 300,000 that
/// is well under a second (a table of 60,000 chained states over 2 atoms timed the fuzzer
/// out at 30 s).
const MAX_TABLE: usize = 300_000;
/// The most rules written.
const MAX_RULES: usize = 2_000;
/// The most grammar text the rules may take: a pattern of large classes (`\S`, `\s`,
/// spelled with their escapes) under a long count grew a 4.8 KB grammar to 1.4 MB (and
/// past llguidance's 65,000 symbols); a class under `maxLength: 255` takes about 10 KB.
const MAX_TEXT: usize = 40_000;

/// The largest length counted. The product writes a chain of about this many rules, and
/// engines read rule chains recursively: llguidance's Lark reader overflowed a 2 MB
/// thread stack on the 1,024-rule chain of `maxLength: 1024` (a corpus schema) and read
/// 400 fine, so past this the lengths stay with validation.
const MAX_COUNTED_LENGTH: u64 = 256;

/// Every character (scalar value).
const ANY: [(u32, u32); 2] = [(0, 0xD7FF), (0xE000, 0x10FFFF)];

/// The contents of JSON strings (between the quotes, canonically spelled) that `pattern`
/// matches (search semantics) and whose length in characters is `min..=max`, as rules
/// named `{prefix}-{n}`.
///
/// # Errors
/// As [`super::pattern_expr`]; [`PatternError::Empty`] when no such string exists;
/// [`PatternError::Unsupported`] when an automaton grows past its limit (the pattern's
/// NFA, its DFA, the product with the count, or 2,000 rules).
pub fn pattern_with_length(
    pattern: &str,
    min: u64,
    max: Option<u64>,
    prefix: &str,
) -> Result<RuleSet, PatternError> {
    if max.unwrap_or(min) > MAX_COUNTED_LENGTH {
        return Err(unsupported(format!(
            "lengths above {MAX_COUNTED_LENGTH} beside a pattern"
        )));
    }
    let translated = to_regex_syntax(pattern)?;
    let hir = parser().parse(&translated).map_err(syntax_error)?;
    let mut nfa = Nfa::default();
    let start = nfa.state()?;
    let accept = nfa.state()?;
    for branch in expand(&hir)? {
        let mut at = nfa.state()?;
        nfa.eps[start].push(at);
        if !branch.start {
            nfa.any_loop(at);
        }
        for item in &branch.items {
            at = nfa.build(item, at)?;
        }
        if !branch.end {
            nfa.any_loop(at);
        }
        nfa.eps[at].push(accept);
    }
    let atoms = Atoms::of(&nfa.classes)?;
    let dfa = Dfa::of(&nfa, &atoms, start, accept)?;

    // The product with the count of characters.
    let cap = max.unwrap_or(min);
    let next = |count: u64| match max {
        Some(_) => count + 1,
        None => (count + 1).min(min),
    };
    let table = automaton::explore(
        (0u32, 0u64),
        atoms.ranges.len(),
        |(state, count), atom| {
            if count >= cap && max.is_some() {
                return None;
            }
            let target = dfa.trans[state as usize][atom];
            (target != NO_STATE).then(|| (target, next(count)))
        },
        |(state, count)| dfa.accepting[state as usize] && count >= min,
        MAX_PRODUCT.min(MAX_TABLE / atoms.ranges.len().max(1)),
    )
    .map_err(too_large)?;
    let label = |symbols: &[usize]| {
        let ranges: Vec<(u32, u32)> = symbols.iter().map(|&a| atoms.ranges[a]).collect();
        chars_expr(&ranges).unwrap_or_else(crate::gbnf::Expr::empty)
    };
    let set = automaton::write(table, prefix, label, MAX_RULES).map_err(|error| match error {
        AutomatonError::Empty => PatternError::Empty,
        other => too_large(other),
    })?;
    let size: usize = set
        .rules
        .iter()
        .map(|(_, body)| body.to_string().len())
        .sum();
    if size > MAX_TEXT {
        return Err(unsupported(format!(
            "the pattern and the lengths together take more than {} KB of grammar",
            MAX_TEXT / 1000
        )));
    }
    Ok(set)
}

fn too_large(_: AutomatonError) -> PatternError {
    unsupported("the pattern and the lengths together need too large an automaton")
}

/// No state.
const NO_STATE: u32 = u32::MAX;

/// A Thompson NFA: per state, its empty moves and its moves on a class (by index into
/// `classes`).
#[derive(Default)]
struct Nfa {
    eps: Vec<Vec<usize>>,
    moves: Vec<Vec<(usize, usize)>>,
    classes: Vec<Vec<(u32, u32)>>,
    /// The class of any character, once made.
    any: Option<usize>,
}

impl Nfa {
    fn state(&mut self) -> Result<usize, PatternError> {
        if self.eps.len() >= MAX_NFA {
            return Err(unsupported(format!(
                "a pattern of more than {MAX_NFA} automaton states beside lengths"
            )));
        }
        self.eps.push(Vec::new());
        self.moves.push(Vec::new());
        Ok(self.eps.len() - 1)
    }

    fn class(&mut self, ranges: Vec<(u32, u32)>) -> usize {
        self.classes.push(ranges);
        self.classes.len() - 1
    }

    /// `at` loops on any character.
    fn any_loop(&mut self, at: usize) {
        let any = match self.any {
            Some(any) => any,
            None => {
                let any = self.class(ANY.to_vec());
                self.any = Some(any);
                any
            }
        };
        self.moves[at].push((any, at));
    }

    /// The states for `h` from `from`; returns its end, a new state with no moves.
    fn build(&mut self, h: &Hir, from: usize) -> Result<usize, PatternError> {
        match h.kind() {
            HirKind::Empty => self.joined(from),
            HirKind::Literal(hir::Literal(bytes)) => {
                let text = std::str::from_utf8(bytes)
                    .map_err(|_| unsupported("a literal that is not UTF-8"))?;
                let mut at = from;
                for c in text.chars() {
                    let class = self.class(vec![(u32::from(c), u32::from(c))]);
                    let to = self.state()?;
                    self.moves[at].push((class, to));
                    at = to;
                }
                self.joined(at)
            }
            HirKind::Class(class) => {
                let class = self.class(class_ranges(class)?);
                let to = self.state()?;
                self.moves[from].push((class, to));
                Ok(to)
            }
            HirKind::Look(look) => Err(unsupported(format!("assertion {look:?}"))),
            HirKind::Capture(capture) => self.build(&capture.sub, from),
            HirKind::Concat(items) => {
                let mut at = from;
                for item in items {
                    at = self.build(item, at)?;
                }
                Ok(at)
            }
            HirKind::Alternation(arms) => {
                let to = self.state()?;
                for arm in arms {
                    let end = self.build(arm, from)?;
                    self.eps[end].push(to);
                }
                Ok(to)
            }
            HirKind::Repetition(repetition) => {
                // A fresh entry: a loop back to `from` would let its other moves follow.
                let mut at = self.joined(from)?;
                for _ in 0..repetition.min {
                    at = self.build(&repetition.sub, at)?;
                }
                let to = self.state()?;
                self.eps[at].push(to);
                match repetition.max {
                    None => {
                        let again = self.build(&repetition.sub, at)?;
                        self.eps[again].push(at);
                    }
                    Some(max) => {
                        for _ in repetition.min..max {
                            at = self.build(&repetition.sub, at)?;
                            self.eps[at].push(to);
                        }
                    }
                }
                Ok(to)
            }
        }
    }

    /// A new state reached from `from` by an empty move.
    fn joined(&mut self, from: usize) -> Result<usize, PatternError> {
        let to = self.state()?;
        self.eps[from].push(to);
        Ok(to)
    }

    /// `states` and every state their empty moves reach, sorted.
    fn closure(&self, mut states: Vec<usize>) -> Vec<usize> {
        let mut seen = vec![false; self.eps.len()];
        let mut stack = states.clone();
        for &s in &states {
            seen[s] = true;
        }
        while let Some(s) = stack.pop() {
            for &t in &self.eps[s] {
                if !seen[t] {
                    seen[t] = true;
                    states.push(t);
                    stack.push(t);
                }
            }
        }
        states.sort_unstable();
        states.dedup();
        states
    }
}

/// Disjoint intervals of characters, and each class as the atoms it holds.
struct Atoms {
    ranges: Vec<(u32, u32)>,
    of_class: Vec<Vec<usize>>,
}

impl Atoms {
    fn of(classes: &[Vec<(u32, u32)>]) -> Result<Atoms, PatternError> {
        // Ranges of chars may span the surrogates, which are no characters: cut them out.
        let mut cuts: Vec<u32> = classes
            .iter()
            .flatten()
            .flat_map(|&(lo, hi)| [lo, hi + 1])
            .chain([0xD800, 0xE000])
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        // The intervals between cuts that some class covers.
        let covered = |lo: u32, hi: u32| classes.iter().flatten().any(|&(a, b)| a <= lo && hi <= b);
        let ranges: Vec<(u32, u32)> = cuts
            .windows(2)
            .map(|w| (w[0], w[1] - 1))
            .filter(|&(lo, hi)| !(0xD800..0xE000).contains(&lo) && covered(lo, hi))
            .collect();
        if ranges.len() > MAX_ATOMS {
            return Err(unsupported(format!(
                "a pattern of more than {MAX_ATOMS} distinct character sets beside lengths"
            )));
        }
        let of_class = classes
            .iter()
            .map(|class| {
                ranges
                    .iter()
                    .enumerate()
                    .filter(|(_, &(lo, hi))| class.iter().any(|&(a, b)| a <= lo && hi <= b))
                    .map(|(i, _)| i)
                    .collect()
            })
            .collect();
        Ok(Atoms { ranges, of_class })
    }
}

/// The subset construction's DFA over atoms.
struct Dfa {
    trans: Vec<Vec<u32>>,
    accepting: Vec<bool>,
}

impl Dfa {
    fn of(nfa: &Nfa, atoms: &Atoms, start: usize, accept: usize) -> Result<Dfa, PatternError> {
        let first = nfa.closure(vec![start]);
        let mut index: FxHashMap<Vec<usize>, u32> = FxHashMap::default();
        index.insert(first.clone(), 0);
        let mut sets = vec![first];
        let mut trans: Vec<Vec<u32>> = Vec::new();
        while let Some(set) = sets.get(trans.len()) {
            let mut targets: Vec<Vec<usize>> = vec![Vec::new(); atoms.ranges.len()];
            for &s in set {
                for &(class, to) in &nfa.moves[s] {
                    for &atom in &atoms.of_class[class] {
                        targets[atom].push(to);
                    }
                }
            }
            let mut row = vec![NO_STATE; atoms.ranges.len()];
            for (atom, target) in targets.into_iter().enumerate() {
                if target.is_empty() {
                    continue;
                }
                let target = nfa.closure(target);
                row[atom] = match index.get(&target) {
                    Some(&id) => id,
                    None => {
                        if sets.len() >= MAX_DFA {
                            return Err(unsupported(format!(
                                "a pattern of more than {MAX_DFA} automaton states beside lengths"
                            )));
                        }
                        let id = sets.len() as u32;
                        index.insert(target.clone(), id);
                        sets.push(target);
                        id
                    }
                };
            }
            trans.push(row);
        }
        let accepting = sets
            .iter()
            .map(|set| set.binary_search(&accept).is_ok())
            .collect();
        Ok(Dfa { trans, accepting })
    }
}
