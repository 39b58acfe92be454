//! A byte-level Earley chart with undo: the parser state the token trie is walked with.
//!
//! Each *level* is the state after one more byte: an Earley set (made when a character is
//! complete) and the start of a character whose later bytes are still to come. Pushing a
//! byte adds a level; popping removes it. Bytes are decoded as
//! llama.cpp's grammar sampler decodes them (`decode_utf8`): a character cut at the end of a
//! token passes when llama.cpp's own test for a cut character passes, a zero byte ends
//! the token, and a malformed sequence rejects it.
//!
//! Sets are made once per walk. The sets a walk makes stay until it ends (popping a level
//! does not remove its set), and each set remembers where each character led: a sibling
//! in the token trie that reads a character the same scan items advance over reaches the
//! same set without an Earley step. Sets that repeat themselves are not made at all.
//! Inside a JSON string, the set after another character is the set before it (same
//! items, the new predictions standing where the old ones stood), so the character leads
//! back to the set it came from. Walking the whole vocabulary inside a string then costs
//! a bit test per byte.
//!
//! Measured on `mask_report`'s 2,000 SmolLM2 positions (mean / p99 mask): before sets
//! were kept for the walk, a walk inside an object key made the same two sets again under
//! each of its thousands of two-byte prefixes (1,006 / 8,191 µs); kept, 320 / 1,783 µs
//! (the trie's unread subtrees do the rest: `trie.rs`).

use rustc_hash::FxHashSet;

use super::tables::{Next, Tables};
use super::trie::{Chars, ODD};

/// Items processed in one walk before the chart gives up (see [`Chart::exhausted`]).
pub(crate) const MAX_WORK: u64 = 100_000_000;

/// An Earley item: a dotted position and the set where its production started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Item {
    pos: u32,
    origin: u32,
}

/// One Earley set.
#[derive(Debug, Clone)]
struct Set {
    /// Its items: `items[start..end]`.
    start: u32,
    end: u32,
    /// The text up to here is complete.
    accepting: bool,
    /// Items not yet complete (the ones that matter for what follows).
    live: u32,
    /// ASCII characters known to lead back to this same set.
    loops: u128,
    /// The set every character from U+0080 to U+10FFFF leads to, when its terminals read
    /// them all alike ([`UNKNOWN`] until asked, [`MIXED`] when they do not).
    outside: u32,
    /// The set each ASCII character leads to, once known ([`UNKNOWN`], [`REJECTED`]).
    ascii: Option<Box<[u32; 128]>>,
    /// By which scan items a character advances (a bit per scan item, in order), the set
    /// it leads to: characters advancing the same items lead to the same set.
    classes: Vec<(u64, u32)>,
    /// Once a completion has looked here: the items waiting on each nonterminal, already
    /// advanced over it, sorted by the nonterminal. A walk completes into the same set
    /// from every child of its trie node.
    waiting: Option<Vec<(u32, Item)>>,
}

/// A character begun and not finished (llama.cpp's `llama_partial_utf8`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Partial {
    value: u32,
    /// Bytes still to come (0: none pending).
    remain: u8,
    /// Begun in an earlier token: llama.cpp checks the continuation bytes of those.
    carried: bool,
}

/// The state after some bytes.
#[derive(Debug, Clone, Copy)]
struct Level {
    set: u32,
    partial: Partial,
    /// A zero byte ended the token: later bytes are not read.
    ended: bool,
    /// End-of-generation may come next (read on the committed level only).
    eog: bool,
}

/// No set is known yet for an ASCII character.
const UNKNOWN: u32 = u32::MAX;
/// No text of the grammar continues with the character.
const REJECTED: u32 = u32::MAX - 1;
/// The set's terminals do not read every character outside ASCII alike.
const MIXED: u32 = u32::MAX - 2;

/// The chart: the sets so far, and the levels of the token being tried.
#[derive(Debug, Clone)]
pub(crate) struct Chart {
    items: Vec<Item>,
    sets: Vec<Set>,
    levels: Vec<Level>,
    /// Sets of the committed state; the ones past it belong to the current walk or token.
    kept: usize,
    /// Sets that remember where characters lead (cleared when the sets they name go).
    remembering: Vec<u32>,
    /// Scratch: the items of the set being built.
    seen: FxHashSet<Item>,
    /// Scratch: which nonterminals the set being built has predicted.
    predicted: Vec<u32>,
    /// Scratch: which positions the set being built holds with itself as origin.
    here: Vec<u32>,
    stamp: u32,
    /// Items processed since [`Chart::reset_work`].
    work: u64,
}

