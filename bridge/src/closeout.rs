//! Closing out: the shortest text that completes what has been generated so far.
//!
//! A grammar guarantees structure, not termination: a small model can stay inside one
//! unbounded string until the token budget runs out, and a truncated output is worth
//! nothing. [`Closer`] follows the generated text with an incremental Earley parser over
//! the grammar's flat form (the compiler's shared [`Chart`]) and can say, at any point, which shortest text would complete
//! it. The generator keeps the invariant "tokens generated + tokens of the shortest
//! completion ≤ budget": when the model's next token would break it, the generator
//! appends the completion instead, so a run that starts within budget ends complete.
//!
//! How the shortest completion is found. Each Earley set `j` records which items wait on
//! each nonterminal. `G(j, A)` is the least cost of finishing the whole parse once an `A`
//! that started at `j` is complete: the minimum, over items `B → α • A β` (origin `o`)
//! waiting in set `j`, of `|β| + G(o, B)`, with `G(0, S') = 0` for the augmented start.
//! Sets never change once built, so each `G(j, ·)` is computed once (a small fixed point
//! when `o = j`) and kept. The completion of the text is then the cheapest item of the
//! last set, followed up its chain of argmins; `|β|` and the text for it come from each
//! nonterminal's shortest derivation ([`Flat::min_derivation`]).

use gbnfc_compiler::earley::{Chart, EarleyGrammar, Item};
use gbnfc_compiler::gbnf::{CharSet, Flat, Grammar, Sym, Terminal};
use rustc_hash::FxHashMap;

/// Weight of one character in derivation costs; one production weighs 1, so costs order
/// first by characters, then by productions (which makes shortest derivations acyclic).
const CHAR: u64 = 1 << 20;

/// Flat grammars larger than this (in symbols) are not followed: close-out is skipped.
const MAX_FLAT_SIZE: usize = 2_000_000;

/// Marks "no item": the base of the argmin chain, `G(0, S') = 0`.
const BASE: u32 = u32::MAX;

/// `G(j, ·)` of one set: for each nonterminal waited on there, the cost of finishing the
/// parse once it completes, and the waiting item (index into the set) it goes through.
type Goal = FxHashMap<u32, (u64, u32)>;

/// Follows a generated text through a grammar and tells the shortest text that
/// completes it.
///
/// ```
/// use gbnfc_bridge::closeout::Closer;
/// let g = gbnfc_compiler::gbnf::parse("root ::= \"{\\\"a\\\":[\" [0-9]+ (\",\" [0-9]+)* \"]}\"\n").unwrap();
/// let mut closer = Closer::new(&g).unwrap();
/// assert!(closer.push_str("{\"a\":[12,3"));
/// assert_eq!(closer.completion(100).as_deref(), Some("]}"));
/// assert!(!closer.push_str("x"));
/// ```
#[derive(Clone)]
pub struct Closer {
    grammar: EarleyGrammar,
    /// Least derivation weight of each nonterminal (`None`: derives nothing).
    weight: Vec<Option<u64>>,
    /// The production a shortest derivation of each nonterminal starts with.
    best: Vec<Option<u32>>,
    /// A character each terminal can stand for in a completion.
    example: Vec<Option<char>>,
    chart: Chart,
    /// `G(j, ·)` of each set of the chart, once asked for.
    goals: Vec<Option<Goal>>,
}

