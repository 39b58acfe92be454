//! The flat form of a grammar: numbered nonterminals, productions over nonterminals and
//! character-set terminals, and the analyses that need it.
//!
//! Lowering turns every alternation inside a rule, and every repetition, into auxiliary
//! nonterminals. Unbounded repetition is lowered left-recursively (`T → T body | ε`), which
//! an Earley recognizer handles in linear time. Repeated bodies longer than one symbol get
//! a nonterminal of their own, so nested repetitions grow the flat form additively, never
//! multiplicatively.
//!
//! [`Flat::min_derivation`] computes, for every nonterminal, the least weight of a
//! derivation (Knuth's generalisation of Dijkstra's algorithm), which gives shortest
//! lengths, nullability, emptiness of languages and the sampler's steering costs in
//! `O(size · log size)`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use thiserror::Error;

use super::ast::{Expr, Grammar};
use super::charset::CharSet;
use super::parse::MAX_NESTING;

/// The largest repetition bound lowering expands (llama.cpp's own limit).
pub const MAX_REPEAT: u32 = 2000;

/// The most symbols a flat grammar may hold; beyond it lowering refuses.
pub const MAX_SYMBOLS: usize = 50_000_000;

/// A symbol on the right-hand side of a production.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sym {
    /// A nonterminal, by index into [`Flat::nonterminals`].
    Nt(u32),
    /// A terminal, by index into [`Flat::terminals`].
    T(u32),
}

/// A terminal: one character from a set, or a model token (never matched by characters).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Terminal {
    /// One character of the set.
    Chars(CharSet),
    /// A token reference; opaque at the character level.
    Token,
}

/// Where a nonterminal comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The rule at this index of [`Grammar::rules`].
    Rule(usize),
    /// An auxiliary nonterminal made while lowering the rule at this index.
    Aux(usize),
    /// A name that is referenced but never defined: it has no productions.
    Undefined(String),
    /// The augmented start symbol, `S' → root`.
    Start,
}

/// One production `lhs → rhs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Production {
    /// The nonterminal it defines.
    pub lhs: u32,
    /// What it expands to (empty for ε).
    pub rhs: Vec<Sym>,
}

/// A grammar in flat form.
#[derive(Debug, Clone, Default)]
pub struct Flat {
    /// Where each nonterminal comes from.
    pub nonterminals: Vec<Origin>,
    /// Every production.
    pub productions: Vec<Production>,
    /// The productions of each nonterminal, by index into `productions`.
    pub by_lhs: Vec<Vec<u32>>,
    /// Every distinct terminal.
    pub terminals: Vec<Terminal>,
    /// The nonterminal of each rule name (its first definition).
    pub rule_nt: FxHashMap<String, u32>,
    /// The augmented start production `S' → root`, when the grammar has a `root`.
    pub start: Option<u32>,
}

/// Why a grammar could not be lowered.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum LowerError {
    /// A repetition bound above [`MAX_REPEAT`].
    #[error("repetition bound {0} is above {MAX_REPEAT}")]
    RepeatTooLarge(u32),
    /// Expressions nested deeper than the parser allows.
    #[error("expressions nested more than {0} deep")]
    TooDeep(usize),
    /// The grammar expands to more than [`MAX_SYMBOLS`] symbols.
    #[error("the grammar expands to more than {MAX_SYMBOLS} symbols")]
    TooLarge,
}

/// Deepest expression tree lowering accepts: parentheses times postfix chains, with room.
pub const MAX_EXPR_DEPTH: usize = MAX_NESTING * 16;