/// How many bytes follow a first byte, by its top four bits, as llama.cpp reads them
/// (`0` marks a byte that cannot start a character).
const LENGTH: [u8; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 3, 4];

impl Chart {
    /// The chart before any text.
    pub(crate) fn new(tables: &Tables) -> Chart {
        let mut chart = Chart {
            items: Vec::new(),
            sets: Vec::new(),
            levels: Vec::new(),
            kept: 0,
            remembering: Vec::new(),
            seen: FxHashSet::default(),
            predicted: vec![0; tables.starts.len()],
            here: vec![0; tables.next.len()],
            stamp: 0,
            work: 0,
        };
        chart.begin_set();
        chart.add(Item {
            pos: tables.start,
            origin: 0,
        });
        chart.close(tables);
        let eog = chart.sets[0].accepting;
        chart.levels.push(Level {
            set: 0,
            partial: Partial::default(),
            ended: false,
            eog,
        });
        chart.kept = chart.sets.len();
        chart
    }

    /// May end-of-generation come next? As llama.cpp has it: the text up to the last whole
    /// character is complete, and the last token held a whole character (a token that
    /// only begins one drops the finished parse).
    pub(crate) fn is_complete(&self) -> bool {
        self.levels.first().is_some_and(|l| l.eog)
    }

    /// Does the committed state hold the start of a character the next token continues?
    pub(crate) fn carries_partial(&self) -> bool {
        self.levels.first().is_some_and(|l| l.partial.remain > 0)
    }

    /// Has the walk done more work than [`MAX_WORK`]?
    pub(crate) fn exhausted(&self) -> bool {
        self.work > MAX_WORK
    }

    /// Starts counting work afresh.
    pub(crate) fn reset_work(&mut self) {
        self.work = 0;
    }

    /// Makes the current state the committed one: the levels of the token are folded into
    /// it, and a cut character now continues into the next token.
    pub(crate) fn commit(&mut self) {
        let whole = self
            .levels
            .iter()
            .skip(1)
            .any(|l| !l.ended && l.partial.remain == 0);
        if let Some(mut top) = self.top() {
            top.eog = whole && self.sets[top.set as usize].accepting;
            top.ended = false;
            if top.partial.remain > 0 {
                top.partial.carried = true;
            }
            self.levels.clear();
            self.levels.push(top);
            self.kept = self.sets.len();
        }
    }

    /// Removes the last `n` levels (never the committed one). Their sets stay until
    /// [`Chart::pop_to`] returns to the committed state.
    pub(crate) fn pop(&mut self, n: usize) {
        let keep = self.levels.len().saturating_sub(n).max(1);
        self.levels.truncate(keep);
    }

    /// Pops back to `depth` levels; at 1, the sets past the committed state go too.
    pub(crate) fn pop_to(&mut self, depth: usize) {
        self.pop(self.levels.len().saturating_sub(depth));
        if self.levels.len() == 1 && self.sets.len() > self.kept {
            let start = self.sets[self.kept].start as usize;
            self.sets.truncate(self.kept);
            self.items.truncate(start);
            // What the kept sets remember may name sets just removed.
            let kept = self.kept as u32;
            for set in std::mem::take(&mut self.remembering) {
                if let Some(set) = self.sets.get_mut(set as usize).filter(|_| set < kept) {
                    set.ascii = None;
                    set.classes.clear();
                    set.outside = UNKNOWN;
                }
            }
        }
    }

    /// With `pending` continuation bytes due (as the token trie reads the token), does the
    /// set before the current character lead back to itself over every character of
    /// `chars` (the end of the current one, if any, and those after it)? Then every text
    /// of them may follow.
    pub(crate) fn loops_over(&mut self, tables: &Tables, pending: u8, chars: Chars) -> bool {
        match self.set_before_char(pending) {
            Some(set) => self.set_loops_over(tables, set, chars),
            None => false,
        }
    }