impl Closer {
    /// Prepares to follow `grammar` from its empty prefix. `None` when the grammar has no
    /// `root`, references tokens (which a character parser cannot follow), derives
    /// nothing, or is too large to follow cheaply: generation then runs without close-out.
    pub fn new(grammar: &Grammar) -> Option<Closer> {
        let flat = Flat::lower(grammar).ok()?;
        if flat.size() > MAX_FLAT_SIZE
            || flat.terminals.iter().any(|t| matches!(t, Terminal::Token))
        {
            return None;
        }
        let weight = flat.min_derivation(1, CHAR, None);
        weight.get(flat.start? as usize).copied().flatten()?;
        let example: Vec<Option<char>> = flat
            .terminals
            .iter()
            .map(|t| match t {
                Terminal::Chars(set) => example_char(set),
                Terminal::Token => None,
            })
            .collect();
        let mut best = vec![None; flat.nonterminals.len()];
        for (p, production) in flat.productions.iter().enumerate() {
            let lhs = production.lhs as usize;
            if best[lhs].is_some() {
                continue;
            }
            let w = rest_weight(&weight, &example, &production.rhs).map(|w| w.saturating_add(1));
            if w.is_some() && w == weight[lhs] {
                best[lhs] = Some(p as u32);
            }
        }
        let grammar = EarleyGrammar::new(flat)?;
        let chart = Chart::new(&grammar);
        Some(Closer {
            grammar,
            weight,
            best,
            example,
            chart,
            goals: vec![None],
        })
    }

    fn flat(&self) -> &Flat {
        self.grammar.flat()
    }

    /// Characters followed so far.
    pub fn len(&self) -> usize {
        self.chart.len()
    }

    /// `true` before any character has been followed.
    pub fn is_empty(&self) -> bool {
        self.chart.is_empty()
    }

    /// Follows one more character; `false` (and nothing changes) when no text of the
    /// grammar continues this way.
    pub fn push(&mut self, c: char) -> bool {
        let pushed = self.chart.push(&self.grammar, c);
        if pushed {
            self.goals.push(None);
        }
        pushed
    }

    /// Follows every character of `text`; on `false`, the characters before the one that
    /// failed have been followed.
    pub fn push_str(&mut self, text: &str) -> bool {
        text.chars().all(|c| self.push(c))
    }

    /// Forgets everything after the first `len` characters.
    pub fn truncate(&mut self, len: usize) {
        self.chart.truncate(len);
        self.goals.truncate(len + 1);
    }

    /// Is the text followed so far a whole text of the grammar?
    pub fn is_complete(&self) -> bool {
        self.chart.is_complete(&self.grammar)
    }

    /// Can the text followed so far be extended by some character?
    pub fn can_continue(&self) -> bool {
        self.chart.can_continue(&self.grammar)
    }

    /// The shortest text that completes what has been followed (empty when it is already
    /// complete), or `None` when that text would be longer than `max_chars`.
    pub fn completion(&mut self, max_chars: usize) -> Option<String> {
        let k = self.chart.len();
        for j in 0..=k {
            if self.goals[j].is_none() {
                let goal = self.goal(j);
                self.goals[j] = Some(goal);
            }
        }
        // The cheapest item of the last set, and the cost of finishing through it.
        let mut best: Option<(u64, u32)> = None;
        for (index, item) in self.chart.last().items().iter().enumerate() {
            let Some(cost) = self.finish_cost(item) else {
                continue;
            };
            if best.is_none_or(|(b, _)| cost < b) {
                best = Some((cost, index as u32));
            }
        }
        let (cost, index) = best?;
        if (cost / CHAR) as usize > max_chars {
            return None;
        }
        let mut text = String::new();
        // The first item is finished from its dot; every later one is an item that waited
        // on a nonterminal just completed, so it continues after that nonterminal.
        let (mut set, mut index, mut skip) = (k, index, 0usize);
        // Argmins come from strict improvements, so the chain has no cycle; the bound is
        // a guard all the same.
        let sets = self.chart.sets();
        let bound: usize = sets.iter().map(|s| s.items().len()).sum::<usize>() + 1;
        for _ in 0..bound {
            if index == BASE {
                return Some(text);
            }
            let item = *sets[set].items().get(index as usize)?;
            let production = &self.flat().productions[item.production as usize];
            let rest = production.rhs.get(item.dot as usize + skip..)?;
            self.expand(rest, &mut text, max_chars)?;
            let origin = item.origin as usize;
            let (_, next) = *self.goals[origin].as_ref()?.get(&production.lhs)?;
            set = origin;
            index = next;
            skip = 1;
        }
        None
    }

