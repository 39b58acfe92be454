//! gbnfc's own token masks: which tokens of the vocabulary may come next under a grammar.
//!
//! llama.cpp's grammar sampler answers the same question by moving every parse stack over
//! every token's characters, 10–60 ms on a 49k–262k vocabulary (BENCHMARKS.md,
//! mask report). Here the vocabulary is a token trie (`trie.rs`) walked depth-first with
//! a byte-level Earley chart (`chart.rs`): a prefix shared by many tokens is parsed once,
//! a prefix the grammar refuses cuts off every token below it, and a prefix after which
//! the grammar takes every text of the characters below it allows those tokens unread.
//! Masks are kept per parser state (`Chart::key`): most positions of a JSON text repeat a
//! state met before (the inside of a string, the gap after a value).
//!
//! The answers are llama.cpp's own, byte for byte: the chart decodes tokens as llama.cpp
//! does, and `tests/mask.rs` holds the two to the same masks. Earley parsing has no stack
//! count to explode, so no grammar is refused for its ambiguity; a walk that does more
//! than `chart::MAX_WORK` (100 million) steps stops with [`MaskError`].
//!
//! The same trie spells close-out's completions in the fewest tokens ([`Spelling`]).

mod chart;
mod spell;
mod tables;
mod trie;

use std::sync::{Arc, Mutex, PoisonError};

use gbnfc_compiler::gbnf::Grammar;
use rustc_hash::FxHashMap;
use thiserror::Error;
use toktrie::SimpleVob;

use chart::Chart;
pub use spell::Spelling;
use tables::Tables;
use trie::TokenTrie;

/// Bytes of masks one grammar keeps for reuse.
const CACHE_BYTES: usize = 64 << 20;

/// A mask could not be computed within its bound.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "computing the token mask took more than {} parser steps",
    chart::MAX_WORK
)]
pub struct MaskError;

/// A model's vocabulary as the mask engine walks it.
pub struct MaskVocab {
    trie: TokenTrie,
    /// Each token's bytes.
    pieces: Vec<Vec<u8>>,
    /// Tokens whose text ends inside a character.
    cut: Vec<u32>,
    /// End-of-generation tokens: allowed when the text is complete.
    eog: Vec<u32>,
}

impl std::fmt::Debug for MaskVocab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaskVocab")
            .field("tokens", &self.pieces.len())
            .finish_non_exhaustive()
    }
}

impl MaskVocab {
    /// The vocabulary of `pieces` (each token's bytes, as llama.cpp's grammar sampler
    /// reads them; empty for a token never allowed by text), with `eog` the
    /// end-of-generation tokens.
    pub fn new(pieces: &[Vec<u8>], eog: Vec<u32>) -> MaskVocab {
        let cut = pieces
            .iter()
            .enumerate()
            .filter(|(_, bytes)| ends_cut(bytes))
            .map(|(id, _)| id as u32)
            .collect();
        MaskVocab {
            trie: TokenTrie::new(pieces),
            pieces: pieces.to_vec(),
            cut,
            eog,
        }
    }

    /// Tokens in the vocabulary.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    /// `true` for an empty vocabulary.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Does llama.cpp's decoder leave a character unfinished at the end of `bytes`?
fn ends_cut(bytes: &[u8]) -> bool {
    let mut remain = 0u8;
    for &byte in bytes {
        if byte == 0 {
            break;
        }
        remain = if remain > 0 {
            remain - 1
        } else {
            match byte >> 4 {
                0..=7 => 0,
                8..=11 => return false,
                12 | 13 => 1,
                14 => 2,
                _ => 3,
            }
        };
    }
    remain > 0
}

/// A grammar made ready for masking over one vocabulary, with the masks found so far.
pub struct MaskGrammar {
    tables: Tables,
    vocab: Arc<MaskVocab>,
    cache: Mutex<FxHashMap<Vec<u32>, Arc<SimpleVob>>>,
}

impl std::fmt::Debug for MaskGrammar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaskGrammar").finish_non_exhaustive()
    }
}

impl MaskGrammar {
    /// `grammar` over `vocab`; `None` when the grammar has no `root`, references tokens
    /// (which llama.cpp's sampler handles), or cannot be lowered.
    pub fn new(grammar: &Grammar, vocab: Arc<MaskVocab>) -> Option<Arc<MaskGrammar>> {
        Some(Arc::new(MaskGrammar {
            tables: Tables::new(grammar)?,
            vocab,
            cache: Mutex::new(FxHashMap::default()),
        }))
    }

    fn cached(&self, key: &[u32]) -> Option<Arc<SimpleVob>> {
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.get(key).cloned()
    }

    fn keep(&self, key: Vec<u32>, mask: Arc<SimpleVob>) {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes = self.vocab.len() / 8 + 64;
        if (cache.len() + 1) * bytes > CACHE_BYTES {
            cache.clear();
        }
        cache.insert(key, mask);
    }
}

/// The mask engine's state in one generation: the text followed so far.
#[derive(Debug, Clone)]
pub struct Masker {
    grammar: Arc<MaskGrammar>,
    chart: Chart,
}

