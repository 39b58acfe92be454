//! Random texts from a grammar: derivations that always terminate.
//!
//! The sampler expands the leftmost symbol with an explicit stack (no recursion). At each
//! nonterminal it picks uniformly among the productions that still fit the length budget
//! — counting the shortest completion of everything still pending — and, once nothing
//! fits (or the stack or step budget runs out), takes the production with the cheapest
//! derivation. "Cheapest" counts one per production used plus one per character, so
//! every such choice strictly shrinks the pending cost: termination is guaranteed even
//! for grammars `check` would refuse. Repetition bounds hold by construction of the flat
//! form. Productions that need a token reference are never chosen.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

use crate::gbnf::{CharSet, Flat, Grammar, LowerError, Sym, Terminal, MAX_CHAR};

/// The longest shortest-text a sampler will produce before refusing.
pub const MAX_SAMPLE_CHARS: u64 = 10_000_000;

/// Why a grammar cannot be sampled.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum SampleError {
    /// The grammar has no `root` rule.
    #[error("the grammar has no `root` rule")]
    NoRoot,
    /// `root` has no finite derivation without token references.
    #[error("`root` derives no text without token references (or nothing at all)")]
    Empty,
    /// Even the shortest text is too long to produce.
    #[error("the shortest text of this grammar has {0} characters, above the sampler's limit of {MAX_SAMPLE_CHARS}")]
    TooLong(u64),
    /// The grammar could not be lowered.
    #[error(transparent)]
    Lower(#[from] LowerError),
}

/// How to sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleOptions {
    /// Length the sampler aims to stay under, in characters. A grammar whose shortest
    /// text is longer still gets its shortest text.
    pub max_len: u64,
    /// Most symbols pending at once before the sampler steers to the shortest derivations.
    pub max_depth: usize,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions {
            max_len: 256,
            max_depth: 2_000,
        }
    }
}

/// A grammar prepared for sampling.
#[derive(Debug, Clone)]
pub struct Sampler {
    flat: Flat,
    start: u32,
    /// Shortest text length from each nonterminal, tokens forbidden.
    min_len: Vec<Option<u64>>,
    /// Cheapest derivation (productions + characters) from each nonterminal.
    cost: Vec<Option<u64>>,
    /// Per production: its shortest length and cost (`None` when unusable).
    production_len: Vec<Option<u64>>,
    production_cost: Vec<Option<u64>>,
}

impl Sampler {
    /// Prepares `grammar` for sampling.
    ///
    /// # Errors
    /// No `root`, a `root` that derives no token-free text, a shortest text above
    /// [`MAX_SAMPLE_CHARS`], or a grammar too large to lower.
    pub fn new(grammar: &Grammar) -> Result<Self, SampleError> {
        let flat = Flat::lower(grammar)?;
        let start = flat.start.ok_or(SampleError::NoRoot)?;
        let min_len = flat.min_derivation(0, 1, None);
        let cost = flat.min_derivation(1, 1, None);
        let shortest = min_len[start as usize].ok_or(SampleError::Empty)?;
        if shortest > MAX_SAMPLE_CHARS {
            return Err(SampleError::TooLong(shortest));
        }
        let weigh = |values: &[Option<u64>], base: u64| -> Vec<Option<u64>> {
            flat.productions
                .iter()
                .map(|p| {
                    p.rhs.iter().try_fold(base, |acc, sym| {
                        let w = match *sym {
                            Sym::Nt(nt) => values[nt as usize]?,
                            Sym::T(t) => match &flat.terminals[t as usize] {
                                Terminal::Chars(set) if !set.is_empty() => 1,
                                _ => return None,
                            },
                        };
                        Some(acc.saturating_add(w))
                    })
                })
                .collect()
        };
        let production_len = weigh(&min_len, 0);
        let production_cost = weigh(&cost, 1);
        Ok(Sampler {
            flat,
            start,
            min_len,
            cost,
            production_len,
            production_cost,
        })
    }