    /// With `pending` continuation bytes due, do the characters of `steps` lead the set
    /// before the current character, one step each, to one set per step (every character
    /// of a step to the same set), the last of which leads back to itself over every
    /// character of `rest`? Then every text of one character of each step in turn,
    /// followed by characters of `rest`, may follow.
    pub(crate) fn loops_after(
        &mut self,
        tables: &Tables,
        pending: u8,
        steps: &[Chars],
        rest: Chars,
    ) -> bool {
        let Some(mut from) = self.set_before_char(pending) else {
            return false;
        };
        for step in steps {
            match self.one_target(tables, from, *step) {
                Some(to) => from = to,
                None => return false,
            }
        }
        self.set_loops_over(tables, from, rest)
    }

    /// With `pending` continuation bytes due, do the characters of `chars` lead the set
    /// before the current character on, `steps` times, to one set per step (every
    /// character to the same set)? Then every text of at most `steps` of them may follow:
    /// inside a string of bounded length each character leads to the next count.
    pub(crate) fn leads_on(
        &mut self,
        tables: &Tables,
        pending: u8,
        chars: Chars,
        steps: u16,
    ) -> bool {
        let Some(mut from) = self
            .set_before_char(pending)
            .filter(|_| chars.ascii & ODD == 0)
        else {
            return false;
        };
        for _ in 0..steps {
            match self.one_target(tables, from, chars) {
                Some(to) => from = to,
                None => return false,
            }
        }
        true
    }

    /// The one set every character of `chars` leads set `from` to, if there is one.
    fn one_target(&mut self, tables: &Tables, from: u32, chars: Chars) -> Option<u32> {
        if chars.ascii & ODD != 0 {
            return None;
        }
        let mut target = None;
        let mut bits = chars.ascii;
        while bits != 0 {
            let value = bits.trailing_zeros();
            bits &= bits - 1;
            let to = self.next_set(tables, from, value);
            if to == REJECTED || target.is_some_and(|t| t != to) {
                return None;
            }
            target = Some(to);
        }
        if chars.wide {
            let to = self.outside(tables, from);
            if to == REJECTED || to == MIXED || target.is_some_and(|t| t != to) {
                return None;
            }
            target = Some(to);
        }
        target
    }

    /// The set before the current character, when the chart reads the token as the token
    /// trie does: `pending` bytes due, and a character in progress begun in this token.
    fn set_before_char(&self, pending: u8) -> Option<u32> {
        let top = self.top()?;
        let same = top.partial.remain == pending && (pending == 0 || !top.partial.carried);
        (same && !top.ended).then_some(top.set)
    }

    /// Does set `set` lead back to itself over every character of `chars`?
    fn set_loops_over(&mut self, tables: &Tables, set: u32, chars: Chars) -> bool {
        chars.ascii & !self.sets[set as usize].loops == 0
            && (!chars.wide || self.loops_wide(tables, set))
    }

    /// Does set `set` lead back to itself over every character from U+0080 to U+10FFFF?
    fn loops_wide(&mut self, tables: &Tables, set: u32) -> bool {
        self.outside(tables, set) == set
    }

    /// Where every character from U+0080 to U+10FFFF leads from set `set` when each of its
    /// terminals holds all of them or none, else [`MIXED`]. Learned once per set.
    fn outside(&mut self, tables: &Tables, set: u32) -> u32 {
        let known = self.sets[set as usize].outside;
        if known != UNKNOWN {
            return known;
        }
        let uniform = self
            .scans(tables, set)
            .all(|t| tables.terminals[t as usize].uniform_outside_ascii());
        let next = if uniform {
            self.next_set_by_class(tables, set, 0x80)
        } else {
            MIXED
        };
        self.remember(set).outside = next;
        next
    }

