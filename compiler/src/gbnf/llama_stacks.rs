//! llama.cpp's parse stacks, followed in Rust so that their number can be bounded.
//!
//! llama.cpp's grammar sampler keeps every *stack* (a path of positions through the rules,
//! innermost last) that the text so far can be on, and moves all of them over each
//! character. Stacks share nothing, so where a rule recurses and more than one ending is
//! still possible (`root ::= "a" root "b" | "a" root "c" | "a"`: each `a` may wait for a
//! `b` or a `c`) the number of stacks doubles with every level — even for an unambiguous
//! grammar — and llama.cpp compares stacks pairwise to drop duplicates, so one token can
//! take hours or exhaust memory. `check` cannot know which texts a model will write,
//! so a generator follows the same stacks here, token by token, *before* llama.cpp does,
//! and stops with an error when llama.cpp's work would pass [`Limits`].
//!
//! The stacks are llama.cpp's own, not an approximation: [`LlamaStacks::new`] lays out the
//! grammar as llama.cpp's parser does (a literal is one element per character, a group or
//! a repetition is a generated rule, `S{m,n}` is `S` m times then `n − m` nested optional
//! rules, `S*` is `S' ::= S S' |`), and the moves are those of llama.cpp's
//! `advance_stack` and `accept_token`, so the counts agree exactly.

use rustc_hash::{FxHashMap, FxHashSet};
use thiserror::Error;

use super::ast::{Expr, Grammar, TokenRef};
use super::charset::CharSet;
use super::flat::MAX_REPEAT;

/// A position in the layout: an index into [`Layout::elements`].
type Position = u32;

/// A stack of positions; the top is the last one.
type Stack = Vec<Position>;

/// One element of llama.cpp's rule layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Element {
    /// One character of a set (a literal's character, a class, `.`).
    Chars(u32),
    /// One token of the vocabulary (`negated`: any token but this one).
    Token { id: u32, negated: bool },
    /// A reference to a rule, by index into [`Layout::starts`].
    Ref(u32),
    /// The end of an alternative, another one follows.
    Alt,
    /// The end of a rule's last alternative.
    End,
}

/// The grammar as llama.cpp lays it out: every rule's alternatives, one after another.
#[derive(Debug, Default, Clone)]
struct Layout {
    elements: Vec<Element>,
    /// Where each rule's first alternative starts.
    starts: Vec<Position>,
    sets: Vec<CharSet>,
}

impl Layout {
    fn is_end(&self, position: Position) -> bool {
        matches!(
            self.elements.get(position as usize),
            Some(Element::Alt | Element::End) | None
        )
    }

    /// Where each alternative of `rule` starts (an empty one starts at its own end).
    fn alternatives(&self, rule: u32) -> impl Iterator<Item = Position> + '_ {
        let first = self.starts.get(rule as usize).copied();
        std::iter::successors(first, move |&start| {
            let mut end = start;
            while !self.is_end(end) {
                end += 1;
            }
            (self.elements.get(end as usize) == Some(&Element::Alt)).then_some(end + 1)
        })
    }
}

/// How much work llama.cpp may be asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most stacks at any point (llama.cpp checks every stack against every candidate
    /// token when it masks the vocabulary).
    pub stacks: usize,
    /// The most stack comparisons one token may cost (llama.cpp drops duplicate stacks by
    /// a linear search, so a token costs about the square of the stacks it makes).
    pub work: u64,
}

impl Default for Limits {
    /// Above what compiled schemas need: over 27,000 outputs sampled from the grammars of
    /// the JSONSchemaBench splits, the most stacks at once was 1,554 (most outputs stay
    /// under 16) and no token passed these limits. At 4,096 stacks llama.cpp spends about
    /// 0.05 s per character dropping duplicates and a few tenths of a second masking the
    /// vocabulary, so a token near the limits costs it about a second at most, where an
    /// exploding grammar would cost it hours.
    fn default() -> Self {
        Limits {
            stacks: 4_096,
            work: 16_000_000,
        }
    }
}

/// What to do about a grammar that is [`TooAmbiguous`].
pub const ADVICE: &str = "rewrite the ambiguous part (alternatives or nested repetitions \
     that can match the same text, or recursions that can end in more than one way) so the \
     text so far has one reading";

/// llama.cpp's work would pass the [`Limits`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("the grammar is too ambiguous for llama.cpp's sampler: {what}; {ADVICE}")]
pub struct TooAmbiguous {
    /// What passed which limit, in words.
    pub what: String,
}