impl Masker {
    /// A fresh state: nothing generated yet.
    pub fn new(grammar: Arc<MaskGrammar>) -> Masker {
        let chart = Chart::new(&grammar.tables);
        Masker { grammar, chart }
    }

    /// May `token` come next? (End-of-generation tokens: when the text is complete.)
    pub fn allows(&mut self, token: u32) -> bool {
        if self.grammar.vocab.eog.contains(&token) {
            return self.is_complete();
        }
        let ok = self.push_token(token);
        self.chart.pop_to(1);
        ok
    }

    /// Follows `token`; `false` (and nothing changes) when it may not come next.
    pub fn accept(&mut self, token: u32) -> bool {
        if self.grammar.vocab.eog.contains(&token) {
            return self.is_complete();
        }
        if self.push_token(token) {
            self.chart.commit();
            true
        } else {
            self.chart.pop_to(1);
            false
        }
    }

    /// Is the text so far a whole text of the grammar?
    pub fn is_complete(&self) -> bool {
        self.chart.is_complete()
    }

    /// Every token that may come next.
    ///
    /// # Errors
    /// [`MaskError`] when the walk passes its bound.
    pub fn mask(&mut self) -> Result<Arc<SimpleVob>, MaskError> {
        let grammar = Arc::clone(&self.grammar);
        let key = self.chart.key(&grammar.tables);
        if let Some(mask) = grammar.cached(&key) {
            return Ok(mask);
        }
        let vocab = &grammar.vocab;
        let mut mask = SimpleVob::alloc(vocab.len());
        self.chart.reset_work();
        vocab.trie.walk(&mut self.chart, &grammar.tables, &mut mask);
        if self.chart.exhausted() {
            self.chart.reset_work();
            return Err(MaskError);
        }
        if grammar.tables.cut_test_differs {
            // Tokens that may end inside a character: the ones that do by themselves, and
            // after a character carried over from the last token, any.
            let carried;
            let suspects = if self.chart.carries_partial() {
                carried = mask.to_list();
                &carried
            } else {
                &vocab.cut
            };
            for &token in suspects {
                if mask.is_allowed(token) && !self.allows(token) {
                    mask.disallow_token(token);
                }
            }
        }
        if self.is_complete() {
            for &token in &vocab.eog {
                mask.allow_token(token);
            }
        }
        let mask = Arc::new(mask);
        grammar.keep(key, Arc::clone(&mask));
        Ok(mask)
    }

