//! The vocabulary as a token trie, walked depth-first with the chart to find a mask.
//!
//! Nodes are laid out in depth-first order with their subtree sizes (as `toktrie` lays
//! them out), so skipping a refused prefix is one addition, and a subtree's tokens are one
//! run of [`TokenTrie::tokens`]. Each node also knows which characters the tokens below it
//! hold after it: the next one, the second, and the rest (the ASCII ones, and whether any
//! is outside ASCII). When the chart's set leads back to itself over every one of them,
//! or every next one leads to one set that does so over the rest, or every next one to
//! one set and every second one on to one set that does so over the rest, or all of them
//! lead on to one set per step for as many steps as the longest token below holds
//! characters (a string of bounded length: each character leads to the next count),
//! every token below is allowed without being read. Inside a JSON string or an object
//! key that holds at almost every node of the first character, and a walk there reads a
//! few thousand nodes instead of the whole vocabulary.
//!
//! Measured with `mask_report` (2,000 positions per vocabulary, gbnfc's masks; mean / p99
//! in µs). Reading every node: SmolLM2 (49k) 320 / 1,783. Testing the whole subtree
//! against ASCII loops only: SmolLM2 47–60 / 394–523, Gemma (262k, mostly outside
//! ASCII) 4,086 / 20,560. With characters outside ASCII: Gemma 407 / 2,873. One step
//! deep: 344; inside a character too: 160 / 1,506; two steps: SmolLM2 26–34 / 290–420,
//! Gemma 92–131 / 750–1,160. Bounded strings, on a slower day, side by side: Gemma
//! 141–157 / 1,229–1,352 (worst 7.5–14 ms) before, 115–131 / 856–1,068 (worst 1.9–2.7
//! ms) after; in `gbnfc run` on the order-query schema (Gemma, seeds 1–3, its 16–80
//! character key) the masks of a run took 31–161 ms before, 14–32 ms after.

use toktrie::SimpleVob;

use super::chart::Chart;
use super::tables::Tables;

/// A token trie over a vocabulary's byte pieces.
#[derive(Debug)]
pub(crate) struct TokenTrie {
    /// Each node's byte (the root's is unused).
    byte: Vec<u8>,
    /// Each node's subtree size in nodes, itself included.
    size: Vec<u32>,
    /// Where each node's tokens begin in `tokens` (its own, then its subtree's), with one
    /// more entry at the end.
    first: Vec<u32>,
    /// The characters the tokens below each node hold after it, read as llama.cpp
    /// decodes them from a token's start: the next one (the first to end below the node),
    /// the second, and the rest. The ASCII ones, a bit each (see [`Chars`]), ...
    ascii: Vec<[u128; 3]>,
    /// ... and a bit each for whether one lies outside ASCII.
    wide: Vec<u8>,
    /// Continuation bytes still due at each node, reading its path from a token's start.
    pending: Vec<u8>,
    /// The most characters a token below each node holds after it (a character begun above
    /// the node and ended below counts).
    longest: Vec<u16>,
    /// Token ids in depth-first order of their nodes.
    tokens: Vec<u32>,
    /// The root's child for each first byte (0: none). A byte-level vocabulary gives the
    /// root 256 children; scanning them from each byte position took spelling a 200-byte
    /// text from 15 to 85 µs.
    roots: [u32; 256],
}

/// Characters tokens hold: a bit per ASCII character, with bit 0 ([`ODD`]) standing for
/// what is not a plain character up to U+10FFFF (see [`Utf8`]) or a token ending inside
/// one; and whether any lies outside ASCII.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Chars {
    pub(crate) ascii: u128,
    pub(crate) wide: bool,
}

impl Chars {
    fn join(self, other: Chars) -> Chars {
        Chars {
            ascii: self.ascii | other.ascii,
            wide: self.wide || other.wide,
        }
    }
}

/// The best spelling of a text from some position on (see [`TokenTrie::best_first`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spelled {
    /// Tokens from this position to the end.
    pub(crate) count: u32,
    /// The first of them ...
    pub(crate) token: u32,
    /// ... and its length in bytes.
    pub(crate) len: u32,
}

/// The bit in [`Chars::ascii`] for what a walk must read token by token.
pub(crate) const ODD: u128 = 1;