    /// Pushes one byte of a token (`first`: the token's first byte); `false`, and nothing
    /// pushed, when no text of the grammar continues this way. A cut character passes
    /// when some character beginning with its bytes could follow; a token that *ends* in
    /// one must also pass [`Chart::cut_passes`].
    pub(crate) fn push(&mut self, tables: &Tables, byte: u8, first: bool) -> bool {
        let Some(top) = self.top() else { return false };
        if self.exhausted() {
            return false;
        }
        if top.ended {
            self.levels.push(top);
            return true;
        }
        if byte == 0 {
            if first {
                return false;
            }
            self.levels.push(Level { ended: true, ..top });
            return true;
        }
        let partial = top.partial;
        let (value, remain) = if partial.remain > 0 {
            if partial.carried && byte >> 6 != 2 {
                return false;
            }
            (
                (partial.value << 6) + u32::from(byte & 0x3F),
                partial.remain - 1,
            )
        } else {
            let length = LENGTH[usize::from(byte >> 4)];
            if length == 0 {
                return false;
            }
            let mask = (1u8 << (8 - length)) - 1;
            (u32::from(byte & mask), length - 1)
        };
        if remain > 0 {
            let ok = cut_range(value, remain).is_some_and(|(low, high)| {
                self.scans(tables, top.set)
                    .any(|t| tables.terminals[t as usize].holds_some(low, high))
            });
            if ok {
                self.levels.push(Level {
                    set: top.set,
                    partial: Partial {
                        value,
                        remain,
                        carried: partial.carried,
                    },
                    ended: false,
                    eog: false,
                });
            }
            return ok;
        }
        self.push_char(tables, top.set, value)
    }

    /// llama.cpp's test of a token that ends inside a character
    /// (`llama_grammar_match_partial_char`); `true` when none is cut.
    pub(crate) fn cut_passes(&self, tables: &Tables) -> bool {
        let Some(top) = self.top() else { return false };
        if top.partial.remain == 0 {
            return true;
        }
        cut_range(top.partial.value, top.partial.remain).is_some_and(|(low, high)| {
            self.scans(tables, top.set)
                .any(|t| tables.terminals[t as usize].meets(low, high))
        })
    }

    /// The terminals the set's items wait on.
    fn scans<'a>(&'a self, tables: &'a Tables, set: u32) -> impl Iterator<Item = u32> + 'a {
        self.set_items(set)
            .iter()
            .filter_map(|item| match tables.next[item.pos as usize] {
                Next::T(t) => Some(t),
                _ => None,
            })
    }

    fn set_items(&self, set: u32) -> &[Item] {
        let set = &self.sets[set as usize];
        &self.items[set.start as usize..set.end as usize]
    }

    fn top(&self) -> Option<Level> {
        self.levels.last().copied()
    }

    /// Moves the set over one whole character and pushes the level.
    fn push_char(&mut self, tables: &Tables, from: u32, value: u32) -> bool {
        let next = self.next_set(tables, from, value);
        if next == REJECTED {
            return false;
        }
        self.levels.push(Level {
            set: next,
            partial: Partial::default(),
            ended: false,
            eog: false,
        });
        true
    }

    /// The set that set `from` leads to over the character `value`, or [`REJECTED`]:
    /// remembered, or made (once per walk for the scan items it advances).
    fn next_set(&mut self, tables: &Tables, from: u32, value: u32) -> u32 {
        let byte = usize::try_from(value).ok().filter(|&v| v < 128);
        let known = &self.sets[from as usize];
        if let Some(byte) = byte {
            if known.loops >> byte & 1 == 1 {
                return from;
            }
            if let Some(&next) = known.ascii.as_ref().map(|table| &table[byte]) {
                if next != UNKNOWN {
                    return next;
                }
            }
        }
        if byte.is_none() && value <= 0x10FFFF {
            let next = self.outside(tables, from);
            if next != MIXED {
                return next;
            }
        }
        self.next_set_by_class(tables, from, value)
    }

    /// [`Chart::next_set`] by the scan items the character advances.
    fn next_set_by_class(&mut self, tables: &Tables, from: u32, value: u32) -> u32 {
        let byte = usize::try_from(value).ok().filter(|&v| v < 128);
        let known = &self.sets[from as usize];
        let (start, end) = (known.start as usize, known.end as usize);
        // Characters that advance the same scan items lead to the same set.
        let class = self.scan_class(tables, start, end, value);
        let remembered = class.and_then(|class| {
            self.sets[from as usize]
                .classes
                .iter()
                .find(|(c, _)| *c == class)
                .map(|&(_, next)| next)
        });
        let next = match remembered {
            Some(next) => next,
            None => {
                let next = self.make_set(tables, from, start, end, value);
                if let Some(class) = class {
                    self.remember(from).classes.push((class, next));
                }
                next
            }
        };
        if let Some(byte) = byte {
            if next == from {
                self.sets[from as usize].loops |= 1 << byte;
            } else {
                self.remember(from)
                    .ascii
                    .get_or_insert_with(|| Box::new([UNKNOWN; 128]))[byte] = next;
            }
        }
        next
    }