    /// Pushes the token's bytes; on `false` some may stay pushed. The work bound holds
    /// per token here, per walk in [`Masker::mask`].
    fn push_token(&mut self, token: u32) -> bool {
        self.chart.reset_work();
        let tables = &self.grammar.tables;
        let Some(bytes) = self.grammar.vocab.pieces.get(token as usize) else {
            return false;
        };
        if bytes.is_empty() {
            return false;
        }
        bytes
            .iter()
            .enumerate()
            .all(|(i, &byte)| self.chart.push(tables, byte, i == 0))
            && self.chart.cut_passes(tables)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn masker(gbnf: &str, pieces: &[&[u8]]) -> Masker {
        let grammar = gbnfc_compiler::gbnf::parse(gbnf).unwrap();
        let pieces: Vec<Vec<u8>> = pieces.iter().map(|p| p.to_vec()).collect();
        let vocab = Arc::new(MaskVocab::new(&pieces, vec![]));
        Masker::new(MaskGrammar::new(&grammar, vocab).unwrap())
    }

    #[test]
    fn a_subtree_of_tokens_that_end_inside_a_character_is_read() {
        // Eight tokens below "\xE0", each ending inside a character: none holds a whole
        // character after it, but four of them begin only characters the set lacks.
        let pieces: Vec<Vec<u8>> = (0xA4..=0xAB).map(|b| vec![0xE0, b]).collect();
        let mut pieces: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
        pieces.push(b"\"");
        let mut masker = masker("root ::= \"\\\"\" [ -~\\u0A00-\\u0AFF]*\n", &pieces);
        assert!(masker.accept(8));
        let mask = masker.mask().unwrap();
        let allowed: Vec<u32> = (0..8).filter(|&t| mask.is_allowed(t)).collect();
        assert_eq!(allowed, vec![4, 5, 6, 7]);
    }

    #[test]
    fn end_of_generation_follows_llama_cpp_and_is_part_of_the_cache_key() {
        // Token 3 is end-of-generation. After "a" the text is complete; a token that
        // only begins a character keeps it complete when it also held a whole one
        // ("a\xC3"), and drops it when it held none ("\xC3" after "a"), as llama.cpp does.
        let grammar = gbnfc_compiler::gbnf::parse("root ::= \"a\" \"é\"?\n").unwrap();
        let pieces = vec![
            b"a".to_vec(),
            b"a\xC3".to_vec(),
            b"\xC3".to_vec(),
            Vec::new(),
        ];
        let vocab = Arc::new(MaskVocab::new(&pieces, vec![3]));
        let shared = MaskGrammar::new(&grammar, vocab).unwrap();
        let mut one = Masker::new(Arc::clone(&shared));
        assert!(one.accept(1));
        assert!(one.mask().unwrap().is_allowed(3));
        let mut two = Masker::new(shared);
        assert!(two.accept(0));
        assert!(two.mask().unwrap().is_allowed(3));
        assert!(two.accept(2));
        assert!(!two.mask().unwrap().is_allowed(3));
        assert!(!two.allows(3));
    }

    #[test]
    fn a_character_split_over_tokens_is_followed() {
        let mut m = masker(
            "root ::= \"\\\"\" [^\"\\\\]* \"\\\"\"\n",
            &[b"\"", b"\xF2", b"\x8F", b"\x9C", b"\xBC", b"a"],
        );
        assert!(m.accept(0));
        assert!(m.accept(1));
        assert!(m.allows(2));
        assert!(m.accept(2));
        assert!(m.accept(3));
        assert!(!m.allows(5));
        assert!(m.accept(4));
        assert!(m.allows(5));
        assert!(m.allows(0));
    }

    /// Pieces of tokens that test the reading of characters: ASCII the grammars below
    /// treat apart, plain characters outside ASCII at the edges of their encodings, and
    /// odd forms (overlong, past U+10FFFF, a lone or missing continuation byte, a zero
    /// byte, a character cut short).
    const UNITS: [&[u8]; 22] = [
        b"a",
        b"n",
        b"\"",
        b"\\",
        b"\n",
        b"\0",
        b"\xC3\xA9",
        b"\xE0\xA4\x85",
        b"\xED\x9F\xBF",
        b"\xF0\x9F\x98\x80",
        b"\xF4\x8F\xBF\xBF",
        b"\xE0\x80\x80",
        b"\xE0\x9F\xBF",
        b"\xF0\x80\x80\x80",
        b"\xF4\x90\x80\x80",
        b"\xF5\x80\x80\x80",
        b"\xC0\xAF",
        b"\xC1\xBF",
        b"\x80",
        b"\xC3",
        b"\xE4\xB8",
        b"\xBF",
    ];

    proptest::proptest! {
        /// A mask (the trie walk, with its unread subtrees) allows exactly the tokens that
        /// pass one by one, whatever bytes the tokens hold.
        #[test]
        fn a_mask_allows_what_each_token_passes_alone(
            pieces in proptest::collection::vec(
                (0..3usize, proptest::collection::vec(proptest::sample::select(&UNITS[..]), 1..4)),
                1..40,
            ),
            grammar in 0..6usize,
            opening in 0..3usize,
        ) {
            let grammars = [
                "root ::= \"\\\"\" ([^\"\\\\\\x00-\\x1F] | \"\\\\\" [n\"])* \"\\\"\"\n",
                "root ::= \"\\\"\" [ -!#-\\[\\]-\\U0010FFFF]* \"\\\"\"\n",
                "root ::= \"\\\"\" [^\"\\\\\\x00-\\x1F\\u0900-\\u097F]* \"\\\"\"\n",
                "root ::= \"\\\"\" ([^\"\\\\a] | \"a\" [^\"\\\\])* \"\\\"\" [a\\u00E9]*\n",
                // Bounded repetitions: each character leads to the next count.
                "root ::= \"\\\"\" [^\"\\\\\\x00-\\x1F]{2,6} \"\\\"\"\n",
                "root ::= \"\\\"\" [ -!#-\\[\\]-\\U0010FFFF]{0,4} \"\\\"\" [a\\u00E9]{1,3}\n",
            ];
            let grammar = gbnfc_compiler::gbnf::parse(grammars[grammar]).unwrap();
            // A few shared heads, so that tokens share prefixes in the trie.
            let heads: [&[u8]; 3] = [b"", b"a", b"an"];
            let mut pieces: Vec<Vec<u8>> = pieces
                .iter()
                .map(|(head, units)| [heads[*head], &units.concat()].concat())
                .collect();
            // Tokens that open the text: the quote alone, or with a character or half of one.
            pieces.push(b"\"".to_vec());
            pieces.push(b"\"a".to_vec());
            pieces.push(b"\"\xE4".to_vec());
            let opener = (pieces.len() - 3 + opening) as u32;
            let vocab = Arc::new(MaskVocab::new(&pieces, vec![]));
            let mut masker = Masker::new(MaskGrammar::new(&grammar, vocab).unwrap());
            proptest::prop_assert!(masker.accept(opener));
            // Once after the opening token, and again after each token the mask allows.
            for round in 0..3 {
                let mask = masker.mask().unwrap();
                let mut allowed = None;
                for token in 0..pieces.len() as u32 {
                    let alone = masker.allows(token);
                    proptest::prop_assert_eq!(mask.is_allowed(token), alone, "token {:?} round {}", pieces[token as usize], round);
                    if alone && allowed.is_none() {
                        allowed = Some(token);
                    }
                }
                match allowed {
                    Some(token) => proptest::prop_assert!(masker.accept(token)),
                    None => break,
                }
            }
        }
    }
}