impl Flat {
    /// Lowers a grammar. Undefined references become nonterminals without productions.
    ///
    /// # Errors
    /// Repetition bounds above [`MAX_REPEAT`], trees deeper than the parser produces, or a
    /// flat form above [`MAX_SYMBOLS`].
    pub fn lower(grammar: &Grammar) -> Result<Flat, LowerError> {
        let mut lowering = Lowering::default();
        for (index, rule) in grammar.rules.iter().enumerate() {
            if !lowering.flat.rule_nt.contains_key(rule.name.as_str()) {
                let nt = lowering.new_nt(Origin::Rule(index));
                lowering.flat.rule_nt.insert(rule.name.to_string(), nt);
            }
        }
        let mut defined = rustc_hash::FxHashSet::default();
        for (index, rule) in grammar.rules.iter().enumerate() {
            if !defined.insert(rule.name.as_str()) {
                continue;
            }
            if rule.body.depth() > MAX_EXPR_DEPTH {
                return Err(LowerError::TooDeep(MAX_EXPR_DEPTH));
            }
            let lhs = lowering.flat.rule_nt[rule.name.as_str()];
            lowering.rule = index;
            match &rule.body {
                Expr::Alt(arms) => {
                    for arm in arms {
                        let rhs = lowering.lower(arm)?;
                        lowering.add(lhs, rhs)?;
                    }
                }
                body => {
                    let rhs = lowering.lower(body)?;
                    lowering.add(lhs, rhs)?;
                }
            }
        }
        if let Some(&root) = lowering.flat.rule_nt.get("root") {
            let start = lowering.new_nt(Origin::Start);
            lowering.add(start, vec![Sym::Nt(root)])?;
            lowering.flat.start = Some(start);
        }
        Ok(lowering.flat)
    }

    /// The least weight of a derivation from each nonterminal (`None`: no finite
    /// derivation). A production weighs `per_production` plus, for each terminal,
    /// `char_weight` (or `token_weight`; `None` forbids productions that use tokens),
    /// plus the weights of its nonterminals. Terminals that match no character forbid
    /// their productions.
    pub fn min_derivation(
        &self,
        per_production: u64,
        char_weight: u64,
        token_weight: Option<u64>,
    ) -> Vec<Option<u64>> {
        let n = self.nonterminals.len();
        let mut best: Vec<Option<u64>> = vec![None; n];
        let mut occurrences: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut remaining: Vec<u32> = vec![0; self.productions.len()];
        let mut partial: Vec<Option<u64>> = vec![None; self.productions.len()];
        let mut heap = BinaryHeap::new();
        for (p, prod) in self.productions.iter().enumerate() {
            let mut weight = Some(per_production);
            for sym in &prod.rhs {
                match *sym {
                    Sym::Nt(nt) => {
                        occurrences[nt as usize].push(p as u32);
                        remaining[p] += 1;
                    }
                    Sym::T(t) => {
                        let w = match &self.terminals[t as usize] {
                            Terminal::Chars(set) if set.is_empty() => None,
                            Terminal::Chars(_) => Some(char_weight),
                            Terminal::Token => token_weight,
                        };
                        weight = weight.zip(w).map(|(a, b)| a.saturating_add(b));
                    }
                }
            }
            partial[p] = weight;
            if let (0, Some(w)) = (remaining[p], weight) {
                heap.push(Reverse((w, prod.lhs)));
            }
        }
        while let Some(Reverse((weight, nt))) = heap.pop() {
            if best[nt as usize].is_some() {
                continue;
            }
            best[nt as usize] = Some(weight);
            for &p in &occurrences[nt as usize] {
                let p = p as usize;
                let Some(sum) = partial[p] else { continue };
                partial[p] = Some(sum.saturating_add(weight));
                remaining[p] -= 1;
                if remaining[p] == 0 {
                    heap.push(Reverse((
                        partial[p].unwrap_or(u64::MAX),
                        self.productions[p].lhs,
                    )));
                }
            }
        }
        best
    }

    /// The shortest text each nonterminal derives, in characters (`None`: it derives
    /// nothing). Token references count as one character.
    pub fn shortest_lengths(&self) -> Vec<Option<u64>> {
        self.min_derivation(0, 1, Some(1))
    }

    /// Which nonterminals derive the empty text.
    pub fn nullable(&self) -> Vec<bool> {
        self.shortest_lengths()
            .into_iter()
            .map(|len| len == Some(0))
            .collect()
    }

    /// The total number of symbols on right-hand sides.
    pub fn size(&self) -> usize {
        self.productions.iter().map(|p| p.rhs.len() + 1).sum()
    }
}

#[derive(Default)]
struct Lowering {
    flat: Flat,
    terminal_ids: FxHashMap<Terminal, u32>,
    undefined: FxHashMap<String, u32>,
    rule: usize,
    symbols: usize,
}

