//! The Earley chart that [`crate::recognize`] and the bridge's close-out both follow texts
//! with: one implementation of prediction, completion and scanning over a grammar's flat
//! form ([`crate::gbnf::flat`]), over Unicode scalar values.
//!
//! Earley parsing handles every context-free grammar — ambiguous ones, nullable rules
//! (with Aycock and Horspool's fix: predicting a nullable nonterminal also steps over it,
//! so an item that completes where it started needs no completion step of its own) and
//! left recursion — with no recursion of its own, so neither deep grammars nor deeply
//! nested texts can overflow the stack.
//!
//! Invariants:
//! - set `i` of a [`Chart`] holds every item that is valid after the first `i` characters,
//!   closed under prediction and completion; a set never changes once built, so readers
//!   (the close-out's cost tables) may keep facts about it until [`Chart::truncate`];
//! - [`EarleySet::waiting_on`] lists, by index into [`EarleySet::items`], the items whose
//!   dot is before a given nonterminal;
//! - token terminals (`<[123]>`) match no character: they are opaque at this level.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::gbnf::{Flat, Sym, Terminal};

/// A flat grammar prepared for Earley parsing: the augmented start `S' → root` and which
/// nonterminals derive the empty text.
#[derive(Debug, Clone)]
pub struct EarleyGrammar {
    flat: Flat,
    nullable: Vec<bool>,
    start_nt: u32,
    start_production: u32,
}

impl EarleyGrammar {
    /// Prepares `flat`; `None` when it has no start (no `root` rule).
    pub fn new(flat: Flat) -> Option<EarleyGrammar> {
        let start_nt = flat.start?;
        let start_production = *flat.by_lhs.get(start_nt as usize)?.first()?;
        let nullable = flat.nullable();
        Some(EarleyGrammar {
            flat,
            nullable,
            start_nt,
            start_production,
        })
    }

    /// The flat grammar parsed over.
    pub fn flat(&self) -> &Flat {
        &self.flat
    }

    /// The augmented start nonterminal `S'`.
    pub fn start_nt(&self) -> u32 {
        self.start_nt
    }

    /// The symbol after `item`'s dot, if any.
    pub fn next_symbol(&self, item: &Item) -> Option<Sym> {
        self.flat.productions[item.production as usize]
            .rhs
            .get(item.dot as usize)
            .copied()
    }
}

/// An Earley item: a production, how much of its right-hand side has been matched, and
/// the set (character position) where it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Item {
    /// Index into [`Flat::productions`].
    pub production: u32,
    /// How many symbols of the right-hand side are matched.
    pub dot: u32,
    /// The position where the production started.
    pub origin: u32,
}

/// One Earley set: its items, and for completion, the items waiting on each nonterminal.
#[derive(Debug, Default, Clone)]
pub struct EarleySet {
    items: Vec<Item>,
    waiting: FxHashMap<u32, Vec<u32>>,
}

impl EarleySet {
    /// The set's items, in the order they were added.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// Every nonterminal some item waits on here, with those items (indices into
    /// [`EarleySet::items`]).
    pub fn waiting(&self) -> impl Iterator<Item = (u32, &[u32])> {
        self.waiting
            .iter()
            .map(|(&nt, items)| (nt, items.as_slice()))
    }

    /// The items (indices into [`EarleySet::items`]) whose dot is before `nt`.
    pub fn waiting_on(&self, nt: u32) -> &[u32] {
        self.waiting.get(&nt).map_or(&[], Vec::as_slice)
    }
}

/// The Earley sets of a text followed so far: set `i` is the state after `i` characters.
#[derive(Debug, Clone)]
pub struct Chart {
    sets: Vec<EarleySet>,
}

impl Chart {
    /// The chart of the empty text.
    pub fn new(grammar: &EarleyGrammar) -> Chart {
        let mut chart = Chart { sets: Vec::new() };
        let first = vec![Item {
            production: grammar.start_production,
            dot: 0,
            origin: 0,
        }];
        let set = chart.close(grammar, first);
        chart.sets.push(set);
        chart
    }

    /// Characters followed so far.
    pub fn len(&self) -> usize {
        self.sets.len() - 1
    }

    /// `true` before any character has been followed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every set, from the empty prefix on.
    pub fn sets(&self) -> &[EarleySet] {
        &self.sets
    }

    /// The set after the last character followed.
    pub fn last(&self) -> &EarleySet {
        &self.sets[self.sets.len() - 1]
    }