/// The stacks llama.cpp's grammar sampler holds, followed token by token.
///
/// ```
/// use gbnfc_compiler::gbnf::{llama_stacks::{LlamaStacks, Limits}, parse};
/// // Each `a` may still need a `b` or a `c`: llama.cpp keeps a stack for every mix.
/// let grammar = parse("root ::= \"a\" root \"b\" | \"a\" root \"c\" | \"a\"\n").unwrap();
/// let mut stacks = LlamaStacks::new(&grammar, |_| None, Limits::default()).unwrap();
/// assert_eq!(stacks.len(), 3);
/// assert!(stacks.accept(0, "aa").unwrap());
/// assert_eq!(stacks.len(), 14);
/// assert!(stacks.accept(0, &"a".repeat(20)).is_err()); // 2^21 stacks: refused
/// ```
#[derive(Debug, Clone)]
pub struct LlamaStacks {
    layout: Layout,
    stacks: Vec<Stack>,
    limits: Limits,
}

impl LlamaStacks {
    /// Lays the grammar out as llama.cpp does and makes its initial stacks. `token_id`
    /// resolves `<|name|>` token references (`None`: no such token; it matches nothing).
    /// Meant for grammars that passed `check`: an undefined rule derives nothing here, a
    /// left-recursive one is an error.
    ///
    /// # Errors
    /// [`TooAmbiguous`] when the initial stacks already pass the limits.
    pub fn new(
        grammar: &Grammar,
        token_id: impl Fn(&str) -> Option<u32>,
        limits: Limits,
    ) -> Result<LlamaStacks, TooAmbiguous> {
        let layout = LayoutBuilder::build(grammar, &token_id);
        let mut stacks = LlamaStacks {
            layout,
            stacks: Vec::new(),
            limits,
        };
        let mut work = Work::new(limits);
        let mut initial = StackSet::default();
        // Rule 0 is `root`; each of its alternatives starts a stack.
        for start in stacks.layout.alternatives(0) {
            let stack = if stacks.layout.is_end(start) {
                Vec::new()
            } else {
                vec![start]
            };
            stacks.advance(stack, &mut initial, &mut work)?;
        }
        stacks.stacks = initial.stacks;
        Ok(stacks)
    }

    /// How many stacks llama.cpp holds now.
    pub fn len(&self) -> usize {
        self.stacks.len()
    }

    /// Does llama.cpp hold no stack (the text left the grammar)?
    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty()
    }

    /// Is the text so far a whole output (an empty stack: `root` is done), so that
    /// llama.cpp would allow end-of-generation here?
    pub fn is_complete(&self) -> bool {
        self.stacks.iter().any(Vec::is_empty)
    }

    /// Moves the stacks over one token: `token` is its id (matched by token elements),
    /// `text` the characters it completes. Returns whether some stack survives.
    ///
    /// # Errors
    /// [`TooAmbiguous`] when llama.cpp's work for this token would pass the limits; the
    /// stacks are then left as they were.
    pub fn accept(&mut self, token: u32, text: &str) -> Result<bool, TooAmbiguous> {
        let mut work = Work::new(self.limits);
        let mut after = StackSet::default();
        for stack in &self.stacks {
            let Some(&top) = stack.last() else { continue };
            if let Element::Token { id, negated } = self.layout.elements[top as usize] {
                if (id == token) != negated {
                    let rest = self.pop_and_follow(stack, top);
                    self.advance(rest, &mut after, &mut work)?;
                }
                continue;
            }
            let mut current = vec![stack.clone()];
            for c in text.chars() {
                let mut next = StackSet::default();
                for stack in &current {
                    self.accept_char(stack, c, &mut next, &mut work)?;
                }
                current = next.stacks;
                if current.is_empty() {
                    break;
                }
            }
            for stack in current {
                after.insert(stack, &mut work)?;
            }
        }
        self.stacks = after.stacks;
        Ok(!self.stacks.is_empty())
    }

    /// `stack` without its top, followed by the position after the top when there is one.
    fn pop_and_follow(&self, stack: &Stack, top: Position) -> Stack {
        let mut rest = stack[..stack.len() - 1].to_vec();
        if !self.layout.is_end(top + 1) {
            rest.push(top + 1);
        }
        rest
    }

    /// llama.cpp's `accept_chr`: a stack whose top character set holds `c` moves past it.
    fn accept_char(
        &self,
        stack: &Stack,
        c: char,
        into: &mut StackSet,
        work: &mut Work,
    ) -> Result<(), TooAmbiguous> {
        let Some(&top) = stack.last() else {
            return Ok(());
        };
        let Element::Chars(set) = self.layout.elements[top as usize] else {
            return Ok(());
        };
        if self.layout.sets[set as usize].contains(c) {
            let rest = self.pop_and_follow(stack, top);
            self.advance(rest, into, work)?;
        }
        Ok(())
    }

    /// llama.cpp's `advance_stack`: expands rule references on top until every stack has
    /// a terminal on top (or is empty: the text may end there).
    fn advance(
        &self,
        stack: Stack,
        into: &mut StackSet,
        work: &mut Work,
    ) -> Result<(), TooAmbiguous> {
        // Without left recursion, expanding references without reading a character
        // visits each rule at most once on the way down.
        let deepest = stack.len() + self.layout.starts.len() + 1;
        let mut todo = vec![stack];
        let mut seen: FxHashSet<Stack> = FxHashSet::default();
        while let Some(stack) = todo.pop() {
            work.add(1)?;
            if stack.len() > deepest {
                return Err(TooAmbiguous {
                    what: "a rule is left-recursive (llama.cpp refuses such grammars)".into(),
                });
            }
            if !seen.insert(stack.clone()) {
                continue;
            }
            let Some(&top) = stack.last() else {
                into.insert(stack, work)?;
                continue;
            };
            match self.layout.elements[top as usize] {
                Element::Ref(rule) => {
                    for alternative in self.layout.alternatives(rule) {
                        let mut next = self.pop_and_follow(&stack, top);
                        if !self.layout.is_end(alternative) {
                            next.push(alternative);
                        }
                        todo.push(next);
                    }
                }
                Element::Chars(_) | Element::Token { .. } => into.insert(stack, work)?,
                Element::Alt | Element::End => {}
            }
        }
        Ok(())
    }
}