    /// Set `set`, noted as one that remembers where characters lead.
    fn remember(&mut self, set: u32) -> &mut Set {
        let known = &self.sets[set as usize];
        if known.ascii.is_none() && known.classes.is_empty() && known.outside == UNKNOWN {
            self.remembering.push(set);
        }
        &mut self.sets[set as usize]
    }

    /// Makes the set after `items[start..end]` (set `from`) read the character `value`:
    /// its index, `from` itself when it stands for the same state, or [`REJECTED`].
    fn make_set(
        &mut self,
        tables: &Tables,
        from: u32,
        start: usize,
        end: usize,
        value: u32,
    ) -> u32 {
        self.begin_set();
        for i in start..end {
            let item = self.items[i];
            if let Next::T(t) = tables.next[item.pos as usize] {
                if tables.terminals[t as usize].contains(value) {
                    self.add(Item {
                        pos: item.pos + 1,
                        origin: item.origin,
                    });
                }
            }
        }
        let made = self.sets.len() as u32 - 1;
        if self.set_items(made).is_empty() {
            self.drop_last_set();
            return REJECTED;
        }
        self.close(tables);
        if self.same_set(tables, from, made) {
            self.drop_last_set();
            return from;
        }
        made
    }

    /// The waiting index of set `set` (built on first use).
    fn waiting(&mut self, tables: &Tables, set: u32) -> &[(u32, Item)] {
        if self.sets[set as usize].waiting.is_none() {
            let mut waiting: Vec<(u32, Item)> = self
                .set_items(set)
                .iter()
                .filter_map(|parent| match tables.next[parent.pos as usize] {
                    Next::Nt(nt) => Some((
                        nt,
                        Item {
                            pos: parent.pos + 1,
                            origin: parent.origin,
                        },
                    )),
                    _ => None,
                })
                .collect();
            waiting.sort_unstable_by_key(|&(nt, _)| nt);
            self.sets[set as usize].waiting = Some(waiting);
        }
        self.sets[set as usize].waiting.as_deref().unwrap_or(&[])
    }

    /// Which of the first 64 scan items among `items[start..end]` the character advances,
    /// a bit each (`None` past 64 scan items).
    fn scan_class(&self, tables: &Tables, start: usize, end: usize, value: u32) -> Option<u64> {
        let mut class = 0u64;
        let mut scan = 0;
        for item in &self.items[start..end] {
            if let Next::T(t) = tables.next[item.pos as usize] {
                if scan == 64 {
                    return None;
                }
                if tables.terminals[t as usize].contains(value) {
                    class |= 1 << scan;
                }
                scan += 1;
            }
        }
        Some(class)
    }

    /// Does set `new` (the last one) stand for the same state as set `old`: the same
    /// items still waiting on something, its own predictions standing for `old`'s?
    fn same_set(&self, tables: &Tables, old: u32, new: u32) -> bool {
        let (a, b) = (&self.sets[old as usize], &self.sets[new as usize]);
        if a.accepting != b.accepting || a.live != b.live {
            return false;
        }
        let live = |set: u32, rename: bool| -> Vec<Item> {
            let mut items: Vec<Item> = self
                .set_items(set)
                .iter()
                .filter(|i| !matches!(tables.next[i.pos as usize], Next::End(_)))
                .map(|&i| {
                    if rename && i.origin == new {
                        Item { origin: old, ..i }
                    } else {
                        i
                    }
                })
                .collect();
            items.sort_unstable();
            items.dedup();
            items
        };
        live(old, false) == live(new, true)
    }