/// Subtrees smaller than this (in nodes) are read rather than tested a character or two
/// deep.
const DEEPER_FROM: u32 = 8;

/// Where a token's bytes stand in a character, read from the token's start as
/// llama.cpp's decoder reads them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Utf8 {
    /// Continuation bytes still due.
    pending: u8,
    /// The range the next continuation byte must fall in to stay well-formed.
    low: u8,
    high: u8,
    /// The character in progress (or just ended) is odd: not a plain well-formed
    /// character up to U+10FFFF. A zero byte, a byte that cannot lead, an overlong form,
    /// one past U+10FFFF, and a continuation byte out of range are odd.
    odd: bool,
}

impl Utf8 {
    /// The state after `byte`.
    fn step(self, byte: u8) -> Utf8 {
        let lead = |pending, low, high| Utf8 {
            pending,
            low,
            high,
            odd: false,
        };
        let odd = |pending| Utf8 {
            pending,
            odd: true,
            ..Utf8::default()
        };
        if byte == 0 {
            return odd(0);
        }
        if self.pending > 0 {
            return Utf8 {
                pending: self.pending - 1,
                low: 0x80,
                high: 0xBF,
                odd: self.odd || !(self.low..=self.high).contains(&byte),
            };
        }
        match byte {
            0x01..=0x7F => Utf8::default(),
            0xC2..=0xDF => lead(1, 0x80, 0xBF),
            0xE0 => lead(2, 0xA0, 0xBF),
            0xE1..=0xEF => lead(2, 0x80, 0xBF),
            0xF0 => lead(3, 0x90, 0xBF),
            0xF1..=0xF3 => lead(3, 0x80, 0xBF),
            0xF4 => lead(3, 0x80, 0x8F),
            // Read by llama.cpp, but as overlong forms or past U+10FFFF.
            0xC0 | 0xC1 => odd(1),
            0xF5..=0xFF => odd(3),
            // Refused by llama.cpp as a first byte.
            _ => odd(0),
        }
    }
}

impl TokenTrie {
    /// The trie of `pieces` (a token's id is its index; empty pieces are left out).
    pub(crate) fn new(pieces: &[Vec<u8>]) -> TokenTrie {
        let mut order: Vec<u32> = (0..pieces.len() as u32)
            .filter(|&id| !pieces[id as usize].is_empty())
            .collect();
        order.sort_by(|&a, &b| pieces[a as usize].cmp(&pieces[b as usize]));
        let mut trie = TokenTrie {
            byte: vec![0],
            size: vec![1],
            first: vec![0],
            ascii: Vec::new(),
            wide: Vec::new(),
            pending: Vec::new(),
            longest: Vec::new(),
            tokens: Vec::with_capacity(order.len()),
            roots: [0; 256],
        };
        let mut parent = vec![0u32];
        let mut utf8 = vec![Utf8::default()];
        // The nodes on the path to the last token, the root first.
        let mut path: Vec<usize> = vec![0];
        let mut previous: &[u8] = &[];
        for id in order {
            let bytes = pieces[id as usize].as_slice();
            let common = previous
                .iter()
                .zip(bytes)
                .take_while(|(a, b)| a == b)
                .count();
            while path.len() > common + 1 {
                trie.close(&mut path);
            }
            for &byte in &bytes[common..] {
                let up = path.last().copied().unwrap_or(0);
                parent.push(up as u32);
                utf8.push(utf8[up].step(byte));
                path.push(trie.byte.len());
                trie.byte.push(byte);
                trie.size.push(1);
                trie.first.push(trie.tokens.len() as u32);
            }
            trie.tokens.push(id);
            previous = bytes;
        }
        while path.len() > 1 {
            trie.close(&mut path);
        }
        trie.size[0] = trie.byte.len() as u32;
        trie.first.push(trie.tokens.len() as u32);
        trie.summarize(&parent, &utf8);
        let mut child = 1;
        while child < trie.byte.len() {
            trie.roots[usize::from(trie.byte[child])] = child as u32;
            child += trie.size[child] as usize;
        }
        trie
    }

    /// Ends the last node on `path`: its size is known.
    fn close(&mut self, path: &mut Vec<usize>) {
        if let Some(node) = path.pop() {
            self.size[node] = (self.byte.len() - node) as u32;
        }
    }