/// Stacks without duplicates, in the order llama.cpp keeps them.
#[derive(Default)]
struct StackSet {
    stacks: Vec<Stack>,
    members: FxHashSet<Stack>,
}

impl StackSet {
    /// Adds `stack` unless it is there; llama.cpp's linear search for it is charged.
    fn insert(&mut self, stack: Stack, work: &mut Work) -> Result<(), TooAmbiguous> {
        work.add(self.stacks.len() as u64)?;
        if self.members.insert(stack.clone()) {
            self.stacks.push(stack);
            if self.stacks.len() > work.limits.stacks {
                return Err(TooAmbiguous {
                    what: format!(
                        "llama.cpp would follow more than {} parse stacks",
                        work.limits.stacks
                    ),
                });
            }
        }
        Ok(())
    }
}

/// The work charged so far for one step.
struct Work {
    done: u64,
    limits: Limits,
}

impl Work {
    fn new(limits: Limits) -> Work {
        Work { done: 0, limits }
    }

    fn add(&mut self, amount: u64) -> Result<(), TooAmbiguous> {
        self.done = self.done.saturating_add(amount);
        if self.done > self.limits.work {
            return Err(TooAmbiguous {
                what: format!(
                    "one token would cost llama.cpp more than {} stack operations",
                    self.limits.work
                ),
            });
        }
        Ok(())
    }
}

/// Lays out rules in llama.cpp's order: `root` first (its index is 0), then every rule
/// and generated rule as it is made. Only identity matters, not llama.cpp's numbering.
struct LayoutBuilder<'g, F> {
    rules: Vec<Vec<Element>>,
    names: FxHashMap<&'g str, u32>,
    sets: Vec<CharSet>,
    token_id: &'g F,
}

impl<'g, F: Fn(&str) -> Option<u32>> LayoutBuilder<'g, F> {
    fn build(grammar: &'g Grammar, token_id: &'g F) -> Layout {
        let mut builder = LayoutBuilder {
            rules: vec![Vec::new()],
            names: FxHashMap::default(),
            sets: Vec::new(),
            token_id,
        };
        builder.names.insert("root", 0);
        for rule in &grammar.rules {
            let id = builder.rule_id(&rule.name);
            // llama.cpp keeps the last definition of a name.
            builder.rules[id as usize] = builder.alternatives(&rule.body);
        }
        let mut layout = Layout {
            sets: builder.sets,
            ..Layout::default()
        };
        for mut rule in builder.rules {
            if rule.is_empty() {
                rule.push(Element::End); // undefined: no alternative (check refuses it)
            }
            layout.starts.push(layout.elements.len() as Position);
            layout.elements.extend(rule);
        }
        layout
    }