    fn begin_set(&mut self) {
        let at = self.items.len() as u32;
        self.sets.push(Set {
            start: at,
            end: at,
            accepting: false,
            live: 0,
            loops: 0,
            outside: UNKNOWN,
            ascii: None,
            classes: Vec::new(),
            waiting: None,
        });
        self.seen.clear();
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.predicted.iter_mut().for_each(|s| *s = 0);
            self.here.iter_mut().for_each(|s| *s = 0);
            self.stamp = 1;
        }
    }

    fn drop_last_set(&mut self) {
        if let Some(set) = self.sets.pop() {
            self.items.truncate(set.start as usize);
        }
    }

    /// Adds an item to the set being built, once. Items starting here (predictions, most
    /// of a set) are told apart by a stamp per position, the rest by a hash set.
    fn add(&mut self, item: Item) {
        let here = self.sets.len() as u32 - 1;
        let new = if item.origin == here {
            let stamp = &mut self.here[item.pos as usize];
            let new = *stamp != self.stamp;
            *stamp = self.stamp;
            new
        } else {
            self.seen.insert(item)
        };
        if new {
            self.items.push(item);
            if let Some(set) = self.sets.last_mut() {
                set.end += 1;
            }
        }
    }

    /// Prediction and completion on the last set to a fixed point, with Aycock and
    /// Horspool's step over nullable nonterminals.
    fn close(&mut self, tables: &Tables) {
        let here = self.sets.len() as u32 - 1;
        let start = self.sets[here as usize].start as usize;
        let mut k = start;
        while k < self.items.len() {
            let item = self.items[k];
            k += 1;
            self.work += 1;
            match tables.next[item.pos as usize] {
                Next::End(lhs) => {
                    if item.origin == here {
                        continue;
                    }
                    let waiting = self.waiting(tables, item.origin);
                    let from = waiting.partition_point(|&(nt, _)| nt < lhs);
                    let mut i = from;
                    while let Some(&(nt, parent)) = self.sets[item.origin as usize]
                        .waiting
                        .as_ref()
                        .and_then(|w| w.get(i))
                    {
                        if nt != lhs {
                            break;
                        }
                        self.add(parent);
                        i += 1;
                    }
                }
                Next::Nt(nt) => {
                    if self.predicted[nt as usize] != self.stamp {
                        self.predicted[nt as usize] = self.stamp;
                        for &pos in &tables.starts[nt as usize] {
                            self.add(Item { pos, origin: here });
                        }
                    }
                    if tables.nullable[nt as usize] {
                        self.add(Item {
                            pos: item.pos + 1,
                            origin: item.origin,
                        });
                    }
                }
                Next::T(_) => {}
            }
        }
        let (mut accepting, mut live) = (false, 0);
        for item in self.set_items(here) {
            match tables.next[item.pos as usize] {
                Next::End(_) => accepting |= item.pos == tables.accept && item.origin == 0,
                _ => live += 1,
            }
        }
        self.sets[here as usize].accepting = accepting;
        self.sets[here as usize].live = live;
    }

    /// The key of the committed state for a cache of masks: the current set's items and,
    /// through their origins, the items waiting in every earlier set they can return to,
    /// with sets numbered in the order they are reached. Two states with one key accept
    /// the same continuations.
    pub(crate) fn key(&self, tables: &Tables) -> Vec<u32> {
        let Some(top) = self.top() else {
            return Vec::new();
        };
        let mut key = vec![
            top.partial.value,
            u32::from(top.partial.remain) | u32::from(top.partial.carried) << 8,
            u32::from(self.sets[top.set as usize].accepting),
            // End-of-generation also depends on the last token (see `is_complete`).
            u32::from(self.is_complete()),
        ];
        let mut order: Vec<u32> = vec![top.set];
        let mut k = 0;
        while k < order.len() {
            let set = order[k];
            let current = k == 0;
            k += 1;
            for item in self.set_items(set) {
                let keep = match tables.next[item.pos as usize] {
                    Next::End(_) => false,
                    Next::T(_) => current,
                    Next::Nt(_) => true,
                };
                if !keep {
                    continue;
                }
                let label = match order.iter().position(|&s| s == item.origin) {
                    Some(label) => label,
                    None => {
                        order.push(item.origin);
                        order.len() - 1
                    }
                };
                key.push(item.pos);
                key.push(label as u32);
            }
            key.push(u32::MAX);
        }
        key
    }
}

/// The code points a character cut after its first bytes could become, as llama.cpp
/// computes them (`None`: a two-byte character whose value would be ASCII).
fn cut_range(value: u32, remain: u8) -> Option<(u32, u32)> {
    if remain == 1 && value < 2 {
        return None;
    }
    let shift = 6 * u32::from(remain);
    let mut low = value << shift;
    let high = low | ((1 << shift) - 1);
    if low == 0 {
        if remain == 2 {
            low = 1 << 11;
        } else if remain == 3 {
            low = 1 << 16;
        }
    }
    Some((low, high))
}