impl Lowering {
    fn new_nt(&mut self, origin: Origin) -> u32 {
        self.flat.nonterminals.push(origin);
        self.flat.by_lhs.push(Vec::new());
        (self.flat.nonterminals.len() - 1) as u32
    }

    fn add(&mut self, lhs: u32, rhs: Vec<Sym>) -> Result<(), LowerError> {
        self.symbols += rhs.len() + 1;
        if self.symbols > MAX_SYMBOLS {
            return Err(LowerError::TooLarge);
        }
        let id = self.flat.productions.len() as u32;
        self.flat.productions.push(Production { lhs, rhs });
        self.flat.by_lhs[lhs as usize].push(id);
        Ok(())
    }

    fn terminal(&mut self, terminal: Terminal) -> Sym {
        let next = self.flat.terminals.len() as u32;
        let id = *self.terminal_ids.entry(terminal.clone()).or_insert(next);
        if id == next {
            self.flat.terminals.push(terminal);
        }
        Sym::T(id)
    }

    fn aux(&mut self) -> u32 {
        self.new_nt(Origin::Aux(self.rule))
    }

    /// Lowers an expression to the symbols that stand for it inline.
    fn lower(&mut self, expr: &Expr) -> Result<Vec<Sym>, LowerError> {
        Ok(match expr {
            Expr::Seq(items) => {
                let mut out = Vec::new();
                for item in items {
                    out.extend(self.lower(item)?);
                }
                out
            }
            Expr::Alt(arms) => {
                let nt = self.aux();
                for arm in arms {
                    let rhs = self.lower(arm)?;
                    self.add(nt, rhs)?;
                }
                vec![Sym::Nt(nt)]
            }
            Expr::Literal(text) => text
                .chars()
                .map(|c| self.terminal(Terminal::Chars(CharSet::single(c))))
                .collect(),
            Expr::Class { negated, ranges } => {
                vec![self.terminal(Terminal::Chars(CharSet::from_class(*negated, ranges)))]
            }
            Expr::Any => vec![self.terminal(Terminal::Chars(CharSet::any()))],
            Expr::Token { .. } => vec![self.terminal(Terminal::Token)],
            Expr::Ref { name, .. } => vec![Sym::Nt(self.reference(name))],
            Expr::Group(inner) => self.lower(inner)?,
            Expr::Repeat { expr, min, max, .. } => self.repeat(expr, *min, *max)?,
        })
    }

    fn reference(&mut self, name: &str) -> u32 {
        if let Some(&nt) = self.flat.rule_nt.get(name) {
            return nt;
        }
        if let Some(&nt) = self.undefined.get(name) {
            return nt;
        }
        let nt = self.new_nt(Origin::Undefined(name.to_string()));
        self.undefined.insert(name.to_string(), nt);
        nt
    }

    fn repeat(&mut self, expr: &Expr, min: u32, max: Option<u32>) -> Result<Vec<Sym>, LowerError> {
        for bound in std::iter::once(min).chain(max) {
            if bound > MAX_REPEAT {
                return Err(LowerError::RepeatTooLarge(bound));
            }
        }
        let mut body = self.lower(expr)?;
        if body.len() > 1 {
            let nt = self.aux();
            self.add(nt, body)?;
            body = vec![Sym::Nt(nt)];
        }
        let mut out = Vec::new();
        for _ in 0..min {
            out.extend_from_slice(&body);
            self.symbols += body.len();
            if self.symbols > MAX_SYMBOLS {
                return Err(LowerError::TooLarge);
            }
        }
        match max {
            None => {
                // T → T body | ε
                let nt = self.aux();
                let mut rec = vec![Sym::Nt(nt)];
                rec.extend_from_slice(&body);
                self.add(nt, rec)?;
                self.add(nt, Vec::new())?;
                out.push(Sym::Nt(nt));
            }
            Some(max) if max > min => {
                // O_1 → body | ε ; O_k → body O_{k-1} | ε
                let mut previous: Option<u32> = None;
                for _ in min..max {
                    let nt = self.aux();
                    let mut rhs = body.clone();
                    rhs.extend(previous.map(Sym::Nt));
                    self.add(nt, rhs)?;
                    self.add(nt, Vec::new())?;
                    previous = Some(nt);
                }
                out.extend(previous.map(Sym::Nt));
            }
            Some(_) => {}
        }
        Ok(out)
    }
}