    /// Draws one text using `rng`.
    pub fn sample(&self, rng: &mut impl Rng, options: SampleOptions) -> String {
        let mut out = String::new();
        let mut out_len: u64 = 0;
        let mut stack: Vec<Sym> = vec![Sym::Nt(self.start)];
        let mut pending: u64 = self.min_len[self.start as usize].unwrap_or(0);
        let step_budget = options.max_len.saturating_mul(64).saturating_add(100_000);
        let mut steps: u64 = 0;
        while let Some(sym) = stack.pop() {
            steps += 1;
            match sym {
                Sym::T(t) => {
                    pending = pending.saturating_sub(1);
                    out_len += 1;
                    if let Terminal::Chars(set) = &self.flat.terminals[t as usize] {
                        out.push(random_char(set, rng));
                    }
                }
                Sym::Nt(nt) => {
                    pending = pending.saturating_sub(self.min_len[nt as usize].unwrap_or(0));
                    let steer = steps > step_budget || stack.len() > options.max_depth;
                    let chosen = self.choose(nt, out_len + pending, steer, options.max_len, rng);
                    let Some(p) = chosen else { continue };
                    pending = pending.saturating_add(self.production_len[p as usize].unwrap_or(0));
                    stack.extend(self.flat.productions[p as usize].rhs.iter().rev().copied());
                }
            }
        }
        out
    }

    /// Picks a production of `nt`: uniformly among those that keep the total within
    /// `max_len`, else (or when steering) the cheapest.
    fn choose(
        &self,
        nt: u32,
        committed: u64,
        steer: bool,
        max_len: u64,
        rng: &mut impl Rng,
    ) -> Option<u32> {
        let productions = &self.flat.by_lhs[nt as usize];
        if !steer {
            let fitting: Vec<u32> = productions
                .iter()
                .copied()
                .filter(|&p| {
                    self.production_len[p as usize]
                        .is_some_and(|len| committed.saturating_add(len) <= max_len)
                })
                .collect();
            if !fitting.is_empty() {
                return Some(fitting[rng.random_range(0..fitting.len())]);
            }
        }
        debug_assert!(self.cost[nt as usize].is_some());
        productions
            .iter()
            .copied()
            .filter(|&p| self.production_cost[p as usize].is_some())
            .min_by_key(|&p| self.production_cost[p as usize])
    }

    /// `n` texts from a seed: the same seed always gives the same texts.
    pub fn samples(&self, seed: u64, n: usize, options: SampleOptions) -> Vec<String> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n).map(|_| self.sample(&mut rng, options)).collect()
    }
}

/// A random member of a non-empty set, favouring printable ASCII for complemented sets so
/// that samples stay readable while still covering the rest of Unicode.
fn random_char(set: &CharSet, rng: &mut impl Rng) -> char {
    if set.is_negated() {
        if rng.random_bool(0.75) {
            for _ in 0..8 {
                let c = char::from(rng.random_range(0x20u8..0x7F));
                if set.contains(c) {
                    return c;
                }
            }
        }
        for _ in 0..64 {
            if let Some(c) = char::from_u32(rng.random_range(0..=MAX_CHAR)) {
                if set.contains(c) {
                    return c;
                }
            }
        }
        return (0..=MAX_CHAR)
            .filter_map(char::from_u32)
            .find(|&c| set.contains(c))
            .unwrap_or('\0');
    }
    let ranges = set.ranges();
    let (lo, hi) = ranges[rng.random_range(0..ranges.len())];
    for _ in 0..64 {
        if let Some(c) = char::from_u32(rng.random_range(lo..=hi)) {
            return c;
        }
    }
    // The range lies (almost) entirely in the surrogate gap: take its first character.
    (lo..=hi)
        .chain(ranges.iter().flat_map(|&(a, b)| a..=b))
        .find_map(char::from_u32)
        .unwrap_or('\0')
}
