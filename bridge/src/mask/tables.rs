//! The grammar as the token-mask chart reads it: every production's dotted positions
//! numbered in one array, with what comes after each dot.

use gbnfc_compiler::gbnf::{CharSet, Flat, Grammar, Sym, Terminal};

/// What follows the dot at a position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// A nonterminal.
    Nt(u32),
    /// A character terminal, by index into [`Tables::terminals`].
    T(u32),
    /// Nothing: the production of this nonterminal is complete.
    End(u32),
}

/// One character terminal: a bitmap of its ASCII members, and the set itself.
#[derive(Debug, Clone)]
pub(crate) struct Terminal8 {
    ascii: u128,
    set: CharSet,
}

impl Terminal8 {
    fn new(set: CharSet) -> Terminal8 {
        let mut ascii = 0u128;
        for c in 0u8..128 {
            if set.contains(char::from(c)) {
                ascii |= 1 << c;
            }
        }
        Terminal8 { ascii, set }
    }

    /// Does the set hold the code point `value` (any `u32`, as llama.cpp decodes it)?
    pub(crate) fn contains(&self, value: u32) -> bool {
        if value < 128 {
            return self.ascii >> value & 1 == 1;
        }
        let ranges = self.set.ranges();
        let idx = ranges.partition_point(|&(_, hi)| hi < value);
        let inside = ranges.get(idx).is_some_and(|&(lo, _)| lo <= value);
        inside != self.set.is_negated()
    }

    /// llama.cpp's test of a character cut short at a token's end
    /// (`llama_grammar_match_partial_char`): could the code points `low..=high` match? A
    /// set matches when one of its ranges meets them; a negated set when none does.
    pub(crate) fn meets(&self, low: u32, high: u32) -> bool {
        let meets = self
            .set
            .ranges()
            .iter()
            .any(|&(lo, hi)| lo <= high && low <= hi);
        meets != self.set.is_negated()
    }

    /// Does some code point in `low..=high` belong to the set (whether or not llama.cpp's
    /// test for a cut character says so)?
    pub(crate) fn holds_some(&self, low: u32, high: u32) -> bool {
        if !self.set.is_negated() {
            return self.meets(low, high);
        }
        // Some point of low..=high lies outside every excluded range.
        let mut next = low;
        for &(lo, hi) in self.set.ranges() {
            if hi < next {
                continue;
            }
            if lo > next {
                return true;
            }
            next = match hi.checked_add(1) {
                Some(n) => n,
                None => return false,
            };
            if next > high {
                return false;
            }
        }
        next <= high
    }

    /// Does the set hold all of U+0080..=U+10FFFF or none of it? Then every character
    /// outside ASCII that a well-formed sequence can encode is read alike.
    pub(crate) fn uniform_outside_ascii(&self) -> bool {
        let (low, high) = (0x80, 0x10FFFF);
        let ranges = self.set.ranges();
        ranges.iter().any(|&(lo, hi)| lo <= low && hi >= high)
            || ranges.iter().all(|&(lo, hi)| hi < low || lo > high)
    }

    /// A negated set excluding some non-ASCII code point: there llama.cpp's test for a cut
    /// character can refuse a prefix of a character the set holds.
    fn cut_test_differs(&self) -> bool {
        self.set.is_negated() && self.set.ranges().iter().any(|&(_, hi)| hi >= 0x80)
    }
}

/// The grammar's flat form laid out for the chart.
#[derive(Debug, Clone)]
pub(crate) struct Tables {
    /// What follows each dotted position.
    pub(crate) next: Vec<Next>,
    /// The first positions of each nonterminal's productions.
    pub(crate) starts: Vec<Vec<u32>>,
    /// Which nonterminals derive the empty text.
    pub(crate) nullable: Vec<bool>,
    /// The character terminals.
    pub(crate) terminals: Vec<Terminal8>,
    /// The position before `root` in the augmented start production.
    pub(crate) start: u32,
    /// The position after it: an item here with origin 0 means the text is complete.
    pub(crate) accept: u32,
    /// Some terminal is a negated set with non-ASCII exclusions (see
    /// [`Terminal8::holds_some`]).
    pub(crate) cut_test_differs: bool,
}

impl Tables {
    /// The tables of `grammar`, or `None` when it has no `root`, references tokens, or
    /// cannot be lowered.
    pub(crate) fn new(grammar: &Grammar) -> Option<Tables> {
        let flat = Flat::lower(grammar).ok()?;
        Tables::from_flat(&flat)
    }

    fn from_flat(flat: &Flat) -> Option<Tables> {
        let mut terminals = Vec::with_capacity(flat.terminals.len());
        for terminal in &flat.terminals {
            match terminal {
                Terminal::Chars(set) => terminals.push(Terminal8::new(set.clone())),
                Terminal::Token => return None,
            }
        }
        let mut next = Vec::with_capacity(flat.size());
        let mut first = Vec::with_capacity(flat.productions.len());
        for production in &flat.productions {
            first.push(u32::try_from(next.len()).ok()?);
            for sym in &production.rhs {
                next.push(match *sym {
                    Sym::Nt(nt) => Next::Nt(nt),
                    Sym::T(t) => Next::T(t),
                });
            }
            next.push(Next::End(production.lhs));
        }
        let starts = flat
            .by_lhs
            .iter()
            .map(|ps| ps.iter().map(|&p| first[p as usize]).collect())
            .collect();
        let start_nt = flat.start?;
        let start = *first.get(*flat.by_lhs.get(start_nt as usize)?.first()? as usize)?;
        let cut_test_differs = terminals.iter().any(Terminal8::cut_test_differs);
        Some(Tables {
            next,
            starts,
            nullable: flat.nullable(),
            terminals,
            start,
            accept: start + 1,
            cut_test_differs,
        })
    }
}