    /// Fills `ascii`, `wide` and `pending`, children before parents, from each node's
    /// parent and its place in a character.
    fn summarize(&mut self, parent: &[u32], utf8: &[Utf8]) {
        let n = self.byte.len();
        self.ascii = vec![[0; 3]; n];
        self.wide = vec![0; n];
        self.pending = utf8.iter().map(|u| u.pending).collect();
        self.longest = vec![0; n];
        for node in (1..n).rev() {
            let state = utf8[node];
            let [next, second, rest] = self.below(node);
            let up = if state.pending == 0 {
                // The node ends a character: what its parent holds next.
                let char = match self.byte[node] {
                    _ if state.odd => Chars {
                        ascii: ODD,
                        wide: false,
                    },
                    byte @ 0..=0x7F => Chars {
                        ascii: 1 << byte,
                        wide: false,
                    },
                    _ => Chars {
                        ascii: 0,
                        wide: true,
                    },
                };
                [char, next, second.join(rest)]
            } else {
                let ends_inside = self.first[node] < self.first[node + 1];
                let mut next = next;
                if state.odd || ends_inside {
                    next.ascii |= ODD;
                }
                [next, second, rest]
            };
            let up_node = parent[node] as usize;
            let longest = self.longest[node].saturating_add(u16::from(state.pending == 0));
            self.longest[up_node] = self.longest[up_node].max(longest);
            for (i, chars) in up.iter().enumerate() {
                self.ascii[up_node][i] |= chars.ascii;
                self.wide[up_node] |= u8::from(chars.wide) << i;
            }
        }
    }

    /// What node `node` holds below it: the next character, the second, and the rest.
    fn below(&self, node: usize) -> [Chars; 3] {
        let ascii = self.ascii[node];
        std::array::from_fn(|i| Chars {
            ascii: ascii[i],
            wide: self.wide[node] >> i & 1 == 1,
        })
    }

    /// Allows in `mask` every token of the vocabulary that may follow the chart's committed
    /// state (by the chart's bytes-level reading; cut characters are left to the caller).
    /// The chart is back at its committed state afterwards.
    pub(crate) fn walk(&self, chart: &mut Chart, tables: &Tables, mask: &mut SimpleVob) {
        // The end of the subtree being read at each depth below the root.
        let mut ends: Vec<usize> = vec![self.byte.len()];
        let mut node = 1;
        while let Some(&end) = ends.last() {
            if node >= end {
                ends.pop();
                if !ends.is_empty() {
                    chart.pop(1);
                }
                continue;
            }
            let after = node + self.size[node] as usize;
            if !chart.push(tables, self.byte[node], ends.len() == 1) {
                node = after;
                continue;
            }
            let skip = after == node + 1 || {
                let [next, second, rest] = self.below(node);
                let pending = self.pending[node];
                let all = next.join(second).join(rest);
                chart.loops_over(tables, pending, all)
                    || (self.size[node] >= DEEPER_FROM
                        && (chart.loops_after(tables, pending, &[next], second.join(rest))
                            || chart.loops_after(tables, pending, &[next, second], rest)
                            || self.longest[node] < u16::MAX
                                && chart.leads_on(tables, pending, all, self.longest[node])))
            };
            if skip {
                self.allow(mask, node, after);
                chart.pop(1);
                node = after;
            } else {
                self.allow(mask, node, node + 1);
                ends.push(after);
                node += 1;
            }
        }
        chart.pop_to(1);
    }

    /// The best first token of a spelling of `bytes[start..]` in tokens whose pieces,
    /// one after another, spell it exactly, given `best` for every later position (`None`
    /// where no tokens spell the rest): the one leaving the fewest tokens, the shorter of
    /// equals, the lowest id among tokens of one piece.
    pub(crate) fn best_first(
        &self,
        bytes: &[u8],
        start: usize,
        best: &[Option<Spelled>],
    ) -> Option<Spelled> {
        let mut found: Option<Spelled> = None;
        let mut node = 0;
        for (at, &byte) in bytes.iter().enumerate().skip(start) {
            let Some(child) = self.child(node, byte) else {
                break;
            };
            node = child;
            let own = &self.tokens[self.first[node] as usize..self.first[node + 1] as usize];
            let (Some(&token), Some(Some(after))) = (own.iter().min(), best.get(at + 1)) else {
                continue;
            };
            if found.is_none_or(|f| after.count + 1 < f.count) {
                found = Some(Spelled {
                    count: after.count + 1,
                    token,
                    len: (at + 1 - start) as u32,
                });
            }
        }
        found
    }