    /// Cost of finishing the parse through `item` of the last set (all goals known).
    fn finish_cost(&self, item: &Item) -> Option<u64> {
        let production = &self.flat().productions[item.production as usize];
        let rest = rest_weight(
            &self.weight,
            &self.example,
            production.rhs.get(item.dot as usize..)?,
        )?;
        let parent = self
            .goals
            .get(item.origin as usize)?
            .as_ref()?
            .get(&production.lhs)?
            .0;
        Some(rest.saturating_add(parent))
    }

    /// `G(j, ·)`: needs the goals of every earlier set.
    fn goal(&self, j: usize) -> Goal {
        let set = &self.chart.sets()[j];
        let mut goal = Goal::default();
        if j == 0 {
            goal.insert(self.grammar.start_nt(), (0, BASE));
        }
        loop {
            let mut changed = false;
            for (nt, indices) in set.waiting() {
                for &index in indices {
                    let item = set.items()[index as usize];
                    let production = &self.flat().productions[item.production as usize];
                    let Some(rest) = production
                        .rhs
                        .get(item.dot as usize + 1..)
                        .and_then(|r| rest_weight(&self.weight, &self.example, r))
                    else {
                        continue;
                    };
                    let origin = item.origin as usize;
                    let parent = if origin == j {
                        goal.get(&production.lhs).map(|&(c, _)| c)
                    } else {
                        self.goals[origin]
                            .as_ref()
                            .and_then(|g| g.get(&production.lhs))
                            .map(|&(c, _)| c)
                    };
                    let Some(parent) = parent else { continue };
                    let cost = rest.saturating_add(parent);
                    let better = goal.get(&nt).is_none_or(|&(c, _)| cost < c);
                    if better {
                        goal.insert(nt, (cost, index));
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        goal
    }

    /// Appends the shortest text of `symbols` to `text`, or `None` past `max_chars`.
    fn expand(&self, symbols: &[Sym], text: &mut String, max_chars: usize) -> Option<()> {
        let mut stack: Vec<Sym> = symbols.iter().rev().copied().collect();
        let mut chars = text.chars().count();
        while let Some(sym) = stack.pop() {
            match sym {
                Sym::T(t) => {
                    text.push((*self.example.get(t as usize)?)?);
                    chars += 1;
                    if chars > max_chars {
                        return None;
                    }
                }
                Sym::Nt(nt) => {
                    let p = (*self.best.get(nt as usize)?)?;
                    stack.extend(
                        self.flat().productions[p as usize]
                            .rhs
                            .iter()
                            .rev()
                            .copied(),
                    );
                }
            }
        }
        Some(())
    }
}

/// Total weight of a sequence of symbols (`None` if some symbol derives nothing).
fn rest_weight(weight: &[Option<u64>], example: &[Option<char>], symbols: &[Sym]) -> Option<u64> {
    let mut total: u64 = 0;
    for sym in symbols {
        let w = match *sym {
            Sym::Nt(nt) => (*weight.get(nt as usize)?)?,
            Sym::T(t) => {
                example.get(t as usize).copied().flatten()?;
                CHAR
            }
        };
        total = total.saturating_add(w);
    }
    Some(total)
}

/// A character to write for a terminal in a completion: a lowercase letter, a digit, an
/// uppercase letter or other printable ASCII when the set has one, else its first member.
fn example_char(set: &CharSet) -> Option<char> {
    let preferred = ('a'..='z')
        .chain('0'..='9')
        .chain('A'..='Z')
        .chain((0x20u8..0x7f).map(char::from));
    if let Some(c) = preferred.into_iter().find(|&c| set.contains(c)) {
        return Some(c);
    }
    if set.is_negated() {
        // The first scalar value outside the excluded ranges.
        let mut next = 0u32;
        for &(lo, hi) in set.ranges() {
            if lo > next {
                break;
            }
            next = next.max(hi.saturating_add(1));
        }
        (next..=0x10FFFF).find_map(char::from_u32)
    } else {
        set.ranges()
            .iter()
            .find_map(|&(lo, hi)| (lo..=hi).find_map(char::from_u32))
    }
}
