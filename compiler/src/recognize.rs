//! Does a grammar accept a text? An Earley recognizer over Unicode scalar values.
//!
//! Earley parsing handles every context-free grammar — ambiguous ones, nullable rules
//! (with Aycock and Horspool's fix: predicting a nullable nonterminal also steps over it)
//! and left recursion — with no recursion of its own, so neither deep grammars nor deeply
//! nested texts can overflow the stack. Unbounded repetitions are lowered
//! left-recursively (see [`crate::gbnf::flat`]), which keeps `x*` over long texts linear.
//!
//! Token references (`<[123]>`) match no characters: they are opaque at this level.

use rustc_hash::{FxHashMap, FxHashSet};
use thiserror::Error;

use crate::gbnf::{Flat, Grammar, LowerError, Sym, Terminal};

/// Why a grammar cannot be recognized against.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum RecognizeError {
    /// The grammar has no `root` rule.
    #[error("the grammar has no `root` rule")]
    NoRoot,
    /// The grammar could not be lowered.
    #[error(transparent)]
    Lower(#[from] LowerError),
}

/// The outcome of recognizing one text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recognition {
    /// The whole text is in the grammar's language.
    pub accepted: bool,
    /// Byte length of the longest prefix that some accepted text starts with: where the
    /// text first goes wrong. Equals the text's length when it is accepted or merely
    /// incomplete.
    pub viable_prefix: usize,
    /// Byte length of the longest prefix that is itself accepted, if any.
    pub longest_match: Option<usize>,
}

/// A grammar prepared for recognition; reuse it for many texts.
#[derive(Debug, Clone)]
pub struct Recognizer {
    flat: Flat,
    nullable: Vec<bool>,
    /// The production `S' → root`.
    start: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Item {
    production: u32,
    dot: u32,
    origin: u32,
}

/// One Earley set: its items, and for completion, the items waiting on each nonterminal.
#[derive(Default)]
struct EarleySet {
    items: Vec<Item>,
    seen: FxHashSet<Item>,
    waiting: FxHashMap<u32, Vec<Item>>,
}

impl EarleySet {
    fn add(&mut self, item: Item) {
        add(&mut self.items, &mut self.seen, item);
    }
}

/// Adds `item` to a set's `items` unless `seen` holds it already.
fn add(items: &mut Vec<Item>, seen: &mut FxHashSet<Item>, item: Item) {
    if seen.insert(item) {
        items.push(item);
    }
}

impl Recognizer {
    /// Prepares `grammar` (which should pass [`crate::gbnf::check()`]).
    ///
    /// # Errors
    /// No `root` rule, or a grammar too large to lower.
    pub fn new(grammar: &Grammar) -> Result<Self, RecognizeError> {
        let flat = Flat::lower(grammar)?;
        let start_nt = flat.start.ok_or(RecognizeError::NoRoot)?;
        let start = flat.by_lhs[start_nt as usize][0];
        let nullable = flat.nullable();
        Ok(Recognizer {
            flat,
            nullable,
            start,
        })
    }

    /// Recognizes `text`.
    ///
    /// ```
    /// use gbnfc_compiler::{gbnf::parse, recognize::Recognizer};
    /// let g = parse("root ::= \"[\" [0-9]+ \"]\"\n").unwrap();
    /// let r = Recognizer::new(&g).unwrap();
    /// assert!(r.recognize("[42]").accepted);
    /// let miss = r.recognize("[4x]");
    /// assert!(!miss.accepted);
    /// assert_eq!(miss.viable_prefix, 2); // "[4" could still become a match
    /// ```
    pub fn recognize(&self, text: &str) -> Recognition {
        let mut sets: Vec<EarleySet> = Vec::new();
        let mut current = EarleySet::default();
        current.add(Item {
            production: self.start,
            dot: 0,
            origin: 0,
        });
        let mut longest_match = None;
        let mut chars = text.char_indices().peekable();
        let mut position: u32 = 0;
        loop {
            let next_char = chars.peek().copied();
            let mut next = EarleySet::default();
            self.process(
                &mut current,
                &sets,
                position,
                next_char.map(|(_, c)| c),
                &mut next,
            );
            let offset = next_char.map_or(text.len(), |(at, _)| at);
            if current.seen.contains(&Item {
                production: self.start,
                dot: 1,
                origin: 0,
            }) {
                longest_match = Some(offset);
            }
            current.seen = FxHashSet::default();
            sets.push(current);
            match next_char {
                None => {
                    return Recognition {
                        accepted: longest_match == Some(text.len()),
                        viable_prefix: text.len(),
                        longest_match,
                    }
                }
                Some((at, _)) if next.items.is_empty() => {
                    return Recognition {
                        accepted: false,
                        viable_prefix: at,
                        longest_match,
                    }
                }
                Some(_) => {
                    chars.next();
                    position += 1;
                    current = next;
                }
            }
        }
    }

    /// Runs prediction and completion on `set` (the set at `position`) to a fixed point,
    /// and scans `next_char` into `next`.
    fn process(
        &self,
        set: &mut EarleySet,
        earlier: &[EarleySet],
        position: u32,
        next_char: Option<char>,
        next: &mut EarleySet,
    ) {
        let mut predicted: FxHashSet<u32> = FxHashSet::default();
        let mut k = 0;
        while k < set.items.len() {
            let item = set.items[k];
            k += 1;
            let production = &self.flat.productions[item.production as usize];
            match production.rhs.get(item.dot as usize) {
                None => {
                    // Complete: advance every item waiting on this nonterminal at the origin
                    // (completing adds items, never waiting ones, so the list is read in place).
                    let EarleySet {
                        items,
                        seen,
                        waiting,
                    } = set;
                    let waiting = if item.origin == position {
                        waiting.get(&production.lhs)
                    } else {
                        earlier
                            .get(item.origin as usize)
                            .and_then(|s| s.waiting.get(&production.lhs))
                    };
                    for parent in waiting.into_iter().flatten() {
                        add(
                            items,
                            seen,
                            Item {
                                dot: parent.dot + 1,
                                ..*parent
                            },
                        );
                    }
                }
                Some(&Sym::Nt(nt)) => {
                    set.waiting.entry(nt).or_default().push(item);
                    if predicted.insert(nt) {
                        for &p in &self.flat.by_lhs[nt as usize] {
                            set.add(Item {
                                production: p,
                                dot: 0,
                                origin: position,
                            });
                        }
                    }
                    if self.nullable[nt as usize] {
                        set.add(Item {
                            dot: item.dot + 1,
                            ..item
                        });
                    }
                }
                Some(&Sym::T(t)) => {
                    if let (Some(c), Terminal::Chars(chars)) =
                        (next_char, &self.flat.terminals[t as usize])
                    {
                        if chars.contains(c) {
                            next.add(Item {
                                dot: item.dot + 1,
                                ..item
                            });
                        }
                    }
                }
            }
        }
    }
}

/// Does `grammar` accept `text`? (Prepares a [`Recognizer`] each call; keep one to check
/// many texts.) A grammar without `root` accepts nothing.
pub fn accepts(grammar: &Grammar, text: &str) -> bool {
    Recognizer::new(grammar).is_ok_and(|r| r.recognize(text).accepted)
}