    /// The child of `node` reached by `byte`, if any (children follow their parent in
    /// byte order).
    fn child(&self, node: usize, byte: u8) -> Option<usize> {
        if node == 0 {
            return Some(self.roots[usize::from(byte)] as usize).filter(|&child| child > 0);
        }
        let end = node + self.size[node] as usize;
        let mut child = node + 1;
        while child < end {
            match self.byte[child].cmp(&byte) {
                std::cmp::Ordering::Less => child += self.size[child] as usize,
                std::cmp::Ordering::Equal => return Some(child),
                std::cmp::Ordering::Greater => return None,
            }
        }
        None
    }

    /// Allows the tokens from node `from`'s to node `to`'s (exclusive).
    fn allow(&self, mask: &mut SimpleVob, from: usize, to: usize) {
        for &token in &self.tokens[self.first[from] as usize..self.first[to] as usize] {
            mask.allow_token(token);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn nodes_are_depth_first_with_sizes_tokens_and_bytes_below() {
        let pieces: Vec<Vec<u8>> = [&b"ab"[..], b"a", b"b\xC3", b"", b"ab", b"ac"]
            .iter()
            .map(|p| p.to_vec())
            .collect();
        let trie = TokenTrie::new(&pieces);
        // root, a, ab, ac, b, b\xC3
        assert_eq!(trie.byte, vec![0, b'a', b'b', b'c', b'b', 0xC3]);
        assert_eq!(trie.size, vec![6, 3, 1, 1, 2, 1]);
        assert_eq!(trie.tokens, vec![1, 0, 4, 5, 2]);
        assert_eq!(trie.first, vec![0, 0, 1, 3, 4, 4, 5]);
        let below = |node: usize| {
            let [next, second, rest] = trie.below(node);
            next.join(second).join(rest)
        };
        assert_eq!(below(1).ascii, 1 << b'b' | 1 << b'c');
        assert!(!below(1).wide);
        // "b\xC3" ends inside a character.
        assert_eq!(below(4).ascii, ODD);
        assert_eq!(
            trie.ascii[0],
            [1 << b'a' | 1 << b'b', 1 << b'b' | 1 << b'c' | ODD, 0]
        );
    }

    #[test]
    fn characters_outside_ascii_are_wide_and_odd_forms_are_odd() {
        let plain: [&[u8]; 4] = [
            b"a\xC3\xA9",         // é
            b"b\xE0\xA4\x85",     // Devanagari A
            b"c\xF0\x9F\x98\x80", // an emoji
            b"d\xF4\x8F\xBF\xBF", // U+10FFFF
        ];
        let odd: [&[u8]; 7] = [
            b"e\xE0\x80\x80",     // overlong
            b"f\xF0\x80\x80\x80", // overlong
            b"g\xF4\x90\x80\x80", // past U+10FFFF
            b"h\xC0\xAF",         // overlong
            b"i\x80",             // a lone continuation byte
            b"j\xC3a",            // a continuation byte missing
            b"k\xC3",             // ending inside a character
        ];
        let pieces: Vec<Vec<u8>> = plain.iter().chain(&odd).map(|p| p.to_vec()).collect();
        let trie = TokenTrie::new(&pieces);
        let node = |first: u8| {
            (1..trie.byte.len())
                .find(|&n| trie.byte[n] == first)
                .unwrap()
        };
        let below = |node: usize| {
            let [next, second, rest] = trie.below(node);
            next.join(second).join(rest)
        };
        for piece in plain {
            let wide = Chars {
                ascii: 0,
                wide: true,
            };
            assert_eq!(below(node(piece[0])), wide, "{piece:?}");
        }
        for piece in odd {
            assert_eq!(below(node(piece[0])).ascii & ODD, ODD, "{piece:?}");
        }
        // Bytes due inside a character.
        let at = node(b'b');
        assert_eq!(&trie.pending[at..at + 4], &[0, 2, 1, 0]);
    }
}