    fn rule_id(&mut self, name: &'g str) -> u32 {
        if let Some(&id) = self.names.get(name) {
            return id;
        }
        let id = self.new_rule();
        self.names.insert(name, id);
        id
    }

    fn new_rule(&mut self) -> u32 {
        self.rules.push(Vec::new());
        (self.rules.len() - 1) as u32
    }

    fn set(&mut self, set: CharSet) -> Element {
        self.sets.push(set);
        Element::Chars((self.sets.len() - 1) as u32)
    }

    /// A rule body: its alternatives separated by `Alt`, closed by `End`.
    fn alternatives(&mut self, body: &'g Expr) -> Vec<Element> {
        let mut out = Vec::new();
        match body {
            Expr::Alt(arms) => {
                for (i, arm) in arms.iter().enumerate() {
                    if i > 0 {
                        out.push(Element::Alt);
                    }
                    self.sequence(arm, &mut out);
                }
            }
            other => self.sequence(other, &mut out),
        }
        out.push(Element::End);
        out
    }

    fn sequence(&mut self, expr: &'g Expr, out: &mut Vec<Element>) {
        match expr {
            Expr::Seq(items) => {
                for item in items {
                    self.item(item, out);
                }
            }
            other => self.item(other, out),
        }
    }

    fn item(&mut self, expr: &'g Expr, out: &mut Vec<Element>) {
        match expr {
            Expr::Literal(text) => {
                for c in text.chars() {
                    let element = self.set(CharSet::single(c));
                    out.push(element);
                }
            }
            Expr::Class { negated, ranges } => {
                let element = self.set(CharSet::from_class(*negated, ranges));
                out.push(element);
            }
            Expr::Any => {
                let element = self.set(CharSet::any());
                out.push(element);
            }
            Expr::Ref { name, .. } => {
                let id = self.rule_id(name);
                out.push(Element::Ref(id));
            }
            Expr::Token { negated, token } => {
                let id = match token {
                    TokenRef::Id(id) => Some(*id),
                    TokenRef::Text(text) => (self.token_id)(text),
                };
                out.push(Element::Token {
                    id: id.unwrap_or(u32::MAX),
                    negated: *negated,
                });
            }
            Expr::Alt(_) | Expr::Group(_) => {
                let inner = match expr {
                    Expr::Group(inner) => inner,
                    _ => expr,
                };
                let id = self.new_rule();
                self.rules[id as usize] = self.alternatives(inner);
                out.push(Element::Ref(id));
            }
            Expr::Seq(_) => self.sequence(expr, out),
            Expr::Repeat { expr, min, max, .. } => {
                let start = out.len();
                self.item(expr, out);
                let repeated = out[start..].to_vec();
                self.repeat(&repeated, start, *min, *max, out);
            }
        }
    }

