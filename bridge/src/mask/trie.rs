//! The vocabulary as a token trie, walked depth-first with the chart to find a mask.
//!
//! Nodes are laid out in depth-first order with their subtree sizes (as `toktrie` lays
//! them out), so skipping a refused prefix is one addition, and a subtree's tokens are one
//! run of [`TokenTrie::tokens`]. Each node also knows which ASCII characters occur below
//! it: when the chart's set leads back to itself over every one of them, every token below
//! is allowed without being read. Inside a JSON string that holds for almost every
//! two-byte prefix, and a walk there reads a few thousand nodes instead of the whole
//! vocabulary (measured on `mask_report`'s 2,000 SmolLM2 positions: see `chart.rs`).

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
    /// The characters on the nodes below each node: a bit per ASCII byte, and bit 0 for
    /// a zero byte or any byte outside ASCII (never one a set leads back to itself over).
    below: Vec<u128>,
    /// Token ids in depth-first order of their nodes.
    tokens: Vec<u32>,
}

/// The bit of `byte` in [`TokenTrie::below`].
fn bit(byte: u8) -> u128 {
    if byte < 128 {
        1 << byte
    } else {
        1
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
            below: vec![0],
            tokens: Vec::with_capacity(order.len()),
        };
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
                path.push(trie.byte.len());
                trie.byte.push(byte);
                trie.size.push(1);
                trie.first.push(trie.tokens.len() as u32);
                trie.below.push(0);
            }
            trie.tokens.push(id);
            previous = bytes;
        }
        while path.len() > 1 {
            trie.close(&mut path);
        }
        trie.size[0] = trie.byte.len() as u32;
        trie.first.push(trie.tokens.len() as u32);
        trie
    }

    /// Ends the last node on `path`: its size is known, and its parent learns its bytes.
    fn close(&mut self, path: &mut Vec<usize>) {
        let Some(node) = path.pop() else { return };
        self.size[node] = (self.byte.len() - node) as u32;
        if let Some(&parent) = path.last() {
            self.below[parent] |= self.below[node] | bit(self.byte[node]);
        }
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
            if after == node + 1 || chart.loops_over(self.below[node]) {
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

    /// Allows the tokens from node `from`'s to node `to`'s (exclusive).
    fn allow(&self, mask: &mut SimpleVob, from: usize, to: usize) {
        for &token in &self.tokens[self.first[from] as usize..self.first[to] as usize] {
            mask.allow_token(token);
        }
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(trie.below[1], bit(b'b') | bit(b'c'));
        assert_eq!(trie.below[4], 1);
        assert_eq!(trie.below[0], bit(b'a') | bit(b'b') | bit(b'c') | 1);
    }
}