    /// Follows one more character; `false` (and nothing changes) when no text of the
    /// grammar continues this way.
    pub fn push(&mut self, grammar: &EarleyGrammar, c: char) -> bool {
        let scanned: Vec<Item> = self
            .last()
            .items
            .iter()
            .filter(|item| match grammar.next_symbol(item) {
                Some(Sym::T(t)) => match &grammar.flat.terminals[t as usize] {
                    Terminal::Chars(set) => set.contains(c),
                    Terminal::Token => false,
                },
                _ => false,
            })
            .map(|item| Item {
                dot: item.dot + 1,
                ..*item
            })
            .collect();
        if scanned.is_empty() {
            return false;
        }
        let set = self.close(grammar, scanned);
        self.sets.push(set);
        true
    }

    /// Forgets everything after the first `len` characters.
    pub fn truncate(&mut self, len: usize) {
        self.sets.truncate(len + 1);
    }

    /// Is the text followed so far a whole text of the grammar?
    pub fn is_complete(&self, grammar: &EarleyGrammar) -> bool {
        self.last().items.iter().any(|item| {
            item.production == grammar.start_production && item.dot == 1 && item.origin == 0
        })
    }

    /// Can the text followed so far be extended by some character?
    pub fn can_continue(&self, grammar: &EarleyGrammar) -> bool {
        self.last()
            .items
            .iter()
            .any(|item| matches!(grammar.next_symbol(item), Some(Sym::T(_))))
    }

    /// The set at the next position, built from `kernel` by prediction and completion to
    /// a fixed point.
    fn close(&self, grammar: &EarleyGrammar, kernel: Vec<Item>) -> EarleySet {
        let position = self.sets.len() as u32;
        let mut set = EarleySet::default();
        let mut seen: FxHashSet<Item> = FxHashSet::default();
        let mut add = |set: &mut EarleySet, item: Item| {
            if seen.insert(item) {
                set.items.push(item);
            }
        };
        for item in kernel {
            add(&mut set, item);
        }
        let mut predicted: FxHashSet<u32> = FxHashSet::default();
        let mut k = 0;
        while k < set.items.len() {
            let item = set.items[k];
            let index = k as u32;
            k += 1;
            match grammar.next_symbol(&item) {
                None => {
                    if item.origin == position {
                        // An empty derivation: the nullable step already advanced its parents.
                        continue;
                    }
                    let lhs = grammar.flat.productions[item.production as usize].lhs;
                    let origin = &self.sets[item.origin as usize];
                    for &parent in origin.waiting_on(lhs) {
                        let parent = origin.items[parent as usize];
                        add(
                            &mut set,
                            Item {
                                dot: parent.dot + 1,
                                ..parent
                            },
                        );
                    }
                }
                Some(Sym::Nt(nt)) => {
                    set.waiting.entry(nt).or_default().push(index);
                    if predicted.insert(nt) {
                        for &p in &grammar.flat.by_lhs[nt as usize] {
                            add(
                                &mut set,
                                Item {
                                    production: p,
                                    dot: 0,
                                    origin: position,
                                },
                            );
                        }
                    }
                    if grammar.nullable[nt as usize] {
                        add(
                            &mut set,
                            Item {
                                dot: item.dot + 1,
                                ..item
                            },
                        );
                    }
                }
                Some(Sym::T(_)) => {}
            }
        }
        set
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::gbnf::parse;

    fn grammar(text: &str) -> EarleyGrammar {
        EarleyGrammar::new(Flat::lower(&parse(text).unwrap()).unwrap()).unwrap()
    }

    #[test]
    fn follows_left_recursion_and_nullable_rules() {
        let g = grammar("root ::= list\nlist ::= list \",\" item | item\nitem ::= [a-z]* \n");
        let mut chart = Chart::new(&g);
        assert!(chart.is_complete(&g), "an empty item is a whole text");
        for c in "ab,,c".chars() {
            assert!(chart.push(&g, c));
        }
        assert!(chart.is_complete(&g));
        assert!(!chart.push(&g, '!'));
        assert_eq!(chart.len(), 5, "a refused character changes nothing");
        chart.truncate(2);
        assert!(chart.is_complete(&g) && chart.can_continue(&g));
        assert!(chart.push(&g, ','));
        assert!(chart.is_complete(&g), "\"ab,\" ends with an empty item");
        assert_eq!(chart.len(), 3);
    }

    #[test]
    fn completes_only_at_the_end_of_a_required_suffix() {
        let g = grammar("root ::= \"(\" root \")\" | \"x\"\n");
        let mut chart = Chart::new(&g);
        for c in "((x)".chars() {
            assert!(chart.push(&g, c));
        }
        assert!(!chart.is_complete(&g) && chart.can_continue(&g));
        assert!(chart.push(&g, ')'));
        assert!(chart.is_complete(&g) && !chart.can_continue(&g));
    }
}