    /// llama.cpp's rewrite of `S{min,max}`, `S` being `out[start..]`.
    fn repeat(
        &mut self,
        repeated: &[Element],
        start: usize,
        min: u32,
        max: Option<u32>,
        out: &mut Vec<Element>,
    ) {
        // Bounds past llama.cpp's threshold are read as unbounded.
        let max = max.filter(|&m| m <= MAX_REPEAT);
        if min == 0 {
            out.truncate(start);
        } else {
            for _ in 1..min {
                out.extend_from_slice(repeated);
            }
        }
        let optional = max.map_or(1, |m| m.saturating_sub(min));
        let mut last = 0;
        for i in 0..optional {
            let id = self.new_rule();
            let mut rule = repeated.to_vec();
            if max.is_none() {
                rule.push(Element::Ref(id));
            } else if i > 0 {
                rule.push(Element::Ref(last));
            }
            rule.extend([Element::Alt, Element::End]);
            self.rules[id as usize] = rule;
            last = id;
        }
        if optional > 0 {
            out.push(Element::Ref(last));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::gbnf::parse;

    fn stacks(text: &str) -> LlamaStacks {
        LlamaStacks::new(&parse(text).unwrap(), |_| None, Limits::default()).unwrap()
    }

    /// Stack counts after each character of `input`, one token per character.
    fn counts(stacks: &mut LlamaStacks, input: &str) -> Vec<usize> {
        input
            .chars()
            .map(|c| {
                assert!(stacks.accept(0, &c.to_string()).unwrap(), "{c}");
                stacks.len()
            })
            .collect()
    }

    #[test]
    fn llama_cpp_drops_duplicate_stacks() {
        // The example of llama.cpp's issue 4218: its optionals are ambiguous, but every
        // reading ends in the same few stacks, which are kept once.
        let mut s = stacks("root ::= [0-9] (a? a? a? a? a? [0-9])*\na ::= \"a\"\n");
        assert_eq!(s.len(), 1);
        assert_eq!(counts(&mut s, "1a2a3a4a5"), vec![7, 5, 7, 5, 7, 5, 7, 5, 7]);
    }

    #[test]
    fn pending_suffixes_double_the_stacks() {
        // Unambiguous, but each `a` may wait for a `b` or a `c`: 2^n stacks after n.
        let mut s = stacks("root ::= \"a\" root \"b\" | \"a\" root \"c\" | \"a\"\n");
        assert_eq!(counts(&mut s, "aaaa"), vec![7, 14, 28, 56]);
    }

    #[test]
    fn unambiguous_grammars_keep_few_stacks() {
        let mut s = stacks(
            "root ::= \"{\" ws (pair (\",\" ws pair)*)? \"}\"\n\
             pair ::= \"\\\"\" [a-z]+ \"\\\":\" ws [0-9]+ ws\nws ::= [ \\n]{0,4}\n",
        );
        let after = counts(&mut s, "{ \"ab\": 12 , \"c\":3}");
        assert!(after.iter().all(|&n| n <= 4), "{after:?}");
        assert_eq!(s.stacks, vec![Vec::<Position>::new()]);
    }

    #[test]
    fn text_outside_the_grammar_leaves_no_stack() {
        let mut s = stacks("root ::= \"ab\"\n");
        assert!(s.accept(0, "a").unwrap());
        assert!(!s.accept(0, "c").unwrap());
        assert!(s.is_empty());
    }

    #[test]
    fn tokens_match_by_id() {
        let grammar = parse("root ::= <|x|> \"a\" | !<[7]> \"b\"\n").unwrap();
        let mut s =
            LlamaStacks::new(&grammar, |t| (t == "|x|").then_some(5), Limits::default()).unwrap();
        assert_eq!(s.len(), 2);
        assert!(s.accept(5, "<|x|>").unwrap());
        assert_eq!(s.len(), 2); // `a` after <|x|>; `b` after any token but 7
        assert!(s.accept(9, "a").unwrap());
        assert!(s.is_complete());
        // Token 7 is neither `<|x|>` (unknown here: it matches nothing) nor "not 7".
        let mut s = LlamaStacks::new(&grammar, |_| None, Limits::default()).unwrap();
        assert!(!s.accept(7, "?").unwrap());
        let mut s = LlamaStacks::new(&grammar, |_| None, Limits::default()).unwrap();
        assert!(s.accept(8, "?").unwrap());
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn exploding_grammars_pass_the_limits_with_an_error() {
        // Each `a` doubles the stacks.
        let grammar = parse("root ::= \"a\" root \"b\" | \"a\" root \"c\" | \"a\"\n").unwrap();
        let limits = Limits {
            stacks: 64,
            work: 1_000_000,
        };
        let mut s = LlamaStacks::new(&grammar, |_| None, limits).unwrap();
        let mut failed = None;
        for i in 0..200 {
            match s.accept(0, "a") {
                Ok(alive) => assert!(alive),
                Err(e) => {
                    failed = Some((i, e));
                    break;
                }
            }
        }
        let (_, error) = failed.expect("the stacks should pass the limits");
        assert!(error.to_string().contains("too ambiguous"), "{error}");
    }

    #[test]
    fn initial_stacks_can_pass_the_limits() {
        // Every level doubles the initial stacks: 2^13 before the first character.
        let grammar = parse(include_str!("../../tests/fixtures/doubling.gbnf")).unwrap();
        assert!(LlamaStacks::new(&grammar, |_| None, Limits::default()).is_err());
    }

    #[test]
    fn left_recursion_is_an_error_not_a_loop() {
        let grammar = parse("root ::= root \"a\" | \"b\"\n").unwrap();
        let error = LlamaStacks::new(&grammar, |_| None, Limits::default()).unwrap_err();
        assert!(error.what.contains("left-recursive"), "{error}");
    }

    #[test]
    fn repetitions_are_laid_out_as_llama_cpp_does() {
        // `x{1,3}`: x, then `r2 ::= x r1 |`, `r1 ::= x |`: after one x, three ways on.
        let mut s = stacks("root ::= \"x\"{1,3} \"!\"\n");
        assert_eq!(counts(&mut s, "x"), vec![2]);
        assert_eq!(counts(&mut s, "xx"), vec![2, 1]);
        assert!(!s.accept(0, "x").unwrap());
    }
}
